//! `requests-answered`: every request a user makes of a component that waits on a cache (the client
//! manager's request for a cluster's cache, C8) is answered, with the cache or an error, within a
//! minute of model time, whatever the environment does. The user-visible half of a wait with no
//! bound: under a lock it hangs every request (`no-lock-across-unbounded-wait` sees the lock), outside
//! any lock it hangs the one that asked.
//!
//! The same holds for the requests a client sends a server: a request the server held in a bounded
//! wait for a fresh cache (A2, A12) is answered once the wait ends, a 504 or an ERROR event. One left
//! unanswered sits on a live connection that no health check gives up and no timer of a client
//! without a request timeout ends: judged when nothing is left in flight (the environment settled)
//! and the answer has not come, the client has not given the request up, and its connection has not
//! broken.
//!
//! Judged from what a tracer of the manager sees (the requests made, the model time that passes while
//! they wait, and the answers) and from what the clients' requests meet (the end of a server's wait,
//! then an answer, a cancel, a broken connection or another request).

use listwatch_model::manager::{ClusterId, RequestId};
use listwatch_model::{ClientId, Millis, Observed};
use litemap::LiteMap;

use crate::guarantees::{Found, Guarantee};
use crate::history::History;
use crate::observations::Observations;

/// How long a request may wait for its answer: twice the 30 s a manager waits for a sync.
pub const ANSWER_WITHIN_MS: Millis = 60_000;

#[derive(Debug, Default, PartialEq, Eq, Hash)]
pub struct State {
    /// The unanswered requests: the cluster each asked for, and the model time it has waited (counted
    /// up to [`ANSWER_WITHIN_MS`]).
    pub waiting: LiteMap<RequestId, (ClusterId, Millis)>,
    /// The clients whose request a server's wait ended for, with no answer yet.
    pub owed: LiteMap<ClientId, ()>,
    /// A request was answered after model time passed while it waited, or after a server's wait
    /// ended (its witness).
    pub answered_after_waiting: bool,
}
listwatch_model::clone_by_field!(State { waiting: map, owed: map, answered_after_waiting });

impl Guarantee for State {
    const NAME: &'static str = "requests-answered";
    const GUARANTEE: &'static str = "every request for a cluster's cache is answered, with the cache or an \
        error, within a minute of model time, whatever the environment does; and a request a server held in \
        a bounded wait for a fresh cache is answered when the wait ends";
    const WITNESS: &'static str = "a request is answered after model time passed while it waited";

    fn observe(&mut self, _obs: &impl Observations, seen: &Observed) -> Option<Found> {
        match *seen {
            Observed::ManagerRequested { request, cluster } => {
                self.waiting.insert(request, (cluster, 0));
            }
            Observed::ManagerTime { after_ms } => {
                for (_, (_, waited)) in self.waiting.iter_mut() {
                    *waited = (*waited + after_ms).min(ANSWER_WITHIN_MS);
                }
            }
            Observed::ManagerDone { request, .. } => {
                if let Some((_, waited)) = self.waiting.remove(&request) {
                    self.answered_after_waiting |= waited > 0;
                }
            }
            Observed::WaitEnded { client } => {
                self.owed.insert(client, ());
            }
            Observed::Received { client, .. } | Observed::Garbled { client, .. } => {
                self.answered_after_waiting |= self.owed.remove(&client).is_some();
            }
            Observed::Sent { client, .. }
            | Observed::Cancelled { client }
            | Observed::LeftOpen { client }
            | Observed::Broken { client } => {
                self.owed.remove(&client);
            }
            _ => {}
        }
        None
    }

    fn after_step(&mut self, obs: &impl Observations) -> Option<Found> {
        // Nothing left in flight, and nothing the client has scheduled (a timer, or a health check that
        // will give up a dead connection) can end the request.
        let stuck = |c: &&ClientId| !obs.client(**c).scheduled;
        if let Some(&client) =
            self.owed.iter().map(|(c, ())| c).find(stuck).filter(|_| obs.environment().settled)
        {
            let detail =
                "the server's wait for a fresh cache ended and no answer came, with nothing left in \
                          flight: nothing will ever answer the request";
            return Some(Found::by(client, detail.into()));
        }
        let (request, (cluster, waited)) = self.waiting.iter().find(|(_, (_, w))| *w >= ANSWER_WITHIN_MS)?;
        Some(Found::anyone(format!("{request} for {cluster} is unanswered after {waited} ms")))
    }

    fn witnessed(&self, _obs: &impl Observations, _history: &History) -> bool {
        self.answered_after_waiting
    }
}
