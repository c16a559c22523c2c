//! `listwatch conformance apiserver`: the API server model against the real Kubernetes watch cache
//! (k8s.io/apiserver's etcd3 store under its cacher, `harness/apiserver/`) over a real etcd.

use std::path::PathBuf;

use super::super::values::{at_least_one, whole};
use super::super::UsageError;
use super::{max_ops, plant};
use crate::conformance::apiserver::ApiSequence;
use crate::conformance::{EtcdToStart, Plant};

pub const APISERVER_HELP: &str = "\
Seeded sequences of writes, deletes, multi-key deletes at one revision (E8), compactions, LISTs (rv unset,
\"0\", NotOlderThan, Exact; limit and continue), WATCHes (from an RV or \"0\", with bookmarks) and
streaming lists (sendInitialEvents) run on the model's API server and store and on the real watch cache
over a real etcd, side by side; in some sequences the cache's etcd watch is held (the cache lags etcd)
or ended as compacted (the cache relists, A5). Every answer (items and their RVs, the list RV, continue tokens, errors)
and every watch message is compared; after each step both sides take a barrier (a consistent LIST, then
until the cache holds the last write) and the cache's RV is compared too. Plain bookmarks come when the
server's timers say: they are checked against A8, not compared. A difference is shrunk to a minimal
sequence, printed, and written to --out; --replay FILE runs such a file again.

listwatch starts its own etcd (--etcd 3.4: scripts/install-etcd; 3.5, 3.6, 3.7 or a release of them:
scripts/install-etcd vX.Y.Z) and the server (scripts/build-apiserver [vX.Y.Z]; the newest built unless
--apiserver names one), on loopback, and stops both and removes their directories when done, on error
and on Ctrl-C. This command needs a build with the apiserver feature:
  cargo run --release --features apiserver -- conformance apiserver

exit status: 0 no unexplained difference, 1 a difference (the shrunk sequence is printed and written),
2 bad arguments, etcd or the server cannot be built, started or reached, dies mid-run, or the run was
interrupted.";

fn release(v: &str) -> Result<String, String> {
    let parts: Vec<&str> = v.trim_start_matches('v').split('.').collect();
    if v.starts_with('v') && parts.len() == 3 && parts.iter().all(|p| p.parse::<u32>().is_ok()) {
        Ok(v.to_string())
    } else {
        Err(format!("'{v}' is not a k8s.io/apiserver release like v0.37.2"))
    }
}

/// `conformance apiserver`'s arguments.
#[derive(Clone, Debug, PartialEq, Eq, clap::Args)]
pub struct ApiserverArgs {
    /// How many sequences
    #[arg(long, value_name = "N", default_value = "300", value_parser = at_least_one)]
    pub sequences: u64,
    /// The seed of the sequences
    #[arg(long, value_name = "S", default_value = "0", value_parser = whole)]
    pub seed: u64,
    /// The most operations in one sequence
    #[arg(long, value_name = "N", default_value = "30", value_parser = max_ops)]
    pub max_ops: usize,
    /// Which etcd to start: 3.4 (Debian's 3.4.23), or 3.5, 3.6, 3.7 (the newest pinned release of
    /// each) or a release 3.M.P of those (scripts/install-etcd vX.Y.Z)
    #[arg(long, value_name = "VERSION", default_value = "3.4", value_parser = EtcdToStart::parse)]
    pub etcd: EtcdToStart,
    /// Which built k8s.io/apiserver release to run (newest built by default)
    #[arg(long, value_name = "vX.Y.Z", value_parser = release)]
    pub apiserver: Option<String>,
    /// Print the summary as JSON on stdout
    #[arg(long)]
    pub json: bool,
    /// Run one sequence file (as --out writes them) instead of generated ones
    #[arg(long, value_name = "FILE", conflicts_with_all = ["sequences", "seed"])]
    pub replay: Option<PathBuf>,
    /// Where to write a shrunk difference
    #[arg(
        long,
        value_name = "FILE",
        default_value = "target/listwatch/conformance/apiserver-difference.json"
    )]
    pub out: PathBuf,
    /// Plant a model bug, to see the run catch it
    #[arg(long, value_name = "BUG", default_value = "none", value_parser = plant, hide = true)]
    pub plant: Plant,
}

