//! The scope of a system (how many keys, writes, faults, servers, ...) and which flaws are on.

use crate::api::{ApiError, Request};
use crate::flaw::Flaws;
use crate::reflector::ReflectorConfig;
use crate::store::TombstonePolicy;
use crate::types::ServerId;

/// The kinds of fault the environment may inject (SEMANTICS, "Faults the environment may inject").
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FaultKind {
    /// A connection breaks.
    Disconnect,
    /// The server ends a watch at its timeout (A9).
    ServerTimeout,
    /// A request is answered 429, or an open watch ends with an ERROR 429 event.
    TooManyRequests,
    /// A request, or an open watch, fails with 500.
    InternalError,
    /// A connection is refused.
    ConnectionRefused,
    /// The watch cache drops its oldest event (A5).
    CacheEviction,
    /// The watch cache relists from etcd and closes its watches (A5).
    CacheRelist,
    /// An API server restarts: connections break, its cache starts anew.
    ServerRestart,
    /// A cluster becomes unreachable (seed 004); it comes back without costing a fault.
    PauseCluster,
    /// A connection dies silently (A9): half-open, nothing more reaches the client on it.
    SilentDeath,
    /// etcd answers a watch cache's progress request too late: a streaming list waiting for the cache
    /// to be fresh (A12) runs out of its bound and gets an ERROR.
    SlowProgress,
    /// A line of an open watch arrives that does not decode (a proxy or a broken connection mangled
    /// it): the event it carried is lost to the client.
    GarbledLine,
    /// A client's consumer falls behind its reflector (a slow handler with a backlog): it is held
    /// between two pops while the reflector goes on queueing (C7); it goes on again without costing a
    /// fault.
    SlowConsumer,
    /// A request is answered 401 Unauthorized (A15).
    Unauthorized,
    /// A request is answered 403 Forbidden (A15).
    Forbidden,
    /// A request is answered 404 NotFound (A15).
    NotFound,
    /// A WATCH is answered 410 Expired as an HTTP status, before its stream opens (A4, A15).
    ExpiredBeforeOpen,
    /// A request is answered 422 Invalid (A15).
    Invalid,
    /// A request is answered 503 with no `Retry-After` (A15).
    Unavailable,
    /// A request is answered 503 with `Retry-After: 1` (A15).
    UnavailableRetryAfter,
    /// A request is answered 504 Timeout with no cause (A15).
    GatewayTimeout,
    /// A LIST is answered 200 with a body that ends early (A15).
    TruncatedBody,
}

impl FaultKind {
    pub const ALL: [FaultKind; 22] = [
        FaultKind::Disconnect,
        FaultKind::ServerTimeout,
        FaultKind::TooManyRequests,
        FaultKind::InternalError,
        FaultKind::ConnectionRefused,
        FaultKind::CacheEviction,
        FaultKind::CacheRelist,
        FaultKind::ServerRestart,
        FaultKind::PauseCluster,
        FaultKind::SilentDeath,
        FaultKind::SlowProgress,
        FaultKind::GarbledLine,
        FaultKind::SlowConsumer,
        FaultKind::Unauthorized,
        FaultKind::Forbidden,
        FaultKind::NotFound,
        FaultKind::ExpiredBeforeOpen,
        FaultKind::Invalid,
        FaultKind::Unavailable,
        FaultKind::UnavailableRetryAfter,
        FaultKind::GatewayTimeout,
        FaultKind::TruncatedBody,
    ];

    /// The statuses a real API server or a proxy in front of it answers a request with (A15), each
    /// with the error it answers: the kinds of fault added with them.
    pub const STATUSES: [(FaultKind, ApiError); 9] = [
        (FaultKind::Unauthorized, ApiError::Unauthorized),
        (FaultKind::Forbidden, ApiError::Forbidden),
        (FaultKind::NotFound, ApiError::NotFound),
        (FaultKind::ExpiredBeforeOpen, ApiError::Expired),
        (FaultKind::Invalid, ApiError::Invalid),
        (FaultKind::Unavailable, ApiError::Unavailable),
        (FaultKind::UnavailableRetryAfter, ApiError::UnavailableRetryAfter),
        (FaultKind::GatewayTimeout, ApiError::GatewayTimeout),
        (FaultKind::TruncatedBody, ApiError::Truncated),
    ];

