//! The `listwatch` command line: argument parsing with one-line errors, and the commands. It is the top
//! layer: it reads arguments, calls the drivers and prints their reports; nothing else imports it.

pub mod simulate;
pub mod traces;

use std::fmt;
use std::time::Duration;

use listwatch_model::{Flaw, Flaws};

use crate::checker::{run as check_world, Limits, Outcome, Search};
use crate::report::{self, Run};
use crate::scope::{worlds, Scope, World, WORLD_NAMES};

/// A bad command line: one line, naming the argument and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

pub const HELP: &str = "\
listwatch: prove or break Kubernetes-style list/watch caches

usage:
  listwatch check [--scope small|default|large] [--world NAME] [--flaw NAME ...] [--checker bfs|dfs]
                  [--max-states N] [--time-limit SECS] [--json]
  listwatch bugs [--scope small|default|large] [--corpus DIR] [--json]
  listwatch explore [--scope small|default|large] [--flaw NAME ...] [--addr 127.0.0.1:3000]
  listwatch simulate [--seeds N] [--seed S] [--shard K/N] [--steps M] [--flaw NAME ...]
                     [--out DIR] [--json]
  listwatch show FILE [--format text|mermaid|json]
  listwatch replay FILE...
  listwatch help

check explores every interleaving of a scope and judges every property; with no flags it checks the
correct system in the default scope. bugs checks every catalogue flaw, then the correct system;
--corpus DIR writes each flaw's shortest trace there as a trace file.
explore serves stateright's Explorer (a web UI to step through the list/watch world) until stopped.

simulate runs seeds (default 0..100; --seed S alone runs S only): each draws a world and a fault mix,
takes M steps with faults (default 200), then heals and must come to rest with every cache equal to
etcd. The first failure of each property is shrunk and written to --out (default
target/listwatch/failures). --shard K/N runs every Nth seed from the Kth (1-based), so N machines can
share a campaign. The output is the same bytes for the same arguments; timings go to stderr.
show renders a trace file; replay checks that trace files still give their recorded verdict (exit 1
if one changed) and that the correct reflector holds on the same steps. A file that cannot be read
(not JSON, another version, an unknown or disabled action) is named with the position, exit 2.

worlds of every scope (--world NAME checks one of them): list-watch (the scope's own shape, below);
client-manager (2 clusters, 2 requests, 1 cluster pause); ha-mid-upgrade (1 key, 1 write, 1 write to
another resource, 1 fault, 2 API servers of which only apiserver-1 gets etcd progress notifications);
slow-etcd-watcher (1 key, 3 writes, an etcd watch that buffers 1 event, etcd 3.5.16+ tombstones);
two-reflectors (1 key, 1 write, 2 reflectors). The scopes:
  small    1 key, 2 writes, 1 compaction, 1 fault, 1 API server, 1 reflector, cache window 2
  default  2 keys, 3 writes, 1 compaction, 1 fault, 1 API server, 1 reflector, cache window 2
  large    2 keys, 4 writes, 1 compaction, 2 faults, 2 API servers, 1 reflector, cache window 2
  (relist-from-stale-cache and retry-too-large-rv add a second API server; retry-too-large-rv runs its
  own story: 1 key, 1 write, 1 write to another resource, 2 faults)

flaws (--flaw, repeatable):
  stale-delete-rv, nil-prevkv-dropped, relist-on-timeout, stop-on-close, spin-on-close,
  sync-under-lock, relist-from-stale-cache, retry-too-large-rv, replace-keeps-missing

--max-states bounds the states generated (revisits included; default 20000000), --time-limit the
seconds (default 600); a run stopped by either is incomplete and exits 2, whatever it found so far.

exit status: 0 every property holds and every witness is reached (bugs: every flaw caught and the
correct system verified), 1 a property is violated (the shortest trace is printed; bugs: a flaw not
caught or the correct system not verified), 2 bad arguments or a limit hit, 3 every property holds but
a witness was not reached, so the pass would be vacuous";

/// Options shared by `check` and `bugs`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Args {
    pub scope: Scope,
    pub flaws: Flaws,
    pub search: Search,
    pub max_states: usize,
    pub time_limit_secs: u64,
    pub json: bool,
    pub addr: std::net::SocketAddr,
    /// `bugs --corpus DIR`: write each flaw's shortest trace there.
    pub corpus: Option<std::path::PathBuf>,
    /// `--world NAME`: only this world of the scope.
    pub world: Option<&'static str>,
}

impl Default for Args {
    fn default() -> Self {
        Args {
            scope: Scope::Default,
            flaws: Flaws::NONE,
            search: Search::Bfs,
            max_states: 20_000_000,
            time_limit_secs: 600,
            json: false,
            addr: std::net::SocketAddr::from(([127, 0, 0, 1], 3000)),
            corpus: None,
            world: None,
        }
    }
}

impl Args {
    /// The worlds this command checks, with `flaws` on.
    pub fn worlds(&self, flaws: Flaws) -> Vec<World> {
        let mut all = worlds(self.scope, flaws);
        all.retain(|w| self.world.is_none_or(|name| w.name == name));
        all
    }

    /// What the report says was run.
    pub fn run(&self, stop_at_violation: bool) -> Run {
        Run {
            scope: self.scope,
            flaws: self.flaws,
            search: self.search,
            limits: self.limits(stop_at_violation),
        }
    }

    pub fn limits(&self, stop_at_violation: bool) -> Limits {
        Limits {
            max_states: self.max_states,
            time_limit: Duration::from_secs(self.time_limit_secs),
            stop_at_violation,
        }
    }
}

