//! `listwatch conformance etcd`: the store model against a real etcd; `conformance apiserver`
//! (`conformance/apiserver.rs`): the API server model against the real watch cache; `conformance
//! http` (`conformance/http.rs`): the contract over HTTP against any server.

use std::path::{Path, PathBuf};

use super::values::{at_least_one, whole};
use super::UsageError;
use crate::conformance::{EtcdToStart, Plant, Sequence};

pub const CONFORMANCE_HELP: &str = "\
Seeded sequences of puts, deletes, multi-key deletes at one revision (E8), compactions, ranges at a
revision and watches with prev_kv and progress requests are applied to the model's store and to a real
etcd side by side; every answer and every watch message is compared. A difference is shrunk to a minimal
sequence, printed, and written to --out; --replay FILE runs such a file again.

Without --endpoint, listwatch starts its own etcd (from PATH or /usr/bin) on free loopback ports with a
fresh data directory, and stops and removes it when done, on error and on Ctrl-C. This command needs a
build with the etcd feature and etcd installed: scripts/install-etcd, then
  cargo run --release --features etcd -- conformance etcd

exit status: 0 no unexplained difference, 1 a difference (the shrunk sequence is printed and written),
2 bad arguments, etcd cannot be started or reached, or the run was interrupted.";

#[derive(Clone, Debug, PartialEq, Eq, clap::Args)]
pub struct ConformanceArgs {
    #[command(subcommand)]
    pub against: Against,
}

#[derive(Clone, Debug, PartialEq, Eq, clap::Subcommand)]
pub enum Against {
    /// Compare the store model with a real etcd
    #[command(after_long_help = CONFORMANCE_HELP)]
    Etcd(EtcdArgs),
    /// Compare the API server model with the real Kubernetes watch cache over a real etcd
    #[command(after_long_help = apiserver::APISERVER_HELP)]
    Apiserver(apiserver::ApiserverArgs),
    /// Check the list/watch contract over HTTP against any Kubernetes API server, the model as the
    /// oracle (k8s.io/sample-apiserver started here without --endpoint)
    #[command(after_long_help = http::HTTP_HELP)]
    Http(http::HttpArgs),
}

mod apiserver;
pub(crate) mod http;

pub(super) fn plant(v: &str) -> Result<Plant, String> {
    match v {
        "none" => Ok(Plant::None),
        "compaction-keeps-one-too-few" => Ok(Plant::CompactionKeepsOneRevisionTooFew),
        "consistent-list-one-behind" => Ok(Plant::ConsistentListOneRevisionBehind),
        "consistent-read-lags" => Ok(Plant::ConsistentReadLags),
        "relist-ignored" => Ok(Plant::RelistIgnored),
        "timeout-ignored" => Ok(Plant::TimeoutIgnored),
        "heartbeat-missing" => Ok(Plant::HeartbeatMissing),
        _ => Err(format!(
            "'{v}' is not a planted bug (known: none, compaction-keeps-one-too-few, consistent-list-one-behind, \
             consistent-read-lags, relist-ignored, timeout-ignored, heartbeat-missing)"
        )),
    }
}

fn endpoint(v: &str) -> Result<String, String> {
    if v.starts_with("http://") || v.starts_with("https://") {
        Ok(v.to_string())
    } else {
        Err(format!("'{v}' is not a URL (e.g. http://127.0.0.1:2379)"))
    }
}

pub(super) fn max_ops(v: &str) -> Result<usize, String> {
    v.parse::<usize>()
        .ok()
        .filter(|n| (4..=500).contains(n))
        .ok_or_else(|| format!("'{v}' is not a number in 4..=500"))
}

