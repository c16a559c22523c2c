//! A campaign: a range of seeds (or one shard of it), every failure reported with its seed and what the
//! seed drew, the first failure of each property shrunk and written as a trace, and a summary.

use std::io::{IsTerminal, Write as _};
use std::path::PathBuf;
use std::time::Instant;

use listwatch_model::{Clients, FaultKind, FaultKinds, Flaws, ModelReflector};
use listwatch_properties::Property;

use super::draw::Narrowing;
use super::run::{run_seed_in, End, Tally};
use super::shrink::shrink_with;
use crate::tracefile::{Trace, Verdict};

/// What to run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Campaign {
    pub first_seed: u64,
    pub seeds: u64,
    /// This machine's share: shard `k` of `n` (1-based) takes every `n`th seed from the `k`th.
    pub shard: (u64, u64),
    pub steps: u32,
    pub flaws: Flaws,
    /// What every seed's world leaves out (nothing by default): a campaign that isolates one trigger.
    pub narrowing: Narrowing,
    pub out: PathBuf,
}

impl Campaign {
    /// Seeds `0..seeds` on one machine, `steps` safety steps each, every fault kind, failures written
    /// under `out`.
    pub fn new(seeds: u64, steps: u32, flaws: Flaws, out: PathBuf) -> Campaign {
        Campaign { first_seed: 0, seeds, shard: (1, 1), steps, flaws, narrowing: Narrowing::none(), out }
    }

    /// The seeds of this shard, in order.
    pub fn shard_seeds(&self) -> impl Iterator<Item = u64> + '_ {
        let (k, n) = self.shard;
        (0..self.seeds).filter(move |i| i % n == k - 1).map(move |i| self.first_seed + i)
    }

    /// The heal phase's bound: far more than any correct system needs to settle.
    pub fn heal_limit(&self) -> u32 {
        self.steps.saturating_mul(20).saturating_add(2_000)
    }
}

/// One failing seed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    pub seed: u64,
    /// The broken property's name, `no-rest` when the heal phase could not bring the system to rest, or
    /// `halted` when a client could not be stepped further.
    pub what: String,
    pub detail: String,
    pub steps: usize,
    pub drawn: String,
    /// Every other property the seed broke as its run went on, with the steps taken when it broke and
    /// what was seen, in the order they broke.
    pub also: Vec<(Property, usize, String)>,
    /// The shrunk trace written for the first failure of each kind: its length and file.
    pub shrunk: Option<(usize, PathBuf)>,
}

/// The outcome of a campaign.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    pub seeds_run: u64,
    pub tally: Tally,
    pub failures: Vec<Failure>,
    pub seconds: f64,
    /// The properties the campaign's client cannot be judged by, each with why.
    pub not_judged: Vec<(Property, String)>,
    /// The client under test, when it is not the model's reflector (`--client` of a reproduction).
    pub client: Option<String>,
}

/// Run a campaign with the clients `k` makes; `Err` when a shrunk trace cannot be written, or a client's
/// machinery was gone (a process that died: the seed and step named).
pub fn run<K: Clients>(c: &Campaign, k: &K) -> Result<Summary, String> {
    let started = Instant::now();
    let total = c.shard_seeds().count() as u64;
    let progress = std::io::stderr().is_terminal() && total >= 100;
    let client = (k.name() != ModelReflector::NAME).then(|| k.name());
    let mut summary = Summary { client, ..Summary::default() };
    let mut last_draw = Instant::now();
    for seed in c.shard_seeds() {
        if crate::interrupt::interrupted().load(std::sync::atomic::Ordering::Relaxed) {
            return Err(format!("interrupted after {} seeds: incomplete", summary.seeds_run));
        }
        let run = run_seed_in(k, seed, c.flaws, c.narrowing, c.steps, c.heal_limit());
        summary.seeds_run += 1;
        summary.tally.add(&run.tally);
        // In catalogue order, whatever order the client names them in: a merge of shards, which reads
        // them back from JSON's sorted keys, gives the same summary.
        summary.not_judged = run.not_judged.iter().map(|(p, why)| (*p, why.to_string())).collect();
        summary.not_judged.sort_by_key(|(p, _)| *p as usize);
        let (what, detail) = match &run.end {
            End::Rest => (None, String::new()),
            End::Broke(v) => {
                let then = run.halted.as_ref().map(|why| format!("; then {why}")).unwrap_or_default();
                (Some(v.property.name().to_string()), format!("{v}{then}"))
            }
            End::Halted(why) => (Some("halted".to_string()), why.clone()),
            End::Gone(why) => return Err(format!("{}: seed {seed}, {why}", k.name())),
            End::NoRest => {
                (Some("no-rest".to_string()), format!("not at rest after {} heal steps", c.heal_limit()))
            }
        };
        if let Some(what) = what {
            let first_of_kind = !summary.failures.iter().any(|f| f.what == what);
            let shrunk = match (&run.end, first_of_kind) {
                (End::Broke(v), true) => {
                    Some(write_shrunk(c, k, seed, &run.draw.config, &run.actions, v.property)?)
                }
                _ => None,
            };
            let also =
                run.broken.iter().skip(1).map(|(v, step)| (v.property, *step, v.to_string())).collect();
            summary.failures.push(Failure {
                seed,
                what,
                detail,
                steps: run.actions.len(),
                drawn: run.draw.describe(),
                also,
                shrunk,
            });
        }
        if progress && last_draw.elapsed().as_millis() >= 100 {
            last_draw = Instant::now();
            draw_progress(summary.seeds_run, total, summary.failures.len());
        }
    }
    if progress {
        eprint!("\r{:78}\r", "");
    }
    summary.seconds = started.elapsed().as_secs_f64();
    Ok(summary)
}

