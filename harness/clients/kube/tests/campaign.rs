//! kube-runtime under listwatch: a short campaign per configuration, the determinism of a run, and the
//! corpus of its findings replayed.

use std::path::Path;

use listwatch_harness::bounded::explore;
use listwatch_harness::replay::{judge, judge_with, replay_with};
use listwatch_harness::scope::{self, Scope};
use listwatch_harness::sim::run::{run_seed_with, End, Run};
use listwatch_harness::tracefile::{Trace, Verdict};
use listwatch_kube::{Kube, KubeConfig};
use listwatch_model::{Action, ClientId, Clients, Config, Flaws, ServerId};
use listwatch_properties::{Property, Violation};

fn kube(spec: &str) -> Kube<KubeConfig> {
    Kube(KubeConfig::parse(spec).expect("a kube-runtime client"))
}

fn run(k: &Kube<KubeConfig>, seed: u64) -> Run {
    run_seed_with(k, seed, Flaws::NONE, 200, 6_000)
}

fn verdict(k: &Kube<KubeConfig>, config: Config, actions: &[Action]) -> (Verdict, Option<Violation>) {
    judge_with(k, 0, config, actions).expect("kube-runtime runs in this process")
}

/// With several tasks awaiting `Store::wait_until_ready()`, the first sync wakes only the one that
/// polled last: every configuration breaks ready-means-listed on its first LIST, in every world.
#[test]
fn every_configuration_loses_readiness_wakeups() {
    for kc in KubeConfig::ALL {
        let c = Kube(kc);
        let mut broke = 0;
        for seed in 0..40 {
            if let End::Broke(v) = &run(&c, seed).end {
                if v.property == Property::ReadyMeansListed {
                    broke += 1;
                }
            }
        }
        // The rest break another property first (README, "kube-runtime under listwatch").
        assert!(broke >= 20, "{}: ready-means-listed broke in only {broke} of 40 seeds", kc.name);
    }
}

/// The same two steps with one waiting task: readiness holds.
#[test]
fn one_waiting_task_is_woken() {
    for kc in KubeConfig::ALL {
        let config = Scope::Small.config();
        let mut actions = vec![Action::Route(ClientId(0), ServerId(0)), Action::Deliver(ClientId(0))];
        let (v, _) = verdict(&Kube(kc), config, &actions);
        assert_eq!(v, Verdict::Breaks { property: Property::ReadyMeansListed, step: 2 }, "{}", kc.name);
        let one = kube(&format!("{},waiters=1", kc.name));
        assert_eq!(verdict(&one, config, &actions).0, Verdict::Holds, "{} with one waiter", kc.name);
        actions.clear();
    }
}

/// Without `default_backoff()`, kube-runtime retries at once after an error: the backoff floor breaks
/// far more often. With it, the floor still breaks where no error is yielded: a watch that ends at once
/// with no event (kubernetes#104171) is re-watched at once, as the stream's end is no error.
#[test]
fn without_default_backoff_the_retries_do_not_wait() {
    let broke = |spec: &str| {
        (0..100u64)
            .filter(|seed| {
                matches!(&run(&kube(spec), *seed).end,
                    End::Broke(v) if v.property == Property::Backoff && !grew_too_little(v))
            })
            .count()
    };
    let (without, with) = (broke("kube-runtime-no-backoff,waiters=1"), broke("kube-runtime,waiters=1"));
    assert!(
        without > with * 2 && with > 0,
        "the backoff floor broke in {without} seeds without default_backoff, {with} with"
    );
}

/// A `backoff` violation for a wait that did not double (C1), rather than one under the floor.
fn grew_too_little(v: &Violation) -> bool {
    v.detail.contains("in a row with no progress")
}

/// kube-runtime's default backoff does not grow across failed relists: the watcher yields
/// `Ok(Event::Init)` before every relist's first LIST (kube-runtime 5.0.0, `watcher.rs`, `State::Empty`)
/// and `StreamBackoff` resets its backoff on any `Ok` (`utils/stream_backoff.rs`), so every LIST that
/// fails again waits 800 ms to 1.6 s, for as long as the server fails. Every such violation follows a
/// failed LIST, and replays from its trace.
#[test]
fn default_backoff_does_not_grow_across_failed_relists() {
    let k = kube("kube-runtime,waiters=1");
    let found: Vec<(u64, Violation)> = (0..100u64)
        .filter_map(|seed| match run(&k, seed).end {
            End::Broke(v) if v.property == Property::Backoff && grew_too_little(&v) => Some((seed, v)),
            _ => None,
        })
        .collect();
    assert!(!found.is_empty(), "no seed of 100 shows kube-runtime's backoff reset by Event::Init");
    for (seed, v) in &found {
        assert!(v.detail.contains("sent LIST") && v.detail.contains("its LIST"), "seed {seed}: {v}");
    }
}

