//! The symmetry reduction over API servers is sound here: in the worlds of the small scope given a
//! second API server, correct and with each catalogue flaw in its own world, the search with it and
//! without it gives every property the same verdict, reaches the same witnesses, and finds
//! counterexamples as short; every counterexample found under it is a real run from the initial state
//! that ends in its violation; and it keeps about half the states. The long comparison takes this
//! run's share of its worlds and flaws (`support/share.rs`).

#[path = "support/share.rs"]
mod share;

use listwatch_harness::checker::{run, CheckModel, Limits, Outcome, Search};
use listwatch_harness::scope::{home_world, worlds, Scope};
use listwatch_model::{Component, Config, Flaw, Flaws};
use listwatch_properties::violation;

fn limits(symmetry: bool, stop_at_violation: bool) -> Limits {
    Limits { symmetry, ..Limits::states(5_000_000, stop_at_violation) }
}

fn verdicts(o: &Outcome) -> Verdicts {
    o.verdicts
        .iter()
        .map(|v| (v.property.to_string(), v.counterexample.as_ref().map(|(s, _)| s.len()), v.witnessed()))
        .collect()
}

/// Every counterexample replays, step by enabled step, from the initial state to its violation.
fn replays(config: Config, o: &Outcome) {
    for v in o.verdicts.iter().filter(|v| v.counterexample.is_some()) {
        let (steps, found) = v.counterexample.as_ref().expect("filtered");
        let mut state = CheckModel::new(config).initial_state();
        for step in steps {
            let mut enabled = Vec::new();
            state.sys.actions(&mut enabled);
            assert!(enabled.contains(step), "{}: '{step}' is enabled where the trace takes it", v.property);
            state.step(*step);
        }
        let end = violation(v.property, &state.sys, &state.monitor);
        assert_eq!(end.as_ref(), Some(found), "{}: the trace ends in its violation", v.property);
    }
}

/// Per property: its verdict (with the counterexample's length) and whether its witness was reached.
type Verdicts = Vec<(String, Option<usize>, bool)>;

/// The small scope's worlds with `flaws`, each given a second API server where it has one.
fn two_server_worlds(flaws: Flaws) -> Vec<(&'static str, Config)> {
    worlds(Scope::Small, flaws)
        .into_iter()
        .filter(|w| w.config.manager.is_none())
        .map(|w| (w.name, Config { servers: w.config.servers.max(2), ..w.config }))
        .collect()
}

fn compare(flaws: Flaws, stop_at_violation: bool, only: Option<&str>) {
    for (name, config) in two_server_worlds(flaws) {
        if only.is_some_and(|o| o != name) {
            continue;
        }
        let with = run(config, Search::Bfs, limits(true, stop_at_violation));
        let without = run(config, Search::Bfs, limits(false, stop_at_violation));
        if !stop_at_violation {
            assert!(with.complete && without.complete, "{name}: both explore it all");
            assert_eq!(verdicts(&with), verdicts(&without), "{name} with {flaws:?}");
            let symmetric =
                listwatch_harness::checker::CheckModel::new(config).initial_state().sys.servers_symmetric();
            if symmetric {
                assert!(
                    with.states * 10 < without.states * 6,
                    "{name}: {} states with it, {} without",
                    with.states,
                    without.states
                );
            } else {
                assert_eq!(with.states, without.states, "{name}: servers not alike, nothing to reduce");
            }
        } else {
            let shortest =
                |o: &Outcome| o.violated().map(|v| v.counterexample.as_ref().map_or(0, |c| c.0.len())).min();
            assert_eq!(shortest(&with), shortest(&without), "{name} with {flaws:?}: as short");
        }
        replays(config, &with);
    }
}

#[test]
fn the_correct_system_with_two_servers_gets_the_same_verdicts_from_half_the_states() {
    compare(Flaws::NONE, false, Some("list-watch"));
}

#[test]
fn the_flaws_of_two_servers_are_caught_as_without_it() {
    for flaw in [Flaw::RelistFromStaleCache, Flaw::RetryTooLargeRv] {
        compare(Flaws::NONE.with(flaw), true, Some("list-watch"));
    }
}

/// The worlds small enough with two servers to explore both ways in a minute or two; the others (two
/// reflectors, a slow etcd watcher) pass millions of states with a second server.
const BOTH_WAYS: [&str; 4] = ["list-watch", "watch-list", "paginated-relist", "lease-revoke"];

/// Those worlds explored to the end both ways for the correct system, and every flaw to its first
/// violation in its own world (`scope::home_world`, where its story is caught) with a second API server.
/// The manager's flaws are not: the manager's world has no server to reduce over. A flaw in a world it
/// does not touch gives the correct system's state space again, so exploring the other worlds to the
/// end once more per flaw, both ways, repeated the first comparison for minutes. Minutes in release:
/// `.ci/run` runs it (`cargo test --release --test symmetry -- --ignored`).
#[test]
#[ignore = "minutes: .ci/run runs it in release mode"]
fn every_world_and_each_flaw_in_its_own_get_the_same_verdicts_with_and_without_it() {
    let correct = BOTH_WAYS.map(|world| (Flaws::NONE, world));
    let flawed = Flaw::ALL
        .into_iter()
        .filter(|flaw| flaw.component() != Component::Manager)
        .map(|flaw| (Flaws::NONE.with(flaw), home_world(flaw)));
    for (flaws, world) in share::share(correct.into_iter().chain(flawed)) {
        if flaws == Flaws::NONE {
            compare(flaws, false, Some(world));
        } else {
            assert!(
                two_server_worlds(flaws).iter().any(|(name, _)| *name == world),
                "{flaws:?}: {world} compared"
            );
            compare(flaws, true, Some(world));
        }
    }
}
