//! client-go as users run it: the named configurations `listwatch clients` lists, and where the Go
//! program for a release is.

use std::path::PathBuf;

/// The client-go release the shim pins (`scripts/build-client-go` builds it by default).
pub const PINNED: &str = "v0.37.2";

/// Tasks that call `WaitForCacheSync` from the start by default: several, as a controller's workers do.
pub const WAITERS: usize = 3;

/// What a configuration's spec may add to its name, with what each does (`listwatch clients`).
pub const OPTIONS: [(&str, &str); 11] = [
    ("@vX.Y.Z", "that release's program (scripts/build-client-go vX.Y.Z builds it)"),
    (",waiters=N", "N tasks (1 to 16) call WaitForCacheSync from the start; 3 by default"),
    (",timeout=Ns", "rest.Config.Timeout, the HTTP client's timeout, 1 to 3600 s; none by default"),
    (
        ",resync=Ns",
        "the informer's resync period, 1 to 3600 s (the informer configurations and controller-runtime's SyncPeriod); none by default",
    ),
    (
        ",handlers=N",
        "N handlers (1 to 8) on the SharedIndexInformer, each judged; with resync=Ns the k-th from 0 resyncs every (k+1)*N s",
    ),
    (",transform", "SetTransform with a strict transform (the SharedIndexInformer configurations, v0.24 on)"),
    (
        ",panic-handler",
        "a handler that panics once, recovered by client-go (the SharedIndexInformer configurations that LIST, v0.27 on)",
    ),
    (
        ",slow-handler",
        "the first handler behind a gate the simulator holds (slow-consumer): a handler that is slow or blocks (the SharedIndexInformer configurations)",
    ),
    (
        ",watch-error-handler",
        "SetWatchErrorHandler with a handler that tells its user (the SharedIndexInformer configurations and client-go-pager, v0.19 on; client-go-fifo's Config.WatchErrorHandler; controller-runtime's cache.Options.DefaultWatchErrorHandler): judged by failures-told",
    ),
    (
        ",rv=0|unset",
        "client-go-pager: the resourceVersion its list function passes, \"0\" or unset, instead of the reflector's",
    ),
    (
        ",match=NotOlderThan|Exact",
        "client-go-pager: the resourceVersionMatch its list function passes with a resourceVersion (not Exact with \"0\")",
    ),
];

