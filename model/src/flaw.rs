//! The catalogue of known bugs, each a switch in the one component where upstream had it.
//!
//! With every flaw off the model is the correct system. A flaw changes the smallest piece of behaviour at
//! the place named in its doc comment; nothing else reads the switch.

use std::fmt;
use std::str::FromStr;

/// The component a flaw lives in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Component {
    /// The API server's watch cache or its etcd watch path.
    Server,
    /// The reflector (or a raw-watch consumer standing in its place).
    Reflector,
    /// The informer's store.
    Cache,
    /// The multi-cluster client manager.
    Manager,
}

impl Component {
    /// The component's name in messages and tables.
    pub fn name(self) -> &'static str {
        match self {
            Component::Server => "API server",
            Component::Reflector => "reflector",
            Component::Cache => "informer cache",
            Component::Manager => "client manager",
        }
    }
}

/// One known bug.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Flaw {
    /// The watch cache sends a DELETE carrying the deleted object's *old* RV instead of the deletion RV, so a
    /// reflector's RV goes back and a re-watch replays events; deleted objects come back.
    /// kubernetes#58545, fixed by PR #58547 (k8s 1.9.3/1.10). SEMANTICS A6; seed 000.
    StaleDeleteRv,
    /// The API server's etcd watch drops a DELETE whose `prev_kv` was compacted away (etcd#10681) instead of
    /// failing the watch; the object stays in every cache forever.
    /// kubernetes#76624, fixed by PR #76675 (k8s 1.15). SEMANTICS A7; seed 001.
    NilPrevKvDropped,
    /// A client-side watch timeout makes the reflector relist instead of re-watching: relist storms.
    /// Fixed by PR #89652 (k8s 1.19). SEMANTICS C5; seed 002.
    RelistOnTimeout,
    /// A raw-watch consumer returns when the channel closes and never watches again: the cache freezes.
    /// SEMANTICS C9; seed 003.
    StopOnClose,
    /// A raw-watch consumer keeps reading the closed channel: a busy loop with no progress.
    /// kubernetes#104171. SEMANTICS C9; seed 003.
    SpinOnClose,
    /// The client manager waits for a new cluster's cache sync with no bound while holding its write lock:
    /// one unreachable cluster hangs every request. SEMANTICS C8; seed 004.
    SyncUnderLock,
    /// A relist asks for `rv="0"` (whatever a possibly lagging cache has) instead of NotOlderThan the last
    /// synced RV: time travel, deleted objects come back. kubernetes#59848; fixed by PR #83520. SEMANTICS A10, C2.
    RelistFromStaleCache,
    /// A relist that gets `504 Too large resource version` retries the same RV forever instead of falling
    /// back to a consistent list: the reflector never syncs again. kubernetes#91073, fixed by PR #92537.
    /// SEMANTICS C6.
    RetryTooLargeRv,
    /// `Replace` merges the new list instead of replacing: objects missing from it are never deleted, so a
    /// missed DELETE is never repaired. SEMANTICS C7; the repair of seed 001.
    ReplaceKeepsMissing,
    /// The reflector's transport has no way to notice a silently dead connection (A9): no HTTP/2 health
    /// check, no idle timeout. A half-open watch is given up only when the watch's own timeout ends it,
    /// minutes later, or never. kubernetes#87615 (and #65012), fixed by PR #95981 (k8s 1.20).
    NoIdleDetection,
    /// client-go's pager keeps the list's resourceVersion on its `continue` requests; the API server
    /// refuses them (400: a continue carries its own RV), so every paginated relist fails and the
    /// reflector never syncs again. kubernetes#85221, fixed by PR #85272 before k8s 1.17. SEMANTICS A13.
    ContinueWithRv,
    /// The reflector resumes a watch from the RV of the last event it got (C4, C5), which loses the
    /// rest of a revision that changed several keys (E8: a lease revoked) when the stream ended in the
    /// middle of it: the objects those events deleted stay in the cache until a relist.
    /// kubernetes#110210 (open: client-go and kube-runtime resume this way).
    ResumeMidRevision,
    /// In watch-list mode (C10) every re-watch asks for the initial events again
    /// (`sendInitialEvents=true`): the whole state is resent each time the watch times out, and taken
    /// as ordinary events, so an object deleted while the watch was down never leaves the cache.
    /// kube-rs#1844, fixed by PR #1882 (kube-runtime: the watcher's re-watch from `InitListed`).
    RewatchInitialEvents,
    /// In watch-list mode (C10) the temporary store of a streaming list that ended before its
    /// initial-events-end bookmark is kept for the next attempt: objects deleted in between leak into
    /// the `Replace`. kube-runtime 4.x, fixed in 5.0 (SEMANTICS C10).
    PartialInitialBuffer,
    /// The client manager waits for a new cluster's cache to sync with no bound, outside any lock: the
    /// request that asked hangs for as long as the cluster is unreachable, though every other request is
    /// served. controller-runtime#1219 (a controller blocks indefinitely when its cache cannot sync),
    /// fixed by `CacheSyncTimeout` and PR #1428. SEMANTICS C8.
    SyncWaitUnbounded,
    /// The watch cache answers a consistent read (a LIST or a streaming list with `resourceVersion`
    /// unset) from what it has at once, without first waiting until it holds etcd's current revision:
    /// a write that completed before the request was sent may be missing from the answer. A planted
    /// server bug: KEP-2340's guarantee for consistent reads from the cache (SEMANTICS A2, A12).
    ConsistentReadLags,
    /// The informer's queue (client-go's DeltaFIFO between the reflector and the store, C7) finds the
    /// deletions of a relist's `Replace` only among the objects its consumer already popped into the
    /// store: an object whose ADD still waits in the queue, and that the new list lacks, gets no
    /// tombstone; popped afterwards, it stays in the store, deleted everywhere else, until a later
    /// relist. Needs a consumer that lags (a slow handler with a backlog). client-go before v0.26.4,
    /// fixed by PR #115620.
    ReplaceMissesQueued,
    /// The reflector restarts `ListAndWatch` at one fixed period (client-go's `wait.Until(..., 1s)`)
    /// instead of backing off exponentially: an API server that fails every request gets one relist a
    /// second from every reflector for as long as it fails, the relist storm that takes a recovering
    /// server down again. kubernetes#87794, fixed by PR #87795 (client-go v0.18.0). SEMANTICS C1.
    FixedRetryPeriod,
    /// The watch cache ends a request's bounded wait for a fresh cache (A2: a NotOlderThan LIST's 3 s;
    /// A12: a streaming list's) without answering it: no 504, no ERROR event, the request just sits on
    /// a live connection, which no health check gives up. A client with no timeout of its own waits
    /// for ever. A planted server bug: the contract's answer after the wait (SEMANTICS A2, A12).
    WaitEndsUnanswered,
    /// On an ERROR event the reflector returns from its watch without closing the stream: the
    /// connection, the server's watcher and the client's reader stay, one more each time.
    /// kubernetes#6488 ("Reflector shouldn't leak io watcher on error events"), fixed by PR #6627
    /// (2015). SEMANTICS C5 (the handler closes the stream on the ERROR event).
    LeakWatchOnError,
    /// The reflector logs why `ListAndWatch` failed and tells its user nothing: an informer whose LISTs
    /// are refused (a 403 after an RBAC change, a 401 after a token rotated) backs off and retries for
    /// ever while the code that owns it cannot know. kubernetes#57074 and client-go#155, fixed by PR
    /// #87329 (client-go v0.19.0: `SetWatchErrorHandler`). SEMANTICS C12.
    UntoldFailures,
    /// The watch cache takes a revision that changed several keys (E8: a lease revoked) one event at
    /// a time, its RV the revision's from the first, and serves a LIST from the cache (at `"0"`, or
    /// NotOlderThan the revision) or a streaming list (A12) between two of them: an answer at that
    /// revision's RV that lacks the rest of it, and so does an unpaged consistent LIST once the cache
    /// has the revision's RV (`ConsistentListFromCache`, v0.31 on). A reflector that watches from
    /// that RV is never sent the rest (no event is newer than its RV) and keeps the objects deleted
    /// there until a relist; a bookmark sent between them claims the revision before the rest of it.
    /// k8s.io/apiserver v0.37.2, `pkg/storage/cacher`: `watchCache.processEvent` sets the RV event by
    /// event, and `Cacher.dispatchEvents` dispatches them one at a time and gives a bookmark the last
    /// one's RV. Open: the cacher's premise that there are no multi-object transactions (kubernetes
    /// PR #13910's review). SEMANTICS E8.
    PartialRevisionServed,
}

