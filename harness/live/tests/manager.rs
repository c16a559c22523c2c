//! The client manager with real threads: an unreachable cluster times out its own callers only; the
//! flawed managers hang every other cluster's requests (sync-under-lock) or the caller's own for as long
//! as its cluster is unreachable (sync-wait-unbounded), and these tests catch both.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use listwatch_live::manager::{ClientManager, ClusterCache, ManagerError};
use listwatch_live::shared_cache::Readiness;
use listwatch_model::{Flaw, Flaws};

#[derive(Debug, Default)]
struct Cluster {
    ready: Readiness,
}

impl ClusterCache for Cluster {
    fn readiness(&self) -> &Readiness {
        &self.ready
    }
}

/// Clusters whose name starts with "down" never sync until released; the others sync at once.
fn manager(flaws: Flaws, created: Arc<AtomicUsize>, down: Arc<Cluster>) -> Arc<ClientManager<Cluster>> {
    Arc::new(ClientManager::new(
        move |name| {
            created.fetch_add(1, Ordering::SeqCst);
            if name.starts_with("down") {
                Arc::clone(&down)
            } else {
                let c = Arc::new(Cluster::default());
                c.ready.mark_synced();
                c
            }
        },
        Duration::from_millis(300),
        flaws,
    ))
}

/// Ask for "down-a" on one thread, then for "b" on another: does "b" get served within `bound`?
fn b_served_while_a_is_stuck(flaws: Flaws, bound: Duration) -> (bool, Result<(), ManagerError>) {
    let down = Arc::new(Cluster::default());
    let m = manager(flaws, Arc::new(AtomicUsize::new(0)), Arc::clone(&down));
    let (m1, m2) = (Arc::clone(&m), Arc::clone(&m));
    let a = std::thread::spawn(move || m1.get("down-a").map(|_| ()));
    std::thread::sleep(Duration::from_millis(50));
    let (tx, rx) = mpsc::channel();
    let b = std::thread::spawn(move || {
        let _ = tx.send(m2.get("b").is_ok());
    });
    let served = rx.recv_timeout(bound).unwrap_or(false);
    let a_result = if flaws.has(Flaw::SyncUnderLock) {
        // The flawed request waits with no bound: let it finish by bringing the cluster back.
        down.ready.mark_synced();
        a.join().expect("a's thread")
    } else {
        let result = a.join().expect("a's thread");
        down.ready.mark_synced();
        result
    };
    b.join().expect("b's thread");
    (served, a_result)
}

#[test]
fn an_unreachable_cluster_times_out_its_callers_and_nobody_else() {
    let (served, a) = b_served_while_a_is_stuck(Flaws::NONE, Duration::from_secs(5));
    assert!(served, "cluster b was not served while a was unreachable");
    assert_eq!(
        a,
        Err(ManagerError::SyncTimeout { cluster: "down-a".into(), waited: Duration::from_millis(300) })
    );
}

#[test]
fn the_flawed_manager_hangs_other_clusters_and_is_caught() {
    let (served, _) =
        b_served_while_a_is_stuck(Flaws::only(Flaw::SyncUnderLock), Duration::from_millis(1000));
    assert!(!served, "sync-under-lock should hang cluster b behind a's wait under the write lock");
}

/// controller-runtime#1219: with no bound on the wait, though outside the lock, cluster b is served
/// and the request for the unreachable cluster is not answered at all until it comes back.
#[test]
fn the_unbounded_wait_hangs_only_the_request_that_asked() {
    let down = Arc::new(Cluster::default());
    let m = manager(Flaws::only(Flaw::SyncWaitUnbounded), Arc::new(AtomicUsize::new(0)), Arc::clone(&down));
    let (m1, m2) = (Arc::clone(&m), Arc::clone(&m));
    let (tx, answered) = mpsc::channel();
    let a = std::thread::spawn(move || {
        let _ = tx.send(m1.get("down-a").is_ok());
    });
    assert!(std::thread::spawn(move || m2.get("b").is_ok()).join().expect("b's thread"), "b is served");
    // Three times the correct manager's 300 ms bound, and no answer.
    assert!(answered.recv_timeout(Duration::from_millis(900)).is_err(), "a was answered");
    down.ready.mark_synced();
    assert_eq!(
        answered.recv_timeout(Duration::from_secs(5)),
        Ok(true),
        "a is served once the cluster is back"
    );
    a.join().expect("a's thread");
}

#[test]
fn concurrent_first_requests_create_one_cache() {
    let created = Arc::new(AtomicUsize::new(0));
    let m = manager(Flaws::NONE, Arc::clone(&created), Arc::new(Cluster::default()));
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let m = Arc::clone(&m);
            std::thread::spawn(move || m.get("c").map(|c| Arc::as_ptr(&c) as usize))
        })
        .collect();
    let caches: Vec<usize> =
        threads.into_iter().map(|t| t.join().expect("thread").expect("served")).collect();
    assert!(caches.windows(2).all(|w| w[0] == w[1]), "one cache for one cluster");
    assert_eq!(created.load(Ordering::SeqCst), 1);
    assert_eq!(m.len(), 1);
}
