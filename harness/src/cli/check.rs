//! `listwatch check`, `bugs` and `explore`: the exhaustive checker over a scope's worlds.

use super::clients::with_clients;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use listwatch_model::{ApiServerRelease, EtcdRelease, Flaw, Flaws};
use listwatch_properties::Property;

use std::sync::atomic::Ordering;
use std::time::Instant;

use crate::checker::{
    interrupted, resident_bytes, run_labelled, run_resumable, CheckModel, Cut, Limits, Outcome, Paused,
    Search,
};
use crate::report::{self, Run};
use crate::scope::{worlds, Scope, World, WORLD_NAMES};

pub const CHECK_HELP: &str = "\
worlds of every scope (--world NAME checks one of them; all but the first two keep their shape
whatever the scope):
  list-watch         the scope's own shape (below), changed by --keys, --writes, ... where given
  watch-list         the scope's shape with at most 2 writes, reflectors in watch-list mode (C10: every
                     list a streaming list, A12)
  client-manager     2 clusters, 3 requests, 1 cluster pause
  ha-mid-upgrade     1 key, 1 write, 1 write to another resource, 1 fault, 2 API servers of which only
                     apiserver-1 gets etcd progress notifications
  slow-etcd-watcher  1 key, 2 writes, 1 write to another resource, an etcd watch that buffers 1 event,
                     etcd 3.5.16+ tombstones
  two-reflectors     1 key, 1 write, 2 reflectors
  paginated-relist   2 keys, 3 writes, 1 compaction, one 500: a relist in pages of one item (A13)
  lease-revoke       2 keys, 2 writes, 1 lease revoke deleting both at one revision (E8), one break,
                     server timeout or silent death

scopes (--scope):
  small    1 key, 2 writes, 1 compaction, 1 fault, 1 API server, 1 reflector, cache window 2
  default  2 keys, 3 writes, 1 compaction, 1 fault, 1 API server, 1 reflector, cache window 2
  large    2 keys, 4 writes, 1 compaction, 2 faults, 2 API servers, 1 reflector, cache window 2
  (relist-from-stale-cache and retry-too-large-rv add a second API server; retry-too-large-rv runs its
  own story: 1 key, 1 write, 1 write to another resource, 2 faults)

flaws (--flaw, repeatable):
  stale-delete-rv, nil-prevkv-dropped, relist-on-timeout, stop-on-close, spin-on-close,
  sync-under-lock, relist-from-stale-cache, retry-too-large-rv, replace-keeps-missing,
  no-idle-detection, continue-with-rv, resume-mid-revision, rewatch-initial-events,
  partial-initial-buffer, sync-wait-unbounded, consistent-read-lags, replace-misses-queued,
  fixed-retry-period, wait-ends-unanswered, leak-watch-on-error, untold-failures,
  partial-revision-served

--time-limit is for the whole command, all worlds together: each world is first given an equal share of
the time left, then the worlds their share cut are taken up again where they stopped with what the
others left over (a search that held half the memory limit lets its states go meanwhile and makes them
again; with --checker dfs or stateright-bfs a cut world is checked again from its start). A run stopped
by --max-states, --time-limit, --memory-limit, SIGINT or SIGTERM prints what it found so far, marked
incomplete, and exits 2; a second SIGINT ends the process at once. Progress goes to stderr: a live line
on a terminal, a plain line every five seconds otherwise.

exit status: 0 every property holds and every witness is reached, 1 a property is violated (its
shortest trace is printed), 2 bad arguments or a limit hit, 3 every property holds but a witness was not
reached, so the pass would be vacuous.";

pub const BUGS_HELP: &str = "\
Each flaw is checked on its own, its own component's world first, until a property breaks; then the
correct system is checked in every world of the scope.

exit status: 0 every flaw caught and the correct system verified with every witness reached, 1 a flaw
not caught or the correct system not verified, 2 bad arguments, a limit hit or a corpus file that cannot
be written, 3 a witness of the correct system not reached.";

fn parse_scope(v: &str) -> Result<Scope, String> {
    Scope::parse(v).ok_or_else(|| format!("unknown scope '{v}' (known: small, default, large)"))
}

fn parse_flaw(v: &str) -> Result<Flaw, String> {
    v.parse::<Flaw>().map_err(|e| e.to_string())
}