/// How the informer makes its lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lists {
    /// The release's defaults: since v0.35 the `WatchListClient` gate is on, so the reflector opens a
    /// streaming list (A12, C10) and falls back to LIST + WATCH where the server has none.
    Defaults,
    /// `KUBE_FEATURE_WatchListClient=false`: LIST (RV "0" first, 500 a page, served whole from the
    /// watch cache) then WATCH.
    ListWatch,
    /// LIST + WATCH, every LIST in pages (of the world's page size, or 1 where the world sets none), so
    /// that continue tokens and their expiry (A13) and the pager's fallback are exercised.
    Paged,
    /// No informer: `tools/watch`'s RetryWatcher, a raw watch resumed from the last RV it saw with no
    /// LIST (C9), read by a consumer that keeps the objects it was told of and returns when the
    /// RetryWatcher's channel closes.
    RetryWatcher,
    /// No SharedIndexInformer: what `cache.NewIndexerInformer` builds, a controller (`cache.New`) over
    /// client-go's DeltaFIFO and an indexer, with the consumer's loop the program's own so that the
    /// harness can hold it between two pops (a slow handler with a backlog): the release's defaults
    /// otherwise.
    Fifo,
    /// No informer: a bare `cache.Reflector` into a `cache.Store` (`NewReflector` and `Run`), as code
    /// that keeps a cache of its own builds it: no DeltaFIFO, no handlers, nothing that says it has
    /// listed. Its cache, RV and requests are judged; readiness and notifications cannot be.
    Reflector,
    /// No SharedIndexInformer: `cache.NewIndexerInformer`, an indexer and the controller that fills it
    /// with one handler called inside its `Pop`: the non-shared informer of code that needs no
    /// factory. The release's defaults otherwise.
    IndexerInformer,
    /// No SharedIndexInformer: `cache.NewInformer`, the same controller as `NewIndexerInformer`'s
    /// over a plain `Store`, one handler called inside its `Pop`. The release's defaults otherwise.
    StoreInformer,
    /// No informer: `tools/watch`'s `ListWatchUntil` (v0.15–v0.18; kubernetes PR #90855 removed it in
    /// v0.19) with a condition that never holds and keeps the objects it is told of: one LIST with no
    /// resource version (its items told as synthetic ADDEDs), then `Until` from the list's RV, a
    /// RetryWatcher. Any error ends it, the LIST's included; the caller then stops. It claims the
    /// list's RV, then each watch event's; it is ready once its LIST returned.
    ListWatchUntil,
    /// No informer of the caller's: `tools/watch`'s `NewIndexerInformerWatcher`, on which
    /// `UntilWithSync` stands: an indexer informer whose handler turns what it is told into watch
    /// events, read by a consumer that keeps the objects they name (the cache judged), with the
    /// informer's RV and HasSynced. A relist's delete with final state unknown reaches the consumer as
    /// a plain DELETED. v0.35 on: before it the informer watcher's reflector (resync period 0, fixed)
    /// waits on a channel made at package init, which no synctest bubble can see.
    InformerWatcher,
    /// controller-runtime's informer cache (`sigs.k8s.io/controller-runtime/pkg/cache`, the release the
    /// shim's go.mod pins) as a manager starts it: cluster-wide, one ConfigMap informer with a handler,
    /// read through the cache's `client.Reader`, readiness through its `WaitForCacheSync`. The shim's
    /// own client-go release only, which that controller-runtime needs.
    ControllerRuntime,
    /// The SharedIndexInformer with the streaming list (C10) switched on the way the release lets a
    /// user switch it on: `ENABLE_CLIENT_GO_WATCH_LIST_ALPHA` in v0.28–v0.30 (read by `NewReflector`;
    /// v0.27 has only the Reflector's `UseWatchList` field, which an informer does not expose), the
    /// `WatchListClient` feature gate (`KUBE_FEATURE_WatchListClient=true`) from v0.31, where it is
    /// off by default until v0.35.
    WatchList,
    /// A SharedIndexInformer whose list function lists through `tools/pager`'s `ListPager` (pages of the
    /// world's page size, or 1) with the `resourceVersion` and `resourceVersionMatch` its caller passes
    /// (`,rv=`, `,match=`), as code with a list function of its own does; the reflector's own pager
    /// then sees one page. LIST + WATCH (`KUBE_FEATURE_WatchListClient=false`); v0.19 on, whose
    /// `ListOptions` has `ResourceVersionMatch`.
    Pager,
    /// A Go user's own code: the client a test of theirs registers with the `listwatchtest` package
    /// (`harness/listwatchtest`), run from that package's test binary (`go:DIR,test=NAME`), against
    /// whatever client-go their module requires.
    Go,
}

impl Lists {
    /// The configurations that run a `SharedIndexInformer` of the program's own (and so take its
    /// options: `,transform`, `,panic-handler`).
    pub fn is_shared_informer(self) -> bool {
        matches!(self, Lists::Defaults | Lists::ListWatch | Lists::WatchList | Lists::Paged)
    }

    /// The configurations whose informer (or DeltaFIFO controller) takes a resync period: every one
    /// with a store that resyncs into handlers (not the bare Reflector, whose `Store.Resync` does
    /// nothing, nor the watch tools, which fix it at 0). A Go user's code is given the period and
    /// uses it as it sees fit.
    pub fn resyncs(self) -> bool {
        self.is_shared_informer()
            || matches!(
                self,
                Lists::Fifo
                    | Lists::IndexerInformer
                    | Lists::StoreInformer
                    | Lists::ControllerRuntime
                    | Lists::Go
            )
    }

    /// The configurations that take `,watch-error-handler`: an informer or a DeltaFIFO controller
    /// (`cache.Config.WatchErrorHandler`) of the program's own, or the informer controller-runtime's
    /// cache makes (`cache.Options.DefaultWatchErrorHandler`).
    pub fn takes_watch_error_handler(self) -> bool {
        self.is_shared_informer()
            || matches!(self, Lists::Pager | Lists::Fifo | Lists::ControllerRuntime | Lists::Go)
    }

    /// The properties a configuration cannot be judged by, each with why; `told`: it tells its user of
    /// its failures (`,watch-error-handler`).
    pub fn not_judged(self, told: bool) -> &'static [(&'static str, &'static str)] {
        const UNTOLD: (&str, &str) = (
            "failures-told",
            "no watch error handler is set (,watch-error-handler): client-go only logs its failures",
        );
        match (self, told) {
            (Lists::Reflector, _) => &[
                ("notifications-match-cache", "a bare Reflector into a Store has no handlers to notify"),
                ("ready-means-listed", "a bare Reflector has no HasSynced: nothing says it has listed"),
                UNTOLD,
            ],
            (_, false) => &[UNTOLD],
            (_, true) => &[],
        }
    }
}

