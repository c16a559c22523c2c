//! What crosses the wire between a reflector and an API server: requests, responses, watch events,
//! errors and stream endings, named as the Kubernetes API names them.

use std::fmt;

use crate::types::{Key, Object, Rev};

/// The `resourceVersion` (and `resourceVersionMatch`) of a LIST (A2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum ListRv {
    /// `rv=""`: a consistent (quorum) read from etcd.
    Consistent,
    /// `rv="0"`: whatever the watch cache has, possibly stale.
    Any,
    /// `rv=X` (NotOlderThan): waits up to 3 s for the cache to reach X, then `504 Too large`.
    NotOlderThan(Rev),
    /// `rv=X, resourceVersionMatch=Exact`: a read at exactly X; `410 Expired` below the compacted revision.
    Exact(Rev),
}

impl fmt::Display for ListRv {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ListRv::Consistent => write!(f, "rv=\"\""),
            ListRv::Any => write!(f, "rv=\"0\""),
            ListRv::NotOlderThan(rv) => write!(f, "rv={rv}"),
            ListRv::Exact(rv) => write!(f, "rv={rv},match=Exact"),
        }
    }
}

/// Where a WATCH starts (A3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum WatchFrom {
    /// `rv=""` or `rv="0"`: synthetic ADDED events for the current state, then changes.
    Now,
    /// `rv=X`: every event with RV > X, in RV order.
    Rv(Rev),
}

/// A `continue` token (A13): the RV the first page was read at, and the last key served.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Continue {
    pub rv: Rev,
    pub after: crate::types::Key,
}

/// A request a reflector sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Request {
    List {
        rv: ListRv,
    },
    /// A page of a paginated LIST (A13): at most `limit` items; `cont` continues a list whose first
    /// page was read at the token's RV.
    ListPage {
        rv: ListRv,
        limit: u8,
        cont: Option<Continue>,
    },
    Watch {
        from: WatchFrom,
        timeout_secs: u32,
        bookmarks: bool,
    },
    /// A12: a streaming list, the WATCH with `sendInitialEvents=true&resourceVersionMatch=NotOlderThan`
    /// (C10's watch-list request). `rv`: `Consistent` (unset: the state at etcd's current revision),
    /// `Any` (`"0"`) or `NotOlderThan(X)`; an `Exact` match, or a request without bookmarks, does not
    /// validate (400).
    WatchList {
        rv: ListRv,
        timeout_secs: u32,
        bookmarks: bool,
    },
}

impl Request {
    pub fn is_list(&self) -> bool {
        matches!(self, Request::List { .. } | Request::ListPage { .. })
    }

    /// A WATCH from an RV a server may find too old (A4): a plain WATCH from RV X, or a streaming
    /// list NotOlderThan X. A WATCH from `rv=""`/`"0"` asks for no history, so it cannot get 410.
    pub fn watches_history(&self) -> bool {
        matches!(
            self,
            Request::Watch { from: WatchFrom::Rv(_), .. }
                | Request::WatchList { rv: ListRv::NotOlderThan(_), .. }
        )
    }

    /// A WATCH that starts with the state as synthetic events (A12), not from an RV.
    pub fn sends_initial_events(&self) -> bool {
        matches!(self, Request::WatchList { .. })
    }
}

impl fmt::Display for Request {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Request::List { rv } => write!(f, "LIST {rv}"),
            Request::ListPage { rv, limit, cont: None } => write!(f, "LIST {rv} limit={limit}"),
            Request::ListPage { rv: ListRv::Consistent, limit, cont: Some(c) } => {
                write!(f, "LIST limit={limit} continue={}/{}", c.rv, c.after)
            }
            Request::ListPage { rv, limit, cont: Some(c) } => {
                write!(f, "LIST {rv} limit={limit} continue={}/{}", c.rv, c.after)
            }
            Request::Watch { from: WatchFrom::Now, timeout_secs, .. } => {
                write!(f, "WATCH rv=\"0\" timeout={timeout_secs}s")
            }
            Request::Watch { from: WatchFrom::Rv(rv), timeout_secs, .. } => {
                write!(f, "WATCH rv={rv} timeout={timeout_secs}s")
            }
            Request::WatchList { rv, timeout_secs, bookmarks: true } => {
                write!(f, "WATCH sendInitialEvents {rv} timeout={timeout_secs}s")
            }
            Request::WatchList { rv, timeout_secs, bookmarks: false } => {
                write!(f, "WATCH sendInitialEvents {rv} timeout={timeout_secs}s (no bookmarks)")
            }
        }
    }
}

