//! The scope of a system (how many keys, writes, faults, servers, ...) and which flaws are on.

use crate::flaw::Flaws;
use crate::reflector::ReflectorConfig;
use crate::store::TombstonePolicy;

/// The kinds of fault the environment may inject (SEMANTICS, "Faults the environment may inject").
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FaultKind {
    /// A connection breaks.
    Disconnect,
    /// The server ends a watch at its timeout (A9).
    ServerTimeout,
    /// A request is answered 429.
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
}

impl FaultKind {
    pub const ALL: [FaultKind; 9] = [
        FaultKind::Disconnect,
        FaultKind::ServerTimeout,
        FaultKind::TooManyRequests,
        FaultKind::InternalError,
        FaultKind::ConnectionRefused,
        FaultKind::CacheEviction,
        FaultKind::CacheRelist,
        FaultKind::ServerRestart,
        FaultKind::PauseCluster,
    ];

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
        }
    }

    fn bit(self) -> u16 {
        1 << (self as u16)
    }
}

/// A set of fault kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FaultKinds(u16);

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
}

impl FromIterator<FaultKind> for FaultKinds {
    fn from_iter<I: IntoIterator<Item = FaultKind>>(iter: I) -> Self {
        iter.into_iter().fold(FaultKinds::NONE, FaultKinds::with)
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
    /// etcd progress notifications to the watch cache (E7).
    pub progress_notify: bool,
    pub manager: Option<ManagerConfig>,
    pub reflector: ReflectorConfig,
    pub flaws: Flaws,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            keys: 2,
            writes: 3,
            foreign_writes: 0,
            compactions: 1,
            faults: 1,
            fault_kinds: FaultKinds::all().without(FaultKind::PauseCluster),
            servers: 1,
            reflectors: 1,
            cache_window: 2,
            etcd_watch_buffer: None,
            tombstones: TombstonePolicy::DropAtCompaction,
            progress_notify: false,
            manager: None,
            reflector: ReflectorConfig::default(),
            flaws: Flaws::NONE,
        }
    }
}

impl Config {
    pub fn with_flaws(self, flaws: Flaws) -> Config {
        Config { flaws, ..self }
    }

    /// The same scope with the fault kinds of `kinds` only.
    pub fn with_fault_kinds(self, kinds: FaultKinds) -> Config {
        Config { fault_kinds: kinds, ..self }
    }
}