fn parse_world(v: &str) -> Result<&'static str, String> {
    WORLD_NAMES
        .into_iter()
        .find(|n| *n == v)
        .ok_or_else(|| format!("unknown world '{v}' (known: {})", WORLD_NAMES.join(", ")))
}

fn parse_search(v: &str) -> Result<Search, String> {
    match v {
        "bfs" => Ok(Search::Bfs),
        "dfs" => Ok(Search::Dfs),
        "stateright-bfs" => Ok(Search::StaterightBfs),
        _ => Err(format!("unknown checker '{v}' (known: bfs, dfs, stateright-bfs)")),
    }
}

fn positive(v: &str) -> Result<u64, String> {
    v.parse::<u64>().ok().filter(|n| *n > 0).ok_or_else(|| format!("'{v}' is not a positive whole number"))
}

fn parse_addr(v: &str) -> Result<SocketAddr, String> {
    v.parse().map_err(|_| format!("'{v}' is not an address like 127.0.0.1:3000"))
}

/// Which worlds, with which flaws: shared by `check` and `explore`.
#[derive(Clone, Debug, PartialEq, Eq, clap::Args)]
pub struct WorldArgs {
    /// How big a world: small, default or large
    #[arg(long, value_name = "SCOPE", default_value = "default", value_parser = parse_scope)]
    pub scope: Scope,
    /// Only this world of the scope (explore: the first of those)
    #[arg(long, value_name = "NAME", value_parser = parse_world)]
    pub world: Option<&'static str>,
    /// Switch a catalogue flaw on (repeatable); with --client other than the model, only the model
    /// API server's flaws (it serves that client)
    #[arg(long = "flaw", value_name = "NAME", value_parser = parse_flaw)]
    pub flaw: Vec<Flaw>,
    /// Every world over this etcd release (X.Y.Z, or 3.4/3.5/3.6/3.7 for the newest compared): its
    /// tombstone policy (E4) and whether it answers progress requests (E7, A12)
    #[arg(long, value_name = "VERSION", value_parser = super::values::parse_etcd)]
    pub etcd: Option<EtcdRelease>,
    /// Every world's API servers follow this k8s.io/apiserver release's rules (vX.Y.Z; README, "The
    /// model per release"): streaming lists (A12), an Exact LIST ahead of etcd (A2), the cache's
    /// reinitialisation (A14)
    #[arg(long, value_name = "VERSION", value_parser = super::values::parse_apiserver)]
    pub apiserver: Option<ApiServerRelease>,
    #[command(flatten)]
    pub shape: Shape,
}

impl Default for WorldArgs {
    fn default() -> Self {
        WorldArgs {
            scope: Scope::Default,
            world: None,
            flaw: Vec::new(),
            etcd: None,
            apiserver: None,
            shape: Shape::default(),
        }
    }
}

fn count(v: &str) -> Result<u8, String> {
    v.parse::<u8>().map_err(|_| format!("'{v}' is not a whole number from 0 to 255"))
}

fn at_least_one(v: &str) -> Result<u8, String> {
    count(v).and_then(|n| if n == 0 { Err("must be at least 1".into()) } else { Ok(n) })
}

/// Settings of the list-watch world on top of the named scope (the other worlds keep their shape).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::Args)]
#[command(next_help_heading = "The list-watch world, on top of the scope")]
pub struct Shape {
    /// Object keys of the watched resource
    #[arg(long, value_name = "N", value_parser = count, allow_hyphen_values = true)]
    pub keys: Option<u8>,
    /// Writes (create, update, delete) to the watched resource
    #[arg(long, value_name = "N", value_parser = count, allow_hyphen_values = true)]
    pub writes: Option<u8>,
    /// Writes to another resource (they move the revision only)
    #[arg(long = "foreign-writes", value_name = "N", value_parser = count, allow_hyphen_values = true)]
    pub foreign_writes: Option<u8>,
    /// Compactions of etcd
    #[arg(long, value_name = "N", value_parser = count, allow_hyphen_values = true)]
    pub compactions: Option<u8>,
    /// Faults, of every kind
    #[arg(long, value_name = "N", value_parser = count, allow_hyphen_values = true)]
    pub faults: Option<u8>,
    /// API servers
    #[arg(long, value_name = "N", value_parser = at_least_one, allow_hyphen_values = true)]
    pub servers: Option<u8>,
    /// Reflectors
    #[arg(long, value_name = "N", value_parser = count, allow_hyphen_values = true)]
    pub reflectors: Option<u8>,
    /// Events each watch cache keeps
    #[arg(long = "cache-window", value_name = "N", value_parser = at_least_one, allow_hyphen_values = true)]
    pub cache_window: Option<u8>,
    /// Relists in pages of N items (A13: client-go's pager)
    #[arg(long = "page-size", value_name = "N", value_parser = at_least_one, allow_hyphen_values = true)]
    pub page_size: Option<u8>,
    /// Watch caches serve at once after a relist or restart, as before k8s 1.31 (no A14 429s)
    #[arg(long = "no-cache-reinit-429")]
    pub no_cache_reinit_429: bool,
    /// How reflectors get their state (C10): list-watch, or watch-list (streaming lists, A12)
    #[arg(long = "mode", value_name = "list-watch|watch-list", value_parser = parse_mode)]
    pub mode: Option<listwatch_model::ListMode>,
}

