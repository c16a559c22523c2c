//! What one seed draws before its run: the world (scope, servers, settings) and the fault mix (which
//! fault kinds are on, and how often each kind of step is chosen). Swarm testing: every seed explores
//! a differently shaped corner instead of all seeds spreading evenly over everything.

use std::fmt::Write;

use listwatch_model::{
    Action, Client, Config, Fault, FaultKind, FaultKinds, Flaws, ListMode, ManagerConfig, ModelClient,
    ProgressNotify, ReflectorConfig, ServerId, System, TombstonePolicy,
};

use listwatch_model::manager::{ClusterManager, Manager};

use super::rng::Rng;

/// The kinds of step a seed weighs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum StepKind {
    Write,
    WriteOther,
    Compact,
    Ingest,
    ProgressNotify,
    Route,
    ListWaitExpired,
    Deliver,
    Bookmark,
    FireTimer,
    Manager,
    Fault(FaultKind),
}

impl StepKind {
    pub fn of(action: &Action) -> StepKind {
        match action {
            // E8: a lease revoked is a write to the watched resource, of several objects at once.
            Action::Create(_) | Action::Update(_) | Action::Delete(_) | Action::RevokeLease => {
                StepKind::Write
            }
            Action::WriteOther => StepKind::WriteOther,
            Action::Compact(_) => StepKind::Compact,
            // A14: a cache that finishes its list is server work, as ingesting is.
            Action::Ingest(_) | Action::CacheReady(_) => StepKind::Ingest,
            Action::ProgressNotify(_) => StepKind::ProgressNotify,
            Action::Route(..) => StepKind::Route,
            Action::ListWaitExpired(_) => StepKind::ListWaitExpired,
            Action::Deliver(_) => StepKind::Deliver,
            // A held consumer goes on as often as it is held: a seed that holds it rarely keeps it
            // held across many steps.
            Action::ReleaseConsumer(_) => StepKind::Fault(FaultKind::SlowConsumer),
            Action::Bookmark(_) => StepKind::Bookmark,
            // A9: the transport noticing a dead connection is time passing, as a timer is.
            Action::FireTimer(_) | Action::SilenceNoticed(_) => StepKind::FireTimer,
            Action::ManagerStep(_)
            | Action::ManagerTime
            | Action::ClusterSync(_)
            | Action::ResumeCluster(_)
            | Action::Heal => StepKind::Manager,
            Action::Fault(f) => StepKind::Fault(f.kind()),
        }
    }

    fn index(self) -> usize {
        match self {
            StepKind::Fault(k) => 11 + k as usize,
            other => NON_FAULT.iter().position(|s| *s == other).unwrap_or(0),
        }
    }
}

const NON_FAULT: [StepKind; 11] = [
    StepKind::Write,
    StepKind::WriteOther,
    StepKind::Compact,
    StepKind::Ingest,
    StepKind::ProgressNotify,
    StepKind::Route,
    StepKind::ListWaitExpired,
    StepKind::Deliver,
    StepKind::Bookmark,
    StepKind::FireTimer,
    StepKind::Manager,
];

/// Everything one seed drew.
#[derive(Clone, Debug)]
pub struct Draw {
    pub seed: u64,
    pub config: Config,
    /// Weight of each step kind (index: non-fault kinds, then fault kinds); 0 for fault kinds off.
    weights: [u32; NON_FAULT.len() + FaultKind::ALL.len()],
    /// Per API server: whether server faults (eviction, cache relist, restart) may hit it. Swarm over
    /// targets: a server that never relists keeps its cache's RV where the watched writes left it.
    fault_targets: [bool; 8],
    /// Writes to other resources wait until the watched writes are done: the watched resource then
    /// stops changing while the revision moves on (the setting of kubernetes#91073).
    pub late_foreign_writes: bool,
    /// The reflectors' first LIST reaches a server only once every write is done: a controller that
    /// starts against a cluster with a history, so its first RV may come from a cache that has moved
    /// past the last write to the watched resource.
    pub late_start: bool,
    /// Faults wait until every write is done and nothing is in flight: something breaks on a cluster
    /// that has been quiet for a while, when the caches of the servers that get progress notifications
    /// have moved past those that do not.
    pub late_faults: bool,
}

