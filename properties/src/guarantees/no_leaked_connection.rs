//! `no-leaked-connection` (C5): a client closes a connection it gives up on before it sends its next
//! request. One left open keeps the server's watcher on it and the client's reader of it for good
//! (kubernetes#6488; client-go's `watchList` after a failed `Replace`, v0.37.2).

use listwatch_model::Observed;

use crate::guarantees::{Found, Guarantee};
use crate::history::History;
use crate::observations::Observations;

/// Nothing to remember: each request sent with a connection still open is judged as it is seen.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct State;

impl Guarantee for State {
    const NAME: &'static str = "no-leaked-connection";
    const GUARANTEE: &'static str =
        "a client closes a connection it gives up on (or the server has ended it) before it sends its \
        next request";
    const WITNESS: &'static str = "a watch resumes on a new connection after the last one ended";

    fn observe(&mut self, _obs: &impl Observations, seen: &Observed) -> Option<Found> {
        let Observed::LeftOpen { client } = seen else { return None };
        Some(Found::by(
            *client,
            "sent a request with its last connection still open: that stream, the server's watcher on \
             it and its reader stay"
                .to_string(),
        ))
    }

    fn witnessed(&self, _obs: &impl Observations, history: &History) -> bool {
        history.clients.iter().any(|c| c.resumed)
    }
}
