//! The named scopes of a check: how big a world the checker explores.

use listwatch_model::{
    Config, FaultKind, FaultKinds, ManagerConfig, ProgressNotify, ServerId, TombstonePolicy,
};

/// A named scope.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    Small,
    Default,
    Large,
}

impl Scope {
    pub const ALL: [Scope; 3] = [Scope::Small, Scope::Default, Scope::Large];

    pub fn name(self) -> &'static str {
        match self {
            Scope::Small => "small",
            Scope::Default => "default",
            Scope::Large => "large",
        }
    }

    pub fn parse(name: &str) -> Option<Scope> {
        Scope::ALL.into_iter().find(|s| s.name() == name)
    }

    /// The configuration of this scope, with no flaws.
    pub fn config(self) -> Config {
        let base = Config::default();
        match self {
            Scope::Small => Config { keys: 1, writes: 2, faults: 1, compactions: 1, ..base },
            Scope::Default => base,
            Scope::Large => Config { keys: 2, writes: 4, faults: 2, compactions: 1, servers: 2, ..base },
        }
    }
}

/// One independently checked part of a scope.
///
/// The client manager shares no state with the list/watch path (its clusters are abstract), so the
/// product of the two would only multiply states: each is checked on its own, with the same flaws.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct World {
    pub name: &'static str,
    pub config: Config,
}

