//! Comparisons of a client's cache with the store's ground truth.

use listwatch_model::{ClientId, Rev};

use crate::observations::{Observations, Truth};

/// The first difference between a client's cache and the truth at `rev`, if any.
pub fn cache_differs_at(obs: &impl Observations, client: ClientId, rev: Rev) -> Option<String> {
    let truth = obs.truth().state_at(rev);
    let cache = obs.client(client).cache;
    for o in cache.objects() {
        match truth.get(&o.key) {
            None => return Some(format!("cache has {o}, absent at RV {rev}")),
            Some(t) if t != o => return Some(format!("cache has {o}, the store had {t} at RV {rev}")),
            Some(_) => {}
        }
    }
    truth.values().find(|t| cache.get(t.key).is_none()).map(|t| format!("cache lacks {t} (RV {rev})"))
}

/// Whether a client's cache equals the store now.
pub fn cache_equals_truth(obs: &impl Observations, client: ClientId) -> bool {
    cache_differs_at(obs, client, obs.truth().rev()).is_none()
}