/// An API error status, or a transport failure, as a client sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum ApiError {
    /// 410 Gone, reason Expired (A2, A4).
    Expired,
    /// 504 with cause ResourceVersionTooLarge (A2).
    TooLargeResourceVersion,
    /// 429 Too Many Requests.
    TooManyRequests,
    /// 500 InternalError (A7: "etcd event received with PrevKv=nil").
    InternalError,
    /// The TCP connection was refused.
    ConnectionRefused,
    /// The connection broke before a response arrived.
    Disconnected,
    /// 400 BadRequest: the request does not validate (A13: a `continue` that also names a
    /// resourceVersion; A12: `sendInitialEvents` without bookmarks or with an Exact match).
    BadRequest,
    /// 401 Unauthorized: the client's credentials were not accepted (an expired or rotated token; A15).
    Unauthorized,
    /// 403 Forbidden: the client may not list or watch the resource (an RBAC change; A15).
    Forbidden,
    /// 404 NotFound: the server does not serve the resource (a CRD or an aggregated API gone; A15).
    NotFound,
    /// 422 Invalid: the request's options do not validate (A15).
    Invalid,
    /// 503 ServiceUnavailable with no `Retry-After` (a proxy or aggregator with no backend; A15).
    Unavailable,
    /// 503 ServiceUnavailable with `Retry-After: 1` (A15): the REST client waits and sends it again.
    UnavailableRetryAfter,
    /// 504 Timeout with no cause: the request did not complete in time (A15). Not A2's too-large RV.
    GatewayTimeout,
    /// A 200 whose body ends early: the connection broke after the headers of a LIST (A15).
    Truncated,
}

impl ApiError {
    /// Every error, in a fixed order.
    pub const ALL: [ApiError; 15] = [
        ApiError::Expired,
        ApiError::TooLargeResourceVersion,
        ApiError::TooManyRequests,
        ApiError::InternalError,
        ApiError::ConnectionRefused,
        ApiError::Disconnected,
        ApiError::BadRequest,
        ApiError::Unauthorized,
        ApiError::Forbidden,
        ApiError::NotFound,
        ApiError::Invalid,
        ApiError::Unavailable,
        ApiError::UnavailableRetryAfter,
        ApiError::GatewayTimeout,
        ApiError::Truncated,
    ];

    /// The answer carries `Retry-After` (A14, A15): client-go's REST client waits that long and sends
    /// the same request again itself, up to ten times, for a 429 or any 5xx that carries it
    /// (`rest/with_retry.go`, `checkWait`, read at v0.37.2), so the server paces the retries.
    pub fn retry_after(self) -> bool {
        matches!(self, ApiError::TooManyRequests | ApiError::UnavailableRetryAfter)
    }

    /// A LIST that failed so is no failure the reflector sees (C1, C11, C12): the REST client sends it
    /// again itself, after the `Retry-After` it was told or, for a connection broken before the
    /// answer, as if told one second (`rest/request.go`, the `isErrRetryableFunc` of `request`, read
    /// at v0.37.2).
    pub fn list_resent(self) -> bool {
        self.retry_after() || self == ApiError::Disconnected
    }

    /// A WATCH refused so is backed off from and sent again (C11): after the `Retry-After` the REST
    /// client was told, or by the reflector for a refused connection or a 429 (`isWatchErrorRetriable`,
    /// `tools/cache/reflector.go`, read at v0.37.2). Any other refusal ends `ListAndWatch` (C12).
    pub fn watch_retriable(self) -> bool {
        self.retry_after() || self == ApiError::ConnectionRefused
    }

    /// The short name steps spell it with: the HTTP status, or what broke.
    pub fn code(self) -> &'static str {
        match self {
            ApiError::Expired => "410",
            ApiError::TooLargeResourceVersion => "504",
            ApiError::TooManyRequests => "429",
            ApiError::InternalError => "500",
            ApiError::ConnectionRefused => "refused",
            ApiError::Disconnected => "reset",
            ApiError::BadRequest => "400",
            ApiError::Unauthorized => "401",
            ApiError::Forbidden => "403",
            ApiError::NotFound => "404",
            ApiError::Invalid => "422",
            ApiError::Unavailable => "503",
            ApiError::UnavailableRetryAfter => "503-retry-after",
            ApiError::GatewayTimeout => "504-timeout",
            ApiError::Truncated => "truncated",
        }
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ApiError::Expired => "410 Expired",
            ApiError::TooLargeResourceVersion => "504 TooLargeResourceVersion",
            ApiError::TooManyRequests => "429 TooManyRequests",
            ApiError::InternalError => "500 InternalError",
            ApiError::ConnectionRefused => "connection refused",
            ApiError::Disconnected => "connection reset",
            ApiError::BadRequest => "400 BadRequest",
            ApiError::Unauthorized => "401 Unauthorized",
            ApiError::Forbidden => "403 Forbidden",
            ApiError::NotFound => "404 NotFound",
            ApiError::Invalid => "422 Invalid",
            ApiError::Unavailable => "503 ServiceUnavailable",
            ApiError::UnavailableRetryAfter => "503 ServiceUnavailable (Retry-After: 1)",
            ApiError::GatewayTimeout => "504 Timeout",
            ApiError::Truncated => "200 with its body cut short",
        })
    }
}

