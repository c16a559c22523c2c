//! One kube-apiserver: its watch cache, the client watches it serves and the LISTs and streaming lists
//! waiting for its cache to be fresh enough (SEMANTICS A1–A14).
//!
//! Every method returns the messages it sends, addressed to clients; the system puts them on the
//! connections. The server never reads the network's state.

use litemap::LiteMap;

use crate::api::{
    ApiError, Continue, ListResponse, ListRv, Message, Request, WatchEnd, WatchEvent, WatchFrom,
};
use crate::apiserver_release::ApiServerRelease;
use crate::flaw::{Flaw, Flaws};
use crate::store::{ReadError, Snapshot, Store, WatchResponse, WatcherId};
use crate::types::{ClientId, Key, Millis, Rev, ServerId};
use crate::watch_cache::{CacheEvent, Ingested, WatchCache};

/// Messages a step sends, in order.
pub type Outbox = Vec<(ClientId, Message)>;

/// A client watch the server serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ClientWatch {
    /// Events with RV > `from` are sent (A3, exclusive).
    pub from: Rev,
    /// The highest RV sent so far (an event's or a bookmark's).
    pub sent: Rev,
    pub bookmarks: bool,
    /// Nothing but bookmarks was sent since the last event (or no event was sent yet): a bookmark at
    /// `sent` would say nothing new.
    pub quiet_since_bookmark: bool,
}

/// A NotOlderThan LIST waiting for the cache to reach `rv` (A2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ListWait {
    pub rv: Rev,
    /// A LIST of one name (`metadata.name=<key>`), answered with that object only.
    pub name: Option<Key>,
    /// Its wait asks etcd for a progress notification ([`ApiServerRelease::one_key_wait_asks_progress`]).
    pub asks_progress: bool,
}

impl ListWait {
    fn whole(rv: Rev) -> Self {
        ListWait { rv, name: None, asks_progress: false }
    }
}

/// What ingesting from etcd did, for the trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum IngestOutcome {
    Event(CacheEvent),
    /// A7's guard fired (or E5 cancelled the etcd watch): the cache relisted from etcd.
    Relisted,
    /// The flawed path dropped a DELETE whose prev_kv was nil.
    Dropped,
    Idle,
}

#[derive(Debug, PartialEq, Eq, Hash)]
pub struct ApiServer {
    id: ServerId,
    cache: WatchCache,
    watches: LiteMap<ClientId, ClientWatch>,
    /// NotOlderThan LISTs waiting for the cache (A2, A11: the wait holds no lock and is bounded).
    waiting_lists: LiteMap<ClientId, ListWait>,
    /// A12: streaming lists waiting for the cache to reach the RV they need before their initial
    /// events are sent (bounded too: [`Self::watch_list_wait_expired`]).
    waiting_watch_lists: LiteMap<ClientId, Rev>,
    flaws: Flaws,
    cache_window: u8,
    /// A14: the cache is (re)initialising after a restart or a relist; until it has listed again,
    /// the requests it would serve get 429 with `Retry-After: 1`.
    initializing: bool,
    /// Whether a restart or relist reinitialises the cache that way (A14), or serves at once.
    resilient_init: bool,
    /// Whether etcd answers progress requests (E7; etcd >= 3.4.31, 3.5.13, 3.6). Without them the cache
    /// cannot serve a streaming list (A12).
    progress_requests: bool,
    /// The release's rules ([`ApiServerRelease`]): whether it serves streaming lists (A12: the
    /// `WatchList` gate) and how it answers an Exact LIST ahead of etcd (A2).
    release: ApiServerRelease,
    /// The `WatchList` gate (A12): the release's default ([`ApiServerRelease::watch_list`]) unless set
    /// ([`Self::with_watch_list`]), as for a server over HTTP found to refuse streaming lists.
    watch_list: bool,
    /// Whether a LIST with `limit` is paged (A13); kube-apiserver's always is, but the contract lets a
    /// server ignore `limit` and serve the whole list (`ListOptions.limit`).
    pagination: bool,
}
crate::clone_by_field!(ApiServer {
    id,
    cache,
    watches: map,
    waiting_lists: map,
    waiting_watch_lists: map,
    flaws,
    cache_window,
    initializing,
    resilient_init,
    progress_requests,
    release,
    watch_list,
    pagination
});

