//! The transport a live reflector uses: LIST with an RV, WATCH from an RV with a timeout. The in-process
//! server implements it now; an HTTP client or an etcd client fits the same two calls.

use std::future::Future;

use listwatch_model::{ApiError, ListResponse, ListRv, WatchEnd, WatchEvent, WatchFrom};

/// What a watch stream yields: events until it ends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WatchItem {
    Event(WatchEvent),
    End(WatchEnd),
}

/// An open watch.
pub trait WatchStream: Send {
    /// The next event or the end; after the end, never called again.
    fn next(&mut self) -> impl Future<Output = WatchItem> + Send;
}

/// LIST and WATCH against one API endpoint.
pub trait ListWatch: Send + Sync {
    type Stream: WatchStream;

    /// A LIST at `rv` (A2); an error is the whole answer (410, 504, 429, 500, refused).
    fn list(&self, rv: ListRv) -> impl Future<Output = Result<ListResponse, ApiError>> + Send;

    /// A page of a paginated LIST (A13). A transport that does not paginate answers with the whole
    /// list and no `continue`, which the API allows (a server may ignore `limit`).
    fn list_page(
        &self,
        rv: ListRv,
        _limit: u8,
        _cont: Option<listwatch_model::Continue>,
    ) -> impl Future<Output = Result<ListResponse, ApiError>> + Send {
        self.list(rv)
    }

    /// Open a WATCH from `from`, ended by the server after `timeout_secs` (A9). An error here is a
    /// refusal before any stream opened; errors after it opened arrive as ERROR events (A4).
    fn watch(
        &self,
        from: WatchFrom,
        timeout_secs: u32,
        bookmarks: bool,
    ) -> impl Future<Output = Result<Self::Stream, ApiError>> + Send;

    /// Open a streaming list (A12): the initial events at an RV `rv` allows, the initial-events-end
    /// bookmark, then changes. A transport without streaming lists refuses it with 400, as an API
    /// server without the WatchList feature does; the reflector then falls back to a LIST (C10).
    fn watch_list(
        &self,
        _rv: ListRv,
        _timeout_secs: u32,
    ) -> impl Future<Output = Result<Self::Stream, ApiError>> + Send {
        std::future::ready(Err(ApiError::BadRequest))
    }
}
