//! The whole system as one value: the etcd store, the API servers, the network, the clients under test
//! (by default the model reflector with its cache), the client manager, and the budgets that bound the
//! environment.
//!
//! [`System::actions`] lists the enabled steps in a fixed order; [`System::apply`] takes one and
//! returns what was observed. Nothing here decides protocol behaviour: each step calls the component
//! that owns the rule and routes what it sends. The clients are behind [`Client`], so a test can plant
//! a bug by wrapping the model reflector, and a foreign client can stand in its place.

mod symmetry;

use crate::action::{Action, Fault};
use crate::api::{ApiError, Message};
use crate::client::{Client, Clients, Effect, Input, ModelClient};
use crate::config::{Config, FaultKind};
use crate::manager::{
    cluster_ids, cluster_of, request_ids, ClusterManager, Manager, Outcome, RequestId, RequestTrace,
};
use crate::network::Network;
use crate::observe::{ClientView, Connection, Observed};
use crate::reflector::{Reflector, Timer};
use crate::server::{ApiServer, Outbox};
use crate::store::{Prefix, Store};
use crate::types::{ClientId, Key, Rev, ServerId};

/// What is left of the environment's budgets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Budget {
    pub writes: u8,
    pub foreign_writes: u8,
    pub compactions: u8,
    pub lease_revokes: u8,
    pub faults: u8,
}

/// The error for a step that is not enabled in the current state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotEnabled(pub Action);

impl std::fmt::Display for NotEnabled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "action '{}' is not enabled in this state", self.0)
    }
}

impl std::error::Error for NotEnabled {}

#[derive(Debug, PartialEq, Eq)]
pub struct System<C = ModelClient, M = Manager> {
    config: Config,
    store: Store,
    servers: Vec<ApiServer>,
    network: Network,
    clients: Vec<C>,
    manager: Option<M>,
    budget: Budget,
}
crate::clone_by_field!(System<C, M> { config, store, servers, network, clients, manager, budget });

/// Everything but the configuration, which is the same in every state of a run: a checker hashes a
/// state for every step it explores. Equal systems still hash alike.
impl<C: std::hash::Hash, M: std::hash::Hash> std::hash::Hash for System<C, M> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        let System { config: _, store, servers, network, clients, manager, budget } = self;
        (store, servers, network, clients, manager, budget).hash(state);
    }
}

impl System<ModelClient> {
    /// The initial state with the model reflector as every client: servers with fresh caches, every
    /// reflector's first LIST sent.
    pub fn new(config: Config) -> Self {
        Self::start(config).0
    }

    /// [`Self::new`], with what was observed while starting (every reflector's first request).
    pub fn start(config: Config) -> (Self, Vec<Observed>) {
        Self::start_with(config, |_| ModelClient::new(config.reflector, config.flaws))
    }

    /// The model reflector of a client: for drivers and traces, not for properties (see [`Self::view`]).
    pub fn reflector(&self, client: ClientId) -> &Reflector {
        &self.clients[usize::from(client.0)].reflector
    }
}

impl<C: Client> System<C> {
    /// The initial state with `config.reflectors` clients made by `make`, each started, and the
    /// model's client manager.
    pub fn start_with(config: Config, make: impl FnMut(ClientId) -> C) -> (Self, Vec<Observed>) {
        Self::start_managed(config, make, |m| Manager::new(m.clusters, m.requests, config.flaws))
    }
}

impl<C: Client, M: ClusterManager> System<C, M> {
    /// The initial state of a run of `config` with the clients (and manager) `clients` makes, each
    /// started, and what was observed while starting.
    pub fn start_clients<K: Clients<C = C, M = M>>(
        clients: &K,
        config: Config,
        seed: u64,
    ) -> (Self, Vec<Observed>) {
        Self::start_managed(
            config,
            |id| clients.make(&config, seed, id),
            |m| clients.make_manager(&config, seed, m),
        )
    }

