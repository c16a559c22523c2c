//! The observation surface: everything a property may judge a client by. It is what the client did
//! (requests, cancels, locks taken, waits entered with their bound) and what it showed (events received,
//! the RV it claims, its cache contents, the notifications it emitted, its readiness), plus what the
//! environment did to it and the store's writes, never how it is built, so that a foreign client can be
//! judged by the same code.

use std::fmt;

use crate::api::{Message, Request, WatchEvent};
use crate::cache::{Cache, Notification};
use crate::manager::{ClusterId, LockMode, RequestId};
use crate::reflector::Timer;
use crate::server::IngestOutcome;
use crate::types::{ClientId, Key, Millis, Rev, ServerId};
use crate::watch_cache::CacheEvent;

/// One thing that happened in a step, in the order it happened.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Observed {
    /// The store committed a write to the watched resource at `rev`.
    Wrote {
        rev: Rev,
        key: Key,
        deleted: bool,
    },
    /// The store committed a write to another resource: the revision moved to `rev`.
    WroteOther {
        rev: Rev,
    },
    /// The store was compacted at `rev` (E4).
    Compacted {
        rev: Rev,
    },
    /// A server's watch cache took what etcd sent it.
    Ingested {
        server: ServerId,
        outcome: IngestOutcome,
    },
    /// A client sent a request.
    Sent {
        client: ClientId,
        request: Request,
    },
    /// A client's request reached a server.
    Routed {
        client: ClientId,
        server: ServerId,
    },
    /// A client received a message (a LIST result, a refusal, a watch event or the end of a stream).
    Received {
        client: ClientId,
        message: Message,
    },
    /// A client closed its connection itself.
    Cancelled {
        client: ClientId,
    },
    /// A client's connection broke under it.
    Broken {
        client: ClientId,
    },
    /// A line of a client's watch did not decode: `event`, which the server sent, never reached it.
    Garbled {
        client: ClientId,
        event: WatchEvent,
    },
    /// A client's timer fired, `after_ms` after the client's previous step: the only way time passes
    /// for a client.
    TimerFired {
        client: ClientId,
        timer: Timer,
        after_ms: Millis,
    },
    /// A client's transport found its silently dead connection dead, `after_ms` of silence after the
    /// client's previous step (A9); a `Broken` follows. Time passes, as for a timer.
    SilenceNoticed {
        client: ClientId,
        after_ms: Millis,
    },
    /// A request of the client waited `after_ms` at a server for a fresh cache, in vain (A12: a
    /// streaming list's bounded wait): time passes for the client, as for a timer; its answer follows.
    WaitedInVain {
        client: ClientId,
        after_ms: Millis,
    },
    /// A server's bounded wait for a fresh cache ended for the client's request without the cache
    /// catching up (A2: a NotOlderThan LIST's 3 s; A12: a streaming list's): the server owes the request
    /// its answer, a 504 or an ERROR event.
    WaitEnded {
        client: ClientId,
    },
    /// A client sent a request while its last connection was still open, never closed: the
    /// connection, the server's watcher on it and the client's reader of it stay (C5: a stream given
    /// up is closed). The model plays one connection per client, so the one left is dropped there.
    LeftOpen {
        client: ClientId,
    },
    /// A client told its user that an attempt to list and watch failed (C12: client-go's watch error
    /// handler, kube-runtime's error item, the model reflector's report).
    Told {
        client: ClientId,
    },
    /// A client's cache notified a handler: the first (0), or another where it has several.
    Notified {
        client: ClientId,
        #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "crate::observe::is_first"))]
        handler: u8,
        notification: Notification,
    },
    /// A user asked the client manager for a cluster's cache.
    ManagerRequested {
        request: RequestId,
        cluster: ClusterId,
    },
    /// The manager's model time moved by `after_ms` while its unanswered requests waited: the only
    /// way time passes for them.
    ManagerTime {
        after_ms: Millis,
    },
    /// A client-manager request finished.
    ManagerDone {
        request: RequestId,
        cluster: ClusterId,
        served: bool,
    },
    /// A client-manager request took the manager's lock.
    LockTaken {
        request: RequestId,
        mode: LockMode,
    },
    LockReleased {
        request: RequestId,
        mode: LockMode,
    },
    /// A client-manager request began to wait for a cluster's cache to sync, for at most `bound_ms`
    /// (`None`: no bound).
    WaitEntered {
        request: RequestId,
        cluster: ClusterId,
        bound_ms: Option<Millis>,
    },
    WaitLeft {
        request: RequestId,
    },
    /// A cluster became unreachable, or reachable again.
    ClusterUnreachable {
        cluster: ClusterId,
    },
    ClusterReachable {
        cluster: ClusterId,
    },
}

