//! SEMANTICS C1–C12: the reflector (sans-IO), its cache and the client manager, one test (or more) per rule.

use listwatch_model::manager::{ClusterId, LockMode, Manager, Outcome, RequestId, Step};
use listwatch_model::{
    ApiError, Cache, CacheOp, Flaw, Flaws, Key, ListMode, ListResponse, ListRv, Next, Notification, Object,
    Output, Phase, Reflector, ReflectorConfig, Request, Rev, Timer, Uid, WatchEnd, WatchEvent, WatchFrom,
};

fn obj(key: u8, rv: u32) -> Object {
    Object { key: Key(key), uid: Uid(Rev(rv)), rv: Rev(rv), version: 1 }
}

/// The outputs that act on the world (requests, cancels, cache changes); timer announcements aside.
fn drain(r: &mut Reflector) -> Vec<Output> {
    std::iter::from_fn(|| r.poll_output()).filter(|o| !matches!(o, Output::Arm(_))).collect()
}

/// A driver with a clock learns of every timer the reflector arms, as it is armed.
#[test]
fn c1_c3_every_armed_timer_is_announced() {
    let mut r = Reflector::new(ReflectorConfig::default(), Flaws::NONE);
    r.start();
    let _ = std::iter::from_fn(|| r.poll_output()).count();
    r.handle_list_result(Ok(ListResponse { rv: Rev(5), items: vec![], cont: None }));
    let armed: Vec<Timer> = std::iter::from_fn(|| r.poll_output())
        .filter_map(|o| if let Output::Arm(t) = o { Some(t) } else { None })
        .collect();
    let mut expected: Vec<Timer> = r.timers().map(|(t, _)| t).collect();
    expected.sort();
    let mut got = armed.clone();
    got.sort();
    assert_eq!(got, expected, "announced {armed:?}");
    assert!(got.contains(&Timer::WatchTimeout));
    r.handle_watch_event(WatchEvent::Error(ApiError::InternalError));
    let again: Vec<Output> = std::iter::from_fn(|| r.poll_output()).collect();
    assert!(again.contains(&Output::Arm(Timer::Backoff)), "{again:?}");
}

fn requests(outputs: &[Output]) -> Vec<Request> {
    outputs
        .iter()
        .filter_map(|o| match o {
            Output::Send(req) => Some(*req),
            _ => None,
        })
        .collect()
}

fn watch_from(rv: u32) -> Request {
    let c = ReflectorConfig::default();
    Request::Watch {
        from: WatchFrom::Rv(Rev(rv)),
        timeout_secs: c.watch_timeout_secs,
        bookmarks: c.bookmarks,
    }
}

/// A reflector that has listed at `rv` and opened its watch.
fn watching(rv: u32, flaws: Flaws) -> Reflector {
    let mut r = Reflector::new(ReflectorConfig::default(), flaws);
    r.start();
    drain(&mut r);
    r.handle_list_result(Ok(ListResponse { rv: Rev(rv), items: vec![obj(0, rv)], cont: None }));
    assert_eq!(requests(&drain(&mut r)), vec![watch_from(rv)]);
    r
}

fn fire_next(r: &mut Reflector) -> Timer {
    let (timer, _) = r.next_timer().expect("a timer is armed");
    r.handle_timeout(timer);
    timer
}

#[test]
fn c1_backoff_doubles_from_800ms_caps_at_30s_and_resets_after_two_healthy_minutes() {
    let mut r = Reflector::new(ReflectorConfig::default(), Flaws::NONE);
    r.start();
    drain(&mut r);
    let mut waits = Vec::new();
    for _ in 0..8 {
        r.handle_list_result(Err(ApiError::InternalError));
        let (timer, ms) = r.next_timer().unwrap();
        assert_eq!(timer, Timer::Backoff);
        waits.push(ms);
        r.handle_timeout(Timer::Backoff);
        assert_eq!(requests(&drain(&mut r)), vec![Request::List { rv: ListRv::Any }]);
    }
    assert_eq!(waits, vec![800, 1600, 3200, 6400, 12800, 25600, 30000, 30000]);
    r.handle_list_result(Ok(ListResponse { rv: Rev(3), items: vec![], cont: None }));
    drain(&mut r);
    assert_eq!(fire_next(&mut r), Timer::WatchAged);
    assert_eq!(fire_next(&mut r), Timer::BackoffReset);
    r.handle_watch_event(WatchEvent::Error(ApiError::Expired));
    assert_eq!(r.next_timer(), Some((Timer::Backoff, 800)), "reset after two healthy minutes");
}