fn positive(name: &str, v: &str) -> Result<u64, UsageError> {
    v.parse::<u64>()
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| UsageError(format!("{name}: '{v}' is not a positive whole number")))
}

/// Parse the options of `command`; `bugs` takes no `--flaw` or `--checker`.
pub fn parse(command: &str, args: &[String]) -> Result<Args, UsageError> {
    let mut parsed = Args::default();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut value =
            |name: &str| it.next().cloned().ok_or_else(|| UsageError(format!("{name}: missing value")));
        match arg.as_str() {
            "--scope" => {
                let v = value("--scope")?;
                parsed.scope = Scope::parse(&v).ok_or_else(|| {
                    UsageError(format!("--scope: unknown scope '{v}' (known: small, default, large)"))
                })?;
            }
            "--world" if command == "check" || command == "explore" => {
                let v = value("--world")?;
                let known = WORLD_NAMES.join(", ");
                parsed.world =
                    Some(WORLD_NAMES.into_iter().find(|n| *n == v).ok_or_else(|| {
                        UsageError(format!("--world: unknown world '{v}' (known: {known})"))
                    })?);
            }
            "--addr" if command == "explore" => {
                let v = value("--addr")?;
                parsed.addr = v.parse().map_err(|_| {
                    UsageError(format!("--addr: '{v}' is not an address like 127.0.0.1:3000"))
                })?;
            }
            "--flaw" if command == "check" || command == "explore" => {
                let v = value("--flaw")?;
                let flaw: Flaw = v.parse().map_err(|e| UsageError(format!("--flaw: {e}")))?;
                parsed.flaws = parsed.flaws.with(flaw);
            }
            "--checker" if command == "check" => {
                parsed.search = match value("--checker")?.as_str() {
                    "bfs" => Search::Bfs,
                    "dfs" => Search::Dfs,
                    v => {
                        return Err(UsageError(format!("--checker: unknown checker '{v}' (known: bfs, dfs)")))
                    }
                };
            }
            "--max-states" => {
                let v = value("--max-states")?;
                parsed.max_states = positive("--max-states", &v)? as usize;
            }
            "--time-limit" => parsed.time_limit_secs = positive("--time-limit", &value("--time-limit")?)?,
            "--json" => parsed.json = true,
            "--corpus" if command == "bugs" => parsed.corpus = Some(value("--corpus")?.into()),
            other => return Err(UsageError(format!("{command}: unknown argument '{other}'"))),
        }
    }
    Ok(parsed)
}

/// The properties whose witness no outcome reached.
pub fn unwitnessed(outcomes: &[Outcome]) -> Vec<listwatch_properties::Property> {
    listwatch_properties::Property::ALL
        .into_iter()
        .filter(|p| !outcomes.iter().any(|o| o.verdicts.iter().any(|v| v.property == *p && v.witnessed)))
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
pub fn check(args: &Args) -> i32 {
    let worlds = args.worlds(args.flaws);
    let outcomes: Vec<Outcome> =
        worlds.iter().map(|w| check_world(w.config, args.search, args.limits(false))).collect();
    let text = if args.json {
        report::check_json(&args.run(false), &worlds, &outcomes)
    } else {
        report::check_text(&args.run(false), &worlds, &outcomes)
    };
    println!("{text}");
    if outcomes.iter().any(|o| o.violated().next().is_some()) {
        1
    } else if outcomes.iter().any(|o| !o.complete) {
        eprintln!(
            "listwatch: a limit (--max-states {} or --time-limit {}) stopped the check",
            args.max_states, args.time_limit_secs
        );
        2
    } else if vacuous(&outcomes) {
        3
    } else {
        0
    }
}

/// Run `bugs`: every flaw must be caught, then the correct system verified.
pub fn bugs(args: &Args) -> i32 {
    let caught = report::catch_all(&args.run(true));
    let correct_worlds = worlds(args.scope, Flaws::NONE);
    let correct: Vec<Outcome> =
        correct_worlds.iter().map(|w| check_world(w.config, Search::Bfs, args.limits(false))).collect();
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
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    for c in caught {
        if let Some(trace) = &c.trace {
            let path = dir.join(corpus_name(c.flaw));
            trace.save(&path).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
    }
    Ok(())
}

/// Run `explore`: serve the Explorer over the list/watch world until the process is stopped.
pub fn explore(args: &Args) -> i32 {
    if let Err(e) = std::net::TcpListener::bind(args.addr) {
        eprintln!("listwatch: --addr: cannot listen on {}: {e}", args.addr);
        return 2;
    }
    let world = args.worlds(args.flaws)[0];
    println!(
        "listwatch explore: scope {}, flaws: {}, at http://{}/",
        args.scope.name(),
        args.flaws,
        args.addr
    );
    crate::checker::explore(world.config, args.addr);
    0
}

/// Dispatch a whole command line (without the program name); returns the exit status.
pub fn run(args: &[String]) -> i32 {
    let rest = args.get(1..).unwrap_or(&[]);
    let result = match args.first().map(String::as_str) {
        None => Ok(check(&Args::default())),
        Some("check") => parse("check", rest).map(|a| check(&a)),
        Some("bugs") => parse("bugs", rest).map(|a| bugs(&a)),
        Some("explore") => parse("explore", rest).map(|a| explore(&a)),
        Some("simulate") => simulate::simulate(rest),
        Some("show") => traces::show(rest),
        Some("replay") => traces::replay_files(rest),
        Some("help" | "--help" | "-h") => {
            println!("{HELP}");
            Ok(0)
        }
        Some(other) => Err(UsageError(format!("unknown command '{other}' (try 'listwatch help')"))),
    };
    result.unwrap_or_else(|e| {
        eprintln!("listwatch: {e}");
        2
    })
}
