//! client-go under listwatch: its first requests per configuration, the determinism of a run, campaigns
//! that finish with verdicts, and a Go program that is missing, broken or dies named as such. Needs the
//! Go program (`scripts/build-client-go`); `.ci/run` builds it first.

use listwatch_client_go::ClientGo;
use listwatch_harness::replay::judge_with;
use listwatch_harness::scope::{self, Scope};
use listwatch_harness::sim::run::{run_seed_with, End};
use listwatch_model::{
    Action, ClientId, Clients, Config, Flaws, ListRv, Observed, Request, ServerId, System, WatchFrom,
};

fn client(spec: &str) -> ClientGo {
    ClientGo::parse(spec).unwrap_or_else(|e| panic!("{e}"))
}

fn list_watch() -> Config {
    scope::world(Scope::Small, Flaws::NONE, "list-watch").expect("a world").config
}

fn first_requests(spec: &str) -> Vec<Request> {
    let config = list_watch();
    let k = client(spec);
    let (_, seen) = System::start_with(config, |id| k.make(&config, 0, id));
    sent(&seen)
}

/// The requests among what a step observed.
fn sent(seen: &[Observed]) -> Vec<Request> {
    seen.iter()
        .filter_map(|o| match o {
            Observed::Sent { request, .. } => Some(*request),
            _ => None,
        })
        .collect()
}

#[test]
fn each_configuration_starts_as_client_go_does() {
    // v0.35 and later: the WatchListClient gate is on, so the first list is a streaming one (A12).
    assert!(
        matches!(
            first_requests("client-go")[..],
            [Request::WatchList { rv: ListRv::Consistent, bookmarks: true, .. }]
        ),
        "{:?}",
        first_requests("client-go")
    );
    // NewIndexerInformer's reflector keeps the release's defaults too, under the informer watcher as
    // well.
    for spec in [
        "client-go-indexer-informer",
        "client-go-store-informer",
        "client-go-informer-watcher",
        "controller-runtime",
    ] {
        assert!(
            matches!(first_requests(spec)[..], [Request::WatchList { .. }]),
            "{spec}: {:?}",
            first_requests(spec)
        );
    }
    // Off: a LIST from RV "0" with client-go's page size of 500, which the watch cache serves whole.
    assert!(
        matches!(first_requests("client-go-no-watchlist")[..], [Request::ListPage { rv: ListRv::Any, .. }]),
        "{:?}",
        first_requests("client-go-no-watchlist")
    );
    assert!(
        matches!(
            first_requests("client-go-paged")[..],
            [Request::ListPage { rv: ListRv::Any, limit: 1, cont: None }]
        ),
        "{:?}",
        first_requests("client-go-paged")
    );
}

/// `client-go-watchlist` switches the streaming list on as each release lets a user: through
/// `ENABLE_CLIENT_GO_WATCH_LIST_ALPHA` in v0.30, through the `WatchListClient` gate (off by default) in
/// v0.34. Without the switch both releases LIST first.
#[test]
fn the_streaming_list_is_switched_on_as_each_release_allows() {
    for release in ["v0.30.14", "v0.34.13"] {
        let on = first_requests(&format!("client-go-watchlist@{release}"));
        assert!(
            matches!(on[..], [Request::WatchList { rv: ListRv::Consistent, bookmarks: true, .. }]),
            "{release}: {on:?}"
        );
        let off = first_requests(&format!("client-go@{release}"));
        assert!(matches!(off[..], [Request::ListPage { rv: ListRv::Any, .. }]), "{release}: {off:?}");
    }
    let old = ClientGo::parse("client-go-watchlist@v0.27.16").unwrap_err();
    assert!(old.contains("before v0.28"), "{old}");
}