#[test]
fn c2_first_list_is_rv0_relist_is_not_older_than_and_410_falls_back_to_consistent() {
    let mut r = Reflector::new(ReflectorConfig::default(), Flaws::NONE);
    assert_eq!(r.phase(), Phase::Empty);
    r.start();
    assert_eq!(requests(&drain(&mut r)), vec![Request::List { rv: ListRv::Any }]);
    r.handle_list_result(Ok(ListResponse { rv: Rev(5), items: vec![obj(0, 5)], cont: None }));
    let out = drain(&mut r);
    assert_eq!(out[0], Output::Cache(CacheOp::Replace { items: vec![obj(0, 5)], rv: Rev(5) }));
    assert_eq!(r.resource_version(), Rev(5));
    // The watch fails with 410: relist NotOlderThan the last RV (after a backoff).
    r.handle_watch_event(WatchEvent::Error(ApiError::Expired));
    assert_eq!(drain(&mut r), vec![Output::Cancel]);
    fire_next(&mut r);
    assert_eq!(requests(&drain(&mut r)), vec![Request::List { rv: ListRv::NotOlderThan(Rev(5)) }]);
    // That LIST gets 410: retry at once, consistent.
    r.handle_list_result(Err(ApiError::Expired));
    assert_eq!(requests(&drain(&mut r)), vec![Request::List { rv: ListRv::Consistent }]);
    assert_eq!(r.next_timer(), None, "no backoff before the fallback");
}

#[test]
fn c3_watch_from_last_rv_with_timeout_and_bookmarks() {
    let r = watching(7, Flaws::NONE);
    assert_eq!(r.phase(), Phase::Watching { from: Rev(7), saw_event: false, aged: false });
    let timers: Vec<Timer> = r.timers().map(|(t, _)| t).collect();
    assert!(timers.contains(&Timer::WatchTimeout));
}

#[test]
fn c4_every_event_moves_the_rv_and_the_correct_reflector_never_moves_it_back() {
    let mut r = watching(2, Flaws::NONE);
    r.handle_watch_event(WatchEvent::Added(obj(1, 3)));
    assert_eq!(drain(&mut r), vec![Output::Cache(CacheOp::Apply(WatchEvent::Added(obj(1, 3))))]);
    r.handle_watch_event(WatchEvent::Bookmark(Rev(6)));
    assert_eq!(r.resource_version(), Rev(6), "bookmarks count too");
    assert!(drain(&mut r).is_empty(), "a bookmark changes no object");
    // A server that sends an older RV (bug 000) does not move the correct reflector's RV back.
    r.handle_watch_event(WatchEvent::Deleted(obj(1, 3)));
    assert_eq!(r.resource_version(), Rev(6));
}

#[test]
fn c5_clean_endings_rewatch_without_relist() {
    for end in [WatchEnd::Closed, WatchEnd::Disconnected] {
        let mut r = watching(4, Flaws::NONE);
        r.handle_watch_event(WatchEvent::Added(obj(1, 5)));
        r.handle_watch_event(WatchEvent::Bookmark(Rev(5)));
        drain(&mut r);
        r.handle_watch_ended(end);
        assert_eq!(requests(&drain(&mut r)), vec![watch_from(5)], "{end}");
    }
    // The client-side timeout: cancel, then re-watch.
    let mut r = watching(4, Flaws::NONE);
    while r.next_timer().map(|(t, _)| t) != Some(Timer::WatchTimeout) {
        fire_next(&mut r);
    }
    fire_next(&mut r);
    assert_eq!(drain(&mut r), vec![Output::Cancel, Output::Send(watch_from(4))]);
}

