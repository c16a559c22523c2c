//! Every flaw's own story, step by step, run with the flaw on and off: the outcomes must differ, and
//! the correct system must come out right.

mod support;

use listwatch_model::manager::{ClusterId, LockMode, Outcome, RequestId, Step};
use listwatch_model::{
    Action, ApiError, Config, Fault, FaultKind, FaultKinds, Flaw, Flaws, Key, ListRv, ManagerConfig, Message,
    Notification, Observed, Phase, ProgressNotify, Request, Rev, Timer, WatchEvent,
};
use support::{Story, R, S0, S1};

const A: Key = Key(0);
const B: Key = Key(1);

fn scope(keys: u8, writes: u8, faults: u8) -> Config {
    Config { keys, writes, faults, compactions: 0, cache_window: 8, ..Config::default() }
}

/// Both variants of a story: `(flawed, correct)`.
fn both(flaw: Flaw, config: Config, story: impl Fn(&mut Story)) -> (Story, Story) {
    let mut flawed = Story::new(config.with_flaws(Flaws::only(flaw)));
    let mut correct = Story::new(config.with_flaws(Flaws::NONE));
    story(&mut flawed);
    story(&mut correct);
    (flawed, correct)
}

fn rvs(events: &[WatchEvent]) -> Vec<u32> {
    events.iter().filter_map(|e| e.rv()).map(|r| r.0).collect()
}

/// Seed 000, kubernetes#58545: create A, create B, delete B, delete A, disconnect, re-watch.
#[test]
fn stale_delete_rv_sends_rvs_backwards_and_the_rewatch_replays_deletes() {
    let (flawed, correct) = both(Flaw::StaleDeleteRv, scope(2, 4, 1), |s| {
        s.serve(R, S0).step(Action::Route(R, S0));
        s.steps(&[Action::Create(A), Action::Create(B), Action::Delete(B), Action::Delete(A)]);
        s.ingest(S0).deliver(R);
    });
    assert_eq!(rvs(&correct.received_events(R)), vec![1, 2, 3, 4]);
    assert_eq!(rvs(&flawed.received_events(R)), vec![1, 2, 2, 1], "DELETEs carry the objects' old RVs");
    assert_eq!(correct.sys.view(R).resource_version, Rev(4));
    assert_eq!(flawed.sys.view(R).resource_version, Rev(2));
    // The flawed reflector's cache is not the store's state at the RV it claims: B existed at 2.
    assert_eq!(flawed.sys.store().truth_at(Rev(2)).keys().copied().collect::<Vec<_>>(), vec![A, B]);
    assert!(flawed.cache_keys(R).is_empty());

    let replay = |mut s: Story| {
        s.step(Action::Fault(Fault::Disconnect(R)));
        let mark = s.mark();
        s.serve(R, S0);
        s.since(mark).iter().filter(|o| matches!(o, Observed::Received { .. })).count()
    };
    // E8: revision 4 is not known complete (no later RV, no bookmark): the re-watch is from 3, and
    // only DELETED A at 4 comes again, which the cache guard drops.
    assert_eq!(replay(correct), 1, "the re-watch from 3 replays the one revision not known complete");
    // client-go without our RV guard would claim 1 and get ADDED B back: B resurrected.
    // The re-watch is from 1 (the last RV known complete: 2 came after it), so ADDED B at 2 and both
    // DELETEs arrive a second time.
    assert_eq!(replay(flawed), 3, "ADDED B, DELETED B and DELETED A arrive a second time");
}

/// Seed 001, kubernetes#76624 and etcd#10681: a DELETE whose prev_kv was compacted before etcd sent it.
#[test]
fn nil_prevkv_dropped_keeps_a_deleted_object_forever() {
    let config = Config { compactions: 1, ..scope(1, 2, 0) };
    let (flawed, correct) = both(Flaw::NilPrevKvDropped, config, |s| {
        s.serve(R, S0).step(Action::Route(R, S0));
        s.step(Action::Create(A)).ingest(S0).deliver(R).fire_until(R, Timer::WatchAged);
        s.steps(&[Action::Delete(A), Action::Compact(Rev(2))]).ingest(S0).deliver(R);
        // Whatever the reflector does next (re-watch, 410, backoff, relist), let it run to the end.
        s.recover(R, S0);
    });
    assert!(correct.truth_keys().is_empty());
    assert!(correct.cache_keys(R).is_empty(), "the cache relisted, the reflector got 410 and relisted");
    assert!(correct.log.iter().any(|o| matches!(
        o,
        Observed::Notified { notification: Notification::DeletedFinalStateUnknown(obj), .. } if obj.key == A
    )));
    assert!(flawed.sys.settled(), "nothing left in flight");
    assert_eq!(flawed.cache_keys(R), vec![A], "A stays in the reflector's cache");
    assert_eq!(flawed.sys.servers()[0].cache().objects().count(), 1, "and in the API server's cache");
}