fn parse_mode(text: &str) -> Result<listwatch_model::ListMode, String> {
    listwatch_model::ListMode::parse(text)
        .ok_or_else(|| format!("'{text}' is not a mode (list-watch or watch-list)"))
}

impl Shape {
    /// `config` with these settings where given.
    pub fn apply(self, config: listwatch_model::Config) -> listwatch_model::Config {
        listwatch_model::Config {
            keys: self.keys.unwrap_or(config.keys),
            writes: self.writes.unwrap_or(config.writes),
            foreign_writes: self.foreign_writes.unwrap_or(config.foreign_writes),
            compactions: self.compactions.unwrap_or(config.compactions),
            faults: self.faults.unwrap_or(config.faults),
            servers: self.servers.unwrap_or(config.servers),
            reflectors: self.reflectors.unwrap_or(config.reflectors),
            cache_window: self.cache_window.unwrap_or(config.cache_window),
            reflector: listwatch_model::ReflectorConfig {
                page_size: self.page_size.or(config.reflector.page_size),
                mode: self.mode.unwrap_or(config.reflector.mode),
                ..config.reflector
            },
            resilient_cache_init: config.resilient_cache_init && !self.no_cache_reinit_429,
            ..config
        }
    }
}

/// `check`'s arguments; `bugs` and `explore` turn theirs into these.
#[derive(Clone, Debug, PartialEq, Eq, clap::Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub worlds: WorldArgs,
    /// Breadth-first (shortest counterexamples, the same on any number of threads), stateright's
    /// depth-first checker (far less memory), or stateright's breadth-first checker on one thread (the
    /// reference the first is tested against)
    #[arg(long = "checker", value_name = "bfs|dfs|stateright-bfs", default_value = "bfs", value_parser = parse_search)]
    pub search: Search,
    /// Threads of the breadth-first search [default: one per core]; the result does not depend on it
    #[arg(long, value_name = "N", value_parser = positive, allow_hyphen_values = true)]
    pub threads: Option<u64>,
    /// Explore every naming of the API servers: no symmetry reduction (the breadth-first search keeps
    /// one state of states that differ only in which server is which, where the servers are alike)
    #[arg(long)]
    pub no_symmetry: bool,
    /// Unique states (stateright's checkers: states generated, revisits included) before the run stops,
    /// incomplete
    #[arg(long, value_name = "N", default_value = "20000000", value_parser = positive, allow_hyphen_values = true)]
    pub max_states: u64,
    /// Seconds before the run stops, incomplete
    #[arg(long = "time-limit", value_name = "SECS", default_value = "600", value_parser = positive, allow_hyphen_values = true)]
    pub time_limit_secs: u64,
    /// Resident memory (MiB) at which the run stops, incomplete; the seen set (fingerprints) may take half of it [default: 3/4 of the machine's]
    #[arg(long = "memory-limit", value_name = "MIB", value_parser = positive, allow_hyphen_values = true)]
    pub memory_limit_mib: Option<u64>,
    /// Print JSON instead of text
    #[arg(long)]
    pub json: bool,
    /// Check only the Kth of every N worlds (in the scope's order, after --world): N processes or
    /// machines check a scope between them, and `listwatch merge` of their --json results gives the
    /// whole check's verdict
    #[arg(long, value_name = "K/N", default_value = "1/1", value_parser = super::values::shard)]
    pub shard: (u64, u64),
    /// Write every counterexample into DIR as a trace file (PROPERTY.WORLD.json), for replay and show
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Check a client the checker cannot explore (`listwatch clients`; needs --features kube) by
    /// re-execution: every schedule of at most --depth steps of each world, each from a fresh client
    #[arg(long, value_name = "NAME", default_value = "model", value_parser = super::clients::ClientChoice::parse)]
    pub client: super::clients::ClientChoice,
    /// With --client: the bound on a schedule's steps
    #[arg(long, value_name = "N", default_value = "6", value_parser = positive, allow_hyphen_values = true)]
    pub depth: u64,
    /// `bugs --corpus DIR`: write each flaw's shortest trace there.
    #[arg(skip)]
    pub corpus: Option<PathBuf>,
    /// `explore --addr`: where to serve the Explorer.
    #[arg(skip = SocketAddr::from(([127, 0, 0, 1], 3000)))]
    pub addr: SocketAddr,
}