impl Flaw {
    pub const ALL: [Flaw; 22] = [
        Flaw::StaleDeleteRv,
        Flaw::NilPrevKvDropped,
        Flaw::RelistOnTimeout,
        Flaw::StopOnClose,
        Flaw::SpinOnClose,
        Flaw::SyncUnderLock,
        Flaw::RelistFromStaleCache,
        Flaw::RetryTooLargeRv,
        Flaw::ReplaceKeepsMissing,
        Flaw::NoIdleDetection,
        Flaw::ContinueWithRv,
        Flaw::ResumeMidRevision,
        Flaw::RewatchInitialEvents,
        Flaw::PartialInitialBuffer,
        Flaw::SyncWaitUnbounded,
        Flaw::ConsistentReadLags,
        Flaw::ReplaceMissesQueued,
        Flaw::FixedRetryPeriod,
        Flaw::WaitEndsUnanswered,
        Flaw::LeakWatchOnError,
        Flaw::UntoldFailures,
        Flaw::PartialRevisionServed,
    ];

    /// The name used on the command line and in traces.
    pub fn name(self) -> &'static str {
        match self {
            Flaw::StaleDeleteRv => "stale-delete-rv",
            Flaw::NilPrevKvDropped => "nil-prevkv-dropped",
            Flaw::RelistOnTimeout => "relist-on-timeout",
            Flaw::StopOnClose => "stop-on-close",
            Flaw::SpinOnClose => "spin-on-close",
            Flaw::SyncUnderLock => "sync-under-lock",
            Flaw::RelistFromStaleCache => "relist-from-stale-cache",
            Flaw::RetryTooLargeRv => "retry-too-large-rv",
            Flaw::ReplaceKeepsMissing => "replace-keeps-missing",
            Flaw::NoIdleDetection => "no-idle-detection",
            Flaw::ContinueWithRv => "continue-with-rv",
            Flaw::ResumeMidRevision => "resume-mid-revision",
            Flaw::RewatchInitialEvents => "rewatch-initial-events",
            Flaw::PartialInitialBuffer => "partial-initial-buffer",
            Flaw::SyncWaitUnbounded => "sync-wait-unbounded",
            Flaw::ConsistentReadLags => "consistent-read-lags",
            Flaw::ReplaceMissesQueued => "replace-misses-queued",
            Flaw::FixedRetryPeriod => "fixed-retry-period",
            Flaw::WaitEndsUnanswered => "wait-ends-unanswered",
            Flaw::LeakWatchOnError => "leak-watch-on-error",
            Flaw::UntoldFailures => "untold-failures",
            Flaw::PartialRevisionServed => "partial-revision-served",
        }
    }

    /// Where upstream tracked the bug.
    pub fn upstream(self) -> &'static str {
        match self {
            Flaw::StaleDeleteRv => "kubernetes#58545",
            Flaw::NilPrevKvDropped => "kubernetes#76624",
            Flaw::RelistOnTimeout => "kubernetes#89652",
            Flaw::StopOnClose => "seed 003",
            Flaw::SpinOnClose => "kubernetes#104171",
            Flaw::SyncUnderLock => "seed 004",
            Flaw::RelistFromStaleCache => "kubernetes#59848",
            Flaw::RetryTooLargeRv => "kubernetes#91073",
            Flaw::ReplaceKeepsMissing => "seed 001 repair (C7)",
            Flaw::NoIdleDetection => "kubernetes#87615",
            Flaw::ContinueWithRv => "kubernetes#85221",
            Flaw::ResumeMidRevision => "kubernetes#110210",
            Flaw::RewatchInitialEvents => "kube-rs#1844",
            Flaw::PartialInitialBuffer => "kube-runtime 4.x",
            Flaw::SyncWaitUnbounded => "controller-runtime#1219",
            Flaw::ConsistentReadLags => "planted (KEP-2340)",
            Flaw::ReplaceMissesQueued => "PR #115620",
            Flaw::FixedRetryPeriod => "kubernetes#87794",
            Flaw::WaitEndsUnanswered => "planted (A2, A12)",
            Flaw::LeakWatchOnError => "kubernetes#6488",
            Flaw::UntoldFailures => "kubernetes#57074",
            Flaw::PartialRevisionServed => "watch_cache.go (open)",
        }
    }

    pub fn component(self) -> Component {
        match self {
            Flaw::StaleDeleteRv
            | Flaw::NilPrevKvDropped
            | Flaw::ConsistentReadLags
            | Flaw::WaitEndsUnanswered
            | Flaw::PartialRevisionServed => Component::Server,
            Flaw::RelistOnTimeout
            | Flaw::StopOnClose
            | Flaw::SpinOnClose
            | Flaw::RelistFromStaleCache
            | Flaw::RetryTooLargeRv
            | Flaw::NoIdleDetection
            | Flaw::ContinueWithRv
            | Flaw::ResumeMidRevision
            | Flaw::RewatchInitialEvents
            | Flaw::PartialInitialBuffer
            | Flaw::FixedRetryPeriod
            | Flaw::LeakWatchOnError
            | Flaw::UntoldFailures => Component::Reflector,
            Flaw::ReplaceKeepsMissing | Flaw::ReplaceMissesQueued => Component::Cache,
            Flaw::SyncUnderLock | Flaw::SyncWaitUnbounded => Component::Manager,
        }
    }

    fn bit(self) -> u32 {
        1 << (self as u32)
    }
}

