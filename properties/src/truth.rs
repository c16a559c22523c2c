//! Comparisons of a client's cache with the store's ground truth.

use listwatch_model::{ClientId, Rev};

use crate::monitor::KeySet;
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

/// The first difference between a client's cache and the truth at `rev`, where a key written at `rev`
/// whose event has not reached the client (not in `received`) may still hold its value from before
/// `rev`: E8, a revision that changed several keys, received in part so far.
pub fn cache_differs_within_revision(
    obs: &impl Observations,
    client: ClientId,
    rev: Rev,
    received: KeySet,
) -> Option<String> {
    let truth = obs.truth();
    let (at, before) = (truth.state_at(rev), truth.state_at(Rev(rev.0.saturating_sub(1))));
    let cache = obs.client(client).cache;
    let pending: Vec<_> = truth.keys_written_at(rev).into_iter().filter(|k| !received.contains(*k)).collect();
    let keys = cache.objects().map(|o| o.key).chain(at.keys().copied());
    keys.filter(|k| !(pending.contains(k) && cache.get(*k).copied() == before.get(k).copied())).find_map(
        |k| match (cache.get(k), at.get(&k)) {
            (Some(o), None) => Some(format!("cache has {o}, absent at RV {rev}")),
            (Some(o), Some(t)) if o != t => Some(format!("cache has {o}, the store had {t} at RV {rev}")),
            (None, Some(t)) => Some(format!("cache lacks {t} (RV {rev})")),
            _ => None,
        },
    )
}
