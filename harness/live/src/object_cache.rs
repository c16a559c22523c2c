//! The live cache of real API objects (ConfigMaps, Pods, ...): the writer a reflector feeds with watch
//! events and LIST results, publishing into a [`SharedCache`] that readers query concurrently.
//!
//! Every decision is the model's: whether an event may change the cache is `listwatch_model::guard`
//! (the RV and UID guards), the claimed RV moves by `guard::advance` (never backwards), a LIST replaces the
//! whole content (C7) and marks the cache synced (C8). This file only finds the key and moves objects.

use std::collections::BTreeMap;

use listwatch_model::guard::{self, Admit, Stamp};

use super::object_key::ObjectKey;
use super::shared_cache::SharedCache;
use super::sync::Arc;

/// What the cache needs to know of an API object.
pub trait ApiObject {
    /// Writes the cache key, `namespace/name` (or `name` for a cluster-scoped object), into `key`.
    fn write_key(&self, key: &mut String);
    /// `metadata.uid` and `metadata.resourceVersion` as a number (A1: an etcd revision); `None` if the
    /// object lacks either, which no API server serves.
    fn stamp(&self) -> Option<Stamp<'_, str>>;
}

/// One watch event of a typed object.
#[derive(Clone, Debug, PartialEq)]
pub enum ObjectEvent<V> {
    Added(V),
    Modified(V),
    Deleted(V),
    /// A BOOKMARK: only an RV (A8).
    Bookmark(u64),
}

/// What the writer did with one event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Applied {
    /// The guards' decision.
    Guard(Admit),
    /// The object has no UID or no numeric resourceVersion: dropped.
    Malformed,
}

/// Keyed by `namespace/name`.
pub type ObjectCache<V> = SharedCache<ObjectKey, V>;

/// The one writer of an [`ObjectCache`].
#[derive(Debug)]
pub struct ObjectWriter<V> {
    cache: Arc<ObjectCache<V>>,
    /// The RV the reflector claims (C4, guarded).
    rv: u64,
    /// The key of the event being applied, reused so that updates and deletes allocate no key.
    key: String,
}

impl<V: ApiObject> Default for ObjectWriter<V> {
    fn default() -> Self {
        Self::new()
    }
}

impl<V: ApiObject> ObjectWriter<V> {
    pub fn new() -> Self {
        ObjectWriter { cache: Arc::new(ObjectCache::new()), rv: 0, key: String::new() }
    }

    /// The cache this writer publishes to; readers clone the `Arc`.
    pub fn cache(&self) -> Arc<ObjectCache<V>> {
        Arc::clone(&self.cache)
    }

    /// The RV the reflector claims.
    pub fn resource_version(&self) -> u64 {
        self.rv
    }

    /// Apply one watch event (C4) through the guards.
    pub fn apply(&mut self, event: ObjectEvent<V>) -> Applied {
        let (object, delete) = match event {
            ObjectEvent::Added(o) | ObjectEvent::Modified(o) => (o, false),
            ObjectEvent::Deleted(o) => (o, true),
            ObjectEvent::Bookmark(rv) => {
                self.rv = guard::advance(self.rv, rv);
                self.cache.set_rv(self.rv);
                return Applied::Guard(Admit::Apply);
            }
        };
        let Some(incoming_rv) = object.stamp().map(|s| s.rv) else { return Applied::Malformed };
        self.rv = guard::advance(self.rv, incoming_rv);
        self.key.clear();
        object.write_key(&mut self.key);
        let (key, claimed) = (self.key.as_str(), self.rv);
        // The replaced object is returned out of the lock and freed after it.
        let (admit, _replaced) = self.cache.edit(|map, at| {
            *at = claimed;
            let incoming = object.stamp().expect("checked above");
            if delete {
                let admit = guard::delete(map.get(key.as_bytes()).and_then(|h| h.stamp()), incoming);
                let removed = if admit == Admit::Apply { map.remove(key.as_bytes()) } else { None };
                return (admit, removed);
            }
            match map.get_mut(key.as_bytes()) {
                Some(slot) => match guard::upsert(slot.stamp(), incoming) {
                    Admit::Apply => (Admit::Apply, Some(std::mem::replace(slot, Arc::new(object)))),
                    other => (other, None),
                },
                None => {
                    let admit = guard::upsert(None, incoming);
                    map.insert(ObjectKey::new(key), Arc::new(object));
                    (admit, None)
                }
            }
        });
        Applied::Guard(admit)
    }