    /// [`System::start_with`], with the client manager (where the configuration has one) made by
    /// `manager`: a user's own under test in place of the model's.
    pub fn start_managed(
        config: Config,
        make: impl FnMut(ClientId) -> C,
        manager: impl FnOnce(crate::config::ManagerConfig) -> M,
    ) -> (Self, Vec<Observed>) {
        let mut store = Store::new(config.tombstones, config.etcd_watch_buffer);
        let servers = (0..config.servers.max(1))
            .map(|i| {
                ApiServer::start(ServerId(i), &mut store, config.cache_window, config.flaws)
                    .with_resilient_init(config.resilient_cache_init)
                    .with_progress_requests(config.etcd_progress_requests)
                    .with_release(config.apiserver)
            })
            .collect();
        let clients = (0..config.reflectors).map(ClientId).map(make).collect();
        let manager = config.manager.map(manager);
        let budget = Budget {
            writes: config.writes,
            foreign_writes: config.foreign_writes,
            compactions: config.compactions,
            lease_revokes: config.lease_revokes,
            faults: config.faults,
        };
        let mut system =
            System { config, store, servers, network: Network::default(), clients, manager, budget };
        let mut seen = Vec::new();
        if let Some(m) = &system.manager {
            let clusters = m.cluster_count();
            seen.extend(request_ids(m).map(|request| Observed::ManagerRequested {
                request,
                cluster: cluster_of(clusters, request),
            }));
            // A manager whose requests run on their own may have moved them already.
            for id in request_ids(m) {
                Self::report_manager_change(m, id, RequestTrace::default(), &mut seen);
            }
        }
        for i in 0..system.clients.len() {
            system.clients[i].start();
            system.drain(ClientId(i as u8), &mut seen);
        }
        (system, seen)
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    pub fn servers(&self) -> &[ApiServer] {
        &self.servers
    }

    pub fn network(&self) -> &Network {
        &self.network
    }

    pub fn manager(&self) -> Option<&M> {
        self.manager.as_ref()
    }

    pub fn budget(&self) -> Budget {
        self.budget
    }

    /// Whether every API server's cache has taken every etcd event it will get.
    pub fn servers_caught_up(&self) -> bool {
        self.servers.iter().all(|s| !s.can_ingest(&self.store))
    }

    /// Whether the environment is done: no writes, compactions or faults left to inject. A compaction
    /// left in the budget with nothing left to compact (E4: etcd compacts only below its revision) is
    /// spent.
    pub fn quiet(&self) -> bool {
        let b = self.budget;
        let compaction_left = b.compactions > 0 && self.store.compacted() < self.store.rev();
        // E8: a revoke with fewer than two live objects is no multi-key revision; it is spent.
        let revoke_left = b.lease_revokes > 0 && self.lease_revoke_deletes_several();
        // A14: a cache still reinitialising after a fault is part of that fault.
        let reinitialising = self.servers.iter().any(ApiServer::initializing);
        b.writes == 0
            && b.foreign_writes == 0
            && !compaction_left
            && !revoke_left
            && b.faults == 0
            && !reinitialising
            && !self.clients.iter().any(Client::consumer_held)
    }

    /// Whether revoking the lease now would delete several objects at one revision (E8).
    fn lease_revoke_deletes_several(&self) -> bool {
        (0..self.config.keys).filter(|k| self.store.get(Key(*k)).is_some()).count() >= 2
    }

    pub fn client_ids(&self) -> impl Iterator<Item = ClientId> {
        (0..self.clients.len() as u8).map(ClientId)
    }

    /// A client under test: for drivers, not for properties (see [`Self::view`]).
    pub fn client(&self, client: ClientId) -> &C {
        &self.clients[usize::from(client.0)]
    }

    /// Why a client's own machinery is gone, naming the client, if one's is ([`Client::gone`]): drivers
    /// stop with it as an error.
    pub fn gone(&self) -> Option<String> {
        let manager = || self.manager.as_ref()?.gone().map(|why| format!("the client manager: {why}"));
        self.client_ids()
            .find_map(|c| self.client(c).gone().map(|why| format!("{c}: {why}")))
            .or_else(manager)
    }

    /// Why a client, or the client manager, can take no step any more, naming it, if one cannot
    /// ([`Client::halted`], [`ClusterManager::halted`]): a run ends there.
    pub fn halted(&self) -> Option<String> {
        let manager = || self.manager.as_ref()?.halted().map(|why| format!("the client manager: {why}"));
        self.client_ids()
            .find_map(|c| self.client(c).halted().map(|why| format!("{c}: {why}")))
            .or_else(manager)
    }

    /// What a client shows (the observation surface).
    pub fn view(&self, client: ClientId) -> ClientView<'_> {
        let conn = self.network.conn(client).map(|k| Connection {
            waiting: !k.queue.is_empty(),
            watch_served: !k.request.is_list()
                && k.server.is_some_and(|s| self.servers[usize::from(s.0)].watches().contains_key(&client)),
            dead: k.dead,
        });
        ClientView::of(&self.clients[usize::from(client.0)], conn)
    }

