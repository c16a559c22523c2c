//! The model's answers to a sequence: `model/src/store.rs` stepped operation by operation, every open watch
//! drained after each step, as a real etcd sends a synced watcher's events as soon as it commits.
//!
//! The model keeps no values (nothing in Kubernetes' list/watch reads them), so this side remembers the
//! value each put wrote at its revision, and reads them back by `(key, mod_rev)`.

use std::collections::BTreeMap;

use listwatch_model::store::{
    EventKind, KeyValue, Prefix, ReadError, Store, TombstonePolicy, WatchResponse, WriteError,
};
use listwatch_model::{Key, Rev};

use super::sequence::{Op, Sequence, MAX_WATCH};
use super::transcript::{Answer, Kv, Refusal, Step, Transcript, WatchMsg};

/// A model bug planted on purpose, to show that the comparison catches and shrinks one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Plant {
    /// The model as it is.
    #[default]
    None,
    /// A compaction at `c` that keeps one revision too few: it compacts at `c + 1` when it can.
    CompactionKeepsOneRevisionTooFew,
    /// An API server bug: a consistent LIST (rv unset, A2) answers one revision below the one it read
    /// (for `conformance apiserver`; the store comparison ignores it).
    ConsistentListOneRevisionBehind,
    /// An API server bug seen only while the cache lags: a consistent LIST answered from the cache as
    /// it is, with no wait for etcd's revision (the catalogue flaw `consistent-read-lags`; A2,
    /// KEP-2340). For `conformance apiserver`; the store comparison ignores it.
    ConsistentReadLags,
    /// An API server bug seen only at a cache relist: a cache whose etcd watch ended as compacted goes
    /// on as if nothing happened, neither closing its watches nor starting its window anew (A5). For
    /// `conformance apiserver`; the store comparison ignores it.
    RelistIgnored,
    /// An API server bug: a watch outlives its `timeoutSeconds`, as a handler that never arms the
    /// timeout would serve it (A9). For `conformance apiserver` and `conformance http`; the store
    /// comparison ignores it.
    TimeoutIgnored,
    /// An API server bug: a cacher whose bookmark timer never fires sends no heartbeat bookmark, so
    /// that an idle watch learns nothing for as long as it lasts (A8). For `conformance apiserver`;
    /// the store comparison ignores it.
    HeartbeatMissing,
}

struct ModelSide {
    store: Store,
    plant: Plant,
    values: BTreeMap<(u8, u32), u16>,
}

/// The model's transcript of `sequence` under a tombstone policy (E4), with a bug planted or not, as
/// etcd 3.4.23 answers progress requests (E7).
pub fn model_transcript(sequence: &Sequence, tombstones: TombstonePolicy, plant: Plant) -> Transcript {
    model_transcript_with(sequence, tombstones, plant, false)
}

/// [`model_transcript`], with E7 as etcd 3.5.22+, 3.6.2+ and 3.7 answer progress requests when
/// `progress_after_start`.
pub fn model_transcript_with(
    sequence: &Sequence,
    tombstones: TombstonePolicy,
    plant: Plant,
    progress_after_start: bool,
) -> Transcript {
    let store = Store::new(tombstones, None).with_progress_after_start(progress_after_start);
    let mut side = ModelSide { store, plant, values: BTreeMap::new() };
    let mut transcript = Transcript::default();
    for op in &sequence.ops {
        let mut step = Step::default();
        step.answer = Some(side.apply(op, &mut step));
        side.drain(&mut step);
        transcript.steps.push(step);
    }
    for id in side.open() {
        let rev = side.store.progress(id).map_or(Answer::NoProgress, |r| Answer::Progress { rev: r.0 });
        transcript.end.insert(id, Step { answer: Some(rev), messages: BTreeMap::new() });
    }
    transcript
}

fn refusal(e: ReadError) -> Refusal {
    match e {
        ReadError::Compacted { .. } => Refusal::Compacted,
        ReadError::FutureRev { .. } => Refusal::FutureRevision,
    }
}

fn prefix(other: bool) -> Prefix {
    if other {
        Prefix::Other
    } else {
        Prefix::Watched
    }
}