fn draw_progress(done: u64, total: u64, failures: usize) {
    let width = 40;
    let filled = (done * width / total.max(1)) as usize;
    eprint!(
        "\r[{}{}] {done}/{total} seeds, {failures} failing",
        "=".repeat(filled),
        " ".repeat(width as usize - filled)
    );
    let _ = std::io::stderr().flush();
}

fn write_shrunk<K: Clients>(
    c: &Campaign,
    k: &K,
    seed: u64,
    config: &listwatch_model::Config,
    actions: &[listwatch_model::Action],
    property: Property,
) -> Result<(usize, PathBuf), String> {
    let (config, shrunk) = shrink_with(k, seed, *config, actions, property)
        .map_err(|e| format!("{}: shrinking seed {seed}: {e}", k.name()))?;
    let step = shrunk.len();
    let (name, is_model) = (k.name(), k.name() == ModelReflector::NAME);
    let who = if is_model { String::new() } else { format!("{name}: ") };
    let trace = Trace {
        title: format!("{who}simulate seed {seed}: {property} breaks (flaws: {})", config.flaws),
        config,
        seed: Some(seed),
        actions: shrunk,
        expect: Verdict::Breaks { property, step },
        client: name.clone(),
    };
    std::fs::create_dir_all(&c.out).map_err(|e| format!("--out: cannot create {}: {e}", c.out.display()))?;
    let path = if is_model {
        c.out.join(format!("seed-{seed}-{}.json", property.name()))
    } else {
        c.out.join(format!("{}.{}.seed-{seed}.json", file_stem(&name), property.name()))
    };
    trace.save(&path).map_err(|e| format!("--out: cannot write {}: {e}", path.display()))?;
    Ok((step, path))
}

fn thousands(n: u64) -> String {
    let digits = n.to_string().into_bytes();
    let groups: Vec<&str> =
        digits.rchunks(3).rev().map(|g| std::str::from_utf8(g).unwrap_or_default()).collect();
    groups.join(",")
}