impl ApiServer {
    /// A server whose cache has just listed etcd and started its watch (A5), ready to serve.
    pub fn start(id: ServerId, store: &mut Store, cache_window: u8, flaws: Flaws) -> Self {
        let cache = Self::init_cache(id, store, cache_window);
        let watches = LiteMap::new();
        let (waiting_lists, waiting_watch_lists) = (LiteMap::new(), LiteMap::new());
        let (initializing, resilient_init) = (false, false);
        ApiServer {
            id,
            cache,
            watches,
            waiting_lists,
            waiting_watch_lists,
            flaws,
            cache_window,
            initializing,
            resilient_init,
            progress_requests: true,
            release: ApiServerRelease::NEWEST,
            watch_list: ApiServerRelease::NEWEST.watch_list(),
            pagination: true,
        }
    }

    /// Following `release`'s rules (A2, A12), its `WatchList` gate at the release's default; A14's is
    /// [`Self::with_resilient_init`].
    pub fn with_release(self, release: ApiServerRelease) -> Self {
        ApiServer { release, watch_list: release.watch_list(), ..self }
    }

    /// With the `WatchList` gate set otherwise than the release's default (A12): off, streaming lists
    /// are refused with 422 and a WATCH from "0" is not made one.
    pub fn with_watch_list(self, on: bool) -> Self {
        ApiServer { watch_list: on, ..self }
    }

    /// A server that pages LISTs with `limit`, or ignores `limit` and serves them whole (A13; a
    /// server over HTTP found not to page).
    pub fn with_pagination(self, on: bool) -> Self {
        ApiServer { pagination: on, ..self }
    }

    /// Over an etcd that answers progress requests or not (E7): without them every streaming list is
    /// refused (A12).
    pub fn with_progress_requests(self, on: bool) -> Self {
        ApiServer { progress_requests: on, ..self }
    }

    /// With A14's reinitialisation: after a restart or a relist the cache answers 429 until ready.
    pub fn with_resilient_init(self, on: bool) -> Self {
        ApiServer { resilient_init: on, ..self }
    }

    /// Whether the cache is still (re)initialising (A14).
    pub fn initializing(&self) -> bool {
        self.initializing
    }

    /// The cache has listed again and serves (A14): the LISTs that waited for it are answered.
    pub fn cache_ready(&mut self) -> Outbox {
        let mut out = Vec::new();
        if std::mem::take(&mut self.initializing) {
            self.answer_waiting_lists(&mut out);
        }
        out
    }

    fn init_cache(id: ServerId, store: &mut Store, cache_window: u8) -> WatchCache {
        let snapshot: Snapshot = store.range(None).expect("the current revision is always readable");
        store
            .watch(Self::watcher(id), snapshot.rev.next())
            .expect("a watch after the current revision is never compacted");
        WatchCache::from_snapshot(&snapshot, cache_window)
    }

    fn watcher(id: ServerId) -> WatcherId {
        id.0
    }

    pub fn id(&self) -> ServerId {
        self.id
    }

    /// Everything about this server but its name, for the checker's symmetry reduction
    /// ([`crate::System::canonical_server_order`]).
    pub(crate) fn hash_content<H: std::hash::Hasher>(&self, state: &mut H) {
        use std::hash::Hash;
        let ApiServer {
            id: _,
            cache,
            watches,
            waiting_lists,
            waiting_watch_lists,
            flaws,
            cache_window,
            initializing,
            resilient_init,
            progress_requests,
            release,
            watch_list,
            pagination,
        } = self;
        (
            cache,
            watches,
            waiting_lists,
            waiting_watch_lists,
            flaws,
            cache_window,
            initializing,
            resilient_init,
            progress_requests,
            release,
            watch_list,
            pagination,
        )
            .hash(state);
    }

    /// The same server under another name: its etcd watch moves with it
    /// ([`Store::rename_watchers`]).
    pub(crate) fn renamed(self, id: ServerId) -> Self {
        ApiServer { id, ..self }
    }

    /// The etcd watch of this server's cache.
    pub(crate) fn watcher_id(&self) -> WatcherId {
        Self::watcher(self.id)
    }

