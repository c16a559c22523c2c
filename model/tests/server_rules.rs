//! SEMANTICS A1–A15: the API server and its watch cache, one test (or more) per rule.

use listwatch_model::server::ApiServer;
use listwatch_model::store::{Prefix, Store, TombstonePolicy};
use listwatch_model::{
    Action, ApiError, ClientId, Config, Fault, FaultKind, FaultKinds, Flaw, Flaws, Key, ListRv, Message,
    Object, Rev, ServerId, System, WatchEnd, WatchEvent, WatchFrom,
};

const A: Key = Key(0);
const B: Key = Key(1);
const C: ClientId = ClientId(0);

fn setup(window: u8, flaws: Flaws) -> (Store, ApiServer) {
    let mut store = Store::new(TombstonePolicy::DropAtCompaction, None);
    let server = ApiServer::start(ServerId(0), &mut store, window, flaws);
    (store, server)
}

/// Let the cache take every event etcd has for it.
fn catch_up(server: &mut ApiServer, store: &mut Store) -> Vec<(ClientId, Message)> {
    let mut all = Vec::new();
    while server.can_ingest(store) {
        all.extend(server.ingest(store).1);
    }
    all
}

fn events(out: &[(ClientId, Message)]) -> Vec<WatchEvent> {
    out.iter()
        .filter_map(|(_, m)| match m {
            Message::Event(e) => Some(*e),
            _ => None,
        })
        .collect()
}

fn list_ok(out: &[(ClientId, Message)]) -> (Rev, Vec<(Key, Rev)>) {
    match out {
        [(_, Message::List(Ok(l)))] => (l.rv, l.items.iter().map(|o| (o.key, o.rv)).collect()),
        other => panic!("expected one successful LIST, got {other:?}"),
    }
}

#[test]
fn a1_object_rv_is_mod_rev_and_list_rv_is_read_revision() {
    let (mut store, mut server) = setup(4, Flaws::NONE);
    store.put(Prefix::Watched, A); // 1
    store.put(Prefix::Watched, B); // 2
    store.put(Prefix::Watched, A); // 3
    let (rv, items) = list_ok(&server.list(C, ListRv::Consistent, &store));
    assert_eq!(rv, Rev(3));
    assert_eq!(items, vec![(A, Rev(3)), (B, Rev(2))]);
}

#[test]
fn a2_list_variants() {
    let (mut store, mut server) = setup(4, Flaws::NONE);
    store.put(Prefix::Watched, A); // 1, not yet in the cache
    store.put(Prefix::Watched, B); // 2

    // rv="0": whatever the cache has, here still empty at RV 0.
    assert_eq!(list_ok(&server.list(C, ListRv::Any, &store)), (Rev(0), vec![]));
    // rv="": consistent, from etcd.
    assert_eq!(list_ok(&server.list(C, ListRv::Consistent, &store)).0, Rev(2));
    // rv=2 NotOlderThan: waits for the cache, answered when it gets there.
    assert!(server.list(C, ListRv::NotOlderThan(Rev(2)), &store).is_empty());
    let out = catch_up(&mut server, &mut store);
    assert_eq!(list_ok(&out), (Rev(2), vec![(A, Rev(1)), (B, Rev(2))]));
    // rv=9: never reached in time: 504 Too large resource version.
    assert!(server.list(C, ListRv::NotOlderThan(Rev(9)), &store).is_empty());
    assert_eq!(server.list_wait_expired(C), vec![(C, Message::List(Err(ApiError::TooLargeResourceVersion)))]);
    // Exact below the compacted revision: 410.
    store.compact(Rev(2)).unwrap();
    assert_eq!(
        server.list(C, ListRv::Exact(Rev(1)), &store),
        vec![(C, Message::List(Err(ApiError::Expired)))]
    );
}

