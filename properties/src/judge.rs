//! Judging one state: whether a property holds in it (with the monitor's history), and whether its
//! non-vacuity witness is reached in it. Each guarantee's file says how; this is the dispatch.

use crate::monitor::Monitor;
use crate::observations::{Observations, Viewed};
use crate::property::{Property, Violation};

/// The violation of `property` in this state, if any: the one the history showed, or the state's.
pub fn violation(property: Property, obs: &impl Observations, monitor: &Monitor) -> Option<Violation> {
    if !monitor.judges(property) {
        return None;
    }
    if let Some(v) = monitor.found(property) {
        return Some(v.clone());
    }
    monitor.guarantees.violation(property, obs, &monitor.history)
}

/// Whether `property`'s witness is reached in this state.
pub fn witnessed(property: Property, obs: &impl Observations, monitor: &Monitor) -> bool {
    monitor.judges(property) && monitor.guarantees.witnessed(property, obs, &monitor.history)
}

/// The first property violated in this state, in catalogue order.
pub fn first_violation(obs: &impl Observations, monitor: &Monitor) -> Option<Violation> {
    if let Some(v) = &monitor.violation {
        return Some(v.clone());
    }
    let obs = &Viewed::of(obs);
    Property::ALL.into_iter().find_map(|p| violation(p, obs, monitor))
}