#[test]
fn c5_very_short_watch_with_no_event_relists() {
    let mut r = watching(4, Flaws::NONE);
    r.handle_watch_ended(WatchEnd::Closed);
    assert_eq!(r.phase(), Phase::Backoff { then: Next::Relist });
    // Aged past a second, the same ending is a plain re-watch.
    let mut r = watching(4, Flaws::NONE);
    assert_eq!(fire_next(&mut r), Timer::WatchAged);
    r.handle_watch_ended(WatchEnd::Closed);
    assert_eq!(requests(&drain(&mut r)), vec![watch_from(4)]);
}

#[test]
fn c5_error_causes() {
    let cases = [
        (ApiError::TooManyRequests, Next::Rewatch),
        (ApiError::ConnectionRefused, Next::Rewatch),
        (ApiError::InternalError, Next::Relist),
    ];
    for (error, next) in cases {
        let mut r = watching(4, Flaws::NONE);
        r.handle_watch_refused(error);
        assert_eq!(r.phase(), Phase::Backoff { then: next }, "refused with {error}");
    }
    for (error, next) in [(ApiError::Expired, Next::Relist), (ApiError::InternalError, Next::Relist)] {
        let mut r = watching(4, Flaws::NONE);
        r.handle_watch_event(WatchEvent::Error(error));
        assert_eq!(r.phase(), Phase::Backoff { then: next }, "ERROR event {error}");
    }
}

#[test]
fn c6_too_large_falls_back_to_a_consistent_list() {
    let mut r = watching(9, Flaws::NONE);
    r.handle_watch_event(WatchEvent::Error(ApiError::Expired));
    drain(&mut r);
    fire_next(&mut r);
    assert_eq!(requests(&drain(&mut r)), vec![Request::List { rv: ListRv::NotOlderThan(Rev(9)) }]);
    r.handle_list_result(Err(ApiError::TooLargeResourceVersion));
    assert_eq!(requests(&drain(&mut r)), vec![Request::List { rv: ListRv::Consistent }]);
}

#[test]
fn c7_replace_deletes_missing_keys_with_final_state_unknown() {
    let mut cache = Cache::default();
    let mut notes = Vec::new();
    cache.apply(&CacheOp::Replace { items: vec![obj(0, 1), obj(1, 2)], rv: Rev(2) }, Flaws::NONE, &mut notes);
    notes.clear();
    cache.apply(&CacheOp::Replace { items: vec![obj(1, 2)], rv: Rev(4) }, Flaws::NONE, &mut notes);
    assert_eq!(notes[0], Notification::DeletedFinalStateUnknown(obj(0, 1)));
    assert_eq!(cache.objects().copied().collect::<Vec<_>>(), vec![obj(1, 2)]);
}

#[test]
fn c8_has_synced_after_one_full_list_and_the_manager_waits_outside_its_lock_with_a_bound() {
    let mut r = Reflector::new(ReflectorConfig::default(), Flaws::NONE);
    r.start();
    assert!(!r.has_synced());
    r.handle_list_result(Ok(ListResponse { rv: Rev(1), items: vec![], cont: None }));
    assert!(r.has_synced());

    let mut m = Manager::new(1, 1, Flaws::NONE);
    let id = RequestId(0);
    m.pause(ClusterId(0));
    for _ in 0..4 {
        m.step(id);
    }
    assert_eq!(m.request(id).unwrap().step, Step::WaitSync { under_lock: false, bounded: true });
    assert_eq!(m.held(id), None);
    assert_eq!(m.wait(id), Some((ClusterId(0), Some(Manager::SYNC_WAIT_MS))), "bounded, outside the lock");
    assert!(m.can_pass_time(), "no request can move: time may pass");
    m.pass_time();
    assert_eq!(m.request(id).unwrap().step, Step::Done(Outcome::TimedOut));
    assert!(!m.can_pass_time(), "nothing is left to wait");
}

