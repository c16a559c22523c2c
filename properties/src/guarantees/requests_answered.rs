//! `requests-answered`: every request a user makes of a component that waits on a cache (the client
//! manager's request for a cluster's cache, C8) is answered, with the cache or an error, within a
//! minute of model time, whatever the environment does. The user-visible half of a wait with no
//! bound: under a lock it hangs every request (`no-lock-across-unbounded-wait` sees the lock), outside
//! any lock it hangs the one that asked.
//!
//! Judged from what a tracer of the manager sees: the requests made, the model time that passes while
//! they wait, and the answers.

use std::collections::BTreeMap;

use listwatch_model::manager::{ClusterId, RequestId};
use listwatch_model::{Millis, Observed};

use crate::guarantees::{Found, Guarantee};
use crate::history::History;
use crate::observations::Observations;

/// How long a request may wait for its answer: twice the 30 s a manager waits for a sync.
pub const ANSWER_WITHIN_MS: Millis = 60_000;

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct State {
    /// The unanswered requests: the cluster each asked for, and the model time it has waited (counted
    /// up to [`ANSWER_WITHIN_MS`]).
    pub waiting: BTreeMap<RequestId, (ClusterId, Millis)>,
    /// A request was answered after model time passed while it waited (its witness).
    pub answered_after_waiting: bool,
}

impl Guarantee for State {
    const NAME: &'static str = "requests-answered";
    const GUARANTEE: &'static str = "every request for a cluster's cache is answered, with the cache or an \
        error, within a minute of model time, whatever the environment does";
    const WITNESS: &'static str = "a request is answered after model time passed while it waited";

    fn observe(&mut self, _obs: &impl Observations, seen: &Observed) -> Option<Found> {
        match *seen {
            Observed::ManagerRequested { request, cluster } => {
                self.waiting.insert(request, (cluster, 0));
            }
            Observed::ManagerTime { after_ms } => {
                for (_, waited) in self.waiting.values_mut() {
                    *waited = (*waited + after_ms).min(ANSWER_WITHIN_MS);
                }
            }
            Observed::ManagerDone { request, .. } => {
                if let Some((_, waited)) = self.waiting.remove(&request) {
                    self.answered_after_waiting |= waited > 0;
                }
            }
            _ => {}
        }
        None
    }

    fn after_step(&mut self, _obs: &impl Observations) -> Option<Found> {
        let (request, (cluster, waited)) = self.waiting.iter().find(|(_, (_, w))| *w >= ANSWER_WITHIN_MS)?;
        Some(Found::anyone(format!("{request} for {cluster} is unanswered after {waited} ms")))
    }

    fn witnessed(&self, _obs: &impl Observations, _history: &History) -> bool {
        self.answered_after_waiting
    }
}
