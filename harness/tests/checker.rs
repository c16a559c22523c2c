//! The exhaustive checker proves the correct system in the small scope, reaches every witness, and
//! catches every catalogue flaw with a shortest counterexample (in release, this run's share of the
//! flaws: `support/share.rs`).

#[path = "support/caught_by.rs"]
mod caught_by;
#[path = "support/share.rs"]
mod share;

use listwatch_harness::checker::{run, Limits, Outcome, Search};
use listwatch_harness::scope::{self, worlds, Scope};
use listwatch_model::{Flaw, Flaws};
use listwatch_properties::Property;

fn limits(stop_at_violation: bool) -> Limits {
    Limits::states(5_000_000, stop_at_violation)
}

fn check(flaws: Flaws, search: Search, stop: bool) -> Vec<Outcome> {
    worlds(Scope::Small, flaws).into_iter().map(|w| run(w.config, search, limits(stop))).collect()
}

/// The correct system holds in every world of the small scope, every witness is reached, and each
/// world has exactly its pinned number of states.
#[test]
fn the_correct_system_holds_in_small_and_every_witness_is_reached() {
    let outcomes = check(Flaws::NONE, Search::Bfs, false);
    for o in &outcomes {
        assert!(o.complete, "the whole scope was explored");
        let broken: Vec<_> = o.violated().map(|v| v.counterexample.as_ref().unwrap().1.to_string()).collect();
        assert!(broken.is_empty(), "{broken:#?}");
    }
    for p in Property::ALL {
        let reached = outcomes.iter().any(|o| o.verdicts.iter().any(|v| v.property == p && v.witnessed()));
        assert!(reached, "witness of {p} not reached: {}", p.witness());
    }
    let states: Vec<usize> = outcomes.iter().map(|o| o.states).collect();
    assert_eq!(
        states, PINNED,
        "any change to the model shows here: update the numbers only for one you meant"
    );
}

/// Depth-first search sees the same state space.
#[test]
#[ignore = "20 s in the test profile: .ci/run runs it in release"]
fn dfs_sees_the_state_space_bfs_sees() {
    let dfs: Vec<usize> = check(Flaws::NONE, Search::Dfs, false).iter().map(|o| o.states).collect();
    assert_eq!(dfs, PINNED, "both searches see the same state space");
}

/// Unique states of each small world, in `worlds` order.
const PINNED: [usize; 10] = [
    BFS_LIST_WATCH,
    WATCH_LIST,
    MANAGER,
    MID_UPGRADE,
    SLOW_ETCD_WATCHER,
    TWO_REFLECTORS,
    PAGINATED,
    LEASE_REVOKE,
    SLOW_CONSUMER,
    FAILING_SERVER,
];

