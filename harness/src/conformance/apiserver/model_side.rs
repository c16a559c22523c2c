//! The model's answers to an API server sequence: `model/src/store.rs` under one `model/src/server.rs`
//! API server, stepped operation by operation. After every step comes the barrier the real side takes
//! too: the cache ingests everything etcd has for it, then (when the store answers progress requests,
//! E7) a consistent LIST served from the cache moves it to etcd's current revision (A2, A12). While
//! the cache's etcd watch is held (`HoldCache` .. `ReleaseCache`) the barrier moves it no further, as
//! the real one does not wait for it.

use std::collections::BTreeMap;

use listwatch_model::api::{ApiError, Continue, ListRv, Message, Request, WatchEvent, WatchFrom};
use listwatch_model::flaw::Flaws;
use listwatch_model::heartbeat::Heartbeats;
use listwatch_model::server::{ApiServer, IngestOutcome, Outbox};
use listwatch_model::store::{Prefix, Store, TombstonePolicy, WriteError};
use listwatch_model::{ApiServerRelease, ClientId, Key, Object, Rev, ServerId};

use super::sequence::{ApiOp, ApiSequence, Rv};
use super::transcript::{ApiAnswer, ApiMsg, ApiStep, ApiTranscript, Obj, Token};
use crate::conformance::Plant;

/// The client the LISTs come from; watch `i` is client `i`.
const LISTER: ClientId = ClientId(200);
/// Events the model's cache keeps: more than a sequence writes, as upstream's 100-event floor (A5).
const WINDOW: u8 = 255;

/// How the model is set up for one side under test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModelSetup {
    pub tombstones: TombstonePolicy,
    pub plant: Plant,
    /// Whether etcd answers progress requests (etcd >= 3.4.31, 3.5.13, 3.6): then a consistent read is
    /// served from the cache once it has caught up, and the barrier moves the cache to etcd's revision.
    pub progress_requests: bool,
    /// The k8s.io/apiserver release whose rules the model's server follows (A2, A12).
    pub release: ApiServerRelease,
    /// The `WatchList` gate: the release's default, or off for a server found to refuse streaming
    /// lists (A12).
    pub watch_list: bool,
    /// The server pages a LIST with `limit` (A13); a server may ignore `limit` instead.
    pub pagination: bool,
    /// Requests come through the API server's HTTP handler, with its defaulting ([`ApiServer::serve`]),
    /// not straight to the storage layer.
    pub handlers: bool,
}

impl ModelSetup {
    /// The newest release's server driven at its storage layer, with no bug planted and the tombstone
    /// policy of etcd before 3.5.16 (E4); `progress_requests` as etcd answers them or not (E7).
    pub fn storage(progress_requests: bool) -> Self {
        ModelSetup {
            tombstones: TombstonePolicy::DropAtCompaction,
            plant: Plant::None,
            progress_requests,
            release: ApiServerRelease::NEWEST,
            watch_list: true,
            pagination: true,
            handlers: false,
        }
    }
}

/// The model stepped by a sequence (also what the generator draws the next operation from).
#[derive(Debug)]
pub struct ModelServer {
    pub store: Store,
    pub server: ApiServer,
    setup: ModelSetup,
    token: Option<Continue>,
    /// The cache's etcd watch is held: the barrier moves the cache no further.
    held: bool,
    /// The cacher's heartbeat schedule (A8), for [`ApiOp::Minute`].
    heartbeats: Heartbeats,
}

/// The model's transcript of `seq`.
pub fn model_transcript(seq: &ApiSequence, setup: ModelSetup) -> ApiTranscript {
    let mut model = ModelServer::new(setup);
    let mut transcript = ApiTranscript::default();
    for op in &seq.ops {
        transcript.steps.push(model.step(op));
    }
    transcript
}

fn obj(o: &Object) -> Obj {
    Obj { key: o.key.0, created: (o.uid.0).0, rv: o.rv.0, version: o.version }
}

fn code(e: ApiError) -> u16 {
    e.code().parse().unwrap_or(0)
}

fn list_rv(rv: Rv) -> ListRv {
    match rv {
        Rv::Consistent => ListRv::Consistent,
        Rv::Any => ListRv::Any,
        Rv::NotOlderThan(x) => ListRv::NotOlderThan(Rev(x)),
        Rv::Exact(x) => ListRv::Exact(Rev(x)),
    }
}

impl ModelServer {
    pub fn new(setup: ModelSetup) -> Self {
        let mut store = Store::new(setup.tombstones, None);
        let server = ApiServer::start(ServerId(0), &mut store, WINDOW, Flaws::NONE)
            .with_progress_requests(setup.progress_requests)
            .with_release(setup.release)
            .with_watch_list(setup.watch_list)
            .with_pagination(setup.pagination);
        let heartbeats = Heartbeats::new(setup.release, server.cache().rv());
        ModelServer { store, server, setup, token: None, held: false, heartbeats }
    }