/// A successful LIST.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ListResponse {
    /// The list's resourceVersion (A1: the read revision).
    pub rv: Rev,
    pub items: Vec<Object>,
    /// More pages follow (A13).
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub cont: Option<Continue>,
}

impl ListResponse {
    /// The answer to the same LIST with the field selector `metadata.name=<key>`, whole (no `limit`):
    /// the same list RV, holding only that object, if it is there. Whether the request is served from
    /// the cache or from etcd does not change with the selector (A2, A3): in the namespace the
    /// registry lists the one key (`Store.ListPredicate` sets `Recursive: false`, or calls
    /// `GetToList` before v0.24), which the cacher serves or delegates by the same resourceVersion
    /// rules (`delegator.ShouldDelegateList`; only an Exact read of one key always goes to etcd, which
    /// answers it as the cache's snapshot would); across namespaces the cacher or etcd filters the
    /// whole list (read in k8s.io/apiserver v0.22.17 and v0.37.2). Simplified: no pagination with a
    /// selector, where etcd fills each page from more keys than the limit.
    pub fn named(mut self, key: Key) -> Self {
        self.items.retain(|o| o.key == key);
        self
    }
}

/// One event on a watch stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum WatchEvent {
    Added(Object),
    Modified(Object),
    /// The last content of the object, stamped with the deletion RV (A6).
    Deleted(Object),
    /// Every matching event up to this RV was sent (A8).
    Bookmark(Rev),
    /// A12: the BOOKMARK annotated `k8s.io/initial-events-end: "true"`: the synthetic ADDED events
    /// before it were the whole state at this RV; changes after it follow on the same stream.
    InitialEventsEnd(Rev),
    /// An error after the stream opened, always delivered this way (A4); the stream ends after it.
    Error(ApiError),
}

impl WatchEvent {
    /// The RV the event carries, which a reflector records (C4). Errors carry none.
    pub fn rv(&self) -> Option<Rev> {
        match self {
            WatchEvent::Added(o) | WatchEvent::Modified(o) | WatchEvent::Deleted(o) => Some(o.rv),
            WatchEvent::Bookmark(rv) | WatchEvent::InitialEventsEnd(rv) => Some(*rv),
            WatchEvent::Error(_) => None,
        }
    }
}

impl fmt::Display for WatchEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WatchEvent::Added(o) => write!(f, "ADDED {o}"),
            WatchEvent::Modified(o) => write!(f, "MODIFIED {o}"),
            WatchEvent::Deleted(o) => write!(f, "DELETED {o}"),
            WatchEvent::Bookmark(rv) => write!(f, "BOOKMARK @{rv}"),
            WatchEvent::InitialEventsEnd(rv) => write!(f, "BOOKMARK @{rv} initial-events-end"),
            WatchEvent::Error(e) => write!(f, "ERROR {e}"),
        }
    }
}

/// How a watch stream ended without an error event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum WatchEnd {
    /// The server closed the stream cleanly: its timeout (A9), a cache relist (A5), or after an ERROR.
    Closed,
    /// The connection broke (EOF as far as the client can tell).
    Disconnected,
    /// The client's own timer ended the watch (C5's client-side timeout).
    ClientTimeout,
}

impl fmt::Display for WatchEnd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            WatchEnd::Closed => "closed by server",
            WatchEnd::Disconnected => "connection broke",
            WatchEnd::ClientTimeout => "client-side timeout",
        })
    }
}

/// One message on a connection, server to client, in order.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Message {
    List(Result<ListResponse, ApiError>),
    /// The WATCH request failed before a stream opened (HTTP-level 429, 500, refused).
    WatchRefused(ApiError),
    Event(WatchEvent),
    End(WatchEnd),
}

impl Message {
    /// What a request refused with `error` before it reached a server's storage gets: a failed LIST,
    /// or a WATCH refused before its stream opened.
    pub fn refused(request: &Request, error: ApiError) -> Message {
        if request.is_list() {
            Message::List(Err(error))
        } else {
            Message::WatchRefused(error)
        }
    }

    /// The event a connection armed to garble its next line hands over as a line that does not
    /// decode: a watch event that is not an ERROR (an ERROR goes through whole, and the line after it
    /// stays armed).
    pub fn garbled(self, armed: bool) -> Result<WatchEvent, Message> {
        match self {
            Message::Event(event) if armed && !matches!(event, WatchEvent::Error(_)) => Ok(event),
            message => Err(message),
        }
    }
}

impl fmt::Display for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Message::List(Ok(l)) if l.cont.is_some() => {
                write!(f, "LIST page rv={} items={} (more follow)", l.rv, l.items.len())
            }
            Message::List(Ok(l)) => write!(f, "LIST ok rv={} items={}", l.rv, l.items.len()),
            Message::List(Err(e)) => write!(f, "LIST failed: {e}"),
            Message::WatchRefused(e) => write!(f, "WATCH refused: {e}"),
            Message::Event(e) => write!(f, "{e}"),
            Message::End(end) => write!(f, "watch ended: {end}"),
        }
    }
}
