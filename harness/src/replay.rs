//! Judging a list of actions: the verdict of a trace, and whether a corpus file still reproduces.

use listwatch_model::{Action, ClientId, Config, Flaws, System};
use listwatch_properties::{first_violation, Frame, Violation};

use crate::checker::CheckState;
use crate::clients::{Clients, ModelReflector};
use crate::tracefile::{Trace, Verdict};

/// Run `actions` from the start of `config`, judging every state (the initial one is step 0), until the
/// first violation. An action that is not enabled where it stands is skipped (its step number is still
/// counted).
pub fn judge(config: Config, actions: &[Action]) -> (Verdict, Option<Violation>) {
    judge_with(&ModelReflector, 0, config, actions)
}

/// [`judge`] with the clients `clients` makes (`seed`: the run's, for clients that draw from it).
pub fn judge_with<K: Clients>(
    clients: &K,
    seed: u64,
    config: Config,
    actions: &[Action],
) -> (Verdict, Option<Violation>) {
    let walk = walk(clients, seed, config, actions);
    match walk.broke {
        Some((step, v)) => (Verdict::Breaks { property: v.property, step }, Some(v)),
        None => (Verdict::Holds, None),
    }
}

/// Run `actions` from the start of `config`, leaving out every step that is not enabled where it
/// stands, until the first violation: the steps taken (a valid run by construction, ending at the
/// violation if there is one) and which property broke.
pub fn take_enabled(config: Config, actions: &[Action]) -> (Vec<Action>, Option<Violation>) {
    take_enabled_with(&ModelReflector, 0, config, actions)
}

/// [`take_enabled`] with the clients `clients` makes.
pub fn take_enabled_with<K: Clients>(
    clients: &K,
    seed: u64,
    config: Config,
    actions: &[Action],
) -> (Vec<Action>, Option<Violation>) {
    let walk = walk(clients, seed, config, actions);
    (walk.taken, walk.broke.map(|(_, v)| v))
}

/// What running a list of actions did.
struct Walk {
    /// The actions taken: those enabled where they stood, up to the violation.
    taken: Vec<Action>,
    /// The first violation, with its step: the position in the given list of the action after which it
    /// broke (0: the initial state).
    broke: Option<(usize, Violation)>,
}

fn walk<K: Clients>(clients: &K, seed: u64, config: Config, actions: &[Action]) -> Walk {
    let mut state = CheckState::start_with(config, |id: ClientId| clients.make(&config, seed, id));
    let mut taken = Vec::with_capacity(actions.len());
    if let Some(v) = first_violation(&state.sys, &state.monitor) {
        return Walk { taken, broke: Some((0, v)) };
    }
    for (i, action) in actions.iter().enumerate() {
        if !state.sys.enabled(*action) {
            continue;
        }
        state.step(*action);
        taken.push(*action);
        if let Some(v) = first_violation(&state.sys, &state.monitor) {
            return Walk { taken, broke: Some((i + 1, v)) };
        }
    }
    Walk { taken, broke: None }
}

/// Record what running `actions` from the start of `config` showed, one frame per step (the first is
/// the start), for judging without the system ([`listwatch_properties::judge_frames`]). Steps that are
/// not enabled where they stand are left out.
pub fn record(config: Config, actions: &[Action]) -> Vec<Frame> {
    let (mut sys, seen) = System::start(config);
    let mut frames = vec![Frame::of(&sys, seen)];
    for action in actions {
        if let Ok(seen) = sys.try_apply(*action) {
            frames.push(Frame::of(&sys, seen));
        }
    }
    frames
}

/// What replaying one trace showed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replayed {
    /// The verdict with the trace's own configuration (its flaws on).
    pub verdict: Verdict,
    /// The verdict of the correct system on the same actions, skipping those it does not enable.
    pub correct: Verdict,
}

impl Replayed {
    /// The trace still shows what it recorded, and the correct system holds on it.
    pub fn reproduces(&self, trace: &Trace) -> bool {
        // A foreign client's trace records what that client does: there is no flaw to switch off.
        self.verdict == trace.expect && (self.correct == Verdict::Holds || !trace.client.is_model())
    }
}

/// Replay a loaded trace (its actions are known to be enabled).
pub fn replay(trace: &Trace) -> Replayed {
    let seed = trace.seed.unwrap_or(0);
    let verdict = trace.client.judge(seed, trace.config, &trace.actions).0;
    let correct = judge(trace.config.with_flaws(Flaws::NONE), &trace.actions).0;
    Replayed { verdict, correct }
}