/// One named configuration.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ClientGo {
    pub name: &'static str,
    pub lists: Lists,
    pub about: &'static str,
    /// The client-go release (`client-go@vX.Y.Z`), whose built shim runs it.
    pub version: String,
    /// How many tasks call `WaitForCacheSync` from the start; the client is ready once each returned.
    pub waiters: usize,
    /// The world's page size, when it lists in pages.
    pub page_size: Option<u32>,
    /// The release's built Go program (`scripts/build-client-go` writes it to [`bin_dir`]).
    pub binary: PathBuf,
    /// `rest.Config.Timeout`, the HTTP client's timeout, in seconds (`,timeout=30s`); none by default.
    /// It bounds every request, a watch's too: the harness fires it as a timer of the client's.
    pub timeout_secs: Option<u32>,
    /// The informer's resync period in seconds (`,resync=30s`): the `defaultEventHandlerResyncPeriod`
    /// of the SharedIndexInformer, the `resyncPeriod` of `NewInformer`/`NewIndexerInformer`, the
    /// controller's `FullResyncPeriod`, controller-runtime's `SyncPeriod`; none by default. A resync
    /// tells the handler of every cached object again, as an update from the object to itself.
    pub resync_secs: Option<u32>,
    /// How many handlers the informer has (`,handlers=N`; 1 by default): each added with
    /// `AddEventHandlerWithResyncPeriod`, the k-th (from 0) with `(k+1)` times the resync period, and
    /// each reported and judged on its own (client-go gives each its own queue and goroutine).
    pub handlers: u8,
    /// `,transform`: the informer's `SetTransform` gets a transform that drops `managedFields` from a
    /// copy, marks it, and refuses an object it already transformed (client-go documents one
    /// transform per object for default informers). SharedIndexInformer configurations, v0.24 on.
    pub transform: bool,
    /// `,panic-handler`: the informer's handler panics once (its first notification: told, then a
    /// panic), in a program with `utilruntime.ReallyCrash = false`, so that client-go recovers it and
    /// goes on; the waiters wait on the handler registration's `HasSynced`. SharedIndexInformer
    /// configurations that LIST first, v0.27 on (a registration has `HasSynced` from then; a
    /// streaming list's `Replace` takes its objects from a map, whose order a panic would show).
    pub panic_handler: bool,
    /// `,slow-handler`: the informer's first handler is behind a gate (`listwatchtest`'s
    /// `Env.Holdable`) that the simulator's slow-consumer fault closes and opens: while closed, the
    /// handler's goroutine blocks before its next call and client-go keeps what follows in that
    /// handler's buffer. The waiters wait on the handler registration's `HasSynced` where the release
    /// has one (v0.27 on). SharedIndexInformer configurations; a Go user's code offers it through
    /// `Env.SlowHandler`.
    pub slow_handler: bool,
    /// `,watch-error-handler`: the informer's `SetWatchErrorHandler` gets a handler that tells its user
    /// (the harness) of every error the reflector hands it, before the informer starts; judged by
    /// failures-told, which a configuration without it is not. SharedIndexInformer configurations and
    /// `client-go-pager`, v0.19 on; `client-go-fifo` through its controller's `Config`;
    /// controller-runtime's cache through its `DefaultWatchErrorHandler`; a Go user's code through `Env.WatchErrorHandler` and `Env.Told`.
    pub watch_error_handler: bool,
    /// `client-go-pager`'s `,rv=`: the `resourceVersion` its list function passes, `"0"` or `"unset"`,
    /// instead of the reflector's own; `None`: the reflector's.
    pub pager_rv: Option<&'static str>,
    /// `client-go-pager`'s `,match=`: the `resourceVersionMatch` its list function passes with a
    /// `resourceVersion` (`"NotOlderThan"` or `"Exact"`; Exact not with `"0"`, which a server refuses).
    pub pager_match: Option<&'static str>,
    /// For a Go user's client ([`Lists::Go`]): the package directory and the test that registers
    /// it; `binary` is then that package's test binary.
    pub go: Option<GoTest>,
    /// A Go user's client manager (`go:DIR,test=NAME,manager`, a test that calls
    /// `listwatchtest.RunManager`) is under test, in place of the model's.
    pub manager: bool,
}

