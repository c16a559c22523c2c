//! The mutation-testing gate that `scripts/mutants` runs against every mutant of `model/src` and
//! `properties/src`: the checker and the simulator only, no unit test. A mutant is caught when the
//! correct system breaks a property in the default scope, a witness goes unreached there, a catalogue
//! flaw or a planted client bug stops being caught by the property named for it, a simulator seed of
//! the correct system fails, or the simulator stops finding a flaw; a run the limits stop counts as
//! caught too (the scope was not proven).
//!
//! The cheapest judges run first and the first failure ends the run, so a caught mutant costs seconds;
//! only a survivor pays for the whole gate.

#[path = "support/caught_by.rs"]
mod caught_by;
#[path = "support/planted.rs"]
mod planted;

use std::time::Duration;

use listwatch_harness::checker::{run, run_with, CheckModel, Limits, Search};
use listwatch_harness::scope::{worlds, Scope};
use listwatch_harness::sim::run::{run_seed, End};
use listwatch_model::{Config, Flaws, ModelClient};

const LIMITS: Limits = Limits {
    max_states: 3_000_000,
    threads: 1,
    symmetry: true,
    time_limit: Duration::from_secs(60),
    stop_at_violation: true,
    memory_limit_bytes: None,
};
const SEEDS: u64 = 10_000;

#[test]
#[ignore = "the mutation-testing gate: scripts/mutants runs it on every mutant (--profile mutants, --ignored)"]
fn the_checker_and_the_simulator_judge_every_mutant() {
    let started = std::time::Instant::now();
    let lap = |what: &str| eprintln!("mutation gate: {what} after {:.1} s", started.elapsed().as_secs_f64());
    for seed in 0..SEEDS / 5 {
        simulate(seed);
    }
    lap("first simulator seeds");
    // The simulator judges too: every flaw breaks a property within its first 1,000 seeds
    // (harness/tests/simulate.rs), usually within a few.
    for (flaw, _, _) in caught_by::CAUGHT_BY {
        let found =
            (0..1_000).any(|seed| matches!(run_seed(seed, Flaws::only(flaw), 200, 6_000).end, End::Broke(_)));
        assert!(found, "the simulator no longer finds {flaw} in 1,000 seeds");
    }
    lap("flaws in the simulator");
    for (flaw, world, property) in caught_by::CAUGHT_BY {
        let w =
            worlds(Scope::Default, Flaws::only(flaw)).into_iter().find(|w| w.name == world).expect("world");
        let caught = run(w.config, Search::Bfs, LIMITS).violated().any(|v| v.property == property);
        assert!(caught, "{flaw} is no longer caught by {property} in world {world}");
    }
    lap("flaws");
    for (bug, property) in planted::CAUGHT_BY {
        let make =
            move |c: &Config, _| planted::Planted { inner: ModelClient::new(c.reflector, c.flaws), bug };
        let o = run_with(CheckModel::with_clients(planted::list_watch_world(), make), Search::Bfs, LIMITS);
        assert!(o.violated().any(|v| v.property == property), "{bug:?} is no longer caught by {property}");
    }
    lap("planted bugs");
    // The largest world (list-watch, half the states) last: a mutant that breaks the correct system
    // is usually found in a smaller one within seconds.
    let mut correct = worlds(Scope::Default, Flaws::NONE);
    correct.rotate_left(1);
    let mut outcomes = Vec::new();
    for w in correct {
        let o = run(w.config, Search::Bfs, LIMITS);
        if let Some(v) = o.violated().next() {
            panic!("the correct system breaks: {}", v.counterexample.as_ref().expect("violated").1);
        }
        assert!(o.complete, "world {} was not explored within the limits", w.name);
        outcomes.push(o);
        lap(w.name);
    }
    for p in listwatch_properties::Property::ALL {
        let reached = outcomes.iter().any(|o| o.verdicts.iter().any(|v| v.property == p && v.witnessed));
        assert!(reached, "witness of {p} unreached: {}", p.witness());
    }
    for seed in SEEDS / 5..SEEDS {
        simulate(seed);
    }
    lap("simulator seeds");
}

fn simulate(seed: u64) {
    let r = run_seed(seed, Flaws::NONE, 200, 6_000);
    assert_eq!(r.end, End::Rest, "simulator seed {seed} fails");
}