impl ModelSide {
    fn kv(&self, kv: KeyValue) -> Kv {
        let value = self.values.get(&(kv.key.0, kv.mod_rev.0)).copied().unwrap_or_default();
        Kv { key: kv.key.0, create_rev: kv.create_rev.0, mod_rev: kv.mod_rev.0, version: kv.version, value }
    }

    fn open(&self) -> Vec<u8> {
        (0..=MAX_WATCH).filter(|id| self.store.has_watch(*id)).collect()
    }

    fn apply(&mut self, op: &Op, step: &mut Step) -> Answer {
        let store = &mut self.store;
        match *op {
            Op::Put { key, other, value } => {
                let kv = store.put(prefix(other), Key(key));
                if !other {
                    self.values.insert((key, kv.mod_rev.0), value);
                }
                Answer::Written { rev: kv.mod_rev.0 }
            }
            Op::Delete { key, other } => match store.delete(prefix(other), Key(key)) {
                Ok(rev) => Answer::Deleted { rev: rev.0, keys: vec![key] },
                Err(_) => Answer::Deleted { rev: store.rev().0, keys: vec![] },
            },
            Op::DeleteAll { ref keys } => {
                let keys: Vec<Key> = keys.iter().map(|k| Key(*k)).collect();
                match store.delete_all(Prefix::Watched, &keys) {
                    Ok((rev, deleted)) => {
                        Answer::Deleted { rev: rev.0, keys: deleted.iter().map(|k| k.0).collect() }
                    }
                    Err(_) => Answer::Deleted { rev: store.rev().0, keys: vec![] },
                }
            }
            Op::Compact { rev } => {
                let planted = Rev(rev + 1);
                let at = match self.plant {
                    Plant::CompactionKeepsOneRevisionTooFew if planted <= store.rev() => planted,
                    _ => Rev(rev),
                };
                match store.compact(at) {
                    Ok(()) => Answer::Compacted { rev },
                    Err(WriteError::BadCompaction { compacted, .. }) if Rev(rev) <= compacted => {
                        Answer::Refused { refusal: Refusal::Compacted }
                    }
                    Err(_) => Answer::Refused { refusal: Refusal::FutureRevision },
                }
            }
            Op::Range { at } => match store.range(at.map(Rev)) {
                // etcd's header carries the current revision, whatever revision the range read.
                Ok(snapshot) => {
                    let current = store.rev().0;
                    Answer::Range { rev: current, kvs: snapshot.kvs.iter().map(|kv| self.kv(*kv)).collect() }
                }
                Err(e) => Answer::Refused { refusal: refusal(e) },
            },
            Op::Watch { id, from } => {
                if let Err(ReadError::Compacted { compacted }) = store.watch(id, Rev(from)) {
                    // etcd creates the watch, then cancels it with the compacted revision (E5).
                    step.messages
                        .entry(id)
                        .or_default()
                        .push(WatchMsg::Cancelled { compact_rev: compacted.0 });
                }
                Answer::WatchCreated
            }
            Op::Cancel { id } => {
                if store.unwatch(id) {
                    Answer::Cancelled
                } else {
                    Answer::NotOpen
                }
            }
            Op::Progress { id } => match (store.has_watch(id), store.progress(id)) {
                (true, Some(rev)) => Answer::Progress { rev: rev.0 },
                (true, None) => Answer::NoProgress,
                _ => Answer::NotOpen,
            },
        }
    }

    /// Everything every open watch has to send now.
    fn drain(&mut self, step: &mut Step) {
        for id in self.open() {
            while let Some(response) = self.store.send_next(id) {
                let msg = match response {
                    WatchResponse::Event(e) => WatchMsg::Event {
                        rev: e.rev.0,
                        key: e.key.0,
                        put: match e.kind {
                            EventKind::Put(kv) => Some(self.kv(kv)),
                            EventKind::Delete => None,
                        },
                        prev: e.prev.map(|kv| self.kv(kv)),
                    },
                    WatchResponse::Cancelled { compacted } => {
                        WatchMsg::Cancelled { compact_rev: compacted.0 }
                    }
                };
                step.messages.entry(id).or_default().push(msg);
            }
        }
    }
}