/// A test of a Go user's package that registers a client with `listwatchtest.Run`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct GoTest {
    /// The package directory, as the spec names it.
    pub dir: String,
    /// The test's full name (`TestX`, or `TestX/sub` for a subtest).
    pub test: String,
}

impl GoTest {
    /// The start of the spec that names it: the package and its test ([`ClientGo::spec`] adds the
    /// options).
    pub fn head(&self) -> String {
        format!("go:{},test={}", self.dir, self.test)
    }
}

impl ClientGo {
    /// Every named configuration, at the pinned release.
    pub fn all_named() -> Vec<ClientGo> {
        let named = |name, lists, about| ClientGo {
            name,
            lists,
            about,
            version: PINNED.to_string(),
            waiters: WAITERS,
            page_size: None,
            binary: binary(PINNED),
            timeout_secs: None,
            resync_secs: None,
            handlers: 1,
            transform: false,
            panic_handler: false,
            slow_handler: false,
            watch_error_handler: false,
            pager_rv: None,
            pager_match: None,
            go: None,
            manager: false,
        };
        vec![
            named(
                "client-go",
                Lists::Defaults,
                "client-go's SharedIndexInformer with the release's defaults (WatchListClient on since v0.35)",
            ),
            named(
                "client-go-no-watchlist",
                Lists::ListWatch,
                "the same with KUBE_FEATURE_WatchListClient=false: LIST from RV 0, then WATCH",
            ),
            named(
                "client-go-watchlist",
                Lists::WatchList,
                "the same with the streaming list switched on as the release allows (v0.28 on): its environment variable, then its gate",
            ),
            named(
                "client-go-paged",
                Lists::Paged,
                "LIST + WATCH with every LIST in pages (the world's page size, or 1): continue tokens",
            ),
            named(
                "client-go-fifo",
                Lists::Fifo,
                "a controller over a DeltaFIFO and an indexer (cache.New), its consumer held between pops at times",
            ),
            named(
                "client-go-indexer-informer",
                Lists::IndexerInformer,
                "cache.NewIndexerInformer: an indexer and its controller, one handler called inside Pop, no factory",
            ),
            named(
                "client-go-store-informer",
                Lists::StoreInformer,
                "cache.NewInformer: a Store and its controller, one handler called inside Pop, no factory",
            ),
            named(
                "client-go-list-watch-until",
                Lists::ListWatchUntil,
                "tools/watch's ListWatchUntil (v0.15-v0.18): one consistent LIST, then a RetryWatcher from its RV; any error ends it",
            ),
            named(
                "client-go-informer-watcher",
                Lists::InformerWatcher,
                "tools/watch's NewIndexerInformerWatcher (under UntilWithSync): an informer's notifications as a watch that never ends",
            ),
            named(
                "client-go-pager",
                Lists::Pager,
                "an informer whose list function lists through tools/pager's ListPager (pages of 1) with the caller's rv and match (v0.19 on)",
            ),
            named(
                "client-go-reflector",
                Lists::Reflector,
                "a bare Reflector into a Store (cache.NewReflector, Run): no informer, no handlers",
            ),
            named(
                "controller-runtime",
                Lists::ControllerRuntime,
                "controller-runtime's cache as a manager starts it (v0.25.2): cluster-wide, read through its client.Reader",
            ),
            named(
                "client-go-retrywatcher",
                Lists::RetryWatcher,
                "tools/watch's RetryWatcher from the first revision, no LIST: a raw watch resumed from its last RV",
            ),
        ]
    }

    /// The mode the shim runs: `pager[,rv=…][,match=…]` for `client-go-pager`.
    pub fn pager_mode(&self) -> String {
        format!("pager{}", self.pager_options())
    }

    /// `client-go-pager`'s options as a spec spells them: `[,rv=…][,match=…]`.
    fn pager_options(&self) -> String {
        let mut options = String::new();
        if let Some(rv) = self.pager_rv {
            options.push_str(&format!(",rv={rv}"));
        }
        if let Some(m) = self.pager_match {
            options.push_str(&format!(",match={m}"));
        }
        options
    }

