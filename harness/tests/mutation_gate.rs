//! The mutation-testing gate that `scripts/mutants` runs against every mutant of `model/src`: the
//! checker and the simulator only, no unit test. A mutant is caught when the correct system breaks a
//! property in the default scope, a witness goes unreached there, a catalogue flaw stops being caught,
//! or a simulator seed fails; a run the limits stop counts as caught too (the scope was not proven).

use std::time::Duration;

use listwatch_harness::checker::{run, Limits, Search};
use listwatch_harness::scope::{worlds, Scope};
use listwatch_harness::sim::run::{run_seed, End};
use listwatch_model::{Flaw, Flaws};
use listwatch_properties::Property;

const LIMITS: Limits = Limits {
    max_states: 3_000_000,
    threads: 1,
    symmetry: true,
    time_limit: Duration::from_secs(60),
    stop_at_violation: false,
    memory_limit_bytes: None,
};
const SEEDS: u64 = 500;

#[test]
#[ignore = "the mutation-testing gate: scripts/mutants runs it on every mutant (--profile mutants, --ignored)"]
fn the_checker_and_the_simulator_judge_every_mutant() {
    let outcomes: Vec<_> =
        worlds(Scope::Default, Flaws::NONE).iter().map(|w| run(w.config, Search::Bfs, LIMITS)).collect();
    for o in &outcomes {
        assert!(o.complete, "the default scope was not explored within the limits");
        if let Some(v) = o.violated().next() {
            panic!("the correct system breaks: {}", v.counterexample.as_ref().expect("violated").1);
        }
    }
    for p in Property::ALL {
        let reached = outcomes.iter().any(|o| o.verdicts.iter().any(|v| v.property == p && v.witnessed));
        assert!(reached, "witness of {p} unreached: {}", p.witness());
    }
    for flaw in Flaw::ALL {
        let stop = Limits { stop_at_violation: true, ..LIMITS };
        let caught = worlds(Scope::Default, Flaws::only(flaw))
            .iter()
            .any(|w| run(w.config, Search::Bfs, stop).violated().next().is_some());
        assert!(caught, "{flaw} is no longer caught");
    }
    for seed in 0..SEEDS {
        let r = run_seed(seed, Flaws::NONE, 200, 6_000);
        assert_eq!(r.end, End::Rest, "simulator seed {seed} fails");
    }
}