    pub fn cache(&self) -> &WatchCache {
        &self.cache
    }

    pub fn watches(&self) -> &LiteMap<ClientId, ClientWatch> {
        &self.watches
    }

    pub fn waiting_lists(&self) -> &LiteMap<ClientId, ListWait> {
        &self.waiting_lists
    }

    /// A12: the streaming lists waiting for the cache, with the RV each needs.
    pub fn waiting_watch_lists(&self) -> &LiteMap<ClientId, Rev> {
        &self.waiting_watch_lists
    }

    /// Whether a request waits for this cache to be fresh: upstream the cache then asks etcd for a
    /// progress notification (its progress requester, KEP-2340), whatever E7's setting.
    pub fn waits_for_freshness(&self) -> bool {
        !self.waiting_watch_lists.is_empty() || self.waiting_lists.values().any(|w| w.asks_progress)
    }

    /// Whether a consistent LIST is served from this cache now (A2, `ConsistentListFromCache`).
    fn serves_consistent(&self, store: &Store) -> bool {
        self.release.consistent_list_from_cache() && !self.initializing && self.cache.rv() >= store.rev()
    }

    fn cache_list(&self) -> ListResponse {
        ListResponse { rv: self.cache.rv(), items: self.cache.objects().copied().collect(), cont: None }
    }

    /// Serve a LIST (A2). A NotOlderThan list the cache cannot serve yet waits and sends nothing now.
    pub fn list(&mut self, client: ClientId, rv: ListRv, store: &Store) -> Outbox {
        let from_cache = matches!(rv, ListRv::Any | ListRv::NotOlderThan(_)) || self.lagging_consistent(rv);
        if self.initializing && from_cache {
            // A14, simplified: the LISTs the cache would serve get 429; those that read etcd (`rv=""`,
            // Exact) are served, as with consistent reads from etcd.
            return vec![(client, Message::List(Err(ApiError::TooManyRequests)))];
        }
        let future = self.release.future_exact_list();
        let result = match rv {
            ListRv::Any => Ok(self.cache_list()),
            ListRv::NotOlderThan(x) if self.cache.rv() >= x => Ok(self.cache_list()),
            ListRv::NotOlderThan(x) => {
                self.waiting_lists.insert(client, ListWait::whole(x));
                return Vec::new();
            }
            ListRv::Consistent if from_cache => Ok(self.cache_list()),
            // A2: from v0.31 (`ConsistentListFromCache`) a cache that holds etcd's revision serves the
            // consistent LIST. Simplified: a cache behind it is read around, from etcd, where upstream
            // waits for it to catch up (after a progress request, E7) and then serves it: the same
            // answer while every revision is taken whole, as in the correct system.
            ListRv::Consistent if self.serves_consistent(store) => Ok(self.cache_list()),
            ListRv::Consistent => Ok(Self::etcd_list(store, None).expect("current is readable")),
            ListRv::Exact(x) => Self::etcd_list(store, Some(x)).map_err(|e| match e {
                // A2: etcd's "future revision" as the release answers it (ApiServerRelease).
                ReadError::Compacted { .. } => ApiError::Expired,
                ReadError::FutureRev { .. } => future,
            }),
        };
        vec![(client, Message::List(result))]
    }

    /// A LIST with the field selector `metadata.name=<key>` (A2), whole: the LIST's answer holding only
    /// that object ([`ListResponse::named`]); in the namespace (`namespaced`) at an Exact RV with the
    /// list RV its release answers for a read of one key ([`ApiServerRelease::exact_key_list_rv`]).
    /// One that has to wait for the cache (a NotOlderThan ahead of it) is answered with the one object
    /// when its wait ends; in the namespace its wait may ask etcd for progress
    /// ([`ApiServerRelease::one_key_wait_asks_progress`]).
    pub fn list_named(
        &mut self,
        client: ClientId,
        rv: ListRv,
        key: Key,
        namespaced: bool,
        store: &Store,
    ) -> Outbox {
        let mut out = self.list(client, rv, store);
        if let Some(wait) = self.waiting_lists.get_mut(&client) {
            // A2, E7: the read of one key waits for the cache, answered with the one object; it may
            // ask etcd for progress where a whole LIST would not.
            wait.name = Some(key);
            wait.asks_progress =
                namespaced && self.release.one_key_wait_asks_progress(self.progress_requests);
        }
        for (_, message) in &mut out {
            if let Message::List(Ok(list)) = message {
                *list = list.clone().named(key);
                if let (ListRv::Exact(read), true) = (rv, namespaced) {
                    list.rv = self.release.exact_key_list_rv(read, store.rev());
                }
            }
        }
        out
    }