    /// The spec [`Self::parse`] reads back.
    pub fn spec(&self) -> String {
        let mut s = match &self.go {
            Some(go) => go.head(),
            None if self.version != PINNED => format!("{}@{}", self.name, self.version),
            None => self.name.to_string(),
        };
        if self.waiters != WAITERS {
            s.push_str(&format!(",waiters={}", self.waiters));
        }
        if let Some(t) = self.timeout_secs {
            s.push_str(&format!(",timeout={t}s"));
        }
        if let Some(t) = self.resync_secs {
            s.push_str(&format!(",resync={t}s"));
        }
        if self.handlers != 1 {
            s.push_str(&format!(",handlers={}", self.handlers));
        }
        if self.transform {
            s.push_str(",transform");
        }
        if self.panic_handler {
            s.push_str(",panic-handler");
        }
        if self.slow_handler {
            s.push_str(",slow-handler");
        }
        if self.watch_error_handler {
            s.push_str(",watch-error-handler");
        }
        s.push_str(&self.pager_options());
        if self.manager {
            s.push_str(",manager");
        }
        s
    }

    /// The environment that switches the release's streaming list as this configuration asks:
    /// nothing for the release's defaults, the DeltaFIFO controller, the indexer informers and the
    /// bare Reflector, which keep them (on since v0.35, off from v0.31, absent before);
    /// `KUBE_FEATURE_WatchListClient=false` where the configuration turns it off and the release has
    /// the gate (v0.31 and later); for `client-go-watchlist`, `ENABLE_CLIENT_GO_WATCH_LIST_ALPHA=true`
    /// before v0.31 (read from v0.28) and the gate `true` from v0.31. Whatever is not set here is
    /// removed from the program's environment.
    pub fn watch_list_env(&self) -> Vec<(&'static str, &'static str)> {
        let has_gate = self.minor() >= 31;
        match self.lists {
            Lists::Defaults
            | Lists::Fifo
            | Lists::IndexerInformer
            | Lists::StoreInformer
            | Lists::ListWatchUntil
            | Lists::InformerWatcher
            | Lists::Reflector
            | Lists::ControllerRuntime
            | Lists::Go => vec![],
            Lists::WatchList if has_gate => vec![("KUBE_FEATURE_WatchListClient", "true")],
            Lists::WatchList => vec![("ENABLE_CLIENT_GO_WATCH_LIST_ALPHA", "true")],
            Lists::ListWatch | Lists::Paged | Lists::Pager | Lists::RetryWatcher if has_gate => {
                vec![("KUBE_FEATURE_WatchListClient", "false")]
            }
            Lists::ListWatch | Lists::Paged | Lists::Pager | Lists::RetryWatcher => vec![],
        }
    }

    /// Why this configuration's release cannot run it, if it cannot.
    pub(crate) fn unavailable(&self) -> Option<String> {
        match self.lists {
            Lists::WatchList if self.minor() < 28 => Some(
                "client-go before v0.28 has no switch for a user to turn the streaming list on \
                 (ENABLE_CLIENT_GO_WATCH_LIST_ALPHA came with v0.28)"
                    .to_string(),
            ),
            Lists::ControllerRuntime if self.version != PINNED => Some(format!(
                "controller-runtime runs on client-go {PINNED} only, which its pinned release needs"
            )),
            Lists::ListWatchUntil if self.minor() >= 19 => Some(
                "tools/watch's ListWatchUntil was removed in client-go v0.19 (kubernetes PR #90855): \
                 name a release from v0.15 to v0.18, like client-go-list-watch-until@v0.18.19"
                    .to_string(),
            ),
            Lists::InformerWatcher if self.minor() < 35 => Some(
                "runs on client-go v0.35 or later only (before it, NewIndexerInformerWatcher's reflector \
                 waits on a channel made at package init, which the harness's synctest bubble cannot see)"
                    .to_string(),
            ),
            Lists::Pager if self.minor() < 19 => Some(
                "client-go-pager passes a resourceVersionMatch, which ListOptions has from client-go v0.19"
                    .to_string(),
            ),
            _ => None,
        }
    }

    /// The release's minor version (`v0.37.2`: 37).
    pub(crate) fn minor(&self) -> u32 {
        self.version.split('.').nth(1).and_then(|m| m.parse().ok()).unwrap_or(0)
    }

    /// The release's patch version (`v0.18.6`: 6).
    fn patch(&self) -> u32 {
        self.version.split('.').nth(2).and_then(|p| p.parse().ok()).unwrap_or(0)
    }