#[test]
fn c8_manager_creates_one_informer_under_the_write_lock() {
    let mut m = Manager::new(1, 2, Flaws::NONE);
    let (a, b) = (RequestId(0), RequestId(1));
    m.step(a); // read lock
    m.step(b); // read lock, shared
    assert_eq!((m.held(a), m.held(b)), (Some(LockMode::Read), Some(LockMode::Read)));
    m.step(a); // no informer: wants write
    m.step(b);
    assert!(m.can_step(a) && m.can_step(b));
    m.step(a); // a holds the write lock
    assert!(!m.can_step(b), "b waits for the write lock");
    m.step(a); // creates, releases
    m.step(b); // write lock
    m.step(b); // finds it created
    m.sync(ClusterId(0));
    m.step(a);
    m.step(b);
    assert_eq!(m.request(a).unwrap().step, Step::Done(Outcome::Served));
    assert_eq!(m.request(b).unwrap().step, Step::Done(Outcome::Served));
}

#[test]
fn c9_a_closed_stream_is_followed_by_a_new_watch() {
    let mut r = watching(3, Flaws::NONE);
    fire_next(&mut r);
    r.handle_watch_ended(WatchEnd::Closed);
    assert_eq!(requests(&drain(&mut r)), vec![watch_from(3)]);
    assert!(r.next_timer().is_some_and(|(_, ms)| ms > 0), "no busy loop");
}

#[test]
fn a9_a_silently_dead_connection_is_given_up_after_the_health_check_bound() {
    use listwatch_model::{Action, Client, Config, Fault, FaultKind, FaultKinds, System};
    let config = Config {
        keys: 1,
        writes: 0,
        faults: 1,
        fault_kinds: FaultKinds::NONE.with(FaultKind::SilentDeath),
        ..Config::default()
    };
    let mut sys = System::new(config);
    let r = listwatch_model::ClientId(0);
    let s = listwatch_model::ServerId(0);
    sys.try_apply(Action::Route(r, s)).unwrap();
    sys.try_apply(Action::Fault(Fault::SilentDeath(r))).unwrap();
    // The LIST's answer was lost with the connection: nothing to deliver, and no timer of the
    // reflector's own runs during a LIST; the transport's health check is what ends it.
    assert!(!sys.enabled(Action::Deliver(r)));
    assert!(sys.client(r).next_timer().is_none());
    assert!(sys.view(r).scheduled, "a connection under a health check is something scheduled");
    let seen = sys.try_apply(Action::SilenceNoticed(r)).unwrap();
    assert_eq!(
        seen[..2],
        [
            listwatch_model::Observed::SilenceNoticed { client: r, after_ms: 45_000 },
            listwatch_model::Observed::Broken { client: r }
        ]
    );
    assert!(
        sys.client(r).next_timer().is_some_and(|(t, _)| t == listwatch_model::Timer::Backoff),
        "a failed LIST backs off (C1)"
    );
}

/// E8: with no later RV and no bookmark behind the last event, its revision may have more events on
/// their way; the re-watch starts from the last RV known complete. The flaw (kubernetes#110210, and
/// client-go) resumes from the last event's RV.
#[test]
fn e8_a_rewatch_starts_from_the_last_rv_known_complete() {
    for (flaws, from) in [(Flaws::NONE, 4), (Flaws::only(Flaw::ResumeMidRevision), 6)] {
        let mut r = watching(4, flaws);
        r.handle_watch_event(WatchEvent::Added(obj(1, 6)));
        r.handle_watch_event(WatchEvent::Added(obj(2, 6)));
        drain(&mut r);
        assert_eq!(r.resource_version(), Rev(6));
        r.handle_watch_ended(WatchEnd::Disconnected);
        assert_eq!(requests(&drain(&mut r)), vec![watch_from(from)], "{flaws}");
    }
    // A later RV completes the revision before it.
    let mut r = watching(4, Flaws::NONE);
    r.handle_watch_event(WatchEvent::Added(obj(1, 6)));
    r.handle_watch_event(WatchEvent::Added(obj(2, 7)));
    drain(&mut r);
    r.handle_watch_ended(WatchEnd::Closed);
    assert_eq!(requests(&drain(&mut r)), vec![watch_from(6)]);
}

fn watch_list_config() -> ReflectorConfig {
    ReflectorConfig { mode: ListMode::WatchList, ..ReflectorConfig::default() }
}

fn stream_at(rv: ListRv) -> Request {
    Request::WatchList { rv, timeout_secs: ReflectorConfig::default().watch_timeout_secs, bookmarks: true }
}

