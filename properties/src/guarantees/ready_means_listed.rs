//! `ready-means-listed`.
//!
//! C8: ready (synced) exactly once a full list has reached the cache.
//!
//! Judged from the history the [`Monitor`] keeps for several guarantees: full lists reaching the client, and its readiness (`Monitor::readiness`).

use crate::guarantees::Guarantee;
use crate::monitor::Monitor;
use crate::observations::Observations;

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct State;

impl Guarantee for State {
    const NAME: &'static str = "ready-means-listed";
    const GUARANTEE: &'static str = "a client reports ready (synced) only once a full LIST has reached its cache, and from then on";
    const WITNESS: &'static str = "a client becomes ready";

    fn witnessed(&self, obs: &impl Observations, _monitor: &Monitor) -> bool {
        obs.client_ids().any(|c| obs.client(c).synced)
    }
}
