//! `listwatch simulate`: arguments and output.

use std::path::PathBuf;

use listwatch_model::{FaultKind, FaultKinds, Flaw, Flaws};

use super::clients::{with_clients, ClientChoice};
use super::values::{at_least_one, shard, whole};
use super::UsageError;
use crate::sim::campaign::{self, Campaign};
use crate::sim::draw::Narrowing;
use crate::sim::merge::Shard;

pub const SIMULATE_HELP: &str = "\
Each seed (default 0..100; --seed S alone runs S only) draws a world and a fault mix, takes --steps
steps with faults, then heals and must come to rest with every cache equal to etcd, every property judged
after every step (--fault-kinds narrows the faults a seed may draw, e.g. `--fault-kinds 500` or `none`;
--no-cache-reinit-429 gives every seed API servers from before k8s 1.31).
The first failure of each property is shrunk and written to --out. --shard K/N runs
every Nth seed from the Kth (1-based), so N machines can share a campaign. The output is the same bytes
for the same arguments; timings go to stderr.

fault kinds (--fault-kinds; each seed draws its own mix):
  disconnect        a connection breaks
  server-timeout    the server ends a watch at its timeout (A9)
  429               a request, or an open watch, gets 429 TooManyRequests, Retry-After: 1
  500               a request, or an open watch, gets 500 InternalError
  refused           a connection is refused
  cache-eviction    a watch cache drops its oldest event (A5)
  cache-relist      a watch cache relists from etcd and closes its watches (A5)
  server-restart    an API server restarts
  pause-cluster     a cluster of the client manager becomes unreachable (seed 004)
  silent-death      a connection dies silently, half-open (A9)
  slow-progress     a streaming list's wait for a fresh cache runs out (A12)
  garbled-line      a watch line arrives that does not decode (clients on the wire)
  slow-consumer     a client's consumer falls behind its reflector (C7), or a client-go handler
                    behind its gate (,slow-handler)
  401 403 404 422   a request gets that status: a token expired, an RBAC change, the resource no
                    longer served, options that do not validate (A15)
  410               a WATCH gets 410 Expired as a status, before its stream opens (A15)
  503               a request gets 503 ServiceUnavailable with no Retry-After (A15)
  503-retry-after   a request gets 503 ServiceUnavailable with Retry-After: 1 (A15)
  504               a request gets 504 Timeout with no cause: not A2's too-large RV (A15)
  truncated         a LIST gets a 200 whose body ends early (A15)

exit status: 0 every seed passes, 1 a seed fails, 2 bad arguments or a trace that cannot be written.";

/// `--reflectors`: 1 to 4 clients under test against one real server.
fn reflectors(v: &str) -> Result<u8, String> {
    v.parse::<u8>()
        .ok()
        .filter(|n| (1..=4).contains(n))
        .ok_or_else(|| format!("'{v}' is not a number in 1..=4"))
}

fn steps(v: &str) -> Result<u32, String> {
    v.parse::<u32>()
        .ok()
        .filter(|n| (1..=1_000_000).contains(n))
        .ok_or_else(|| format!("'{v}' is not a number in 1..=1000000"))
}

/// `KIND,KIND,...` of the fault kinds' names, or `none`.
fn fault_kinds(v: &str) -> Result<FaultKinds, String> {
    if v == "none" {
        return Ok(FaultKinds::NONE);
    }
    v.split(',')
        .map(|name| {
            FaultKind::ALL.into_iter().find(|k| k.name() == name).ok_or_else(|| {
                let known: Vec<&str> = FaultKind::ALL.iter().map(|k| k.name()).collect();
                format!("unknown fault kind '{name}' (known: {}, or none)", known.join(", "))
            })
        })
        .collect()
}

fn flaw(v: &str) -> Result<Flaw, String> {
    v.parse::<Flaw>().map_err(|e| e.to_string())
}

/// The server `--server` names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ServerChoice {
    /// k8s.io/sample-apiserver, started here over an etcd of its own.
    Sample,
    /// A server someone else runs, reached through `--kubeconfig`.
    Url(String),
}

impl ServerChoice {
    pub fn parse(v: &str) -> Result<ServerChoice, String> {
        if v == "sample-apiserver" {
            return Ok(ServerChoice::Sample);
        }
        match v.split_once("://") {
            Some(("http" | "https", host)) if !host.is_empty() => Ok(ServerChoice::Url(v.to_string())),
            _ => Err(format!("'{v}' is neither sample-apiserver nor a URL like https://HOST:PORT")),
        }
    }
}

