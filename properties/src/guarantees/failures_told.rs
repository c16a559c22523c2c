//! `failures-told`.
//!
//! C12: a client whose attempt to list and watch fails tells its user before it tries again, so that
//! the code that owns a cache can tell a cache that is merely quiet from one that cannot reach its
//! server (a 403 after an RBAC change, a 401 after a token rotated, a resource that is gone). The
//! failures that must be told are those client-go's reflector returns from `ListAndWatchWithContext`
//! and hands to its watch error handler (`RunWithContext`, `tools/cache/reflector.go`, read at
//! v0.37.2): a failed LIST, and a WATCH refused with a status other than a 429 (a refused connection
//! is backed off from and re-watched, `isWatchErrorRetriable`). Not told, and not judged: a failure
//! the REST client sends again by itself (a `Retry-After`, a connection broken before the answer,
//! C1), one retried at once (the consistent LIST after a 410 or a too-large RV, C2; the fallback of a
//! streaming list, C10), and a watch that ends, with an ERROR event or otherwise, which the reflector
//! resumes or relists from without returning. kube-runtime's watcher yields every one of them as an
//! error item, which tells more. kubernetes#57074 (client-go#155) asked for it; PR #87329 added
//! `SetWatchErrorHandler` (v0.19.0).
//!
//! Judged where the next request goes: one sent after the step of an untold failure breaks it.

use listwatch_model::{Message, Observed, Request};

use crate::guarantees::{per_client, Found, Guarantee};
use crate::history::{Failure, History};
use crate::observations::Observations;

/// What is remembered of one client.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Owed {
    /// The failure it has not told yet, if any: a LIST failed or a WATCH refused.
    pub failure: Option<Failure>,
    /// Whether that failure came in the step being observed: a request in the same step is a retry at
    /// once (C2, C10), not an attempt after a backoff.
    pub this_step: bool,
    /// Whether its last request was a streaming list (C10), whose refusal falls back to a LIST.
    pub streaming: bool,
    /// It told its user of a failure and has sent nothing since (the witness). Kept only that long,
    /// so that two histories that differ only in a failure told long ago are one state.
    pub told: bool,
}

#[derive(Debug, Default, PartialEq, Eq, Hash)]
pub struct State {
    pub clients: Vec<Owed>,
}
listwatch_model::clone_by_field!(State { clients });

/// Whether client-go's reflector returns this failure from `ListAndWatchWithContext` (C12).
fn must_tell(message: &Message, streaming: bool) -> Option<Failure> {
    match *message {
        Message::List(Err(e)) if !e.list_resent() => Some(Failure::ListFailed(e)),
        Message::WatchRefused(e) if !streaming && !e.watch_retriable() => Some(Failure::WatchRefused(e)),
        _ => None,
    }
}

impl Guarantee for State {
    const NAME: &'static str = "failures-told";
    const GUARANTEE: &'static str = "a client whose LIST fails, or whose WATCH is refused, with an error it \
        does not retry at once or leave to the REST client (C12: what client-go hands its watch error \
        handler) tells its user before it sends its next request";
    const WITNESS: &'static str = "a client tells its user of a failed LIST or a refused WATCH";

    fn observe(&mut self, obs: &impl Observations, seen: &Observed) -> Option<Found> {
        per_client(&mut self.clients, obs);
        match seen {
            Observed::Received { client, message } => {
                let owed = &mut self.clients[usize::from(client.0)];
                if let Some(failure) = must_tell(message, owed.streaming) {
                    (owed.failure, owed.this_step) = (Some(failure), true);
                }
            }
            Observed::Told { client } => {
                let owed = &mut self.clients[usize::from(client.0)];
                owed.told |= owed.failure.take().is_some();
            }
            Observed::Sent { client, request } => {
                let owed = &mut self.clients[usize::from(client.0)];
                let failure = owed.failure.take().filter(|_| !owed.this_step);
                owed.streaming = matches!(request, Request::WatchList { .. });
                owed.told = false;
                if let Some(failure) = failure {
                    let detail = format!("sent {request} after {failure}, without telling its user of it");
                    return Some(Found::by(*client, detail));
                }
            }
            _ => {}
        }
        None
    }

    fn after_step(&mut self, obs: &impl Observations) -> Option<Found> {
        per_client(&mut self.clients, obs);
        for (owed, c) in self.clients.iter_mut().zip(obs.client_ids()) {
            owed.this_step = false;
            owed.streaming &= obs.client(c).connected;
        }
        None
    }

    fn witnessed(&self, _obs: &impl Observations, _history: &History) -> bool {
        self.clients.iter().any(|c| c.told)
    }
}