/// A watch-list reflector whose first streaming list is open, nothing received yet.
fn streaming(flaws: Flaws) -> Reflector {
    let mut r = Reflector::new(watch_list_config(), flaws);
    r.start();
    assert_eq!(requests(&drain(&mut r)), vec![stream_at(ListRv::Consistent)], "the first one is consistent");
    r
}

#[test]
fn c10_initial_events_go_to_a_temporary_store_replaced_at_the_end_bookmark_then_the_stream_goes_on() {
    let mut r = streaming(Flaws::NONE);
    r.handle_watch_event(WatchEvent::Added(obj(0, 3)));
    r.handle_watch_event(WatchEvent::Added(obj(1, 5)));
    assert_eq!(drain(&mut r), vec![], "nothing reaches the cache before the bookmark");
    assert_eq!((r.resource_version(), r.has_synced()), (Rev(0), false));
    r.handle_watch_event(WatchEvent::InitialEventsEnd(Rev(6)));
    assert_eq!(
        drain(&mut r),
        vec![Output::Cache(CacheOp::Replace { items: vec![obj(0, 3), obj(1, 5)], rv: Rev(6) })],
        "Replace at the bookmark, and no new request: the same stream goes on"
    );
    assert_eq!((r.resource_version(), r.has_synced()), (Rev(6), true));
    r.handle_watch_event(WatchEvent::Deleted(obj(0, 7)));
    assert_eq!(drain(&mut r), vec![Output::Cache(CacheOp::Apply(WatchEvent::Deleted(obj(0, 7))))]);
    assert_eq!(r.resource_version(), Rev(7));
    // A later ending is a plain re-watch, no initial events asked for again (kube-rs#1844), from the
    // last RV known complete (E8: nothing after the event at 7 says its revision is whole).
    assert_eq!(fire_next(&mut r), Timer::WatchAged);
    r.handle_watch_ended(WatchEnd::Closed);
    assert_eq!(requests(&drain(&mut r)), vec![watch_from(6)]);
}

#[test]
fn c10_410_or_too_large_retry_at_once_with_rv_unset() {
    for error in [ApiError::Expired, ApiError::TooLargeResourceVersion] {
        // A relist of a synced reflector asks NotOlderThan its RV; the error makes it consistent.
        let mut r = streaming(Flaws::NONE);
        r.handle_watch_event(WatchEvent::InitialEventsEnd(Rev(4)));
        r.handle_watch_event(WatchEvent::Error(ApiError::InternalError));
        drain(&mut r);
        while !matches!(r.phase(), Phase::Streaming { .. }) {
            fire_next(&mut r);
        }
        assert_eq!(requests(&drain(&mut r)), vec![stream_at(ListRv::NotOlderThan(Rev(4)))]);
        r.handle_watch_event(WatchEvent::Error(error));
        assert_eq!(
            drain(&mut r),
            vec![Output::Cancel, Output::Send(stream_at(ListRv::Consistent))],
            "{error}"
        );
    }
}

#[test]
fn c10_a_stream_that_ends_before_the_bookmark_is_retried_and_other_errors_fall_back_to_list() {
    // Ended after an event: at once, again, into a new temporary store.
    let mut r = streaming(Flaws::NONE);
    r.handle_watch_event(WatchEvent::Added(obj(0, 3)));
    r.handle_watch_ended(WatchEnd::Disconnected);
    assert_eq!(requests(&drain(&mut r)), vec![stream_at(ListRv::Consistent)]);
    r.handle_watch_event(WatchEvent::InitialEventsEnd(Rev(4)));
    assert_eq!(drain(&mut r), vec![Output::Cache(CacheOp::Replace { items: vec![], rv: Rev(4) })]);
    // Within a second with no event: a very short watch, and the LIST of list-watch at once.
    let mut r = streaming(Flaws::NONE);
    r.handle_watch_ended(WatchEnd::Closed);
    assert_eq!(requests(&drain(&mut r)), vec![Request::List { rv: ListRv::Any }]);
    // Refused with 500 or 400 (a server without streaming lists): the LIST at once; 429: a backoff.
    for error in [ApiError::InternalError, ApiError::BadRequest] {
        let mut r = streaming(Flaws::NONE);
        r.handle_watch_refused(error);
        assert_eq!(requests(&drain(&mut r)), vec![Request::List { rv: ListRv::Any }], "{error}");
    }
    let mut r = streaming(Flaws::NONE);
    r.handle_watch_refused(ApiError::TooManyRequests);
    assert_eq!(r.phase(), Phase::Backoff { then: Next::Relist });
    drain(&mut r);
    assert_eq!(fire_next(&mut r), Timer::Backoff);
    assert_eq!(requests(&drain(&mut r)), vec![stream_at(ListRv::Consistent)], "after the backoff: a stream");
}

