//! `notifications-match-cache`.
//!
//! C7: the handlers' notifications add up to the cache.
//!
//! Judged from the history the [`Monitor`] keeps for several guarantees: the handlers' view folded from notifications (`Monitor::notified`, `Monitor::after_step`).

use crate::guarantees::Guarantee;
use crate::monitor::Monitor;
use crate::observations::Observations;

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct State;

impl Guarantee for State {
    const NAME: &'static str = "notifications-match-cache";
    const GUARANTEE: &'static str = "folding the handlers' notifications (add, update, delete, delete with final state unknown) \
                 gives the cache after every step, and each names the object the handlers last saw";
    const WITNESS: &'static str = "a relist notifies the delete of an object it no longer lists";

    fn witnessed(&self, _obs: &impl Observations, monitor: &Monitor) -> bool {
        monitor.clients.iter().any(|m| m.relist_deleted)
    }
}
