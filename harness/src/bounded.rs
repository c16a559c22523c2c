//! The bounded exhaustive mode, for a client the checker cannot explore (one it cannot clone or hash,
//! such as kube-runtime on its own runtime): every schedule of at most `depth` steps of a world, each
//! re-executed from the start with a fresh client, every property judged after every step.
//!
//! What it covers, exactly: every sequence of enabled actions of length at most `depth` from the
//! world's initial state (a schedule that ends early, with nothing enabled, counts once). States are
//! not merged, since a foreign client's state cannot be hashed: a state reached by two schedules is
//! explored twice. Depths are tried in turn (iterative deepening), so the first violation found is one
//! with the fewest steps. Liveness that needs the environment quiet is judged only where a schedule
//! within the bound makes it quiet.

use listwatch_model::{Action, Clients, Config};
use listwatch_properties::{first_violation, Violation};

use crate::check_model::CheckState;

/// What a bounded run did.
#[derive(Clone, Debug)]
pub struct Bounded {
    /// The deepest bound completed.
    pub depth: usize,
    /// Schedules run to their end (at the bound, or where nothing was enabled), over all depths.
    pub schedules: u64,
    /// Steps taken, re-execution included.
    pub steps: u64,
    /// The first violation, with a shortest schedule that shows it.
    pub broke: Option<(Vec<Action>, Violation)>,
    /// The schedule budget ran out before the bound was covered.
    pub cut: bool,
    /// A client's machinery was gone ([`listwatch_model::Client::gone`]): the run stopped there.
    pub gone: Option<String>,
}

/// Explore every schedule of `config` of at most `depth` steps with the clients `k` makes, until a
/// violation or `max_schedules` schedules.
pub fn explore<K: Clients>(k: &K, config: Config, depth: usize, max_schedules: u64) -> Bounded {
    let mut run = Bounded { depth: 0, schedules: 0, steps: 0, broke: None, cut: false, gone: None };
    for bound in 1..=depth {
        let mut prefix = Vec::with_capacity(bound);
        visit(k, config, bound, &mut prefix, max_schedules, &mut run);
        if run.broke.is_some() || run.cut || run.gone.is_some() {
            return run;
        }
        run.depth = bound;
    }
    run
}

/// The system after `prefix`, judged after its last step.
fn replay<K: Clients>(
    k: &K,
    config: Config,
    prefix: &[Action],
    run: &mut Bounded,
) -> (CheckState<K::C>, Option<Violation>) {
    let mut state = CheckState::start_with(config, |id| k.make(&config, 0, id));
    let mut broke = first_violation(&state.sys, &state.monitor);
    for (i, a) in prefix.iter().enumerate() {
        state.step(*a);
        run.steps += 1;
        if let Some(why) = state.sys.gone() {
            run.gone.get_or_insert(format!("step {} ({a}) of a schedule: {why}", i + 1));
            return (state, None);
        }
        broke = first_violation(&state.sys, &state.monitor);
    }
    (state, broke)
}

fn visit<K: Clients>(
    k: &K,
    config: Config,
    bound: usize,
    prefix: &mut Vec<Action>,
    max: u64,
    run: &mut Bounded,
) {
    if run.broke.is_some() || run.cut || run.gone.is_some() {
        return;
    }
    let (state, broke) = replay(k, config, prefix, run);
    if run.gone.is_some() {
        return;
    }
    if let Some(v) = broke {
        run.broke = Some((prefix.clone(), v));
        return;
    }
    let mut enabled = Vec::new();
    state.sys.actions(&mut enabled);
    drop(state);
    if prefix.len() == bound || enabled.is_empty() {
        run.schedules += 1;
        run.cut = run.schedules >= max;
        return;
    }
    for a in enabled {
        prefix.push(a);
        visit(k, config, bound, prefix, max, run);
        prefix.pop();
        if run.broke.is_some() || run.cut || run.gone.is_some() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scope::Scope;
    use listwatch_model::ModelReflector;

    #[test]
    fn the_model_reflector_holds_within_the_bound_and_a_flaw_breaks() {
        let mut config = Scope::Small.config();
        (config.servers, config.reflectors, config.faults) = (1, 1, 1);
        let run = explore(&ModelReflector, config, 5, 1_000_000);
        assert!(run.broke.is_none(), "{:?}", run.broke);
        assert_eq!(run.depth, 5);
        assert!(run.schedules > 100, "{} schedules", run.schedules);
        // A catalogue flaw the checker catches in 3 steps is caught here in as few.
        let flaw = listwatch_model::Flaw::RewatchInitialEvents;
        let home = crate::scope::home_world(flaw);
        let world = crate::scope::world(Scope::Small, listwatch_model::Flaws::only(flaw), home)
            .expect("its home world");
        let run = explore(&ModelReflector, world.config, 5, 1_000_000);
        let (steps, v) = run.broke.expect("the flaw is caught");
        assert_eq!((steps.len(), v.property), (3, listwatch_properties::Property::NoNeedlessRelist));
    }
}