    /// Whether the release's transport has the HTTP/2 health check that gives up a silently dead
    /// connection (A9; apimachinery's `SetTransportDefaults`, PR #95981 for kubernetes#87615): from
    /// v0.20.0, and in the v0.19.5 and v0.18.18 patch releases; never in v0.17 and before. Without it a
    /// watch on a dead connection waits until a timeout of the client's own (`,timeout=`), if any.
    pub fn has_health_check(&self) -> bool {
        if self.lists == Lists::Go {
            // A user's module: the health check is in every client-go of the last five years.
            return true;
        }
        match self.minor() {
            0..=17 => false,
            18 => self.patch() >= 18,
            19 => self.patch() >= 5,
            _ => true,
        }
    }

    /// The page size the shim is started with: 0 for client-go's default.
    pub fn shim_page_size(&self) -> u32 {
        match self.lists {
            Lists::Paged | Lists::Pager => self.page_size.unwrap_or(1),
            _ => self.page_size.unwrap_or(0),
        }
    }

    /// The releases whose shim is built, newest last, each with every named configuration.
    pub fn built() -> Vec<ClientGo> {
        let mut versions: Vec<String> = std::fs::read_dir(bin_dir())
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.strip_prefix("client-go-shim-").map(str::to_string))
            .collect();
        versions.sort_by_key(|v| {
            v.trim_start_matches('v').split('.').map(|n| n.parse::<u32>().unwrap_or(0)).collect::<Vec<_>>()
        });
        let mut out = Vec::new();
        for v in versions {
            // `-no-watchlist` only where the release has the gate to turn off (before it, it runs as
            // the defaults do), and each configuration where the release can run it.
            let offered = |c: &ClientGo| {
                let c = ClientGo { version: v.clone(), ..c.clone() };
                c.unavailable().is_none() && (c.lists != Lists::ListWatch || c.minor() >= 31)
            };
            for mut c in Self::all_named().into_iter().filter(offered) {
                c.binary = binary(&v);
                c.version = v.clone();
                out.push(c);
            }
        }
        out
    }
}

/// The value of a spec's `waiters=N` option: 1 to 16.
pub fn waiters_option(spec: &str, n: &str) -> Result<usize, String> {
    n.parse()
        .ok()
        .filter(|n| (1..=16).contains(n))
        .ok_or_else(|| format!("{spec:?}: waiters must be a number from 1 to 16"))
}

/// The value of a spec's `handlers=N` option: 1 (the default) to 8.
pub fn handlers_option(spec: &str, n: &str) -> Result<u8, String> {
    n.parse()
        .ok()
        .filter(|n| (1..=8).contains(n))
        .ok_or_else(|| format!("{spec:?}: handlers must be a number from 1 to 8"))
}

/// The value of a spec's `NAME=Ns` option (`timeout`, `resync`): seconds from 1 to 3600.
pub fn seconds_option(spec: &str, name: &str, t: &str) -> Result<u32, String> {
    t.strip_suffix('s')
        .and_then(|n| n.parse().ok())
        .filter(|n| (1..=3600).contains(n))
        .ok_or_else(|| format!("{spec:?}: {name} must be seconds from 1 to 3600, like 30s"))
}

/// The built Go program of a release.
pub fn binary(version: &str) -> PathBuf {
    bin_dir().join(format!("client-go-shim-{version}"))
}

