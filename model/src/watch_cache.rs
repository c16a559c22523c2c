//! The API server's watch cache: the current state of the watched resource at the cache's RV plus a
//! bounded window of recent events (A5), fed by one etcd watch.

use std::collections::VecDeque;

use crate::api::WatchEvent;
use crate::flaw::{Flaw, Flaws};
use crate::store::{EventKind, Snapshot, StoreEvent};
use crate::types::{Key, Object, Rev};

/// An event as the cache keeps it: its true revision (used to serve watches) and what clients get.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct CacheEvent {
    pub rv: Rev,
    pub event: WatchEvent,
}

/// What ingesting one etcd event did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Ingested {
    Applied(CacheEvent),
    /// A7: a non-create event with nil `prev_kv`; the cache must reinitialise from etcd.
    NilPrevKv,
    /// The flawed path (`nil-prevkv-dropped`): the event vanished.
    Dropped,
}

#[derive(Debug, PartialEq, Eq, Hash)]
pub struct WatchCache {
    rv: Rev,
    objects: litemap::LiteMap<Key, Object>,
    window: VecDeque<CacheEvent>,
    /// A watch from below `floor` is too old (A4): `floor` is `oldest - 1`, where `oldest` is one past
    /// the list RV until an event is evicted, then the RV of the oldest event still buffered (one past
    /// the cache's RV when none is). Every event with RV > `floor` is in the window.
    floor: Rev,
    capacity: u8,
}
crate::clone_by_field!(WatchCache { rv, objects: map, window, floor, capacity });

impl WatchCache {
    /// A cache initialised from a list of etcd (A5).
    pub fn from_snapshot(snapshot: &Snapshot, capacity: u8) -> Self {
        WatchCache {
            rv: snapshot.rev,
            objects: snapshot.kvs.iter().map(|kv| (kv.key, kv.object())).collect(),
            window: VecDeque::new(),
            floor: snapshot.rev,
            capacity: capacity.max(1),
        }
    }

    /// The RV the cache is at.
    pub fn rv(&self) -> Rev {
        self.rv
    }

    /// The oldest RV a watch can start from.
    pub fn floor(&self) -> Rev {
        self.floor
    }

    pub fn objects(&self) -> impl Iterator<Item = &Object> {
        self.objects.values()
    }

    pub fn window(&self) -> impl Iterator<Item = &CacheEvent> {
        self.window.iter()
    }

    /// Take one etcd event into the cache.
    pub fn ingest(&mut self, e: &StoreEvent, flaws: Flaws) -> Ingested {
        // A7: the guard of PR #76675. Without it (the flaw) a DELETE with no previous value has no object
        // to send and is lost; a MODIFIED still carries its new value and goes through.
        if !e.is_create() && e.prev.is_none() {
            if !flaws.has(Flaw::NilPrevKvDropped) {
                return Ingested::NilPrevKv;
            }
            if e.kind == EventKind::Delete {
                self.rv = e.rev;
                return Ingested::Dropped;
            }
        }
        let event = match e.kind {
            EventKind::Put(kv) if e.is_create() => WatchEvent::Added(kv.object()),
            EventKind::Put(kv) => WatchEvent::Modified(kv.object()),
            EventKind::Delete => {
                let prev = e.prev.expect("checked above").object();
                // A6: the previous content stamped with the deletion RV. The flaw keeps the object's own,
                // older RV (kubernetes#58545).
                let rv = if flaws.has(Flaw::StaleDeleteRv) { prev.rv } else { e.rev };
                WatchEvent::Deleted(Object { rv, ..prev })
            }
        };
        match event {
            WatchEvent::Deleted(o) => self.objects.remove(&o.key),
            WatchEvent::Added(o) | WatchEvent::Modified(o) => self.objects.insert(o.key, o),
            WatchEvent::Bookmark(_) | WatchEvent::InitialEventsEnd(_) | WatchEvent::Error(_) => None,
        };
        self.rv = e.rev;
        let applied = CacheEvent { rv: e.rev, event };
        self.window.push_back(applied);
        if self.window.len() > usize::from(self.capacity) {
            self.evict_oldest();
        }
        Ingested::Applied(applied)
    }

    /// An etcd progress notification moves the cache's RV without an event (E7).
    pub fn progress(&mut self, rev: Rev) {
        self.rv = self.rv.max(rev);
    }

    /// Drop the oldest event of the window; watches from before the next oldest one now get 410 (A4,
    /// A5). As upstream, the threshold follows what is buffered, not what the cache could infer: a
    /// watch from between the evicted event and the next one is refused even if nothing it needs is
    /// missing.
    pub fn evict_oldest(&mut self) -> bool {
        let Some(evicted) = self.window.pop_front() else { return false };
        let oldest = self.window.front().map_or(self.rv.next(), |e| e.rv);
        // E8: an eviction that splits a revision leaves that revision incomplete in the window; a
        // watch may start only after it. Simplified: upstream's threshold is `oldest - 1` whatever was
        // evicted, which would let a watch from just below such a revision miss part of it.
        self.floor = if oldest == evicted.rv { oldest } else { Rev(oldest.0 - 1) };
        true
    }

    /// The events a watch from `from` still has to get, or `None` if `from` is too old (A3, A4).
    pub fn events_after(&self, from: Rev) -> Option<impl Iterator<Item = &CacheEvent>> {
        (from >= self.floor).then(|| self.window.iter().filter(move |e| e.rv > from))
    }
}