    /// What an unrouted request may be answered with instead of reaching a server's storage, each with
    /// its kind: 429, 500, a refused connection, and the statuses a server or a proxy in front of it
    /// answers with (A15). A 410 as a status answers only a WATCH from an RV (A4: a LIST's 410 is
    /// A2's, from the store, and a WATCH that asks for no history cannot be too old); a body cut
    /// short, a LIST only (a WATCH's is a broken stream: a disconnect).
    pub fn refusals(request: &Request) -> impl Iterator<Item = (FaultKind, ApiError)> + '_ {
        [
            (FaultKind::TooManyRequests, ApiError::TooManyRequests),
            (FaultKind::InternalError, ApiError::InternalError),
            (FaultKind::ConnectionRefused, ApiError::ConnectionRefused),
        ]
        .into_iter()
        .chain(FaultKind::STATUSES)
        .filter(|(_, error)| match error {
            ApiError::Expired => request.watches_history(),
            ApiError::Truncated => request.is_list(),
            _ => true,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            FaultKind::Disconnect => "disconnect",
            FaultKind::ServerTimeout => "server-timeout",
            FaultKind::TooManyRequests => "429",
            FaultKind::InternalError => "500",
            FaultKind::ConnectionRefused => "refused",
            FaultKind::CacheEviction => "cache-eviction",
            FaultKind::CacheRelist => "cache-relist",
            FaultKind::ServerRestart => "server-restart",
            FaultKind::PauseCluster => "pause-cluster",
            FaultKind::SilentDeath => "silent-death",
            FaultKind::SlowProgress => "slow-progress",
            FaultKind::GarbledLine => "garbled-line",
            FaultKind::SlowConsumer => "slow-consumer",
            FaultKind::Unauthorized => "401",
            FaultKind::Forbidden => "403",
            FaultKind::NotFound => "404",
            FaultKind::ExpiredBeforeOpen => "410",
            FaultKind::Invalid => "422",
            FaultKind::Unavailable => "503",
            FaultKind::UnavailableRetryAfter => "503-retry-after",
            FaultKind::GatewayTimeout => "504",
            FaultKind::TruncatedBody => "truncated",
        }
    }

    /// The status fault that answers `error`, if it is one (A15).
    pub fn of_status(error: ApiError) -> Option<FaultKind> {
        FaultKind::STATUSES.iter().find(|(_, e)| *e == error).map(|(k, _)| *k)
    }

    fn bit(self) -> u32 {
        1 << (self as u32)
    }
}

/// A set of fault kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FaultKinds(u32);

impl FaultKinds {
    pub const NONE: FaultKinds = FaultKinds(0);

    pub fn all() -> FaultKinds {
        FaultKind::ALL.into_iter().collect()
    }

    pub fn has(self, kind: FaultKind) -> bool {
        self.0 & kind.bit() != 0
    }

    pub fn with(self, kind: FaultKind) -> FaultKinds {
        FaultKinds(self.0 | kind.bit())
    }

    pub fn without(self, kind: FaultKind) -> FaultKinds {
        FaultKinds(self.0 & !kind.bit())
    }

    pub fn iter(self) -> impl Iterator<Item = FaultKind> {
        FaultKind::ALL.into_iter().filter(move |k| self.has(*k))
    }

    /// A15's statuses, every one ([`FaultKind::STATUSES`]).
    pub fn statuses() -> FaultKinds {
        FaultKind::STATUSES.iter().map(|(k, _)| *k).collect()
    }