    /// Whether nothing is in flight: every etcd event taken by every cache, no message queued, no
    /// request unrouted or waiting, no cache behind a progress notification it could get. A cache whose
    /// server does not ask etcd for progress (E7, [`crate::config::ProgressNotify`]) may stay behind the
    /// revision for good once its resource stops changing.
    pub fn settled(&self) -> bool {
        self.network.idle()
            && self.network.conns().all(|(_, c)| !c.unrouted())
            && self.servers.iter().all(|s| {
                let behind = self.config.progress_notify.has(s.id()) && s.can_progress(&self.store);
                let behind = behind || (s.waits_for_freshness() && s.can_progress(&self.store));
                let waiting = !s.waiting_lists().is_empty() || s.waits_for_freshness();
                let busy = s.initializing() || s.can_ingest(&self.store) || waiting;
                !busy && !behind
            })
    }

    fn fault_ok(&self, kind: FaultKind) -> bool {
        self.budget.faults > 0 && self.config.fault_kinds.has(kind)
    }

    fn server_of(&self, client: ClientId) -> Option<ServerId> {
        self.network.conn(client).and_then(|c| c.server)
    }

    /// Whether a client's request is on its way to an answer that no fault has to bring: unrouted
    /// while a server may take it, answered with messages not yet read, or held in a server's bounded
    /// wait (a NotOlderThan LIST, A2; a streaming list waiting for a fresh cache, A12). An open watch
    /// with nothing to send is not: it may wait for minutes.
    fn in_flight(&self, client: ClientId) -> bool {
        let Some(conn) = self.network.conn(client).filter(|conn| !conn.dead) else {
            return false;
        };
        match conn.server {
            None => self.servers.iter().any(|s| self.network.may_route(client, s.id())),
            Some(server) => {
                let s = &self.servers[usize::from(server.0)];
                !conn.queue.is_empty()
                    || s.waiting_lists().contains_key(&client)
                    || s.waiting_watch_lists().contains_key(&client)
            }
        }
    }