#[test]
fn a3_watch_is_exclusive_ordered_and_from_now_starts_with_synthetic_added() {
    let (mut store, mut server) = setup(8, Flaws::NONE);
    store.put(Prefix::Watched, A); // 1
    store.put(Prefix::Watched, B); // 2
    store.put(Prefix::Watched, A); // 3
    catch_up(&mut server, &mut store);
    let rvs: Vec<Rev> =
        events(&server.watch(C, WatchFrom::Rv(Rev(1)), false)).iter().filter_map(|e| e.rv()).collect();
    assert_eq!(rvs, vec![Rev(2), Rev(3)], "exclusive of 1, in order");

    let d = ClientId(1);
    let now = events(&server.watch(d, WatchFrom::Now, false));
    assert_eq!(now.len(), 2);
    assert!(now.iter().all(|e| matches!(e, WatchEvent::Added(_))));

    // A watch from a future RV waits; it does not error, and skips events up to its RV.
    let f = ClientId(2);
    assert!(server.watch(f, WatchFrom::Rv(Rev(4)), false).is_empty());
    store.put(Prefix::Watched, B); // 4
    store.put(Prefix::Watched, B); // 5
    let out = catch_up(&mut server, &mut store);
    let to_f: Vec<Rev> = out
        .iter()
        .filter(|(c, _)| *c == f)
        .filter_map(|(_, m)| match m {
            Message::Event(e) => e.rv(),
            _ => None,
        })
        .collect();
    assert_eq!(to_f, vec![Rev(5)]);
}

#[test]
fn a4_the_threshold_is_the_oldest_buffered_event_minus_one() {
    let (mut store, mut server) = setup(3, Flaws::NONE);
    store.put(Prefix::Watched, A); // 1
    store.put(Prefix::Other, B); // 2: no event for the watched resource
    store.put(Prefix::Other, B); // 3
    store.put(Prefix::Watched, A); // 4
    catch_up(&mut server, &mut store);
    assert_eq!(server.cache().floor(), Rev(0), "nothing evicted: oldest is the list RV + 1");
    assert!(server.evict());
    // oldest = 4: a watch from 3 is served, from 2 (below oldest - 1) is too old, although no event
    // between 2 and 4 is missing: upstream judges by what is buffered.
    assert_eq!(server.cache().floor(), Rev(3));
    assert!(events(&server.watch(C, WatchFrom::Rv(Rev(3)), false))
        .contains(&WatchEvent::Modified(server.cache().objects().next().copied().unwrap())));
    server.forget(C);
    assert!(matches!(
        events(&server.watch(C, WatchFrom::Rv(Rev(2)), false))[..],
        [WatchEvent::Error(ApiError::Expired)]
    ));
    server.forget(C);
    assert!(server.evict());
    assert_eq!(server.cache().floor(), Rev(4), "an empty window: oldest is the cache's RV + 1");
    assert!(events(&server.watch(C, WatchFrom::Rv(Rev(4)), false)).is_empty());
}

#[test]
fn a4_too_old_is_an_error_event_then_close() {
    let (mut store, mut server) = setup(1, Flaws::NONE);
    store.put(Prefix::Watched, A); // 1
    store.put(Prefix::Watched, A); // 2: evicts 1 from a window of one
    catch_up(&mut server, &mut store);
    assert_eq!(server.cache().floor(), Rev(1));
    assert_eq!(
        server.watch(C, WatchFrom::Rv(Rev(0)), false),
        vec![(C, Message::Event(WatchEvent::Error(ApiError::Expired))), (C, Message::End(WatchEnd::Closed))]
    );
    assert!(server.watches().is_empty());
}

#[test]
fn a5_window_is_bounded_and_a_cache_relist_closes_watches() {
    let (mut store, mut server) = setup(2, Flaws::NONE);
    for _ in 0..3 {
        store.put(Prefix::Watched, A);
    }
    catch_up(&mut server, &mut store);
    assert_eq!(server.cache().window().count(), 2);
    server.watch(C, WatchFrom::Rv(Rev(3)), false);
    store.put(Prefix::Watched, B); // 4, not yet ingested
    let out = server.relist_cache(&mut store);
    assert_eq!(out, vec![(C, Message::End(WatchEnd::Closed))]);
    assert_eq!((server.cache().rv(), server.cache().floor()), (Rev(4), Rev(4)));
    // The client re-watches from 3, older than the new window: 410.
    assert!(matches!(
        events(&server.watch(C, WatchFrom::Rv(Rev(3)), false))[..],
        [WatchEvent::Error(ApiError::Expired)]
    ));
}