    /// The kinds of both.
    pub fn union(self, other: FaultKinds) -> FaultKinds {
        FaultKinds(self.0 | other.0)
    }

    /// These kinds but none of `other`'s.
    pub fn minus(self, other: FaultKinds) -> FaultKinds {
        FaultKinds(self.0 & !other.0)
    }
}

impl FromIterator<FaultKind> for FaultKinds {
    fn from_iter<I: IntoIterator<Item = FaultKind>>(iter: I) -> Self {
        iter.into_iter().fold(FaultKinds::NONE, FaultKinds::with)
    }
}

/// The API servers whose watch cache gets etcd progress notifications (E7).
///
/// Upstream a server asks etcd for them when it runs with EfficientWatchResumption (KEP-1904: alpha in
/// 1.20, on by default from 1.21). While an HA control plane is upgraded, some servers do and some do
/// not. A cache without them stays at the RV of the last write to its own resource, however far the
/// revision moves on (the setting of kubernetes#91073).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ProgressNotify(u64);

impl ProgressNotify {
    pub const NONE: ProgressNotify = ProgressNotify(0);
    /// Every server, however many there are.
    pub const ALL: ProgressNotify = ProgressNotify(u64::MAX);
    /// The servers a set can name one by one: ids below this.
    pub const LISTABLE: u8 = 64;

    /// Exactly `servers`; `None` if one of them is not below [`Self::LISTABLE`].
    pub fn only(servers: impl IntoIterator<Item = ServerId>) -> Option<ProgressNotify> {
        servers.into_iter().try_fold(ProgressNotify::NONE, |set, s| {
            (s.0 < Self::LISTABLE).then(|| ProgressNotify(set.0 | 1 << s.0))
        })
    }

    pub fn has(self, server: ServerId) -> bool {
        self == ProgressNotify::ALL || (server.0 < Self::LISTABLE && self.0 >> server.0 & 1 == 1)
    }

    /// Of a system with `servers` API servers, the ones that get progress notifications.
    pub fn servers(self, servers: u8) -> impl Iterator<Item = ServerId> {
        (0..servers).map(ServerId).filter(move |s| self.has(*s))
    }

    /// For a system with `servers` API servers: `Some(true)` if all of them get progress notifications,
    /// `Some(false)` if none does, `None` if some do and some do not.
    pub fn uniform(self, servers: u8) -> Option<bool> {
        let with = self.servers(servers).count();
        if with == usize::from(servers) {
            Some(true)
        } else if with == 0 {
            Some(false)
        } else {
            None
        }
    }
}

/// The multi-cluster client manager's part of a scope (seed 004).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ManagerConfig {
    pub clusters: u8,
    /// Request `i` is for cluster `i % clusters`.
    pub requests: u8,
}