    /// `consistent-read-lags`: a consistent read answered from the cache as it is, with no wait for
    /// etcd's current revision (A2, A12; KEP-2340 requires the wait).
    fn lagging_consistent(&self, rv: ListRv) -> bool {
        rv == ListRv::Consistent && self.flaws.has(Flaw::ConsistentReadLags)
    }

    fn etcd_list(store: &Store, at: Option<Rev>) -> Result<ListResponse, ReadError> {
        let snap = store.range(at)?;
        Ok(ListResponse { rv: snap.rev, items: snap.kvs.iter().map(|kv| kv.object()).collect(), cont: None })
    }

    /// Serve a page of a paginated LIST (A13). `rv="0"` is served whole from the cache, the limit
    /// ignored. A first page reads etcd (at the current revision, or at an Exact RV); each later page is
    /// an exact read at the first page's RV, `410 Expired` once that was compacted.
    pub fn list_page(
        &mut self,
        client: ClientId,
        rv: ListRv,
        limit: u8,
        cont: Option<Continue>,
        store: &Store,
    ) -> Outbox {
        if (rv == ListRv::Any || self.lagging_consistent(rv) || !self.pagination) && cont.is_none() {
            // A13: a server that does not paginate ([`Self::with_pagination`]) serves it whole too.
            return self.list(client, rv, store);
        }
        if cont.is_some() && rv != ListRv::Consistent {
            // A13, request validation: a continue carries its own RV; naming one too is refused.
            return vec![(client, Message::List(Err(ApiError::BadRequest)))];
        }
        if let (None, ListRv::NotOlderThan(x)) = (cont, rv) {
            // A2, A13: a paginated NotOlderThan LIST is served by the cache, as an unpaginated one: it
            // waits for the cache to reach X (then 504), and its pages and continue token are pinned to
            // the cache's RV, not etcd's. Found by `conformance apiserver`: the model read etcd at its
            // current revision. Simplified: a page that had to wait is answered whole when the cache
            // catches up.
            if self.initializing {
                return vec![(client, Message::List(Err(ApiError::TooManyRequests)))];
            }
            if self.cache.rv() < x {
                self.waiting_lists.insert(client, ListWait::whole(x));
                return Vec::new();
            }
            return vec![(client, Message::List(Ok(Self::page(self.cache_list(), limit, None))))];
        }
        let at = match (cont, rv) {
            (Some(c), _) => Some(c.rv),
            (None, ListRv::Exact(x)) => Some(x),
            (None, _) => None,
        };
        let future = self.release.future_exact_list();
        let result = Self::etcd_list(store, at)
            .map_err(|e| match e {
                ReadError::Compacted { .. } => ApiError::Expired,
                ReadError::FutureRev { .. } => future,
            })
            .map(|whole| Self::page(whole, limit, cont));
        vec![(client, Message::List(result))]
    }

    /// At most `limit` items of `whole` after the continue's key, with a token pinned to its RV (A13).
    fn page(whole: ListResponse, limit: u8, cont: Option<Continue>) -> ListResponse {
        let after = cont.map(|c| c.after);
        let rest: Vec<_> = whole.items.into_iter().filter(|o| after.is_none_or(|a| o.key > a)).collect();
        let limit = usize::from(limit.max(1));
        let more = rest.len() > limit;
        let items: Vec<_> = rest.into_iter().take(limit).collect();
        let cont = more.then(|| Continue { rv: whole.rv, after: items[items.len() - 1].key });
        ListResponse { rv: whole.rv, items, cont }
    }

    /// How long a NotOlderThan LIST waits for the cache before `504` (A2).
    pub const LIST_FRESHNESS_WAIT_MS: Millis = 3_000;