/// Seed 002, PR #89652: every client-side watch timeout becomes a full LIST.
#[test]
fn relist_on_timeout_turns_every_timeout_into_a_list() {
    let (flawed, correct) = both(Flaw::RelistOnTimeout, scope(1, 0, 0), |s| {
        s.serve(R, S0).step(Action::Route(R, S0));
        for _ in 0..3 {
            s.fire_until(R, Timer::WatchTimeout);
            while s.sys.enabled(Action::Route(R, S0)) {
                s.serve(R, S0);
            }
        }
    });
    assert_eq!(correct.lists(R), vec![ListRv::Any]);
    assert_eq!(flawed.lists(R).len(), 4, "the first sync and one LIST per timeout");
}

/// Seed 003: the server ends the watch cleanly; a raw-watch consumer that returns never watches again.
#[test]
fn stop_on_close_freezes_the_cache() {
    let (flawed, correct) = both(Flaw::StopOnClose, scope(1, 1, 1), |s| {
        s.serve(R, S0).step(Action::Route(R, S0)).fire_until(R, Timer::WatchAged);
        s.step(Action::Fault(Fault::ServerTimeout(R))).deliver(R);
        if s.sys.enabled(Action::Route(R, S0)) {
            s.step(Action::Route(R, S0));
        }
        s.step(Action::Create(A)).ingest(S0).deliver(R);
    });
    assert_eq!(correct.cache_keys(R), vec![A]);
    assert_eq!(flawed.sys.reflector(R).phase(), Phase::Stopped);
    assert!(flawed.cache_keys(R).is_empty(), "A never reaches the cache");
    assert!(flawed.sys.settled() && flawed.sys.reflector(R).next_timer().is_none(), "and nothing ever will");
}

/// Seed 003, kubernetes#104171: the consumer keeps reading the closed channel.
#[test]
fn spin_on_close_busy_loops_without_progress() {
    let (mut flawed, correct) = both(Flaw::SpinOnClose, scope(1, 0, 1), |s| {
        s.serve(R, S0).step(Action::Route(R, S0)).fire_until(R, Timer::WatchAged);
        s.step(Action::Fault(Fault::ServerTimeout(R))).deliver(R);
    });
    assert!(correct.sys.reflector(R).next_timer().is_some_and(|(_, ms)| ms > 0));
    assert!(matches!(correct.sent(R).last(), Some(Request::Watch { .. })));
    assert_eq!(flawed.sys.reflector(R).next_timer(), Some((Timer::Spin, 0)));
    let mark = flawed.mark();
    for _ in 0..100 {
        flawed.step(Action::FireTimer(R));
    }
    let progress = flawed.since(mark).iter().any(|o| !matches!(o, Observed::TimerFired { .. }));
    assert!(!progress, "a hundred zero-delay steps, not one request");
}

/// The client manager alone: two clusters, two requests, one pause.
fn manager_world() -> Config {
    Config {
        reflectors: 0,
        writes: 0,
        faults: 1,
        fault_kinds: FaultKinds::NONE.with(FaultKind::PauseCluster),
        manager: Some(ManagerConfig { clusters: 2, requests: 2 }),
        ..Config::default()
    }
}

/// Cluster 0 goes down; request 0 (for it) goes as far as it can, then request 1 (cluster 1, which
/// syncs when asked).
fn two_requests_cluster_0_down(s: &mut Story) {
    let (r0, r1) = (RequestId(0), RequestId(1));
    s.step(Action::Fault(Fault::PauseCluster(ClusterId(0))));
    for _ in 0..4 {
        s.step(Action::ManagerStep(r0));
    }
    while s.sys.enabled(Action::ManagerStep(r1)) {
        s.step(Action::ManagerStep(r1));
        if s.sys.enabled(Action::ClusterSync(ClusterId(1))) {
            s.step(Action::ClusterSync(ClusterId(1)));
        }
    }
}

