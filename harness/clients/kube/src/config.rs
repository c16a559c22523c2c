//! kube-runtime as users run it: the named configurations `listwatch clients` lists.

use kube::runtime::watcher;

/// How the watcher makes its initial list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InitialList {
    /// `watcher::Config::default()`: a paginated LIST (500 a page) at the most recent RV, then WATCH.
    Paginated,
    /// `.streaming_lists()`: a WATCH with `sendInitialEvents` (A12).
    Streaming,
    /// `.any_semantic()`: a LIST served from the watch cache (`resourceVersion=0`, NotOlderThan).
    AnySemantic,
}

/// Tasks that await readiness by default: several, as controllers start several workers.
pub const WAITERS: usize = 3;

/// One named configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KubeConfig {
    pub name: &'static str,
    pub initial: InitialList,
    /// Whether the stream goes through `WatchStreamExt::default_backoff()`.
    pub backoff: bool,
    pub about: &'static str,
    /// How many tasks await `Store::wait_until_ready()` from before the first sync; the client is ready
    /// once every one has returned.
    pub waiters: usize,
    /// `Config::page_size`, when the world lists in pages (its reflectors' page size); otherwise
    /// kube-runtime's default of 500, which no world's keys fill.
    pub page_size: Option<u32>,
}

impl KubeConfig {
    pub const ALL: [KubeConfig; 6] = [
        KubeConfig {
            name: "kube-runtime",
            initial: InitialList::Paginated,
            backoff: true,
            about: "watcher(api, Config::default()).default_backoff().reflect(writer)",
            waiters: WAITERS,
            page_size: None,
        },
        KubeConfig {
            name: "kube-runtime-no-backoff",
            initial: InitialList::Paginated,
            backoff: false,
            about: "watcher(api, Config::default()).reflect(writer)",
            waiters: WAITERS,
            page_size: None,
        },
        KubeConfig {
            name: "kube-runtime-streaming",
            initial: InitialList::Streaming,
            backoff: true,
            about: "watcher(api, Config::default().streaming_lists()).default_backoff().reflect(writer)",
            waiters: WAITERS,
            page_size: None,
        },
        KubeConfig {
            name: "kube-runtime-streaming-no-backoff",
            initial: InitialList::Streaming,
            backoff: false,
            about: "watcher(api, Config::default().streaming_lists()).reflect(writer)",
            waiters: WAITERS,
            page_size: None,
        },
        KubeConfig {
            name: "kube-runtime-any",
            initial: InitialList::AnySemantic,
            backoff: true,
            about: "watcher(api, Config::default().any_semantic()).default_backoff().reflect(writer)",
            waiters: WAITERS,
            page_size: None,
        },
        KubeConfig {
            name: "kube-runtime-any-no-backoff",
            initial: InitialList::AnySemantic,
            backoff: false,
            about: "watcher(api, Config::default().any_semantic()).reflect(writer)",
            waiters: WAITERS,
            page_size: None,
        },
    ];

    /// The configuration a client spec names: `NAME` or `NAME,waiters=N` (N from 1 to 16).
    pub fn parse(spec: &str) -> Result<KubeConfig, String> {
        let (name, rest) = spec.split_once(',').unwrap_or((spec, ""));
        let mut config = Self::ALL.into_iter().find(|c| c.name == name).ok_or_else(|| {
            let names: Vec<&str> = Self::ALL.iter().map(|c| c.name).collect();
            format!("no client named {name:?} (clients: model, {})", names.join(", "))
        })?;
        if !rest.is_empty() {
            let n = rest
                .strip_prefix("waiters=")
                .and_then(|n| n.parse::<usize>().ok())
                .filter(|n| (1..=16).contains(n))
                .ok_or_else(|| format!("{spec:?}: after the name, only waiters=N (1 to 16) may follow"))?;
            config.waiters = n;
        }
        Ok(config)
    }

    /// The spec that [`Self::parse`] reads back.
    pub fn spec(&self) -> String {
        if self.waiters == WAITERS {
            self.name.to_string()
        } else {
            format!("{},waiters={}", self.name, self.waiters)
        }
    }

    pub fn watcher_config(&self) -> watcher::Config {
        let c = watcher::Config::default();
        let c = match self.page_size {
            Some(n) => c.page_size(n),
            None => c,
        };
        match self.initial {
            InitialList::Paginated => c,
            InitialList::Streaming => c.streaming_lists(),
            InitialList::AnySemantic => c.any_semantic(),
        }
    }

    /// The watch timeout it sends (kube-runtime's default when `Config::timeout` is unset).
    pub fn watch_timeout_secs(&self) -> u32 {
        self.watcher_config().timeout.unwrap_or(290)
    }
}
