//! `corpus/conformance/`: the shrunk sequences on which a real k8s.io/apiserver release differed from
//! the model as it was, each kept beside the per-release rule that now explains it
//! (`model/src/apiserver_release.rs`; README, "The model per release"). Checked without Go or etcd:
//! each file parses, names its release, and the model under that release's rules answers it otherwise
//! than under the newest release's, at the step where the real server differed. The one kept as a
//! known difference (README), v0.31.14's older event on a watch from RV 0 (kubernetes#127500), has no
//! rule of the model: the test says so until one is written.
//!
//! Files named `http-vX.Y.Z.<what>.json` came from `conformance http`, through the API server's HTTP
//! handler: the model with the handler's rules ([`ModelSetup::handlers`]) answers them otherwise than
//! the storage-level model at the step where the real server differed.

use std::path::{Path, PathBuf};

use listwatch_harness::conformance::apiserver::{
    first_difference, model_transcript, ApiAnswer, ApiMsg, ApiSequence, ApiTranscript, ModelSetup,
};
use listwatch_harness::conformance::Plant;
use listwatch_model::store::TombstonePolicy;
use listwatch_model::ApiServerRelease;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/conformance")
}

/// The file's sequence, and the release its name gives (`apiserver-vX.Y.Z.<what>.json` or
/// `http-vX.Y.Z.<what>.json`).
fn read(name: &str) -> (ApiSequence, ApiServerRelease) {
    let text = std::fs::read_to_string(dir().join(name)).expect("the file is readable");
    let seq = ApiSequence::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
    let release = name
        .strip_prefix("apiserver-")
        .or_else(|| name.strip_prefix("http-"))
        .and_then(|n| n.split(".json").next())
        .and_then(|n| {
            let mut parts = n.splitn(4, '.');
            let text = format!("{}.{}.{}", parts.next()?, parts.next()?, parts.next()?);
            ApiServerRelease::parse(&text)
        });
    (seq, release.unwrap_or_else(|| panic!("{name}: no release in its name")))
}

/// The model's transcript under `release`'s rules, over an etcd that answers progress requests.
fn model(seq: &ApiSequence, release: ApiServerRelease) -> ApiTranscript {
    model_with(seq, release, false)
}

fn model_with(seq: &ApiSequence, release: ApiServerRelease, handlers: bool) -> ApiTranscript {
    model_transcript(seq, setup(release, handlers))
}

fn setup(release: ApiServerRelease, handlers: bool) -> ModelSetup {
    ModelSetup {
        tombstones: TombstonePolicy::KeepAtCompactRev,
        plant: Plant::None,
        progress_requests: release.consistent_list_from_cache(),
        release,
        watch_list: release.watch_list(),
        pagination: true,
        handlers,
    }
}

/// The same over an etcd whose progress requests the server does not trust (3.4.23, E7).
fn model_over_untrusted_etcd(seq: &ApiSequence, release: ApiServerRelease) -> ApiTranscript {
    model_transcript(seq, ModelSetup { progress_requests: false, ..setup(release, false) })
}