/// The worlds of a scope, with `flaws` on. A flaw that needs more than the scope offers to show at all
/// gets it: two API servers and a write to another resource for the HA flaws.
pub fn worlds(scope: Scope, flaws: listwatch_model::Flaws) -> Vec<World> {
    use listwatch_model::Flaw;
    let mut list_watch = scope.config().with_flaws(flaws);
    if flaws.has(Flaw::RelistFromStaleCache) || flaws.has(Flaw::RetryTooLargeRv) {
        list_watch.servers = list_watch.servers.max(2);
    }
    if flaws.has(Flaw::RetryTooLargeRv) {
        // The story of kubernetes#107133: one object that stops changing, a write to another resource,
        // and two faults to move the reflector to the server whose cache is behind its RV. Nothing more,
        // so that the checker can follow the retry loop far enough.
        list_watch.keys = 1;
        list_watch.writes = 1;
        list_watch.compactions = 0;
        list_watch.foreign_writes = 1;
        list_watch.faults = 2;
    }
    let manager = Config {
        keys: 0,
        writes: 0,
        compactions: 0,
        reflectors: 0,
        faults: 1,
        fault_kinds: FaultKinds::NONE.with(FaultKind::PauseCluster),
        // Three requests over two clusters: two of them race to create the same informer.
        manager: Some(ManagerConfig { clusters: 2, requests: 3 }),
        flaws,
        ..Config::default()
    };
    // E7 server by server: a control plane mid-upgrade (KEP-1904) where apiserver-1's cache follows
    // etcd's revision through progress notifications and apiserver-0's stays at its resource's last
    // write. Kept tiny whatever the scope (one write, one write elsewhere, one fault); the simulator
    // goes wider.
    let mid_upgrade = Config {
        keys: 1,
        writes: 1,
        foreign_writes: 1,
        compactions: 0,
        faults: 1,
        servers: 2,
        progress_notify: ProgressNotify::only([ServerId(1)]).unwrap_or(ProgressNotify::NONE),
        manager: None,
        ..list_watch
    };
    // E5/E6 with an etcd watch that falls behind (a buffer of one event): the watch cache's etcd watch
    // stays unsynced, catches up from history, and is cancelled when a compaction passes it. etcd
    // >= 3.5.16 keeps the tombstone at the compaction revision (E4); with 3.4's policy a watcher that
    // resumes exactly there loses that delete (etcd#18274), an etcd bug no client can repair, which
    // `harness/tests/checker.rs` shows the checker finding.
    // A write to another resource among them: the unsynced watcher skips it when it catches up.
    let slow_etcd = Config {
        keys: 1,
        writes: 2,
        foreign_writes: 1,
        etcd_watch_buffer: Some(1),
        tombstones: TombstonePolicy::KeepAtCompactRev,
        manager: None,
        ..Config::default().with_flaws(flaws)
    };
    // Two reflectors on one API server: one cache dispatching to several watches, each client judged
    // on its own. One write keeps it small. These side worlds keep their shape whatever the scope.
    let two_reflectors =
        Config { keys: 1, writes: 1, reflectors: 2, manager: None, ..Config::default().with_flaws(flaws) };
    // A13: a relist in pages of one item, interleaved with writes and a compaction, so that a continue
    // can find its first page's RV compacted (410) and the pager falls back to one whole LIST. A 500
    // on the watch is the one fault: it makes the reflector relist (the first LIST, `rv="0"`, is
    // served whole from the cache).
    let paginated = Config {
        keys: 2,
        writes: 3,
        compactions: 1,
        faults: 1,
        fault_kinds: FaultKinds::NONE.with(FaultKind::InternalError),
        manager: None,
        reflector: listwatch_model::ReflectorConfig { page_size: Some(1), ..list_watch.reflector },
        ..Config::default().with_flaws(flaws)
    };
    // E8: two objects attached to one lease, whose revocation deletes both at one revision, and one
    // fault that can end the stream between the two DELETE events (kubernetes#110210). The faults that
    // end a watch and make the reflector resume: a break, the server's timeout, a silent death.
    let lease = Config {
        keys: 2,
        writes: 2,
        compactions: 0,
        lease_revokes: 1,
        faults: 1,
        fault_kinds: FaultKinds::NONE
            .with(FaultKind::Disconnect)
            .with(FaultKind::ServerTimeout)
            .with(FaultKind::SilentDeath),
        manager: None,
        ..Config::default().with_flaws(flaws)
    };
    // C7 with a consumer that lags (PR #115620): the reflector's consumer is held while an ADD waits in
    // its queue; a 500 on the watch makes the reflector relist, and the object's delete lands before the
    // relist, so the new list lacks it. One object, its create and its delete, the hold and the 500.
    let slow_consumer = Config {
        keys: 1,
        writes: 2,
        compactions: 0,
        faults: 2,
        fault_kinds: FaultKinds::NONE.with(FaultKind::SlowConsumer).with(FaultKind::InternalError),
        manager: None,
        ..Config::default().with_flaws(flaws)
    };
    // C1 while a server keeps failing: two failures in a row (a 500 or a refused connection on a LIST
    // or a WATCH) with nothing succeeding between them, so that the second backoff must be twice the
    // first (kubernetes#87794: a reflector that restarts every second). One write keeps it small.
    let failing_server = Config {
        keys: 1,
        writes: 1,
        compactions: 0,
        faults: 2,
        // A15: and every status a server or a proxy in front of it answers with (C11 says how the
        // reflector meets each).
        fault_kinds: FaultKinds::statuses().with(FaultKind::InternalError).with(FaultKind::ConnectionRefused),
        manager: None,
        ..Config::default().with_flaws(flaws)
    };
    // C10: the list-watch world's reflector in watch-list mode: its first state comes from a streaming
    // list (A12) and so does every relist, with the same faults (and A12's slow progress, which makes
    // a streaming list's freshness wait run out). One write fewer keeps it about as big.
    let watch_list = Config {
        writes: list_watch.writes.min(2),
        reflector: listwatch_model::ReflectorConfig {
            mode: listwatch_model::ListMode::WatchList,
            ..list_watch.reflector
        },
        ..list_watch
    };
    vec![
        World { name: "list-watch", config: list_watch },
        World { name: "watch-list", config: watch_list },
        World { name: "client-manager", config: manager },
        World { name: "ha-mid-upgrade", config: mid_upgrade },
        World { name: "slow-etcd-watcher", config: slow_etcd },
        World { name: "two-reflectors", config: two_reflectors },
        World { name: "paginated-relist", config: paginated },
        World { name: "lease-revoke", config: lease },
        World { name: "slow-consumer", config: slow_consumer },
        World { name: "failing-server", config: failing_server },
    ]
}

/// The world of a scope named `name` (one of [`WORLD_NAMES`]), with `flaws` on.
pub fn world(scope: Scope, flaws: listwatch_model::Flaws, name: &str) -> Option<World> {
    worlds(scope, flaws).into_iter().find(|w| w.name == name)
}