    /// Every enabled step, in a fixed order.
    pub fn actions(&self, out: &mut Vec<Action>) {
        if self.budget.writes > 0 {
            for k in 0..self.config.keys {
                let key = Key(k);
                if self.store.get(key).is_some() {
                    out.push(Action::Update(key));
                    out.push(Action::Delete(key));
                } else {
                    out.push(Action::Create(key));
                }
            }
        }
        if self.budget.foreign_writes > 0 {
            out.push(Action::WriteOther);
        }
        if self.budget.lease_revokes > 0 && self.lease_revoke_deletes_several() {
            out.push(Action::RevokeLease);
        }
        if self.budget.compactions > 0 {
            for r in self.store.compacted().0 + 1..=self.store.rev().0 {
                out.push(Action::Compact(Rev(r)));
            }
        }
        for s in &self.servers {
            if s.can_ingest(&self.store) {
                out.push(Action::Ingest(s.id()));
            }
            // E7: only for the servers that ask etcd for progress notifications, and for a cache a
            // streaming list waits on (A12: its progress requester asks etcd whatever E7's setting).
            let asks = self.config.progress_notify.has(s.id()) || s.waits_for_freshness();
            if asks && s.can_progress(&self.store) {
                out.push(Action::ProgressNotify(s.id()));
            }
            if s.initializing() {
                out.push(Action::CacheReady(s.id()));
            }
        }
        for (client, conn) in self.network.conns() {
            match conn.server {
                None => {
                    out.extend(
                        self.servers
                            .iter()
                            .filter(|s| self.network.may_route(client, s.id()))
                            .map(|s| Action::Route(client, s.id())),
                    );
                    for (kind, error) in FaultKind::refusals(&conn.request) {
                        if self.fault_ok(kind) {
                            out.push(Action::Fault(Fault::Refuse(client, error)));
                        }
                    }
                }
                Some(_) if conn.dead => {
                    // A9: nothing arrives; the client's transport notices within its bound, if it has
                    // one, unless a timer of the client's own fires first.
                    if self.client(client).dead_connection_noticed_next().is_some() {
                        out.push(Action::SilenceNoticed(client));
                    }
                }
                Some(server) => {
                    let s = &self.servers[usize::from(server.0)];
                    if !conn.queue.is_empty() {
                        out.push(Action::Deliver(client));
                    }
                    if s.waiting_lists().contains_key(&client) {
                        out.push(Action::ListWaitExpired(client));
                    }
                    if s.waiting_watch_lists().contains_key(&client) && self.fault_ok(FaultKind::SlowProgress)
                    {
                        out.push(Action::Fault(Fault::FreshnessTimeout(client)));
                    }
                    // A line of an open watch to garble: the next event that arrives on it.
                    let open_watch =
                        s.watches().contains_key(&client) || s.waiting_watch_lists().contains_key(&client);
                    if open_watch && !conn.garble_next && self.fault_ok(FaultKind::GarbledLine) {
                        out.push(Action::Fault(Fault::Garble(client)));
                    }
                    if s.can_bookmark(client) {
                        out.push(Action::Bookmark(client));
                    }
                    if s.watches().contains_key(&client) {
                        if self.fault_ok(FaultKind::ServerTimeout) {
                            out.push(Action::Fault(Fault::ServerTimeout(client)));
                        }
                        if self.fault_ok(FaultKind::InternalError) {
                            out.push(Action::Fault(Fault::WatchError(client, ApiError::InternalError)));
                        }
                        // A4: an error after the stream opened arrives as an ERROR event, 429 too (C5: the
                        // reflector backs off and re-watches the same RV).
                        if self.fault_ok(FaultKind::TooManyRequests) {
                            out.push(Action::Fault(Fault::WatchError(client, ApiError::TooManyRequests)));
                        }
                    }
                    if self.fault_ok(FaultKind::Disconnect) {
                        out.push(Action::Fault(Fault::Disconnect(client)));
                    }
                    if self.fault_ok(FaultKind::SilentDeath) {
                        out.push(Action::Fault(Fault::SilentDeath(client)));
                    }
                }
            }
        }
        // A14, simplified: a reinitialising cache lists a small world in far less than any client timer
        // (800 ms at the least, Retry-After 1 s), so no client timer fires before it is ready: a client
        // meets its 429 once per reinitialisation, not a backoff ladder of them.
        let reinitialising = self.servers.iter().any(ApiServer::initializing);
        for client in self.client_ids().filter(|_| !reinitialising) {
            let c = self.client(client);
            // A9: a health check that finds a dead connection before the next timer comes first.
            let dead = self.network.conn(client).is_some_and(|conn| conn.dead);
            let noticed_first = dead
                && c.dead_connection_noticed_after()
                    .zip(c.next_timer())
                    .is_some_and(|(bound, (_, after))| bound < after);
            // Fairness: a client-side request timeout (seconds to minutes) does not cut a request that
            // is still on its way (milliseconds): not yet at a server that could take it, answered but
            // not read, or in a server's bounded wait (A2, A12). A schedule that fires it there every
            // time keeps a client from ever being answered by a healthy server. It fires on an open
            // watch, on a dead connection (A9) and on a request no server can take.
            let watch_timeout = c.next_timer().is_some_and(|(t, _)| t == Timer::WatchTimeout);
            let cuts_in_flight = watch_timeout && self.in_flight(client);
            // Fairness: a held consumer (a handler's backlog, milliseconds to seconds) goes on before a
            // watch lasts its minutes; a backoff may still run out while it is held.
            let outlasts_hold = c.consumer_held() && watch_timeout;
            if c.has_timer() && !noticed_first && !cuts_in_flight && !outlasts_hold {
                out.push(Action::FireTimer(client));
            }
            if c.can_move_consumer() && c.consumer_held() {
                out.push(Action::ReleaseConsumer(client));
            } else if c.can_move_consumer() && self.fault_ok(FaultKind::SlowConsumer) {
                out.push(Action::Fault(Fault::HoldConsumer(client)));
            }
        }
        for s in &self.servers {
            if self.fault_ok(FaultKind::CacheEviction) && s.cache().window().next().is_some() {
                out.push(Action::Fault(Fault::EvictCache(s.id())));
            }
            if self.fault_ok(FaultKind::CacheRelist) {
                out.push(Action::Fault(Fault::RelistCache(s.id())));
            }
            if self.fault_ok(FaultKind::ServerRestart) {
                out.push(Action::Fault(Fault::RestartServer(s.id())));
            }
        }
        if let Some(m) = &self.manager {
            for id in request_ids(m) {
                if m.can_step(id) {
                    out.push(Action::ManagerStep(id));
                }
            }
            if m.can_pass_time() {
                out.push(Action::ManagerTime);
            }
            for cluster in cluster_ids(m) {
                if m.can_sync(cluster) {
                    out.push(Action::ClusterSync(cluster));
                }
                if m.is_paused(cluster) {
                    out.push(Action::ResumeCluster(cluster));
                } else if self.fault_ok(FaultKind::PauseCluster) {
                    out.push(Action::Fault(Fault::PauseCluster(cluster)));
                }
            }
        }
    }

