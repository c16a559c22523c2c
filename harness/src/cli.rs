//! The `listwatch` command line: argument parsing with one-line errors, and the commands.

use std::fmt;
use std::time::Instant;

use listwatch_model::{Flaw, Flaws};

use crate::scope::{config_for, describe, Scope};
use crate::walk::walk;

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
  listwatch check [--scope small|default|large] [--flaw NAME ...] [--max-states N]
  listwatch bugs
  listwatch help

scopes (what the exhaustive walk covers):
  small    1 key, 2 writes, 1 compaction, 1 fault, 1 API server, 1 reflector, cache window 2
  default  2 keys, 3 writes, 1 compaction, 1 fault, 1 API server, 1 reflector, cache window 2
  large    2 keys, 4 writes, 1 compaction, 2 faults, 2 API servers, 1 reflector, cache window 2

flaws (--flaw, repeatable):
  stale-delete-rv, nil-prevkv-dropped, relist-on-timeout, stop-on-close, spin-on-close,
  sync-under-lock, relist-from-stale-cache, retry-too-large-rv, replace-keeps-missing

exit status: 0 done, 2 bad arguments or a limit hit";

/// A parsed `check`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckArgs {
    pub scope: Scope,
    pub flaws: Flaws,
    pub max_states: usize,
}

pub fn parse_check(args: &[String]) -> Result<CheckArgs, UsageError> {
    let mut parsed = CheckArgs { scope: Scope::Default, flaws: Flaws::NONE, max_states: 5_000_000 };
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
            "--flaw" => {
                let v = value("--flaw")?;
                let flaw: Flaw = v.parse().map_err(|e| UsageError(format!("--flaw: {e}")))?;
                parsed.flaws = parsed.flaws.with(flaw);
            }
            "--max-states" => {
                let v = value("--max-states")?;
                parsed.max_states = v.parse().ok().filter(|n| *n > 0).ok_or_else(|| {
                    UsageError(format!("--max-states: '{v}' is not a positive whole number"))
                })?;
            }
            other => return Err(UsageError(format!("check: unknown argument '{other}'"))),
        }
    }
    Ok(parsed)
}

/// Run `check`; returns the exit status.
pub fn check(args: &CheckArgs) -> i32 {
    let config = config_for(args.scope, args.flaws);
    println!("scope {}: {}", args.scope.name(), describe(&config));
    println!("flaws: {}", config.flaws);
    let started = Instant::now();
    let report = walk(config, args.max_states);
    let seconds = started.elapsed().as_secs_f64();
    let rate = report.states as f64 / seconds.max(1e-9);
    println!(
        "walked {} states to depth {} in {seconds:.2} s ({rate:.0} states/s): every enabled step applied without a panic",
        report.states, report.depth
    );
    println!("properties: not judged by this walk");
    if report.truncated {
        eprintln!("listwatch: --max-states {} reached before the walk was complete", args.max_states);
        return 2;
    }
    0
}

/// Run `bugs`: the catalogue, one line per flaw.
pub fn bugs() -> i32 {
    println!("{:<24} {:<22} {:<10}", "flaw", "upstream", "component");
    for flaw in Flaw::ALL {
        println!("{:<24} {:<22} {:<10}", flaw.name(), flaw.upstream(), format!("{:?}", flaw.component()));
    }
    0
}

/// Dispatch a whole command line (without the program name); returns the exit status.
pub fn run(args: &[String]) -> i32 {
    let result = match args.first().map(String::as_str) {
        None | Some("check") => parse_check(args.get(1..).unwrap_or(&[])).map(|a| check(&a)),
        Some("bugs") if args.len() == 1 => Ok(bugs()),
        Some("bugs") => Err(UsageError(format!("bugs: unknown argument '{}'", args[1]))),
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