/// The world where a flaw's story lives, which `bugs` checks first: the client manager for its flaw,
/// the pager's world for the pager's, the lease's for the two flaws of a revision read in part (E8),
/// watch-list mode for the streaming-list flaws, the failing server's for kubernetes#87794 and #57074,
/// the control plane mid-upgrade's (a relist waiting at a lagging server, A2) for an unanswered wait,
/// and the list-watch world for the rest.
pub fn home_world(flaw: listwatch_model::Flaw) -> &'static str {
    use listwatch_model::{Component, Flaw};
    match flaw {
        _ if flaw.component() == Component::Manager => "client-manager",
        Flaw::ContinueWithRv => "paginated-relist",
        Flaw::ResumeMidRevision | Flaw::PartialRevisionServed => "lease-revoke",
        Flaw::ReplaceMissesQueued => "slow-consumer",
        Flaw::FixedRetryPeriod | Flaw::UntoldFailures => "failing-server",
        Flaw::RewatchInitialEvents | Flaw::PartialInitialBuffer | Flaw::ConsistentReadLags => "watch-list",
        Flaw::WaitEndsUnanswered => "ha-mid-upgrade",
        _ => "list-watch",
    }
}

/// The names of a scope's worlds, in order.
pub const WORLD_NAMES: [&str; 10] = [
    "list-watch",
    "watch-list",
    "client-manager",
    "ha-mid-upgrade",
    "slow-etcd-watcher",
    "two-reflectors",
    "paginated-relist",
    "lease-revoke",
    "slow-consumer",
    "failing-server",
];

/// One line describing a configuration.
pub fn describe(config: &Config) -> String {
    let mut line = format!(
        "keys {}, writes {}, foreign writes {}, compactions {}, faults {}, servers {}, reflectors {}, cache window {}",
        config.keys,
        config.writes,
        config.foreign_writes,
        config.compactions,
        config.faults,
        config.servers,
        config.reflectors,
        config.cache_window
    );
    if config.lease_revokes > 0 {
        line.push_str(&format!(", lease revokes {}", config.lease_revokes));
    }
    if config.reflector.mode != listwatch_model::ListMode::ListWatch {
        line.push_str(&format!(", {} reflectors", config.reflector.mode.name()));
    }
    if let Some(limit) = config.reflector.page_size {
        line.push_str(&format!(", LIST pages of {limit}"));
    }
    if !config.resilient_cache_init {
        line.push_str(", caches serve at once after a relist (no A14 429s)");
    }
    if let Some(m) = config.manager {
        line.push_str(&format!(", manager {} clusters / {} requests", m.clusters, m.requests));
    }
    line.push_str(&format!(", progress notify {}", describe_progress_notify(config)));
    let policy = match config.tombstones {
        TombstonePolicy::DropAtCompaction => "etcd 3.4 tombstones",
        TombstonePolicy::KeepAtCompactRev => "etcd 3.5.16+ tombstones",
    };
    match config.etcd_watch_buffer {
        Some(buffer) => line.push_str(&format!(", etcd watch buffer {buffer} ({policy})")),
        // The default worlds' policy goes unsaid, as it always has.
        None if config.tombstones != TombstonePolicy::DropAtCompaction => {
            line.push_str(&format!(", {policy}"))
        }
        None => {}
    }
    if !config.etcd_progress_requests {
        line.push_str(", etcd answers no progress requests (A12: streaming lists refused)");
    }
    // The newest release's rules go unsaid, as the model's server always followed them.
    if config.apiserver != listwatch_model::ApiServerRelease::NEWEST {
        line.push_str(&format!(", API server {}", config.apiserver));
        if !config.apiserver.watch_list() {
            line.push_str(" (A12: streaming lists refused, 422)");
        }
    }
    line
}

/// Which servers get etcd progress notifications: `all`, `none`, or their names.
pub fn describe_progress_notify(config: &Config) -> String {
    match config.progress_notify.uniform(config.servers) {
        Some(true) => "all".into(),
        Some(false) => "none".into(),
        None => {
            let names: Vec<String> =
                config.progress_notify.servers(config.servers).map(|s| s.to_string()).collect();
            names.join(" ")
        }
    }
}
