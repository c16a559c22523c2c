//! The cache a program reads while one driver writes it: cheap concurrent `get`, `list` and consistent
//! snapshots; a relist swaps the whole content at once and frees the old content after the swap, outside
//! the lock, so readers never wait for it.
//!
//! The content is a copy-on-write map behind a read-write lock held only for a pointer swap or one
//! insert: a snapshot is an `Arc` of the map, and the writer copies the map only while a snapshot of it
//! is still held.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::sync::{lock, Arc, Condvar, Mutex, RwLock, RwLockReadGuard};

/// A consistent view: the content and the resourceVersion it is at.
#[derive(Debug)]
pub struct Snapshot<K, V> {
    pub rv: u64,
    pub objects: Arc<BTreeMap<K, Arc<V>>>,
}

impl<K, V> Clone for Snapshot<K, V> {
    fn clone(&self) -> Self {
        Snapshot { rv: self.rv, objects: Arc::clone(&self.objects) }
    }
}

/// A change the writer makes to one key.
#[derive(Debug)]
pub enum Change<K, V> {
    Upsert(K, Arc<V>),
    Remove(K),
}

/// The shared cache, generic over the key and the object (a model object, a `ConfigMap`, ...).
#[derive(Debug)]
pub struct SharedCache<K, V> {
    content: RwLock<Snapshot<K, V>>,
    ready: Readiness,
}

impl<K: Ord + Clone, V> Default for SharedCache<K, V> {
    fn default() -> Self {
        SharedCache {
            content: RwLock::new(Snapshot { rv: 0, objects: Arc::new(BTreeMap::new()) }),
            ready: Readiness::default(),
        }
    }
}

impl<K: Ord + Clone, V> SharedCache<K, V> {
    pub fn new() -> Self {
        Self::default()
    }

    fn read(&self) -> RwLockReadGuard<'_, Snapshot<K, V>> {
        self.content.read().unwrap_or_else(|e| e.into_inner())
    }

    /// The object at `key`, looked up by any borrowed form of the key.
    pub fn get<Q: Ord + ?Sized>(&self, key: &Q) -> Option<Arc<V>>
    where
        K: std::borrow::Borrow<Q>,
    {
        self.read().objects.get(key).cloned()
    }

    /// The content and its RV, consistent with each other; O(1).
    pub fn snapshot(&self) -> Snapshot<K, V> {
        self.read().clone()
    }

    pub fn list(&self) -> Vec<Arc<V>> {
        self.snapshot().objects.values().cloned().collect()
    }

    pub fn len(&self) -> usize {
        self.read().objects.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Apply changes and move to `rv`, as one step readers see whole or not at all.
    pub fn apply(&self, changes: impl IntoIterator<Item = Change<K, V>>, rv: u64) {
        let replaced: Vec<Arc<V>> = self.edit(|map, at| {
            *at = rv;
            changes
                .into_iter()
                .filter_map(|change| match change {
                    Change::Upsert(k, v) => map.insert(k, v),
                    Change::Remove(k) => map.remove(&k),
                })
                .collect()
        });
        drop(replaced);
    }

    /// Edit the content and its RV under the write lock, as one step readers see whole or not at all.
    /// Whatever `edit` returns is dropped by the caller, after the lock: return replaced objects to free
    /// them outside it.
    pub fn edit<R>(&self, edit: impl FnOnce(&mut BTreeMap<K, Arc<V>>, &mut u64) -> R) -> R {
        let mut w = self.content.write().unwrap_or_else(|e| e.into_inner());
        let Snapshot { rv, objects } = &mut *w;
        edit(Arc::make_mut_or_clone(objects), rv)
    }

    /// Move to `rv` without changing the content (a BOOKMARK).
    pub fn set_rv(&self, rv: u64) {
        self.content.write().unwrap_or_else(|e| e.into_inner()).rv = rv;
    }

    /// Replace the whole content (a relist): built by the caller, swapped in under the lock, the old
    /// content dropped after the lock is released.
    pub fn replace(&self, objects: BTreeMap<K, Arc<V>>, rv: u64) {
        let old = {
            let mut w = self.content.write().unwrap_or_else(|e| e.into_inner());
            std::mem::replace(&mut *w, Snapshot { rv, objects: Arc::new(objects) })
        };
        drop(old);
    }

    pub fn readiness(&self) -> &Readiness {
        &self.ready
    }
}

/// Copy-on-write for the live layer's `Arc`, std's or loom's.
trait MakeMut<T> {
    fn make_mut_or_clone(this: &mut Self) -> &mut T;
}

impl<K: Ord + Clone, V> MakeMut<BTreeMap<K, Arc<V>>> for Arc<BTreeMap<K, Arc<V>>> {
    fn make_mut_or_clone(this: &mut Self) -> &mut BTreeMap<K, Arc<V>> {
        if Arc::get_mut(this).is_none() {
            *this = Arc::new((**this).clone());
        }
        Arc::get_mut(this).expect("just made unique")
    }
}

/// "Has the first full list landed?": set once, every waiter woken, however many and in whatever order.
/// Threads wait with [`Readiness::wait`], tasks with `wait_synced`.
#[derive(Debug)]
pub struct Readiness {
    synced: Mutex<bool>,
    changed: Condvar,
    #[cfg(not(loom))]
    tasks: tokio::sync::watch::Sender<bool>,
}

impl Default for Readiness {
    fn default() -> Self {
        Readiness {
            synced: Mutex::new(false),
            changed: Condvar::new(),
            #[cfg(not(loom))]
            tasks: tokio::sync::watch::Sender::new(false),
        }
    }
}

impl Readiness {
    pub fn mark_synced(&self) {
        *lock(&self.synced) = true;
        self.changed.notify_all();
        #[cfg(not(loom))]
        self.tasks.send_replace(true);
    }

    /// Wait (as a task) until synced, or until `timeout` passes (`None`: no bound). Returns whether it
    /// synced.
    #[cfg(not(loom))]
    pub async fn wait_synced(&self, timeout: Option<Duration>) -> bool {
        let mut rx = self.tasks.subscribe();
        let synced = rx.wait_for(|s| *s);
        match timeout {
            None => synced.await.is_ok(),
            Some(t) => matches!(tokio::time::timeout(t, synced).await, Ok(Ok(_))),
        }
    }

    pub fn is_synced(&self) -> bool {
        *lock(&self.synced)
    }

    /// Block until synced, or until `timeout` passes (`None`: no bound). Returns whether it synced.
    pub fn wait(&self, timeout: Option<Duration>) -> bool {
        let mut synced = lock(&self.synced);
        let deadline = timeout.map(|t| std::time::Instant::now() + t);
        while !*synced {
            match deadline {
                None => synced = self.changed.wait(synced).unwrap_or_else(|e| e.into_inner()),
                Some(d) => {
                    let left = d.saturating_duration_since(std::time::Instant::now());
                    if left.is_zero() {
                        return false;
                    }
                    synced = self.changed.wait_timeout(synced, left).unwrap_or_else(|e| e.into_inner()).0;
                }
            }
        }
        true
    }
}
