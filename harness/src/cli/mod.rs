//! The `listwatch` command line, on clap (derive): the commands, their arguments, and one-line errors.
//! It is the top layer: it reads arguments, calls the drivers and prints their reports; nothing else
//! imports it.
//!
//! Every usage error is one line on stderr naming the argument and what is wrong (with clap's
//! suggestion for a typo), and exit 2; `--help` and `--version` print to stdout and exit 0.

pub mod check;
pub mod clients;
pub mod conformance;
pub mod simulate;
pub mod simulate_server;
pub mod traces;
pub mod values;

use std::fmt;
use std::io::Write as _;

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{Parser, Subcommand};

pub use check::{corpus_name, CheckArgs};

/// A bad command line: one line, naming the argument and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

const ABOUT: &str = "prove or break Kubernetes-style list/watch caches";

const AFTER_HELP: &str = "\
With no command, listwatch checks the correct system in the default scope (listwatch check).

exit status: 0 every property holds and every witness is reached (bugs: every flaw caught and the
correct system verified; replay: every trace reproduces), 1 a property is violated (the shortest trace is
printed; bugs: a flaw not caught or the correct system not verified; replay: a verdict changed), 2 bad
arguments, an unreadable file or a limit hit, 3 every property holds but a witness was not reached, so
the pass would be vacuous.";

/// The command line.
#[derive(Debug, Parser)]
#[command(name = "listwatch", version, about = ABOUT, after_help = AFTER_HELP)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Explore every interleaving of a scope's worlds and judge every property
    #[command(after_long_help = check::CHECK_HELP)]
    Check(CheckArgs),
    /// Check that every catalogue flaw is caught, then verify the correct system
    #[command(after_long_help = check::BUGS_HELP)]
    Bugs(check::BugsArgs),
    /// Serve stateright's Explorer (a web UI to step through a world) until stopped
    Explore(check::ExploreArgs),
    /// Run seeded swarm simulations: faults, then healing; shrink every failure into a trace
    #[command(after_long_help = simulate::SIMULATE_HELP)]
    Simulate(simulate::SimulateArgs),
    /// Merge the shards of one campaign (`simulate --shard K/N --json`) into the single run's summary
    #[command(after_long_help = simulate::MERGE_HELP)]
    Merge(simulate::MergeArgs),
    /// List the clients that can be put under test (`simulate --client`)
    Clients,
    /// Render a trace file
    Show(traces::ShowArgs),
    /// Check that trace files still give their recorded verdict
    Replay(traces::ReplayArgs),
    /// Check the store model against a real system, answer by answer
    Conformance(conformance::ConformanceArgs),
}

/// Parse a whole command line (without the program name).
pub fn parse_command(args: &[String]) -> Result<Option<Command>, clap::Error> {
    let argv = std::iter::once("listwatch".to_string()).chain(args.iter().cloned());
    Cli::try_parse_from(argv).map(|cli| cli.command)
}

/// Parse the options of `check`, `bugs` or `explore` (for tests and scripts).
pub fn parse(command: &str, args: &[String]) -> Result<CheckArgs, UsageError> {
    let mut all = vec![command.to_string()];
    all.extend(args.iter().cloned());
    match parse_command(&all) {
        Ok(Some(Command::Check(a))) => Ok(a),
        Ok(Some(Command::Bugs(b))) => Ok(b.into_check_args()),
        Ok(Some(Command::Explore(e))) => Ok(e.into_check_args()),
        Ok(_) => Err(UsageError(format!("{command}: not a command that checks a scope"))),
        Err(e) => Err(usage_error(&e, Some(command))),
    }
}

/// SIGINT and SIGTERM stop a running check, which prints its partial report; a second one ends the
/// process at once.
fn handle_signals() {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let flag = crate::checker::interrupted();
    for signal in [SIGINT, SIGTERM] {
        let _ = signal_hook::flag::register_conditional_shutdown(signal, 130, std::sync::Arc::clone(flag));
        let _ = signal_hook::flag::register(signal, std::sync::Arc::clone(flag));
    }
}

