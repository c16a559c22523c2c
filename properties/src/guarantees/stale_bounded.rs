//! `stale-bounded`.
//!
//! Once the environment is quiet, a stale client catches up within a bound of model time.
//!
//! Judged from the [`History`] several guarantees share: time spent stale once quiet (`History::after_step`).

use crate::guarantees::Guarantee;
use crate::history::History;
use crate::observations::Observations;

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct State;

impl Guarantee for State {
    const NAME: &'static str = "stale-bounded";
    const GUARANTEE: &'static str =
        "once the environment is quiet, a client whose cache differs from the store catches up within \
                 two minutes of model time, and never holds a connection that nothing will ever answer with \
                 nothing scheduled";
    const WITNESS: &'static str = "a client stale once the environment went quiet catches up";

    fn witnessed(&self, _obs: &impl Observations, history: &History) -> bool {
        history.clients.iter().any(|m| m.recovered)
    }
}