/// Seed 004: one unreachable cluster hangs every other cluster's request.
#[test]
fn sync_under_lock_hangs_other_clusters() {
    let (r0, r1) = (RequestId(0), RequestId(1));
    let (flawed, correct) = both(Flaw::SyncUnderLock, manager_world(), two_requests_cluster_0_down);
    let m = correct.sys.manager().unwrap();
    assert_eq!(m.request(r1).unwrap().step, Step::Done(Outcome::Served), "cluster 1 is served");
    assert_eq!(m.held(r0), None);
    assert!(correct.sys.enabled(Action::ManagerTime), "time may pass: cluster 0's caller gets a timeout");

    let m = flawed.sys.manager().unwrap();
    assert_eq!(m.held(r0), Some(LockMode::Write));
    assert_eq!(m.wait(r0).map(|(_, bound)| bound), Some(None), "a wait with no bound");
    assert_eq!(m.request(r1).unwrap().step, Step::WantRead, "cluster 1's request waits for the lock");
    assert!(!flawed.sys.enabled(Action::ManagerStep(r1)));
    let mut flawed = flawed;
    flawed.step(Action::ManagerTime);
    let m = flawed.sys.manager().unwrap();
    assert_eq!(
        m.request(r0).unwrap().step,
        Step::WaitSync { under_lock: true, bounded: false },
        "time changes nothing"
    );
    assert_eq!(m.request(r1).unwrap().step, Step::WantRead, "and cluster 1's request still waits");
}

/// controller-runtime#1219: the wait for a new cluster's sync has no bound, though it is outside the
/// lock: other requests are served, the one that asked hangs while its cluster is unreachable.
#[test]
fn sync_wait_unbounded_hangs_the_request_that_asked_and_no_other() {
    let (r0, r1) = (RequestId(0), RequestId(1));
    let (mut flawed, correct) = both(Flaw::SyncWaitUnbounded, manager_world(), |s| {
        two_requests_cluster_0_down(s);
        s.step(Action::ManagerTime);
    });
    for story in [&flawed, &correct] {
        let m = story.sys.manager().unwrap();
        assert_eq!(
            m.request(r1).unwrap().step,
            Step::Done(Outcome::Served),
            "cluster 1 is served either way"
        );
        assert_eq!(m.held(r0), None, "no lock is held");
    }
    let m = correct.sys.manager().unwrap();
    assert_eq!(m.request(r0).unwrap().step, Step::Done(Outcome::TimedOut), "a timeout error after 30 s");
    let m = flawed.sys.manager().unwrap();
    assert_eq!(m.wait(r0).map(|(_, bound)| bound), Some(None), "a wait with no bound");
    flawed.step(Action::ManagerTime);
    assert_eq!(
        flawed.sys.manager().unwrap().request(r0).unwrap().step,
        Step::WaitSync { under_lock: false, bounded: false }
    );
    assert!(flawed.sys.enabled(Action::ManagerTime), "time goes on passing, and nothing answers it");
    assert!(!correct.sys.enabled(Action::ManagerTime), "every request answered: no one waits");
}

/// kubernetes#59848: after its transport breaks, the reflector relists from a lagging server with rv="0".
#[test]
fn relist_from_stale_cache_brings_a_deleted_object_back() {
    let config = Config { servers: 2, ..scope(1, 2, 2) };
    let (flawed, correct) = both(Flaw::RelistFromStaleCache, config, |s| {
        s.step(Action::Create(A)).ingest(S0).ingest(S1);
        s.serve(R, S0).step(Action::Route(R, S0));
        s.step(Action::Delete(A)).ingest(S0).deliver(R);
        s.step(Action::Fault(Fault::Disconnect(R))).step(Action::Route(R, S1));
        s.step(Action::Fault(Fault::WatchError(R, ApiError::InternalError))).deliver(R);
        s.fire_until(R, Timer::Backoff).step(Action::Route(R, S1)).deliver(R);
        s.ingest(S1).deliver(R);
    });
    assert_eq!(correct.lists(R), vec![ListRv::Any, ListRv::NotOlderThan(Rev(2))]);
    assert!(correct.cache_keys(R).is_empty());
    assert_eq!(correct.sys.view(R).resource_version, Rev(2));
    assert_eq!(flawed.lists(R), vec![ListRv::Any, ListRv::Any]);
    assert_eq!(flawed.cache_keys(R), vec![A], "A, deleted at 2, is back");
    assert!(
        flawed.log.iter().any(|o| matches!(
            o,
            Observed::Received { message: Message::List(Ok(l)), .. } if l.rv == Rev(1)
        )),
        "the relist went back in time from RV 2 to 1"
    );
}

