//! Plausible single-rule bugs that no catalogue flaw plants: a client under test that wraps the model
//! reflector and breaks one rule. `planted_bugs.rs` shows each caught by its property; the mutation gate
//! requires that it still is.
#![allow(dead_code)] // each test file that includes this uses a part of it

use listwatch_harness::checker::{run_with, CheckModel, Limits, Search};
use listwatch_harness::scope::{self, worlds, Scope};
use listwatch_model::{
    ApiError, Cache, Client, ClientId, Config, Effect, Flaws, Input, Message, Millis, ModelClient,
    Notification, Request, Rev, Timer, WatchEvent, WatchFrom,
};
use listwatch_properties::Property;

/// One rule broken in an otherwise correct client.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Bug {
    /// C1: the backoff timer is armed at 0 ms, so the retry goes out at once.
    NoBackoff,
    /// C1, C10: a client that lists by streaming (WATCH with sendInitialEvents) tries again at once,
    /// over and over, after a stream that ended before its initial-events-end bookmark.
    NoBackoffStreaming,
    /// C1: a backoff of 1 ms (a duration in seconds read as milliseconds): some time passes before the
    /// retry, but far less than the floor.
    MillisecondBackoff,
    /// C5: a WATCH refused with 429 is taken for a 500, so the client relists instead of re-watching.
    RelistAfterThrottle,
    /// C7: a relist removes an object missing from the list without telling the handlers.
    SilentRelistDelete,
    /// C2: a LIST that failed for any reason is retried at once as a consistent LIST, as if its RV had
    /// been compacted (every error taken for 410 Gone).
    ConsistentRetryAfterAnyError,
    /// C4: a re-watch resumes from the RV of the last LIST instead of the RV the client claims (its
    /// last event's): the events in between are asked for again.
    RewatchFromListRv,
    /// E8: watch events deduplicated by resourceVersion, as if each had its own: the second key a
    /// transaction (a lease revoke) changes at one revision is dropped.
    DedupByRv,
    /// C1: a backoff of an hour (a cap set in the wrong unit): the client catches up, much too late.
    HourBackoff,
    /// C8: readiness reported from the start, before any LIST reached the cache.
    ReadyBeforeList,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Planted {
    pub inner: ModelClient,
    pub bug: Bug,
    /// The RV of the last object event passed on ([`Bug::DedupByRv`]).
    last_event: Rev,
    /// The last message ended a streaming list before its bookmark ([`Bug::NoBackoffStreaming`]).
    ended_early: bool,
    /// The streaming list last sent has had its bookmark.
    bookmarked: bool,
    /// The RV of the last complete LIST received ([`Bug::RewatchFromListRv`]).
    listed: Rev,
}

impl Planted {
    pub fn new(config: &Config, bug: Bug) -> Planted {
        Planted::wrapping(ModelClient::new(config.reflector, config.flaws), bug)
    }

    pub fn wrapping(inner: ModelClient, bug: Bug) -> Planted {
        Planted { inner, bug, last_event: Rev(0), ended_early: false, bookmarked: false, listed: Rev(0) }
    }
}

impl Client for Planted {
    fn start(&mut self) {
        self.inner.start();
    }

    fn handle(&mut self, input: Input) {
        if let Input::Message(m) = &input {
            self.bookmarked |= matches!(m, Message::Event(WatchEvent::InitialEventsEnd(_)));
            self.ended_early = matches!(m, Message::End(_)) && !self.bookmarked;
            if let Message::List(Ok(list)) = m {
                if list.cont.is_none() {
                    self.listed = list.rv;
                }
            }
        }
        let input = match (self.bug, input) {
            (Bug::RelistAfterThrottle, Input::Message(Message::WatchRefused(ApiError::TooManyRequests))) => {
                Input::Message(Message::WatchRefused(ApiError::InternalError))
            }
            (Bug::ConsistentRetryAfterAnyError, Input::Message(Message::List(Err(_)))) => {
                Input::Message(Message::List(Err(ApiError::Expired)))
            }
            (
                Bug::DedupByRv,
                Input::Message(Message::Event(
                    WatchEvent::Added(o) | WatchEvent::Modified(o) | WatchEvent::Deleted(o),
                )),
            ) if o.rv <= self.last_event => return,
            (Bug::DedupByRv, Input::Message(Message::Event(event))) => {
                if let WatchEvent::Added(o) | WatchEvent::Modified(o) | WatchEvent::Deleted(o) = event {
                    self.last_event = o.rv;
                }
                Input::Message(Message::Event(event))
            }
            (_, input) => input,
        };
        self.inner.handle(input);
    }

