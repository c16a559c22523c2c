//! Judging one state: whether a property holds in it (with the monitor's history), and whether its
//! non-vacuity witness is reached in it.

use listwatch_model::{ApiError, ClientId, System};

use crate::monitor::{Monitor, Outstanding};
use crate::property::{Property, Violation};
use crate::truth::{cache_differs_at, cache_equals_truth, truth_at};

/// The violation of `property` in this state, if any.
pub fn violation(property: Property, sys: &System, monitor: &Monitor) -> Option<Violation> {
    if let Some(v) = &monitor.violation {
        if v.property == property {
            return Some(v.clone());
        }
    }
    let found = |client: ClientId, detail: String| Some(Violation { property, client: Some(client), detail });
    match property {
        Property::CacheIsSnapshot => sys.client_ids().find_map(|c| {
            let view = sys.view(c);
            if !view.synced || !view.between_events {
                return None;
            }
            cache_differs_at(sys, c, view.resource_version).and_then(|d| found(c, d))
        }),
        Property::NoResurrectedDelete => sys.client_ids().find_map(|c| {
            let view = sys.view(c);
            let truth = truth_at(sys, view.resource_version);
            view.cache
                .objects()
                .find(|o| o.uid.0 <= view.resource_version && truth.get(&o.key).map(|t| t.uid) != Some(o.uid))
                .and_then(|o| found(c, format!("{o} was deleted by RV {}", view.resource_version)))
        }),
        Property::Converges => {
            if !(sys.quiet() && sys.settled()) {
                return None;
            }
            sys.client_ids().find_map(|c| {
                let view = sys.view(c);
                if !view.resting() {
                    return None;
                }
                cache_differs_at(sys, c, sys.store().rev()).and_then(|d| {
                    let how = if view.watch_at_rest { "at rest on an open watch" } else { "stopped" };
                    found(c, format!("{how}, and {d}"))
                })
            })
        }
        Property::NoLockAcrossUnboundedWait => {
            let m = sys.manager()?;
            m.requests().find_map(|(id, r)| {
                let held = m.held(id)?;
                m.waits_unbounded(id).then(|| Violation {
                    property,
                    client: None,
                    detail: format!(
                        "{id} holds the {held:?} lock while waiting with no bound for {}",
                        r.cluster
                    ),
                })
            })
        }
        Property::NoRvRegression
        | Property::NoNeedlessRelist
        | Property::NoBusyLoop
        | Property::WatchOrdered
        | Property::WatchReliable => None,
    }
}

/// Whether `property`'s witness is reached in this state.
pub fn witnessed(property: Property, sys: &System, monitor: &Monitor) -> bool {
    let compacted = sys.store().compacted();
    let clients = || sys.client_ids().map(|c| (c, &monitor.clients[usize::from(c.0)]));
    match property {
        Property::NoResurrectedDelete => compacted.0 > 0 && clients().any(|(_, m)| !m.deleted.is_empty()),
        Property::NoRvRegression => clients().any(|(_, m)| {
            m.last_error == Some(ApiError::Expired) && m.outstanding == Some(Outstanding::List)
        }),
        Property::CacheIsSnapshot => {
            clients().any(|(c, m)| compacted.0 > 0 && m.claimed > compacted && !sys.view(c).cache.is_empty())
        }
        Property::Converges => {
            sys.config().faults > 0
                && sys.quiet()
                && sys.settled()
                && clients().any(|(c, _)| {
                    let view = sys.view(c);
                    view.watch_at_rest && !view.cache.is_empty() && cache_equals_truth(sys, c)
                })
        }
        Property::NoLockAcrossUnboundedWait => sys.manager().is_some_and(|m| {
            m.clusters().any(|c| m.is_paused(c))
                && m.requests().any(|(_, r)| {
                    r.step == listwatch_model::manager::Step::Done(listwatch_model::manager::Outcome::Served)
                })
        }),
        Property::NoNeedlessRelist => clients().any(|(_, m)| m.resumed),
        Property::NoBusyLoop => sys.client_ids().any(|c| {
            let view = sys.view(c);
            !view.connected && view.scheduled
        }),
        Property::WatchOrdered => {
            clients().any(|(_, m)| m.resumed && m.stream.is_some_and(|s| s.last > s.from))
        }
        Property::WatchReliable => {
            compacted.0 > 0
                && clients().any(|(_, m)| m.stream.is_some_and(|s| s.last > s.from && s.last > compacted))
        }
    }
}

/// The first property violated in this state, in catalogue order.
pub fn first_violation(sys: &System, monitor: &Monitor) -> Option<Violation> {
    if let Some(v) = &monitor.violation {
        return Some(v.clone());
    }
    Property::ALL.into_iter().find_map(|p| violation(p, sys, monitor))
}
