//! `ready-means-listed` (C8): a client reports ready (synced) only once a full list has reached its
//! cache (a LIST's last page, or a streaming list's initial-events-end bookmark), and from then on, at
//! once or at its waiters' next poll (client-go's `WaitForCacheSync` polls every 100 ms).

use listwatch_model::{Message, Observed, Timer, WatchEvent};

use crate::guarantees::{per_client, Found, Guarantee};
use crate::history::History;
use crate::observations::Observations;

/// What this guarantee remembers of one client.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Readiness {
    /// A full list has reached the client.
    pub listed: bool,
    /// A readiness poll of the client fired in this step: it may lag a full list until then, not after.
    pub polled: bool,
}

#[derive(Debug, Default, PartialEq, Eq, Hash)]
pub struct State {
    pub clients: Vec<Readiness>,
}
listwatch_model::clone_by_field!(State { clients });

impl Guarantee for State {
    const NAME: &'static str = "ready-means-listed";
    const GUARANTEE: &'static str =
        "a client reports ready (synced) only once a full LIST has reached its cache, and from then on";
    const WITNESS: &'static str = "a client becomes ready";

    fn observe(&mut self, obs: &impl Observations, seen: &Observed) -> Option<Found> {
        per_client(&mut self.clients, obs);
        match seen {
            Observed::Received { client, message: Message::List(Ok(list)) } => {
                self.clients[usize::from(client.0)].listed |= list.cont.is_none();
            }
            Observed::Received { client, message: Message::Event(WatchEvent::InitialEventsEnd(_)) } => {
                self.clients[usize::from(client.0)].listed = true;
            }
            Observed::TimerFired { client, timer: Timer::Poll, .. } => {
                self.clients[usize::from(client.0)].polled = true;
            }
            _ => {}
        }
        None
    }

    fn after_step(&mut self, obs: &impl Observations) -> Option<Found> {
        per_client(&mut self.clients, obs);
        let mut found = None;
        for c in obs.client_ids() {
            let view = obs.client(c);
            let r = &mut self.clients[usize::from(c.0)];
            let polled = std::mem::take(&mut r.polled);
            let detail = match (r.listed, view.synced) {
                (false, true) => "reports ready before any full LIST reached its cache",
                // A list that arrived but waits unread (the client sleeps a backoff) has not reached
                // it; a waiter that polls sees it at its next poll, which is scheduled.
                // A held handler that has not been told the whole list yet holds back the readiness
                // of code that waits for it (a handler registration's HasSynced).
                (true, false) if view.handlers_behind => continue,
                (true, false) if view.between_events && polled => {
                    "is not ready although its waiters polled after a full LIST reached its cache"
                }
                (true, false) if view.between_events && !view.readiness_pending => {
                    "is not ready although a full LIST reached its cache"
                }
                _ => continue,
            };
            found = found.or(Some(Found::by(c, detail.to_string())));
        }
        found
    }

    fn witnessed(&self, obs: &impl Observations, _history: &History) -> bool {
        obs.client_ids().any(|c| obs.client(c).synced)
    }
}
