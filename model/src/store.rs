//! etcd's MVCC store as the API server sees it: one global revision, per-key history with tombstones,
//! compaction, reads at a revision and watches (SEMANTICS E1–E8).
//!
//! The watched resource type lives under one prefix; writes of other resource types (`Prefix::Other`)
//! move the global revision without producing events for the watched prefix, which is why a watch
//! cache's RV can trail the store's (kubernetes#107133).

use std::collections::VecDeque;

use crate::types::{Key, Object, Rev, Uid};

/// Which resource type a key belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Prefix {
    /// The resource type the reflectors watch.
    Watched,
    /// Any other resource type: it only moves the revision.
    Other,
}

/// What etcd 3.x does with a tombstone at exactly the compaction revision (E4).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TombstonePolicy {
    /// etcd 3.4 (and < 3.5.16): a key whose history up to C ends in a tombstone disappears entirely.
    #[default]
    DropAtCompaction,
    /// etcd >= 3.5.16 (etcd#18274): a tombstone exactly at C is kept, so a watch from C still sees it.
    KeepAtCompactRev,
}

/// A key's value at some revision (E2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct KeyValue {
    pub key: Key,
    pub create_rev: Rev,
    pub mod_rev: Rev,
    pub version: u32,
}

impl KeyValue {
    /// The object the API server makes of this value (A1: RV = mod_rev; UID per incarnation).
    pub fn object(&self) -> Object {
        Object { key: self.key, uid: Uid(self.create_rev), rv: self.mod_rev, version: self.version }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Op {
    Put { create_rev: Rev, version: u32 },
    Delete,
}

/// One key's change in history. Kubernetes writes one key per transaction (E1), but a transaction that
/// deletes several keys (E8: a lease revoked) leaves several entries at one revision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct Entry {
    rev: Rev,
    prefix: Prefix,
    key: Key,
    op: Op,
}

impl Entry {
    fn value(&self) -> Option<KeyValue> {
        match self.op {
            Op::Put { create_rev, version } => {
                Some(KeyValue { key: self.key, create_rev, mod_rev: self.rev, version })
            }
            Op::Delete => None,
        }
    }
}

/// Why a read or a watch start failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ReadError {
    /// The revision is below the compacted revision (E4, E5).
    Compacted { compacted: Rev },
    /// The revision is in the future (E4: etcd's `ErrFutureRev`).
    FutureRev { current: Rev },
}

/// Why a write or a compaction was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum WriteError {
    /// Delete of a key that has no live value.
    NotFound,
    /// Compaction at or below the compacted revision, or above the current one (E4).
    BadCompaction { compacted: Rev, current: Rev },
}

/// A consistent snapshot of the watched prefix at one revision.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Snapshot {
    pub rev: Rev,
    pub kvs: Vec<KeyValue>,
}

/// What an etcd watch event says (E3: a delete carries the key and the deletion revision only).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EventKind {
    Put(KeyValue),
    Delete,
}

/// An event as etcd sends it, with `prev_kv` looked up at send time (E6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StoreEvent {
    pub rev: Rev,
    pub key: Key,
    pub kind: EventKind,
    /// The value at `rev - 1`; `None` for a create, and silently `None` when `rev - 1` was compacted
    /// by the time the event was sent (E6, etcd#10681).
    pub prev: Option<KeyValue>,
}

impl StoreEvent {
    /// A create is a put whose incarnation starts at this revision.
    pub fn is_create(&self) -> bool {
        matches!(self.kind, EventKind::Put(kv) if kv.create_rev == self.rev)
    }
}

/// What a watch yields when it is asked for the next thing to send.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum WatchResponse {
    Event(StoreEvent),
    /// The watch fell below the compacted revision and was cancelled (E5).
    Cancelled {
        compacted: Rev,
    },
}

/// Identifies one etcd watch; the API server uses its own id so that no counter enters the state.
pub type WatcherId = u8;

/// An etcd watch: events already pulled from history await sending in `pending`; `next_rev` is the next
/// revision to pull. A watcher whose buffer is full stays behind ("unsynced") and catches up from history
/// later, where it can fall below the compacted revision (E5).
#[derive(Debug, PartialEq, Eq, Hash)]
struct Watch {
    /// The start revision, kept only under `progress_after_start` (E7), so that it splits no states
    /// otherwise.
    start: Option<Rev>,
    prefix: Prefix,
    next_rev: Rev,
    pending: VecDeque<Entry>,
}
crate::clone_by_field!(Watch { start, prefix, next_rev, pending });

