//! SEMANTICS E1–E8: the etcd store, one test (or more) per rule.

use listwatch_model::store::{
    EventKind, Prefix, ReadError, Store, TombstonePolicy, WatchResponse, WriteError,
};
use listwatch_model::{Key, Rev};

const A: Key = Key(0);
const B: Key = Key(1);

fn store() -> Store {
    Store::new(TombstonePolicy::DropAtCompaction, None)
}

fn event(r: Option<WatchResponse>) -> listwatch_model::store::StoreEvent {
    match r {
        Some(WatchResponse::Event(e)) => e,
        other => panic!("expected an event, got {other:?}"),
    }
}

#[test]
fn e1_every_write_takes_the_next_global_revision() {
    let mut s = store();
    assert_eq!(s.put(Prefix::Watched, A).mod_rev, Rev(1));
    assert_eq!(s.put(Prefix::Other, Key(9)).mod_rev, Rev(2), "other resources share the counter");
    assert_eq!(s.delete(Prefix::Watched, A), Ok(Rev(3)));
    assert_eq!(s.put(Prefix::Watched, B).mod_rev, Rev(4));
    assert_eq!(s.rev(), Rev(4));
}

#[test]
fn e2_key_metadata_and_new_incarnation_after_delete() {
    let mut s = store();
    let created = s.put(Prefix::Watched, A);
    assert_eq!((created.create_rev, created.mod_rev, created.version), (Rev(1), Rev(1), 1));
    let updated = s.put(Prefix::Watched, A);
    assert_eq!((updated.create_rev, updated.mod_rev, updated.version), (Rev(1), Rev(2), 2));
    s.delete(Prefix::Watched, A).unwrap();
    assert_eq!(s.get(A), None);
    let again = s.put(Prefix::Watched, A);
    assert_eq!((again.create_rev, again.version), (Rev(4), 1), "a new incarnation");
    assert_ne!(again.object().uid, updated.object().uid);
    assert_eq!(s.delete(Prefix::Watched, B), Err(WriteError::NotFound));
}

#[test]
fn e3_delete_events_carry_only_key_and_revision() {
    let mut s = store();
    s.put(Prefix::Watched, A);
    s.watch(0, Rev(2)).unwrap();
    s.delete(Prefix::Watched, A).unwrap();
    let e = event(s.send_next(0));
    assert_eq!((e.rev, e.key, e.kind), (Rev(2), A, EventKind::Delete));
    assert_eq!(e.prev.map(|kv| kv.mod_rev), Some(Rev(1)), "the old value only through prev_kv");
}

#[test]
fn e4_compaction_bounds_and_reads_below_it_fail() {
    let mut s = store();
    s.put(Prefix::Watched, A); // 1
    s.put(Prefix::Watched, A); // 2
    s.put(Prefix::Watched, B); // 3
    assert_eq!(s.compact(Rev(4)), Err(WriteError::BadCompaction { compacted: Rev(0), current: Rev(3) }));
    s.compact(Rev(2)).unwrap();
    assert_eq!(s.compact(Rev(2)), Err(WriteError::BadCompaction { compacted: Rev(2), current: Rev(3) }));
    assert_eq!(s.range(Some(Rev(1))), Err(ReadError::Compacted { compacted: Rev(2) }));
    assert_eq!(s.range(Some(Rev(4))), Err(ReadError::FutureRev { current: Rev(3) }));
    // The newest revision <= C of each key survives: A@2 is readable at 2.
    let at2 = s.range(Some(Rev(2))).unwrap();
    assert_eq!(at2.kvs.iter().map(|kv| (kv.key, kv.mod_rev)).collect::<Vec<_>>(), vec![(A, Rev(2))]);
    assert_eq!(s.get_at(A, Some(Rev(1))), Err(ReadError::Compacted { compacted: Rev(2) }));
}

/// etcd#18274: with 3.4's rule a tombstone exactly at C vanishes, so a watch from C misses the delete;
/// 3.5.16 keeps it.
#[test]
fn e4_tombstone_at_compaction_revision_by_policy() {
    for (policy, sees_delete) in
        [(TombstonePolicy::DropAtCompaction, false), (TombstonePolicy::KeepAtCompactRev, true)]
    {
        let mut s = Store::new(policy, None);
        s.put(Prefix::Watched, A); // 1
        s.delete(Prefix::Watched, A).unwrap(); // 2
        s.put(Prefix::Watched, B); // 3
        s.compact(Rev(2)).unwrap();
        s.watch(0, Rev(2)).unwrap();
        let first = event(s.send_next(0));
        assert_eq!(first.kind == EventKind::Delete, sees_delete, "{policy:?}");
    }
}

