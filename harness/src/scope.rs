//! The named scopes of a check: how big a world the checker explores.

use listwatch_model::{Config, FaultKind, FaultKinds, ManagerConfig};

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

/// The scope a catalogue flaw needs to show: the manager for `sync-under-lock`, two servers and a
/// write to another resource for the HA flaws.
pub fn config_for(scope: Scope, flaws: listwatch_model::Flaws) -> Config {
    use listwatch_model::Flaw;
    let mut config = scope.config().with_flaws(flaws);
    if flaws.has(Flaw::SyncUnderLock) {
        config.manager = Some(ManagerConfig { clusters: 2, requests: 2 });
        config.fault_kinds = FaultKinds::NONE.with(FaultKind::PauseCluster);
        config.reflectors = 0;
    }
    if flaws.has(Flaw::RelistFromStaleCache) || flaws.has(Flaw::RetryTooLargeRv) {
        config.servers = config.servers.max(2);
        config.foreign_writes = config.foreign_writes.max(1);
    }
    config
}

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
    if let Some(m) = config.manager {
        line.push_str(&format!(", manager {} clusters / {} requests", m.clusters, m.requests));
    }
    line
}