#[test]
fn a6_delete_carries_previous_content_stamped_with_deletion_rv() {
    for (flaws, expected_rv) in [(Flaws::NONE, Rev(3)), (Flaws::only(Flaw::StaleDeleteRv), Rev(2))] {
        let (mut store, mut server) = setup(4, flaws);
        store.put(Prefix::Watched, A); // 1
        store.put(Prefix::Watched, A); // 2
        server.watch(C, WatchFrom::Rv(Rev(0)), false);
        store.delete(Prefix::Watched, A).unwrap(); // 3
        let out = catch_up(&mut server, &mut store);
        match events(&out).last() {
            Some(WatchEvent::Deleted(o)) => {
                assert_eq!((o.version, o.rv), (2, expected_rv), "{flaws}");
            }
            other => panic!("expected a DELETED, got {other:?}"),
        }
    }
}

#[test]
fn a7_nil_prev_kv_relists_the_cache_instead_of_dropping_the_delete() {
    for flaws in [Flaws::NONE, Flaws::only(Flaw::NilPrevKvDropped)] {
        let (mut store, mut server) = setup(4, flaws);
        store.put(Prefix::Watched, A); // 1
        catch_up(&mut server, &mut store);
        server.watch(C, WatchFrom::Rv(Rev(1)), false);
        store.delete(Prefix::Watched, A).unwrap(); // 2, queued on etcd's watch
        store.compact(Rev(2)).unwrap(); // prev_kv at 1 is gone before the event is sent
        let out = catch_up(&mut server, &mut store);
        let cached: Vec<Key> = server.cache().objects().map(|o| o.key).collect();
        if flaws.is_empty() {
            assert_eq!(out, vec![(C, Message::End(WatchEnd::Closed))], "watches closed by the relist");
            assert!(cached.is_empty(), "the relisted cache no longer has A");
        } else {
            assert!(out.is_empty(), "the delete vanished");
            assert_eq!(cached, vec![A], "A stays in the cache forever");
        }
    }
}

#[test]
fn a8_bookmarks_carry_only_an_rv_and_only_when_asked_and_new() {
    let (mut store, mut server) = setup(4, Flaws::NONE);
    store.put(Prefix::Watched, A); // 1
    catch_up(&mut server, &mut store);
    server.watch(C, WatchFrom::Rv(Rev(1)), true);
    server.watch(ClientId(1), WatchFrom::Rv(Rev(1)), false);
    assert!(!server.can_bookmark(C), "nothing new to say");
    store.put(Prefix::Other, Key(7)); // 2: another resource
    server.progress_notify(&store);
    assert!(!server.can_bookmark(ClientId(1)), "bookmarks were not asked for");
    assert_eq!(server.bookmark(C), vec![(C, Message::Event(WatchEvent::Bookmark(Rev(2))))]);
    assert!(!server.can_bookmark(C));
}

#[test]
fn a8_a_bookmark_may_carry_the_rv_of_the_last_event_sent_once() {
    let (mut store, mut server) = setup(4, Flaws::NONE);
    server.watch(C, WatchFrom::Rv(Rev(0)), true);
    store.put(Prefix::Watched, A); // 1
    catch_up(&mut server, &mut store);
    assert_eq!(server.cache().rv(), Rev(1));
    // Every matching event <= 1 was sent: a bookmark at 1, the RV of the last event, says so.
    assert_eq!(server.bookmark(C), vec![(C, Message::Event(WatchEvent::Bookmark(Rev(1))))]);
    assert!(!server.can_bookmark(C), "a second one at the same RV says nothing new");
    store.put(Prefix::Watched, A); // 2
    catch_up(&mut server, &mut store);
    assert!(server.can_bookmark(C), "a new event, a new bookmark at its RV");
}

#[test]
fn a9_server_timeout_is_a_clean_close() {
    let (_store, mut server) = setup(4, Flaws::NONE);
    server.watch(C, WatchFrom::Rv(Rev(0)), true);
    assert_eq!(server.timeout_watch(C), vec![(C, Message::End(WatchEnd::Closed))]);
}