#[test]
fn e5_watch_start_is_inclusive_and_refused_below_compaction() {
    let mut s = store();
    s.put(Prefix::Watched, A); // 1
    s.put(Prefix::Watched, B); // 2
    s.put(Prefix::Watched, A); // 3
    s.watch(0, Rev(2)).unwrap();
    assert_eq!(event(s.send_next(0)).rev, Rev(2), "inclusive");
    assert_eq!(event(s.send_next(0)).rev, Rev(3));
    assert_eq!(s.send_next(0), None);
    s.compact(Rev(3)).unwrap();
    assert_eq!(s.watch(1, Rev(2)), Err(ReadError::Compacted { compacted: Rev(3) }));
}

#[test]
fn e5_a_watch_from_a_future_revision_starts_exactly_there() {
    for buffer in [None, Some(1)] {
        let mut s = Store::new(TombstonePolicy::DropAtCompaction, buffer);
        s.put(Prefix::Watched, A);
        s.watch(0, Rev(4)).unwrap();
        s.put(Prefix::Watched, A); // rev 2: before the start
        s.put(Prefix::Watched, B); // rev 3: before the start
        assert!(!s.watch_ready(0), "nothing below the start revision is sent (buffer {buffer:?})");
        s.put(Prefix::Watched, B); // rev 4: the start, inclusive
        let e = event(s.send_next(0));
        assert_eq!((e.rev, e.key), (Rev(4), B), "buffer {buffer:?}");
        assert_eq!(s.send_next(0), None);
    }
}

#[test]
fn e5_slow_watcher_that_falls_below_compaction_is_cancelled() {
    let mut s = Store::new(TombstonePolicy::DropAtCompaction, Some(1));
    s.watch(0, Rev(1)).unwrap();
    s.put(Prefix::Watched, A); // 1: buffered
    s.put(Prefix::Watched, A); // 2: buffer full, the watcher falls behind
    s.put(Prefix::Watched, A); // 3
    s.compact(Rev(3)).unwrap();
    assert_eq!(event(s.send_next(0)).rev, Rev(1), "what was buffered is still sent");
    assert_eq!(s.send_next(0), Some(WatchResponse::Cancelled { compacted: Rev(3) }));
    assert!(!s.has_watch(0));
}

/// Found by the simulator (seed 485): a slow watcher whose next revision is exactly the compaction revision
/// is not cancelled (E5: it is not below it) and, with etcd < 3.5.16, skips a tombstone there (etcd#18274).
/// The watch cache behind it never learns of the delete; no reflector can repair that.
#[test]
fn e4_e5_slow_watcher_resuming_at_compaction_skips_its_tombstone_before_etcd_3_5_16() {
    for (policy, sees_delete) in
        [(TombstonePolicy::DropAtCompaction, false), (TombstonePolicy::KeepAtCompactRev, true)]
    {
        let mut s = Store::new(policy, Some(1));
        s.watch(0, Rev(1)).unwrap();
        s.put(Prefix::Watched, A); // 1: buffered
        s.delete(Prefix::Watched, A).unwrap(); // 2: buffer full, the watcher falls behind
        s.put(Prefix::Watched, B); // 3
        assert_eq!(event(s.send_next(0)).rev, Rev(1));
        s.compact(Rev(2)).unwrap();
        let next = event(s.send_next(0));
        assert_eq!(next.kind == EventKind::Delete, sees_delete, "{policy:?}: got {next:?}");
        assert_eq!(next.rev, if sees_delete { Rev(2) } else { Rev(3) }, "{policy:?}");
    }
}

/// etcd#10681: prev_kv is looked up when the event is sent; compacted meanwhile, it is silently nil.
#[test]
fn e6_prev_kv_is_nil_if_compacted_before_send() {
    let mut s = store();
    s.put(Prefix::Watched, A); // 1
    s.watch(0, Rev(2)).unwrap();
    s.delete(Prefix::Watched, A).unwrap(); // 2, queued on the watch
    s.compact(Rev(2)).unwrap();
    let e = event(s.send_next(0));
    assert_eq!((e.rev, e.kind, e.prev), (Rev(2), EventKind::Delete, None));

    let mut t = store();
    t.put(Prefix::Watched, A);
    t.watch(0, Rev(2)).unwrap();
    t.delete(Prefix::Watched, A).unwrap();
    assert!(event(t.send_next(0)).prev.is_some(), "without the compaction prev_kv is there");
}

#[test]
fn e7_progress_only_when_caught_up() {
    let mut s = store();
    s.watch(0, Rev(1)).unwrap();
    s.put(Prefix::Watched, A); // 1
    assert_eq!(s.progress(0), None, "an event is still pending");
    event(s.send_next(0));
    s.put(Prefix::Other, Key(5)); // 2: no event for the watched prefix
    assert_eq!(s.progress(0), Some(Rev(2)));
}