    /// Whether a step is enabled now.
    pub fn enabled(&self, action: Action) -> bool {
        if action == Action::Heal {
            return true;
        }
        let mut all = Vec::new();
        self.actions(&mut all);
        all.contains(&action)
    }

    /// Take a step after checking that it is enabled.
    pub fn try_apply(&mut self, action: Action) -> Result<Vec<Observed>, NotEnabled> {
        if !self.enabled(action) {
            return Err(NotEnabled(action));
        }
        Ok(self.apply(action))
    }

    /// Take one step. A step that is not enabled changes nothing of consequence; use
    /// [`Self::try_apply`] where the action comes from outside.
    pub fn apply(&mut self, action: Action) -> Vec<Observed> {
        // Room for what most steps observe, so that a checker's every step does not grow it push by push.
        let mut seen = Vec::with_capacity(4);
        match action {
            Action::Create(key) | Action::Update(key) => {
                self.budget.writes = self.budget.writes.saturating_sub(1);
                let kv = self.store.put(Prefix::Watched, key);
                seen.push(Observed::Wrote { rev: kv.mod_rev, key, deleted: false });
            }
            Action::Delete(key) => {
                self.budget.writes = self.budget.writes.saturating_sub(1);
                if let Ok(rev) = self.store.delete(Prefix::Watched, key) {
                    seen.push(Observed::Wrote { rev, key, deleted: true });
                }
            }
            Action::RevokeLease => {
                self.budget.lease_revokes = self.budget.lease_revokes.saturating_sub(1);
                let keys: Vec<Key> = (0..self.config.keys).map(Key).collect();
                if let Ok((rev, deleted)) = self.store.delete_all(Prefix::Watched, &keys) {
                    seen.extend(deleted.into_iter().map(|key| Observed::Wrote { rev, key, deleted: true }));
                }
            }
            Action::WriteOther => {
                self.budget.foreign_writes = self.budget.foreign_writes.saturating_sub(1);
                let kv = self.store.put(Prefix::Other, Key(0));
                seen.push(Observed::WroteOther { rev: kv.mod_rev });
            }
            Action::Compact(rev) => {
                self.budget.compactions = self.budget.compactions.saturating_sub(1);
                if self.store.compact(rev).is_ok() {
                    seen.push(Observed::Compacted { rev });
                }
            }
            Action::Ingest(s) => {
                let (outcomes, out) = self.servers[usize::from(s.0)].ingest(&mut self.store);
                seen.extend(outcomes.into_iter().map(|outcome| Observed::Ingested { server: s, outcome }));
                self.route(out);
            }
            Action::ProgressNotify(s) => {
                let out = self.servers[usize::from(s.0)].progress_notify(&self.store);
                self.route(out);
            }
            Action::CacheReady(s) => {
                let out = self.servers[usize::from(s.0)].cache_ready();
                self.route(out);
            }
            Action::Route(client, s) => {
                if let Some(request) = self.network.route(client, s) {
                    seen.push(Observed::Routed { client, server: s });
                    let server = &mut self.servers[usize::from(s.0)];
                    let out = server.serve(client, request, &self.store);
                    self.route(out);
                    let server = &self.servers[usize::from(s.0)];
                    let taken = server.watches().contains_key(&client)
                        || server.waiting_watch_lists().contains_key(&client);
                    if !request.is_list() && taken {
                        self.clients[usize::from(client.0)].handle(Input::Opened);
                        self.drain(client, &mut seen);
                    }
                }
            }
            Action::ListWaitExpired(client) => {
                if let Some(s) = self.server_of(client) {
                    seen.push(Observed::WaitEnded { client });
                    let out = self.servers[usize::from(s.0)].list_wait_expired(client);
                    self.route(out);
                }
            }
            Action::Deliver(client) => {
                let armed = self.network.conn(client).is_some_and(|c| c.garble_next);
                match self.network.deliver(client).map(|m| m.garbled(armed)) {
                    Some(Ok(event)) => {
                        self.network.set_garble_next(client, false);
                        seen.push(Observed::Garbled { client, event });
                        self.clients[usize::from(client.0)].handle(Input::Garbled);
                        self.drain(client, &mut seen);
                    }
                    Some(Err(message)) => self.receive(client, message, &mut seen),
                    None => {}
                }
            }
            Action::Bookmark(client) => {
                if let Some(s) = self.server_of(client) {
                    let out = self.servers[usize::from(s.0)].bookmark(client);
                    self.route(out);
                }
            }
            Action::FireTimer(client) => {
                let c = &mut self.clients[usize::from(client.0)];
                if let Some((timer, after_ms)) = c.next_timer() {
                    seen.push(Observed::TimerFired { client, timer, after_ms });
                    c.handle(Input::Timer(timer));
                    self.drain(client, &mut seen);
                }
            }
            Action::SilenceNoticed(client) => {
                if let Some(after_ms) = self.client(client).dead_connection_noticed_after() {
                    seen.push(Observed::SilenceNoticed { client, after_ms });
                    self.clients[usize::from(client.0)].elapse(after_ms);
                    self.break_conn(client, &mut seen);
                }
            }
            Action::Fault(fault) => {
                self.budget.faults = self.budget.faults.saturating_sub(1);
                self.fault(fault, &mut seen);
            }
            Action::ManagerStep(id) => self.manager_step(id, &mut seen),
            Action::ManagerTime => self.manager_time(&mut seen),
            Action::ClusterSync(cluster) => {
                if let Some(m) = &mut self.manager {
                    m.sync(cluster);
                }
            }
            Action::ResumeCluster(cluster) => {
                if let Some(m) = &mut self.manager {
                    m.resume(cluster);
                    seen.push(Observed::ClusterReachable { cluster });
                }
            }
            Action::ReleaseConsumer(client) => {
                self.clients[usize::from(client.0)].handle(Input::Release);
                self.drain(client, &mut seen);
            }
            Action::Heal => self.budget.faults = 0,
        }
        seen
    }

