//! `no-lock-across-unbounded-wait`.
//!
//! Locks taken and waits entered, as a tracer sees them: no request holds a lock while it waits
//! with no bound.
//!
//! Judged from the history the [`Monitor`] keeps for several guarantees: the locks held and waits entered (`Monitor::observe_manager`).

use crate::guarantees::Guarantee;
use crate::monitor::Monitor;
use crate::observations::Observations;

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct State;

impl Guarantee for State {
    const NAME: &'static str = "no-lock-across-unbounded-wait";
    const GUARANTEE: &'static str = "nobody holds a lock while in a wait that has no bound";
    const WITNESS: &'static str = "a request is served while another cluster is unreachable";

    fn witnessed(&self, _obs: &impl Observations, monitor: &Monitor) -> bool {
        monitor.manager.served_while_unreachable
    }
}