    /// Whether watch `id` is open (served, or waiting for the cache, A12).
    pub fn is_open(&self, id: u8) -> bool {
        let c = ClientId(id);
        self.server.watches().contains_key(&c) || self.server.waiting_watch_lists().contains_key(&c)
    }

    /// Whether the cache's etcd watch is held back (`HoldCache` .. `ReleaseCache`): a consistent
    /// request, or one from an RV the cache has not reached, then waits for it (A2, A12).
    pub fn is_held(&self) -> bool {
        self.held
    }

    /// Whether a minute now would bring some open watch a heartbeat (A8).
    pub fn heartbeat_due(&self) -> bool {
        !self.heartbeats.clone().minute(&self.server).is_empty()
    }

    pub fn has_token(&self) -> bool {
        self.token.is_some()
    }

    /// One operation, then the barrier.
    pub fn step(&mut self, op: &ApiOp) -> ApiStep {
        let mut step = ApiStep::default();
        let (answer, out) = self.apply(op);
        self.file(out, &mut step);
        self.barrier(&mut step);
        step.answer = Some(answer);
        step.cache_rv = Some(self.server.cache().rv().0);
        step
    }

    /// Whether etcd's progress notification moves the cache now (E7): someone asks for one (`asks`),
    /// the cache's etcd watch is not held back, and etcd has progress to tell.
    fn progress_due(&self, asks: bool) -> bool {
        asks && !self.held && self.server.can_progress(&self.store)
    }

    fn barrier(&mut self, step: &mut ApiStep) {
        while !self.held && self.server.can_ingest(&self.store) {
            let (outcomes, out) = self.server.ingest(&mut self.store);
            for outcome in outcomes {
                if let IngestOutcome::Event(e) = outcome {
                    self.heartbeats.took(e.rv);
                }
            }
            self.file(out, step);
        }
        if self.progress_due(self.setup.progress_requests) {
            let out = self.progress_notify();
            self.file(out, step);
        }
        // A12: a streaming list still waiting for the cache after the barrier waits for nothing more
        // (the cache has caught up); its bounded wait runs out: ERROR 504, closed.
        let waiting: Vec<ClientId> = self.server.waiting_watch_lists().keys().copied().collect();
        for client in waiting {
            let out = self.server.watch_list_wait_expired(client);
            self.file(out, step);
        }
    }

    /// etcd's progress notification moves the cache (E7), and the RV the cacher's heartbeats carry.
    fn progress_notify(&mut self) -> Outbox {
        let out = self.server.progress_notify(&self.store);
        self.heartbeats.took(self.server.cache().rv());
        out
    }

    /// Put each watch message in its watch's list.
    fn file(&self, out: Outbox, step: &mut ApiStep) {
        for (client, message) in out {
            if client == LISTER {
                continue;
            }
            let msg = match message {
                Message::Event(WatchEvent::Added(o)) => ApiMsg::Added(obj(&o)),
                Message::Event(WatchEvent::Modified(o)) => ApiMsg::Modified(obj(&o)),
                Message::Event(WatchEvent::Deleted(o)) => ApiMsg::Deleted(obj(&o)),
                Message::Event(WatchEvent::InitialEventsEnd(rv)) => ApiMsg::InitialEventsEnd { rv: rv.0 },
                // The only plain bookmarks the comparison asks for: a minute's heartbeats.
                Message::Event(WatchEvent::Bookmark(rv)) => ApiMsg::Bookmark { rv: rv.0 },
                Message::List(_) | Message::WatchRefused(_) => continue,
                Message::Event(WatchEvent::Error(e)) => ApiMsg::Error { code: code(e) },
                Message::End(_) => ApiMsg::Closed,
            };
            step.messages.entry(client.0).or_default().push(msg);
        }
    }

    fn list_answer(&mut self, out: Outbox, consistent: bool) -> ApiAnswer {
        let answer = out.into_iter().find_map(|(c, m)| match m {
            Message::List(r) if c == LISTER => Some(r),
            _ => None,
        });
        match answer {
            Some(Ok(list)) => {
                self.token = list.cont;
                let planted = consistent && self.setup.plant == Plant::ConsistentListOneRevisionBehind;
                let rv = if planted { list.rv.0.saturating_sub(1) } else { list.rv.0 };
                ApiAnswer::List {
                    rv,
                    items: list.items.iter().map(obj).collect(),
                    cont: list.cont.map(|c| Token { rv: c.rv.0, after: c.after.0 }),
                }
            }
            Some(Err(e)) => {
                self.token = None;
                ApiAnswer::Failed { code: code(e) }
            }
            // A2: a NotOlderThan LIST the cache cannot serve waits; nothing happens meanwhile here, so
            // its wait runs out: 504.
            None => {
                self.token = None;
                let out = self.server.list_wait_expired(LISTER);
                self.list_answer(out, false)
            }
        }
    }