    /// The freshness wait of a NotOlderThan LIST ran out (A2): `504 Too large resource version`.
    pub fn list_wait_expired(&mut self, client: ClientId) -> Outbox {
        match self.waiting_lists.remove(&client) {
            Some(_) if self.flaws.has(Flaw::WaitEndsUnanswered) => Vec::new(),
            Some(_) => vec![(client, Message::List(Err(ApiError::TooLargeResourceVersion)))],
            None => Vec::new(),
        }
    }

    /// Answer every waiting LIST and streaming list the cache can now serve (none while it
    /// reinitialises, A14).
    fn answer_waiting_lists(&mut self, out: &mut Outbox) {
        if self.initializing {
            return;
        }
        let rv = self.cache.rv();
        let ready: Vec<ClientId> =
            self.waiting_lists.iter().filter(|(_, w)| w.rv <= rv).map(|(c, _)| *c).collect();
        for client in ready {
            let wait = self.waiting_lists.remove(&client).expect("ready");
            let list = match wait.name {
                Some(key) => self.cache_list().named(key),
                None => self.cache_list(),
            };
            out.push((client, Message::List(Ok(list))));
        }
        let ready: Vec<ClientId> =
            self.waiting_watch_lists.iter().filter(|(_, x)| **x <= rv).map(|(c, _)| *c).collect();
        for client in ready {
            self.waiting_watch_lists.remove(&client);
            out.extend(self.stream_initial_events(client));
        }
    }

    /// Open a streaming list (A12). The request must ask for bookmarks and match NotOlderThan (400
    /// otherwise). `rv` unset (`Consistent`): the cache first waits until it has etcd's current
    /// revision; `"0"`: the state it has; `X`: it waits until it is at X or later. The wait is bounded
    /// ([`Self::watch_list_wait_expired`]). Then a synthetic ADDED per object at the cache's RV R,
    /// the initial-events-end BOOKMARK at R, and every change after R on the same stream.
    pub fn watch_list(&mut self, client: ClientId, rv: ListRv, bookmarks: bool, store: &Store) -> Outbox {
        if !bookmarks || matches!(rv, ListRv::Exact(_)) {
            return vec![(client, Message::WatchRefused(ApiError::BadRequest))];
        }
        if !self.watch_list {
            // A12: with the WatchList gate off (before v0.32, and in v0.33) the handler's validation
            // refuses `sendInitialEvents`: 422 before the stream opens (ApiServerRelease::watch_list).
            return vec![(client, Message::WatchRefused(ApiError::Invalid))];
        }
        if self.initializing {
            // A14: a cache that has not listed again serves no watch: 429 before the stream opens.
            return vec![(client, Message::WatchRefused(ApiError::TooManyRequests))];
        }
        if !self.progress_requests {
            // A12: the cacher needs etcd's progress requests (E7) to stream a list, whatever its RV;
            // over an etcd without them (3.4.23) the stream opens with an ERROR 500 and closes
            // (apiserver's cacher.Watch, "the required storage feature RequestWatchProgress is
            // disabled"). Found by `conformance apiserver --etcd 3.4`.
            return vec![
                (client, Message::Event(WatchEvent::Error(ApiError::InternalError))),
                (client, Message::End(WatchEnd::Closed)),
            ];
        }
        let needed = match rv {
            ListRv::Consistent if self.lagging_consistent(rv) => Rev::ZERO,
            ListRv::Consistent => store.rev(),
            ListRv::NotOlderThan(x) => x,
            ListRv::Any | ListRv::Exact(_) => Rev::ZERO,
        };
        if self.cache.rv() < needed {
            self.waiting_watch_lists.insert(client, needed);
            return Vec::new();
        }
        self.stream_initial_events(client)
    }

    /// A12's initial events at the cache's RV, then the watch goes on from there.
    fn stream_initial_events(&mut self, client: ClientId) -> Outbox {
        let rv = self.cache.rv();
        let mut out: Outbox =
            self.cache.objects().map(|o| (client, Message::Event(WatchEvent::Added(*o)))).collect();
        out.push((client, Message::Event(WatchEvent::InitialEventsEnd(rv))));
        let watch = ClientWatch { from: rv, sent: rv, bookmarks: true, quiet_since_bookmark: true };
        self.watches.insert(client, watch);
        out
    }