/// The summary as text: deterministic (no timings; those go to stderr).
pub fn text(c: &Campaign, s: &Summary) -> String {
    let t = &s.tally;
    let mut out = format!(
        "listwatch simulate: seeds {}..{} (shard {}/{}: {} seeds), {} safety steps then heal, flaws: {}{}{}{}\n",
        c.first_seed,
        c.first_seed + c.seeds,
        c.shard.0,
        c.shard.1,
        s.seeds_run,
        c.steps,
        c.flaws,
        restricted(c).map(|k| format!(", fault kinds: {k}")).unwrap_or_default(),
        if c.narrowing.no_cache_reinit_429 { ", caches serve at once after a relist (no A14 429s)" } else { "" },
        c.narrowing.etcd.map(|e| format!(", over etcd {e}")).unwrap_or_default()
            + &c.narrowing.apiserver.map(|a| format!(", API server {a}")).unwrap_or_default()
    );
    let passed = s.seeds_run - s.failures.len() as u64;
    out.push_str(&format!("  seeds passed     {passed} / {}\n", s.seeds_run));
    out.push_str(&format!(
        "  steps            {} (safety {}, heal {})\n",
        thousands(t.safety_steps + t.heal_steps),
        thousands(t.safety_steps),
        thousands(t.heal_steps)
    ));
    let faults: Vec<String> =
        FaultKind::ALL.iter().map(|k| format!("{} {}", k.name(), thousands(t.faults[*k as usize]))).collect();
    out.push_str(&format!("  faults injected  {}\n", faults.join(", ")));
    out.push_str(&format!(
        "  requests         {} LISTs (initial lists and relists), {} streaming lists, {} WATCHes\n",
        thousands(t.lists),
        thousands(t.streaming_lists),
        thousands(t.watches)
    ));
    if s.not_judged.is_empty() {
        out.push_str(&format!(
            "  properties       all {} judged after every step; seeds reaching each witness:\n",
            Property::COUNT
        ));
    } else {
        out.push_str(&format!(
            "  properties       {} of {} judged after every step; not judged:\n",
            Property::COUNT - s.not_judged.len(),
            Property::COUNT
        ));
        for (p, why) in &s.not_judged {
            out.push_str(&format!("    {:<30} {why}\n", p.name()));
        }
        out.push_str("  seeds reaching each witness of a property judged:\n");
    }
    for p in Property::ALL.into_iter().filter(|p| s.not_judged.iter().all(|(q, _)| q != p)) {
        out.push_str(&format!("    {:<30} {}\n", p.name(), thousands(t.witnessed[p as usize])));
    }
    if s.failures.is_empty() {
        out.push_str("  failures         none\n");
    } else {
        out.push_str(&format!("  failures         {}\n", s.failures.len()));
        out.push_str("  seeds breaking each property (every property a seed broke, not only its first):\n");
        for (what, seeds) in breaking(s) {
            out.push_str(&format!("    {what:<30} {}\n", thousands(seeds)));
        }
        for f in &s.failures {
            out.push_str(&format!("    seed {}: {} after {} steps: {}\n", f.seed, f.what, f.steps, f.detail));
            for (property, steps, _) in &f.also {
                out.push_str(&format!("      then {property} after {steps} steps\n"));
            }
            out.push_str(&format!("      drawn: {}\n", f.drawn));
            if let Some((len, path)) = &f.shrunk {
                out.push_str(&format!("      shrunk to {len} steps: {}\n", path.display()));
            }
            let client = s.client.as_ref().map(|k| format!(" --client '{k}'")).unwrap_or_default();
            out.push_str(&format!(
                "      reproduce: listwatch simulate --seed {}{}{client}\n",
                f.seed,
                flags(c)
            ));
        }
    }
    out
}

/// For each kind of failure (every property, then `no-rest` and `halted`), the seeds that showed it,
/// as their first failure or later; kinds no seed showed are left out.
pub fn breaking(s: &Summary) -> Vec<(String, u64)> {
    let shows = |f: &Failure, what: &str| f.what == what || f.also.iter().any(|(p, _, _)| p.name() == what);
    let kinds = Property::ALL.iter().map(|p| p.name()).chain(["no-rest", "halted"]);
    kinds
        .map(|what| (what.to_string(), s.failures.iter().filter(|f| shows(f, what)).count() as u64))
        .filter(|(_, seeds)| *seeds > 0)
        .collect()
}

fn flags(c: &Campaign) -> String {
    let mut s = format!(" --steps {}", c.steps);
    for f in c.flaws.iter() {
        s.push_str(&format!(" --flaw {}", f.name()));
    }
    if let Some(kinds) = restricted(c) {
        s.push_str(&format!(" --fault-kinds {kinds}"));
    }
    if c.narrowing.no_cache_reinit_429 {
        s.push_str(" --no-cache-reinit-429");
    }
    if let Some(release) = c.narrowing.etcd {
        s.push_str(&format!(" --etcd {release}"));
    }
    if let Some(release) = c.narrowing.apiserver {
        s.push_str(&format!(" --apiserver {release}"));
    }
    s
}

/// The fault kinds a campaign allows, spelt as `--fault-kinds` takes them, when it does not allow all.
fn restricted(c: &Campaign) -> Option<String> {
    let kinds = c.narrowing.fault_kinds;
    (kinds != FaultKinds::all()).then(|| {
        let names: Vec<&str> = kinds.iter().map(|k| k.name()).collect();
        if names.is_empty() {
            "none".to_string()
        } else {
            names.join(",")
        }
    })
}