/// kubernetes#91073 / #107133: the cache of the server a reflector sticks to never reaches its RV.
#[test]
fn retry_too_large_rv_never_syncs_again() {
    let config = Config { servers: 2, foreign_writes: 1, ..scope(1, 1, 3) };
    let (flawed, correct) = both(Flaw::RetryTooLargeRv, config, |s| {
        s.step(Action::Create(A)).ingest(S0).ingest(S1);
        s.step(Action::WriteOther); // revision 2: no event for the watched resource
        s.step(Action::Fault(Fault::RelistCache(S0))); // apiserver-0's cache relists at the global RV 2
        s.step(Action::CacheReady(S0)); // and serves again (A14)
        s.serve(R, S0).step(Action::Route(R, S0)).fire_until(R, Timer::WatchAged);
        s.step(Action::Fault(Fault::Disconnect(R))).step(Action::Route(R, S1));
        s.step(Action::Fault(Fault::WatchError(R, ApiError::InternalError))).deliver(R);
        for _ in 0..5 {
            if s.sys.reflector(R).next_timer().map(|t| t.0) == Some(Timer::Backoff) {
                s.fire_until(R, Timer::Backoff);
            }
            if s.sys.enabled(Action::Route(R, S1)) {
                s.step(Action::Route(R, S1)).deliver(R);
            }
            if s.sys.enabled(Action::ListWaitExpired(R)) {
                s.step(Action::ListWaitExpired(R)).deliver(R);
            }
        }
    });
    assert_eq!(correct.lists(R)[1..], [ListRv::NotOlderThan(Rev(2)), ListRv::Consistent]);
    assert!(matches!(correct.sys.reflector(R).phase(), Phase::Watching { from: Rev(2), .. }));
    let flawed_lists = flawed.lists(R);
    assert_eq!(flawed_lists.len(), 6);
    assert!(flawed_lists[1..].iter().all(|rv| *rv == ListRv::NotOlderThan(Rev(2))), "{flawed_lists:?}");
    let ok_lists =
        flawed.log.iter().filter(|o| matches!(o, Observed::Received { message: Message::List(Ok(_)), .. }));
    assert_eq!(ok_lists.count(), 1, "only the first LIST ever succeeded");
}

/// kubernetes#91073 on a control plane mid-upgrade (KEP-1904): apiserver-1 gets etcd progress
/// notifications and apiserver-0 does not, so one write to another resource and one disconnect are enough.
#[test]
fn retry_too_large_rv_on_a_control_plane_with_mixed_progress_notify() {
    let progress_notify = ProgressNotify::only([S1]).expect("a listable server");
    let config = Config { servers: 2, foreign_writes: 1, progress_notify, ..scope(1, 0, 1) };
    let (flawed, correct) = both(Flaw::RetryTooLargeRv, config, |s| {
        s.step(Action::WriteOther); // revision 1: no event for the watched resource
        assert!(!s.sys.enabled(Action::ProgressNotify(S0)), "apiserver-0 does not ask etcd for progress");
        s.step(Action::ProgressNotify(S1)); // apiserver-1's cache moves to 1, apiserver-0's stays at 0
        s.serve(R, S1).step(Action::Route(R, S1)); // LIST rv=0 answered at RV 1, then the watch
        s.step(Action::Fault(Fault::Disconnect(R))); // a very short watch: relist (C5)
        for _ in 0..6 {
            if s.sys.reflector(R).next_timer().map(|t| t.0) == Some(Timer::Backoff) {
                s.fire_until(R, Timer::Backoff);
            }
            if s.sys.enabled(Action::Route(R, S0)) {
                s.serve(R, S0);
            }
            if s.sys.enabled(Action::ListWaitExpired(R)) {
                s.step(Action::ListWaitExpired(R)).deliver(R);
            }
        }
    });
    assert_eq!(correct.lists(R)[1..], [ListRv::NotOlderThan(Rev(1)), ListRv::Consistent]);
    assert!(matches!(correct.sys.reflector(R).phase(), Phase::Watching { from: Rev(1), .. }));
    assert!(correct.sys.settled(), "nothing is in flight: apiserver-0's cache stays at 0 for good");
    let flawed_lists = flawed.lists(R);
    assert_eq!(flawed_lists.len(), 7, "the first LIST, then one per round, all at apiserver-0");
    assert!(flawed_lists[1..].iter().all(|rv| *rv == ListRv::NotOlderThan(Rev(1))), "{flawed_lists:?}");
}

