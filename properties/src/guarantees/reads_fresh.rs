//! `reads-fresh`: every LIST and streaming list a server answers is as fresh as its options promise
//! (SEMANTICS A2, A12, A13; KEP-2340's consistent reads from the cache; etcd's linearizable read).
//!
//! | the request                                     | the answer's RV (a LIST's, or the initial-events-end bookmark's) |
//! |-------------------------------------------------|------------------------------------------------------------------|
//! | `resourceVersion` unset (consistent)            | at or after the store's revision when the request was sent      |
//! | `resourceVersion=X`, NotOlderThan               | X or later                                                       |
//! | `resourceVersion=X`, Exact; a `continue` page   | exactly X (the token's RV), or an error such as 410              |
//! | `resourceVersion="0"`                           | anything                                                         |
//!
//! Judged from what the client sent, what reached it in answer and the store's revision: the model's
//! API servers and a real one are judged alike.

use listwatch_model::{ClientId, ListRv, Message, Observed, Request, Rev, WatchEvent};
use litemap::LiteMap;

use crate::guarantees::{Found, Guarantee};
use crate::history::History;
use crate::observations::{Observations, Truth};

/// What a read's options promise about the RV of its answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Promise {
    /// At or after this revision: the store's when a consistent read was sent, or a NotOlderThan X.
    AtLeast { rev: Rev, consistent: bool },
    /// Exactly this revision: an Exact read, or a page continuing a list read at it.
    Exactly(Rev),
}

impl Promise {
    /// What `rv` on a LIST or streaming list promises, given the store's revision when it was sent.
    fn of(rv: ListRv, now: Rev) -> Option<Promise> {
        match rv {
            ListRv::Consistent => Some(Promise::AtLeast { rev: now, consistent: true }),
            ListRv::NotOlderThan(x) => Some(Promise::AtLeast { rev: x, consistent: false }),
            ListRv::Exact(x) => Some(Promise::Exactly(x)),
            ListRv::Any => None,
        }
    }

    fn kept_by(self, rv: Rev) -> bool {
        match self {
            Promise::AtLeast { rev, .. } => rv >= rev,
            Promise::Exactly(x) => rv == x,
        }
    }

    fn describe(self) -> String {
        match self {
            Promise::AtLeast { rev, consistent: true } => {
                format!("a consistent read sent when the store was at {rev}")
            }
            Promise::AtLeast { rev, consistent: false } => format!("a read NotOlderThan {rev}"),
            Promise::Exactly(x) => format!("a read at exactly {x}"),
        }
    }
}

/// A read a client has outstanding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Read {
    pub promise: Promise,
    /// A streaming list (A12): answered by its initial-events-end bookmark.
    pub streaming: bool,
    /// Some API server's cache had not taken every etcd event when it was sent: a lagging cache could
    /// have answered it.
    pub cache_behind: bool,
}

#[derive(Debug, Default, PartialEq, Eq, Hash)]
pub struct State {
    pub reads: LiteMap<ClientId, Read>,
    /// A consistent read sent while a cache was behind was answered fresh.
    pub fresh_despite_lag: bool,
}
listwatch_model::clone_by_field!(State { reads: map, fresh_despite_lag });

impl State {
    fn answered(&mut self, client: ClientId, rv: Rev, what: &str) -> Option<Found> {
        let read = self.reads.remove(&client)?;
        if read.promise.kept_by(rv) {
            let consistent = matches!(read.promise, Promise::AtLeast { consistent: true, .. });
            self.fresh_despite_lag |= consistent && read.cache_behind;
            return None;
        }
        Some(Found::by(client, format!("{} was answered by {what} at RV {rv}", read.promise.describe())))
    }
}

impl Guarantee for State {
    const NAME: &'static str = "reads-fresh";
    const GUARANTEE: &'static str = "every LIST and streaming list is answered at least as fresh as its \
        options promise: resourceVersion unset at or after the store's revision when it was sent, \
        NotOlderThan X at X or later, Exact X (or a continue page) at exactly X";
    const WITNESS: &'static str = "a consistent read sent while a watch cache lagged is answered fresh";

    fn observe(&mut self, obs: &impl Observations, seen: &Observed) -> Option<Found> {
        match seen {
            &Observed::Sent { client, request } => {
                let now = obs.truth().rev();
                let (promise, streaming) = match request {
                    Request::List { rv } | Request::ListPage { rv, cont: None, .. } => {
                        (Promise::of(rv, now), false)
                    }
                    Request::ListPage { cont: Some(c), .. } => (Some(Promise::Exactly(c.rv)), false),
                    Request::WatchList { rv, .. } => (Promise::of(rv, now), true),
                    Request::Watch { .. } => (None, false),
                };
                let cache_behind = !obs.environment().caught_up;
                match promise {
                    Some(promise) => self.reads.insert(client, Read { promise, streaming, cache_behind }),
                    None => self.reads.remove(&client),
                };
                None
            }
            Observed::Received { client, message } => {
                let client = *client;
                let streaming = self.reads.get(&client).is_some_and(|r| r.streaming);
                match message {
                    Message::List(Ok(list)) if !streaming => self.answered(client, list.rv, "a LIST"),
                    &Message::Event(WatchEvent::InitialEventsEnd(rv)) if streaming => {
                        self.answered(client, rv, "the initial-events-end bookmark")
                    }
                    // The initial events before their bookmark.
                    Message::Event(WatchEvent::Added(_)) if streaming => None,
                    _ => {
                        self.reads.remove(&client);
                        None
                    }
                }
            }
            Observed::Cancelled { client } | Observed::LeftOpen { client } | Observed::Broken { client } => {
                self.reads.remove(client);
                None
            }
            _ => None,
        }
    }

    fn witnessed(&self, _obs: &impl Observations, _history: &History) -> bool {
        self.fresh_despite_lag
    }
}