/// What the weights depend on in one state, worked out once per step.
#[derive(Debug)]
pub struct Now<'a, C: Client = ModelClient, M = Manager> {
    sys: &'a System<C, M>,
    watched_writes_left: bool,
    writes_left: bool,
    /// Faults wait (only with `late_faults`).
    faults_wait: bool,
    /// E8: a lease is revoked only while every reflector has synced and holds a connection, so that
    /// its DELETE events reach a stream a fault can end between them; the faults wait for it.
    revoke_waits: bool,
    revoke_left: bool,
}

/// What a campaign takes out of every seed's world, to isolate one trigger: a client release against
/// the bug it is known for, on the servers of its time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Narrowing {
    /// The fault kinds a seed may draw.
    pub fault_kinds: FaultKinds,
    /// Every API server's watch cache serves at once after a relist or restart, as before k8s 1.31
    /// (A14: no 429s while it reinitialises).
    pub no_cache_reinit_429: bool,
    /// Every seed's etcd is this release (`--etcd`): its tombstone policy (E4) and whether it answers
    /// progress requests (E7, A12), in place of the drawn policy. `None`: as drawn.
    pub etcd: Option<listwatch_model::EtcdRelease>,
    /// Every seed's API servers follow this release's rules (`--apiserver`): streaming lists (A12), an
    /// Exact LIST ahead of etcd (A2) and the cache's reinitialisation (A14). `None`: the newest's.
    pub apiserver: Option<listwatch_model::ApiServerRelease>,
}

impl Narrowing {
    /// Nothing taken out: every seed's world as drawn.
    pub fn none() -> Narrowing {
        Narrowing { fault_kinds: FaultKinds::all(), no_cache_reinit_429: false, etcd: None, apiserver: None }
    }
}