    /// A streaming list's freshness wait ran out (A12, bounded as A11's): an ERROR event, 504 Too large
    /// resource version, then the stream closes. Upstream the 3 s run out when etcd does not answer the
    /// cache's progress request in time.
    pub fn watch_list_wait_expired(&mut self, client: ClientId) -> Outbox {
        match self.waiting_watch_lists.remove(&client) {
            Some(_) if self.flaws.has(Flaw::WaitEndsUnanswered) => Vec::new(),
            Some(_) => vec![
                (client, Message::Event(WatchEvent::Error(ApiError::TooLargeResourceVersion))),
                (client, Message::End(WatchEnd::Closed)),
            ],
            None => Vec::new(),
        }
    }

    /// Serve a request as the API server's HTTP handler does: its defaulting first, then the cache.
    pub fn serve(&mut self, client: ClientId, request: Request, store: &Store) -> Outbox {
        match request {
            Request::List { rv } => self.list(client, rv, store),
            Request::ListPage { rv, limit, cont } => self.list_page(client, rv, limit, cont, store),
            // A3, A12: wherever the `WatchList` gate is on, the handler turns a WATCH from "" or "0"
            // that sets neither `sendInitialEvents` nor `resourceVersionMatch` into a streaming list
            // (`sendInitialEvents=true`, NotOlderThan): apimachinery's `SetListOptionsDefaults`
            // (`pkg/apis/meta/internalversion/defaults.go`), called by the watch handler
            // (`handlers/get.go`), read at v0.29.6, v0.32.13, v0.34.13 and v0.37.2. With bookmarks
            // the watch is then a streaming list in full (the initial-events-end bookmark; A12's
            // ERROR 500 over an etcd without progress requests); without, a plain watch from now.
            // Found by `conformance http` (the storage-level `conformance apiserver` has no
            // handler). Simplified: "" and "0" are one `WatchFrom::Now`, taken as "0" (any RV),
            // which is what listwatch's clients send. With "" the defaulted streaming list is a
            // consistent one (no RV: `Cacher.getWatchCacheResourceVersion` takes etcd's current
            // revision, and the cacher waits for it), which differs from "0" only while the cache
            // lags etcd: [`ApiServer::serve_watch_without_rv`] serves it for a caller that sends "".
            // The storage layer (`conformance apiserver`, whose watch from "" also runs while the
            // cache is held) has no defaulting: there "" is "0", the cacher's "legacy case".
            Request::Watch { from: WatchFrom::Now, bookmarks: true, .. } if self.watch_list => {
                self.watch_list(client, ListRv::Any, true, store)
            }
            Request::Watch { from, bookmarks, .. } => self.watch(client, from, bookmarks),
            Request::WatchList { rv, bookmarks, .. } => self.watch_list(client, rv, bookmarks, store),
        }
    }

    /// Serve, as the HTTP handler does, a WATCH that sends no `resourceVersion` at all (`""`, not
    /// `"0"`), nor `sendInitialEvents` or `resourceVersionMatch` (A3, A12). Where the `WatchList`
    /// gate is on, the handler defaults it to a streaming list with no RV: a consistent one, for which
    /// the cacher takes etcd's current revision (`Cacher.getWatchCacheResourceVersion`) and waits
    /// until its cache holds it (`waitUntilWatchCacheFreshAndForceAllEvents`, 3 s). Without bookmarks
    /// it is no streaming list in full (no initial-events-end bookmark) and needs no progress requests
    /// to open, but it waits all the same: over an etcd that answers no progress requests (E7) a cache
    /// behind etcd's revision (the last write was another resource's) never catches up, and the watch
    /// gets ERROR 504 (too large resource version) and closes. Read in `storage/cacher/cacher.go` at
    /// v0.32.3, v0.34.13 and v0.37.2 (the same in each); found by `conformance http` over etcd 3.4.23
    /// (`corpus/conformance/http-v0.37.2.unset-rv-watch-waits-for-etcd-3.4.json`). With bookmarks it
    /// is served as [`ApiServer::serve`] serves a watch from now (the simplification there); with the
    /// gate off, as "0" (the cacher's legacy case). Where progress requests move the cache, the wait
    /// ends at once here: the model's cache takes etcd's revision by the barrier of the run that asks.
    pub fn serve_watch_without_rv(
        &mut self,
        client: ClientId,
        timeout_secs: u32,
        bookmarks: bool,
        store: &Store,
    ) -> Outbox {
        let waits = self.watch_list && !bookmarks && !self.initializing;
        if waits && !self.progress_requests && self.cache.rv() < store.rev() {
            return vec![
                (client, Message::Event(WatchEvent::Error(ApiError::TooLargeResourceVersion))),
                (client, Message::End(WatchEnd::Closed)),
            ];
        }
        self.serve(client, Request::Watch { from: WatchFrom::Now, timeout_secs, bookmarks }, store)
    }

