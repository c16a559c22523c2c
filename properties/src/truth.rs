//! Comparisons of a client's cache with the store's ground truth.

use std::fmt;

use listwatch_model::{ClientId, Object, Rev};

use crate::key_set::KeySet;
use crate::observations::{Observations, Truth};

/// How a client's cache differs from the truth at a revision. Told in words only when reported: the
/// checker asks whether a cache differs at nearly every state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Difference {
    /// The cache holds an object the store did not have at `rev`.
    Extra { cache: Object, rev: Rev },
    /// The cache holds another version of an object than the store had at `rev`.
    Other { cache: Object, store: Object, rev: Rev },
    /// The cache lacks an object the store had at `rev`.
    Missing { store: Object, rev: Rev },
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Difference::Extra { cache, rev } => write!(f, "cache has {cache}, absent at RV {rev}"),
            Difference::Other { cache, store, rev } => {
                write!(f, "cache has {cache}, the store had {store} at RV {rev}")
            }
            Difference::Missing { store, rev } => write!(f, "cache lacks {store} (RV {rev})"),
        }
    }
}

/// The first difference between a client's cache and the truth at `rev`, if any.
pub fn cache_differs_at(obs: &impl Observations, client: ClientId, rev: Rev) -> Option<Difference> {
    let truth = obs.truth().state_at(rev);
    let cache = obs.client(client).cache;
    for &o in cache.objects() {
        match truth.get(&o.key) {
            None => return Some(Difference::Extra { cache: o, rev }),
            Some(&t) if t != o => return Some(Difference::Other { cache: o, store: t, rev }),
            Some(_) => {}
        }
    }
    truth.values().find(|t| cache.get(t.key).is_none()).map(|&t| Difference::Missing { store: t, rev })
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
) -> Option<Difference> {
    let truth = obs.truth();
    let (at, before) = (truth.state_at(rev), truth.state_at(Rev(rev.0.saturating_sub(1))));
    let cache = obs.client(client).cache;
    let pending: Vec<_> = truth.keys_written_at(rev).into_iter().filter(|k| !received.contains(*k)).collect();
    let keys = cache.objects().map(|o| o.key).chain(at.keys().copied());
    keys.filter(|k| !(pending.contains(k) && cache.get(*k).copied() == before.get(k).copied())).find_map(
        |k| match (cache.get(k), at.get(&k)) {
            (Some(&cache), None) => Some(Difference::Extra { cache, rev }),
            (Some(&cache), Some(&store)) if cache != store => Some(Difference::Other { cache, store, rev }),
            (None, Some(&store)) => Some(Difference::Missing { store, rev }),
            _ => None,
        },
    )
}
