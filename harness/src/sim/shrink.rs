//! Shrinking a failing run: remove steps while the same property still breaks and every remaining step
//! is still enabled where it stands (delta debugging: halves, then quarters, ... then single steps,
//! repeated until nothing more can go).

use listwatch_model::{Action, Config};
use listwatch_properties::Property;

use crate::replay::judge_valid;
use crate::tracefile::Verdict;

/// The shortest prefix of `actions` that still breaks `property` validly, if it breaks at all.
fn breaks(config: Config, actions: &[Action], property: Property) -> Option<usize> {
    match judge_valid(config, actions)? {
        (Verdict::Breaks { property: p, step }, _) if p == property => Some(step),
        _ => None,
    }
}

/// Shrink `actions` (which break `property` under `config`) to a run that still does, with no step
/// that can be removed on its own. The result ends at the step where the property breaks.
pub fn shrink(config: Config, actions: &[Action], property: Property) -> Vec<Action> {
    let mut best: Vec<Action> = actions.to_vec();
    match breaks(config, &best, property) {
        Some(step) => best.truncate(step),
        None => return best,
    }
    let mut chunk = best.len().div_ceil(2).max(1);
    loop {
        let mut changed = false;
        let mut i = 0;
        while i < best.len() {
            let end = (i + chunk).min(best.len());
            let mut candidate = Vec::with_capacity(best.len());
            candidate.extend_from_slice(&best[..i]);
            candidate.extend_from_slice(&best[end..]);
            if let Some(step) = breaks(config, &candidate, property) {
                candidate.truncate(step);
                best = candidate;
                changed = true;
            } else {
                i += chunk;
            }
        }
        if chunk == 1 && !changed {
            return best;
        }
        chunk = (chunk / 2).max(1);
    }
}