    /// Replace the whole content with a LIST's items at `rv` (C7) and mark the cache synced (C8). The new
    /// content is built before the lock is taken and the old one freed after it is released.
    pub fn replace(&mut self, items: Vec<V>, rv: u64) {
        // An item without a UID or RV is dropped, as `apply` drops such an event: every object held has
        // a stamp for the guards to compare.
        let mut keyed: Vec<(ObjectKey, Arc<V>)> = items
            .into_iter()
            .filter(|o| o.stamp().is_some())
            .map(|o| {
                let mut key = String::new();
                o.write_key(&mut key);
                (ObjectKey::new(&key), Arc::new(o))
            })
            .collect();
        keyed.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let content: BTreeMap<ObjectKey, Arc<V>> = keyed.into_iter().collect();
        // C2: `last_rv := rv` after a list; a LIST is authoritative, so no guard applies.
        self.rv = rv;
        self.cache.replace(content, rv);
        self.cache.readiness().mark_synced();
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[derive(Clone, Debug, PartialEq)]
    struct Obj {
        name: &'static str,
        uid: &'static str,
        rv: u64,
    }

    impl ApiObject for Obj {
        fn write_key(&self, key: &mut String) {
            key.push_str("default/");
            key.push_str(self.name);
        }
        fn stamp(&self) -> Option<Stamp<'_, str>> {
            (self.rv > 0).then_some(Stamp { uid: self.uid, rv: self.rv })
        }
    }

    fn o(name: &'static str, uid: &'static str, rv: u64) -> Obj {
        Obj { name, uid, rv }
    }

    fn held(w: &ObjectWriter<Obj>, name: &str) -> Option<Obj> {
        w.cache().get(&ObjectKey::new(&format!("default/{name}"))).map(|o| (*o).clone())
    }

    #[test]
    fn events_apply_in_order_and_the_rv_follows() {
        let mut w = ObjectWriter::new();
        assert_eq!(w.apply(ObjectEvent::Added(o("a", "u1", 2))), Applied::Guard(Admit::Apply));
        assert_eq!(w.apply(ObjectEvent::Modified(o("a", "u1", 3))), Applied::Guard(Admit::Apply));
        assert_eq!(w.apply(ObjectEvent::Added(o("b", "u2", 4))), Applied::Guard(Admit::Apply));
        assert_eq!(w.apply(ObjectEvent::Deleted(o("b", "u2", 5))), Applied::Guard(Admit::Apply));
        assert_eq!(held(&w, "a"), Some(o("a", "u1", 3)));
        assert_eq!(held(&w, "b"), None);
        assert_eq!((w.resource_version(), w.cache().snapshot().rv), (5, 5));
        assert_eq!(w.apply(ObjectEvent::Bookmark(9)), Applied::Guard(Admit::Apply));
        assert_eq!(w.cache().snapshot().rv, 9);
    }

    #[test]
    fn a_replayed_event_neither_rolls_back_an_object_nor_the_rv() {
        let mut w = ObjectWriter::new();
        w.apply(ObjectEvent::Added(o("a", "u1", 2)));
        w.apply(ObjectEvent::Modified(o("a", "u1", 6)));
        // A re-watch from an older RV replays the ADDED (bug 000).
        assert_eq!(w.apply(ObjectEvent::Added(o("a", "u1", 2))), Applied::Guard(Admit::Stale));
        assert_eq!(w.apply(ObjectEvent::Bookmark(3)), Applied::Guard(Admit::Apply));
        assert_eq!(held(&w, "a"), Some(o("a", "u1", 6)));
        assert_eq!(w.cache().snapshot().rv, 6);
    }

    #[test]
    fn a_replayed_delete_leaves_the_new_incarnation() {
        let mut w = ObjectWriter::new();
        w.apply(ObjectEvent::Added(o("a", "u1", 2)));
        w.apply(ObjectEvent::Deleted(o("a", "u1", 3)));
        w.apply(ObjectEvent::Added(o("a", "u2", 4)));
        let replayed = w.apply(ObjectEvent::Deleted(o("a", "u1", 3)));
        assert_eq!(replayed, Applied::Guard(Admit::OtherIncarnation));
        assert_eq!(held(&w, "a"), Some(o("a", "u2", 4)));
    }

    #[test]
    fn an_object_without_an_rv_is_dropped() {
        let mut w = ObjectWriter::new();
        assert_eq!(w.apply(ObjectEvent::Added(o("a", "u1", 0))), Applied::Malformed);
        assert!(w.cache().is_empty());
        w.replace(vec![o("b", "u2", 0), o("c", "u3", 4)], 5);
        assert_eq!(held(&w, "b"), None);
        assert_eq!(held(&w, "c"), Some(o("c", "u3", 4)));
    }

    #[test]
    fn a_list_replaces_everything_and_marks_the_cache_synced() {
        let mut w = ObjectWriter::new();
        w.apply(ObjectEvent::Added(o("gone", "u1", 2)));
        assert!(!w.cache().readiness().is_synced());
        w.replace(vec![o("b", "u3", 7), o("a", "u2", 5)], 8);
        assert_eq!(held(&w, "gone"), None);
        let snap = w.cache().snapshot();
        assert_eq!(snap.rv, 8);
        assert_eq!(
            snap.objects.keys().map(|k| k.to_string()).collect::<Vec<_>>(),
            ["default/a", "default/b"]
        );
        assert!(w.cache().readiness().is_synced());
    }
}