    /// Open a WATCH (A3, A4). Too old: an ERROR 410 event, then the stream closes.
    pub fn watch(&mut self, client: ClientId, from: WatchFrom, bookmarks: bool) -> Outbox {
        if self.initializing {
            // A14: a cache that has not listed again serves no watch: 429 before the stream opens.
            return vec![(client, Message::WatchRefused(ApiError::TooManyRequests))];
        }
        let mut out = Vec::new();
        // `start`: events above it are sent; `sent`: what the client has been told so far.
        let (start, sent) = match from {
            WatchFrom::Now => {
                // A3: synthetic ADDED for the current state (in key order, not RV order), then changes.
                for o in self.cache.objects() {
                    out.push((client, Message::Event(WatchEvent::Added(*o))));
                }
                (self.cache.rv(), self.cache.rv())
            }
            WatchFrom::Rv(x) => match self.cache.events_after(x) {
                None => {
                    out.push((client, Message::Event(WatchEvent::Error(ApiError::Expired))));
                    out.push((client, Message::End(WatchEnd::Closed)));
                    return out;
                }
                // A3: a watch from a future X waits for the cache; events up to X are never sent.
                Some(events) => {
                    let mut sent = x;
                    for e in events {
                        sent = e.rv;
                        out.push((client, Message::Event(e.event)));
                    }
                    (x, sent)
                }
            },
        };
        let quiet_since_bookmark = sent == start;
        self.watches.insert(client, ClientWatch { from: start, sent, bookmarks, quiet_since_bookmark });
        out
    }

    /// Take the next etcd revision into the cache and dispatch its events to the watches they match.
    ///
    /// E8: a revision that changed several keys is taken whole, as etcd sends a transaction's events in
    /// one watch response (its Atomic guarantee). Upstream the cacher then processes them one by one,
    /// and a LIST or watch served between two of them sees part of the revision: the flaw
    /// `partial-revision-served`, which takes one event per step. Without it a revision splits only on a
    /// client's connection, which sends one event per line (kubernetes#110210).
    pub fn ingest(&mut self, store: &mut Store) -> (Vec<IngestOutcome>, Outbox) {
        let mut out = Vec::new();
        let mut outcomes = Vec::new();
        loop {
            let outcome = self.ingest_one(store, &mut out);
            outcomes.push(outcome);
            let IngestOutcome::Event(CacheEvent { rv, .. }) = outcome else { break };
            if self.flaws.has(Flaw::PartialRevisionServed)
                || store.next_pending_rev(Self::watcher(self.id)) != Some(rv)
            {
                break;
            }
        }
        self.answer_waiting_lists(&mut out);
        (outcomes, out)
    }

    fn ingest_one(&mut self, store: &mut Store, out: &mut Outbox) -> IngestOutcome {
        match store.send_next(Self::watcher(self.id)) {
            None => IngestOutcome::Idle,
            // E5: the etcd watch fell below the compacted revision; the cache relists (A5).
            Some(WatchResponse::Cancelled { .. }) => {
                out.extend(self.relist_cache(store));
                IngestOutcome::Relisted
            }
            Some(WatchResponse::Event(e)) => match self.cache.ingest(&e, self.flaws) {
                // A7, simplified: the cache's own reflector relists at once; upstream it first re-watches
                // on a 500 for up to 30 s (PR #111387), which ends in the same relist here.
                Ingested::NilPrevKv => {
                    out.extend(self.relist_cache(store));
                    IngestOutcome::Relisted
                }
                Ingested::Dropped => IngestOutcome::Dropped,
                Ingested::Applied(ce) => {
                    for (client, w) in self.watches.iter_mut() {
                        if ce.rv > w.from {
                            w.sent = w.sent.max(ce.rv);
                            w.quiet_since_bookmark = false;
                            out.push((*client, Message::Event(ce.event)));
                        }
                    }
                    IngestOutcome::Event(ce)
                }
            },
        }
    }