#[test]
fn a_list_answered_syncs_it_and_readiness_follows_the_poll() {
    let config = list_watch();
    let k = client("client-go-no-watchlist,waiters=2");
    let (c, s) = (ClientId(0), ServerId(0));
    let (mut sys, _) = System::start_with(config, |id| k.make(&config, 0, id));
    for a in [Action::Route(c, s), Action::Deliver(c)] {
        sys.apply(a);
    }
    assert!(!sys.view(c).synced, "WaitForCacheSync polls: no waiter has looked yet");
    assert!(sys.enabled(Action::FireTimer(c)), "the poll is the next timer");
    let seen = sys.apply(Action::FireTimer(c));
    assert!(
        seen.iter().any(|o| matches!(o, Observed::TimerFired { after_ms, .. } if *after_ms <= 100)),
        "{seen:?}"
    );
    assert!(sys.view(c).synced, "both waiters saw the cache synced");
    assert!(sys.gone().is_none());
}

/// `ListWatchUntil` (v0.15–v0.18) makes one LIST with no resource version and no limit, a consistent
/// read it never pages; once answered, the caller is ready, holds the list and claims its RV, and the
/// RetryWatcher under `Until` watches from that RV.
#[test]
fn list_watch_until_lists_once_consistently_then_watches_from_the_list() {
    let config = list_watch();
    let k = client("client-go-list-watch-until@v0.18.6,waiters=1");
    let (c, s) = (ClientId(0), ServerId(0));
    let (mut sys, seen) = System::start_with(config, |id| k.make(&config, 0, id));
    let listed = sent(&seen);
    assert!(
        matches!(
            listed[..],
            [Request::List { rv: ListRv::Consistent }]
                | [Request::ListPage { rv: ListRv::Consistent, limit: 0, cont: None }]
        ),
        "{listed:?}"
    );
    let watched: Vec<Request> =
        [Action::Route(c, s), Action::Deliver(c)].into_iter().flat_map(|a| sent(&sys.apply(a))).collect();
    let rv = sys.view(c).resource_version;
    assert!(
        matches!(watched[..], [Request::Watch { from: WatchFrom::Rv(from), .. }] if from == rv),
        "a watch from the list's RV {rv}: {watched:?}"
    );
    if sys.enabled(Action::FireTimer(c)) {
        sys.apply(Action::FireTimer(c));
    }
    assert!(sys.view(c).synced, "the caller's waiter saw the list");
    assert!(sys.gone().is_none());
}

#[test]
fn same_seed_same_run() {
    for spec in ["client-go", "client-go-no-watchlist,waiters=1", "client-go-paged,waiters=1"] {
        let k = client(spec);
        for seed in [3u64, 17] {
            let (a, b) = (
                run_seed_with(&k, seed, Flaws::NONE, 200, 6_000),
                run_seed_with(&k, seed, Flaws::NONE, 200, 6_000),
            );
            assert!(!matches!(a.end, End::Gone(_)), "{spec} seed {seed}: {:?}", a.end);
            assert_eq!(a.actions, b.actions, "{spec} seed {seed}");
            assert_eq!(format!("{:?}", a.end), format!("{:?}", b.end), "{spec} seed {seed}");
        }
    }
}

#[test]
fn a_short_campaign_runs_to_verdicts() {
    for spec in ["client-go,waiters=1", "client-go-no-watchlist,waiters=1"] {
        let k = client(spec);
        for seed in 0..20 {
            let run = run_seed_with(&k, seed, Flaws::NONE, 200, 6_000);
            assert!(!matches!(run.end, End::Gone(_)), "{spec} seed {seed}: {:?}", run.end);
            let (verdict, _) = judge_with(&k, seed, run.draw.config, &run.actions).expect("it runs again");
            let broke = matches!(run.end, End::Broke(_));
            assert_eq!(broke, verdict != listwatch_harness::tracefile::Verdict::Holds, "{spec} seed {seed}");
        }
    }
}

