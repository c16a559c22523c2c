//! The mutation-testing gate that `scripts/mutants` runs against every mutant of `model/src` and
//! `properties/src`: the checker and the simulator only, no unit test. A mutant is caught when the
//! correct system breaks a property in the default scope, a witness goes unreached there, a catalogue
//! flaw or a planted client bug stops being caught by the property named for it, a simulator seed of
//! the correct system fails, or the simulator stops finding a flaw; a run the limits stop counts as
//! caught too (the scope was not proven). The regression corpus must still reproduce, and the
//! simulator's runs and the corpus's traces are also judged from their recording alone
//! (`judge_frames`, as real clients are): the same verdict at the same step.
//!
//! The cheapest judges run first and the first failure ends the run, so a caught mutant costs seconds;
//! only a survivor pays for the whole gate.
//!
//! The checker and the simulator are deterministic, so what they report is pinned too, as stateright's
//! own tests pin state counts: each world's states and the fewest steps to each witness (a witness made
//! easier to reach is reached sooner), each flaw's shortest counterexample, every property a flaw or
//! planted bug breaks when nothing stops at the first (where that costs seconds), the seed at which the
//! simulator first finds each flaw, and the simulator's summary of the correct system (steps, faults and
//! requests by kind, seeds reaching each witness), as drawn for the model reflector and as drawn for
//! a client over the wire (whose watch lines may arrive garbled). A change to the model or the
//! properties that moves any of them fails here until the record is accepted on purpose:
//! `INSTA_UPDATE=always cargo test --release -p listwatch-harness --test mutation_gate -- --ignored`,
//! then review the diff of `harness/tests/snapshots/mutation_gate__*.snap`.

#[path = "support/caught_by.rs"]
mod caught_by;
#[path = "support/corpus_files.rs"]
mod corpus_files;
#[path = "support/planted.rs"]
mod planted;

use std::path::PathBuf;
use std::time::Duration;

use listwatch_harness::checker::{run, Limits, Outcome, Search};
use listwatch_harness::replay::{record, replay};
use listwatch_harness::scope::{self, worlds, Scope};
use listwatch_harness::sim::campaign::{self, Campaign, Summary};
use listwatch_harness::sim::run::{run_seed, run_seed_with, End, Run};
use listwatch_harness::tracefile::{Trace, Verdict};
use listwatch_model::manager::Manager;
use listwatch_model::{ClientId, Clients, Config, Flaw, Flaws, ManagerConfig, ModelClient, ModelReflector};
use listwatch_properties::{judge_frames, Property, Violation};

const LIMITS: Limits = Limits {
    max_states: 3_000_000,
    threads: 1,
    symmetry: true,
    time_limit: Duration::from_secs(60),
    stop_at_violation: true,
    memory_limit_bytes: None,
    made_states: usize::MAX,
    window_states: usize::MAX,
};
const SEEDS: u64 = 10_000;
/// Correct seeds also judged from their recording alone.
const RECORDED_SEEDS: u64 = 500;
/// Correct seeds drawn as for a client over the wire.
const WIRE_SEEDS: u64 = 1_000;

