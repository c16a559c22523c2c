//! Comparisons of a client's cache with the store's ground truth.

use std::collections::BTreeMap;

use listwatch_model::{ClientId, Key, Object, Rev, System};

/// The objects the watched resource held at `rev`, as the API server would serve them.
pub fn truth_at(sys: &System, rev: Rev) -> BTreeMap<Key, Object> {
    sys.store().truth_at(rev).into_iter().map(|(k, kv)| (k, kv.object())).collect()
}

/// The first difference between a client's cache and the truth at `rev`, if any.
pub fn cache_differs_at(sys: &System, client: ClientId, rev: Rev) -> Option<String> {
    let truth = truth_at(sys, rev);
    let cache = sys.view(client).cache;
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
pub fn cache_equals_truth(sys: &System, client: ClientId) -> bool {
    cache_differs_at(sys, client, sys.store().rev()).is_none()
}