/// Everything that defines a system: its scope, its settings and its flaws.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Config {
    /// Distinct object keys of the watched resource.
    pub keys: u8,
    /// Writes (create, update, delete) to the watched resource.
    pub writes: u8,
    /// Writes to other resource types: they move the revision only.
    pub foreign_writes: u8,
    pub compactions: u8,
    /// E8: revocations of the lease the watched objects are attached to, each deleting every live
    /// object in one etcd revision (upstream: Events with a TTL share a lease, kubernetes#110210).
    pub lease_revokes: u8,
    /// Faults of the enabled kinds, in total.
    pub faults: u8,
    pub fault_kinds: FaultKinds,
    pub servers: u8,
    pub reflectors: u8,
    /// Events the watch cache keeps (A5: 100..102400 upstream; tiny in checking scopes).
    pub cache_window: u8,
    /// Events an etcd watch buffers before it falls behind (E5); `None`: no bound.
    pub etcd_watch_buffer: Option<u8>,
    pub tombstones: TombstonePolicy,
    /// Whether etcd answers progress requests (E7): without them the API server refuses every
    /// streaming list (A12). etcd 3.4.31+, 3.5.13+ and 3.6 on answer (`EtcdRelease::progress_requests`).
    pub etcd_progress_requests: bool,
    /// The servers whose watch cache gets etcd progress notifications (E7).
    pub progress_notify: ProgressNotify,
    pub manager: Option<ManagerConfig>,
    pub reflector: ReflectorConfig,
    /// A14 (ResilientWatchCacheInitialization, on since k8s 1.31): a watch cache that restarts or
    /// relists answers 429 until it has listed again. Off: it serves at once, as before 1.31 (and as
    /// trace files that predate the setting were recorded).
    pub resilient_cache_init: bool,
    /// The API server release whose rules the servers follow (A2, A12; A14's is the setting above).
    pub apiserver: crate::ApiServerRelease,
    pub flaws: Flaws,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            keys: 2,
            writes: 3,
            foreign_writes: 0,
            compactions: 1,
            lease_revokes: 0,
            faults: 1,
            // A15's statuses are the failing-server world's (harness scope): every other world keeps
            // the size it had before them.
            fault_kinds: FaultKinds::all()
                .minus(FaultKinds::statuses())
                .without(FaultKind::PauseCluster)
                .without(FaultKind::GarbledLine)
                .without(FaultKind::SlowConsumer),
            servers: 1,
            reflectors: 1,
            cache_window: 2,
            etcd_watch_buffer: None,
            tombstones: TombstonePolicy::DropAtCompaction,
            etcd_progress_requests: true,
            progress_notify: ProgressNotify::NONE,
            manager: None,
            reflector: ReflectorConfig::default(),
            resilient_cache_init: true,
            apiserver: crate::ApiServerRelease::NEWEST,
            flaws: Flaws::NONE,
        }
    }
}

impl Config {
    pub fn with_flaws(self, flaws: Flaws) -> Config {
        Config { flaws, ..self }
    }

    /// The same scope over etcd `release`: its tombstone policy (E4) and whether it answers progress
    /// requests (E7, A12). E7's other release rule (`progress_after_start`) moves no watch cache in
    /// a system: a cache asks for progress only when etcd is ahead of it, so past its watch's start.
    pub fn over_etcd(self, release: crate::EtcdRelease) -> Config {
        Config {
            tombstones: release.tombstones(),
            etcd_progress_requests: release.progress_requests(),
            ..self
        }
    }

    /// The same scope over API server `release`: its streaming lists (A12), its answer to an Exact
    /// LIST ahead of etcd (A2) and its cache's reinitialisation (A14).
    pub fn over_apiserver(self, release: crate::ApiServerRelease) -> Config {
        Config { apiserver: release, resilient_cache_init: release.resilient_cache_init(), ..self }
    }

    /// The same scope with the fault kinds of `kinds` only.
    pub fn with_fault_kinds(self, kinds: FaultKinds) -> Config {
        Config { fault_kinds: kinds, ..self }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_notify_sets() {
        let some = ProgressNotify::only([ServerId(1), ServerId(3)]).expect("listable");
        assert!(some.has(ServerId(1)) && some.has(ServerId(3)));
        assert!(!some.has(ServerId(0)) && !some.has(ServerId(2)) && !some.has(ServerId(200)));
        assert_eq!(some.servers(4).collect::<Vec<_>>(), vec![ServerId(1), ServerId(3)]);
        assert_eq!(some.uniform(4), None);
        assert_eq!(some.uniform(2), None);
        assert_eq!(ProgressNotify::only([ServerId(1)]).expect("listable").uniform(1), Some(false));
        assert!(ProgressNotify::ALL.has(ServerId(200)), "every server, however many");
        assert_eq!(ProgressNotify::ALL.uniform(3), Some(true));
        assert_eq!(ProgressNotify::NONE.uniform(3), Some(false));
        assert_eq!(ProgressNotify::only([ServerId(ProgressNotify::LISTABLE)]), None);
    }
}
