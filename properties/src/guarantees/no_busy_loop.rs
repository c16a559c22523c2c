//! `no-busy-loop`: a client never takes more than [`BUSY_STEPS_MAX`] steps in a row that take no
//! model time and make no progress (no request sent, nothing received): the busy loop of
//! kubernetes#104171, a consumer reading a closed channel (C9).

use listwatch_model::Observed;

use crate::guarantees::{per_client, Found, Guarantee};
use crate::history::History;
use crate::observations::Observations;

/// Steps in a row that take no time and make no progress before it is a busy loop.
pub const BUSY_STEPS_MAX: u8 = 8;

#[derive(Debug, Default, PartialEq, Eq, Hash)]
pub struct State {
    /// Per client, its zero-time steps in a row without progress.
    pub busy_steps: Vec<u8>,
}
listwatch_model::clone_by_field!(State { busy_steps });

impl Guarantee for State {
    const NAME: &'static str = "no-busy-loop";
    const GUARANTEE: &'static str =
        "an actor never takes more than a bounded number of steps without progress";
    const WITNESS: &'static str = "a reflector waits out a backoff";

    fn observe(&mut self, obs: &impl Observations, seen: &Observed) -> Option<Found> {
        per_client(&mut self.busy_steps, obs);
        match *seen {
            Observed::Sent { client, .. }
            | Observed::Received { client, .. }
            | Observed::Garbled { client, .. } => {
                self.busy_steps[usize::from(client.0)] = 0;
            }
            // Time passes for a client only when one of its timers fires, its transport finds a
            // silent connection dead (A9), or a server made its request wait out a freshness bound.
            Observed::TimerFired { client, after_ms, .. }
            | Observed::SilenceNoticed { client, after_ms }
            | Observed::WaitedInVain { client, after_ms } => {
                let busy = &mut self.busy_steps[usize::from(client.0)];
                *busy = if after_ms == 0 { busy.saturating_add(1) } else { 0 };
                if *busy > BUSY_STEPS_MAX {
                    let detail = format!("{busy} zero-delay steps in a row without a request or event");
                    return Some(Found::by(client, detail));
                }
            }
            _ => {}
        }
        None
    }

    fn after_step(&mut self, obs: &impl Observations) -> Option<Found> {
        per_client(&mut self.busy_steps, obs);
        None
    }

    fn witnessed(&self, obs: &impl Observations, _history: &History) -> bool {
        obs.client_ids().any(|c| {
            let view = obs.client(c);
            !view.connected && view.scheduled
        })
    }
}