#[test]
fn c10_flaws_partial_initial_buffer_and_rewatch_initial_events() {
    // kube-runtime 4.x: the aborted stream's objects stay for the next Replace.
    let mut r = streaming(Flaws::only(Flaw::PartialInitialBuffer));
    r.handle_watch_event(WatchEvent::Added(obj(0, 3)));
    r.handle_watch_ended(WatchEnd::Disconnected);
    drain(&mut r);
    r.handle_watch_event(WatchEvent::InitialEventsEnd(Rev(4)));
    assert_eq!(drain(&mut r), vec![Output::Cache(CacheOp::Replace { items: vec![obj(0, 3)], rv: Rev(4) })]);
    // kube-rs#1844: the re-watch asks for the initial events again.
    let mut r = streaming(Flaws::only(Flaw::RewatchInitialEvents));
    r.handle_watch_event(WatchEvent::InitialEventsEnd(Rev(4)));
    fire_next(&mut r);
    drain(&mut r);
    r.handle_watch_ended(WatchEnd::Closed);
    assert_eq!(requests(&drain(&mut r)), vec![stream_at(ListRv::NotOlderThan(Rev(4)))]);
}

/// The statuses of A15 other than those with `Retry-After`.
const PLAIN_STATUSES: [ApiError; 7] = [
    ApiError::Unauthorized,
    ApiError::Forbidden,
    ApiError::NotFound,
    ApiError::Invalid,
    ApiError::Unavailable,
    ApiError::GatewayTimeout,
    ApiError::Truncated,
];

#[test]
fn c11_a_failed_list_backs_off_and_lists_again_at_the_same_rv_whatever_the_status() {
    for error in PLAIN_STATUSES.into_iter().chain([ApiError::UnavailableRetryAfter]) {
        let mut r = watching(6, Flaws::NONE);
        r.handle_watch_event(WatchEvent::Error(ApiError::InternalError));
        drain(&mut r);
        fire_next(&mut r);
        assert_eq!(requests(&drain(&mut r)), vec![Request::List { rv: ListRv::NotOlderThan(Rev(6)) }]);
        r.handle_list_result(Err(error));
        assert_eq!(r.phase(), Phase::Backoff { then: Next::Relist }, "{error}");
        // A plain 504 is not A2's "too large": the RV stays available, no consistent list.
        fire_next(&mut r);
        let again = requests(&drain(&mut r));
        assert_eq!(again, vec![Request::List { rv: ListRv::NotOlderThan(Rev(6)) }], "{error}");
    }
}

#[test]
fn c11_a_refused_watch_relists_after_a_backoff_unless_the_server_said_when_to_retry() {
    for error in PLAIN_STATUSES.into_iter().chain([ApiError::Expired]) {
        let mut r = watching(4, Flaws::NONE);
        r.handle_watch_refused(error);
        assert_eq!(r.phase(), Phase::Backoff { then: Next::Relist }, "refused with {error}");
        fire_next(&mut r);
        let next = requests(&drain(&mut r));
        assert_eq!(
            next,
            vec![Request::List { rv: ListRv::NotOlderThan(Rev(4)) }],
            "{error}: relist, RV kept"
        );
    }
    // 503 with Retry-After, as 429: the same WATCH again once the wait is over.
    let mut r = watching(4, Flaws::NONE);
    r.handle_watch_refused(ApiError::UnavailableRetryAfter);
    assert_eq!(r.phase(), Phase::Backoff { then: Next::Rewatch });
    fire_next(&mut r);
    assert_eq!(requests(&drain(&mut r)), vec![watch_from(4)]);
}

