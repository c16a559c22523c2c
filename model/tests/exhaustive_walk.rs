//! Every reachable state of a tiny scope, for the correct system and every flaw: no step panics, every
//! listed action applies, and stepping is deterministic.

use std::collections::{BTreeSet, VecDeque};

use listwatch_model::{Component, Config, Flaw, Flaws, System};

fn walk(config: Config) -> usize {
    let start = System::new(config);
    let mut seen: std::collections::HashSet<System> = std::collections::HashSet::new();
    let mut queue = VecDeque::from([start.clone()]);
    seen.insert(start);
    let mut actions = Vec::new();
    while let Some(state) = queue.pop_front() {
        actions.clear();
        state.actions(&mut actions);
        let distinct: BTreeSet<_> = actions.iter().collect();
        assert_eq!(distinct.len(), actions.len(), "an action is listed twice");
        for action in &actions {
            let mut a = state.clone();
            let mut b = state.clone();
            assert_eq!(a.apply(*action), b.apply(*action), "{action} observed differently");
            assert_eq!(a, b, "{action} is not deterministic");
            if seen.insert(a.clone()) {
                queue.push_back(a);
            }
        }
    }
    seen.len()
}

#[test]
fn every_flaw_walks_a_tiny_scope_without_panicking() {
    let tiny = Config { keys: 1, writes: 2, faults: 1, compactions: 1, ..Config::default() };
    let correct = walk(tiny);
    assert!(correct > 100, "the scope is not trivial: {correct} states");
    let configs: Vec<Config> = Flaw::ALL
        .into_iter()
        .map(|flaw| {
            let config = match flaw.component() {
                // The manager's own world: with a reflector beside it the walk is 40 times longer and
                // walks nothing of the manager's that this one does not.
                Component::Manager => Config {
                    reflectors: 0,
                    manager: Some(listwatch_model::ManagerConfig { clusters: 2, requests: 2 }),
                    fault_kinds: listwatch_model::FaultKinds::all(),
                    ..tiny
                },
                _ => tiny,
            };
            config.with_flaws(Flaws::only(flaw))
        })
        .collect();
    // The walks are independent: one thread per core shares them out.
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    std::thread::scope(|scope| {
        for chunk in configs.chunks(configs.len().div_ceil(threads)) {
            scope.spawn(move || {
                chunk.iter().for_each(|c| {
                    walk(*c);
                })
            });
        }
    });
}
