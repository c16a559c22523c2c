//! Judging a list of actions: the verdict of a trace, and whether a corpus file still reproduces.

use listwatch_model::{Action, Config, Flaws};
use listwatch_properties::{first_violation, Violation};

use crate::checker::CheckState;
use crate::tracefile::{Trace, Verdict};

/// Run `actions` from the start of `config`, judging every state (the initial one is step 0), until the
/// first violation. An action that is not enabled where it stands is skipped (its step number is still
/// counted).
pub fn judge(config: Config, actions: &[Action]) -> (Verdict, Option<Violation>) {
    run(config, actions, false).unwrap_or((Verdict::Holds, None))
}

/// [`judge`], but `None` if an action is not enabled where it stands: the actions are not a valid run.
pub fn judge_valid(config: Config, actions: &[Action]) -> Option<(Verdict, Option<Violation>)> {
    run(config, actions, true)
}

/// Run `actions` from the start of `config`, leaving out every step that is not enabled where it
/// stands, until the first violation: the steps taken (a valid run by construction, ending at the
/// violation if there is one) and which property broke.
pub fn take_enabled(config: Config, actions: &[Action]) -> (Vec<Action>, Option<Violation>) {
    let mut state = CheckState::start(config);
    let mut taken = Vec::with_capacity(actions.len());
    if let Some(v) = first_violation(&state.sys, &state.monitor) {
        return (taken, Some(v));
    }
    for action in actions {
        if !state.sys.enabled(*action) {
            continue;
        }
        state.step(*action);
        taken.push(*action);
        if let Some(v) = first_violation(&state.sys, &state.monitor) {
            return (taken, Some(v));
        }
    }
    (taken, None)
}

fn run(config: Config, actions: &[Action], strict: bool) -> Option<(Verdict, Option<Violation>)> {
    let mut state = CheckState::start(config);
    if let Some(v) = first_violation(&state.sys, &state.monitor) {
        return Some((Verdict::Breaks { property: v.property, step: 0 }, Some(v)));
    }
    for (i, action) in actions.iter().enumerate() {
        if !state.sys.enabled(*action) {
            if strict {
                return None;
            }
            continue;
        }
        state.step(*action);
        if let Some(v) = first_violation(&state.sys, &state.monitor) {
            return Some((Verdict::Breaks { property: v.property, step: i + 1 }, Some(v)));
        }
    }
    Some((Verdict::Holds, None))
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
        self.verdict == trace.expect && self.correct == Verdict::Holds
    }
}

/// Replay a loaded trace (its actions are known to be enabled).
pub fn replay(trace: &Trace) -> Replayed {
    let verdict = judge(trace.config, &trace.actions).0;
    let correct = judge(trace.config.with_flaws(Flaws::NONE), &trace.actions).0;
    Replayed { verdict, correct }
}