/// `conformance etcd`'s arguments.
#[derive(Clone, Debug, PartialEq, Eq, clap::Args)]
pub struct EtcdArgs {
    /// How many sequences
    #[arg(long, value_name = "N", default_value = "500", value_parser = at_least_one)]
    pub sequences: u64,
    /// The seed of the sequences
    #[arg(long, value_name = "S", default_value = "0", value_parser = whole)]
    pub seed: u64,
    /// The most operations in one sequence
    #[arg(long, value_name = "N", default_value = "30", value_parser = max_ops)]
    pub max_ops: usize,
    /// An etcd you started, instead of one of listwatch's own
    #[arg(long, value_name = "URL", value_parser = endpoint)]
    pub endpoint: Option<String>,
    /// Which etcd to start: 3.4 (Debian's 3.4.23, scripts/install-etcd), or 3.5, 3.6, 3.7 (the newest
    /// pinned release of each) or a release 3.M.P of those, built by scripts/install-etcd vX.Y.Z
    #[arg(long, value_name = "VERSION", default_value = "3.4", value_parser = EtcdToStart::parse)]
    pub etcd: EtcdToStart,
    /// Print the summary as JSON on stdout
    #[arg(long)]
    pub json: bool,
    /// Run one sequence file (as --out writes them) instead of generated ones
    #[arg(long, value_name = "FILE", conflicts_with_all = ["sequences", "seed"])]
    pub replay: Option<PathBuf>,
    /// Where to write a shrunk difference
    #[arg(long, value_name = "FILE", default_value = "target/listwatch/conformance/etcd-difference.json")]
    pub out: PathBuf,
    /// Plant a store-model bug, to see the run catch it
    #[arg(long, value_name = "BUG", default_value = "none", value_parser = plant, hide = true)]
    pub plant: Plant,
}

/// Read a sequence file for `--replay`; the error names the file.
pub fn read_sequence(path: &Path) -> Result<Sequence, UsageError> {
    let text = std::fs::read_to_string(path).map_err(|e| UsageError(format!("{}: {e}", path.display())))?;
    Sequence::parse(&text).map_err(|e| UsageError(format!("{}: {e}", path.display())))
}

/// How a conformance run ends, after its summary is printed: a shrunk difference written whole to
/// `out` (exit 1, or 2 if it cannot be written), an interrupted run (exit 2, incomplete), or 0.
pub fn finish(command: &str, out: &Path, shrunk: Option<String>, interrupted: bool) -> i32 {
    if let Some(text) = shrunk {
        if let Err(e) = write_whole(out, &text) {
            eprintln!("listwatch: {e}");
            return 2;
        }
        eprintln!("the shrunk sequence is in {}; replay it with --replay {}", out.display(), out.display());
        return 1;
    }
    if interrupted {
        eprintln!("{command}: interrupted, incomplete");
        return 2;
    }
    0
}

/// A run's progress on stderr: a bar on a terminal, else a line every 5 s.
#[derive(Debug)]
pub struct Progress {
    bar: Option<indicatif::ProgressBar>,
    total: u64,
    last_line: std::time::Instant,
}

impl Progress {
    pub fn new(total: u64) -> Self {
        use std::io::IsTerminal;
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = indicatif::ProgressBar::new(total);
            if let Ok(style) =
                indicatif::ProgressStyle::with_template("  {bar:30} {pos}/{len} sequences ({elapsed})")
            {
                bar.set_style(style);
            }
            bar
        });
        Progress { bar, total, last_line: std::time::Instant::now() }
    }

    pub fn tick(&mut self, done: u64) {
        match &self.bar {
            Some(bar) => bar.set_position(done),
            None if self.last_line.elapsed() >= std::time::Duration::from_secs(5) => {
                self.last_line = std::time::Instant::now();
                eprintln!("  {done}/{} sequences", self.total);
            }
            None => {}
        }
    }

    pub fn finish(self) {
        if let Some(bar) = self.bar {
            bar.finish_and_clear();
        }
    }
}