/// Where `scripts/build-client-go` puts the shims: `target/client-go` of the repository, or
/// `LISTWATCH_CLIENT_GO_DIR`.
pub fn bin_dir() -> PathBuf {
    match std::env::var_os("LISTWATCH_CLIENT_GO_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../target/client-go"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The error `spec` is refused with; fails the test if it parses.
    fn refused(spec: &str) -> String {
        ClientGo::parse(spec).expect_err(spec)
    }

    /// The health check came with v0.20.0 and two patch releases; v0.17 never had it.
    #[test]
    fn the_health_check_is_in_the_releases_that_shipped_it() {
        let at = |version: &str| ClientGo { version: version.to_string(), ..ClientGo::all_named().remove(0) };
        for v in ["v0.15.12", "v0.17.17", "v0.18.6", "v0.18.17", "v0.19.4"] {
            assert!(!at(v).has_health_check(), "{v}");
        }
        for v in ["v0.18.18", "v0.19.5", "v0.20.0", "v0.26.3", "v0.37.2"] {
            assert!(at(v).has_health_check(), "{v}");
        }
    }

    /// `,transform` is an informer's, from the release that has SetTransform; it spells itself back.
    #[test]
    fn transform_is_for_informers_from_v0_24() {
        let fifo = refused("client-go-fifo,transform");
        assert!(fifo.contains("SharedIndexInformer"), "{fifo}");
        let old = refused("client-go@v0.23.17,transform");
        assert!(old.contains("v0.24 or later"), "{old}");
        let unknown = refused("client-go,transfrom");
        assert!(
            unknown.contains("known: waiters=N, timeout=Ns, resync=Ns, handlers=N, transform, panic-handler"),
            "{unknown}"
        );
        let spec = ClientGo { transform: true, ..ClientGo::all_named().remove(0) }.spec();
        assert_eq!(spec, "client-go,transform");
        assert_eq!(Lists::Reflector.not_judged(false).len(), 3);
    }

    /// `,watch-error-handler` is an informer's of the program's own, from the release that has
    /// SetWatchErrorHandler; it spells itself back, and only with it is `failures-told` judged.
    #[test]
    fn watch_error_handler_is_for_informers_from_v0_19() {
        let bare = refused("client-go-reflector,watch-error-handler");
        assert!(bare.contains("client-go-pager, client-go-fifo and controller-runtime"), "{bare}");
        let old = refused("client-go@v0.18.6,watch-error-handler");
        assert!(old.contains("v0.19 or later") && old.contains("PR #87329"), "{old}");
        let c = ClientGo {
            watch_error_handler: true,
            pager_match: Some("Exact"),
            ..ClientGo::all_named().into_iter().find(|c| c.lists == Lists::Pager).unwrap()
        };
        assert_eq!(c.spec(), "client-go-pager,watch-error-handler,match=Exact");
        assert!(Lists::ControllerRuntime.takes_watch_error_handler(), "its cache's DefaultWatchErrorHandler");
        assert_eq!(c.pager_mode(), "pager,match=Exact");
        let unjudged = |told| Lists::Pager.not_judged(told).iter().any(|(p, _)| *p == "failures-told");
        assert!(unjudged(false) && !unjudged(true), "not judged without the handler, judged with it");
    }

    /// `,panic-handler` is a SharedIndexInformer's that LISTs, from the release whose registrations
    /// have HasSynced; it spells itself back.
    #[test]
    fn panic_handler_is_for_informers_from_v0_27() {
        let fifo = refused("client-go-retrywatcher,panic-handler");
        assert!(fifo.contains("SharedIndexInformer"), "{fifo}");
        let old = refused("client-go@v0.26.15,panic-handler");
        assert!(old.contains("v0.27 or later"), "{old}");
        let streams = refused("client-go,panic-handler");
        assert!(streams.contains("an informer that LISTs"), "{streams}");
        let c = ClientGo { panic_handler: true, transform: true, ..ClientGo::all_named().remove(1) };
        assert_eq!(c.spec(), "client-go-no-watchlist,transform,panic-handler");
    }

    /// `,slow-handler` is a SharedIndexInformer's, in every release (the gate is the program's own),
    /// and goes with the other handler options; it spells itself back.
    #[test]
    fn slow_handler_is_for_informers() {
        let fifo = refused("client-go-fifo,slow-handler");
        assert!(fifo.contains("slow-handler is for the SharedIndexInformer configurations"), "{fifo}");
        let c = ClientGo {
            slow_handler: true,
            panic_handler: true,
            handlers: 1,
            ..ClientGo::all_named().remove(1)
        };
        assert_eq!(c.spec(), "client-go-no-watchlist,panic-handler,slow-handler");
        let c = ClientGo { slow_handler: true, handlers: 3, ..ClientGo::all_named().remove(0) };
        assert_eq!(c.spec(), "client-go,handlers=3,slow-handler");
    }

    /// `,resync=` is for the configurations whose store resyncs into handlers; it spells itself back.
    #[test]
    fn resync_is_for_informers_and_their_controllers() {
        let bare = refused("client-go-reflector,resync=30s");
        assert!(bare.contains("resync is for the configurations with an informer"), "{bare}");
        let watcher = refused("client-go-retrywatcher,resync=30s");
        assert!(watcher.contains("resync is for"), "{watcher}");
        let zero = refused("client-go,resync=0s");
        assert!(zero.contains("resync must be seconds from 1 to 3600"), "{zero}");
        let c = ClientGo { resync_secs: Some(30), timeout_secs: Some(5), ..ClientGo::all_named().remove(4) };
        assert_eq!(c.spec(), "client-go-fifo,timeout=5s,resync=30s");
        assert!([Lists::Defaults, Lists::Fifo, Lists::StoreInformer, Lists::ControllerRuntime, Lists::Go]
            .iter()
            .all(|l| l.resyncs()));
        assert!(![Lists::Reflector, Lists::RetryWatcher, Lists::InformerWatcher, Lists::ListWatchUntil]
            .iter()
            .any(|l| l.resyncs()));
    }

    /// `,handlers=N` is a SharedIndexInformer's, 1 to 8, not with the panicking handler; it spells
    /// itself back.
    #[test]
    fn handlers_are_a_shared_informers() {
        let fifo = refused("client-go-fifo,handlers=2");
        assert!(fifo.contains("SharedIndexInformer"), "{fifo}");
        let many = refused("client-go,handlers=9");
        assert!(many.contains("handlers must be a number from 1 to 8"), "{many}");
        let both = refused("client-go-no-watchlist,panic-handler,handlers=2");
        assert!(both.contains("drop handlers"), "{both}");
        let c = ClientGo { handlers: 3, resync_secs: Some(10), ..ClientGo::all_named().remove(0) };
        assert_eq!(c.spec(), "client-go,resync=10s,handlers=3");
    }

    /// `,rv=` and `,match=` are client-go-pager's, from v0.19; they spell themselves back and make the
    /// shim's mode.
    #[test]
    fn the_pagers_options() {
        let e = refused("client-go,match=Exact");
        assert!(e.contains("match is client-go-pager's option"), "{e}");
        let e = refused("client-go-pager,match=exact");
        assert!(e.contains("match must be NotOlderThan or Exact"), "{e}");
        let e = refused("client-go-pager,rv=5");
        assert!(e.contains("rv must be 0 or unset"), "{e}");
        let e = refused("client-go-pager@v0.18.6");
        assert!(e.contains("from client-go v0.19"), "{e}");
        let pager = ClientGo::all_named().into_iter().find(|c| c.lists == Lists::Pager).unwrap();
        assert_eq!(pager.pager_mode(), "pager");
        assert_eq!(pager.shim_page_size(), 1);
        let c = ClientGo { pager_rv: Some("0"), pager_match: Some("NotOlderThan"), ..pager };
        assert_eq!(c.spec(), "client-go-pager,rv=0,match=NotOlderThan");
        assert_eq!(c.pager_mode(), "pager,rv=0,match=NotOlderThan");
        assert_eq!(c.watch_list_env(), [("KUBE_FEATURE_WatchListClient", "false")]);
    }

    /// A configuration the release cannot run is refused with the reason, before any program is
    /// looked for.
    #[test]
    fn configurations_name_the_releases_they_need() {
        let e = refused("client-go-watchlist@v0.27.16");
        assert!(e.contains("before v0.28"), "{e}");
        let e = refused("client-go-informer-watcher@v0.34.13");
        assert!(e.contains("v0.35 or later"), "{e}");
        let e = refused("client-go-list-watch-until");
        assert!(e.contains("removed in client-go v0.19"), "{e}");
        let e = refused("controller-runtime@v0.36.6");
        assert!(e.contains("v0.37.2 only"), "{e}");
        let on = |lists, version: &str| ClientGo {
            lists,
            version: version.to_string(),
            ..ClientGo::all_named().remove(0)
        };
        assert_eq!(
            on(Lists::WatchList, "v0.29.15").watch_list_env(),
            [("ENABLE_CLIENT_GO_WATCH_LIST_ALPHA", "true")]
        );
        assert_eq!(
            on(Lists::WatchList, "v0.33.13").watch_list_env(),
            [("KUBE_FEATURE_WatchListClient", "true")]
        );
        assert_eq!(
            on(Lists::ListWatch, "v0.33.13").watch_list_env(),
            [("KUBE_FEATURE_WatchListClient", "false")]
        );
        assert!(on(Lists::InformerWatcher, "v0.37.2").watch_list_env().is_empty());
        assert!(on(Lists::ListWatchUntil, "v0.18.19").unavailable().is_none());
        assert!(on(Lists::StoreInformer, "v0.15.12").unavailable().is_none());
        assert!(on(Lists::ControllerRuntime, "v0.37.2").watch_list_env().is_empty());
    }
}
