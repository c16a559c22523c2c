//! A multi-cluster client manager (seed 004): requests for a cluster look up its informer behind a
//! read/write lock, create it on first use under the write lock, and wait for it to sync (C8).
//!
//! Lock states and waits are explicit so that a checker can see who holds which lock while waiting for
//! what. Clusters are abstract here: an informer syncs in one step while its cluster is reachable; the
//! list/watch path behind a sync is the rest of the model.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use crate::flaw::{Flaw, Flaws};
use crate::types::Millis;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ClusterId(pub u8);

impl fmt::Display for ClusterId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cluster-{}", self.0)
    }
}

/// One request served by the manager.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct RequestId(pub u8);

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "request-{}", self.0)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Informer {
    Syncing,
    Synced,
}

/// Which side of the manager's lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum LockMode {
    Read,
    Write,
}

/// How a request ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Outcome {
    Served,
    /// The bounded wait for sync ran out: the caller gets a clear timeout error.
    TimedOut,
}

/// Where a request is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Step {
    /// Waiting for the read lock.
    WantRead,
    /// Holding the read lock, looking up the informer.
    Lookup,
    /// No informer yet: waiting for the write lock.
    WantWrite,
    /// Holding the write lock, creating the informer.
    Create,
    /// `WaitForCacheSync`: bounded and outside any lock; or, with a flaw, unbounded (C8: no stop
    /// channel, no context), under the write lock (`sync-under-lock`) or outside it
    /// (`sync-wait-unbounded`).
    WaitSync {
        under_lock: bool,
        bounded: bool,
    },
    Done(Outcome),
}

/// A request as a lock and wait tracer sees it ([`ClusterManager::trace`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct RequestTrace {
    pub held: Option<LockMode>,
    pub wait: Option<(ClusterId, Option<Millis>)>,
    /// How it ended; `None` while it is unanswered.
    pub outcome: Option<Outcome>,
}

/// A multi-cluster client manager as the system steps it (C8): the model's [`Manager`], or a user's
/// own under test. Its requests are fixed when it starts, request `i` for cluster `i % clusters`
/// ([`Manager::new`]); the system sees each through [`Self::trace`], as a lock and wait tracer would.
pub trait ClusterManager: fmt::Debug {
    fn cluster_count(&self) -> u8;
    fn request_count(&self) -> u8;
    /// Whether [`Self::step`] would move request `id` (a manager whose requests run on their own,
    /// as a user's goroutines do, has no such step: always false).
    fn can_step(&self, id: RequestId) -> bool;
    fn step(&mut self, id: RequestId);
    /// Whether the sync-wait bound of time ([`Manager::SYNC_WAIT_MS`]) may pass now.
    fn can_pass_time(&self) -> bool;
    fn pass_time(&mut self);
    /// Whether a cluster's first list may be answered now: an informer lists it and it is reachable.
    fn can_sync(&self, cluster: ClusterId) -> bool;
    fn sync(&mut self, cluster: ClusterId);
    fn is_paused(&self, cluster: ClusterId) -> bool;
    fn pause(&mut self, cluster: ClusterId);
    fn resume(&mut self, cluster: ClusterId);
    fn trace(&self, id: RequestId) -> RequestTrace;
    /// Why the manager can take no step any more (a user's that can never go on), if so.
    fn halted(&self) -> Option<String> {
        None
    }
    /// Why the manager's own machinery is gone (a process that died): an error, not a verdict.
    fn gone(&self) -> Option<String> {
        None
    }
}

/// The ids of a manager's requests.
pub fn request_ids(m: &impl ClusterManager) -> impl Iterator<Item = RequestId> {
    (0..m.request_count()).map(RequestId)
}

/// The ids of a manager's clusters.
pub fn cluster_ids(m: &impl ClusterManager) -> impl Iterator<Item = ClusterId> {
    (0..m.cluster_count()).map(ClusterId)
}