    fn manager_step(&mut self, id: RequestId, seen: &mut Vec<Observed>) {
        self.manager_change(id, seen, M::step);
    }

    /// The manager's sync-wait bound of model time passes ([`Manager::pass_time`]): a tracer sees the
    /// time, then each wait that ran out end.
    fn manager_time(&mut self, seen: &mut Vec<Observed>) {
        let Some(m) = &mut self.manager else { return };
        if !m.can_pass_time() {
            return;
        }
        seen.push(Observed::ManagerTime { after_ms: Manager::SYNC_WAIT_MS });
        let before: Vec<(RequestId, RequestTrace)> = request_ids(m).map(|id| (id, m.trace(id))).collect();
        m.pass_time();
        for (id, was) in before {
            Self::report_manager_change(m, id, was, seen);
        }
    }

    /// Change one manager request and say what a lock and wait tracer would see of it: the locks it
    /// took or released, the waits it entered (with their bound) or left, and how it ended.
    fn manager_change(&mut self, id: RequestId, seen: &mut Vec<Observed>, change: fn(&mut M, RequestId)) {
        let Some(m) = &mut self.manager else { return };
        let was = m.trace(id);
        change(m, id);
        Self::report_manager_change(m, id, was, seen);
    }

    fn report_manager_change(m: &M, id: RequestId, was: RequestTrace, seen: &mut Vec<Observed>) {
        let RequestTrace { held, wait, outcome: was_done } = was;
        let RequestTrace { held: now_held, wait: now_wait, outcome } = m.trace(id);
        if held != now_held {
            if let Some(mode) = held {
                seen.push(Observed::LockReleased { request: id, mode });
            }
            if let Some(mode) = now_held {
                seen.push(Observed::LockTaken { request: id, mode });
            }
        }
        if wait != now_wait {
            if wait.is_some() {
                seen.push(Observed::WaitLeft { request: id });
            }
            if let Some((cluster, bound_ms)) = now_wait {
                seen.push(Observed::WaitEntered { request: id, cluster, bound_ms });
            }
        }
        if let (None, Some(outcome)) = (was_done, outcome) {
            seen.push(Observed::ManagerDone {
                request: id,
                cluster: cluster_of(m.cluster_count(), id),
                served: outcome == Outcome::Served,
            });
        }
    }