/// Dispatch a whole command line (without the program name); returns the exit status.
pub fn run(args: &[String]) -> i32 {
    handle_signals();
    let command = match parse_command(args) {
        Ok(c) => c,
        // A reader that stops early (`| head`) is not an error of ours.
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            let _ = write!(std::io::stdout(), "{e}");
            return 0;
        }
        Err(e) if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = write!(std::io::stdout(), "{e}");
            return 2;
        }
        Err(e) => {
            let sub = args.first().filter(|a| !a.starts_with('-')).map(String::as_str);
            eprintln!("listwatch: {}", usage_error(&e, sub));
            return 2;
        }
    };
    let result = match command {
        None => Ok(check::check(&CheckArgs::default())),
        Some(Command::Check(a)) => Ok(check::check(&a)),
        Some(Command::Bugs(b)) => Ok(check::bugs(&b)),
        Some(Command::Explore(e)) => Ok(check::explore(&e)),
        Some(Command::Simulate(s)) if s.server.is_some() => simulate_server::simulate(&s),
        Some(Command::Simulate(s)) => simulate::simulate(&s),
        Some(Command::Merge(m)) => simulate::merge(&m),
        Some(Command::Clients) => {
            for (name, about) in clients::ClientChoice::all() {
                println!("{name:34} {about}");
            }
            let options = clients::ClientChoice::options();
            if !options.is_empty() {
                println!("\nthe client-go configurations take, after their name:");
                for (option, about) in options {
                    println!("  {option:32} {about}");
                }
            }
            let go = clients::ClientChoice::go_specs();
            if !go.is_empty() {
                println!("\na Go package's own code (harness/listwatchtest; needs Go):");
                for (spec, about) in go {
                    println!("  {spec:32} {about}");
                }
            }
            Ok(0)
        }
        Some(Command::Show(s)) => traces::show(&s),
        Some(Command::Replay(r)) => traces::replay_files(&r),
        Some(Command::Conformance(c)) => conformance::conformance(&c),
    };
    result.unwrap_or_else(|e| {
        eprintln!("listwatch: {e}");
        2
    })
}

/// A clap error as one line in listwatch's form: `ARG: what is wrong`, with clap's suggestion.
fn usage_error(e: &clap::Error, command: Option<&str>) -> UsageError {
    let context = |kind: ContextKind| match e.get(kind) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        Some(ContextValue::Strings(v)) => v.first().cloned(),
        _ => None,
    };
    // `--scope <SCOPE>` → `--scope`; `<FILE>` → `FILE`.
    let arg = context(ContextKind::InvalidArg).map(|a| {
        let name = a.split(' ').next().unwrap_or(&a).to_string();
        name.trim_matches(|c| c == '<' || c == '>' || c == '.').to_string()
    });
    let suggestion = context(ContextKind::SuggestedArg)
        .or_else(|| context(ContextKind::SuggestedSubcommand))
        .map(|s| format!(" (did you mean '{s}'?)"))
        .unwrap_or_default();
    let command = command.unwrap_or("listwatch");
    let line = match (e.kind(), &arg) {
        (ErrorKind::ValueValidation, Some(arg)) => {
            let why = std::error::Error::source(e).map(|s| s.to_string()).unwrap_or_default();
            format!("{arg}: {why}")
        }
        (ErrorKind::InvalidValue, Some(arg)) => {
            let value = context(ContextKind::InvalidValue).unwrap_or_default();
            if value.is_empty() {
                format!("{arg}: missing value")
            } else {
                let known = match e.get(ContextKind::ValidValue) {
                    Some(ContextValue::Strings(v)) => format!(" (known: {})", v.join(", ")),
                    _ => String::new(),
                };
                format!("{arg}: unknown value '{value}'{known}")
            }
        }
        (ErrorKind::UnknownArgument, Some(arg)) => format!("{command}: unknown argument '{arg}'{suggestion}"),
        (ErrorKind::InvalidSubcommand, _) => {
            let name = context(ContextKind::InvalidSubcommand).unwrap_or_default();
            format!("unknown command '{name}'{suggestion} (try 'listwatch --help')")
        }
        (ErrorKind::MissingRequiredArgument, Some(arg)) => format!("{command}: missing {arg}"),
        (ErrorKind::ArgumentConflict, Some(arg)) => format!("{command}: {arg} cannot be given twice"),
        _ => {
            let rendered = e.render().to_string();
            let first = rendered.lines().next().unwrap_or("bad arguments");
            first.trim_start_matches("error: ").to_string()
        }
    };
    UsageError(line)
}