/// #59848: an `rv="0"` read from a lagging server goes back in time.
#[test]
fn a10_each_server_has_its_own_cache_and_a_lagging_one_serves_the_past() {
    let config = Config { servers: 2, reflectors: 0, writes: 2, faults: 0, ..Config::default() };
    let mut sys = System::new(config);
    sys.apply(Action::Create(A));
    sys.apply(Action::Delete(A));
    sys.apply(Action::Ingest(ServerId(0)));
    sys.apply(Action::Ingest(ServerId(0)));
    let fresh = sys.servers()[0].cache();
    let lagging = sys.servers()[1].cache();
    assert_eq!((fresh.rv(), fresh.objects().count()), (Rev(2), 0));
    // The lagging server has not taken its events: it still serves the empty past at RV 0; one step later
    // it would serve A, already deleted.
    assert_eq!(lagging.rv(), Rev(0));
    sys.apply(Action::Ingest(ServerId(1)));
    let lagging = sys.servers()[1].cache();
    assert_eq!((lagging.rv(), lagging.objects().map(|o| o.key).collect::<Vec<_>>()), (Rev(1), vec![A]));
}

#[test]
fn a11_freshness_wait_holds_no_lock_and_is_bounded() {
    let (mut store, mut server) = setup(4, Flaws::NONE);
    server.watch(ClientId(1), WatchFrom::Rv(Rev(0)), false);
    assert!(server.list(C, ListRv::NotOlderThan(Rev(2)), &store).is_empty());
    store.put(Prefix::Watched, A); // 1
                                   // While the LIST waits, the cache keeps taking events and dispatching them to watchers.
    let (_, out) = server.ingest(&mut store);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].0, ClientId(1));
    // Bounded: the wait ends in a 504, not in a hang.
    assert_eq!(server.list_wait_expired(C), vec![(C, Message::List(Err(ApiError::TooLargeResourceVersion)))]);
    assert!(server.waiting_lists().is_empty());
}

#[test]
fn a_system_starts_every_reflector_with_a_list_and_no_faults_leave_no_fault_actions() {
    let sys = System::new(Config { faults: 0, fault_kinds: FaultKinds::NONE, ..Config::default() });
    let mut actions = Vec::new();
    sys.actions(&mut actions);
    assert!(actions.contains(&Action::Route(C, ServerId(0))));
    assert!(actions.iter().all(|a| !matches!(a, Action::Fault(_))));
}

#[test]
fn a14_a_reinitialising_cache_answers_429_until_it_has_listed_again() {
    let (mut store, server) = setup(2, Flaws::NONE);
    let mut server = server.with_resilient_init(true);
    store.put(Prefix::Watched, A); // 1
    catch_up(&mut server, &mut store);
    server.watch(C, WatchFrom::Rv(Rev(1)), false);
    let out = server.relist_cache(&mut store);
    assert_eq!(out, vec![(C, Message::End(WatchEnd::Closed))], "the relist closes its watches (A5)");
    assert!(server.initializing());
    assert_eq!(
        server.watch(C, WatchFrom::Rv(Rev(1)), false),
        vec![(C, Message::WatchRefused(ApiError::TooManyRequests))]
    );
    assert_eq!(server.list(C, ListRv::Any, &store), vec![(C, Message::List(Err(ApiError::TooManyRequests)))]);
    assert_eq!(
        server.list(C, ListRv::NotOlderThan(Rev(1)), &store),
        vec![(C, Message::List(Err(ApiError::TooManyRequests)))]
    );
    // A LIST that reads etcd does not need the cache.
    assert!(matches!(server.list(C, ListRv::Consistent, &store)[..], [(_, Message::List(Ok(_)))]));
    assert!(server.cache_ready().is_empty());
    assert!(!server.initializing());
    assert!(matches!(server.list(C, ListRv::Any, &store)[..], [(_, Message::List(Ok(_)))]));
    assert!(server.watch(C, WatchFrom::Rv(Rev(1)), false).is_empty(), "a watch from the cache's RV opens");
    // A restart reinitialises the same way; without A14 (before k8s 1.31) it serves at once.
    server.restart(&mut store);
    assert!(server.initializing());
    let (mut store, plain) = setup(2, Flaws::NONE);
    let mut plain = plain.with_resilient_init(false);
    plain.restart(&mut store);
    assert!(!plain.initializing());
}