impl Draw {
    /// What the weights of this seed depend on in `sys`.
    pub fn now<'a, C: Client, M: ClusterManager>(&self, sys: &'a System<C, M>) -> Now<'a, C, M> {
        let b = sys.budget();
        let writes_left = b.writes > 0 || b.foreign_writes > 0;
        Now {
            sys,
            watched_writes_left: b.writes > 0,
            writes_left,
            faults_wait: self.late_faults && b.faults > 0 && (writes_left || !sys.settled()),
            revoke_left: b.lease_revokes > 0,
            revoke_waits: b.lease_revokes > 0
                && sys.client_ids().any(|c| !(sys.view(c).synced && sys.view(c).connected)),
        }
    }

    /// Narrow the seed's world as a campaign asks: faults only of the kinds it allows (the others off,
    /// weight 0; a seed left with no kind injects none), and with `no_cache_reinit_429` servers from
    /// before k8s 1.31 (A14). The rest of the draw is the seed's, so a seed keeps its world.
    pub fn restrict(&mut self, narrowing: Narrowing) {
        if narrowing.no_cache_reinit_429 {
            self.config.resilient_cache_init = false;
        }
        if let Some(release) = narrowing.etcd {
            self.config = self.config.over_etcd(release);
        }
        if let Some(release) = narrowing.apiserver {
            self.config = self.config.over_apiserver(release);
        }
        let allowed = narrowing.fault_kinds;
        for kind in FaultKind::ALL.into_iter().filter(|k| !allowed.has(*k)) {
            self.config.fault_kinds = self.config.fault_kinds.without(kind);
            self.weights[StepKind::Fault(kind).index()] = 0;
        }
        if self.config.fault_kinds == FaultKinds::NONE {
            self.config.faults = 0;
        }
    }

    /// For a client manager under test: every seed's world has one, of two or three clusters (one can
    /// then be unreachable while another serves), and nothing else (no reflectors, and no writes,
    /// compactions or revokes, which only reflectors would see); a cluster may become unreachable,
    /// once or twice. The manager's clusters are abstract (C8): its clusters' servers are the
    /// client's own.
    pub fn manager_only(&mut self) {
        let drawn = self.config.manager.unwrap_or(ManagerConfig { clusters: 2, requests: 3 });
        let manager = ManagerConfig { clusters: drawn.clusters.clamp(2, 3), requests: drawn.requests.max(2) };
        self.config.manager = Some(manager);
        self.config.reflectors = 0;
        self.config.writes = 0;
        self.config.foreign_writes = 0;
        self.config.compactions = 0;
        self.config.lease_revokes = 0;
        let pause = FaultKind::PauseCluster;
        self.config.fault_kinds = FaultKinds::NONE.with(pause);
        self.config.faults = 1 + self.seed as u8 % 2;
        for kind in FaultKind::ALL {
            self.weights[StepKind::Fault(kind).index()] = 0;
        }
        self.weights[StepKind::Fault(pause).index()] = 8;
        self.late_faults = false;
    }

    /// Draw a world and a fault mix from `seed`, with `flaws` on. The generator goes on to pick the steps.
    pub fn new(seed: u64, flaws: Flaws) -> (Draw, Rng) {
        Self::new_with(seed, flaws, false, false)
    }

    /// [`Self::new`]; with `wire`, for a client that reads Kubernetes' real wire, a third of the seeds
    /// also draw a fault of the wire (a watch line that does not decode), from a stream of their own, so
    /// that the model reflector's seeds stay the runs they always were. With `consumer`, for a client
    /// whose consumer can be held, a third of the seeds also draw a slow consumer, from another stream.
    pub fn new_with(seed: u64, flaws: Flaws, wire: bool, consumer: bool) -> (Draw, Rng) {
        let mut rng = Rng::new(seed);
        let manager = rng
            .chance(1, 3)
            .then(|| ManagerConfig { clusters: rng.between(1, 3), requests: rng.between(1, 4) });
        let mut fault_kinds = FaultKinds::NONE;
        let mut weights = [0u32; NON_FAULT.len() + FaultKind::ALL.len()];
        // Fault kinds added since seeds were first published are drawn from a stream of their own, so
        // that a seed that does not draw them is the run it always was.
        let (first, added) = FaultKind::ALL.split_at(9);
        let (added, later) = added.split_at(1);
        let (streaming_kinds, later) = later.split_at(1);
        let (wire_kinds, later) = later.split_at(1);
        let (consumer_kinds, status_kinds) = later.split_at(1);
        let mut extra = Rng::new(seed ^ 0xa9a9_5eed_0000_0001);
        let mut added_kinds = FaultKinds::NONE;
        for &kind in added {
            if extra.chance(1, 3) {
                added_kinds = added_kinds.with(kind);
                weights[StepKind::Fault(kind).index()] = 1 << extra.below(6);
            }
        }
        // A14: half the seeds run caches that answer 429 while they reinitialise (k8s >= 1.31).
        let resilient_cache_init = extra.chance(1, 2);
        // A13: a third of the seeds relist in pages of one or two items.
        let page_size = extra.chance(1, 3).then(|| extra.between(1, 2));
        // E8: a third of the seeds revoke a lease (once or twice) that every object is attached to.
        let lease_revokes = if extra.chance(1, 3) { extra.between(1, 2) } else { 0 };
        // C10: half the seeds run reflectors in watch-list mode, drawn from a stream of their own; a
        // third of those draw A12's slow progress, which only a streaming list waits on.
        let mut streaming = Rng::new(seed ^ 0xc10c_5eed_0000_0002);
        let mode = if streaming.chance(1, 2) { ListMode::WatchList } else { ListMode::ListWatch };
        for &kind in streaming_kinds {
            if mode == ListMode::WatchList && streaming.chance(1, 3) {
                added_kinds = added_kinds.with(kind);
                weights[StepKind::Fault(kind).index()] = 1 << streaming.below(6);
            }
        }
        let mut over_the_wire = Rng::new(seed ^ 0x3a1e_5eed_0000_0003);
        for &kind in wire_kinds.iter().filter(|_| wire) {
            if over_the_wire.chance(1, 3) {
                added_kinds = added_kinds.with(kind);
                weights[StepKind::Fault(kind).index()] = 1 << over_the_wire.below(6);
            }
        }
        let mut slow_consumer = Rng::new(seed ^ 0xc7f1_f05e_ed00_0004);
        for &kind in consumer_kinds.iter().filter(|_| consumer) {
            if slow_consumer.chance(1, 3) {
                added_kinds = added_kinds.with(kind);
                weights[StepKind::Fault(kind).index()] = 1 << slow_consumer.below(6);
            }
        }
        // A15: a third of the seeds meet a server (or a proxy in front of it) that answers requests
        // with statuses: each of the kinds by a coin, from a stream of their own.
        let mut statuses = Rng::new(seed ^ 0x57a7_05e5_0000_0005);
        let drew_statuses = statuses.chance(1, 3);
        for &kind in status_kinds.iter().filter(|_| drew_statuses) {
            if statuses.chance(1, 2) {
                added_kinds = added_kinds.with(kind);
                weights[StepKind::Fault(kind).index()] = 1 << statuses.below(6);
            }
        }
        for &kind in first {
            let possible = kind != FaultKind::PauseCluster || manager.is_some();
            if possible && rng.chance(1, 2) {
                fault_kinds = fault_kinds.with(kind);
                weights[StepKind::Fault(kind).index()] = 1 << rng.below(6);
            }
        }
        for kind in NON_FAULT {
            weights[kind.index()] = 1 << rng.below(6);
        }
        // E4/E5: with etcd < 3.5.16 (etcd#18274) an etcd watch that fell behind and resumes exactly at
        // the compacted revision skips a tombstone there, and the watch cache never learns of the delete.
        // That is an etcd bug no reflector can repair, so a seed that draws a slow etcd watcher runs the
        // fixed etcd. (With watchers that keep up, the two policies cannot be told apart.)
        let etcd_watch_buffer = rng.chance(1, 4).then(|| rng.between(1, 4));
        let tombstones = if etcd_watch_buffer.is_some() || rng.chance(1, 2) {
            TombstonePolicy::KeepAtCompactRev
        } else {
            TombstonePolicy::DropAtCompaction
        };
        let servers = rng.between(1, 3);
        // E7: a coin per server; with several servers, often a control plane mid-upgrade (KEP-1904),
        // where some caches get progress notifications and some do not.
        let progress_notify = ProgressNotify::only((0..servers).filter(|_| rng.chance(1, 2)).map(ServerId))
            .unwrap_or(ProgressNotify::ALL);
        let config = Config {
            keys: rng.between(1, 3),
            writes: rng.between(1, 10),
            foreign_writes: rng.between(0, 5),
            compactions: rng.between(0, 3),
            lease_revokes,
            faults: if fault_kinds == FaultKinds::NONE { 0 } else { rng.between(1, 10) },
            fault_kinds,
            servers,
            reflectors: if manager.is_some() && rng.chance(1, 4) { 0 } else { rng.between(1, 2) },
            cache_window: rng.between(1, 5),
            etcd_watch_buffer,
            tombstones,
            etcd_progress_requests: true,
            progress_notify,
            manager,
            reflector: ReflectorConfig {
                // C3: the driver draws the watch timeout (5-10 minutes upstream).
                watch_timeout_secs: 300 + rng.below(301) as u32,
                bookmarks: rng.chance(3, 4),
                page_size,
                mode,
                ..ReflectorConfig::default()
            },
            resilient_cache_init,
            apiserver: listwatch_model::ApiServerRelease::NEWEST,
            flaws,
        };
        let mut fault_targets = [false; 8];
        for t in fault_targets.iter_mut() {
            *t = rng.chance(1, 2);
        }
        let late_foreign_writes = rng.chance(1, 2);
        let late_start = rng.chance(1, 2);
        let mut late_faults = rng.chance(1, 2);
        let mut config = config;
        // E8: a lease is worth revoking with several objects attached, and with faults that can end a
        // stream between the DELETE events of one revision (kubernetes#110210): these seeds break
        // connections, as often as events are delivered, once the lease is revoked, and inject no
        // other fault (a relist would repair what the revoke's lost DELETE broke).
        if config.lease_revokes > 0 {
            config.keys = config.keys.max(3);
            config.fault_kinds = FaultKinds::NONE.with(FaultKind::Disconnect);
            config.faults = config.faults.max(3);
            let (disconnect, deliver) =
                (StepKind::Fault(FaultKind::Disconnect).index(), StepKind::Deliver.index());
            weights[disconnect] = weights[deliver];
            late_faults = false;
        }
        for kind in added_kinds.iter().filter(|_| config.lease_revokes == 0) {
            config.fault_kinds = config.fault_kinds.with(kind);
        }
        // A wire fault needs a budget of its own where the seed drew no other fault.
        if config.fault_kinds.has(FaultKind::GarbledLine) && config.faults == 0 {
            config.faults = over_the_wire.between(1, 4);
        }
        // So does a status, drawn from its own stream.
        let drew_a_status = status_kinds.iter().any(|k| config.fault_kinds.has(*k));
        if drew_a_status && config.faults == 0 {
            config.faults = statuses.between(1, 4);
        }
        // A slow consumer brings a budget of its own, so that the seed's other faults keep theirs.
        if config.fault_kinds.has(FaultKind::SlowConsumer) {
            config.faults += slow_consumer.between(1, 3);
        }
        (Draw { seed, config, weights, fault_targets, late_foreign_writes, late_start, late_faults }, rng)
    }

    /// How often `action` is picked when enabled in the state `now` describes.
    pub fn weight<C: Client, M: ClusterManager>(&self, action: &Action, now: &Now<C, M>) -> u32 {
        match action {
            Action::Fault(Fault::EvictCache(s) | Fault::RelistCache(s) | Fault::RestartServer(s))
                if !self.fault_targets[usize::from(s.0) % 8] =>
            {
                0
            }
            Action::Fault(_) if now.faults_wait || now.revoke_left => 0,
            Action::WriteOther if self.late_foreign_writes && now.watched_writes_left => 0,
            Action::RevokeLease if now.revoke_waits => 0,
            Action::Route(client, _)
                if self.late_start && now.writes_left && !now.sys.view(*client).synced =>
            {
                0
            }
            _ => self.weights[StepKind::of(action).index()],
        }
    }

    /// One line of what was drawn, for a failure report.
    pub fn describe(&self) -> String {
        let mut s = crate::scope::describe(&self.config);
        let c = &self.config;
        let _ = write!(
            s,
            ", etcd watch buffer {}, tombstones {:?}, watch timeout {} s, bookmarks {}",
            c.etcd_watch_buffer.map_or("unbounded".to_string(), |b| b.to_string()),
            c.tombstones,
            c.reflector.watch_timeout_secs,
            c.reflector.bookmarks
        );
        let mix: Vec<String> = c
            .fault_kinds
            .iter()
            .map(|k| format!("{}×{}", k.name(), self.weights[StepKind::Fault(k).index()]))
            .collect();
        let _ = write!(s, "; fault mix: {}", if mix.is_empty() { "none".into() } else { mix.join(" ") });
        let targets: Vec<String> = (0..c.servers)
            .filter(|s| self.fault_targets[usize::from(*s) % 8])
            .map(|s| listwatch_model::ServerId(s).to_string())
            .collect();
        let _ = write!(
            s,
            "; server faults hit: {}; writes to other resources {}; reflectors start {}; faults {}",
            if targets.is_empty() { "none".into() } else { targets.join(" ") },
            if self.late_foreign_writes { "last" } else { "anytime" },
            if self.late_start { "after the writes" } else { "at once" },
            if self.late_faults { "once the cluster is quiet" } else { "anytime" }
        );
        s
    }
}