/// C7, the repair of seed 001: a DELETE missed while the watch was down is repaired by the relist.
#[test]
fn replace_keeps_missing_never_repairs_a_missed_delete() {
    let config = Config { cache_window: 1, ..scope(2, 3, 1) };
    let (flawed, correct) = both(Flaw::ReplaceKeepsMissing, config, |s| {
        s.step(Action::Create(A)).ingest(S0);
        s.serve(R, S0).step(Action::Route(R, S0)).fire_until(R, Timer::WatchAged);
        s.step(Action::Fault(Fault::Disconnect(R)));
        s.steps(&[Action::Delete(A), Action::Create(B)]).ingest(S0);
        s.serve(R, S0); // re-watch from 1: older than the window, 410
        s.fire_until(R, Timer::Backoff).serve(R, S0); // relist
    });
    assert_eq!(correct.cache_keys(R), vec![B]);
    assert_eq!(correct.truth_keys(), vec![B]);
    assert_eq!(flawed.cache_keys(R), vec![A, B], "A was deleted at 2 but stays");
}

/// A9, kubernetes#87615: the watch's connection dies silently (no FIN, no RST) right after a write the
/// reflector never hears of. client-go's HTTP/2 health check gives the connection up 45 s later and the
/// reflector re-watches; without it the half-open watch ends only at the watch's own timeout, minutes
/// later (or, during a LIST, which has none, never).
#[test]
fn no_idle_detection_keeps_a_silently_dead_watch_for_minutes() {
    let config = Config { fault_kinds: FaultKinds::NONE.with(FaultKind::SilentDeath), ..scope(1, 2, 1) };
    let (mut flawed, mut correct) = both(Flaw::NoIdleDetection, config, |s| {
        s.step(Action::Create(A)).ingest(S0);
        s.serve(R, S0).step(Action::Route(R, S0)).fire_until(R, Timer::WatchAged);
        s.step(Action::Fault(Fault::SilentDeath(R)));
        s.step(Action::Update(A)).ingest(S0);
    });
    for s in [&correct, &flawed] {
        assert_eq!(s.sys.view(R).resource_version, Rev(1), "the MODIFIED at 2 went nowhere");
        assert!(!s.sys.enabled(Action::Deliver(R)), "nothing arrives on a dead connection");
    }
    // The health check comes before the next timer (the backoff reset, 119 s away).
    assert!(correct.sys.enabled(Action::SilenceNoticed(R)));
    assert!(!correct.sys.enabled(Action::FireTimer(R)), "time cannot jump past the health check");
    let mark = correct.mark();
    correct.step(Action::SilenceNoticed(R)).serve(R, S0);
    assert!(correct.since(mark).contains(&Observed::SilenceNoticed { client: R, after_ms: 45_000 }));
    assert_eq!(correct.sys.view(R).resource_version, Rev(2), "re-watched from 1 and got the update");
    assert!(correct.lists(R).len() == 1, "a re-watch, not a relist");

    assert!(!flawed.sys.enabled(Action::SilenceNoticed(R)), "nothing notices the dead connection");
    let mark = flawed.mark();
    flawed.fire_until(R, Timer::WatchTimeout);
    let waited: u64 = flawed
        .since(mark)
        .iter()
        .map(|o| match o {
            Observed::TimerFired { after_ms, .. } => *after_ms,
            _ => 0,
        })
        .sum();
    assert_eq!(waited, 299_000, "stale until the watch's own timeout, 5 min after it began");
}

