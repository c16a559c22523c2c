//! The observation surface: everything a property may judge a reflector by. It is what the reflector
//! did (requests, cancels) and what it showed (events received, the RV it claims, its cache contents,
//! the notifications it emitted), never how it is built, so that a foreign reflector can be judged by
//! the same code.

use std::fmt;

use crate::api::{Message, Request};
use crate::cache::{Cache, Notification};
use crate::manager::{ClusterId, RequestId};
use crate::reflector::Timer;
use crate::types::{ClientId, Key, Rev, ServerId};

/// One thing that happened in a step, in the order it happened.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Observed {
    /// The store committed a write to the watched resource at `rev` (`None` for a delete's value).
    Wrote { rev: Rev, key: Key, deleted: bool },
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
    /// A client's timer fired.
    TimerFired { client: ClientId, timer: Timer },
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
            Observed::Sent { client, request } => write!(f, "{client}: sends {request}"),
            Observed::Routed { client, server } => write!(f, "{client}: served by {server}"),
            Observed::Received { client, message } => write!(f, "{client}: gets {message}"),
            Observed::Cancelled { client } => write!(f, "{client}: closes its connection"),
            Observed::Broken { client } => write!(f, "{client}: connection broken"),
            Observed::TimerFired { client, timer } => write!(f, "{client}: timer {timer:?} fired"),
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
    pub cache: &'a Cache,
}