    fn apply(&mut self, op: &ApiOp) -> (ApiAnswer, Outbox) {
        let store = &mut self.store;
        let answer = match *op {
            ApiOp::Put { key, other } => {
                let prefix = if other { Prefix::Other } else { Prefix::Watched };
                ApiAnswer::Written { rev: store.put(prefix, Key(key)).mod_rev.0 }
            }
            ApiOp::Delete { key } => {
                let last = store.get(Key(key)).map(|kv| kv.object());
                match store.delete(Prefix::Watched, Key(key)) {
                    Ok(rev) => {
                        // A6: what the storage layer's Delete answers; over HTTP the registry decides
                        // (the object or a Status), so it is not compared there.
                        let answered = last.filter(|_| !self.setup.handlers);
                        let object = answered.map(|o| obj(&self.setup.release.deleted_object(o, rev)));
                        ApiAnswer::Deleted { rev: rev.0, keys: vec![key], object }
                    }
                    Err(_) => ApiAnswer::Deleted { rev: store.rev().0, keys: vec![], object: None },
                }
            }
            ApiOp::DeleteAll { ref keys } => {
                let keys: Vec<Key> = keys.iter().map(|k| Key(*k)).collect();
                match store.delete_all(Prefix::Watched, &keys) {
                    Ok((rev, deleted)) => {
                        let keys = deleted.iter().map(|k| k.0).collect();
                        ApiAnswer::Deleted { rev: rev.0, keys, object: None }
                    }
                    Err(_) => ApiAnswer::Deleted { rev: store.rev().0, keys: vec![], object: None },
                }
            }
            ApiOp::Compact { rev } => match store.compact(Rev(rev)) {
                Ok(()) => ApiAnswer::Compacted { rev },
                Err(WriteError::BadCompaction { compacted, .. }) if Rev(rev) <= compacted => {
                    ApiAnswer::CompactRefused { why: "compacted".into() }
                }
                Err(_) => ApiAnswer::CompactRefused { why: "future-revision".into() },
            },
            ApiOp::List { rv, limit } => {
                // The planted `consistent-read-lags`: a whole consistent LIST served from the cache as
                // it is, as a LIST at "0" is.
                let lags =
                    rv == Rv::Consistent && limit.is_none() && self.setup.plant == Plant::ConsistentReadLags;
                let out = match limit {
                    Some(limit) => self.server.list_page(LISTER, list_rv(rv), limit, None, &self.store),
                    None if lags => self.server.list(LISTER, ListRv::Any, &self.store),
                    None => self.server.list(LISTER, list_rv(rv), &self.store),
                };
                return (self.list_answer(out, rv == Rv::Consistent), Vec::new());
            }
            ApiOp::ListNamed { rv, key, namespaced } => {
                let mut out = self.server.list_named(LISTER, list_rv(rv), Key(key), namespaced, &self.store);
                // A2, E7: a read of one key that waits for the cache and asks etcd for progress
                // (`ApiServerRelease::one_key_wait_asks_progress`) is answered once etcd's notification
                // moves the cache, unless the cache's etcd watch is held back.
                if out.is_empty() && self.progress_due(self.server.waits_for_freshness()) {
                    out = self.progress_notify();
                }
                let (answer, rest): (Outbox, Outbox) = out.into_iter().partition(|(c, _)| *c == LISTER);
                return (self.list_answer(answer, rv == Rv::Consistent), rest);
            }
            ApiOp::Continue { limit } => match self.token {
                Some(token) => {
                    let out =
                        self.server.list_page(LISTER, ListRv::Consistent, limit, Some(token), &self.store);
                    return (self.list_answer(out, false), Vec::new());
                }
                None => ApiAnswer::Nothing,
            },
            ApiOp::Watch { id, from, unset, bookmarks, timeout } => {
                self.server.forget(ClientId(id));
                // A3: rv unset is "0" at the storage layer. The cacher serves a watch with no resourceVersion and no
                // sendInitialEvents from its cache as from "0" ("legacy case",
                // Cacher.getWatchCacheResourceVersion; k8s.io/apiserver v0.29.6 to v0.37.2; before,
                // `Cacher.Watch` parses an empty RV as 0, read at v0.25.16), unless
                // the WatchFromStorageWithoutResourceVersion gate sends it to etcd: off by default in
                // every release, locked off from v0.33.
                let asked = from.map(Rev);
                let from = asked.map_or(WatchFrom::Now, WatchFrom::Rv);
                let timeout_secs = u32::from(timeout);
                let out = if self.setup.handlers && unset {
                    // Over HTTP, "" is not "0" (`ApiServer::serve_watch_without_rv`).
                    self.heartbeats.closed(ClientId(id));
                    self.server.serve_watch_without_rv(ClientId(id), timeout_secs, bookmarks, &self.store)
                } else if self.setup.handlers {
                    self.heartbeats.closed(ClientId(id));
                    let request = Request::Watch { from, timeout_secs, bookmarks };
                    self.server.serve(ClientId(id), request, &self.store)
                } else {
                    let out = self.server.watch(ClientId(id), from, bookmarks);
                    self.heartbeats.opened(ClientId(id), asked, bookmarks, &self.server);
                    out
                };
                let (answer, mut out) = Self::opened(out);
                // A9: the server ends the watch at its timeout, cleanly, after what it sent at once (the
                // handler's `handleWatch` gives the watch a context with that deadline and its
                // `WatchServer` stops it when the timeout fires; the cacher sends no bookmark first
                // when the deadline is under 2 s away, `cacheWatcher.nextBookmarkTime`; read in
                // k8s.io/apiserver v0.37.2, `endpoints/handlers/get.go` and
                // `storage/cacher/cache_watcher.go`). Nothing happens between the two here.
                if timeout && self.setup.plant != Plant::TimeoutIgnored {
                    out.extend(self.server.timeout_watch(ClientId(id)));
                }
                return (answer, out);
            }
            ApiOp::WatchList { id, rv, timeout } => {
                // A streaming list's heartbeats are not compared: its plain bookmarks are dropped.
                self.heartbeats.closed(ClientId(id));
                self.server.forget(ClientId(id));
                let out = self.server.watch_list(ClientId(id), list_rv(rv), true, &self.store);
                let (answer, mut out) = Self::opened(out);
                // A9 for a streaming list (`timeoutSeconds=2`, drawn only where it waits for nothing):
                // its initial events and their initial-events-end bookmark, then a clean close with no
                // ERROR, as the handler ends any watch at its deadline. The cacher sends that bookmark
                // right after the initial events, and none that is compared after it when the deadline
                // is within 2 s (read in k8s.io/apiserver v0.32.0 and v0.37.2; `WATCH_LIST_TIMEOUT_SECS`).
                if timeout && self.setup.plant != Plant::TimeoutIgnored {
                    out.extend(self.server.timeout_watch(ClientId(id)));
                }
                return (answer, out);
            }
            ApiOp::Stop { id } => {
                let open = self.is_open(id);
                self.heartbeats.closed(ClientId(id));
                self.server.forget(ClientId(id));
                if open {
                    ApiAnswer::Stopped
                } else {
                    ApiAnswer::Nothing
                }
            }
            ApiOp::HoldCache => {
                self.held = true;
                ApiAnswer::Nothing
            }
            ApiOp::ReleaseCache => {
                self.held = false;
                ApiAnswer::Nothing
            }
            ApiOp::Minute if self.setup.plant == Plant::HeartbeatMissing => ApiAnswer::Nothing,
            ApiOp::Minute => return (ApiAnswer::Nothing, self.heartbeats.minute(&self.server)),
            ApiOp::RelistCache if self.setup.plant == Plant::RelistIgnored => ApiAnswer::Nothing,
            ApiOp::RelistCache => {
                // A5: the cache lists etcd again and closes every watch it serves. The real side
                // answers once the cache serves again, so A14's 429s meet no request here.
                let mut out = self.server.relist_cache(&mut self.store);
                out.extend(self.server.cache_ready());
                return (ApiAnswer::Nothing, out);
            }
        };
        (answer, Vec::new())
    }

    /// A watch's answer: refused before it opened (an HTTP status), or opened with these messages.
    fn opened(out: Outbox) -> (ApiAnswer, Outbox) {
        match out.first() {
            Some((_, Message::WatchRefused(e))) => (ApiAnswer::Failed { code: code(*e) }, Vec::new()),
            _ => (ApiAnswer::WatchOpened, out),
        }
    }
}

/// What the model says, for a sequence, by watch: handy for tests.
pub fn messages_of(t: &ApiTranscript) -> BTreeMap<u8, Vec<ApiMsg>> {
    let mut all: BTreeMap<u8, Vec<ApiMsg>> = BTreeMap::new();
    for step in &t.steps {
        for (id, msgs) in &step.messages {
            all.entry(*id).or_default().extend(msgs.iter().copied());
        }
    }
    all
}