fn watch_list_request(rv: ListRv) -> listwatch_model::Request {
    listwatch_model::Request::WatchList { rv, timeout_secs: 300, bookmarks: true }
}

#[test]
fn a12_streaming_list_sends_the_state_as_added_then_the_initial_events_end_bookmark_then_changes() {
    let (mut store, mut server) = setup(4, Flaws::NONE);
    store.put(Prefix::Watched, B); // 1
    store.put(Prefix::Watched, A); // 2
    catch_up(&mut server, &mut store);
    let out = server.watch_list(C, ListRv::Consistent, true, &store);
    // One synthetic ADDED per object of the cache's state at R (key order), then the bookmark at R.
    let a = store.get(A).expect("a").object();
    let b = store.get(B).expect("b").object();
    assert_eq!(
        events(&out),
        vec![WatchEvent::Added(a), WatchEvent::Added(b), WatchEvent::InitialEventsEnd(Rev(2))]
    );
    // Then every change after R on the same stream.
    store.delete(Prefix::Watched, B).expect("live"); // 3
    let out = catch_up(&mut server, &mut store);
    assert_eq!(events(&out), vec![WatchEvent::Deleted(Object { rv: Rev(3), ..b })]);
    assert_eq!(server.watches()[&C].from, Rev(2));
    assert_eq!(
        watch_list_request(ListRv::Consistent).to_string(),
        "WATCH sendInitialEvents rv=\"\" timeout=300s"
    );
    assert_eq!(WatchEvent::InitialEventsEnd(Rev(2)).to_string(), "BOOKMARK @2 initial-events-end");
}

#[test]
fn a12_a_consistent_streaming_list_waits_for_the_current_revision_bounded_then_errors() {
    let (mut store, mut server) = setup(4, Flaws::NONE);
    store.put(Prefix::Watched, A); // 1, not yet in the cache
                                   // Unset RV: consistent; the cache is at 0 and waits for etcd's revision 1. Nothing is sent yet.
    assert_eq!(server.watch_list(C, ListRv::Consistent, true, &store), vec![]);
    assert_eq!(server.waiting_watch_lists().get(&C), Some(&Rev(1)));
    assert!(server.waits_for_freshness(), "the cache asks etcd for progress while one waits");
    // Once the cache has it, the initial events go out.
    let out = catch_up(&mut server, &mut store);
    let a = store.get(A).expect("a").object();
    assert_eq!(events(&out), vec![WatchEvent::Added(a), WatchEvent::InitialEventsEnd(Rev(1))]);
    assert!(server.waiting_watch_lists().is_empty());

    // A write elsewhere moves the revision the cache only reaches by a progress notification (E7),
    // which a waiting streaming list gets the cache to ask for.
    let (mut store, mut server) = setup(4, Flaws::NONE);
    store.put(Prefix::Other, A); // 1
    catch_up(&mut server, &mut store);
    assert_eq!(server.watch_list(C, ListRv::Consistent, true, &store), vec![]);
    assert!(server.can_progress(&store));
    let out = server.progress_notify(&store);
    assert_eq!(events(&out), vec![WatchEvent::InitialEventsEnd(Rev(1))]);

    // The wait is bounded: an ERROR 504 too large, then the stream closes.
    let (mut store, mut server) = setup(4, Flaws::NONE);
    store.put(Prefix::Watched, A);
    server.watch_list(C, ListRv::NotOlderThan(Rev(1)), true, &store);
    assert_eq!(
        server.watch_list_wait_expired(C),
        vec![
            (C, Message::Event(WatchEvent::Error(ApiError::TooLargeResourceVersion))),
            (C, Message::End(WatchEnd::Closed)),
        ]
    );
    assert_eq!(server.watch_list_wait_expired(C), vec![], "only a waiting one expires");
}