#[test]
fn every_file_parses_and_names_its_release() {
    let mut names: Vec<String> = std::fs::read_dir(dir())
        .expect("corpus/conformance/ is readable")
        .map(|e| e.expect("an entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    names.sort();
    assert!(names.len() >= 4, "{names:?}");
    for name in &names {
        let (seq, release) = read(name);
        let http = name.starts_with("http-");
        assert!(!seq.ops.is_empty() && (http || release < ApiServerRelease::NEWEST), "{name}");
    }
}

/// A3, A12 (found by `conformance http`): the handler serves a WATCH from "0" with bookmarks as a
/// streaming list (`ApiServer::serve`, the `WatchList` gate); the storage layer
/// alone serves it as a plain watch. Without bookmarks both serve the plain watch.
#[test]
fn the_handler_rule_answers_its_file_as_the_real_server_did() {
    let (seq, release) = read("http-v0.37.2.watch-from-0-is-a-streaming-list.json");
    let handler = model_with(&seq, release, true);
    let storage = model_with(&seq, release, false);
    let diff = first_difference(&seq, &handler, &storage).expect("the handler's rule tells them apart");
    assert!(
        diff.place.starts_with("step 1 ") && diff.place.ends_with("breaks A12 (streaming lists)"),
        "{diff}"
    );
    let ends = |t: &ApiTranscript, step: usize| {
        t.steps[step].messages.values().flatten().any(|m| matches!(m, ApiMsg::InitialEventsEnd { .. }))
    };
    assert!(ends(&handler, 1) && !ends(&storage, 1), "{diff}");
    assert!(!ends(&handler, 2), "no bookmarks, no streaming list");
    // Where the WatchList gate is off, the handler does not default it.
    let gate_off = model_with(&seq, ApiServerRelease::new(33, 13), true);
    assert!(!ends(&gate_off, 1));
}

#[test]
fn each_rule_answers_its_file_as_the_real_release_did() {
    // Each file, the step where its release differs, and whether the newest release is taken with
    // the old one's cache (a consistent read from etcd, whose RV a write of another resource moves
    // ahead of the cache's) so that only the rule under test tells them apart.
    let cases = [
        // A2: an Exact LIST ahead of etcd is a 500 before kubernetes#132374 (v0.34).
        ("apiserver-v0.32.13.future-exact-list-500.kubernetes-132374.json", 0, false),
        // A12: the WatchList gate is off in 1.33; the handler refuses the streaming list.
        ("apiserver-v0.33.13.watch-list-gate-off.json", 0, false),
        // A2: a consistent read goes to etcd in v0.30 and does not move the cache.
        ("apiserver-v0.30.14.consistent-list-reads-etcd.json", 0, false),
        // A6: a DELETE answers the object with its own last RV before kubernetes#113368 (v0.26).
        ("apiserver-v0.25.16.delete-answers-last-rv.kubernetes-113368.json", 1, false),
        // A2: an Exact LIST of one name in a namespace answers etcd's current revision before v0.24
        // (GetToList; PR #106948).
        ("apiserver-v0.22.17.exact-list-of-one-name-current-rv.pr-106948.json", 3, true),
        // A8: a cacher that took no event yet drops the watches due from its heartbeat schedule until
        // v0.27, and never sends them one (popExpiredWatchers).
        ("apiserver-v0.27.16.heartbeat-dropped-before-first-event.json", 3, false),
        // A8: from v0.31 the heartbeat before any event carries the list's RV, and until v0.31 a watch
        // from "0" on an empty cache starts at 0, below it.
        ("apiserver-v0.31.14.heartbeat-at-list-rv-to-watch-from-0-on-empty-cache.json", 1, false),
    ];
    for (name, step, same_cache) in cases {
        let (seq, release) = read(name);
        let old = model(&seq, release);
        let newest = if same_cache {
            let setup = ModelSetup {
                tombstones: TombstonePolicy::KeepAtCompactRev,
                progress_requests: release.consistent_list_from_cache(),
                ..ModelSetup::storage(true)
            };
            model_transcript(&seq, setup)
        } else {
            model(&seq, ApiServerRelease::NEWEST)
        };
        let diff = first_difference(&seq, &newest, &old)
            .unwrap_or_else(|| panic!("{name}: no rule tells them apart"));
        assert!(diff.place.starts_with(&format!("step {step} ")), "{name}: {diff}");
    }
    let (seq, release) = read("apiserver-v0.32.13.future-exact-list-500.kubernetes-132374.json");
    assert_eq!(model(&seq, release).steps[0].answer, Some(ApiAnswer::Failed { code: 500 }));
    let (seq, release) = read("apiserver-v0.33.13.watch-list-gate-off.json");
    assert_eq!(model(&seq, release).steps[0].answer, Some(ApiAnswer::Failed { code: 422 }));
    let (seq, release) = read("apiserver-v0.25.16.delete-answers-last-rv.kubernetes-113368.json");
    let rv = |t: ApiTranscript| match &t.steps[1].answer {
        Some(ApiAnswer::Deleted { object: Some(o), .. }) => o.rv,
        other => panic!("the delete answers its object: {other:?}"),
    };
    assert_eq!((rv(model(&seq, release)), rv(model(&seq, ApiServerRelease::NEWEST))), (1, 2));
    let (seq, release) = read("apiserver-v0.22.17.exact-list-of-one-name-current-rv.pr-106948.json");
    let list_rv = |t: ApiTranscript| match &t.steps[3].answer {
        Some(ApiAnswer::List { rv, items, .. }) if items.len() == 1 => *rv,
        other => panic!("the LIST answers the one object: {other:?}"),
    };
    assert_eq!((list_rv(model(&seq, release)), list_rv(model(&seq, ApiServerRelease::NEWEST))), (3, 2));

    // A8: the heartbeats each release sends on the watch from "0" opened on the empty cache, after
    // the first minute and after the second (a write between them).
    let beats = |name: &str, release: ApiServerRelease| -> (Vec<ApiMsg>, Vec<ApiMsg>) {
        let (seq, _) = read(name);
        let t = model(&seq, release);
        let at = |step: usize| t.steps[step].messages.get(&0).cloned().unwrap_or_default();
        (at(1), at(3))
    };
    let beat = |rv| vec![ApiMsg::Bookmark { rv }];
    let name = "apiserver-v0.27.16.heartbeat-dropped-before-first-event.json";
    assert_eq!(beats(name, ApiServerRelease::new(27, 16)), (vec![], vec![]));
    assert_eq!(beats(name, ApiServerRelease::new(28, 15)), (vec![], beat(1)), "v0.28 schedules it again");
    let name = "apiserver-v0.31.14.heartbeat-at-list-rv-to-watch-from-0-on-empty-cache.json";
    assert_eq!(beats(name, ApiServerRelease::new(31, 14)), (beat(0), beat(1)));
    assert_eq!(beats(name, ApiServerRelease::NEWEST), (vec![], beat(1)));

    // A2, E7: over etcd 3.4.23, whose progress requests the server does not trust, a NotOlderThan LIST
    // of one name in a namespace ahead of the cache asks for one anyway in v0.31 and v0.32, and is
    // served at once with the one object; from v0.33 (and as a whole LIST) it waits its 3 s: 504.
    let (seq, release) = read("apiserver-v0.32.13.one-key-list-asks-untrusted-etcd-for-progress.json");
    let old = model_over_untrusted_etcd(&seq, release);
    let newest = model_over_untrusted_etcd(&seq, ApiServerRelease::NEWEST);
    let diff = first_difference(&seq, &newest, &old).expect("the rule tells them apart");
    assert!(diff.place.starts_with("step 1 "), "{diff}");
    assert!(
        matches!(&old.steps[1].answer, Some(ApiAnswer::List { items, .. }) if items.len() <= 1),
        "{old:?}"
    );
    assert_eq!(newest.steps[1].answer, Some(ApiAnswer::Failed { code: 504 }));
    assert_eq!(
        model_over_untrusted_etcd(&seq, ApiServerRelease::new(30, 14)),
        newest,
        "v0.30: the gate is off"
    );
}

#[test]
fn the_known_difference_has_no_rule_of_the_model_yet() {
    let name = "apiserver-v0.31.14.rv0-watch-older-event.kubernetes-127500.json";
    let (seq, release) = read(name);
    assert_eq!(model(&seq, release), model(&seq, ApiServerRelease::NEWEST), "{name}: no rule touches it");
}

/// A3, A12 over HTTP (found by `conformance http` over etcd 3.4.23): a WATCH with no resourceVersion
/// and no bookmarks, after a write to another resource. The handler defaults it to a consistent
/// streaming list, whose cacher waits for etcd's revision: over an etcd without progress requests it
/// waits in vain and gets ERROR 504 (`ApiServer::serve_watch_without_rv`). The same watch opens where
/// etcd answers progress requests, where the gate is off (v0.33), and at the storage layer.
#[test]
fn the_unset_rv_watch_waits_for_etcd_over_http() {
    let (seq, release) = read("http-v0.37.2.unset-rv-watch-waits-for-etcd-3.4.json");
    let over = |release: ApiServerRelease, handlers: bool, progress_requests: bool| {
        model_transcript(&seq, ModelSetup { progress_requests, ..setup(release, handlers) })
    };
    let error =
        |t: &ApiTranscript| t.steps[1].messages.values().flatten().any(|m| *m == ApiMsg::Error { code: 504 });
    let opened = |t: &ApiTranscript| t.steps[1].answer == Some(ApiAnswer::WatchOpened);
    let waited = over(release, true, false);
    assert!(opened(&waited) && error(&waited), "{waited:?}");
    for (what, t) in [
        ("etcd with progress requests", over(release, true, true)),
        ("the gate off", over(ApiServerRelease::new(33, 13), true, false)),
        ("the storage layer", over(release, false, false)),
    ] {
        assert!(opened(&t) && !error(&t), "{what}: {t:?}");
    }
}