/// The cluster request `id` asks for (request `i` asks for cluster `i % clusters`).
pub fn cluster_of(clusters: u8, id: RequestId) -> ClusterId {
    ClusterId(id.0 % clusters.max(1))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ManagerRequest {
    pub cluster: ClusterId,
    pub step: Step,
}

#[derive(Debug, PartialEq, Eq, Hash)]
pub struct Manager {
    readers: u8,
    writer: Option<RequestId>,
    informers: BTreeMap<ClusterId, Informer>,
    paused: BTreeSet<ClusterId>,
    requests: Vec<ManagerRequest>,
    clusters: u8,
    flaws: Flaws,
}
crate::clone_by_field!(Manager { readers, writer, informers, paused, requests, clusters, flaws });

impl Manager {
    /// `requests` requests, request `i` for cluster `i % clusters`, all arriving at once.
    pub fn new(clusters: u8, requests: u8, flaws: Flaws) -> Self {
        let clusters = clusters.max(1);
        let requests = (0..requests)
            .map(|i| ManagerRequest { cluster: cluster_of(clusters, RequestId(i)), step: Step::WantRead })
            .collect();
        Manager {
            readers: 0,
            writer: None,
            informers: BTreeMap::new(),
            paused: BTreeSet::new(),
            requests,
            clusters,
            flaws,
        }
    }

    pub fn requests(&self) -> impl Iterator<Item = (RequestId, &ManagerRequest)> {
        self.requests.iter().enumerate().map(|(i, r)| (RequestId(i as u8), r))
    }

    pub fn request(&self, id: RequestId) -> Option<&ManagerRequest> {
        self.requests.get(usize::from(id.0))
    }

    pub fn clusters(&self) -> impl Iterator<Item = ClusterId> {
        (0..self.clusters).map(ClusterId)
    }

    pub fn informer(&self, cluster: ClusterId) -> Option<Informer> {
        self.informers.get(&cluster).copied()
    }

    pub fn is_paused(&self, cluster: ClusterId) -> bool {
        self.paused.contains(&cluster)
    }

    /// The lock a request holds, if any.
    pub fn held(&self, id: RequestId) -> Option<LockMode> {
        match self.request(id)?.step {
            Step::Lookup => Some(LockMode::Read),
            Step::Create | Step::WaitSync { under_lock: true, .. } => Some(LockMode::Write),
            _ => None,
        }
    }

    /// The wait a request is in, if any: for which cluster's sync, and with which bound (`None`: C8's
    /// `WaitForCacheSync` without a stop channel, which waits forever).
    pub fn wait(&self, id: RequestId) -> Option<(ClusterId, Option<Millis>)> {
        let r = self.request(id)?;
        match r.step {
            Step::WaitSync { bounded: true, .. } => Some((r.cluster, Some(Self::SYNC_WAIT_MS))),
            Step::WaitSync { bounded: false, .. } => Some((r.cluster, None)),
            _ => None,
        }
    }

    /// What a lock and wait tracer sees of a request: the lock it holds, the wait it is in, how it
    /// ended.
    pub fn trace(&self, id: RequestId) -> RequestTrace {
        let outcome = self.request(id).and_then(|r| match r.step {
            Step::Done(o) => Some(o),
            _ => None,
        });
        RequestTrace { held: self.held(id), wait: self.wait(id), outcome }
    }

    /// How long the correct manager waits for a cache to sync before the request times out.
    pub const SYNC_WAIT_MS: Millis = 30_000;

    /// Whether `step(id)` would change anything.
    pub fn can_step(&self, id: RequestId) -> bool {
        let Some(r) = self.request(id) else { return false };
        match r.step {
            Step::WantRead => self.writer.is_none(),
            Step::Lookup | Step::Create => true,
            Step::WantWrite => self.writer.is_none() && self.readers == 0,
            Step::WaitSync { .. } => self.informer(r.cluster) == Some(Informer::Synced),
            Step::Done(_) => false,
        }
    }

    /// Advance one request by one step.
    pub fn step(&mut self, id: RequestId) {
        if !self.can_step(id) {
            return;
        }
        let i = usize::from(id.0);
        let cluster = self.requests[i].cluster;
        let next = match self.requests[i].step {
            Step::WantRead => {
                self.readers += 1;
                Step::Lookup
            }
            Step::Lookup => {
                self.readers -= 1;
                match self.informer(cluster) {
                    Some(Informer::Synced) => Step::Done(Outcome::Served),
                    Some(Informer::Syncing) => self.sync_wait(),
                    None => Step::WantWrite,
                }
            }
            Step::WantWrite => {
                self.writer = Some(id);
                Step::Create
            }
            Step::Create => {
                // Another request may have created it between our read and write lock.
                self.informers.entry(cluster).or_insert(Informer::Syncing);
                if self.flaws.has(Flaw::SyncUnderLock) {
                    // The flaw: wait for the sync while still holding the write lock, with no bound.
                    Step::WaitSync { under_lock: true, bounded: false }
                } else {
                    self.writer = None;
                    self.sync_wait()
                }
            }
            Step::WaitSync { under_lock, .. } => {
                if under_lock {
                    self.writer = None;
                }
                Step::Done(Outcome::Served)
            }
            Step::Done(o) => Step::Done(o),
        };
        self.requests[i].step = next;
    }

    /// The wait for a cache sync outside the lock: bounded by [`Self::SYNC_WAIT_MS`] (C8 with a stop
    /// channel or a context), or, with `sync-wait-unbounded`, not.
    fn sync_wait(&self) -> Step {
        Step::WaitSync { under_lock: false, bounded: !self.flaws.has(Flaw::SyncWaitUnbounded) }
    }

    /// Whether model time may pass for the manager: some request is unanswered and none can take a
    /// step (time passes only while the manager waits; a request that can move takes no time).
    pub fn can_pass_time(&self) -> bool {
        let pending = self.requests().any(|(_, r)| !matches!(r.step, Step::Done(_)));
        pending && self.requests().all(|(id, _)| !self.can_step(id))
    }

    /// [`Self::SYNC_WAIT_MS`] of model time pass: every bounded sync wait runs out (C8 with a stop
    /// channel), a timeout error to its caller. Unbounded waits, and requests behind a lock, go on
    /// waiting.
    pub fn pass_time(&mut self) {
        if !self.can_pass_time() {
            return;
        }
        for r in &mut self.requests {
            if let Step::WaitSync { bounded: true, .. } = r.step {
                r.step = Step::Done(Outcome::TimedOut);
            }
        }
    }

    pub fn can_sync(&self, cluster: ClusterId) -> bool {
        self.informer(cluster) == Some(Informer::Syncing) && !self.is_paused(cluster)
    }

    /// A reachable cluster's informer finishes its first list.
    pub fn sync(&mut self, cluster: ClusterId) {
        if self.can_sync(cluster) {
            self.informers.insert(cluster, Informer::Synced);
        }
    }

    pub fn pause(&mut self, cluster: ClusterId) {
        self.paused.insert(cluster);
    }

    pub fn resume(&mut self, cluster: ClusterId) {
        self.paused.remove(&cluster);
    }
}

impl ClusterManager for Manager {
    fn cluster_count(&self) -> u8 {
        self.clusters
    }
    fn request_count(&self) -> u8 {
        self.requests.len() as u8
    }
    fn can_step(&self, id: RequestId) -> bool {
        Manager::can_step(self, id)
    }
    fn step(&mut self, id: RequestId) {
        Manager::step(self, id)
    }
    fn can_pass_time(&self) -> bool {
        Manager::can_pass_time(self)
    }
    fn pass_time(&mut self) {
        Manager::pass_time(self)
    }
    fn can_sync(&self, cluster: ClusterId) -> bool {
        Manager::can_sync(self, cluster)
    }
    fn sync(&mut self, cluster: ClusterId) {
        Manager::sync(self, cluster)
    }
    fn is_paused(&self, cluster: ClusterId) -> bool {
        Manager::is_paused(self, cluster)
    }
    fn pause(&mut self, cluster: ClusterId) {
        Manager::pause(self, cluster)
    }
    fn resume(&mut self, cluster: ClusterId) {
        Manager::resume(self, cluster)
    }
    fn trace(&self, id: RequestId) -> RequestTrace {
        Manager::trace(self, id)
    }
}