/// The etcd store.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct Store {
    rev: Rev,
    compacted: Rev,
    history: Vec<Entry>,
    tombstones: TombstonePolicy,
    /// How many pulled events a watch may hold before it stays behind; `None` for no bound.
    watch_buffer: Option<u8>,
    watches: litemap::LiteMap<WatcherId, Watch>,
    /// E7 as etcd 3.5.22+, 3.6.2+ and 3.7 answer a progress request (etcd#20229): never for a watch
    /// whose start revision is still ahead of the current one. etcd 3.4.23 and 3.5.21 (the default,
    /// `false`) answer it too.
    progress_after_start: bool,
}
crate::clone_by_field!(Store {
    rev,
    compacted,
    history,
    tombstones,
    watch_buffer,
    watches: map_in_place,
    progress_after_start
});

impl Store {
    pub fn new(tombstones: TombstonePolicy, watch_buffer: Option<u8>) -> Self {
        Store {
            rev: Rev::ZERO,
            compacted: Rev::ZERO,
            history: Vec::new(),
            tombstones,
            watch_buffer,
            watches: litemap::LiteMap::new(),
            progress_after_start: false,
        }
    }

    /// E7 as etcd 3.5.22+, 3.6.2+ and 3.7 answer a progress request: not while a watch's start revision
    /// is in the future (etcd's `progressIfSync`: `rev < w.startRev`, etcd#20229). Found by
    /// `conformance etcd --etcd 3.6`, then `--etcd 3.5` (3.5.35).
    pub fn with_progress_after_start(self, on: bool) -> Self {
        Store { progress_after_start: on, ..self }
    }

    /// The current revision (E1).
    pub fn rev(&self) -> Rev {
        self.rev
    }

    /// The compacted revision (E4); reads below it fail.
    pub fn compacted(&self) -> Rev {
        self.compacted
    }

    /// The newest history entry of a key at or below `at`, if history still holds one.
    fn newest(&self, prefix: Prefix, key: Key, at: Rev) -> Option<&Entry> {
        self.history.iter().rev().find(|e| e.rev <= at && e.prefix == prefix && e.key == key)
    }

    /// The live value of a key now.
    pub fn get(&self, key: Key) -> Option<KeyValue> {
        self.newest(Prefix::Watched, key, self.rev).and_then(Entry::value)
    }

    /// Create or update a key (E1, E2). Returns the new value.
    pub fn put(&mut self, prefix: Prefix, key: Key) -> KeyValue {
        let rev = self.rev.next();
        let op = match self.newest(prefix, key, self.rev).map(|e| e.op) {
            Some(Op::Put { create_rev, version }) => Op::Put { create_rev, version: version + 1 },
            // E2: after a tombstone (or never written) the next put is a new incarnation.
            Some(Op::Delete) | None => Op::Put { create_rev: rev, version: 1 },
        };
        let entry = Entry { rev, prefix, key, op };
        self.append(entry);
        entry.value().expect("a put has a value")
    }

    /// Delete a live key, leaving a tombstone at a new revision (E2, E3).
    pub fn delete(&mut self, prefix: Prefix, key: Key) -> Result<Rev, WriteError> {
        match self.newest(prefix, key, self.rev).map(|e| e.op) {
            Some(Op::Put { .. }) => {
                let rev = self.rev.next();
                self.append(Entry { rev, prefix, key, op: Op::Delete });
                Ok(rev)
            }
            _ => Err(WriteError::NotFound),
        }
    }

    /// Delete every live key of `keys` in one transaction, all at one new revision (E8: a lease revoked,
    /// a multi-key delete). Keys with no live value are left alone, as etcd's delete-range of a missing
    /// key is; a transaction that deletes nothing does not move the revision and returns `NotFound`.
    pub fn delete_all(&mut self, prefix: Prefix, keys: &[Key]) -> Result<(Rev, Vec<Key>), WriteError> {
        let rev = self.rev.next();
        let mut deleted: Vec<Key> = Vec::new();
        for &key in keys {
            let live = matches!(self.newest(prefix, key, self.rev).map(|e| e.op), Some(Op::Put { .. }));
            if live && !deleted.contains(&key) {
                deleted.push(key);
            }
        }
        if deleted.is_empty() {
            return Err(WriteError::NotFound);
        }
        let entries: Vec<Entry> =
            deleted.iter().map(|&key| Entry { rev, prefix, key, op: Op::Delete }).collect();
        self.append_all(&entries);
        Ok((rev, deleted))
    }

    fn append(&mut self, entry: Entry) {
        self.append_all(&[entry]);
    }