    fn fault(&mut self, fault: Fault, seen: &mut Vec<Observed>) {
        match fault {
            Fault::Disconnect(client) => self.break_conn(client, seen),
            Fault::ServerTimeout(client) => {
                if let Some(s) = self.server_of(client) {
                    let out = self.servers[usize::from(s.0)].timeout_watch(client);
                    self.route(out);
                }
            }
            Fault::WatchError(client, error) => {
                if let Some(s) = self.server_of(client) {
                    let out = self.servers[usize::from(s.0)].fail_watch(client, error);
                    self.route(out);
                }
            }
            Fault::Refuse(client, error) => {
                let conn = match error {
                    ApiError::ConnectionRefused => self.network.break_conn(client),
                    _ => self.network.close(client),
                };
                if let Some(conn) = conn {
                    self.receive(client, Message::refused(&conn.request, error), seen);
                }
            }
            Fault::EvictCache(s) => {
                self.servers[usize::from(s.0)].evict();
            }
            Fault::RelistCache(s) => {
                let out = self.servers[usize::from(s.0)].relist_cache(&mut self.store);
                self.route(out);
            }
            Fault::RestartServer(s) => {
                self.servers[usize::from(s.0)].restart(&mut self.store);
                let cut: Vec<ClientId> =
                    self.network.conns().filter(|(_, c)| c.server == Some(s)).map(|(c, _)| c).collect();
                for client in cut {
                    self.break_conn(client, seen);
                }
                self.network.detach_server(s);
            }
            Fault::SilentDeath(client) => {
                // The server's side is gone (its write fails, or its timeout ends it); the client hears
                // nothing of it.
                if let Some(s) = self.server_of(client) {
                    self.servers[usize::from(s.0)].forget(client);
                }
                self.network.kill(client);
            }
            Fault::Garble(client) => self.network.set_garble_next(client, true),
            Fault::HoldConsumer(client) => {
                self.clients[usize::from(client.0)].handle(Input::Hold);
                self.drain(client, seen);
            }
            Fault::FreshnessTimeout(client) => {
                if let Some(s) = self.server_of(client) {
                    let after_ms = ApiServer::LIST_FRESHNESS_WAIT_MS;
                    seen.push(Observed::WaitedInVain { client, after_ms });
                    seen.push(Observed::WaitEnded { client });
                    self.clients[usize::from(client.0)].elapse(after_ms);
                    let out = self.servers[usize::from(s.0)].watch_list_wait_expired(client);
                    self.route(out);
                }
            }
            Fault::PauseCluster(cluster) => {
                if let Some(m) = &mut self.manager {
                    m.pause(cluster);
                    seen.push(Observed::ClusterUnreachable { cluster });
                }
            }
        }
    }

