//! `watch-ordered`.
//!
//! etcd's robustness names: ordered, unique, resumable. A bookmark may repeat the RV of the last
//! event (A8).
//!
//! Judged from the [`History`] several guarantees share: each event against the stream it arrived on (the event path of `History::received`).

use crate::guarantees::Guarantee;
use crate::history::History;
use crate::observations::Observations;

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct State;

impl Guarantee for State {
    const NAME: &'static str = "watch-ordered";
    const GUARANTEE: &'static str =
        "a watch stream delivers events in strictly increasing RV order, each once, none at or below \
                 the RV it started from";
    const WITNESS: &'static str = "a resumed watch delivers events";

    fn witnessed(&self, _obs: &impl Observations, history: &History) -> bool {
        history.clients.iter().any(|m| m.resumed && m.stream.is_some_and(|s| s.last > s.from))
    }
}