    /// Append the entries of one revision.
    fn append_all(&mut self, entries: &[Entry]) {
        let Some(first) = entries.first() else { return };
        let (rev, prefix) = (first.rev, first.prefix);
        self.rev = rev;
        self.history.extend_from_slice(entries);
        // A synced watcher (one that has pulled everything) is notified at once, as etcd's synced
        // watcher group is at the end of every write transaction; a full one stays behind. A revision is
        // never split (E8): a watcher with room takes all of its entries, as etcd sends a transaction's
        // events to a synced watcher in one batch.
        for (_, w) in self.watches.iter_mut() {
            if w.next_rev != rev {
                continue;
            }
            if prefix != w.prefix {
                w.next_rev = rev.next();
            } else if self.watch_buffer.is_none_or(|cap| w.pending.len() < usize::from(cap)) {
                w.pending.extend(entries.iter().copied());
                w.next_rev = rev.next();
            }
        }
    }

    /// Compact at `c` (E4). etcd keeps, per key, the newest revision `<= c` and everything after, and
    /// drops a key whose history up to `c` ends in a tombstone (or keeps a tombstone exactly at `c`, by
    /// policy).
    ///
    /// E4, simplified: the model keeps the whole history, because what compaction removes is exactly what
    /// nobody can read any more: reads and `prev_kv` lookups below `c` fail, and a watch (which can start
    /// no lower than `c`) skips a tombstone at `c` unless the policy keeps it. Every read at or above `c`
    /// gives the same answer either way, and the properties judge against the whole history.
    pub fn compact(&mut self, c: Rev) -> Result<(), WriteError> {
        if c <= self.compacted || c > self.rev {
            return Err(WriteError::BadCompaction { compacted: self.compacted, current: self.rev });
        }
        self.compacted = c;
        Ok(())
    }

    /// Whether compaction removed this entry: only a tombstone at exactly the compacted revision can
    /// still be reached (by a watch from `c`), and 3.4 dropped it (etcd#18274).
    fn compacted_away(&self, e: &Entry) -> bool {
        e.rev < self.compacted
            || (e.rev == self.compacted
                && e.op == Op::Delete
                && self.tombstones == TombstonePolicy::DropAtCompaction)
    }

    /// The state of the watched prefix at any revision, compacted or not: the ground truth the
    /// properties judge against. No etcd API reads this.
    pub fn truth_at(&self, at: Rev) -> litemap::LiteMap<Key, KeyValue> {
        let mut live = litemap::LiteMap::new();
        for e in self.history.iter().filter(|e| e.rev <= at && e.prefix == Prefix::Watched) {
            match e.value() {
                Some(kv) => live.insert(e.key, kv),
                None => live.remove(&e.key),
            };
        }
        live
    }

    /// A key's value at any revision, compacted or not: ground truth, as [`Self::truth_at`].
    pub fn truth_of(&self, key: Key, at: Rev) -> Option<KeyValue> {
        self.newest(Prefix::Watched, key, at).and_then(Entry::value)
    }

    fn check_read(&self, at: Rev) -> Result<(), ReadError> {
        if at < self.compacted {
            return Err(ReadError::Compacted { compacted: self.compacted });
        }
        if at > self.rev {
            return Err(ReadError::FutureRev { current: self.rev });
        }
        Ok(())
    }

    /// Read one key at a revision (`None`: the current one).
    pub fn get_at(&self, key: Key, at: Option<Rev>) -> Result<Option<KeyValue>, ReadError> {
        let at = at.unwrap_or(self.rev);
        self.check_read(at)?;
        Ok(self.newest(Prefix::Watched, key, at).and_then(Entry::value))
    }

    /// Range over the watched prefix at a revision (`None`: the current one, a quorum read).
    pub fn range(&self, at: Option<Rev>) -> Result<Snapshot, ReadError> {
        let at = at.unwrap_or(self.rev);
        self.check_read(at)?;
        Ok(Snapshot { rev: at, kvs: self.truth_at(at).values().copied().collect() })
    }

    /// The revision of the first write to the watched prefix after `rev`, if any: ground truth for
    /// judging whether a watch stream skipped an event. No etcd API reads this.
    pub fn next_watched_write_after(&self, rev: Rev) -> Option<Rev> {
        self.history.iter().find(|e| e.rev > rev && e.prefix == Prefix::Watched).map(|e| e.rev)
    }

    /// The keys of the watched prefix written at `rev`: one, or several for a transaction (E8). Ground
    /// truth, as [`Self::next_watched_write_after`].
    pub fn watched_keys_at(&self, rev: Rev) -> Vec<Key> {
        self.history.iter().filter(|e| e.rev == rev && e.prefix == Prefix::Watched).map(|e| e.key).collect()
    }

    /// Start (or restart) watch `id` on the watched prefix from `from`, inclusive (E5): a start in the
    /// future gets nothing before `from`. A start below the compacted revision is refused with `Compacted`.
    pub fn watch(&mut self, id: WatcherId, from: Rev) -> Result<(), ReadError> {
        self.watches.remove(&id);
        if from < self.compacted {
            return Err(ReadError::Compacted { compacted: self.compacted });
        }
        let start = self.progress_after_start.then_some(from);
        let watch =
            Watch { start, prefix: Prefix::Watched, next_rev: from.max(Rev(1)), pending: VecDeque::new() };
        self.watches.insert(id, watch);
        self.pull(id);
        Ok(())
    }