#[test]
fn a12_rv_0_streams_what_the_cache_has_and_not_older_than_waits_for_it() {
    let (mut store, mut server) = setup(4, Flaws::NONE);
    store.put(Prefix::Watched, A); // 1, not yet in the cache
    assert_eq!(
        events(&server.watch_list(C, ListRv::Any, true, &store)),
        vec![WatchEvent::InitialEventsEnd(Rev(0))]
    );
    let other = ClientId(1);
    assert_eq!(server.watch_list(other, ListRv::NotOlderThan(Rev(1)), true, &store), vec![]);
    let out = catch_up(&mut server, &mut store);
    let to_other: Vec<_> = out.iter().filter(|(c, _)| *c == other).cloned().collect();
    let a = store.get(A).expect("a").object();
    assert_eq!(events(&to_other), vec![WatchEvent::Added(a), WatchEvent::InitialEventsEnd(Rev(1))]);
}

#[test]
fn a12_a_streaming_list_without_bookmarks_or_with_an_exact_match_is_refused_400() {
    let (store, mut server) = setup(4, Flaws::NONE);
    for (rv, bookmarks) in [(ListRv::Consistent, false), (ListRv::Exact(Rev(0)), true)] {
        assert_eq!(
            server.watch_list(C, rv, bookmarks, &store),
            vec![(C, Message::WatchRefused(ApiError::BadRequest))],
            "{rv} bookmarks={bookmarks}"
        );
    }
    assert!(server.watches().is_empty() && server.waiting_watch_lists().is_empty());
}

#[test]
fn a12_a14_a_reinitialising_cache_refuses_streaming_lists_with_429() {
    let mut store = Store::new(TombstonePolicy::DropAtCompaction, None);
    let mut server = ApiServer::start(ServerId(0), &mut store, 4, Flaws::NONE).with_resilient_init(true);
    server.relist_cache(&mut store);
    assert_eq!(
        server.watch_list(C, ListRv::Consistent, true, &store),
        vec![(C, Message::WatchRefused(ApiError::TooManyRequests))]
    );
}

/// A watch line that does not decode (a wire fault): the event it carried never reaches the client.
/// client-go's StreamWatcher takes it as an internal error and stops, so the model reflector closes the
/// watch and relists after its backoff, and its cache still ends equal to the store.
#[test]
fn a_garbled_line_ends_the_watch_and_the_reflector_relists() {
    use listwatch_model::{
        Action, ClientId, Config, Fault, FaultKind, FaultKinds, Key, Observed, ServerId, System,
    };
    let config = Config {
        keys: 1,
        writes: 1,
        servers: 1,
        reflectors: 1,
        faults: 1,
        fault_kinds: FaultKinds::NONE.with(FaultKind::GarbledLine),
        ..Config::default()
    };
    let (c, s) = (ClientId(0), ServerId(0));
    let mut sys = System::new(config);
    for a in [Action::Route(c, s), Action::Deliver(c), Action::Route(c, s), Action::Fault(Fault::Garble(c))] {
        sys.try_apply(a).expect("enabled");
    }
    sys.try_apply(Action::Create(Key(0))).expect("a write");
    sys.try_apply(Action::Ingest(s)).expect("the cache takes it");
    let seen = sys.try_apply(Action::Deliver(c)).expect("the event arrives, garbled");
    assert!(seen.iter().any(|o| matches!(o, Observed::Garbled { .. })), "{seen:?}");
    assert!(
        seen.iter().any(|o| matches!(o, Observed::Cancelled { .. })),
        "the reflector closes the watch: {seen:?}"
    );
    assert!(sys.client(c).cache.is_empty(), "the lost ADDED is not applied");
    // After its backoff it relists and catches up.
    for a in [Action::FireTimer(c), Action::Route(c, s), Action::Deliver(c)] {
        sys.try_apply(a).expect("enabled");
    }
    assert!(sys.client(c).cache.get(Key(0)).is_some(), "the relist brings the object");
}

