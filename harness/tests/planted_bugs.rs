//! Each new property catches a plausible single-rule bug that no catalogue flaw plants: a client under
//! test that wraps the model reflector and breaks one rule, explored exhaustively by the checker in the
//! default scope's list/watch world. The unwrapped client holds in the same world, so what the checker
//! finds is the bug.

use listwatch_harness::checker::{run_with, CheckModel, Limits, Search};
use listwatch_harness::scope::{worlds, Scope};
use listwatch_model::{
    ApiError, Client, ClientId, Config, Effect, Flaws, Input, Message, Millis, ModelClient, Notification,
    Rev, Timer,
};
use listwatch_model::{Cache, Request};
use listwatch_properties::Property;

/// One rule broken in an otherwise correct client.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Bug {
    /// C1: the backoff timer is armed at 0 ms, so the retry goes out at once.
    NoBackoff,
    /// C5: a WATCH refused with 429 is taken for a 500, so the client relists instead of re-watching.
    RelistAfterThrottle,
    /// C7: a relist removes an object missing from the list without telling the handlers.
    SilentRelistDelete,
    /// C1: a backoff of an hour (a cap set in the wrong unit): the client catches up, much too late.
    HourBackoff,
    /// C8: readiness reported from the start, before any LIST reached the cache.
    ReadyBeforeList,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Planted {
    inner: ModelClient,
    bug: Bug,
}

impl Client for Planted {
    fn start(&mut self) {
        self.inner.start();
    }

    fn handle(&mut self, input: Input) {
        let input = match (self.bug, input) {
            (Bug::RelistAfterThrottle, Input::Message(Message::WatchRefused(ApiError::TooManyRequests))) => {
                Input::Message(Message::WatchRefused(ApiError::InternalError))
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
                effect => return Some(effect),
            }
        }
    }

    fn next_timer(&self) -> Option<(Timer, Millis)> {
        match (self.bug, self.inner.next_timer()?) {
            (Bug::NoBackoff, (Timer::Backoff, _)) => Some((Timer::Backoff, 0)),
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

fn list_watch_world() -> Config {
    worlds(Scope::Default, Flaws::NONE)[0].config
}

/// The first property the checker finds broken with `bug` planted, and the shortest trace's length.
fn caught(bug: Bug) -> Option<(Property, usize)> {
    let make = move |c: &Config, _: ClientId| Planted { inner: ModelClient::new(c.reflector, c.flaws), bug };
    let limits = Limits::states(5_000_000, true);
    let outcome = run_with(CheckModel::with_clients(list_watch_world(), make), Search::Bfs, limits);
    let found =
        outcome.violated().next().map(|v| (v.property, v.counterexample.as_ref().expect("violated").0.len()));
    found
}

#[test]
fn the_unwrapped_client_holds_in_the_world_the_bugs_are_planted_in() {
    let limits = Limits::states(5_000_000, false);
    let outcome = listwatch_harness::checker::run(list_watch_world(), Search::Bfs, limits);
    assert!(outcome.complete && outcome.violated().next().is_none());
}

#[test]
fn backoff_catches_a_retry_sent_at_once() {
    assert_eq!(caught(Bug::NoBackoff).map(|c| c.0), Some(Property::Backoff));
}

#[test]
fn no_needless_relist_catches_a_relist_after_429() {
    assert_eq!(caught(Bug::RelistAfterThrottle).map(|c| c.0), Some(Property::NoNeedlessRelist));
}

#[test]
fn notifications_match_cache_catches_a_relist_that_deletes_silently() {
    assert_eq!(caught(Bug::SilentRelistDelete).map(|c| c.0), Some(Property::NotificationsMatchCache));
}

#[test]
fn stale_bounded_catches_a_client_that_catches_up_an_hour_late() {
    assert_eq!(caught(Bug::HourBackoff).map(|c| c.0), Some(Property::StaleBounded));
}

#[test]
fn ready_means_listed_catches_a_client_ready_before_its_first_list() {
    assert_eq!(caught(Bug::ReadyBeforeList), Some((Property::ReadyMeansListed, 0)));
}

/// The wrapper forwards everything else unchanged: with no bug it sends what the model client sends.
#[test]
fn the_wrapper_is_transparent_apart_from_its_bug() {
    let config = list_watch_world();
    let mut plain = ModelClient::new(config.reflector, config.flaws);
    let mut wrapped = Planted { inner: plain.clone(), bug: Bug::NoBackoff };
    plain.start();
    wrapped.start();
    assert_eq!(plain.poll_effect(), Some(Effect::Send(Request::List { rv: listwatch_model::ListRv::Any })));
    assert_eq!(wrapped.poll_effect(), Some(Effect::Send(Request::List { rv: listwatch_model::ListRv::Any })));
}
