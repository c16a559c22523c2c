//! Shrinking a failing run: remove steps while the same property still breaks (delta debugging: halves,
//! then quarters, ... then single steps, repeated until nothing more can go). A candidate is replayed
//! leaving out the steps it no longer enables (a route for a request that is now never sent, a timer
//! that is not armed), so removing a cause takes its consequences with it and every result is a valid
//! run. The configuration's budgets shrink too: a write that is no longer taken must also leave the
//! budget, or the environment never goes quiet and a liveness property is never judged.

use listwatch_model::{Action, Clients, Config, ModelReflector};
use listwatch_properties::Property;

use crate::replay::take_enabled_with;

/// The steps of `actions` that `config` enables, up to where `property` breaks; `None` if it does not.
fn breaks<K: Clients>(
    k: &K,
    seed: u64,
    config: Config,
    actions: &[Action],
    property: Property,
) -> Result<Option<Vec<Action>>, String> {
    Ok(match take_enabled_with(k, seed, config, actions)? {
        (taken, Some(v)) if v.property == property => Some(taken),
        _ => None,
    })
}

/// Shrink `actions` (which break `property` under `config`) and the budgets of `config` to a valid run
/// that still breaks it, with no step and no unit of budget that can go on its own. The run ends at the
/// step where the property breaks.
pub fn shrink(config: Config, actions: &[Action], property: Property) -> (Config, Vec<Action>) {
    shrink_with(&ModelReflector, 0, config, actions, property)
        .unwrap_or_else(|gone| unreachable!("the model reflector: {gone}"))
}

/// [`shrink`] with the clients `k` makes; `seed` is the run's. `Err`: a client's machinery was gone
/// during a re-run (the step named).
pub fn shrink_with<K: Clients>(
    k: &K,
    seed: u64,
    config: Config,
    actions: &[Action],
    property: Property,
) -> Result<(Config, Vec<Action>), String> {
    // The first re-run that finds a client gone stops the shrink; the error is kept until then.
    let gone = std::cell::RefCell::new(None);
    let breaks = |config, actions: &[Action]| {
        if gone.borrow().is_some() {
            return None;
        }
        breaks(k, seed, config, actions, property).unwrap_or_else(|e| {
            gone.replace(Some(e));
            None
        })
    };
    let Some(mut best) = breaks(config, actions) else {
        return gone.into_inner().map_or(Ok((config, actions.to_vec())), Err);
    };
    let mut config = config;
    loop {
        let before = (config, best.len());
        best = shrink_steps(config, best, &breaks);
        for (_, lower) in BUDGETS {
            while let Some(smaller) = lower(config) {
                let Some(taken) = breaks(smaller, &best) else { break };
                (config, best) = (smaller, taken);
            }
        }
        if let Some(e) = gone.borrow_mut().take() {
            return Err(e);
        }
        if (config, best.len()) == before {
            return Ok((config, best));
        }
    }
}

/// One unit less of something in a configuration, if there is any to take.
pub type Lower = fn(Config) -> Option<Config>;

/// What the shrinker may lower, by name: one unit of a budget, or one key.
pub const BUDGETS: [(&str, Lower); 6] = [
    ("writes", |c| c.writes.checked_sub(1).map(|writes| Config { writes, ..c })),
    ("foreign writes", |c| {
        c.foreign_writes.checked_sub(1).map(|foreign_writes| Config { foreign_writes, ..c })
    }),
    ("compactions", |c| c.compactions.checked_sub(1).map(|compactions| Config { compactions, ..c })),
    ("lease revokes", |c| c.lease_revokes.checked_sub(1).map(|lease_revokes| Config { lease_revokes, ..c })),
    ("faults", |c| c.faults.checked_sub(1).map(|faults| Config { faults, ..c })),
    ("keys", |c| c.keys.checked_sub(1).filter(|k| *k > 0).map(|keys| Config { keys, ..c })),
];

/// Remove steps while `property` still breaks.
fn shrink_steps(
    config: Config,
    mut best: Vec<Action>,
    breaks: &impl Fn(Config, &[Action]) -> Option<Vec<Action>>,
) -> Vec<Action> {
    let mut chunk = best.len().div_ceil(2).max(1);
    loop {
        let mut changed = false;
        let mut i = 0;
        while i < best.len() {
            let end = (i + chunk).min(best.len());
            let mut candidate = Vec::with_capacity(best.len());
            candidate.extend_from_slice(&best[..i]);
            candidate.extend_from_slice(&best[end..]);
            match breaks(config, &candidate) {
                Some(taken) => {
                    best = taken;
                    changed = true;
                }
                None => i += chunk,
            }
        }
        if chunk == 1 && !changed {
            return best;
        }
        chunk = (chunk / 2).max(1);
    }
}