impl Default for CheckArgs {
    fn default() -> Self {
        CheckArgs {
            worlds: WorldArgs::default(),
            search: Search::Bfs,
            threads: None,
            no_symmetry: false,
            max_states: 20_000_000,
            time_limit_secs: 600,
            memory_limit_mib: None,
            json: false,
            shard: (1, 1),
            out: None,
            client: super::clients::ClientChoice::Model,
            depth: 6,
            corpus: None,
            addr: SocketAddr::from(([127, 0, 0, 1], 3000)),
        }
    }
}

/// `bugs`'s arguments.
#[derive(Clone, Debug, PartialEq, Eq, clap::Args)]
pub struct BugsArgs {
    /// How big a world: small, default or large
    #[arg(long, value_name = "SCOPE", default_value = "default", value_parser = parse_scope)]
    pub scope: Scope,
    /// Write each flaw's shortest trace into DIR as a trace file
    #[arg(long, value_name = "DIR")]
    pub corpus: Option<PathBuf>,
    /// Unique states per run before it stops, incomplete
    #[arg(long, value_name = "N", default_value = "20000000", value_parser = positive, allow_hyphen_values = true)]
    pub max_states: u64,
    /// Seconds per run before it stops, incomplete
    #[arg(long = "time-limit", value_name = "SECS", default_value = "600", value_parser = positive, allow_hyphen_values = true)]
    pub time_limit_secs: u64,
    /// Print JSON instead of text
    #[arg(long)]
    pub json: bool,
}

impl BugsArgs {
    pub fn into_check_args(self) -> CheckArgs {
        CheckArgs {
            worlds: WorldArgs { scope: self.scope, ..WorldArgs::default() },
            max_states: self.max_states,
            time_limit_secs: self.time_limit_secs,
            json: self.json,
            corpus: self.corpus,
            ..CheckArgs::default()
        }
    }
}

/// `explore`'s arguments.
#[derive(Clone, Debug, PartialEq, Eq, clap::Args)]
pub struct ExploreArgs {
    #[command(flatten)]
    pub worlds: WorldArgs,
    /// Where to serve the Explorer
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:3000", value_parser = parse_addr)]
    pub addr: SocketAddr,
}

impl ExploreArgs {
    pub fn into_check_args(self) -> CheckArgs {
        CheckArgs { worlds: self.worlds, addr: self.addr, ..CheckArgs::default() }
    }
}

impl CheckArgs {
    pub fn scope(&self) -> Scope {
        self.worlds.scope
    }

    /// The flaws switched on.
    pub fn flaws(&self) -> Flaws {
        self.worlds.flaw.iter().copied().collect()
    }

    /// The worlds this command checks, with `flaws` on.
    pub fn worlds(&self, flaws: Flaws) -> Vec<World> {
        let mut all = worlds(self.scope(), flaws);
        all.retain(|w| self.worlds.world.is_none_or(|name| w.name == name));
        let (k, n) = self.shard;
        let mut index = 0;
        all.retain(|_| {
            index += 1;
            (index - 1) % n == k - 1
        });
        for w in all.iter_mut().filter(|w| w.name == WORLD_NAMES[0]) {
            w.config = self.worlds.shape.apply(w.config);
        }
        if let Some(release) = self.worlds.etcd {
            for w in &mut all {
                w.config = w.config.over_etcd(release);
            }
        }
        if let Some(release) = self.worlds.apiserver {
            for w in &mut all {
                w.config = w.config.over_apiserver(release);
            }
        }
        all
    }

