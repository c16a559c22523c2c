//! `no-resurrected-delete`.
//!
//! Judged from the history the [`Monitor`] keeps for several guarantees: the notifications that bring back a deleted incarnation (`Monitor::notified`).

use crate::guarantees::{Found, Guarantee};
use crate::monitor::Monitor;
use crate::observations::{Observations, Truth};

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct State;

impl Guarantee for State {
    const NAME: &'static str = "no-resurrected-delete";
    const GUARANTEE: &'static str = "an object incarnation the cache has seen deleted, or that was deleted at or before the RV \
                 the reflector claims, never reappears in the cache";
    const WITNESS: &'static str = "a delete is observed after a compaction";

    fn violation(&self, obs: &impl Observations, monitor: &Monitor) -> Option<Found> {
        obs.client_ids().find_map(|c| {
            let view = obs.client(c);
            let rv = view.resource_version;
            let truth = obs.truth().state_at(rv);
            // E8: an object the open revision deleted may stay until its DELETE arrives.
            let pending = monitor.pending_keys(obs, c);
            view.cache
                .objects()
                .filter(|o| !pending.contains(&o.key))
                .find(|o| o.uid.0 <= rv && truth.get(&o.key).map(|t| t.uid) != Some(o.uid))
                .map(|o| Found::by(c, format!("{o} was deleted by RV {rv}")))
        })
    }

    fn witnessed(&self, obs: &impl Observations, monitor: &Monitor) -> bool {
        obs.truth().compacted().0 > 0 && monitor.clients.iter().any(|m| !m.deleted.is_empty())
    }
}