/// Write `text` to `path` whole, or not at all (through a temporary file in the same directory).
pub fn write_whole(path: &Path, text: &str) -> Result<(), String> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let tmp = path.with_extension("json.partial");
    std::fs::write(&tmp, text).map_err(|e| format!("{}: {e}", path.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(not(feature = "etcd"))]
pub fn conformance(args: &ConformanceArgs) -> Result<i32, UsageError> {
    let etcd = match &args.against {
        Against::Etcd(etcd) => etcd,
        Against::Apiserver(a) => return apiserver::conformance(a),
        Against::Http(a) => return http::conformance(a),
    };
    if let Some(path) = &etcd.replay {
        read_sequence(path)?;
    }
    Err(UsageError(
        "conformance etcd: this listwatch was built without the etcd feature; run scripts/install-etcd, then \
         cargo run --release --features etcd -- conformance etcd"
            .into(),
    ))
}

#[cfg(feature = "etcd")]
pub fn conformance(args: &ConformanceArgs) -> Result<i32, UsageError> {
    match &args.against {
        Against::Etcd(etcd) => Ok(run::etcd(etcd)),
        Against::Apiserver(a) => apiserver::conformance(a),
        Against::Http(a) => http::conformance(a),
    }
}

#[cfg(feature = "etcd")]
mod run {
    use std::sync::atomic::Ordering;
    use std::time::{Duration, Instant};

    use super::{finish, read_sequence, EtcdArgs};
    use crate::conformance::compare::{compare, other};
    use crate::conformance::etcd::{EtcdProcess, EtcdStore};
    use crate::conformance::{Campaign, Difference, Sequence, StoreUnderTest, Summary};
    use listwatch_model::store::TombstonePolicy;

    fn policy_name(p: TombstonePolicy) -> &'static str {
        match p {
            TombstonePolicy::DropAtCompaction => {
                "etcd < 3.5.16: a tombstone at the compaction revision is dropped"
            }
            TombstonePolicy::KeepAtCompactRev => {
                "etcd >= 3.5.16: a tombstone at the compaction revision is kept"
            }
        }
    }

    fn listing(sequence: &Sequence, diff: &Difference) -> String {
        let mut out = String::new();
        for (i, op) in sequence.ops.iter().enumerate() {
            out.push_str(&format!("    {i:>2}  {op}\n"));
        }
        out.push_str(&format!(
            "    at {}\n      model: {}\n      etcd:  {}\n",
            diff.place, diff.model, diff.store
        ));
        out
    }

    pub fn etcd(args: &EtcdArgs) -> i32 {
        let started = Instant::now();
        // A bad sequence file is an error before any etcd is started.
        let replay = match args.replay.as_ref().map(|p| read_sequence(p).map(|s| (p, s))).transpose() {
            Ok(r) => r,
            Err(e) => {
                eprintln!("listwatch: {e}");
                return 2;
            }
        };
        // Our own etcd lives as long as this function: dropped (stopped, its directory removed) on every
        // return, an error or an interruption included.
        let process = match &args.endpoint {
            Some(_) => None,
            None => match EtcdProcess::start_version(&args.etcd, Duration::from_secs(20)) {
                Ok(p) => Some(p),
                Err(e) => {
                    eprintln!("listwatch: conformance etcd: {e}");
                    return 2;
                }
            },
        };
        let endpoint = args
            .endpoint
            .clone()
            .or_else(|| process.as_ref().map(|p| p.endpoint.clone()))
            .unwrap_or_default();
        let mut store = match EtcdStore::connect(&endpoint) {
            Ok(s) => s,
            Err(e) => {
                eprintln!(
                    "listwatch: conformance etcd: {e} (is etcd running? scripts/install-etcd installs it)"
                );
                return 2;
            }
        };
        let tombstones = store.tombstones();
        let mut process = process;
        let mut died = |e: crate::conformance::SideError| {
            let dead = process.as_mut().is_some_and(|p| !p.alive());
            let why = if dead { format!("etcd exited: {e}") } else { e.to_string() };
            eprintln!("listwatch: conformance etcd: {why}");
            2
        };
        let started_by = if args.endpoint.is_some() { "" } else { " (started by listwatch)" };
        if let Some((path, sequence)) = &replay {
            println!(
                "conformance: {}{started_by}, {} operations from {}",
                store.describe(),
                sequence.ops.len(),
                path.display()
            );
            return match compare(sequence, tombstones, args.plant, &mut store) {
                Ok((None, model, _)) => {
                    println!("  no difference ({} watch messages compared)", model.messages());
                    0
                }
                Ok((Some(diff), _, _)) => {
                    print!("  difference:\n{}", listing(sequence, &diff));
                    1
                }
                Err(e) => died(e),
            };
        }
        let campaign =
            Campaign { seed: args.seed, sequences: args.sequences, max_ops: args.max_ops, plant: args.plant };
        let stop = crate::checker::interrupted();
        let mut progress = super::Progress::new(args.sequences);
        let summary = campaign.run(&mut store, tombstones, stop, |done| progress.tick(done));
        progress.finish();
        let summary = match summary {
            Ok(s) => s,
            Err(e) => return died(e),
        };
        let elapsed = started.elapsed();
        if args.json {
            println!("{}", json(args, &store, tombstones, &summary));
        } else {
            print!("{}", text(&store, started_by, tombstones, &summary));
        }
        eprintln!("conformance etcd: {} sequences in {:.1} s", summary.sequences, elapsed.as_secs_f64());
        let shrunk = summary.difference.as_ref().map(|(sequence, _)| {
            let mut sequence = sequence.clone();
            sequence.seed = Some(args.seed);
            sequence.to_json()
        });
        finish("conformance etcd", &args.out, shrunk, summary.interrupted || stop.load(Ordering::Relaxed))
    }

    fn text(store: &EtcdStore, started_by: &str, tombstones: TombstonePolicy, s: &Summary) -> String {
        let mut out = format!(
            "conformance: {}{started_by} against the model ({})\n",
            store.describe(),
            policy_name(tombstones)
        );
        let differences = usize::from(s.difference.is_some());
        out.push_str(&format!(
            "  sequences {}, operations {}, watch messages {}, unexplained differences {differences}{}\n",
            s.sequences,
            s.operations,
            s.messages,
            if s.interrupted { " (interrupted: incomplete)" } else { "" }
        ));
        if let Some((sequence, diff)) = &s.difference {
            out.push_str(&format!(
                "  difference, shrunk to {} operations:\n{}",
                sequence.ops.len(),
                listing(sequence, diff)
            ));
        }
        out.push_str(&format!(
            "  known difference (E4, etcd#18274): the model's other policy ({}) differs from this etcd in {} of {} sequences",
            policy_name(other(tombstones)),
            s.other_policy_differs,
            s.sequences
        ));
        match &s.other_policy_example {
            Some((sequence, diff)) => out.push_str(&format!("; the shortest:\n{}", listing(sequence, diff))),
            None => out.push('\n'),
        }
        out
    }

    fn json(
        args: &EtcdArgs,
        store: &EtcdStore,
        tombstones: TombstonePolicy,
        s: &Summary,
    ) -> serde_json::Value {
        let diff = |d: &Option<(Sequence, Difference)>| {
            d.as_ref().map(|(seq, diff)| {
                serde_json::json!({ "ops": seq.ops, "place": diff.place, "model": diff.model, "etcd": diff.store })
            })
        };
        serde_json::json!({
            "etcd": store.version(),
            "seed": args.seed,
            "tombstones": format!("{tombstones:?}"),
            "sequences": s.sequences,
            "operations": s.operations,
            "watch_messages": s.messages,
            "interrupted": s.interrupted,
            "difference": diff(&s.difference),
            "other_policy": format!("{:?}", s.other_policy),
            "other_policy_differs": s.other_policy_differs,
            "other_policy_example": diff(&s.other_policy_example),
        })
    }
}