/// Read an API server sequence file for `--replay`; the error names the file.
pub fn read_sequence(path: &std::path::Path) -> Result<ApiSequence, UsageError> {
    let text = std::fs::read_to_string(path).map_err(|e| UsageError(format!("{}: {e}", path.display())))?;
    ApiSequence::parse(&text).map_err(|e| UsageError(format!("{}: {e}", path.display())))
}

#[cfg(not(feature = "apiserver"))]
pub fn conformance(args: &ApiserverArgs) -> Result<i32, UsageError> {
    if let Some(path) = &args.replay {
        read_sequence(path)?;
    }
    Err(UsageError(
        "conformance apiserver: this listwatch was built without the apiserver feature; run \
         scripts/install-etcd and scripts/build-apiserver, then cargo run --release --features apiserver -- \
         conformance apiserver"
            .into(),
    ))
}

#[cfg(feature = "apiserver")]
pub fn conformance(args: &ApiserverArgs) -> Result<i32, UsageError> {
    Ok(run::apiserver(args))
}

#[cfg(feature = "apiserver")]
pub(super) mod run {
    use std::sync::atomic::Ordering;
    use std::time::{Duration, Instant};

    use listwatch_model::store::TombstonePolicy;

    use super::super::finish;
    use super::{read_sequence, ApiserverArgs};
    use crate::conformance::apiserver::server::{binary, ApiServerProcess};
    use crate::conformance::apiserver::{ApiSequence, ApiSuite, ServerUnderTest};
    use crate::conformance::compare::{other, Suite};
    use crate::conformance::etcd::{EtcdProcess, EtcdStore};
    use crate::conformance::{Campaign, Difference, SideError, Summary};