// The monitor is part of the state. These grew (from 11,481 / 312 / 15,620) when it began to remember
// what the backoff, notification and staleness properties need: a failure not yet waited out, the
// handlers' view of the cache, stale time once quiet, a request served while a cluster is unreachable,
// a bookmark past the last event, whether a full list arrived. The manager's world has three requests
// over two clusters since, so that two race to create one informer; and a 429 may now also end an open
// watch as an ERROR event, which every world with faults explores. The two worlds that evict from a
// watch cache grew (from 18,997 / 90,013) when A4's threshold became `oldest - 1` of what is still
// buffered: a watch from between the evicted event and the next one is now refused with 410, as upstream.
// Every world with faults grew again (from 13,724 / 19,093 / 90,253 / 108,354) with A9's silent
// connection death, which the reflector's HTTP/2 health check notices 45 s later; and again (to 21,838 /
// 28,711 / 144,620 / 211,408) with A14: a cache that relists or restarts answers 429 until it has
// listed again, a step of its own that every interleaving with the clients' requests is explored for.
// A8 grew them once more (to 28,454 / 35,039 / 186,125 / 313,681): a bookmark may now carry the RV of
// the last event sent, once after each event.
// E8 grew every world with a reflector (to 41,752 / 45,382 / 268,495 / 595,471 / 336,521): the
// reflector knows which RV it has seen complete (a LIST's, a bookmark's, an event's followed by a later
// one) and re-watches from it while its last revision is not known complete, so a watch that ends
// before the bookmark after an event gets that revision again; the monitor follows the same three
// facts. A fairness rule takes some states away: a client's own watch timeout does not fire while
// events already sent wait on its connection. A revision received again is not progress (C5).
// Every world grew when the monitor began to keep each guarantee's own history: `reads-fresh` remembers
// the revision a read was sent at (the watch-list world most: from 58,427, every streaming list is a
// consistent read), `requests-answered` the model time a request has waited. The manager's world
// shrank (from 2,696): model time passes for it only while no request can move, in one step for all.
// Every world with a reflector shrank (from 42,396 / 92,774 / 46,455 / 272,403 / 595,471 / 333,489 /
// 17,447 / 13,774) when the fairness rule grew: a client-side request timeout no longer cuts a request
// still on its way (unrouted, answered but unread, or in a server's bounded wait). The watch-list world
// most: its streaming lists wait for a fresh cache, and each wait could end by the client's timeout.
// C1's growth (the backoff owed doubles with each backoff waited out in a row with no progress)
// grew every world whose faults can fail a request (from 41,078 / 59,748 / 45,209 / 264,647 / 532,488
// / 327,445 / 17,277 / 13,705): the monitor remembers how many backoffs a client has waited out in a
// row, and a broken connection, which a REST layer retries at its own pace, owes the floor only.
const BFS_LIST_WATCH: usize = 41_617;
// C10's world: the list-watch world's reflector in watch-list mode (one write fewer), whose every
// (re)list is a streaming list (A12). Adding it changed no other world: list-watch mode steps the
// same states as before. It shrank (from 59,009), and so did the control plane mid-upgrade and the
// paginated world (from 45,382 and 318,887), when the one LIST allowed at once after a failed one (C2's
// consistent retry, A13's pager fallback, C10's restart) stopped counting as another request once the
// environment is quiet: the monitor remembers fewer different counts.
// The two worlds where a server's wait for a fresh cache can end (A2, A12) grew (from 61,180 / 45,476)
// when `requests-answered` began to remember the requests a server owes an answer after its wait.
const WATCH_LIST: usize = 62_679;
const MANAGER: usize = 1_400;
const MID_UPGRADE: usize = 45_906;
const SLOW_ETCD_WATCHER: usize = 268_072;
const TWO_REFLECTORS: usize = 537_554;
// A13's world: a relist in pages of one item among three writes and a compaction. It shrank (from
// 336,521) when a paginated NotOlderThan LIST came to be served by the watch cache at its RV, as the
// real cacher does (found by `conformance apiserver`), rather than read from etcd at its revision.
const PAGINATED: usize = 332_073;
// E8's world: a lease revoked deletes two objects at one revision, and one fault may end the stream
// between their DELETE events (kubernetes#110210).
const LEASE_REVOKE: usize = 17_506;
/// C7 with a consumer held while an ADD waits in its queue (PR #115620): one object, its create and
/// delete, the hold and a 500.
const SLOW_CONSUMER: usize = 14_605;
/// C1 while a server keeps failing: one object, one write, and two faults (a 500, a refused
/// connection, or one of A15's statuses) that can fail two requests in a row, so that the second
/// backoff must double (kubernetes#87794). It grew (from 1,413) when A15's statuses joined it.
const FAILING_SERVER: usize = 3_609;

