//! `no-needless-relist`.
//!
//! C5, every ending of a watch, and what must come next (judged from what the client received and
//! did; "progress" is an event received or a second of model time on the stream):
//!
//! | how the watch ended                                   | progress | next request          |
//! |-------------------------------------------------------|----------|-----------------------|
//! | the server closed it cleanly (its timeout, a relist)  | yes      | WATCH from the RV     |
//! | the client closed it itself (its own timeout)         | any      | WATCH from the RV     |
//! | the connection broke                                  | yes      | WATCH from the RV     |
//! | closed or broke within a second with no event         | no       | any, after a backoff  |
//! | WATCH refused 429, or connection refused              | -        | WATCH, after a backoff|
//! | ERROR event 429                                       | -        | WATCH, after a backoff|
//! | ERROR event 410 (Expired)                             | -        | LIST, after a backoff |
//! | ERROR event or refusal 500, other errors              | -        | any, after a backoff  |
//!
//! The property forbids a LIST (and a WATCH from another RV than the one claimed) where the table
//! says WATCH; the backoffs are `backoff`'s ([`super::backoff`]).
//!
//! Judged from the [`History`] several guarantees share: the endings that oblige a re-watch and the request that follows (`History::sent`).

use crate::guarantees::Guarantee;
use crate::history::History;
use crate::observations::Observations;

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct State;

impl Guarantee for State {
    const NAME: &'static str = "no-needless-relist";
    const GUARANTEE: &'static str = "a watch that ends cleanly, times out (either side) or breaks after making progress, and a \
                 WATCH refused or failed with 429 or a refused connection, are followed by a re-watch from the \
                 claimed RV, never by a LIST or a streaming list (sendInitialEvents)";
    const WITNESS: &'static str = "a watch resumes after a clean close";

    fn witnessed(&self, _obs: &impl Observations, history: &History) -> bool {
        history.clients.iter().any(|m| m.resumed)
    }
}