/// With one waiting task, the campaigns find what the corpus keeps: a watch resumed in the middle of a
/// revision (kubernetes#110210) and a LIST waited on for ever on a dead connection.
#[test]
fn one_waiter_campaign_finds_the_known_failures() {
    let c = kube("kube-runtime,waiters=1");
    let mut found = std::collections::BTreeSet::new();
    for seed in 0..300 {
        if let End::Broke(v) = run(&c, seed).end {
            found.insert(v.property);
        }
    }
    for p in [Property::Backoff, Property::Converges, Property::StaleBounded] {
        assert!(found.contains(&p), "{p} not found in 300 seeds; found {found:?}");
    }
    assert!(!found.contains(&Property::ReadyMeansListed), "one waiting task is woken");
}

/// `any_semantic()` with the default page size sends a consistent LIST: kube-core leaves out
/// `resourceVersion=0` whenever a limit is set.
#[test]
fn any_semantic_lists_are_consistent_with_the_default_page_size() {
    let config = Scope::Small.config();
    let (sys, seen) =
        listwatch_model::System::start_with(config, |id| kube("kube-runtime-any").make(&config, 0, id));
    drop(sys);
    let sent: Vec<_> = seen
        .iter()
        .filter_map(|o| match o {
            listwatch_model::Observed::Sent { request, .. } => Some(*request),
            _ => None,
        })
        .collect();
    assert_eq!(
        sent,
        vec![listwatch_model::Request::ListPage {
            rv: listwatch_model::ListRv::Consistent,
            limit: 255,
            cont: None
        }]
    );
}

/// In a world whose reflectors list in pages, kube-runtime pages too: its second request continues the
/// first page's LIST with the token the server handed out.
#[test]
fn kube_runtime_pages_as_the_world_does() {
    use listwatch_model::{Key, Observed, Request, System};
    let mut config = Scope::Small.config();
    config.keys = 2;
    config.writes = 2;
    config.reflector.page_size = Some(1);
    let kc = kube("kube-runtime,waiters=1");
    let (mut sys, _) = System::start_with(config, |id| kc.make(&config, 0, id));
    let mut sent = Vec::new();
    for a in [Action::Create(Key(0)), Action::Create(Key(1))]
        .into_iter()
        .chain([Action::Route(ClientId(0), ServerId(0)), Action::Deliver(ClientId(0))])
    {
        for o in sys.apply(a) {
            if let Observed::Sent { request, .. } = o {
                sent.push(request);
            }
        }
    }
    assert!(
        matches!(sent.as_slice(), [Request::ListPage { limit: 1, cont: Some(_), .. }]),
        "kube-runtime continues the LIST: {sent:?}"
    );
}

/// A watch line that does not decode: client-go (the model reflector) ends the watch and relists;
/// kube-runtime yields the decode error and reads on from the same stream, without the event.
#[test]
fn a_garbled_line_is_read_past() {
    use listwatch_model::{FaultKind, FaultKinds, Key};
    let mut config = Scope::Small.config();
    config.fault_kinds = FaultKinds::NONE.with(FaultKind::GarbledLine);
    config.faults = 1;
    config.servers = 1;
    config.reflectors = 1;
    let (c, s) = (ClientId(0), ServerId(0));
    let steps = [
        Action::Route(c, s),
        Action::Deliver(c),
        Action::Route(c, s),
        Action::Fault(listwatch_model::Fault::Garble(c)),
        Action::Create(Key(0)),
        Action::Ingest(s),
        Action::Deliver(c),
        Action::Update(Key(0)),
        Action::Ingest(s),
        Action::Deliver(c),
    ];
    let kube = verdict(&kube("kube-runtime,waiters=1"), config, &steps);
    assert_eq!(kube.0, Verdict::Breaks { property: Property::WatchReliable, step: 10 }, "{:?}", kube.1);
    assert_eq!(judge(config, &steps).0, Verdict::Holds);
}

