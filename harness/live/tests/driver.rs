//! The live driver under tokio's paused clock: the model reflector's decisions carried out for real,
//! against the in-process server.

use std::time::Duration;

use listwatch_live::driver::{Driver, Record};
use listwatch_live::inprocess::{Faults, InProcessServer};
use listwatch_model::{ApiError, Flaws, Key, ListRv, Notification, ReflectorConfig, Request};

fn spawn(
    server: &InProcessServer,
    config: ReflectorConfig,
) -> (
    tokio::task::JoinHandle<Driver<listwatch_live::inprocess::InProcessClient>>,
    std::sync::Arc<listwatch_live::driver::LiveCache>,
) {
    let mut driver = Driver::new(server.client(), config, Flaws::NONE);
    let cache = driver.cache();
    let handle = tokio::spawn(async move {
        // Bounded so that the driver can be inspected: it would otherwise watch for ever.
        let _ = tokio::time::timeout(Duration::from_secs(3600), driver.run()).await;
        driver
    });
    (handle, cache)
}

fn sent(records: &[Record]) -> Vec<Request> {
    records.iter().filter_map(|r| if let Record::Sent(q) = r { Some(*q) } else { None }).collect()
}

#[tokio::test(start_paused = true)]
async fn a_watch_timeout_rewatches_from_the_last_rv_without_a_list() {
    let server = InProcessServer::new(8);
    server.put(Key(0));
    let config = ReflectorConfig { watch_timeout_secs: 300, ..ReflectorConfig::default() };
    let (handle, cache) = spawn(&server, config);
    assert!(cache.readiness().wait_synced(Some(Duration::from_secs(5))).await);
    server.put(Key(1));
    // Ten server-side watch timeouts (A9) and client-side timeouts go by.
    tokio::time::sleep(Duration::from_secs(3000)).await;
    server.put(Key(2));
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(server.requests().lists, 1, "only the first LIST");
    assert!(server.requests().watches >= 10, "{:?}", server.requests());
    assert_eq!(cache.len(), 3);
    let driver = handle.await.expect("the driver task");
    let requests = sent(driver.records());
    assert!(requests[1..].iter().all(|r| !r.is_list()), "{requests:?}");
}

#[tokio::test(start_paused = true)]
async fn a_server_that_closes_every_watch_at_once_gets_backoff_not_a_storm() {
    let server = InProcessServer::new(8);
    server.put(Key(0));
    server.set_faults(Faults { close_every_watch: true, ..Faults::default() });
    let (_handle, cache) = spawn(&server, ReflectorConfig::default());
    assert!(cache.readiness().wait_synced(Some(Duration::from_secs(5))).await);
    let before = server.requests();
    tokio::time::sleep(Duration::from_secs(60)).await;
    let after = server.requests();
    let per_minute = (after.lists + after.watches) - (before.lists + before.watches);
    // C1/C5: each very short watch is an error; backoff 0.8 s doubling to 30 s: a handful per minute.
    assert!(per_minute <= 16, "{per_minute} requests in one virtual minute");
    assert!(per_minute >= 2, "the reflector kept trying ({per_minute})");
}

#[tokio::test(start_paused = true)]
async fn a_410_relists_once_then_watches_again() {
    let server = InProcessServer::new(8);
    server.put(Key(0));
    let (handle, cache) = spawn(&server, ReflectorConfig::default());
    assert!(cache.readiness().wait_synced(Some(Duration::from_secs(5))).await);
    tokio::time::sleep(Duration::from_secs(1)).await;
    server.fail_watches(ApiError::Expired);
    server.put(Key(1));
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert_eq!(server.requests().lists, 2, "the first LIST and one relist");
    assert_eq!(cache.len(), 2);
    let driver = handle.await.expect("the driver task");
    let lists: Vec<Request> = sent(driver.records()).into_iter().filter(Request::is_list).collect();
    assert!(matches!(lists[1], Request::List { rv: ListRv::NotOlderThan(_) }), "{lists:?}");
}

#[tokio::test(start_paused = true)]
async fn an_unreachable_cluster_makes_wait_synced_return_its_timeout() {
    let server = InProcessServer::new(8);
    server.set_faults(Faults { unreachable: true, ..Faults::default() });
    let (_handle, cache) = spawn(&server, ReflectorConfig::default());
    let started = tokio::time::Instant::now();
    assert!(!cache.readiness().wait_synced(Some(Duration::from_secs(10))).await);
    assert_eq!(started.elapsed(), Duration::from_secs(10));
    assert!(cache.is_empty());
}

#[tokio::test(start_paused = true)]
async fn every_waiter_wakes_at_the_first_list() {
    let server = InProcessServer::new(8);
    server.put(Key(0));
    let mut driver = Driver::new(server.client(), ReflectorConfig::default(), Flaws::NONE);
    let cache = driver.cache();
    let waiters: Vec<_> = (0..8)
        .map(|_| {
            let cache = cache.clone();
            tokio::spawn(async move { cache.readiness().wait_synced(None).await })
        })
        .collect();
    tokio::spawn(async move { tokio::time::timeout(Duration::from_secs(10), driver.run()).await });
    for w in waiters {
        assert!(w.await.expect("a waiter"));
    }
}

/// End to end: writes, deletes, compactions and faults against the live driver, judged on what the live
/// cache showed: its RV never goes back, a deleted incarnation never comes back, and after the faults it
/// equals etcd.
#[tokio::test(start_paused = true)]
async fn end_to_end_with_faults_the_live_cache_converges() {
    let server = InProcessServer::new(3);
    let (handle, cache) = spawn(&server, ReflectorConfig::default());
    let mut x: u32 = 12345;
    for round in 0..200u32 {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        let key = Key((x >> 16) as u8 % 5);
        match (x >> 8) % 10 {
            0..=5 => {
                server.put(key);
            }
            6 | 7 => {
                server.delete(key);
            }
            8 if round % 7 == 0 => server.disconnect_all(),
            8 => server.compact(),
            _ if round % 11 == 0 => server.fail_watches(ApiError::InternalError),
            _ => server.set_faults(Faults { refuse: vec![ApiError::TooManyRequests], ..Faults::default() }),
        }
        if round == 100 {
            server.fail_watches(ApiError::Expired);
        }
        tokio::time::sleep(Duration::from_millis(u64::from((x >> 4) % 3000))).await;
    }
    server.set_faults(Faults::default());
    tokio::time::sleep(Duration::from_secs(600)).await;
    let (rev, truth) = server.truth();
    let snapshot = cache.snapshot();
    let live: Vec<_> = snapshot.objects.values().map(|o| **o).collect();
    assert_eq!(live, truth, "the live cache equals etcd at {rev}");
    let driver = handle.await.expect("the driver task");
    let mut last = 0;
    let mut deleted = std::collections::BTreeSet::new();
    for r in driver.records() {
        match r {
            Record::Rv(rv) => {
                assert!(*rv >= last, "RV went back from {last} to {rv}");
                last = *rv;
            }
            Record::Notified(Notification::Delete(o) | Notification::DeletedFinalStateUnknown(o)) => {
                deleted.insert(o.uid);
            }
            Record::Notified(Notification::Add(o) | Notification::Update { new: o, .. }) => {
                assert!(!deleted.contains(&o.uid), "{o} came back after its delete");
            }
            Record::Sent(_) | Record::Told => {}
        }
    }
    let requests = server.requests();
    assert!(requests.lists >= 2, "the 410 made it relist: {requests:?}");
    assert!(requests.watches >= 10, "the faults broke many watches: {requests:?}");
}