    /// What the report says was run.
    pub fn run(&self, stop_at_violation: bool) -> Run {
        Run {
            scope: self.scope(),
            flaws: self.flaws(),
            search: self.search,
            limits: self.limits(stop_at_violation),
            shard: self.shard,
        }
    }

    pub fn limits(&self, stop_at_violation: bool) -> Limits {
        Limits {
            max_states: usize::try_from(self.max_states).unwrap_or(usize::MAX),
            threads: self.threads.map_or_else(crate::checker::default_threads, |n| n as usize),
            symmetry: !self.no_symmetry,
            time_limit: Duration::from_secs(self.time_limit_secs),
            stop_at_violation,
            memory_limit_bytes: self.memory_limit_mib.map(|m| m << 20).or_else(default_memory_limit),
            made_states: usize::MAX,
            window_states: usize::MAX,
        }
    }
}

/// Three quarters of the machine's memory (`/proc/meminfo`), so that the kernel never has to kill a run.
fn default_memory_limit() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024 / 4 * 3)
}

/// Check `worlds` one after the other within one deadline. First each world is given an equal share of
/// the time left (the deadline over the worlds not yet run), so that a world too large for the deadline
/// cannot leave the others unchecked; what a world does not use passes to the next. Then the worlds
/// that their share cut are taken up again, each with an equal share of what is left: listwatch's
/// breadth-first search where it stopped ([`Paused`]), round after round until it ends or the deadline
/// passes, so that what one world leaves goes to the others still cut; another search once, from its
/// start, where that is given more time than it had, keeping the first's outcome unless it gets further.
/// A search waiting while other worlds run lets its states go if the process holds half the memory
/// limit (it makes them again when taken up). A world the deadline or a signal leaves no time for is
/// reported as not run.
fn check_worlds(worlds: &[World], search: Search, limits: Limits) -> Vec<Outcome> {
    let deadline = Instant::now() + limits.time_limit;
    let share_of = |share: Duration| Limits { time_limit: share, ..limits };
    let wait = |search: Option<Paused>| {
        search.map(|mut search| {
            if holds_half(limits.memory_limit_bytes) {
                search.lighten();
            }
            search
        })
    };
    let mut outcomes: Vec<Outcome> = Vec::with_capacity(worlds.len());
    let mut paused: Vec<Option<Paused>> = Vec::with_capacity(worlds.len());
    for (i, w) in worlds.iter().enumerate() {
        let left = deadline.saturating_duration_since(Instant::now());
        let share = share_of(left / share_count(worlds.len() - i));
        let (outcome, put_aside) = match not_run(left) {
            Some(cut) => (Outcome::not_run(cut), None),
            None if search == Search::Bfs => run_resumable(CheckModel::new(w.config), share, w.name),
            None => (run_labelled(CheckModel::new(w.config), search, share, w.name), None),
        };
        outcomes.push(outcome);
        paused.push(wait(put_aside));
    }
    let mut cut: Vec<usize> =
        (0..worlds.len()).filter(|&i| outcomes[i].cut == Some(Cut::TimeLimit)).collect();
    'rounds: while !cut.is_empty() {
        let mut still_cut = Vec::new();
        for (n, &i) in cut.iter().enumerate() {
            let left = deadline.saturating_duration_since(Instant::now());
            if not_run(left).is_some() {
                break 'rounds;
            }
            let share = left / share_count(cut.len() - n);
            if let Some(put_aside) = paused[i].take() {
                let (outcome, again) = put_aside.resume(share, worlds[i].name);
                outcomes[i] = outcome;
                still_cut.extend(again.is_some().then_some(i));
                // It waits only for another world still cut, before it in the next round or after it
                // in this one; with none it is taken up again at once.
                let others = still_cut.iter().any(|&j| j != i) || n + 1 < cut.len();
                paused[i] = if others { wait(again) } else { again };
                continue;
            }
            if share.as_secs_f64() <= outcomes[i].seconds {
                continue;
            }
            let again =
                run_labelled(CheckModel::new(worlds[i].config), search, share_of(share), worlds[i].name);
            if again.complete || again.states > outcomes[i].states {
                outcomes[i] = again;
            }
        }
        cut = still_cut;
    }
    outcomes
}

