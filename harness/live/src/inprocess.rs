//! The model's etcd and API server behind the `ListWatch` façade, in process, with real or tokio-paused
//! time. Every answer is the model server's; this file only carries messages and keeps time (A2's 3 s
//! freshness wait, A9's watch timeout). Faults are injected by the test that owns the server.

use std::collections::BTreeMap;
use std::time::Duration;

use listwatch_model::server::{ApiServer, Outbox};
use listwatch_model::store::{Prefix, Store};
use listwatch_model::{
    ApiError, ClientId, Flaws, Key, ListResponse, ListRv, Message, Rev, ServerId, TombstonePolicy, WatchEnd,
    WatchFrom,
};
use tokio::sync::mpsc;

use super::sync::{lock, Arc, Mutex};
use super::transport::{ListWatch, WatchItem, WatchStream};

/// Faults the owner of the server injects.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Faults {
    /// The next requests are refused with these errors, in order.
    pub refuse: Vec<ApiError>,
    /// Every watch ends cleanly as soon as it opens (a server that closes every stream at once).
    pub close_every_watch: bool,
    /// No request is ever answered (an unreachable cluster).
    pub unreachable: bool,
}

/// Requests the server saw, by kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Requests {
    pub lists: u32,
    pub watches: u32,
}

#[derive(Debug)]
struct State {
    store: Store,
    server: ApiServer,
    conns: BTreeMap<ClientId, mpsc::UnboundedSender<Message>>,
    next_client: u8,
    faults: Faults,
    requests: Requests,
    log: Vec<(ClientId, String)>,
}

/// One in-process API server over one etcd.
#[derive(Clone, Debug)]
pub struct InProcessServer {
    state: Arc<Mutex<State>>,
}

impl Default for InProcessServer {
    fn default() -> Self {
        Self::new(8)
    }
}

impl InProcessServer {
    /// A server whose watch cache keeps `cache_window` events (A5).
    pub fn new(cache_window: u8) -> Self {
        let mut store = Store::new(TombstonePolicy::KeepAtCompactRev, None);
        let server = ApiServer::start(ServerId(0), &mut store, cache_window, Flaws::NONE);
        let state = State {
            store,
            server,
            conns: BTreeMap::new(),
            next_client: 0,
            faults: Faults::default(),
            requests: Requests::default(),
            log: Vec::new(),
        };
        InProcessServer { state: Arc::new(Mutex::new(state)) }
    }

    /// A connection for one reflector.
    pub fn client(&self) -> InProcessClient {
        let mut s = lock(&self.state);
        let id = ClientId(s.next_client);
        s.next_client = s.next_client.wrapping_add(1);
        InProcessClient { id, server: self.clone() }
    }

    /// Create or update `key`; the watch cache takes the event at once. Returns the revision.
    pub fn put(&self, key: Key) -> Rev {
        let mut s = lock(&self.state);
        let rev = s.store.put(Prefix::Watched, key).mod_rev;
        s.pump();
        rev
    }

    /// Delete `key` if it exists.
    pub fn delete(&self, key: Key) -> Option<Rev> {
        let mut s = lock(&self.state);
        let rev = s.store.delete(Prefix::Watched, key).ok();
        s.pump();
        rev
    }

    /// Compact etcd at its current revision (E4).
    pub fn compact(&self) {
        let mut s = lock(&self.state);
        let rev = s.store.rev();
        let _ = s.store.compact(rev);
    }

    /// Break every open connection (EOF as the clients see it).
    pub fn disconnect_all(&self) {
        let mut s = lock(&self.state);
        for (client, conn) in std::mem::take(&mut s.conns) {
            s.server.forget(client);
            let _ = conn.send(Message::End(WatchEnd::Disconnected));
        }
    }

    /// Fail every open watch with an ERROR event (A4), e.g. `410 Expired`.
    pub fn fail_watches(&self, error: ApiError) {
        let mut s = lock(&self.state);
        let clients: Vec<ClientId> = s.server.watches().keys().copied().collect();
        for client in clients {
            let out = s.server.fail_watch(client, error);
            s.route(out);
        }
    }

    pub fn set_faults(&self, faults: Faults) {
        lock(&self.state).faults = faults;
    }

    pub fn requests(&self) -> Requests {
        lock(&self.state).requests
    }

    /// The store's current content: the truth a live cache must converge to.
    pub fn truth(&self) -> (Rev, Vec<listwatch_model::Object>) {
        let s = lock(&self.state);
        let snap = s.store.range(None).expect("the current revision is readable");
        (snap.rev, snap.kvs.iter().map(|kv| kv.object()).collect())
    }

    /// Every request and answer, in order (client, what).
    pub fn log(&self) -> Vec<(ClientId, String)> {
        lock(&self.state).log.clone()
    }
}

