//! A state cloned into another (`clone_from`, as the search makes each successor into one spare state)
//! is that state: equal, hashed alike, and stepping on alike. Taken over states of every world of the
//! large scope (two API servers, a client manager, streaming lists), from walks that pick different
//! actions, each cloned into states of other shapes: longer queues, more cached objects, other phases.

use std::hash::BuildHasher;

use listwatch_harness::check_model::CheckState;
use listwatch_harness::checker::CheckModel;
use listwatch_harness::scope::{worlds, Scope};
use listwatch_model::{Action, Flaws};

/// The states along a walk of `len` steps from the initial state: at step `i`, the enabled action at
/// `(i * stride + offset) mod` their number.
fn walk(model: &CheckModel, len: usize, stride: usize, offset: usize) -> Vec<CheckState> {
    let mut state = model.initial_state();
    let mut out = vec![state.clone()];
    let mut actions = Vec::new();
    for i in 0..len {
        actions.clear();
        state.sys.actions(&mut actions);
        let Some(&action) = actions.get((i * stride + offset) % actions.len().max(1)) else { break };
        state.step(action);
        out.push(state.clone());
    }
    out
}

fn hash(s: &CheckState) -> u64 {
    foldhash::quality::FixedState::with_seed(1).hash_one(s)
}

#[test]
fn a_state_cloned_into_another_is_that_state() {
    let mut pairs = 0;
    for world in worlds(Scope::Large, Flaws::NONE) {
        let model = CheckModel::new(world.config);
        let states: Vec<CheckState> = [(3, 1), (5, 2), (7, 0)]
            .into_iter()
            .flat_map(|(stride, offset)| walk(&model, 40, stride, offset))
            .collect();
        for (i, from) in states.iter().enumerate().step_by(3) {
            for into in states.iter().skip(i % 7).step_by(5) {
                let mut made = into.clone();
                made.clone_from(from);
                assert!(
                    made == *from && made.depth == from.depth,
                    "{}: state {i} cloned into another differs",
                    world.name
                );
                assert_eq!(
                    hash(&made),
                    hash(from),
                    "{}: state {i} cloned into another hashes apart",
                    world.name
                );
                let mut actions: Vec<Action> = Vec::new();
                from.sys.actions(&mut actions);
                for &action in &actions {
                    let (mut a, mut b) = (from.clone(), made.clone());
                    assert_eq!(a.step(action), b.step(action), "{}: {action} observed apart", world.name);
                    assert!(a == b, "{}: state {i} cloned into another steps apart on {action}", world.name);
                }
                pairs += 1;
            }
        }
    }
    assert!(pairs > 500, "only {pairs} pairs compared");
}
