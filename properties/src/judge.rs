//! Judging one state: whether a property holds in it (with the monitor's history), and whether its
//! non-vacuity witness is reached in it. Both read only [`Observations`] and the monitor.

use listwatch_model::{ApiError, ClientId, Key};

use crate::monitor::{Monitor, Outstanding};
use crate::observations::{Observations, Truth};
use crate::property::{Property, Violation};
use crate::truth::{cache_differs_at, cache_differs_within_revision, cache_equals_truth};

/// The violation of `property` in this state, if any.
pub fn violation(property: Property, obs: &impl Observations, monitor: &Monitor) -> Option<Violation> {
    if let Some(v) = &monitor.violation {
        if v.property == property {
            return Some(v.clone());
        }
    }
    let found = |client: ClientId, detail: String| Some(Violation { property, client: Some(client), detail });
    match property {
        Property::CacheIsSnapshot => obs.client_ids().find_map(|c| {
            let view = obs.client(c);
            if !view.synced || !view.between_events {
                return None;
            }
            // E8: while the claimed revision is known only in part, the keys it changed whose events
            // have not arrived may still hold their value from before it.
            let m = &monitor.clients[usize::from(c.0)];
            let differs = if open_revision(obs, monitor, c) {
                cache_differs_within_revision(obs, c, view.resource_version, m.open_keys)
            } else {
                cache_differs_at(obs, c, view.resource_version)
            };
            differs.and_then(|d| found(c, d.to_string()))
        }),
        Property::NoResurrectedDelete => obs.client_ids().find_map(|c| {
            let view = obs.client(c);
            let rv = view.resource_version;
            let truth = obs.truth().state_at(rv);
            // E8: an object the open revision deleted may stay until its DELETE arrives.
            let pending = pending_keys(obs, monitor, c);
            view.cache
                .objects()
                .filter(|o| !pending.contains(&o.key))
                .find(|o| o.uid.0 <= rv && truth.get(&o.key).map(|t| t.uid) != Some(o.uid))
                .and_then(|o| found(c, format!("{o} was deleted by RV {rv}")))
        }),
        Property::Converges => {
            let env = obs.environment();
            if !(env.quiet && env.settled) {
                return None;
            }
            obs.client_ids().find_map(|c| {
                let view = obs.client(c);
                if !view.resting() {
                    return None;
                }
                cache_differs_at(obs, c, obs.truth().rev()).and_then(|d| {
                    let how = if view.watch_at_rest { "at rest on an open watch" } else { "stopped" };
                    found(c, format!("{how}, and {d}"))
                })
            })
        }
        // History properties: only the monitor decides them.
        Property::NoLockAcrossUnboundedWait
        | Property::NoRvRegression
        | Property::NoNeedlessRelist
        | Property::NoBusyLoop
        | Property::WatchOrdered
        | Property::WatchReliable
        | Property::Backoff
        | Property::NotificationsMatchCache
        | Property::StaleBounded
        | Property::ReadyMeansListed => None,
    }
}

/// E8: whether the client's claimed RV is a revision it has received only part of, as far as it can
/// tell: its last RV received, with no later RV or bookmark behind it.
fn open_revision(obs: &impl Observations, monitor: &Monitor, c: ClientId) -> bool {
    let m = &monitor.clients[usize::from(c.0)];
    m.complete < m.latest && m.latest == obs.client(c).resource_version
}

/// E8: the keys the client's open revision changed whose events have not reached it yet.
fn pending_keys(obs: &impl Observations, monitor: &Monitor, c: ClientId) -> Vec<Key> {
    if !open_revision(obs, monitor, c) {
        return Vec::new();
    }
    let m = &monitor.clients[usize::from(c.0)];
    obs.truth().keys_written_at(m.latest).into_iter().filter(|k| !m.open_keys.contains(*k)).collect()
}

/// Whether `property`'s witness is reached in this state.
pub fn witnessed(property: Property, obs: &impl Observations, monitor: &Monitor) -> bool {
    let compacted = obs.truth().compacted();
    let clients = || obs.client_ids().map(|c| (c, &monitor.clients[usize::from(c.0)]));
    match property {
        Property::NoResurrectedDelete => compacted.0 > 0 && clients().any(|(_, m)| !m.deleted.is_empty()),
        Property::NoRvRegression => clients().any(|(_, m)| {
            m.last_error == Some(ApiError::Expired) && matches!(m.outstanding, Some(Outstanding::List { .. }))
        }),
        Property::CacheIsSnapshot => clients()
            .any(|(c, m)| compacted.0 > 0 && m.claimed > compacted && !obs.client(c).cache.is_empty()),
        Property::Converges => {
            let env = obs.environment();
            env.faulty
                && env.quiet
                && env.settled
                && clients().any(|(c, _)| {
                    let view = obs.client(c);
                    view.watch_at_rest && !view.cache.is_empty() && cache_equals_truth(obs, c)
                })
        }
        Property::NoLockAcrossUnboundedWait => monitor.manager.served_while_unreachable,
        Property::NoNeedlessRelist => clients().any(|(_, m)| m.resumed),
        Property::NoBusyLoop => obs.client_ids().any(|c| {
            let view = obs.client(c);
            !view.connected && view.scheduled
        }),
        Property::WatchOrdered => {
            clients().any(|(_, m)| m.resumed && m.stream.is_some_and(|s| s.last > s.from))
        }
        Property::WatchReliable => clients().any(|(_, m)| m.bookmarked),
        Property::Backoff => clients().any(|(_, m)| m.backed_off && m.outstanding.is_some()),
        Property::NotificationsMatchCache => clients().any(|(_, m)| m.relist_deleted),
        Property::StaleBounded => clients().any(|(_, m)| m.recovered),
        Property::ReadyMeansListed => obs.client_ids().any(|c| obs.client(c).synced),
    }
}

/// The first property violated in this state, in catalogue order.
pub fn first_violation(obs: &impl Observations, monitor: &Monitor) -> Option<Violation> {
    if let Some(v) = &monitor.violation {
        return Some(v.clone());
    }
    Property::ALL.into_iter().find_map(|p| violation(p, obs, monitor))
}