/// The one rule of which line a garbled-line fault takes, shared by the model's network and the runs
/// against a real server: once armed, the next watch event that is not an ERROR, bookmarks included;
/// an ERROR or any other message goes through whole, and nothing is garbled unless armed.
#[test]
fn a_garbled_line_takes_the_next_watch_event_that_is_not_an_error() {
    let object = Object { key: Key(0), uid: listwatch_model::Uid(Rev(1)), rv: Rev(1), version: 1 };
    let added = Message::Event(WatchEvent::Added(object));
    assert_eq!(added.clone().garbled(true), Ok(WatchEvent::Added(object)));
    assert_eq!(added.clone().garbled(false), Err(added));
    let bookmark = Message::Event(WatchEvent::Bookmark(Rev(4)));
    assert_eq!(bookmark.clone().garbled(true), Ok(WatchEvent::Bookmark(Rev(4))));
    let error = Message::Event(WatchEvent::Error(ApiError::Expired));
    assert_eq!(error.clone().garbled(true), Err(error));
    let end = Message::End(WatchEnd::Closed);
    assert_eq!(end.clone().garbled(true), Err(end));
}

#[test]
fn a12_a_streaming_list_over_an_etcd_without_progress_requests_is_an_error_500() {
    // Found by `conformance apiserver --etcd 3.4`: etcd 3.4.23 answers no progress requests (E7), and
    // the cacher then refuses every streaming list, whatever its RV, with an ERROR 500 on the stream.
    for rv in [ListRv::Consistent, ListRv::Any, ListRv::NotOlderThan(Rev(0))] {
        let (mut store, server) = setup(4, Flaws::NONE);
        let mut server = server.with_progress_requests(false);
        store.put(Prefix::Watched, A);
        catch_up(&mut server, &mut store);
        let out = server.watch_list(C, rv, true, &store);
        assert_eq!(
            out,
            vec![
                (C, Message::Event(WatchEvent::Error(ApiError::InternalError))),
                (C, Message::End(WatchEnd::Closed)),
            ],
            "{rv}"
        );
        assert!(server.watches().is_empty());
    }
}

/// `consistent-read-lags` (planted): a consistent LIST or streaming list answered from the cache as it
/// is. The correct server reads etcd (a LIST) or waits for the current revision (a streaming list).
#[test]
fn a2_a12_consistent_reads_are_at_the_current_revision_unless_the_planted_lag() {
    for flaws in [Flaws::NONE, Flaws::only(Flaw::ConsistentReadLags)] {
        let lags = !flaws.is_empty();
        let (mut store, mut server) = setup(4, flaws);
        store.put(Prefix::Watched, A); // 1, not yet in the cache
        let (rv, items) = list_ok(&server.list(C, ListRv::Consistent, &store));
        assert_eq!((rv, items.len()), if lags { (Rev(0), 0) } else { (Rev(1), 1) }, "{flaws}: LIST");
        let (rv, _) = list_ok(&server.list_page(C, ListRv::Consistent, 1, None, &store));
        assert_eq!(rv, if lags { Rev(0) } else { Rev(1) }, "{flaws}: a first page");
        let out = server.watch_list(C, ListRv::Consistent, true, &store);
        if lags {
            assert_eq!(events(&out), vec![WatchEvent::InitialEventsEnd(Rev(0))], "answered at once, stale");
        } else {
            assert_eq!(out, vec![], "the correct cache waits for revision 1");
        }
    }
}

/// The status faults a pending request may meet (A15).
fn status_refusals(sys: &System) -> Vec<ApiError> {
    let mut actions = Vec::new();
    sys.actions(&mut actions);
    actions
        .into_iter()
        .filter_map(|a| match a {
            Action::Fault(Fault::Refuse(c, e)) if c == C && FaultKind::of_status(e).is_some() => Some(e),
            _ => None,
        })
        .collect()
}