/// The summary as JSON: deterministic, keys sorted.
pub fn json(c: &Campaign, s: &Summary) -> String {
    let t = &s.tally;
    let faults: serde_json::Map<String, serde_json::Value> =
        FaultKind::ALL.iter().map(|k| (k.name().to_string(), t.faults[*k as usize].into())).collect();
    let witnessed: serde_json::Map<String, serde_json::Value> =
        Property::ALL.iter().map(|p| (p.name().to_string(), t.witnessed[*p as usize].into())).collect();
    let failures: Vec<serde_json::Value> = s
        .failures
        .iter()
        .map(|f| {
            serde_json::json!({
                "seed": f.seed,
                "breaks": f.what,
                "detail": f.detail,
                "steps": f.steps,
                "drawn": f.drawn,
                "also": f.also.iter().map(|(p, steps, detail)| serde_json::json!({
                    "breaks": p.name(),
                    "steps": steps,
                    "detail": detail,
                })).collect::<Vec<_>>(),
                "shrunk_steps": f.shrunk.as_ref().map(|(n, _)| *n),
                "trace": f.shrunk.as_ref().map(|(_, p)| p.display().to_string()),
            })
        })
        .collect();
    let value = serde_json::json!({
        "first_seed": c.first_seed,
        "seeds": c.seeds,
        "shard": format!("{}/{}", c.shard.0, c.shard.1),
        "seeds_run": s.seeds_run,
        "safety_steps_per_seed": c.steps,
        "flaws": c.flaws.iter().map(|f| f.name()).collect::<Vec<_>>(),
        "fault_kinds": c.narrowing.fault_kinds.iter().map(|k| k.name()).collect::<Vec<_>>(),
        "no_cache_reinit_429": c.narrowing.no_cache_reinit_429,
        "steps": { "safety": t.safety_steps, "heal": t.heal_steps },
        "faults": faults,
        "requests": { "list": t.lists, "streaming_list": t.streaming_lists, "watch": t.watches },
        "witnessed": witnessed,
        "passed": s.seeds_run - s.failures.len() as u64,
        "seeds_breaking": breaking(s).into_iter().map(|(k, n)| (k, n.into())).collect::<serde_json::Map<_, _>>(),
        "failures": failures,
    });
    let mut value = value;
    if !s.not_judged.is_empty() {
        let why: serde_json::Map<String, serde_json::Value> =
            s.not_judged.iter().map(|(p, why)| (p.name().to_string(), why.clone().into())).collect();
        value["not_judged"] = why.into();
    }
    if let Some(client) = &s.client {
        value["client"] = client.clone().into();
    }
    if let Some(release) = c.narrowing.etcd {
        value["etcd"] = release.to_string().into();
    }
    if let Some(release) = c.narrowing.apiserver {
        value["apiserver"] = release.to_string().into();
    }
    serde_json::to_string_pretty(&value).unwrap_or_default()
}

/// The timing line (stderr): wall-clock figures never go into the deterministic output.
pub fn timing(s: &Summary) -> String {
    let steps = s.tally.safety_steps + s.tally.heal_steps;
    let rate = if s.seconds > 0.0 { steps as f64 / s.seconds } else { 0.0 };
    format!("listwatch simulate: {:.2} s, {} steps/s on one core", s.seconds, thousands(rate as u64))
}

/// A client's spec as part of a file name: `client-go@v0.37.2,waiters=2` as `client-go@v0.37.2.waiters=2`;
/// a Go package's `go:DIR,test=T` as `go.PKG.test=T` (PKG the directory's last component).
fn file_stem(name: &str) -> String {
    let name = match name.strip_prefix("go:") {
        Some(rest) => {
            let (dir, options) = rest.split_once(',').unwrap_or((rest, ""));
            let dir = std::path::Path::new(dir);
            let full = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
            let package = full.file_name().and_then(|n| n.to_str()).unwrap_or("package").to_string();
            format!("go.{package},{options}")
        }
        None => name.to_string(),
    };
    name.replace(',', ".")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || "._-@=".contains(c) { c } else { '_' })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::file_stem;

    #[test]
    fn a_trace_file_name_has_no_directory_in_it() {
        assert_eq!(file_stem("client-go@v0.30.14,waiters=2"), "client-go@v0.30.14.waiters=2");
        assert_eq!(file_stem("go:/src/my ctl/pkg,test=TestA/b"), "go.pkg.test=TestA_b");
    }
}