impl State {
    /// Let the watch cache take every etcd event (no lag here) and carry what it sends.
    fn pump(&mut self) {
        while self.server.can_ingest(&self.store) {
            let (_, out) = self.server.ingest(&mut self.store);
            self.route(out);
        }
    }

    fn route(&mut self, out: Outbox) {
        for (client, message) in out {
            if let Some(conn) = self.conns.get(&client) {
                self.log.push((client, format!("{message}")));
                let _ = conn.send(message);
            }
        }
    }

    /// Open a connection for a request: the fault it meets, if any, or the channel its answers come on.
    fn open(
        &mut self,
        client: ClientId,
        what: String,
    ) -> Result<mpsc::UnboundedReceiver<Message>, Option<ApiError>> {
        self.log.push((client, what));
        if self.faults.unreachable {
            return Err(None);
        }
        if !self.faults.refuse.is_empty() {
            let e = self.faults.refuse.remove(0);
            self.log.push((client, format!("refused: {e}")));
            return Err(Some(e));
        }
        self.server.forget(client);
        let (tx, rx) = mpsc::unbounded_channel();
        self.conns.insert(client, tx);
        Ok(rx)
    }
}

/// One reflector's connection to the in-process server.
#[derive(Clone, Debug)]
pub struct InProcessClient {
    id: ClientId,
    server: InProcessServer,
}

impl ListWatch for InProcessClient {
    type Stream = InProcessWatch;

    async fn list(&self, rv: ListRv) -> Result<ListResponse, ApiError> {
        let opened = {
            let mut s = lock(&self.server.state);
            s.requests.lists += 1;
            s.open(self.id, format!("LIST {rv}")).inspect(|_| {
                let State { server, store, .. } = &mut *s;
                let out = server.list(self.id, rv, store);
                s.route(out);
            })
        };
        let mut rx = match opened {
            Ok(rx) => rx,
            Err(Some(e)) => return Err(e),
            Err(None) => std::future::pending().await,
        };
        let answer =
            match tokio::time::timeout(Duration::from_millis(ApiServer::LIST_FRESHNESS_WAIT_MS), rx.recv())
                .await
            {
                Ok(m) => m,
                Err(_) => {
                    {
                        let mut s = lock(&self.server.state);
                        let out = s.server.list_wait_expired(self.id);
                        s.route(out);
                    }
                    rx.recv().await
                }
            };
        lock(&self.server.state).conns.remove(&self.id);
        match answer {
            Some(Message::List(result)) => result,
            _ => Err(ApiError::Disconnected),
        }
    }

    async fn watch(
        &self,
        from: WatchFrom,
        timeout_secs: u32,
        bookmarks: bool,
    ) -> Result<InProcessWatch, ApiError> {
        let opened = {
            let mut s = lock(&self.server.state);
            s.requests.watches += 1;
            s.open(self.id, format!("WATCH {from:?}")).inspect(|_| {
                let out = s.server.watch(self.id, from, bookmarks);
                s.route(out);
                if s.faults.close_every_watch {
                    let out = s.server.timeout_watch(self.id);
                    s.route(out);
                }
            })
        };
        match opened {
            Ok(rx) => Ok(InProcessWatch {
                id: self.id,
                server: self.server.clone(),
                rx,
                deadline: tokio::time::Instant::now() + Duration::from_secs(u64::from(timeout_secs)),
            }),
            Err(Some(e)) => Err(e),
            Err(None) => std::future::pending().await,
        }
    }
}

/// An open in-process watch; the server ends it at its timeout (A9).
#[derive(Debug)]
pub struct InProcessWatch {
    id: ClientId,
    server: InProcessServer,
    rx: mpsc::UnboundedReceiver<Message>,
    deadline: tokio::time::Instant,
}

impl WatchStream for InProcessWatch {
    async fn next(&mut self) -> WatchItem {
        loop {
            let message = tokio::select! {
                m = self.rx.recv() => m,
                () = tokio::time::sleep_until(self.deadline) => {
                    let mut s = lock(&self.server.state);
                    let out = s.server.timeout_watch(self.id);
                    s.route(out);
                    continue;
                }
            };
            return match message {
                Some(Message::Event(e)) => WatchItem::Event(e),
                Some(Message::End(end)) => WatchItem::End(end),
                Some(Message::List(_) | Message::WatchRefused(_)) => continue,
                None => WatchItem::End(WatchEnd::Disconnected),
            };
        }
    }
}

impl Drop for InProcessWatch {
    fn drop(&mut self) {
        let mut s = lock(&self.server.state);
        s.server.forget(self.id);
        s.conns.remove(&self.id);
    }
}