#[test]
fn a15_each_status_answers_the_requests_it_fits_and_is_its_own_fault_kind() {
    let kinds = FaultKinds::statuses();
    let mut sys = System::new(Config { faults: 2, fault_kinds: kinds, ..Config::default() });
    // The first LIST: every status but the 410 of a WATCH (a LIST's 410 is A2's).
    let on_list = status_refusals(&sys);
    assert!(on_list.contains(&ApiError::Truncated) && !on_list.contains(&ApiError::Expired), "{on_list:?}");
    assert_eq!(on_list.len(), 8);
    sys.apply(Action::Route(C, ServerId(0)));
    sys.apply(Action::Deliver(C));
    // The WATCH that follows: every status but a cut LIST body.
    let on_watch = status_refusals(&sys);
    assert!(
        on_watch.contains(&ApiError::Expired) && !on_watch.contains(&ApiError::Truncated),
        "{on_watch:?}"
    );
    assert_eq!(on_watch.len(), 8);
    for (kind, error) in FaultKind::STATUSES {
        assert_eq!(Fault::Refuse(C, error).kind(), kind, "{error}");
    }
    // Refused, the WATCH ends as the status says: a 503 with Retry-After is sent again after the wait.
    sys.apply(Action::Fault(Fault::Refuse(C, ApiError::UnavailableRetryAfter)));
    assert_eq!(sys.budget().faults, 1);
    assert!(sys.network().conn(C).is_none(), "the refused request is over");
}

/// A3, A12: the HTTP handler serves a WATCH from "0" with bookmarks as a streaming list wherever the
/// WatchList gate is on (`ApiServer::serve`, the `WatchList` gate): its initial
/// ADDEDs end with the initial-events-end bookmark, and over an etcd without progress requests it gets
/// A12's ERROR 500. Without bookmarks, or where the gate is off, it is the plain watch of A3.
#[test]
fn a3_a12_the_handler_serves_a_watch_from_now_with_bookmarks_as_a_streaming_list() {
    use listwatch_model::{ApiServerRelease, Request};
    let watch = |bookmarks| Request::Watch { from: WatchFrom::Now, timeout_secs: 0, bookmarks };
    for (release, streams) in [
        (ApiServerRelease::NEWEST, true),
        (ApiServerRelease::new(32, 13), true),
        (ApiServerRelease::new(33, 13), false),
        (ApiServerRelease::new(31, 14), false),
    ] {
        let (mut store, server) = setup(8, Flaws::NONE);
        let mut server = server.with_release(release);
        store.put(Prefix::Watched, A);
        catch_up(&mut server, &mut store);
        let with = events(&server.serve(C, watch(true), &store));
        let ends = with.iter().any(|e| matches!(e, WatchEvent::InitialEventsEnd(_)));
        assert_eq!(ends, streams, "{release}: {with:?}");
        assert!(matches!(with[0], WatchEvent::Added(_)), "{release}: {with:?}");
        let without = events(&server.serve(ClientId(1), watch(false), &store));
        assert_eq!(without.len(), 1, "{release}: a plain watch from now: {without:?}");

        let mut old_etcd = server.with_progress_requests(false);
        let refused = events(&old_etcd.serve(ClientId(2), watch(true), &store));
        let errs = refused == vec![WatchEvent::Error(ApiError::InternalError)];
        assert_eq!(errs, streams, "{release} over an etcd without progress requests: {refused:?}");
    }
}

/// A12, A13 for a server over HTTP that lacks a feature the contract lets it lack: with the WatchList
/// gate off a streaming list is refused with 422 and a WATCH from now stays a plain one; without
/// pagination a LIST with `limit` is served whole, with no continue token.
#[test]
fn a12_a13_a_server_may_lack_streaming_lists_and_pagination() {
    use listwatch_model::Request;
    let (mut store, server) = setup(8, Flaws::NONE);
    let mut server = server.with_watch_list(false).with_pagination(false);
    store.put(Prefix::Watched, A);
    store.put(Prefix::Watched, B);
    catch_up(&mut server, &mut store);
    let refused = server.watch_list(C, ListRv::Consistent, true, &store);
    assert_eq!(refused, vec![(C, Message::WatchRefused(ApiError::Invalid))]);
    let watch = Request::Watch { from: WatchFrom::Now, timeout_secs: 0, bookmarks: true };
    let plain = events(&server.serve(ClientId(1), watch, &store));
    assert!(plain.iter().all(|e| matches!(e, WatchEvent::Added(_))) && plain.len() == 2, "{plain:?}");
    let page = server.list_page(ClientId(2), ListRv::Consistent, 1, None, &store);
    match page.as_slice() {
        [(_, Message::List(Ok(list)))] => assert!(list.items.len() == 2 && list.cont.is_none(), "{list:?}"),
        other => panic!("a whole list: {other:?}"),
    }
}