impl fmt::Display for Observed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Observed::Wrote { rev, key, deleted: false } => write!(f, "etcd: put {key} at {rev}"),
            Observed::Wrote { rev, key, deleted: true } => write!(f, "etcd: delete {key} at {rev}"),
            Observed::WroteOther { rev } => write!(f, "etcd: put another resource at {rev}"),
            Observed::Compacted { rev } => write!(f, "etcd: compacted at {rev}"),
            Observed::Ingested { server, outcome } => match outcome {
                IngestOutcome::Event(CacheEvent { rv, event }) => {
                    write!(f, "{server}: cache at {rv}: {event}")
                }
                IngestOutcome::Relisted => {
                    write!(f, "{server}: etcd watch failed (nil prev_kv or compacted): cache relists")
                }
                IngestOutcome::Dropped => write!(f, "{server}: DELETE with nil prev_kv dropped"),
                IngestOutcome::Idle => write!(f, "{server}: nothing from etcd"),
            },
            Observed::Sent { client, request } => write!(f, "{client}: sends {request}"),
            Observed::Routed { client, server } => write!(f, "{client}: served by {server}"),
            Observed::Received { client, message } => write!(f, "{client}: gets {message}"),
            Observed::Cancelled { client } => write!(f, "{client}: closes its connection"),
            Observed::Broken { client } => write!(f, "{client}: connection broken"),
            Observed::Garbled { client, event } => {
                write!(f, "{client}: gets a line that does not decode ({event} lost)")
            }
            Observed::TimerFired { client, timer, after_ms } => {
                write!(f, "{client}: timer {timer:?} fired after {after_ms} ms")
            }
            Observed::SilenceNoticed { client, after_ms } => {
                write!(f, "{client}: finds its connection dead after {after_ms} ms of silence")
            }
            Observed::WaitedInVain { client, after_ms } => {
                write!(f, "{client}: its request waited {after_ms} ms for a fresh cache, in vain")
            }
            Observed::WaitEnded { client } => write!(f, "{client}: the server's wait for a fresh cache ends"),
            Observed::LeftOpen { client } => {
                write!(f, "{client}: sends a request with its last connection still open, never closed")
            }
            Observed::Told { client } => write!(f, "{client}: tells its user the attempt failed"),
            Observed::Notified { client, handler: 0, notification } => {
                write!(f, "{client}: handler {notification}")
            }
            Observed::Notified { client, handler, notification } => {
                write!(f, "{client}: handler #{handler} {notification}")
            }
            Observed::ManagerRequested { request, cluster } => write!(f, "{request}: asks for {cluster}"),
            Observed::ManagerTime { after_ms } => {
                write!(f, "manager: {after_ms} ms pass with no request able to move")
            }
            Observed::ManagerDone { request, cluster, served } => {
                let how = if *served { "served" } else { "timed out" };
                write!(f, "{request} for {cluster}: {how}")
            }
            Observed::LockTaken { request, mode } => write!(f, "{request}: takes the {mode:?} lock"),
            Observed::LockReleased { request, mode } => write!(f, "{request}: releases the {mode:?} lock"),
            Observed::WaitEntered { request, cluster, bound_ms: Some(ms) } => {
                write!(f, "{request}: waits for {cluster} to sync, at most {ms} ms")
            }
            Observed::WaitEntered { request, cluster, bound_ms: None } => {
                write!(f, "{request}: waits for {cluster} to sync, with no bound")
            }
            Observed::WaitLeft { request } => write!(f, "{request}: stops waiting"),
            Observed::ClusterUnreachable { cluster } => write!(f, "{cluster}: unreachable"),
            Observed::ClusterReachable { cluster } => write!(f, "{cluster}: reachable again"),
        }
    }
}

