//! The observation surface: everything a property may judge a reflector by. It is what the reflector
//! did (requests, cancels) and what it showed (events received, the RV it claims, its cache contents,
//! the notifications it emitted), never how it is built, so that a foreign reflector can be judged by
//! the same code.

use std::fmt;

use crate::api::{Message, Request};
use crate::cache::{Cache, Notification};
use crate::manager::{ClusterId, RequestId};
use crate::reflector::Timer;
use crate::server::IngestOutcome;
use crate::types::{ClientId, Key, Millis, Rev, ServerId};
use crate::watch_cache::CacheEvent;

/// One thing that happened in a step, in the order it happened.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Observed {
    /// The store committed a write to the watched resource at `rev` (`None` for a delete's value).
    Wrote { rev: Rev, key: Key, deleted: bool },
    /// A server's watch cache took what etcd sent it.
    Ingested { server: ServerId, outcome: IngestOutcome },
    /// A client sent a request.
    Sent { client: ClientId, request: Request },
    /// A client's request reached a server.
    Routed { client: ClientId, server: ServerId },
    /// A client received a message (a LIST result, a refusal, a watch event or the end of a stream).
    Received { client: ClientId, message: Message },
    /// A client closed its connection itself.
    Cancelled { client: ClientId },
    /// A client's connection broke under it.
    Broken { client: ClientId },
    /// A client's timer fired, `after_ms` after the step that armed it.
    TimerFired { client: ClientId, timer: Timer, after_ms: Millis },
    /// A client's cache notified its handlers.
    Notified { client: ClientId, notification: Notification },
    /// A client-manager request finished.
    ManagerDone { request: RequestId, cluster: ClusterId, served: bool },
}

impl fmt::Display for Observed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Observed::Wrote { rev, key, deleted: false } => write!(f, "etcd: put {key} at {rev}"),
            Observed::Wrote { rev, key, deleted: true } => write!(f, "etcd: delete {key} at {rev}"),
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
            Observed::TimerFired { client, timer, after_ms } => {
                write!(f, "{client}: timer {timer:?} fired after {after_ms} ms")
            }
            Observed::Notified { client, notification } => write!(f, "{client}: handler {notification}"),
            Observed::ManagerDone { request, cluster, served } => {
                let how = if *served { "served" } else { "timed out" };
                write!(f, "{request} for {cluster}: {how}")
            }
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
    /// Whether a WATCH of the client is open at a server with nothing queued for it: at rest.
    pub watch_at_rest: bool,
    /// Whether the client has a connection (a request in flight or a stream open).
    pub connected: bool,
    /// Whether the client has something scheduled (a timer armed).
    pub scheduled: bool,
    pub cache: &'a Cache,
}

impl ClientView<'_> {
    /// At rest: watching with nothing in flight, or stopped with nothing scheduled.
    pub fn resting(&self) -> bool {
        self.watch_at_rest || (!self.connected && !self.scheduled)
    }
}