/// `simulate`'s arguments.
#[derive(Clone, Debug, PartialEq, Eq, clap::Args)]
pub struct SimulateArgs {
    /// The first seed (alone: run only this one)
    #[arg(long, value_name = "S", value_parser = whole, allow_hyphen_values = true)]
    pub seed: Option<u64>,
    /// How many seeds
    #[arg(long, value_name = "N", value_parser = at_least_one, allow_hyphen_values = true)]
    pub seeds: Option<u64>,
    /// This machine's share of the seeds
    #[arg(long, value_name = "K/N", default_value = "1/1", value_parser = shard)]
    pub shard: (u64, u64),
    /// Steps with faults before healing
    #[arg(long, value_name = "M", default_value = "200", value_parser = steps, allow_hyphen_values = true)]
    pub steps: u32,
    /// Switch a catalogue flaw on (repeatable); with --client other than the model, only the model
    /// API server's flaws (it serves that client), and with --server only the model reflector's
    #[arg(long = "flaw", value_name = "NAME", value_parser = flaw)]
    pub flaw: Vec<Flaw>,
    /// Draw faults only of these kinds (comma-separated, or `none`): a campaign that isolates one
    /// trigger. Every seed keeps the rest of its world.
    #[arg(long, value_name = "KINDS", value_parser = fault_kinds)]
    pub fault_kinds: Option<FaultKinds>,
    /// Every watch cache serves at once after a relist or restart, as before k8s 1.31 (no A14 429s):
    /// with --fault-kinds, the servers of an older client release's time
    #[arg(long = "no-cache-reinit-429")]
    pub no_cache_reinit_429: bool,
    /// Every seed over this etcd release (X.Y.Z, or 3.4/3.5/3.6/3.7 for the newest compared): its
    /// tombstone policy (E4) and whether it answers progress requests (E7, A12), not the drawn ones
    #[arg(long, value_name = "VERSION", value_parser = super::values::parse_etcd)]
    pub etcd: Option<listwatch_model::EtcdRelease>,
    /// Every seed's API servers follow this k8s.io/apiserver release's rules (vX.Y.Z; README, "The
    /// model per release"): its streaming lists (A12), its answer to an Exact LIST ahead of etcd (A2)
    /// and its cache's reinitialisation (A14)
    #[arg(long, value_name = "VERSION", value_parser = super::values::parse_apiserver)]
    pub apiserver: Option<listwatch_model::ApiServerRelease>,
    /// Where shrunk failures are written
    #[arg(long, value_name = "DIR", default_value = "target/listwatch/failures")]
    pub out: PathBuf,
    /// Print JSON instead of text
    #[arg(long)]
    pub json: bool,
    /// The client under test: `model`, or a kube-runtime configuration (`listwatch clients`;
    /// needs --features kube), optionally `NAME,waiters=N`
    #[arg(long, value_name = "NAME", default_value = "model", value_parser = ClientChoice::parse)]
    pub client: ClientChoice,
    /// Run the client against a real API server instead of the model's: `sample-apiserver` (started
    /// here over an etcd of its own, --etcd or 3.6) or a server's URL (with --kubeconfig); needs
    /// --features apiserver and scripts/build-rest. Its faults: disconnect, silent-death, slow-consumer,
    /// garbled-line and the statuses answered before the server (429, 500, refused, 401 ... truncated). Not
    /// deterministic (README, "Real clients against a real server")
    #[arg(long, value_name = "SERVER", value_parser = ServerChoice::parse)]
    pub server: Option<ServerChoice>,
    /// With --server: how many clients under test run against it side by side, each its own
    /// client (reflector-0, reflector-1, ...) on a connection of its own, with the world's faults
    /// drawn at each (1 to 4; campaigns against the model's servers draw 1 or 2 a seed)
    #[arg(long, value_name = "N", default_value = "1", requires = "server", value_parser = reflectors)]
    pub reflectors: u8,
    /// The kubeconfig to reach --server's URL with
    #[arg(long, value_name = "FILE", requires = "server")]
    pub kubeconfig: Option<PathBuf>,
    /// The namespaced resource the world writes and the client lists and watches at --server's URL,
    /// GROUP/VERSION/RESOURCE (default: ConfigMaps, v1/configmaps)
    #[arg(long, value_name = "G/V/R", requires = "server", value_parser = super::values::resource)]
    pub resource: Option<String>,
}

impl SimulateArgs {
    /// The flaws switched on, if the client under test takes them (a client other than the model
    /// reflector takes only the model API server's).
    pub fn flaws(&self) -> Result<Flaws, UsageError> {
        let flaws = self.flaw.iter().copied().collect();
        self.client.takes(flaws).map_err(UsageError)?;
        Ok(flaws)
    }