/// What a client shows at a point in time.
#[derive(Clone, Copy, Debug)]
pub struct ClientView<'a> {
    /// The RV the client claims to have seen everything up to.
    pub resource_version: Rev,
    /// Whether it has been informed by one full list (C8).
    pub synced: bool,
    /// Whether it has nothing outstanding that would change its cache: no connection with queued
    /// messages and no pending cache operation.
    pub between_events: bool,
    /// Whether something delivered to the client still waits to be read by it ([`crate::Client::unread`]);
    /// never for the model reflector, which reads what arrives at once.
    pub unread: bool,
    /// Whether its readiness waits only for a poll that is scheduled ([`crate::Client::readiness_pending`]
    /// with a [`crate::Timer::Poll`] armed): a bounded lag after a full LIST, not a lost readiness.
    pub readiness_pending: bool,
    /// Whether a WATCH of the client is open at a server with nothing queued for it: at rest.
    pub watch_at_rest: bool,
    /// Whether the client has a connection (a request in flight or a stream open).
    pub connected: bool,
    /// Whether the client has something scheduled: a timer armed, or a dead connection under its
    /// transport's health check (A9), which gives it up by itself (on a live one the health check's
    /// pings are answered, and nothing happens).
    pub scheduled: bool,
    /// Whether what its reflector pushed still waits for its consumer ([`crate::Client::queued`]): the
    /// cache lags the RV it claims until the consumer pops it.
    pub queued: bool,
    /// Whether a handler's notifications wait behind that handler, held ([`crate::Client::handlers_behind`]):
    /// its notifications lag the cache, which is not behind, until it catches up.
    pub handlers_behind: bool,
    /// How many handlers its cache notifies ([`crate::Client::handlers`]), each judged on its own.
    pub handlers: u8,
    pub cache: &'a Cache,
}

/// A client's one connection, as far as what the client shows depends on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Connection {
    /// Messages wait on it for the client.
    pub waiting: bool,
    /// It carries a WATCH that a server still serves (not a LIST, not one whose server side is gone).
    pub watch_served: bool,
    /// It died silently (A9), and the client still holds it.
    pub dead: bool,
}

impl<'a> ClientView<'a> {
    /// What `client` shows over its connection, if it has one: the one rule for the model's world and
    /// for a client run against a real server.
    pub fn of<C: crate::Client + ?Sized>(client: &'a C, conn: Option<Connection>) -> ClientView<'a> {
        let unread = client.unread();
        // What the consumer has not popped yet is an event the cache has not taken.
        let between_events = conn.is_none_or(|k| !k.waiting) && !unread && !client.queued();
        ClientView {
            unread,
            readiness_pending: client.readiness_pending()
                && client.next_timer().is_some_and(|(t, _)| t == Timer::Poll),
            resource_version: client.resource_version(),
            synced: client.has_synced(),
            between_events,
            watch_at_rest: between_events && conn.is_some_and(|k| k.watch_served),
            connected: conn.is_some(),
            // A9: a health check gives up a dead connection; on a live one its pings are answered and
            // nothing happens, however long the request on it waits.
            scheduled: client.has_timer()
                || (conn.is_some_and(|k| k.dead) && client.dead_connection_noticed_after().is_some()),
            queued: client.queued(),
            handlers_behind: client.handlers_behind(),
            handlers: client.handlers(),
            cache: client.cache(),
        }
    }

    /// At rest: watching with nothing in flight, or stopped with nothing scheduled or queued.
    pub fn resting(&self) -> bool {
        self.watch_at_rest || (!self.connected && !self.scheduled && !self.queued)
    }
}

/// Whether a handler index is the first handler's (traces leave it out).
#[cfg(feature = "serde")]
fn is_first(handler: &u8) -> bool {
    *handler == 0
}
