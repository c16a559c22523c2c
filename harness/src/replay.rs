//! Judging a list of actions: the verdict of a trace, and whether a corpus file still reproduces.

use listwatch_model::{Action, Clients, Config, Flaws, ModelReflector, System};
use listwatch_properties::{first_violation, Frame, Violation};

use crate::check_model::CheckState;
use crate::tracefile::{Trace, Verdict};

/// Run `actions` from the start of `config`, judging every state (the initial one is step 0), until the
/// first violation. An action that is not enabled where it stands is skipped (its step number is still
/// counted).
pub fn judge(config: Config, actions: &[Action]) -> (Verdict, Option<Violation>) {
    judge_with(&ModelReflector, 0, config, actions)
        .unwrap_or_else(|gone| unreachable!("the model reflector: {gone}"))
}

/// [`judge`] with the clients `clients` makes (`seed`: the run's, for clients that draw from it). `Err`:
/// a client's machinery was gone at the step named ([`listwatch_model::Client::gone`]).
pub fn judge_with<K: Clients>(
    clients: &K,
    seed: u64,
    config: Config,
    actions: &[Action],
) -> Result<(Verdict, Option<Violation>), String> {
    let walk = walk(clients, seed, config, actions)?;
    Ok(match walk.broke {
        Some((step, v)) => (Verdict::Breaks { property: v.property, step }, Some(v)),
        None => (Verdict::Holds, None),
    })
}

/// Run `actions` from the start of `config`, leaving out every step that is not enabled where it
/// stands, until the first violation: the steps taken (a valid run by construction, ending at the
/// violation if there is one) and which property broke.
pub fn take_enabled(config: Config, actions: &[Action]) -> (Vec<Action>, Option<Violation>) {
    take_enabled_with(&ModelReflector, 0, config, actions)
        .unwrap_or_else(|gone| unreachable!("the model reflector: {gone}"))
}

/// [`take_enabled`] with the clients `clients` makes; `Err` as for [`judge_with`].
pub fn take_enabled_with<K: Clients>(
    clients: &K,
    seed: u64,
    config: Config,
    actions: &[Action],
) -> Result<(Vec<Action>, Option<Violation>), String> {
    let walk = walk(clients, seed, config, actions)?;
    Ok((walk.taken, walk.broke.map(|(_, v)| v)))
}

/// The first of `actions` that is not enabled where it stands when run with the clients `clients`
/// makes, if any: a trace file must be a run, and loading one does not execute it.
pub fn first_disabled<K: Clients>(
    clients: &K,
    seed: u64,
    config: Config,
    actions: &[Action],
) -> Result<Option<usize>, String> {
    let (mut sys, _) = System::start_clients(clients, config, seed);
    if let Some(why) = sys.gone() {
        return Err(format!("at the start: {why}"));
    }
    for (i, a) in actions.iter().enumerate() {
        if sys.try_apply(*a).is_err() {
            return Ok(Some(i));
        }
        if let Some(why) = sys.gone() {
            return Err(format!("step {} ({a}): {why}", i + 1));
        }
    }
    Ok(None)
}

/// What running a list of actions did.
struct Walk {
    /// The actions taken: those enabled where they stood, up to the violation.
    taken: Vec<Action>,
    /// The first violation, with its step: the position in the given list of the action after which it
    /// broke (0: the initial state).
    broke: Option<(usize, Violation)>,
}

fn walk<K: Clients>(clients: &K, seed: u64, config: Config, actions: &[Action]) -> Result<Walk, String> {
    let mut state = CheckState::start_clients(clients, config, seed);
    let mut taken = Vec::with_capacity(actions.len());
    if let Some(why) = state.sys.gone() {
        return Err(format!("at the start: {why}"));
    }
    if let Some(v) = first_violation(&state.sys, &state.monitor) {
        return Ok(Walk { taken, broke: Some((0, v)) });
    }
    for (i, action) in actions.iter().enumerate() {
        if !state.sys.enabled(*action) {
            continue;
        }
        state.step(*action);
        taken.push(*action);
        if let Some(why) = state.sys.gone() {
            return Err(format!("step {} ({action}): {why}", i + 1));
        }
        if let Some(v) = first_violation(&state.sys, &state.monitor) {
            return Ok(Walk { taken, broke: Some((i + 1, v)) });
        }
    }
    Ok(Walk { taken, broke: None })
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
        self.verdict == trace.expect && (self.correct == Verdict::Holds || !trace.is_model())
    }
}

/// Replay a loaded trace with the client it names, made by `clients`: first check that each of its
/// actions is enabled where it stands, then judge it, and the correct model reflector on its steps.
/// `Err`: a step that is not enabled, or a client whose machinery was gone (one line, naming the step).
pub fn replay_with<K: Clients>(clients: &K, trace: &Trace) -> Result<Replayed, String> {
    let seed = trace.seed.unwrap_or(0);
    check_enabled(clients, trace)?;
    let verdict = judge_with(clients, seed, trace.config, &trace.actions)?.0;
    let correct = judge(trace.config.with_flaws(Flaws::NONE), &trace.actions).0;
    Ok(Replayed { verdict, correct })
}

/// Replay a trace of the model reflector ([`replay_with`]).
pub fn replay(trace: &Trace) -> Result<Replayed, String> {
    replay_with(&ModelReflector, trace)
}

/// The verdicts of a model-reflector trace as it stands, with its flaws and without (steps a run does
/// not enable are skipped): what the renderers print.
pub fn verdicts(trace: &Trace) -> Replayed {
    let verdict = judge(trace.config, &trace.actions).0;
    let correct = judge(trace.config.with_flaws(Flaws::NONE), &trace.actions).0;
    Replayed { verdict, correct }
}

/// Every action of the trace is enabled where it stands, with the clients `clients` makes.
pub fn check_enabled<K: Clients>(clients: &K, trace: &Trace) -> Result<(), String> {
    match first_disabled(clients, trace.seed.unwrap_or(0), trace.config, &trace.actions)? {
        None => Ok(()),
        Some(i) => Err(format!(
            "actions[{i}] '{}': not enabled at that point of the trace",
            crate::action_text::format(&trace.actions[i])
        )),
    }
}