#[test]
fn a_missing_program_names_the_script() {
    let e = ClientGo::parse("client-go@v9.9.9").unwrap_err();
    assert!(e.contains("scripts/build-client-go v9.9.9"), "{e}");
    assert!(ClientGo::parse("client-go-nope").unwrap_err().starts_with("no client named"));
    assert!(ClientGo::parse("client-go,waiters=0").is_err());
}

#[test]
fn a_program_that_dies_is_an_error_naming_the_step() {
    // A "program" that answers nothing and exits: the run stops with an error, not a verdict.
    let dir = std::env::temp_dir().join(format!("listwatch-client-go-dies-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let fake = dir.join(format!("client-go-shim-{}", listwatch_client_go::config::PINNED));
    std::fs::write(&fake, "#!/bin/sh\nexit 7\n").expect("a script");
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).expect("executable");
    let k = ClientGo { binary: fake, ..client("client-go") };
    let run = run_seed_with(&k, 0, Flaws::NONE, 10, 100);
    let _ = std::fs::remove_dir_all(&dir);
    match run.end {
        End::Gone(why) => assert!(
            why.starts_with("at the start: reflector-0: the client-go program, at its 'start' command")
                && why.contains("scripts/build-client-go"),
            "{why}"
        ),
        other => panic!("expected the run to stop with an error, not {other:?}"),
    }
}

#[test]
fn corpus_replays_its_verdicts() {
    use listwatch_harness::replay::replay_with;
    use listwatch_harness::tracefile::Trace;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../corpus/client-go");
    let mut files: Vec<_> =
        std::fs::read_dir(&dir).expect("corpus/client-go").flatten().map(|e| e.path()).collect();
    files.sort();
    assert!(files.len() >= 4, "{files:?}");
    for f in files.iter().filter(|f| f.extension().is_some_and(|e| e == "json")) {
        let trace = Trace::load(f).unwrap_or_else(|e| panic!("{e}"));
        let r =
            replay_with(&client(&trace.client), &trace).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        assert!(r.reproduces(&trace), "{}: recorded {}, now {}", f.display(), trace.expect, r.verdict);
        assert_eq!(trace.to_json(), std::fs::read_to_string(f).expect("readable"), "{}", f.display());
    }
}

/// Several tasks in `WaitForCacheSync` are all woken by the first sync (kube-runtime's
/// `wait_until_ready` wakes only one of several): readiness holds with three waiters.
#[test]
fn every_waiter_sees_the_sync() {
    for spec in ["client-go", "client-go-no-watchlist"] {
        let k = client(spec);
        assert_eq!(k.waiters, 3);
        for seed in 0..40 {
            let run = run_seed_with(&k, seed, Flaws::NONE, 200, 6_000);
            assert!(
                !matches!(&run.end, End::Broke(v) if v.property == listwatch_properties::Property::ReadyMeansListed),
                "{spec} seed {seed}: {:?}",
                run.end
            );
        }
    }
}

#[test]
fn a_program_that_dies_mid_run_is_an_error_naming_the_step() {
    // The real program behind a pipe that ends after 12 commands: it then exits as its stdin closes.
    let dir = std::env::temp_dir().join(format!("listwatch-client-go-mid-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let real = client("client-go-no-watchlist").binary.canonicalize().expect("the built program");
    let wrapper = dir.join("client-go-shim-wrapped");
    let script = format!(
        "#!/bin/sh\nn=0\nwhile [ $n -lt 12 ] && IFS= read -r line; do printf '%s\\n' \"$line\"; n=$((n+1)); done \\\n  | exec '{}' \"$@\"\n",
        real.display()
    );
    std::fs::write(&wrapper, script).expect("a script");
    std::fs::set_permissions(&wrapper, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("executable");
    let k = ClientGo { binary: wrapper, ..client("client-go-no-watchlist,waiters=1") };
    let gone = (0..20u64).find_map(|seed| match run_seed_with(&k, seed, Flaws::NONE, 200, 6_000).end {
        End::Gone(why) => Some(why),
        _ => None,
    });
    let _ = std::fs::remove_dir_all(&dir);
    let why = gone.expect("a run outlives 12 commands");
    assert!(why.starts_with("step "), "{why}");
    assert!(why.contains("the client-go program, at its '"), "{why}");
}

/// The release that fixed a catalogue bug holds on the steps on which the release before it breaks
/// (`corpus/client-go/`): PR #89652, a client-side timeout that ends a watch relists on v0.18.1 and
/// re-watches on v0.18.2; PR #115620, v0.26.3 leaks an object whose ADD was still queued when the relist
/// no longer had it, and v0.26.4's cache stays right; PR #87795, v0.17.17 relists every second while the
/// server fails every LIST, and v0.18.0 doubles its backoff; PR #136824, the other way round: v0.36.6's
/// backoff starts again at 800 ms two minutes after it last did, although every LIST since failed, where
/// v0.35.10 keeps doubling; and PR #131799's streaming list, which runs an informer's transform on each
/// object twice (in the reflector's temporary store, then in the queue's Replace): with the strict
/// transform the informer never syncs, and without one it does; and kubernetes#129024: a handler that
/// panics on an object of the first list leaves its registration unsynced for good, and one that does
/// not panic syncs; and kubernetes#107310: v0.20.15's tools/pager keeps `resourceVersionMatch=Exact` on a
/// continued page, which the server refuses, so a list function that pages that way never relists, where
/// v0.21.14 (PR #107311, cherry-picked to v0.21.9) clears it; a list function that turns the reflector's
/// relist into an Exact read pins it to the RV its watch is too old for, and one that passes
/// NotOlderThan does not; one that lists from "0" every time goes back in time on a second API server,
/// and one that passes the reflector's RV does not. As for the corpus's correct reflector, a step the
/// fixed release does not enable where it stands is skipped (v0.18.2 has no backoff to wait out).
#[test]
fn the_fixed_release_holds_on_the_steps_that_break_the_old_one() {
    use listwatch_harness::replay::{judge_with, replay_with};
    use listwatch_harness::tracefile::{Trace, Verdict};
    use listwatch_properties::Property;
    let pairs = [
        (
            "v0.18.1.no-needless-relist.pr-89652.json",
            Property::NoNeedlessRelist,
            "client-go@v0.18.2,timeout=30s",
        ),
        ("v0.17.17.backoff.kubernetes-87794.json", Property::Backoff, "client-go@v0.18.0"),
        (
            "v0.26.3.no-resurrected-delete.pr-115620.json",
            Property::NoResurrectedDelete,
            "client-go-fifo@v0.26.4",
        ),
        ("v0.36.6.backoff.pr-136824.json", Property::Backoff, "client-go-no-watchlist@v0.35.10"),
        (
            "v0.20.15.converges.kubernetes-107310.json",
            Property::Converges,
            "client-go-pager@v0.21.14,match=Exact",
        ),
        // Not a release: the same list function with NotOlderThan, or with the reflector's RV.
        ("client-go-pager-exact.converges.json", Property::Converges, "client-go-pager,match=NotOlderThan"),
        ("client-go-pager-rv-0.no-rv-regression.json", Property::NoRvRegression, "client-go-pager"),
        // Not a release: the same informer with no transform.
        ("client-go-transform.no-leaked-connection.json", Property::NoLeakedConnection, "client-go"),
        // Not a release: the same informer whose handler does not panic (kubernetes#129024).
        (
            "client-go-no-watchlist-panic-handler.ready-means-listed.json",
            Property::ReadyMeansListed,
            "client-go-no-watchlist",
        ),
    ];
    for (file, property, fixed) in pairs {
        let f = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../corpus/client-go").join(file);
        let trace = Trace::load(&f).unwrap_or_else(|e| panic!("{e}"));
        let old = replay_with(&client(&trace.client), &trace).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            matches!(old.verdict, Verdict::Breaks { property: p, .. } if p == property),
            "{file}: {}",
            old.verdict
        );
        let seed = trace.seed.unwrap_or(0);
        let (now, _) = judge_with(&client(fixed), seed, trace.config, &trace.actions)
            .unwrap_or_else(|e| panic!("{fixed}: {e}"));
        assert_eq!(now, Verdict::Holds, "{fixed} on {file}");
    }
}

/// A bare Reflector into a Store has no handlers, no HasSynced and no watch error handler: a campaign
/// names the three properties it cannot be judged by, with why, never finds them broken, and judges
/// the rest by its cache.
#[test]
fn a_bare_reflector_says_what_it_cannot_be_judged_by_and_is_judged_by_its_cache() {
    use listwatch_harness::sim::campaign::{self, Campaign};
    use listwatch_properties::Property;
    let out = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bare-reflector");
    let c = Campaign::new(60, 200, Flaws::NONE, out);
    let s = campaign::run(&c, &client("client-go-reflector")).unwrap_or_else(|e| panic!("{e}"));
    let names: Vec<&str> = s.not_judged.iter().map(|(p, _)| p.name()).collect();
    assert_eq!(names, ["notifications-match-cache", "ready-means-listed", "failures-told"]);
    let text = campaign::text(&c, &s);
    assert!(text.contains("14 of 17 judged after every step; not judged:"), "{text}");
    assert!(text.contains("has no HasSynced"), "{text}");
    assert!(s
        .failures
        .iter()
        .all(|f| !["ready-means-listed", "notifications-match-cache", "failures-told"]
            .contains(&f.what.as_str())));
    assert!(s.tally.witnessed[Property::CacheIsSnapshot as usize] > 0, "its cache is judged");
    assert!(campaign::json(&c, &s).contains("\"not_judged\""));
}

/// `,slow-handler`: the handler is held while the first LIST comes in. client-go's store takes the
/// list at once and the handler's notifications wait at its gate: the view says the handlers are
/// behind (and the cache not), and `notifications-match-cache` waits for it. Released, the handler
/// is told the object and catches up.
#[test]
fn a_held_handler_lags_its_cache_until_released() {
    let config = scope::world(Scope::Small, Flaws::NONE, "slow-consumer").expect("a world").config;
    let k = client("client-go-no-watchlist,waiters=1,slow-handler");
    let (mut system, _) = System::start_with(config, |id| k.make(&config, 0, id));
    let c = ClientId(0);
    let take = |system: &mut System<_>, wanted: &dyn Fn(&Action) -> bool| {
        let mut actions = Vec::new();
        system.actions(&mut actions);
        let a =
            *actions.iter().find(|a| wanted(a)).unwrap_or_else(|| panic!("no such action in {actions:?}"));
        system.apply(a)
    };
    take(&mut system, &|a| matches!(a, Action::Create(_)));
    take(&mut system, &|a| matches!(a, Action::Ingest(_)));
    take(&mut system, &|a| matches!(a, Action::Route(r, _) if *r == c));
    take(&mut system, &|a| matches!(a, Action::Fault(listwatch_model::Fault::HoldConsumer(r)) if *r == c));
    let seen = take(&mut system, &|a| matches!(a, Action::Deliver(r) if *r == c));
    let view = system.view(c);
    assert!(view.handlers_behind, "the held handler has the LIST's ADD waiting");
    assert!(!view.queued, "the cache is not behind");
    assert_eq!(view.cache.len(), 1, "the store took the list");
    assert!(!seen.iter().any(|o| matches!(o, Observed::Notified { .. })), "nobody was told yet: {seen:?}");
    let seen = take(&mut system, &|a| matches!(a, Action::ReleaseConsumer(r) if *r == c));
    assert!(seen.iter().any(|o| matches!(o, Observed::Notified { .. })), "released, it is told: {seen:?}");
    assert!(!system.view(c).handlers_behind);
}
