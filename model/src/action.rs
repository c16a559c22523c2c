//! Every step the system can take: writes, etcd and API-server work, message delivery, timers, faults
//! and the client manager's steps. A checker explores them; a simulator draws them; a trace lists them.

use std::fmt;

use crate::api::ApiError;
use crate::config::FaultKind;
use crate::manager::{ClusterId, RequestId};
use crate::types::{ClientId, Key, Rev, ServerId};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Action {
    /// A writer creates, updates or deletes an object (E1, E2).
    Create(Key),
    Update(Key),
    Delete(Key),
    /// A write to another resource type: the revision moves, the watched prefix does not change.
    WriteOther,
    /// The API server compacts etcd at a revision (E4).
    Compact(Rev),
    /// etcd revokes (or expires) the lease every live object of the watched resource is attached to:
    /// they are all deleted in one transaction, at one revision (E8).
    RevokeLease,
    /// A server's watch cache takes the next etcd event (E6: `prev_kv` is looked up now). A server that
    /// has not taken its events yet is lagging (A10): lag is a schedule, not a separate action.
    Ingest(ServerId),
    /// etcd tells a caught-up watch cache its progress (E7).
    ProgressNotify(ServerId),
    /// A server's reinitialising watch cache has listed again and serves (A14).
    CacheReady(ServerId),
    /// A client's request reaches one server (load balancing, A10).
    Route(ClientId, ServerId),
    /// A NotOlderThan LIST waited its 3 s for the cache in vain (A2).
    ListWaitExpired(ClientId),
    /// The next message on a client's connection arrives.
    Deliver(ClientId),
    /// The server sends a bookmark on a client's watch (A8).
    Bookmark(ClientId),
    /// The client's next timer fires.
    FireTimer(ClientId),
    Fault(Fault),
    /// A client-manager request takes its next step.
    ManagerStep(RequestId),
    /// The manager's sync-wait bound of model time passes while no request can move: every bounded
    /// wait for a sync runs out.
    ManagerTime,
    /// A reachable cluster's informer completes its first list.
    ClusterSync(ClusterId),
    /// An unreachable cluster comes back (healing; costs no fault).
    ResumeCluster(ClusterId),
    /// A client's transport finds its silently dead connection dead (A9: client-go's HTTP/2 health
    /// check) and breaks it. Time passes: the client's detection bound, which no timer of its own
    /// reaches first.
    SilenceNoticed(ClientId),
    /// A client's held consumer goes on (healing; costs no fault).
    ReleaseConsumer(ClientId),
    /// The environment stops injecting faults: what is left of the fault budget is spent. A simulator's
    /// heal phase starts with it. [`crate::System::actions`] never offers it (a checker explores every
    /// use of the budget instead); it is always enabled.
    Heal,
}

/// A fault the environment injects; each costs one from the fault budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Fault {
    /// A routed connection breaks.
    Disconnect(ClientId),
    /// The server ends a client's watch at its timeout (A9): a clean close.
    ServerTimeout(ClientId),
    /// A request is answered with an error before any stream opens (429, 500, refused, and A15's
    /// statuses).
    Refuse(ClientId, ApiError),
    /// An open watch fails with an ERROR event (500), then closes (A4).
    WatchError(ClientId, ApiError),
    /// A watch cache drops its oldest event (A5).
    EvictCache(ServerId),
    /// A watch cache relists from etcd and closes its watches (A5).
    RelistCache(ServerId),
    /// A server restarts.
    RestartServer(ServerId),
    /// A cluster becomes unreachable.
    PauseCluster(ClusterId),
    /// A routed connection dies silently (A9): no FIN or RST reaches the client, the server forgets the
    /// request, and nothing more arrives on it.
    SilentDeath(ClientId),
    /// A streaming list's wait for a fresh cache runs out (A12): etcd's progress came too late.
    FreshnessTimeout(ClientId),
    /// The next event on an open watch will arrive as a line that does not decode.
    Garble(ClientId),
    /// A client's consumer stops before its next pop (a slow handler with a backlog): what its
    /// reflector pushes waits in its queue until [`Action::ReleaseConsumer`].
    HoldConsumer(ClientId),
}

