//! `backoff`.
//!
//! C1: failures are followed by a backoff that grows while they go on, and requests are bounded per
//! unit of time. The rule for growth (`ClientHistory::backoff_owed_ms`): after `n` backoffs in a row
//! with nothing succeeding between them, the next wait is at least 800 ms × 2^n, up to 30 s; a 429's
//! `Retry-After` paces its own retries. A client that retries at one fixed period breaks it at its
//! second failure in a row (kubernetes#87794: client-go's reflector restarted `ListAndWatch` every
//! second until v0.18.0, PR #87795).
//!
//! Judged from the [`History`] several guarantees share: failures and the requests after them (`History::sent`).

use crate::guarantees::Guarantee;
use crate::history::History;
use crate::observations::Observations;

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct State;

impl Guarantee for State {
    const NAME: &'static str = "backoff";
    const GUARANTEE: &'static str = "after a failed LIST, a refused WATCH, an ERROR event or a very short watch, the next request \
                 waits at least the backoff owed: the floor, doubled for each backoff waited out in a row with no \
                 progress between them, up to the cap (except the one consistent LIST after 410 or too large, and \
                 the one retry or LIST after a streaming list failed before its initial-events-end bookmark), and \
                 no client sends more than a bounded number of requests without its RV moving or the floor \
                 of time passing";
    const WITNESS: &'static str = "a request follows a backoff waited out after a failure";

    fn witnessed(&self, _obs: &impl Observations, history: &History) -> bool {
        history.clients.iter().any(|m| m.backed_off && m.outstanding.is_some())
    }
}