    /// A client's connection breaks: the server forgets it, the client sees the breakage.
    fn break_conn(&mut self, client: ClientId, seen: &mut Vec<Observed>) {
        let Some(conn) = self.network.break_conn(client) else { return };
        if let Some(s) = conn.server {
            self.servers[usize::from(s.0)].forget(client);
        }
        seen.push(Observed::Broken { client });
        self.clients[usize::from(client.0)].handle(Input::Broken);
        self.drain(client, seen);
    }

    /// Hand a message to a client.
    fn receive(&mut self, client: ClientId, message: Message, seen: &mut Vec<Observed>) {
        seen.push(Observed::Received { client, message: message.clone() });
        self.clients[usize::from(client.0)].handle(Input::Message(message));
        self.drain(client, seen);
    }

    /// Carry out everything a client asked for.
    fn drain(&mut self, client: ClientId, seen: &mut Vec<Observed>) {
        let i = usize::from(client.0);
        while let Some(effect) = self.clients[i].poll_effect() {
            match effect {
                Effect::Send(request) => {
                    if let Some(conn) = self.network.close(client) {
                        // A connection left open (C5): judged, then dropped, so that nothing more
                        // of it reaches the client's next request.
                        if let Some(s) = conn.server {
                            self.servers[usize::from(s.0)].forget(client);
                        }
                        seen.push(Observed::LeftOpen { client });
                    }
                    seen.push(Observed::Sent { client, request });
                    self.network.open(client, request);
                }
                Effect::Cancel => {
                    if let Some(conn) = self.network.close(client) {
                        if let Some(s) = conn.server {
                            self.servers[usize::from(s.0)].forget(client);
                        }
                        seen.push(Observed::Cancelled { client });
                    }
                }
                Effect::Notify(notification) => {
                    seen.push(Observed::Notified { client, handler: 0, notification })
                }
                Effect::NotifyAnother { handler, notification } => {
                    seen.push(Observed::Notified { client, handler, notification })
                }
                Effect::Tell => seen.push(Observed::Told { client }),
            }
        }
    }

    /// Put what servers sent on the connections.
    fn route(&mut self, out: Outbox) {
        for (client, message) in out {
            self.network.push(client, message);
        }
    }
}