/// kubernetes#85221, PR #85272: the pager kept the list's resourceVersion on its continue requests. The
/// API server refuses a continue that names an RV (400), so every paginated relist fails: the reflector
/// backs off and lists again, for ever.
#[test]
fn continue_with_rv_makes_every_paginated_relist_fail() {
    let config = Config {
        fault_kinds: FaultKinds::NONE.with(FaultKind::InternalError),
        reflector: listwatch_model::ReflectorConfig { page_size: Some(1), ..Default::default() },
        ..scope(2, 2, 1)
    };
    let (flawed, correct) = both(Flaw::ContinueWithRv, config, |s| {
        s.steps(&[Action::Create(A), Action::Create(B)]).ingest(S0);
        s.serve(R, S0); // the first LIST, rv="0", is served whole: no pages
        s.step(Action::Route(R, S0)).fire_until(R, Timer::WatchAged);
        s.step(Action::Fault(Fault::WatchError(R, ApiError::InternalError))).deliver(R);
        for _ in 0..3 {
            if s.sys.reflector(R).next_timer().map(|t| t.0) == Some(Timer::Backoff) {
                s.fire_until(R, Timer::Backoff); // a relist, in pages of one
            }
            while s.sys.enabled(Action::Route(R, S0)) {
                s.serve(R, S0);
            }
        }
    });
    let continues = |s: &Story| {
        s.sent(R)
            .into_iter()
            .filter_map(|r| match r {
                Request::ListPage { rv, cont: Some(_), .. } => Some(rv),
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(continues(&correct), vec![ListRv::Consistent], "one continue, naming no RV");
    assert!(correct.sys.view(R).synced && correct.sys.view(R).resource_version == Rev(2));
    assert!(continues(&flawed).iter().all(|rv| *rv == ListRv::NotOlderThan(Rev(2))));
    assert!(continues(&flawed).len() >= 3, "each relist's continue is refused: {:?}", flawed.sent(R));
    assert!(flawed
        .log
        .iter()
        .any(|o| matches!(o, Observed::Received { message: Message::List(Err(ApiError::BadRequest)), .. })));
    assert_eq!(
        flawed.sys.reflector(R).phase(),
        Phase::Backoff { then: listwatch_model::Next::Relist },
        "still relisting"
    );
}

/// kubernetes#110210 (open): a lease revoked deletes A and B at one revision (E8); the stream breaks
/// after DELETED A. client-go resumes from the RV of that DELETE and never hears of B's; listwatch's
/// reflector resumes from the last RV it knows complete and gets the whole revision again.
#[test]
fn resume_mid_revision_loses_the_rest_of_a_lease_revoke() {
    let config = Config {
        lease_revokes: 1,
        fault_kinds: FaultKinds::NONE.with(FaultKind::Disconnect),
        ..scope(2, 2, 1)
    };
    let (mut flawed, mut correct) = both(Flaw::ResumeMidRevision, config, |s| {
        s.steps(&[Action::Create(A), Action::Create(B)]).ingest(S0);
        s.serve(R, S0).step(Action::Route(R, S0));
        s.step(Action::RevokeLease).ingest(S0);
        s.step(Action::Deliver(R)); // DELETED A at 3; DELETED B at 3 still on the wire
        s.step(Action::Fault(Fault::Disconnect(R)));
    });
    for s in [&correct, &flawed] {
        assert_eq!(s.sys.store().watched_keys_at(Rev(3)), vec![A, B], "one revision, two keys");
        assert_eq!(s.sys.view(R).resource_version, Rev(3));
        assert_eq!(s.cache_keys(R), vec![B], "B's DELETE was lost with the connection");
    }
    let rewatch_from = |s: &Story| match s.sent(R).last() {
        Some(Request::Watch { from: listwatch_model::WatchFrom::Rv(rv), .. }) => *rv,
        other => panic!("expected a re-watch, got {other:?}"),
    };
    assert_eq!(rewatch_from(&flawed), Rev(3), "client-go: from the last event's RV");
    assert_eq!(rewatch_from(&correct), Rev(2), "the last RV known complete: the LIST's");
    correct.serve(R, S0);
    flawed.serve(R, S0);
    assert!(correct.cache_keys(R).is_empty(), "the revision came again; B's DELETE with it");
    assert_eq!(rvs(&correct.received_events(R)), vec![3, 3, 3], "DELETED A, then A and B again");
    assert_eq!(flawed.cache_keys(R), vec![B], "B stays until a relist: nothing more will come");
    assert!(flawed.sys.store().truth_at(Rev(3)).is_empty());
}

/// SEMANTICS E8, the watch cache's side: a lease revoked deletes A and B at one revision, which etcd
/// sends whole. k8s.io/apiserver's watch cache applies its events one at a time and sets its RV to 3
/// with the first; a LIST at "0" served then is at RV 3 and still holds B. The reflector watches from
/// 3, so B's DELETE, at 3, is never sent to it: B stays in its cache, deleted everywhere else.
#[test]
fn partial_revision_served_lists_a_revision_in_part_and_its_rest_is_never_sent() {
    let config = Config { lease_revokes: 1, ..scope(2, 2, 0) };
    let (flawed, correct) = both(Flaw::PartialRevisionServed, config, |s| {
        s.steps(&[Action::Create(A), Action::Create(B)]).ingest(S0);
        s.steps(&[Action::RevokeLease, Action::Ingest(S0)]);
        s.serve(R, S0).serve(R, S0); // the LIST, then the WATCH from its RV
        s.ingest(S0).deliver(R);
    });
    for s in [&correct, &flawed] {
        assert_eq!(s.sys.store().watched_keys_at(Rev(3)), vec![A, B], "one revision, two keys");
        assert!(s.truth_keys().is_empty());
        assert_eq!(s.sys.view(R).resource_version, Rev(3), "listed at the revoke's RV");
        assert!(
            matches!(s.sent(R)[..], [Request::List { rv: ListRv::Any, .. }, Request::Watch { .. }]),
            "{:?}",
            s.sent(R)
        );
        assert!(s.received_events(R).is_empty(), "nothing newer than 3 to send");
    }
    assert!(correct.cache_keys(R).is_empty(), "the revision was taken whole before the LIST read it");
    assert_eq!(flawed.cache_keys(R), vec![B], "the LIST read the cache between the two DELETEs");
}

fn watch_list(config: Config) -> Config {
    let reflector =
        listwatch_model::ReflectorConfig { mode: listwatch_model::ListMode::WatchList, ..config.reflector };
    Config { reflector, ..config }
}

/// kube-rs#1844 (fixed by #1882): in watch-list mode the watcher's re-watch after its watch timed out
/// asks for the initial events again. The server sends the state at its RV, not the changes since the
/// reflector's: A, deleted while the watch was down, is in neither, and stays in the cache.
#[test]
fn rewatch_initial_events_resends_the_state_and_never_removes_what_was_deleted_meanwhile() {
    let config =
        watch_list(Config { fault_kinds: FaultKinds::NONE.with(FaultKind::ServerTimeout), ..scope(2, 3, 1) });
    let (flawed, correct) = both(Flaw::RewatchInitialEvents, config, |s| {
        s.steps(&[Action::Create(A), Action::Create(B)]).ingest(S0);
        s.serve(R, S0).fire_until(R, Timer::WatchAged);
        s.step(Action::Fault(Fault::ServerTimeout(R))).deliver(R);
        s.step(Action::Delete(A)).ingest(S0);
        s.serve(R, S0);
    });
    for s in [&correct, &flawed] {
        assert!(
            matches!(s.sent(R)[0], Request::WatchList { rv: ListRv::Consistent, .. }),
            "the first: a stream"
        );
    }
    assert!(matches!(correct.sent(R)[1], Request::Watch { .. }), "the re-watch: a plain WATCH");
    assert_eq!(correct.cache_keys(R), vec![B], "the DELETE of A came on the re-watch");
    assert!(
        matches!(flawed.sent(R)[1], Request::WatchList { rv: ListRv::NotOlderThan(Rev(2)), .. }),
        "the re-watch asks for the initial events: {:?}",
        flawed.sent(R)
    );
    let resent = flawed.received_events(R).iter().filter(|e| matches!(e, WatchEvent::Added(_))).count();
    assert_eq!(resent, 3, "A and B, then B again: the whole state resent");
    assert_eq!(flawed.cache_keys(R), vec![A, B], "A was deleted at 3 and stays");
    assert_eq!(flawed.truth_keys(), vec![B]);
}

/// kube-runtime 4.x (SEMANTICS C10): a streaming list breaks after its first initial event; before the
/// retry's stream is served, that object is deleted. The flawed watcher keeps the aborted stream's
/// buffer and hands it to `Replace` with the new one.
#[test]
fn partial_initial_buffer_leaks_an_aborted_stream_into_the_next_replace() {
    let config =
        watch_list(Config { fault_kinds: FaultKinds::NONE.with(FaultKind::Disconnect), ..scope(1, 2, 1) });
    let (flawed, correct) = both(Flaw::PartialInitialBuffer, config, |s| {
        s.step(Action::Create(A)).ingest(S0);
        s.step(Action::Route(R, S0)).step(Action::Deliver(R)); // ADDED A; the end bookmark still on the wire
        s.step(Action::Fault(Fault::Disconnect(R)));
        s.step(Action::Delete(A)).ingest(S0);
        s.serve(R, S0);
    });
    for s in [&correct, &flawed] {
        let streams = s.sent(R).iter().filter(|r| matches!(r, Request::WatchList { .. })).count();
        assert_eq!(streams, 2, "the stream that broke after an event is retried at once");
        assert!(s.sys.view(R).synced && s.sys.view(R).resource_version == Rev(2));
    }
    assert!(correct.cache_keys(R).is_empty(), "the retry's Replace holds the state at 2: nothing");
    assert_eq!(flawed.cache_keys(R), vec![A], "A, deleted at 2, leaked from the aborted stream");
}

/// kubernetes#6488: an ERROR 500 on the open watch, read before the server's close of the stream
/// arrives; the reflector backs off and lists again. The correct one closed the stream on the ERROR;
/// the flawed one sends its LIST with the stream still open.
#[test]
fn leak_watch_on_error_sends_its_next_request_with_the_stream_open() {
    let (flawed, correct) = both(Flaw::LeakWatchOnError, scope(1, 0, 1), |s| {
        s.serve(R, S0).step(Action::Route(R, S0));
        s.step(Action::Fault(Fault::WatchError(R, ApiError::InternalError))).step(Action::Deliver(R));
        s.fire_until(R, Timer::Backoff);
    });
    let left = |s: &Story| s.since(0).iter().filter(|o| matches!(o, Observed::LeftOpen { .. })).count();
    let closed = |s: &Story| s.since(0).iter().filter(|o| matches!(o, Observed::Cancelled { .. })).count();
    assert_eq!((left(&correct), closed(&correct)), (0, 1), "the stream is closed on the ERROR event");
    assert_eq!((left(&flawed), closed(&flawed)), (1, 0), "the LIST goes out with the stream still open");
    assert_eq!(flawed.lists(R), correct.lists(R), "both list again after the backoff");
}

/// kubernetes#57074: the first LIST is refused with a 500; the reflector backs off and lists again.
/// The correct one tells its user of the failure first (C12: the watch error handler); the flawed one
/// only logs it, so the code that owns the cache cannot know.
#[test]
fn untold_failures_retries_without_telling_its_user() {
    let (flawed, correct) = both(Flaw::UntoldFailures, scope(1, 0, 1), |s| {
        s.step(Action::Fault(Fault::Refuse(R, ApiError::InternalError)));
        s.fire_until(R, Timer::Backoff);
    });
    let told = |s: &Story| s.since(0).iter().filter(|o| matches!(o, Observed::Told { .. })).count();
    assert_eq!(told(&correct), 1, "the failed LIST is told once");
    assert_eq!(told(&flawed), 0, "nothing is told");
    let first_told = correct.since(0).iter().position(|o| matches!(o, Observed::Told { .. }));
    let second_list = correct.since(0).iter().rposition(|o| matches!(o, Observed::Sent { .. }));
    assert!(first_told < second_list, "told before the next LIST: {:?}", correct.since(0));
    assert_eq!(flawed.lists(R), correct.lists(R), "both list again after the backoff");
    assert_eq!(correct.lists(R).len(), 2);
}
