//! `converges`.

use crate::guarantees::{Found, Guarantee};
use crate::history::History;
use crate::observations::{Observations, Truth};
use crate::truth::{cache_differs_at, cache_equals_truth};

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct State;

impl Guarantee for State {
    const NAME: &'static str = "converges";
    const GUARANTEE: &'static str = "once the environment is quiet, the reflector reaches an open watch with a cache equal to the \
                 store within a bounded number of requests that do not move its RV, and never rests with a cache \
                 that differs";
    const WITNESS: &'static str = "a cache converges after the faults";

    fn violation(&self, obs: &impl Observations, _history: &History) -> Option<Found> {
        let env = obs.environment();
        if !(env.quiet && env.settled) {
            return None;
        }
        obs.client_ids().find_map(|c| {
            let view = obs.client(c);
            if !view.resting() {
                return None;
            }
            cache_differs_at(obs, c, obs.truth().rev()).map(|d| {
                let how = if view.watch_at_rest { "at rest on an open watch" } else { "stopped" };
                Found::by(c, format!("{how}, and {d}"))
            })
        })
    }

    fn witnessed(&self, obs: &impl Observations, _history: &History) -> bool {
        let env = obs.environment();
        env.faulty
            && env.quiet
            && env.settled
            && obs.client_ids().any(|c| {
                let view = obs.client(c);
                view.watch_at_rest && !view.cache.is_empty() && cache_equals_truth(obs, c)
            })
    }
}
