//! A breadth-first walk of every reachable state of a scope: the smoke check that every enabled step
//! applies, deterministically, without a panic.

use std::collections::{HashSet, VecDeque};

use listwatch_model::{Config, System};

/// What a walk found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WalkReport {
    pub states: usize,
    pub depth: usize,
    /// Whether `max_states` stopped the walk before it had seen everything.
    pub truncated: bool,
}

/// Walk every state reachable from the initial one, up to `max_states`.
pub fn walk(config: Config, max_states: usize) -> WalkReport {
    let start = System::new(config);
    let mut seen: HashSet<System> = HashSet::from([start.clone()]);
    let mut queue = VecDeque::from([(start, 0usize)]);
    let mut depth = 0;
    let mut actions = Vec::new();
    while let Some((state, d)) = queue.pop_front() {
        depth = depth.max(d);
        actions.clear();
        state.actions(&mut actions);
        for action in &actions {
            let mut next = state.clone();
            next.apply(*action);
            if seen.len() >= max_states {
                return WalkReport { states: seen.len(), depth, truncated: true };
            }
            if seen.insert(next.clone()) {
                queue.push_back((next, d + 1));
            }
        }
    }
    WalkReport { states: seen.len(), depth, truncated: false }
}