    /// Whether `ingest` has something to do.
    pub fn can_ingest(&self, store: &Store) -> bool {
        store.watch_ready(Self::watcher(self.id))
    }

    /// An etcd progress notification for this cache's watch (E7), when etcd would send one.
    pub fn progress_notify(&mut self, store: &Store) -> Outbox {
        let mut out = Vec::new();
        if let Some(rev) = store.progress(Self::watcher(self.id)) {
            self.cache.progress(rev);
            self.answer_waiting_lists(&mut out);
        }
        out
    }

    /// Whether a progress notification would move the cache.
    pub fn can_progress(&self, store: &Store) -> bool {
        store.watch_caught_up(Self::watcher(self.id)) && store.rev() > self.cache.rv()
    }

    /// A bookmark on `client`'s watch (A8): only an RV, the cache's last processed one, which may equal
    /// the RV of the last event sent (never lower); sent only when it says something new: a higher RV,
    /// or that nothing more comes at the last event's RV.
    pub fn bookmark(&mut self, client: ClientId) -> Outbox {
        let rv = self.cache.rv();
        if !self.can_bookmark(client) {
            return Vec::new();
        }
        match self.watches.get_mut(&client) {
            Some(w) => {
                w.sent = rv;
                w.quiet_since_bookmark = true;
                vec![(client, Message::Event(WatchEvent::Bookmark(rv)))]
            }
            None => Vec::new(),
        }
    }

    pub fn can_bookmark(&self, client: ClientId) -> bool {
        let rv = self.cache.rv();
        self.watches
            .get(&client)
            .is_some_and(|w| w.bookmarks && (rv > w.sent || (rv == w.sent && !w.quiet_since_bookmark)))
    }

    /// The server's watch timeout (A9): a clean close, no ERROR.
    pub fn timeout_watch(&mut self, client: ClientId) -> Outbox {
        match self.watches.remove(&client) {
            Some(_) => vec![(client, Message::End(WatchEnd::Closed))],
            None => Vec::new(),
        }
    }

    /// An error after the watch opened: an ERROR event, then the stream closes (A4).
    pub fn fail_watch(&mut self, client: ClientId, error: ApiError) -> Outbox {
        match self.watches.remove(&client) {
            Some(_) => vec![
                (client, Message::Event(WatchEvent::Error(error))),
                (client, Message::End(WatchEnd::Closed)),
            ],
            None => Vec::new(),
        }
    }

    /// The client went away: forget its watch or waiting LIST.
    pub fn forget(&mut self, client: ClientId) {
        self.watches.remove(&client);
        self.waiting_lists.remove(&client);
        self.waiting_watch_lists.remove(&client);
    }

    /// Drop the oldest event of the cache's window (eviction, A5).
    pub fn evict(&mut self) -> bool {
        self.cache.evict_oldest()
    }

    /// The cache relists from etcd and closes every watch it serves (A5); their clients re-watch and get
    /// 410 if they are older than the new window.
    pub fn relist_cache(&mut self, store: &mut Store) -> Outbox {
        self.cache = Self::init_cache(self.id, store, self.cache_window);
        self.initializing = self.resilient_init;
        let mut out: Outbox = std::mem::take(&mut self.watches)
            .into_tuple_vec()
            .into_iter()
            .map(|(c, _)| (c, Message::End(WatchEnd::Closed)))
            .collect();
        self.answer_waiting_lists(&mut out);
        out
    }

    /// A restart: the cache starts anew and every watch and waiting LIST is gone (the network breaks
    /// their connections).
    pub fn restart(&mut self, store: &mut Store) {
        let (resilient_init, progress_requests) = (self.resilient_init, self.progress_requests);
        *self = ApiServer::start(self.id, store, self.cache_window, self.flaws)
            .with_resilient_init(resilient_init)
            .with_progress_requests(progress_requests)
            .with_release(self.release)
            .with_watch_list(self.watch_list)
            .with_pagination(self.pagination);
        self.initializing = resilient_init;
    }
}