#[test]
fn e8_a_multi_key_delete_takes_one_revision_and_its_events_share_it() {
    let mut s = store();
    s.put(Prefix::Watched, A);
    s.put(Prefix::Watched, B);
    s.watch(0, Rev(3)).unwrap();
    let (rev, deleted) = s.delete_all(Prefix::Watched, &[A, Key(7), B]).unwrap();
    assert_eq!((rev, deleted), (Rev(3), vec![A, B]), "a missing key is left alone");
    assert_eq!(s.rev(), Rev(3), "one transaction, one revision");
    let (first, second) = (event(s.send_next(0)), event(s.send_next(0)));
    assert_eq!((first.rev, first.key), (Rev(3), A));
    assert_eq!((second.rev, second.key), (Rev(3), B), "non-decreasing order, unique per (rev, key)");
    assert_eq!(second.prev.map(|kv| kv.mod_rev), Some(Rev(2)));
    assert_eq!(s.delete_all(Prefix::Watched, &[A, B]), Err(WriteError::NotFound));
    assert_eq!(s.rev(), Rev(3), "a transaction that deletes nothing does not move the revision");
}

#[test]
fn e8_a_full_watcher_never_splits_a_revision() {
    let mut s = Store::new(TombstonePolicy::DropAtCompaction, Some(1));
    for k in 0..3 {
        s.put(Prefix::Watched, Key(k));
    }
    s.delete_all(Prefix::Watched, &[Key(0), Key(1), Key(2)]).unwrap();
    s.put(Prefix::Watched, A);
    s.watch(0, Rev(4)).unwrap();
    let revs: Vec<(Rev, Key)> = std::iter::from_fn(|| match s.send_next(0) {
        Some(WatchResponse::Event(e)) => Some((e.rev, e.key)),
        _ => None,
    })
    .collect();
    assert_eq!(revs, vec![(Rev(4), Key(0)), (Rev(4), Key(1)), (Rev(4), Key(2)), (Rev(5), A)]);
}

/// E8: a lease revoked deletes every object attached to it in one transaction: one revision, several
/// keys; the watch cache takes the revision whole and dispatches both events at that RV.
#[test]
fn e8_a_lease_revoke_deletes_several_keys_at_one_revision() {
    use listwatch_model::{Action, Config, Observed, System};
    let config = Config { keys: 2, writes: 2, lease_revokes: 1, faults: 0, ..Config::default() };
    let mut sys = System::new(config);
    assert!(!sys.enabled(Action::RevokeLease), "one live object or none: no multi-key revision");
    sys.apply(Action::Create(Key(0)));
    sys.apply(Action::Create(Key(1)));
    assert!(sys.enabled(Action::RevokeLease));
    let seen = sys.apply(Action::RevokeLease);
    let wrote: Vec<_> = seen
        .iter()
        .filter_map(|o| match o {
            Observed::Wrote { rev, key, deleted: true } => Some((rev.0, key.0)),
            _ => None,
        })
        .collect();
    assert_eq!(wrote, vec![(3, 0), (3, 1)]);
    assert_eq!(sys.store().rev(), Rev(3), "one revision for both deletes");
    assert!(sys.quiet() || sys.budget().faults > 0 || sys.budget().compactions > 0);
    // The cache takes creates one revision a step, and the revoke's two deletes in one step.
    let ingested = |sys: &mut System| {
        sys.apply(Action::Ingest(listwatch_model::ServerId(0)))
            .iter()
            .filter(|o| matches!(o, Observed::Ingested { .. }))
            .count()
    };
    assert_eq!((ingested(&mut sys), ingested(&mut sys), ingested(&mut sys)), (1, 1, 2));
    assert_eq!(sys.servers()[0].cache().rv(), Rev(3));
}

#[test]
fn e7_etcd_3_6_sends_no_progress_to_a_watch_that_starts_in_the_future() {
    // Found by `conformance etcd --etcd 3.6`: a progress request on a watch from a future revision gets
    // no answer until the store reaches that revision; etcd 3.4.23 answers it with the current one.
    for (after_start, before) in [(false, Some(Rev(1))), (true, None)] {
        let mut s = store().with_progress_after_start(after_start);
        s.put(Prefix::Other, Key(5)); // 1
        s.watch(0, Rev(3)).unwrap();
        assert_eq!(s.progress(0), before);
        s.put(Prefix::Other, Key(5)); // 2
        assert_eq!(s.progress(0), before.map(|_| Rev(2)));
        s.put(Prefix::Other, Key(5)); // 3: the start is reached
        assert_eq!(s.progress(0), Some(Rev(3)));
    }
}
