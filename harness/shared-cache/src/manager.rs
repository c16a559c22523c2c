//! A process that serves many clusters keeps one cache per cluster, created on first use (seed 004).
//!
//! Creating a cluster's cache takes the registry's write lock only to insert it; waiting for its first
//! sync happens outside every lock and is bounded, so an unreachable cluster times out its own callers
//! and nobody else's. Two first requests for one cluster create one cache. With the catalogue flaw
//! `sync-under-lock` the wait happens under the write lock with no bound, as the bug had it.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use listwatch_model::{Flaw, Flaws};

use crate::shared_cache::Readiness;
use crate::sync::{Arc, RwLock};

/// What a cluster's cache must offer the manager.
pub trait ClusterCache: Send + Sync {
    fn readiness(&self) -> &Readiness;
}

/// A request the manager could not serve.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ManagerError {
    /// The cluster's cache did not sync within the bound.
    SyncTimeout { cluster: String, waited: Duration },
}

impl fmt::Display for ManagerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ManagerError::SyncTimeout { cluster, waited } => {
                write!(f, "cluster {cluster}: cache not synced after {} ms", waited.as_millis())
            }
        }
    }
}

impl std::error::Error for ManagerError {}

type Factory<C> = Box<dyn Fn(&str) -> Arc<C> + Send + Sync>;

/// The registry of per-cluster caches.
pub struct ClientManager<C> {
    clusters: RwLock<BTreeMap<String, Arc<C>>>,
    /// Starts a cluster's cache (its informer) and returns at once; the cache syncs on its own.
    start: Factory<C>,
    sync_timeout: Duration,
    flaws: Flaws,
}

impl<C> fmt::Debug for ClientManager<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientManager").field("sync_timeout", &self.sync_timeout).finish_non_exhaustive()
    }
}

impl<C: ClusterCache> ClientManager<C> {
    pub fn new(
        start: impl Fn(&str) -> Arc<C> + Send + Sync + 'static,
        sync_timeout: Duration,
        flaws: Flaws,
    ) -> Self {
        ClientManager { clusters: RwLock::new(BTreeMap::new()), start: Box::new(start), sync_timeout, flaws }
    }

    /// The synced cache of `cluster`, created on first use.
    pub fn get(&self, cluster: &str) -> Result<Arc<C>, ManagerError> {
        let known = self.clusters.read().unwrap_or_else(|e| e.into_inner()).get(cluster).cloned();
        let cache = match known {
            Some(c) => c,
            None => {
                let mut all = self.clusters.write().unwrap_or_else(|e| e.into_inner());
                let cache =
                    Arc::clone(all.entry(cluster.to_string()).or_insert_with(|| (self.start)(cluster)));
                if self.flaws.has(Flaw::SyncUnderLock) {
                    // The flaw: wait for the new cache's sync, with no bound, holding the write lock.
                    cache.readiness().wait(None);
                }
                cache
            }
        };
        // The flaw sync-wait-unbounded: no bound on the wait, though it is outside the lock.
        let bound = (!self.flaws.has(Flaw::SyncWaitUnbounded)).then_some(self.sync_timeout);
        if cache.readiness().wait(bound) {
            Ok(cache)
        } else {
            Err(ManagerError::SyncTimeout { cluster: cluster.to_string(), waited: self.sync_timeout })
        }
    }

    /// How many clusters have a cache.
    pub fn len(&self) -> usize {
        self.clusters.read().unwrap_or_else(|e| e.into_inner()).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