    fn policy_name(p: TombstonePolicy) -> &'static str {
        match p {
            TombstonePolicy::DropAtCompaction => {
                "a tombstone at the compaction revision is dropped (etcd < 3.5.16)"
            }
            TombstonePolicy::KeepAtCompactRev => {
                "a tombstone at the compaction revision is kept (etcd >= 3.5.16)"
            }
        }
    }

    fn listing(sequence: &ApiSequence, diff: &Difference) -> String {
        let mut out = String::new();
        for (i, op) in sequence.ops.iter().enumerate() {
            out.push_str(&format!("    {i:>2}  {op}\n"));
        }
        out.push_str(&format!(
            "    at {}\n      model:  {}\n      server: {}\n",
            diff.place, diff.model, diff.store
        ));
        out
    }

    /// etcd, its tombstone policy (E4) and the server under test, all ours; dropped on every return.
    fn components(args: &ApiserverArgs) -> Result<(EtcdProcess, TombstonePolicy, ApiServerProcess), String> {
        let (release, path) =
            binary(args.apiserver.as_deref()).map_err(|e| format!("finding the server: {e}"))?;
        let etcd = EtcdProcess::start_version(&args.etcd, Duration::from_secs(20))
            .map_err(|e| format!("starting etcd: {e}"))?;
        let tombstones = EtcdStore::connect(&etcd.endpoint)
            .map_err(|e| format!("reaching etcd: {e} (scripts/install-etcd)"))?
            .tombstones();
        let server = ApiServerProcess::start(&path, &release, &etcd.endpoint)
            .and_then(ApiServerProcess::connect)
            .map_err(|e| format!("starting the server: {e} (scripts/build-apiserver {release})"))?;
        Ok((etcd, tombstones, server))
    }

    pub fn apiserver(args: &ApiserverArgs) -> i32 {
        let replay = match args.replay.as_ref().map(|p| read_sequence(p).map(|s| (p.clone(), s))).transpose()
        {
            Ok(r) => r,
            Err(e) => {
                eprintln!("listwatch: {e}");
                return 2;
            }
        };
        let (mut etcd, tombstones, mut server) = match components(args) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("listwatch: conformance apiserver: {e}");
                return 2;
            }
        };
        let run = Run {
            command: "conformance apiserver",
            hint: "scripts/install-etcd, scripts/build-apiserver",
            started_by: " (started by listwatch)",
            sequences: args.sequences,
            seed: args.seed,
            max_ops: args.max_ops,
            json: args.json,
            replay,
            out: &args.out,
            plant: args.plant,
        };
        run.drive(&mut server, tombstones, &mut || if etcd.alive() { None } else { Some("etcd") })
    }

    /// One run of sequences against a server: what `conformance apiserver` and `conformance http`
    /// share once their server is up.
    pub struct Run<'a> {
        pub command: &'static str,
        /// What to run when a side cannot be started or dies.
        pub hint: &'static str,
        /// Said after the server's description: who started it.
        pub started_by: &'static str,
        pub sequences: u64,
        pub seed: u64,
        pub max_ops: usize,
        pub json: bool,
        pub replay: Option<(std::path::PathBuf, ApiSequence)>,
        pub out: &'a std::path::Path,
        pub plant: crate::conformance::Plant,
    }

    impl Run<'_> {
        /// Run against `server`; `dead` names a process of the run that has exited (for the error).
        pub fn drive(
            self,
            server: &mut ApiServerProcess,
            tombstones: TombstonePolicy,
            dead: &mut dyn FnMut() -> Option<&'static str>,
        ) -> i32 {
            let started = Instant::now();
            let describe = server.describe();
            let notes = notes(server);
            let compactions = server.draws().etcd;
            let command = self.command;
            let mut died = |e: SideError| {
                let why = match dead() {
                    Some(who) => format!("{who} exited: {e}"),
                    None => e.to_string(),
                };
                eprintln!("listwatch: {command}: {why} ({})", self.hint);
                2
            };
            if let Some((path, sequence)) = &self.replay {
                println!(
                    "conformance: {describe}, {} operations from {}",
                    sequence.ops.len(),
                    path.display()
                );
                let mut suite = ApiSuite(server);
                let result = suite
                    .run(sequence, tombstones, self.plant)
                    .map(|(real, messages)| (suite.check(sequence, &real, tombstones, self.plant), messages));
                return match result {
                    Ok((None, messages)) => {
                        println!("  no difference ({messages} watch messages compared)");
                        0
                    }
                    Ok((Some(diff), _)) => {
                        print!("  difference:\n{}", listing(sequence, &diff));
                        1
                    }
                    Err(e) => died(e),
                };
            }
            let campaign = Campaign {
                seed: self.seed,
                sequences: self.sequences,
                max_ops: self.max_ops,
                plant: self.plant,
            };
            let stop = crate::checker::interrupted();
            let mut progress = super::super::Progress::new(self.sequences);
            let summary =
                campaign.run_suite(&mut ApiSuite(server), tombstones, stop, |done| progress.tick(done));
            progress.finish();
            let summary = match summary {
                Ok(s) => s,
                Err(e) => return died(e),
            };
            let elapsed = started.elapsed();
            if self.json {
                println!("{}", json(self.seed, &describe, &notes, tombstones, &summary, elapsed));
            } else {
                print!("{}", text(&describe, self.started_by, &notes, compactions, tombstones, &summary));
            }
            eprintln!("{command}: {} sequences in {:.1} s", summary.sequences, elapsed.as_secs_f64());
            let shrunk = summary.difference.as_ref().map(|(sequence, _)| {
                let mut sequence = sequence.clone();
                sequence.seed = Some(self.seed);
                sequence.to_json()
            });
            finish(command, self.out, shrunk, summary.interrupted || stop.load(Ordering::Relaxed))
        }
    }

    /// What the report says of the server besides the counts: its own notes, else why no streaming
    /// list was drawn or each was refused.
    fn notes(server: &ApiServerProcess) -> Vec<String> {
        let (notes, release) = (server.notes(), ServerUnderTest::release(server));
        if !notes.is_empty() {
            notes
        } else if !release.watch_list() {
            vec![format!(
                "{release} has the WatchList gate off by default: its handler refuses streaming lists \
                 (422, A12), so none is drawn"
            )]
        } else if !server.progress_requests() {
            vec!["this etcd answers no progress requests (E7): streaming lists are refused (A12)".into()]
        } else {
            Vec::new()
        }
    }

    fn text(
        describe: &str,
        started_by: &str,
        notes: &[String],
        compactions: bool,
        tombstones: TombstonePolicy,
        s: &Summary<ApiSequence>,
    ) -> String {
        let mut out =
            format!("conformance: {describe}{started_by} against the model ({})\n", policy_name(tombstones));
        let differences = usize::from(s.difference.is_some());
        out.push_str(&format!(
            "  sequences {}, operations {}, watch messages {}, unexplained differences {differences}{}\n",
            s.sequences,
            s.operations,
            s.messages,
            if s.interrupted { " (interrupted: incomplete)" } else { "" }
        ));
        if s.lagging > 0 {
            out.push_str(&format!(
                "  requests while the cache lagged (its etcd watch held): {} (A2, A12's freshness waits)\n",
                s.lagging
            ));
        }
        if s.relists > 0 {
            out.push_str(&format!(
                "  cache relists (its etcd watch ended as compacted): {} (A5: its watches close, its window starts anew)\n",
                s.relists
            ));
        }
        if s.timeouts > 0 {
            out.push_str(&format!(
                "  watches until their timeoutSeconds ended them (1 s, streaming lists 2 s): {} (A9: a clean close, once what they owed was sent)\n",
                s.timeouts
            ));
        }
        if s.minutes > 0 {
            out.push_str(&format!(
                "  minutes passed on the cacher's clock: {} (A8: the heartbeat bookmarks of the watches then open)\n",
                s.minutes
            ));
        }
        for note in notes {
            out.push_str(&format!("  {note}\n"));
        }
        if let Some((sequence, diff)) = &s.difference {
            out.push_str(&format!(
                "  difference, shrunk to {} operations:\n{}",
                sequence.ops.len(),
                listing(sequence, diff)
            ));
        }
        // Without compactions (a server over HTTP whose etcd the run cannot reach) E4 cannot show.
        if !compactions {
            return out;
        }
        out.push_str(&format!(
            "  known difference (E4, etcd#18274): the model's other policy ({}) differs in {} of {} sequences",
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
        seed: u64,
        describe: &str,
        notes: &[String],
        tombstones: TombstonePolicy,
        s: &Summary<ApiSequence>,
        elapsed: Duration,
    ) -> serde_json::Value {
        let diff = |d: &Option<(ApiSequence, Difference)>| {
            d.as_ref().map(|(seq, diff)| {
                serde_json::json!({ "ops": seq.ops, "place": diff.place, "model": diff.model, "server": diff.store })
            })
        };
        serde_json::json!({
            "server": describe,
            "notes": notes,
            "seed": seed,
            "tombstones": format!("{tombstones:?}"),
            "sequences": s.sequences,
            "operations": s.operations,
            "watch_messages": s.messages,
            "lagging_requests": s.lagging,
            "cache_relists": s.relists,
            "watch_timeouts": s.timeouts,
            "minutes": s.minutes,
            "seconds": elapsed.as_secs_f64(),
            "interrupted": s.interrupted,
            "difference": diff(&s.difference),
            "other_policy_differs": s.other_policy_differs,
            "other_policy_example": diff(&s.other_policy_example),
        })
    }
}