#[test]
#[ignore = "the mutation-testing gate: scripts/mutants runs it on every mutant (--profile mutants, --ignored)"]
fn the_checker_and_the_simulator_judge_every_mutant() {
    let started = std::time::Instant::now();
    let lap = |what: &str| eprintln!("mutation gate: {what} after {:.1} s", started.elapsed().as_secs_f64());
    corpus();
    lap("corpus");
    let mut summary = Summary::default();
    for seed in 0..SEEDS / 5 {
        let r = simulate(&ModelReflector, seed, &mut summary);
        // Real clients are judged from what they recorded, with the store's truth rebuilt from the
        // writes reported (`judge_frames`): the same runs, judged that way, hold too.
        if seed < RECORDED_SEEDS {
            let broke = judge_frames(&record(r.draw.config, &r.actions));
            assert!(broke.is_none(), "simulator seed {seed}, recorded, breaks: {broke:?}");
        }
    }
    lap("first simulator seeds");
    // The simulator judges too: every flaw breaks a property within its first 1,000 seeds
    // (harness/tests/simulate.rs), usually within a few.
    let mut found = String::new();
    for (flaw, _, _) in caught_by::CAUGHT_BY {
        let (seed, r, v) = first_found(flaw);
        let recorded = judge_frames(&record(r.draw.config, &r.actions)).map(|(step, v)| (step, v.property));
        assert_eq!(recorded, Some((r.actions.len(), v.property)), "{flaw}, seed {seed}: its recording");
        found += &format!(
            "{flaw} ({}): seed {seed}, {} after {} steps\n",
            flaw.upstream(),
            v.property,
            r.actions.len()
        );
    }
    insta::assert_snapshot!("flaws_in_the_simulator", found);
    lap("flaws in the simulator");
    let mut shortest = String::new();
    for (flaw, world, property) in caught_by::CAUGHT_BY {
        let w = scope::world(Scope::Default, Flaws::only(flaw), world).expect("a world");
        let o = run(w.config, Search::Bfs, LIMITS);
        let Some(v) = o.violated().find(|v| v.property == property) else {
            panic!("{flaw} is no longer caught by {property} in world {world}")
        };
        let (steps, violation) = v.counterexample.as_ref().expect("violated");
        shortest += &format!(
            "{flaw} in {world}: {property} after {} steps, {} states\n  {violation}\n",
            steps.len(),
            o.states
        );
    }
    insta::assert_snapshot!("flaws_in_the_checker", shortest);
    lap("flaws");
    let mut planted_found = String::new();
    for (bug, property) in planted::CAUGHT_BY {
        let o = planted::check(bug, LIMITS);
        let Some(v) = o.violated().find(|v| v.property == property) else {
            panic!("{bug:?} is no longer caught by {property}")
        };
        let steps = v.counterexample.as_ref().map_or(0, |(steps, _)| steps.len());
        planted_found += &format!("{bug:?}: {property} after {steps} steps, {} states\n", o.states);
    }
    insta::assert_snapshot!("planted_bugs_in_the_checker", planted_found);
    lap("planted bugs");
    // The largest world (list-watch, half the states) last: a mutant that breaks the correct system
    // is usually found in a smaller one within seconds.
    let mut correct = worlds(Scope::Default, Flaws::NONE);
    correct.rotate_left(1);
    let mut outcomes = Vec::new();
    let mut explored = String::new();
    for w in correct {
        let o = run(w.config, Search::Bfs, LIMITS);
        if let Some(v) = o.violated().next() {
            panic!("the correct system breaks: {}", v.counterexample.as_ref().expect("violated").1);
        }
        assert!(o.complete, "world {} was not explored within the limits", w.name);
        explored +=
            &format!("{}: {} states, depth {}; witnesses reached after steps:\n", w.name, o.states, o.depth);
        for v in &o.verdicts {
            let at = v.witnessed_at.map_or("unreached".to_string(), |n| n.to_string());
            explored += &format!("  {:<30} {at}\n", v.property.name());
        }
        outcomes.push(o);
        lap(w.name);
    }
    for p in Property::ALL {
        let reached = outcomes.iter().any(|o| o.verdicts.iter().any(|v| v.property == p && v.witnessed()));
        assert!(reached, "witness of {p} unreached: {}", p.witness());
    }
    insta::assert_snapshot!("correct_worlds", explored);
    for seed in SEEDS / 5..SEEDS {
        simulate(&ModelReflector, seed, &mut summary);
    }
    let c = Campaign::new(SEEDS, 200, Flaws::NONE, PathBuf::new());
    insta::assert_snapshot!("correct_simulator_summary", campaign::text(&c, &summary));
    lap("simulator seeds");
    // The wire's own fault, a watch line that does not decode, is drawn only for a client that reads
    // the wire; the model reflector takes it as the watch error it is.
    let mut summary = Summary::default();
    for seed in 0..WIRE_SEEDS {
        simulate(&OverTheWire, seed, &mut summary);
    }
    let c = Campaign::new(WIRE_SEEDS, 200, Flaws::NONE, PathBuf::new());
    insta::assert_snapshot!("correct_simulator_over_the_wire", campaign::text(&c, &summary));
    lap("simulator seeds over the wire");
    every_property_broken();
    lap("every property broken");
}