/// Whether the process holds half of `limit` or more.
fn holds_half(limit: Option<u64>) -> bool {
    limit.zip(resident_bytes()).is_some_and(|(limit, rss)| rss >= limit / 2)
}

/// Why a world cannot be started with `left` of the deadline: a signal, or no time.
fn not_run(left: Duration) -> Option<Cut> {
    if interrupted().load(Ordering::Relaxed) {
        Some(Cut::Interrupted)
    } else if left.is_zero() {
        Some(Cut::TimeLimit)
    } else {
        None
    }
}

/// `n` worlds as a divisor of the time left.
fn share_count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX).max(1)
}

/// The properties whose witness no outcome reached.
pub fn unwitnessed(outcomes: &[Outcome]) -> Vec<Property> {
    Property::ALL
        .into_iter()
        .filter(|p| !outcomes.iter().any(|o| o.verdicts.iter().any(|v| v.property == *p && v.witnessed())))
        .collect()
}

fn vacuous(outcomes: &[Outcome]) -> bool {
    let missing = unwitnessed(outcomes);
    for p in &missing {
        eprintln!(
            "listwatch: the witness of {p} was not reached ({}): its pass would be vacuous",
            p.witness()
        );
    }
    !missing.is_empty()
}

/// Run `check`; returns the exit status.
pub fn check(args: &CheckArgs) -> i32 {
    if !args.client.is_model() {
        return check_bounded(args);
    }
    let worlds = args.worlds(args.flaws());
    let outcomes = check_worlds(&worlds, args.search, args.limits(false));
    let text = if args.json {
        report::check_json(&args.run(false), &worlds, &outcomes)
    } else {
        report::check_text(&args.run(false), &worlds, &outcomes)
    };
    println!("{text}");
    if let Some(dir) = &args.out {
        let traces = report::counterexample_traces(&args.run(false), &worlds, &outcomes);
        if let Err(e) = write_traces(dir, traces.iter().map(|(name, t)| (name.as_str(), t))) {
            eprintln!("listwatch: --out: {e}");
            return 2;
        }
    }
    if outcomes.iter().any(|o| o.violated().next().is_some()) {
        1
    } else if let Some(cut) = outcomes.iter().find_map(|o| o.cut) {
        eprintln!(
            "listwatch: {} stopped the check: the report above is partial (incomplete)",
            cut.describe()
        );
        2
    } else if vacuous(&outcomes) {
        3
    } else {
        0
    }
}

/// Run `bugs`: every flaw must be caught, then the correct system verified.
pub fn bugs(bugs: &BugsArgs) -> i32 {
    let args = bugs.clone().into_check_args();
    let caught = report::catch_all(&args.run(true));
    let correct_worlds = worlds(args.scope(), Flaws::NONE);
    let correct = check_worlds(&correct_worlds, Search::Bfs, args.limits(false));
    let text = if args.json {
        report::bugs_json(&args.run(false), &caught, &correct)
    } else {
        report::bugs_text(&args.run(false), &caught, &correct)
    };
    println!("{text}");
    if let Some(dir) = &args.corpus {
        if let Err(e) = write_corpus(dir, &caught) {
            eprintln!("listwatch: --corpus: {e}");
            return 2;
        }
    }
    let all_caught = caught.iter().all(|c| c.caught.is_some());
    let verified = correct.iter().all(|o| o.complete && o.violated().next().is_none());
    if !(all_caught && verified) {
        1
    } else if vacuous(&correct) {
        3
    } else {
        0
    }
}

/// The corpus file name of a flaw: its name and where it comes from (`stale-delete-rv.kubernetes-58545.json`).
pub fn corpus_name(flaw: Flaw) -> String {
    let mut slug = String::new();
    for ch in flaw.upstream().chars() {
        match ch {
            'a'..='z' | '0'..='9' => slug.push(ch),
            'A'..='Z' => slug.push(ch.to_ascii_lowercase()),
            _ if !slug.ends_with('-') => slug.push('-'),
            _ => {}
        }
    }
    format!("{}.{}.json", flaw.name(), slug.trim_end_matches('-'))
}

