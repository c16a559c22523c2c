//! What the benchmarks feed both reflector stores: one deterministic stream of watch events over real
//! `k8s_openapi` objects, and the same stream in each store's own event type.
//!
//! The stream is drawn from a seed with the simulator's generator, so every run of every benchmark sees
//! the same bytes. Each event is one etcd write: RVs increase by one per event (A1), a re-created key gets
//! a new UID (E2).

pub mod objects;
pub mod wire;

use kube::runtime::reflector::store::Writer;
use kube::runtime::watcher;
use listwatch_harness::sim::rng::Rng;
use listwatch_live::object_cache::{ApiObject, ObjectEvent, ObjectWriter};

/// One write in the stream, before it is dressed as an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Write {
    pub kind: WriteKind,
    /// Index of the key (`default/cm-<index>`).
    pub key: u32,
    /// The incarnation: the RV of the write that created it (as the model does, E2).
    pub uid: u64,
    pub rv: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteKind {
    Added,
    Modified,
    Deleted,
}

/// The objects a store holds before the stream starts (every key live) and the writes that follow:
/// `deletes_percent` of them delete a live key, the rest add or modify a random key (ADDED when the key
/// is deleted at that point, MODIFIED when it is live).
#[derive(Clone, Debug)]
pub struct Stream {
    pub initial: Vec<Write>,
    pub writes: Vec<Write>,
}

impl Stream {
    pub fn draw(seed: u64, keys: u32, writes: usize, deletes_percent: u64) -> Stream {
        let mut rng = Rng::new(seed);
        let mut rv = 0u64;
        let mut live: Vec<Option<u64>> = Vec::with_capacity(keys as usize);
        let mut initial = Vec::with_capacity(keys as usize);
        for key in 0..keys {
            rv += 1;
            live.push(Some(rv));
            initial.push(Write { kind: WriteKind::Added, key, uid: rv, rv });
        }
        let mut live_count = keys;
        let mut out = Vec::with_capacity(writes);
        while out.len() < writes {
            let delete = rng.below(100) < deletes_percent && live_count > 0;
            let mut key = rng.below(u64::from(keys)) as u32;
            // A delete picks a live key.
            while delete && live[key as usize].is_none() {
                key = rng.below(u64::from(keys)) as u32;
            }
            let slot = &mut live[key as usize];
            let write = match (*slot, delete) {
                (None, true) => unreachable!("a delete picks a live key"),
                (Some(uid), true) => {
                    *slot = None;
                    live_count -= 1;
                    Write { kind: WriteKind::Deleted, key, uid, rv: rv + 1 }
                }
                (Some(uid), false) => Write { kind: WriteKind::Modified, key, uid, rv: rv + 1 },
                (None, false) => {
                    *slot = Some(rv + 1);
                    live_count += 1;
                    Write { kind: WriteKind::Added, key, uid: rv + 1, rv: rv + 1 }
                }
            };
            rv += 1;
            out.push(write);
        }
        Stream { initial, writes: out }
    }

    /// The last RV of the stream.
    pub fn last_rv(&self) -> u64 {
        self.writes.last().or(self.initial.last()).map_or(0, |w| w.rv)
    }
}

/// The stream as kube-runtime's watcher events.
pub fn kube_events<K>(writes: &[Write], make: impl Fn(&Write) -> K) -> Vec<watcher::Event<K>> {
    writes
        .iter()
        .map(|w| match w.kind {
            WriteKind::Added | WriteKind::Modified => watcher::Event::Apply(make(w)),
            WriteKind::Deleted => watcher::Event::Delete(make(w)),
        })
        .collect()
}

/// A relist as kube-runtime's watcher delivers it: `Init`, one `InitApply` per object, `InitDone`.
pub fn kube_relist<K>(items: &[Write], make: impl Fn(&Write) -> K) -> Vec<watcher::Event<K>> {
    let mut events = Vec::with_capacity(items.len() + 2);
    events.push(watcher::Event::Init);
    events.extend(items.iter().map(|w| watcher::Event::InitApply(make(w))));
    events.push(watcher::Event::InitDone);
    events
}

/// The stream as listwatch's watch events.
pub fn listwatch_events<K>(writes: &[Write], make: impl Fn(&Write) -> K) -> Vec<ObjectEvent<K>> {
    writes
        .iter()
        .map(|w| match w.kind {
            WriteKind::Added => ObjectEvent::Added(make(w)),
            WriteKind::Modified => ObjectEvent::Modified(make(w)),
            WriteKind::Deleted => ObjectEvent::Deleted(make(w)),
        })
        .collect()
}

/// A kube-runtime store that has applied `events` (a relist, say).
pub fn kube_store<K>(events: &[watcher::Event<K>]) -> Writer<K>
where
    K: kube::Resource<DynamicType = ()> + Clone + 'static,
{
    let mut writer = Writer::default();
    events.iter().for_each(|e| writer.apply_watcher_event(e));
    writer
}

/// A listwatch object cache that has listed `items` (synced at the last item's RV).
pub fn listwatch_store<K: ApiObject>(items: &[Write], make: impl Fn(&Write) -> K) -> ObjectWriter<K> {
    let mut writer = ObjectWriter::new();
    writer.replace(items.iter().map(make).collect(), items.last().map_or(0, |w| w.rv));
    writer
}