/// Every property each flaw and planted bug breaks, each at its fewest steps, explored without the
/// early stop: a property that a flaw breaks only after another has broken (`cache-is-snapshot` mid-
/// revision after `no-resurrected-delete`, `watch-reliable` after `converges`) is still judged. In every
/// world but list/watch, where a full exploration takes a second or two; in list/watch (about ten
/// seconds each) only for the flaws that alone break a property there: `watch-ordered`'s and
/// `watch-reliable`'s.
fn every_property_broken() {
    const ALONE: [Flaw; 2] = [Flaw::StaleDeleteRv, Flaw::NilPrevKvDropped];
    let limits = Limits { stop_at_violation: false, ..LIMITS };
    let broken = |o: &Outcome| -> String {
        assert!(o.complete, "not explored within the limits");
        let found = o.violated().map(|v| {
            let steps = v.counterexample.as_ref().map_or(0, |(steps, _)| steps.len());
            format!("{} after {steps}", v.property)
        });
        format!("{}; {} states", found.collect::<Vec<_>>().join(", "), o.states)
    };
    let mut every = String::new();
    for (flaw, world, _) in caught_by::CAUGHT_BY {
        if world == "list-watch" && !ALONE.contains(&flaw) {
            continue;
        }
        let w = scope::world(Scope::Default, Flaws::only(flaw), world).expect("a world");
        every += &format!("{flaw} in {world}: {}\n", broken(&run(w.config, Search::Bfs, limits)));
    }
    for (bug, _) in planted::CAUGHT_BY {
        let (world, _) = planted::world(bug);
        if world != "list-watch" {
            every += &format!("{bug:?} in {world}: {}\n", broken(&planted::check(bug, limits)));
        }
    }
    insta::assert_snapshot!("every_property_broken", every);
}

/// The first of 1,000 simulator seeds in which `flaw` breaks a property (harness/tests/simulate.rs
/// requires one), with the run and what broke.
fn first_found(flaw: Flaw) -> (u64, Run, Violation) {
    for seed in 0..1_000 {
        let r = run_seed(seed, Flaws::only(flaw), 200, 6_000);
        if let End::Broke(v) = &r.end {
            let v = v.clone();
            return (seed, r, v);
        }
    }
    panic!("the simulator no longer finds {flaw} in 1,000 seeds")
}

/// The model reflector, drawn for as a client that reads Kubernetes' wire.
struct OverTheWire;

impl Clients for OverTheWire {
    type C = ModelClient;
    type M = Manager;
    fn name(&self) -> String {
        "model".into()
    }
    fn make(&self, config: &Config, _seed: u64, _id: ClientId) -> ModelClient {
        ModelClient::new(config.reflector, config.flaws)
    }
    fn make_manager(&self, config: &Config, _seed: u64, m: ManagerConfig) -> Manager {
        Manager::new(m.clusters, m.requests, config.flaws)
    }
    fn over_the_wire(&self) -> bool {
        true
    }
}

/// The regression corpus of shrunk model traces (`corpus/*.json`): each still gives its recorded
/// verdict, the correct system holds on its steps, and its recording judged alone agrees.
fn corpus() {
    let files = corpus_files::corpus_files();
    assert!(!files.is_empty(), "no traces in {}", corpus_files::corpus_dir().display());
    for file in files {
        let trace = Trace::load(&file).unwrap_or_else(|e| panic!("{e}"));
        let r = replay(&trace).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        assert_eq!(r.verdict, trace.expect, "{}: verdict changed", file.display());
        assert_eq!(r.correct, Verdict::Holds, "{}: the correct system breaks", file.display());
        let recorded = match judge_frames(&record(trace.config, &trace.actions)) {
            Some((step, v)) => Verdict::Breaks { property: v.property, step },
            None => Verdict::Holds,
        };
        assert_eq!(recorded, trace.expect, "{}: judged from its recording", file.display());
    }
}

/// One seed of the correct system with `clients`, which must come to rest; its counts go into
/// `summary`.
fn simulate(clients: &impl Clients, seed: u64, summary: &mut Summary) -> Run {
    let r = run_seed_with(clients, seed, Flaws::NONE, 200, 6_000);
    let wire = if clients.over_the_wire() { ", drawn over the wire," } else { "" };
    assert_eq!(r.end, End::Rest, "simulator seed {seed}{wire} fails");
    summary.seeds_run += 1;
    summary.tally.add(&r.tally);
    r
}