impl Fault {
    /// The kind of fault this is, as a configuration enables it.
    pub fn kind(&self) -> FaultKind {
        match self {
            Fault::Disconnect(_) => FaultKind::Disconnect,
            Fault::ServerTimeout(_) => FaultKind::ServerTimeout,
            Fault::Refuse(_, ApiError::TooManyRequests) | Fault::WatchError(_, ApiError::TooManyRequests) => {
                FaultKind::TooManyRequests
            }
            Fault::Refuse(_, ApiError::ConnectionRefused) => FaultKind::ConnectionRefused,
            Fault::Refuse(_, e) => FaultKind::of_status(*e).unwrap_or(FaultKind::InternalError),
            Fault::WatchError(..) => FaultKind::InternalError,
            Fault::EvictCache(_) => FaultKind::CacheEviction,
            Fault::RelistCache(_) => FaultKind::CacheRelist,
            Fault::RestartServer(_) => FaultKind::ServerRestart,
            Fault::PauseCluster(_) => FaultKind::PauseCluster,
            Fault::SilentDeath(_) => FaultKind::SilentDeath,
            Fault::FreshnessTimeout(_) => FaultKind::SlowProgress,
            Fault::Garble(_) => FaultKind::GarbledLine,
            Fault::HoldConsumer(_) => FaultKind::SlowConsumer,
        }
    }
}

impl Action {
    /// The actor a trace line names.
    pub fn actor(&self) -> String {
        match self {
            Action::Create(_) | Action::Update(_) | Action::Delete(_) | Action::WriteOther => "writer".into(),
            Action::Compact(_) | Action::RevokeLease => "etcd".into(),
            Action::Ingest(s) | Action::ProgressNotify(s) | Action::CacheReady(s) => s.to_string(),
            Action::Route(c, _)
            | Action::ListWaitExpired(c)
            | Action::Deliver(c)
            | Action::Bookmark(c)
            | Action::FireTimer(c)
            | Action::SilenceNoticed(c)
            | Action::ReleaseConsumer(c) => c.to_string(),
            Action::Fault(_) => "fault".into(),
            Action::ManagerStep(r) => r.to_string(),
            Action::ManagerTime => "manager".into(),
            Action::ClusterSync(c) | Action::ResumeCluster(c) => c.to_string(),
            Action::Heal => "env".into(),
        }
    }
}

/// One spelling of every step, shared by traces (`show`, trace files), `check`, `bugs` and the Explorer: a
/// verb and its operands (`route reflector-0 apiserver-1`, `refuse reflector-0 429`). Trace files parse
/// it back (the harness's `action_text`), so it is also a file format: change it only with the format.
impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Create(k) => write!(f, "create {k}"),
            Action::Update(k) => write!(f, "update {k}"),
            Action::Delete(k) => write!(f, "delete {k}"),
            Action::WriteOther => write!(f, "write-other"),
            Action::Compact(r) => write!(f, "compact {r}"),
            Action::RevokeLease => write!(f, "revoke-lease"),
            Action::Ingest(s) => write!(f, "ingest {s}"),
            Action::ProgressNotify(s) => write!(f, "progress-notify {s}"),
            Action::CacheReady(s) => write!(f, "cache-ready {s}"),
            Action::Route(c, s) => write!(f, "route {c} {s}"),
            Action::ListWaitExpired(c) => write!(f, "list-wait-expired {c}"),
            Action::Deliver(c) => write!(f, "deliver {c}"),
            Action::Bookmark(c) => write!(f, "bookmark {c}"),
            Action::FireTimer(c) => write!(f, "fire-timer {c}"),
            Action::SilenceNoticed(c) => write!(f, "silence-noticed {c}"),
            Action::Fault(fault) => write!(f, "{fault}"),
            Action::ManagerStep(r) => write!(f, "manager-step {r}"),
            Action::ManagerTime => write!(f, "manager-time"),
            Action::ClusterSync(c) => write!(f, "cluster-sync {c}"),
            Action::ResumeCluster(c) => write!(f, "resume {c}"),
            Action::ReleaseConsumer(c) => write!(f, "release-consumer {c}"),
            Action::Heal => write!(f, "heal"),
        }
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fault::Disconnect(c) => write!(f, "disconnect {c}"),
            Fault::ServerTimeout(c) => write!(f, "server-timeout {c}"),
            Fault::Refuse(c, e) => write!(f, "refuse {c} {}", e.code()),
            Fault::WatchError(c, e) => write!(f, "watch-error {c} {}", e.code()),
            Fault::EvictCache(s) => write!(f, "evict-cache {s}"),
            Fault::RelistCache(s) => write!(f, "relist-cache {s}"),
            Fault::RestartServer(s) => write!(f, "restart {s}"),
            Fault::PauseCluster(c) => write!(f, "pause {c}"),
            Fault::SilentDeath(c) => write!(f, "silent-death {c}"),
            Fault::FreshnessTimeout(c) => write!(f, "freshness-timeout {c}"),
            Fault::Garble(c) => write!(f, "garble {c}"),
            Fault::HoldConsumer(c) => write!(f, "hold-consumer {c}"),
        }
    }
}