    fn poll_effect(&mut self) -> Option<Effect> {
        loop {
            match self.inner.poll_effect()? {
                Effect::Notify(Notification::DeletedFinalStateUnknown(_))
                    if self.bug == Bug::SilentRelistDelete => {}
                Effect::Send(Request::Watch { from: WatchFrom::Rv(_), timeout_secs, bookmarks })
                    if self.bug == Bug::RewatchFromListRv =>
                {
                    let from = WatchFrom::Rv(self.listed);
                    return Some(Effect::Send(Request::Watch { from, timeout_secs, bookmarks }));
                }
                effect => {
                    if let Effect::Send(Request::WatchList { .. }) = effect {
                        self.bookmarked = false;
                    }
                    return Some(effect);
                }
            }
        }
    }

    fn next_timer(&self) -> Option<(Timer, Millis)> {
        match (self.bug, self.inner.next_timer()?) {
            (Bug::NoBackoff, (Timer::Backoff, _)) => Some((Timer::Backoff, 0)),
            (Bug::NoBackoffStreaming, (Timer::Backoff, _)) if self.ended_early => Some((Timer::Backoff, 0)),
            (Bug::MillisecondBackoff, (Timer::Backoff, _)) => Some((Timer::Backoff, 1)),
            (Bug::HourBackoff, (Timer::Backoff, _)) => Some((Timer::Backoff, 3_600_000)),
            (_, next) => Some(next),
        }
    }

    fn dead_connection_noticed_after(&self) -> Option<listwatch_model::Millis> {
        self.inner.dead_connection_noticed_after()
    }

    fn resource_version(&self) -> Rev {
        self.inner.resource_version()
    }

    fn has_synced(&self) -> bool {
        self.bug == Bug::ReadyBeforeList || self.inner.has_synced()
    }

    fn cache(&self) -> &Cache {
        self.inner.cache()
    }
}

pub fn list_watch_world() -> Config {
    worlds(Scope::Default, Flaws::NONE)[0].config
}

/// The default scope's world a bug is planted in: list/watch, the lease's for a transaction, or
/// watch-list mode's for a streaming list.
pub fn world(bug: Bug) -> (&'static str, Config) {
    let name = match bug {
        Bug::DedupByRv => "lease-revoke",
        Bug::NoBackoffStreaming => "watch-list",
        _ => "list-watch",
    };
    let w = scope::world(Scope::Default, Flaws::NONE, name).expect("a world");
    (w.name, w.config)
}

/// The checker's run of the world `bug` is planted in.
pub fn check(bug: Bug, limits: Limits) -> listwatch_harness::checker::Outcome {
    let (_, config) = world(bug);
    run_with(
        CheckModel::with_clients(config, move |c: &Config, _: ClientId| Planted::new(c, bug)),
        Search::Bfs,
        limits,
    )
}

/// The first property the checker finds broken with `bug` planted, and the shortest trace's length.
pub fn caught(bug: Bug) -> Option<(Property, usize)> {
    let outcome = check(bug, Limits::states(5_000_000, true));
    let found =
        outcome.violated().next().map(|v| (v.property, v.counterexample.as_ref().expect("violated").0.len()));
    found
}

/// Each bug and the property that catches it.
pub const CAUGHT_BY: [(Bug, Property); 10] = [
    (Bug::NoBackoff, Property::Backoff),
    (Bug::NoBackoffStreaming, Property::Backoff),
    (Bug::MillisecondBackoff, Property::Backoff),
    (Bug::RelistAfterThrottle, Property::NoNeedlessRelist),
    (Bug::RewatchFromListRv, Property::NoNeedlessRelist),
    (Bug::ConsistentRetryAfterAnyError, Property::Backoff),
    (Bug::SilentRelistDelete, Property::NotificationsMatchCache),
    (Bug::DedupByRv, Property::NoResurrectedDelete),
    (Bug::HourBackoff, Property::StaleBounded),
    (Bug::ReadyBeforeList, Property::ReadyMeansListed),
];