/// The bounded exhaustive mode (`check --client`) finds the shortest schedules: the first LIST for the
/// lost readiness wake-ups, and a watch that ends at once for the re-watch without backoff.
#[test]
fn bounded_mode_finds_the_shortest_schedules() {
    let config = scope::world(Scope::Small, Flaws::NONE, "list-watch").expect("the list-watch world").config;
    let run = explore(&kube("kube-runtime"), config, 4, 1_000_000);
    let (steps, v) = run.broke.expect("readiness breaks");
    assert_eq!((steps.len(), v.property), (2, Property::ReadyMeansListed));
    let run = explore(&kube("kube-runtime,waiters=1"), config, 6, 1_000_000);
    let (steps, v) = run.broke.expect("backoff breaks");
    assert_eq!((steps.len(), v.property), (5, Property::Backoff), "{v}");
    assert!(run.schedules > 1_000, "every schedule of 4 steps first: {}", run.schedules);
}

#[test]
fn same_seed_same_run() {
    for spec in ["kube-runtime", "kube-runtime-streaming,waiters=1", "kube-runtime-any-no-backoff,waiters=1"]
    {
        let c = kube(spec);
        for seed in [3u64, 17, 41] {
            let (a, b) = (run(&c, seed), run(&c, seed));
            assert_eq!(a.actions, b.actions, "{spec} seed {seed}");
            assert_eq!(format!("{:?}", a.end), format!("{:?}", b.end), "{spec} seed {seed}");
        }
    }
}

#[test]
fn corpus_replays_its_verdicts() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../corpus/kube-runtime");
    let mut files: Vec<_> =
        std::fs::read_dir(&dir).expect("corpus/kube-runtime").flatten().map(|e| e.path()).collect();
    files.sort();
    assert!(!files.is_empty());
    for f in files.iter().filter(|f| f.extension().is_some_and(|e| e == "json")) {
        let trace = Trace::load(f).unwrap_or_else(|e| panic!("{e}"));
        assert!(!trace.is_model(), "{}", f.display());
        let r = replay_with(&kube(&trace.client), &trace).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        assert!(r.reproduces(&trace), "{}: recorded {}, now {}", f.display(), trace.expect, r.verdict);
        // Saved again, the file is the same bytes.
        assert_eq!(trace.to_json(), std::fs::read_to_string(f).expect("readable"), "{}", f.display());
    }
}

#[test]
fn replay_as_another_client_is_refused() {
    use listwatch_harness::cli::clients::ClientChoice;
    use listwatch_harness::cli::traces::{replay_files, ReplayArgs};
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../corpus/kube-runtime/kube-runtime.ready-means-listed.json");
    let files = vec![file.display().to_string()];
    let choice = |spec: &str| ClientChoice::parse(spec).expect("a kube-runtime client");
    let args = |client: &str| ReplayArgs { files: files.clone(), client: Some(choice(client)) };
    assert_eq!(replay_files(&args("kube-runtime-streaming")).ok(), Some(2));
    assert_eq!(replay_files(&args("kube-runtime")).ok(), Some(0));
    assert!(ClientChoice::parse("kube-nope").unwrap_err().starts_with("no client named \"kube-nope\""));
    assert!(ClientChoice::parse("kube-runtime,waiters=0").is_err());
}

/// A trace naming a client this build does not have is refused when it is replayed, in one line.
#[test]
fn a_trace_of_an_unknown_client_is_refused() {
    use listwatch_harness::cli::traces::{replay_files, ReplayArgs};
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../corpus/kube-runtime");
    let text =
        std::fs::read_to_string(dir.join("kube-runtime.ready-means-listed.json")).expect("the corpus trace");
    let renamed = text.replace("\"client\": \"kube-runtime\"", "\"client\": \"kube-runtime-nope\"");
    let trace = Trace::parse("t.json", &renamed).expect("loading runs nothing");
    assert_eq!(trace.client, "kube-runtime-nope");
    let tmp = std::env::temp_dir().join(format!("listwatch-unknown-client-{}.json", std::process::id()));
    std::fs::write(&tmp, renamed).expect("a temporary file");
    let status = replay_files(&ReplayArgs { files: vec![tmp.display().to_string()], client: None }).ok();
    let _ = std::fs::remove_file(&tmp);
    assert_eq!(status, Some(2));
}
