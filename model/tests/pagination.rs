//! SEMANTICS A13: paginated LISTs on the server, and client-go's pager in the reflector.

mod support;

use listwatch_model::server::ApiServer;
use listwatch_model::store::{Prefix, Store, TombstonePolicy};
use listwatch_model::{
    Action, ApiError, ClientId, Config, Continue, Fault, FaultKind, FaultKinds, Flaws, Key, ListRv, Message,
    ReflectorConfig, Request, Rev, ServerId, Timer,
};
use support::{Story, R, S0};

const C: ClientId = ClientId(0);

fn page(out: Vec<(ClientId, Message)>) -> Result<(Rev, Vec<Key>, Option<Continue>), ApiError> {
    match out.into_iter().next() {
        Some((_, Message::List(result))) => {
            result.map(|l| (l.rv, l.items.iter().map(|o| o.key).collect(), l.cont))
        }
        other => panic!("expected a LIST answer, got {other:?}"),
    }
}

#[test]
fn a13_pages_are_pinned_to_the_first_pages_rv_and_a_compacted_continue_is_410() {
    let mut store = Store::new(TombstonePolicy::DropAtCompaction, None);
    for k in 0..3 {
        store.put(Prefix::Watched, Key(k)); // 1, 2, 3
    }
    let mut server = ApiServer::start(ServerId(0), &mut store, 4, Flaws::NONE);
    let (rv, keys, cont) = page(server.list_page(C, ListRv::Consistent, 2, None, &store)).unwrap();
    assert_eq!((rv, keys), (Rev(3), vec![Key(0), Key(1)]));
    let cont = cont.expect("more follow");
    assert_eq!(cont, Continue { rv: Rev(3), after: Key(1) });
    // A write between pages does not show: the next page is an exact read at 3.
    store.delete(Prefix::Watched, Key(2)).unwrap(); // 4
    let (rv, keys, more) = page(server.list_page(C, ListRv::Consistent, 2, Some(cont), &store)).unwrap();
    assert_eq!((rv, keys, more), (Rev(3), vec![Key(2)], None), "the last page, at the first page's RV");
    // Compacted past the first page's RV: "the provided continue parameter is too old".
    store.compact(Rev(4)).unwrap();
    assert_eq!(page(server.list_page(C, ListRv::Consistent, 2, Some(cont), &store)), Err(ApiError::Expired));
    // `rv="0"` is served whole from the cache, the limit ignored.
    let (_, keys, more) = page(server.list_page(C, ListRv::Any, 1, None, &store)).unwrap();
    assert_eq!(
        (keys.len(), more),
        (3, None),
        "the cache has not ingested the delete yet; all three, one page"
    );
}

/// client-go's pager: pages are kept apart until the last one, then one `Replace`; a continue that gets
/// 410 falls back to one whole LIST at the requested RV, at once.
#[test]
fn a13_the_reflector_pages_a_relist_and_falls_back_to_a_whole_list_on_410() {
    let config = Config {
        keys: 2,
        writes: 3,
        compactions: 1,
        faults: 1,
        fault_kinds: FaultKinds::NONE.with(FaultKind::InternalError),
        cache_window: 4,
        reflector: ReflectorConfig { page_size: Some(1), ..ReflectorConfig::default() },
        ..Config::default()
    };
    let mut s = Story::new(config);
    s.steps(&[Action::Create(Key(0)), Action::Create(Key(1))]).ingest(S0);
    s.serve(R, S0); // the first LIST, rv="0": whole, from the cache
    assert_eq!(s.sys.view(R).cache.len(), 2);
    s.step(Action::Route(R, S0)).fire_until(R, Timer::WatchAged);
    s.step(Action::Fault(Fault::WatchError(R, ApiError::InternalError))).deliver(R);
    s.fire_until(R, Timer::Backoff); // the relist, in pages
    assert_eq!(
        s.sent(R).last(),
        Some(&Request::ListPage { rv: ListRv::NotOlderThan(Rev(2)), limit: 1, cont: None })
    );
    s.serve(R, S0);
    let cont = Continue { rv: Rev(2), after: Key(0) };
    assert_eq!(
        s.sent(R).last(),
        // A continue names no RV of its own (`rv=""`): the token carries the first page's.
        Some(&Request::ListPage { rv: ListRv::Consistent, limit: 1, cont: Some(cont) })
    );
    assert!(s.sys.view(R).cache.len() == 2, "the first page replaced nothing yet");
    s.step(Action::Update(Key(1))).ingest(S0).step(Action::Compact(Rev(3)));
    s.serve(R, S0); // the continue at 2 is too old now
    assert_eq!(
        s.sent(R).last(),
        Some(&Request::List { rv: ListRv::NotOlderThan(Rev(2)) }),
        "the pager's fallback"
    );
    s.serve(R, S0);
    let log: Vec<String> = s.log.iter().map(ToString::to_string).collect();
    assert_eq!(s.sys.view(R).resource_version, Rev(3), "{log:#?}");
    assert_eq!(s.sys.view(R).cache.objects().map(|o| o.rv).collect::<Vec<_>>(), vec![Rev(1), Rev(3)]);
}

#[test]
fn a13_a_paginated_not_older_than_list_is_served_by_the_cache_at_its_rv() {
    // Found by `conformance apiserver`: the real cacher serves it (pages pinned to the cache's RV, a
    // wait for a cache behind X), where the model read etcd at its current revision.
    let mut store = Store::new(TombstonePolicy::DropAtCompaction, None);
    let mut server = ApiServer::start(ServerId(0), &mut store, 4, Flaws::NONE);
    store.put(Prefix::Watched, Key(0)); // 1
    store.put(Prefix::Watched, Key(1)); // 2
    while server.can_ingest(&store) {
        server.ingest(&mut store);
    }
    store.put(Prefix::Other, Key(0)); // 3: etcd moves, the cache stays at 2
    let (rv, keys, cont) = page(server.list_page(C, ListRv::NotOlderThan(Rev(1)), 1, None, &store)).unwrap();
    assert_eq!((rv, keys, cont), (Rev(2), vec![Key(0)], Some(Continue { rv: Rev(2), after: Key(0) })));
    assert_eq!(server.list_page(C, ListRv::NotOlderThan(Rev(3)), 1, None, &store), vec![], "waits");
    assert_eq!(page(server.list_wait_expired(C)), Err(ApiError::TooLargeResourceVersion));
}
