//! `no-busy-loop`.
//!
//! Judged from the history the [`Monitor`] keeps for several guarantees: zero-delay steps in a row (`Monitor::time_passed`).

use crate::guarantees::Guarantee;
use crate::monitor::Monitor;
use crate::observations::Observations;

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct State;

impl Guarantee for State {
    const NAME: &'static str = "no-busy-loop";
    const GUARANTEE: &'static str = "an actor never takes more than a bounded number of steps without progress";
    const WITNESS: &'static str = "a reflector waits out a backoff";

    fn witnessed(&self, obs: &impl Observations, _monitor: &Monitor) -> bool {
        obs.client_ids().any(|c| {
            let view = obs.client(c);
            !view.connected && view.scheduled
        })
    }
}
