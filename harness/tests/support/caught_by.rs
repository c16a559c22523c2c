//! Where each catalogue flaw is caught first in the default scope, and by which property: the world and
//! property `listwatch bugs` reports (the README's property × flaw table). The checker's test and the
//! mutation gate both hold the flaws to it.
#![allow(dead_code)] // each test file that includes this uses a part of it

use listwatch_model::Flaw;
use listwatch_properties::Property;

pub const CAUGHT_BY: [(Flaw, &str, Property); 21] = [
    (Flaw::StaleDeleteRv, "list-watch", Property::NoRvRegression),
    (Flaw::NilPrevKvDropped, "list-watch", Property::NoResurrectedDelete),
    (Flaw::RelistOnTimeout, "list-watch", Property::NoNeedlessRelist),
    (Flaw::StopOnClose, "list-watch", Property::Converges),
    (Flaw::SpinOnClose, "list-watch", Property::NoBusyLoop),
    (Flaw::SyncUnderLock, "client-manager", Property::NoLockAcrossUnboundedWait),
    (Flaw::RelistFromStaleCache, "list-watch", Property::NoRvRegression),
    (Flaw::RetryTooLargeRv, "list-watch", Property::Converges),
    (Flaw::ReplaceKeepsMissing, "list-watch", Property::NoResurrectedDelete),
    (Flaw::NoIdleDetection, "list-watch", Property::StaleBounded),
    (Flaw::ContinueWithRv, "paginated-relist", Property::Converges),
    (Flaw::ResumeMidRevision, "lease-revoke", Property::Converges),
    (Flaw::RewatchInitialEvents, "watch-list", Property::NoNeedlessRelist),
    (Flaw::PartialInitialBuffer, "watch-list", Property::NoResurrectedDelete),
    (Flaw::SyncWaitUnbounded, "client-manager", Property::RequestsAnswered),
    (Flaw::ConsistentReadLags, "watch-list", Property::ReadsFresh),
    (Flaw::ReplaceMissesQueued, "slow-consumer", Property::NoResurrectedDelete),
    (Flaw::FixedRetryPeriod, "failing-server", Property::Backoff),
    (Flaw::WaitEndsUnanswered, "ha-mid-upgrade", Property::RequestsAnswered),
    (Flaw::UntoldFailures, "failing-server", Property::FailuresTold),
    (Flaw::PartialRevisionServed, "lease-revoke", Property::NoResurrectedDelete),
];

/// The property named for `flaw`.
pub fn named(flaw: Flaw) -> Property {
    CAUGHT_BY.iter().find(|(f, _, _)| *f == flaw).map(|(_, _, p)| *p).expect("every flaw is listed")
}
