//! The informer's store: objects keyed by namespace/name, the operations a reflector applies to it, and
//! the ordered notifications a controller's event handlers would receive (C7).

use std::fmt;

use crate::api::WatchEvent;
use crate::flaw::{Flaw, Flaws};
use crate::guard::{self, Admit, Stamp};
use crate::types::{Key, Object, Rev, Uid};

/// What a reflector asks its cache to do. Watch events pass the cache guards (`guard`); a LIST replaces.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CacheOp {
    /// Apply one watch event (ADDED / MODIFIED / DELETED).
    Apply(WatchEvent),
    /// Replace the whole content with a LIST's items (C7).
    Replace { items: Vec<Object>, rv: Rev },
}

/// What a controller's handlers receive, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Notification {
    Add(Object),
    Update {
        old: Object,
        new: Object,
    },
    Delete(Object),
    /// A delete found by a relist: the last known object, possibly stale (`DeletedFinalStateUnknown`, C7).
    DeletedFinalStateUnknown(Object),
}

impl fmt::Display for Notification {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Notification::Add(o) => write!(f, "add {o}"),
            Notification::Update { new, .. } => write!(f, "update {new}"),
            Notification::Delete(o) => write!(f, "delete {o}"),
            Notification::DeletedFinalStateUnknown(o) => write!(f, "delete (final state unknown) {o}"),
        }
    }
}

/// The informer's store.
#[derive(Debug, Default, PartialEq, Eq, Hash)]
pub struct Cache {
    objects: litemap::LiteMap<Key, Object>,
}
crate::clone_by_field!(Cache { objects: map });

impl Cache {
    pub fn get(&self, key: Key) -> Option<&Object> {
        self.objects.get(&key)
    }

    pub fn objects(&self) -> impl Iterator<Item = &Object> {
        self.objects.values()
    }

    pub fn len(&self) -> usize {
        self.objects.len()
    }

    pub fn is_empty(&self) -> bool {
        self.objects.is_empty()
    }

    /// Apply an operation, appending the notifications it produces to `out`.
    pub fn apply(&mut self, op: &CacheOp, flaws: Flaws, out: &mut Vec<Notification>) {
        self.apply_sparing(op, &[], flaws, out);
    }

    /// [`Self::apply`], except that a `Replace` deletes none of the keys in `spare`: what a queue whose
    /// `Replace` missed them ([`Flaw::ReplaceMissesQueued`]) leaves in place.
    pub fn apply_sparing(&mut self, op: &CacheOp, spare: &[Key], flaws: Flaws, out: &mut Vec<Notification>) {
        match op {
            CacheOp::Apply(WatchEvent::Added(o) | WatchEvent::Modified(o)) => {
                if guard::upsert(self.held(o.key), stamp(o)) == Admit::Apply {
                    self.upsert(*o, out);
                }
            }
            CacheOp::Apply(WatchEvent::Deleted(o)) => {
                // The handler gets the object the event carried, as client-go's informer delivers it.
                if guard::delete(self.held(o.key), stamp(o)) == Admit::Apply {
                    self.objects.remove(&o.key);
                    out.push(Notification::Delete(*o));
                }
            }
            CacheOp::Apply(
                WatchEvent::Bookmark(_) | WatchEvent::InitialEventsEnd(_) | WatchEvent::Error(_),
            ) => {}
            CacheOp::Replace { items, .. } => {
                // C7: every known key missing from the list is deleted with a tombstone. The flaw merges.
                if !flaws.has(Flaw::ReplaceKeepsMissing) {
                    let listed: Vec<Key> = items.iter().map(|o| o.key).collect();
                    let missing: Vec<Key> = self
                        .objects
                        .keys()
                        .filter(|k| !listed.contains(k) && !spare.contains(k))
                        .copied()
                        .collect();
                    for key in missing {
                        let last = self.objects.remove(&key).expect("listed from the map");
                        out.push(Notification::DeletedFinalStateUnknown(last));
                    }
                }
                for o in items {
                    self.upsert(*o, out);
                }
            }
        }
    }

    fn held(&self, key: Key) -> Option<Stamp<'_, Uid>> {
        self.objects.get(&key).map(stamp)
    }

    fn upsert(&mut self, new: Object, out: &mut Vec<Notification>) {
        match self.objects.insert(new.key, new) {
            None => out.push(Notification::Add(new)),
            Some(old) => out.push(Notification::Update { old, new }),
        }
    }
}

impl FromIterator<Object> for Cache {
    /// A cache holding these objects, as a client under test reports its store.
    fn from_iter<I: IntoIterator<Item = Object>>(iter: I) -> Self {
        Cache { objects: iter.into_iter().map(|o| (o.key, o)).collect() }
    }
}

fn stamp(o: &Object) -> Stamp<'_, Uid> {
    Stamp { uid: &o.uid, rv: u64::from(o.rv.0) }
}