/// With etcd 3.4's compaction (the tombstone at the compaction revision dropped) an etcd watch that fell
/// behind and resumes exactly there skips that delete (etcd#18274): the correct system breaks, and no
/// client could repair it. The slow-etcd-watcher world therefore runs etcd >= 3.5.16's policy; over a
/// named release (`--etcd`, `Config::over_etcd`) it runs that release's, and breaks up to 3.5.15.
#[test]
fn etcd_3_4_loses_a_delete_to_a_slow_watcher_at_the_compaction_revision() {
    use listwatch_model::EtcdRelease;
    let world = scope::world(Scope::Small, Flaws::NONE, "slow-etcd-watcher").expect("a world");
    for old in [EtcdRelease::new(3, 4, 23), EtcdRelease::new(3, 5, 15)] {
        let o = run(world.config.over_etcd(old), Search::Bfs, limits(true));
        let v = o.violated().next().unwrap_or_else(|| panic!("etcd#18274 is found over {old}"));
        assert!(matches!(v.property, Property::WatchReliable | Property::Converges), "{old}: {}", v.property);
    }
    for fixed in [EtcdRelease::new(3, 5, 16), EtcdRelease::new(3, 6, 16), EtcdRelease::new(3, 7, 3)] {
        let o = run(world.config.over_etcd(fixed), Search::Bfs, limits(false));
        assert!(o.violated().next().is_none(), "{fixed} holds");
    }
    assert!(run(world.config, Search::Bfs, limits(false)).violated().next().is_none(), "3.5.16+ holds");
}

#[test]
#[ignore = "a minute in the test profile: .ci/run runs it in release (cargo test finds every flaw with proptest, the simulator and the corpus)"]
fn every_flaw_is_caught_by_its_property_with_a_shortest_trace() {
    // The shortest counterexample's steps in the small scope, flaw by flaw.
    let expected = [
        (Flaw::StaleDeleteRv, 8),
        (Flaw::NilPrevKvDropped, 7),
        (Flaw::RelistOnTimeout, 6),
        // One step more than its corpus trace (recorded before A14): the relisted cache's readiness.
        (Flaw::StopOnClose, 8),
        (Flaw::SpinOnClose, 13),
        (Flaw::SyncUnderLock, 4),
        (Flaw::RelistFromStaleCache, 9),
        // Also one step more than its corpus trace: the relisted cache's readiness (A14).
        (Flaw::RetryTooLargeRv, 26),
        (Flaw::ReplaceKeepsMissing, 10),
        (Flaw::NoIdleDetection, 7),
        (Flaw::ContinueWithRv, 26),
        (Flaw::ResumeMidRevision, 12),
        // Every request reaches its wait before model time passes: three requests, then two minutes.
        (Flaw::SyncWaitUnbounded, 12),
        (Flaw::ConsistentReadLags, 5),
        // A refused LIST, then the LIST after the backoff.
        (Flaw::UntoldFailures, 2),
        // Two creates and the revoke, the cache's three steps to the first DELETE, the LIST.
        (Flaw::PartialRevisionServed, 8),
    ];
    for (flaw, steps) in share::share(expected) {
        let property = caught_by::named(flaw);
        let outcomes = check(Flaws::only(flaw), Search::Bfs, true);
        let found =
            outcomes.iter().find_map(|o| o.violated().next()).unwrap_or_else(|| panic!("{flaw} not caught"));
        let (actions, _) = found.counterexample.as_ref().unwrap();
        assert_eq!((flaw, found.property, actions.len()), (flaw, property, steps));
    }
}

/// A panic in the search (here, a client that cannot be made) fails the run: the watch that enforces
/// the limits does not wait forever for a search thread that has died.
#[test]
fn a_panic_in_the_search_fails_the_run_instead_of_hanging_it() {
    use listwatch_harness::checker::{run_with, CheckModel};
    use listwatch_model::{ClientId, Config, ModelClient};
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let config = Scope::Small.config();
        let model = CheckModel::with_clients(config, |_: &Config, _: ClientId| -> ModelClient {
            panic!("a client that cannot be made")
        });
        let search =
            std::panic::AssertUnwindSafe(|| run_with(model, Search::Bfs, Limits::states(1_000, true)));
        let run = std::panic::catch_unwind(search);
        let _ = tx.send(run.is_err());
    });
    let panicked = rx
        .recv_timeout(std::time::Duration::from_secs(120))
        .expect("the run still waits, two minutes after its search thread panicked");
    assert!(panicked, "the run ended without the search's panic");
}