    /// The campaign these arguments ask for.
    pub fn campaign(&self) -> Result<Campaign, UsageError> {
        let first_seed = self.seed.unwrap_or(0);
        let seeds = self.seeds.unwrap_or(if self.seed.is_some() { 1 } else { 100 });
        if first_seed.checked_add(seeds).is_none() {
            return Err(UsageError("--seed/--seeds: the seed range overflows".into()));
        }
        let flaws = self.flaws()?;
        Ok(Campaign {
            first_seed,
            seeds,
            shard: self.shard,
            steps: self.steps,
            flaws,
            narrowing: Narrowing {
                fault_kinds: self.fault_kinds.unwrap_or_else(FaultKinds::all),
                no_cache_reinit_429: self.no_cache_reinit_429,
                etcd: self.etcd,
                apiserver: self.apiserver,
            },
            out: self.out.clone(),
        })
    }
}

/// Run `simulate` against the model's servers (`--server` runs `simulate_server`'s): 0 when every seed
/// passes, 1 when one fails, 2 when a trace cannot be written.
pub fn simulate(args: &SimulateArgs) -> Result<i32, UsageError> {
    let (c, json) = (args.campaign()?, args.json);
    let summary = match with_clients!(&args.client, k => campaign::run(&c, k)) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("listwatch: {e}");
            return Ok(2);
        }
    };
    if json {
        println!("{}", campaign::json(&c, &summary));
    } else {
        print!("{}", campaign::text(&c, &summary));
    }
    eprintln!("{}", campaign::timing(&summary));
    Ok(if summary.failures.is_empty() { 0 } else { 1 })
}

pub const MERGE_HELP: &str = "\
Each FILE is one shard's `listwatch simulate --shard K/N --json` output, all of one campaign (the same
seeds, steps, flaws, fault kinds and client) and every K from 1 to N once. The merged summary is the one a
single run of the campaign prints, byte for byte: its failures in seed order, the first of each property
with its shrunk trace (the shards' traces keep their paths: give the shards one --out to keep the single
run's). A Kubernetes Indexed Job runs the shards (README, \"Campaigns on a cluster\").

The FILEs may instead be the shards of one check (`listwatch check --shard K/N --json`, each checking
every Nth world of the scope): the merge prints the whole check's worlds in the scope's order and each
property's verdict, as `check` of every world gives it, and exits as `check` does (0 every property
holds, 1 one breaks, 2 a world stopped before its end, 3 a property holds without its witness).

exit status: 0 every seed passes, 1 a seed fails, 2 a file that cannot be read or is not a shard of the
campaign (one line naming it).";

/// `merge`'s arguments.
#[derive(Clone, Debug, PartialEq, Eq, clap::Args)]
pub struct MergeArgs {
    /// The shards' JSON summaries
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,
    /// Print JSON instead of text
    #[arg(long)]
    pub json: bool,
}

/// Run `merge`: the exit status `simulate` gives for the merged campaign.
pub fn merge(args: &MergeArgs) -> Result<i32, UsageError> {
    let mut shards = Vec::with_capacity(args.files.len());
    for f in &args.files {
        let json = std::fs::read_to_string(f)
            .map_err(|e| UsageError(format!("{}: cannot read: {e}", f.display())))?;
        shards.push(Shard { name: f.display().to_string(), json });
    }
    let is_check = shards
        .first()
        .and_then(|s| serde_json::from_str(&s.json).ok())
        .is_some_and(|v| crate::check_merge::is_check(&v));
    if is_check {
        let merged = crate::check_merge::merge(&shards).map_err(UsageError)?;
        println!("{}", if args.json { &merged.json } else { &merged.text });
        return Ok(merged.status);
    }
    let (c, summary) = crate::sim::merge::merge(&shards).map_err(UsageError)?;
    if args.json {
        println!("{}", campaign::json(&c, &summary));
    } else {
        print!("{}", campaign::text(&c, &summary));
    }
    Ok(if summary.failures.is_empty() { 0 } else { 1 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_help_names_every_fault_kind() {
        let listed = SIMULATE_HELP.split("fault kinds (").nth(1).expect("a fault kinds section");
        for kind in FaultKind::ALL {
            // Each line names its kinds before the first run of two spaces.
            let named = listed.lines().any(|l| {
                l.trim_start()
                    .split("  ")
                    .next()
                    .is_some_and(|names| names.split(' ').any(|w| w == kind.name()))
            });
            assert!(named, "simulate --help does not list the fault kind {}", kind.name());
        }
    }
}