#[test]
fn c11_a_refused_streaming_list_falls_back_to_list_at_once_except_410_and_retry_after() {
    for error in PLAIN_STATUSES {
        let mut r = streaming(Flaws::NONE);
        r.handle_watch_refused(error);
        assert_eq!(requests(&drain(&mut r)), vec![Request::List { rv: ListRv::Any }], "{error}");
    }
    let mut r = streaming(Flaws::NONE);
    r.handle_watch_refused(ApiError::Expired);
    assert_eq!(requests(&drain(&mut r)), vec![stream_at(ListRv::Consistent)], "410: again, rv unset");
    let mut r = streaming(Flaws::NONE);
    r.handle_watch_refused(ApiError::UnavailableRetryAfter);
    assert_eq!(r.phase(), Phase::Backoff { then: Next::Relist });
}

/// Whether the reflector told its user of a failure among these outputs.
fn told(outputs: &[Output]) -> bool {
    outputs.contains(&Output::Tell)
}

#[test]
fn c12_a_failed_list_and_a_refused_watch_are_told_before_the_backoff() {
    for error in PLAIN_STATUSES.into_iter().chain([ApiError::InternalError, ApiError::ConnectionRefused]) {
        let mut r = watching(6, Flaws::NONE);
        r.handle_watch_event(WatchEvent::Error(ApiError::InternalError));
        assert!(!told(&drain(&mut r)), "an ERROR event on an open watch is not returned: not told");
        fire_next(&mut r);
        drain(&mut r);
        r.handle_list_result(Err(error));
        assert!(told(&drain(&mut r)), "a LIST failed with {error}: told");
    }
    for error in PLAIN_STATUSES.into_iter().chain([ApiError::Expired, ApiError::InternalError]) {
        let mut r = watching(4, Flaws::NONE);
        r.handle_watch_refused(error);
        assert!(told(&drain(&mut r)), "a WATCH refused with {error}: told");
    }
}

#[test]
fn c12_what_the_rest_client_or_the_reflector_retries_itself_is_not_told() {
    // A `Retry-After` and a connection broken before the answer: the REST client sends it again.
    for error in [ApiError::TooManyRequests, ApiError::UnavailableRetryAfter, ApiError::Disconnected] {
        let mut r = watching(6, Flaws::NONE);
        r.handle_watch_refused(ApiError::Forbidden);
        drain(&mut r);
        fire_next(&mut r);
        drain(&mut r);
        r.handle_list_result(Err(error));
        assert!(!told(&drain(&mut r)), "a LIST failed with {error}");
    }
    // 429 and a refused connection on a WATCH: backed off from and watched again (isWatchErrorRetriable).
    for error in [ApiError::TooManyRequests, ApiError::ConnectionRefused] {
        let mut r = watching(4, Flaws::NONE);
        r.handle_watch_refused(error);
        assert!(!told(&drain(&mut r)), "a WATCH refused with {error}");
    }
    // C2: a 410 on the relist at the last RV is retried at once with a consistent LIST.
    let mut r = watching(6, Flaws::NONE);
    r.handle_watch_event(WatchEvent::Error(ApiError::Expired));
    drain(&mut r);
    fire_next(&mut r);
    drain(&mut r);
    r.handle_list_result(Err(ApiError::Expired));
    let out = drain(&mut r);
    assert!(!told(&out), "{out:?}");
    assert_eq!(requests(&out), vec![Request::List { rv: ListRv::Consistent }]);
    // C10: a refused streaming list falls back to a LIST at once.
    let mut r = streaming(Flaws::NONE);
    r.handle_watch_refused(ApiError::Forbidden);
    assert!(!told(&drain(&mut r)));
}

#[test]
fn c12_untold_failures_only_logs() {
    let mut r = watching(4, Flaws::only(Flaw::UntoldFailures));
    r.handle_watch_refused(ApiError::Forbidden);
    let out = drain(&mut r);
    assert!(!told(&out), "{out:?}");
    assert_eq!(r.phase(), Phase::Backoff { then: Next::Relist }, "it backs off all the same");
}
