//! `watch-reliable`.
//!
//! etcd's robustness names: reliable (no gaps), bookmarkable.
//!
//! Judged from the [`History`] several guarantees share: each event against the store's writes (the event path of `History::received`).

use crate::guarantees::Guarantee;
use crate::history::History;
use crate::observations::Observations;

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct State;

impl Guarantee for State {
    const NAME: &'static str = "watch-reliable";
    const GUARANTEE: &'static str = "a watch stream skips no event and invents none: every write after its RV arrives as what the \
                 store did there (ADDED a new incarnation, MODIFIED a new value, DELETED the last value at the \
                 deletion RV), and a bookmark is sent only when every event up to it was";
    const WITNESS: &'static str = "a bookmark moves a watch past its last event";

    fn witnessed(&self, _obs: &impl Observations, history: &History) -> bool {
        history.clients.iter().any(|m| m.bookmarked)
    }
}