impl fmt::Display for Flaw {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The error for a name that is not in the catalogue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownFlaw(pub String);

impl fmt::Display for UnknownFlaw {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = Flaw::ALL.iter().map(|f| f.name()).collect();
        write!(f, "unknown flaw '{}' (known: {})", self.0, names.join(", "))
    }
}

impl std::error::Error for UnknownFlaw {}

impl FromStr for Flaw {
    type Err = UnknownFlaw;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Flaw::ALL.into_iter().find(|f| f.name() == s).ok_or_else(|| UnknownFlaw(s.to_string()))
    }
}

/// A set of switched-on flaws. Empty means the correct system.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Flaws(u32);

impl Flaws {
    pub const NONE: Flaws = Flaws(0);

    pub fn only(flaw: Flaw) -> Flaws {
        Flaws(flaw.bit())
    }

    pub fn with(self, flaw: Flaw) -> Flaws {
        Flaws(self.0 | flaw.bit())
    }

    pub fn has(self, flaw: Flaw) -> bool {
        self.0 & flaw.bit() != 0
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub fn iter(self) -> impl Iterator<Item = Flaw> {
        Flaw::ALL.into_iter().filter(move |f| self.has(*f))
    }
}

impl FromIterator<Flaw> for Flaws {
    fn from_iter<I: IntoIterator<Item = Flaw>>(iter: I) -> Self {
        iter.into_iter().fold(Flaws::NONE, Flaws::with)
    }
}

impl fmt::Display for Flaws {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return f.write_str("none");
        }
        let names: Vec<&str> = self.iter().map(Flaw::name).collect();
        f.write_str(&names.join(","))
    }
}
