//! Each new property catches a plausible single-rule bug that no catalogue flaw plants: a client under
//! test that wraps the model reflector and breaks one rule, explored exhaustively by the checker in the
//! default scope's list/watch world (the lease's, for a transaction). The unwrapped client holds in the
//! same worlds, so what the checker finds is the bug.

#[path = "support/planted.rs"]
mod planted;

use listwatch_harness::checker::{Limits, Search};
use listwatch_model::{Client, Effect, ModelClient, Request};
use listwatch_properties::Property;
use planted::{caught, list_watch_world, Bug, Planted};

#[test]
fn the_unwrapped_client_holds_in_the_worlds_the_bugs_are_planted_in() {
    let mut checked = Vec::new();
    for (bug, _) in planted::CAUGHT_BY {
        let (name, config) = planted::world(bug);
        if checked.contains(&name) {
            continue;
        }
        checked.push(name);
        let outcome = listwatch_harness::checker::run(config, Search::Bfs, Limits::states(5_000_000, false));
        assert!(outcome.complete && outcome.violated().next().is_none(), "{name}");
    }
}

#[test]
fn backoff_catches_a_retry_sent_at_once() {
    assert_eq!(caught(Bug::NoBackoff).map(|c| c.0), Some(Property::Backoff));
}

/// A streaming list that ends before its bookmark is a failure too (C10).
#[test]
fn backoff_catches_a_stream_tried_again_at_once() {
    assert_eq!(caught(Bug::NoBackoffStreaming).map(|c| c.0), Some(Property::Backoff));
}

/// The time that passed counts up towards the floor: 1 ms of it is not a backoff.
#[test]
fn backoff_catches_a_retry_after_a_millisecond() {
    assert_eq!(caught(Bug::MillisecondBackoff).map(|c| c.0), Some(Property::Backoff));
}

/// A re-watch must resume from the RV the client claims (C4).
#[test]
fn no_needless_relist_catches_a_rewatch_from_the_last_lists_rv() {
    assert_eq!(caught(Bug::RewatchFromListRv).map(|c| c.0), Some(Property::NoNeedlessRelist));
}

/// Only an RV that is gone (410) or too new lets a consistent LIST follow at once (C2).
#[test]
fn backoff_catches_a_consistent_list_sent_at_once_after_any_error() {
    assert_eq!(caught(Bug::ConsistentRetryAfterAnyError).map(|c| c.0), Some(Property::Backoff));
}

#[test]
fn no_needless_relist_catches_a_relist_after_429() {
    assert_eq!(caught(Bug::RelistAfterThrottle).map(|c| c.0), Some(Property::NoNeedlessRelist));
}

#[test]
fn notifications_match_cache_catches_a_relist_that_deletes_silently() {
    assert_eq!(caught(Bug::SilentRelistDelete).map(|c| c.0), Some(Property::NotificationsMatchCache));
}

/// Several keys changed at one revision (a lease revoke) arrive as events with the same RV: the
/// dropped delete leaves the object in the cache, which `cache-is-snapshot` sees at the same step.
#[test]
fn no_resurrected_delete_catches_events_deduplicated_by_rv() {
    let o = planted::check(Bug::DedupByRv, Limits::states(5_000_000, true));
    let broken: Vec<Property> = o.violated().map(|v| v.property).collect();
    assert_eq!(broken, [Property::NoResurrectedDelete, Property::CacheIsSnapshot]);
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
    let mut wrapped = Planted::wrapping(plain.clone(), Bug::NoBackoff);
    plain.start();
    wrapped.start();
    assert_eq!(plain.poll_effect(), Some(Effect::Send(Request::List { rv: listwatch_model::ListRv::Any })));
    assert_eq!(wrapped.poll_effect(), Some(Effect::Send(Request::List { rv: listwatch_model::ListRv::Any })));
}