fn write_corpus(dir: &std::path::Path, caught: &[report::Catch]) -> Result<(), String> {
    let names: Vec<(String, &crate::tracefile::Trace)> =
        caught.iter().filter_map(|c| c.trace.as_ref().map(|t| (corpus_name(c.flaw), t))).collect();
    write_traces(dir, names.iter().map(|(name, t)| (name.as_str(), *t)))
}

/// Write trace files into `dir`, creating it.
/// `check --client NAME`: the bounded exhaustive mode (`crate::bounded`), world by world. Exit 1 when a
/// property breaks (its shortest schedule is printed, and written with --out), 2 when --max-states
/// schedules ran out before the bound was covered, 0 otherwise.
fn check_bounded(args: &CheckArgs) -> i32 {
    if let Err(e) = args.client.takes(args.flaws()) {
        eprintln!("listwatch: {e}");
        return 2;
    }
    let depth = usize::try_from(args.depth).unwrap_or(usize::MAX);
    let (client, mut status, mut traces) = (args.client.spec(), 0, Vec::new());
    println!(
        "listwatch check --client {client}: every schedule of at most {depth} steps of each world, \
         re-executed from the start with a fresh client; states are not merged"
    );
    for w in args.worlds(args.flaws()) {
        let started = std::time::Instant::now();
        let run =
            with_clients!(&args.client, k => crate::bounded::explore(k, w.config, depth, args.max_states));
        if let Some(why) = &run.gone {
            eprintln!("listwatch: check --client {client}: world {}: {why}", w.name);
            return 2;
        }
        let took = started.elapsed().as_secs_f64();
        let counts = format!("{} schedules, {} steps", run.schedules, run.steps);
        match &run.broke {
            Some((steps, v)) => {
                status = 1;
                println!("  {}: {} breaks in {} steps ({counts})", w.name, v.property, steps.len());
                println!("    {v}");
                for (i, a) in steps.iter().enumerate() {
                    println!("    {:>3}  {}", i + 1, crate::action_text::format(a));
                }
                let trace = crate::tracefile::Trace {
                    title: format!(
                        "{client}: {} breaks in world {}; shortest schedule, check --client",
                        v.property, w.name
                    ),
                    config: w.config,
                    seed: Some(0),
                    actions: steps.clone(),
                    expect: crate::tracefile::Verdict::Breaks { property: v.property, step: steps.len() },
                    client: client.clone(),
                };
                traces.push((
                    format!("{}.{}.{}.json", client.replace(',', "."), v.property.name(), w.name),
                    trace,
                ));
            }
            None if run.cut => {
                status = status.max(2);
                println!(
                    "  {}: incomplete: --max-states {} schedules ran out at depth {} ({counts})",
                    w.name,
                    args.max_states,
                    run.depth + 1
                );
            }
            None => println!("  {}: every property holds to depth {} ({counts})", w.name, run.depth),
        }
        eprintln!("listwatch check: {}: {took:.1} s", w.name);
    }
    if let Some(dir) = &args.out {
        if let Err(e) = write_traces(dir, traces.iter().map(|(name, t)| (name.as_str(), t))) {
            eprintln!("listwatch: --out: {e}");
            return 2;
        }
    }
    status
}

fn write_traces<'a>(
    dir: &std::path::Path,
    traces: impl IntoIterator<Item = (&'a str, &'a crate::tracefile::Trace)>,
) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    for (name, trace) in traces {
        let path = dir.join(name);
        trace.save(&path).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(())
}

/// Run `explore`: serve the Explorer over one world until the process is stopped.
pub fn explore(explore: &ExploreArgs) -> i32 {
    let args = explore.clone().into_check_args();
    if let Err(e) = std::net::TcpListener::bind(args.addr) {
        eprintln!("listwatch: --addr: cannot listen on {}: {e}", args.addr);
        return 2;
    }
    let world = args.worlds(args.flaws())[0];
    println!(
        "listwatch explore: scope {}, world {}, flaws: {}, at http://{}/",
        args.scope().name(),
        world.name,
        args.flaws(),
        args.addr
    );
    crate::checker::explore(world.config, args.addr);
    0
}