    /// Cancel watch `id` at the client's request; nothing more is sent on it.
    /// The watches under new ids (`rename` of each): API servers renamed by the checker's symmetry
    /// reduction take their etcd watches with them.
    pub(crate) fn rename_watchers(&mut self, rename: impl Fn(WatcherId) -> WatcherId) {
        let watches = std::mem::take(&mut self.watches);
        self.watches = watches.into_iter().map(|(id, w)| (rename(id), w)).collect();
    }

    /// Hash what watch `id` holds (nothing for none), for the symmetry reduction.
    pub(crate) fn hash_watch<H: std::hash::Hasher>(&self, id: WatcherId, state: &mut H) {
        std::hash::Hash::hash(&self.watches.get(&id), state);
    }

    pub fn unwatch(&mut self, id: WatcherId) -> bool {
        self.watches.remove(&id).is_some()
    }

    pub fn has_watch(&self, id: WatcherId) -> bool {
        self.watches.contains_key(&id)
    }

    /// Catch a watch up from history, as far as its buffer allows.
    fn pull(&mut self, id: WatcherId) {
        let cap = self.watch_buffer.map_or(usize::MAX, usize::from);
        let Some(w) = self.watches.get(&id) else { return };
        let (prefix, mut room) = (w.prefix, cap.saturating_sub(w.pending.len()));
        let mut pulled = Vec::new();
        // E5: a watch from a future revision S waits at S (etcd: `minRev = max(current + 1, S)`).
        let mut next_rev = w.next_rev.max(self.rev.next());
        for e in self.history.iter().filter(|e| e.rev >= w.next_rev) {
            if e.prefix != prefix || self.compacted_away(e) {
                continue;
            }
            // E8: a revision is pulled whole, so a full buffer stops only between revisions.
            let same_rev = pulled.last().is_some_and(|p: &Entry| p.rev == e.rev);
            if room == 0 && !same_rev {
                next_rev = e.rev;
                break;
            }
            room = room.saturating_sub(1);
            pulled.push(*e);
        }
        let w = self.watches.get_mut(&id).expect("looked up above");
        w.pending.extend(pulled);
        w.next_rev = next_rev;
    }

    /// The revision of the next event watch `id` has pulled and not sent yet, if any.
    pub fn next_pending_rev(&self, id: WatcherId) -> Option<Rev> {
        self.watches.get(&id).and_then(|w| w.pending.front()).map(|e| e.rev)
    }

    /// Whether watch `id` has anything to send now (an event, or its cancellation).
    pub fn watch_ready(&self, id: WatcherId) -> bool {
        self.watches.get(&id).is_some_and(|w| !w.pending.is_empty() || w.next_rev <= self.rev)
    }

    /// Whether watch `id` has delivered everything up to the current revision (E7's precondition).
    pub fn watch_caught_up(&self, id: WatcherId) -> bool {
        self.watches.get(&id).is_some_and(|w| w.pending.is_empty() && w.next_rev > self.rev)
    }

    /// Send the next thing on watch `id`. An unsynced watcher that fell below the compacted revision is
    /// cancelled (E5). `prev_kv` is looked up now, at `rev - 1` (E6): nil if that was compacted meanwhile.
    pub fn send_next(&mut self, id: WatcherId) -> Option<WatchResponse> {
        let w = self.watches.get(&id)?;
        if w.pending.is_empty() {
            if w.next_rev > self.rev {
                return None;
            }
            if w.next_rev < self.compacted {
                let compacted = self.compacted;
                self.watches.remove(&id);
                return Some(WatchResponse::Cancelled { compacted });
            }
            self.pull(id);
        }
        let entry = self.watches.get_mut(&id)?.pending.pop_front()?;
        let kind = match entry.value() {
            Some(kv) => EventKind::Put(kv),
            None => EventKind::Delete,
        };
        let prev = match Rev(entry.rev.0 - 1) {
            before if before < self.compacted => None,
            before => self.newest(entry.prefix, entry.key, before).and_then(Entry::value),
        };
        Some(WatchResponse::Event(StoreEvent { rev: entry.rev, key: entry.key, kind, prev }))
    }

    /// A progress notification for a caught-up watch (E7): every event up to the returned revision
    /// was delivered.
    pub fn progress(&self, id: WatcherId) -> Option<Rev> {
        let started = self.watches.get(&id).and_then(|w| w.start).is_none_or(|start| start <= self.rev);
        (self.watch_caught_up(id) && started).then_some(self.rev)
    }
}
