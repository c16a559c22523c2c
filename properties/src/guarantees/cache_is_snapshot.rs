//! `cache-is-snapshot`.

use crate::guarantees::{Found, Guarantee};
use crate::history::History;
use crate::observations::{Observations, Truth};
use crate::truth::{cache_differs_at, cache_differs_within_revision};

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct State;

impl Guarantee for State {
    const NAME: &'static str = "cache-is-snapshot";
    const GUARANTEE: &'static str =
        "between events, the cache equals the store's state at the RV the reflector claims";
    const WITNESS: &'static str = "a cache holds objects at an RV past a compaction";

    fn violation(&self, obs: &impl Observations, history: &History) -> Option<Found> {
        obs.client_ids().find_map(|c| {
            let view = obs.client(c);
            if !view.synced || !view.between_events {
                return None;
            }
            // E8: while the claimed revision is known only in part, the keys it changed whose events
            // have not arrived may still hold their value from before it.
            let differs = if history.open_revision(obs, c) {
                cache_differs_within_revision(obs, c, view.resource_version, history.client(c).open_keys)
            } else {
                cache_differs_at(obs, c, view.resource_version)
            };
            differs.map(|d| Found::by(c, d.to_string()))
        })
    }

    fn witnessed(&self, obs: &impl Observations, history: &History) -> bool {
        let compacted = obs.truth().compacted();
        compacted.0 > 0
            && obs
                .client_ids()
                .any(|c| history.client(c).claimed > compacted && !obs.client(c).cache.is_empty())
    }
}
