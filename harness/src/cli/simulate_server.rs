//! `simulate --server`: each seed's client under test against a real API server
//! ([`crate::real_server`]), judged by the same properties; not deterministic, and said so.

use listwatch_model::{FaultKind, FaultKinds};

use super::simulate::SimulateArgs;
use super::UsageError;
use crate::real_server::takes;

/// What `--server` refuses to take with it: the campaign's sharding and JSON, which assume a
/// deterministic run, and the model server's release rules, which a real server has of its own.
fn check(args: &SimulateArgs) -> Result<(), UsageError> {
    let refused = [
        (args.shard != (1, 1), "--shard"),
        (args.json, "--json"),
        (args.apiserver.is_some(), "--apiserver"),
        (args.no_cache_reinit_429, "--no-cache-reinit-429"),
    ];
    if let Some((_, flag)) = refused.iter().find(|(given, _)| *given) {
        return Err(UsageError(format!(
            "{flag}: not with --server (a real server's runs are not deterministic, and it has rules of its own)"
        )));
    }
    // The server is real: a flaw of the model's API server has nothing to switch on.
    let flaws = args.flaws()?;
    if let Some(f) = flaws.iter().find(|f| f.component() == listwatch_model::Component::Server) {
        return Err(UsageError(format!(
            "--flaw {f}: a flaw of the model's API server; not with --server, which is a real one"
        )));
    }
    // Kinds named that no step here takes: the server's own to have, not the run's to inject.
    let kinds = args.fault_kinds.unwrap_or(FaultKinds::NONE);
    let untaken: Vec<&str> =
        FaultKind::ALL.into_iter().filter(|k| kinds.has(*k) && !takes(*k)).map(FaultKind::name).collect();
    if !untaken.is_empty() {
        return Err(UsageError(format!(
            "--fault-kinds: {} not with --server (a real server's timeouts, cache and etcd are its own)",
            untaken.join(", ")
        )));
    }
    Ok(())
}

#[cfg(not(feature = "apiserver"))]
pub fn simulate(args: &SimulateArgs) -> Result<i32, UsageError> {
    check(args)?;
    Err(UsageError(
        "simulate --server: this listwatch was built without the apiserver feature; run scripts/build-rest \
         (and, to start a server, scripts/install-etcd and scripts/build-sample-apiserver), then cargo run \
         --release --features apiserver -- simulate --server sample-apiserver"
            .into(),
    ))
}

#[cfg(feature = "apiserver")]
pub fn simulate(args: &SimulateArgs) -> Result<i32, UsageError> {
    check(args)?;
    let etcd = match args.etcd {
        Some(release) => crate::conformance::EtcdToStart::parse(&release.to_string())
            .map_err(|e| UsageError(format!("--etcd: {e}")))?,
        None => {
            crate::conformance::EtcdToStart::parse("3.6").map_err(|e| UsageError(format!("--etcd: {e}")))?
        }
    };
    Ok(super::clients::with_clients!(&args.client, k => live::run(args, &etcd, k)))
}

#[cfg(feature = "apiserver")]
mod live {
    use std::io::Write;

    use listwatch_model::{Clients, FaultKinds};
    use listwatch_properties::Frame;

    use super::SimulateArgs;
    use crate::cli::conformance::http::run::{start_sample, SampleToStart};
    use crate::cli::simulate::ServerChoice;
    use crate::conformance::apiserver::server::{ApiServerProcess, RestSide};
    use crate::conformance::apiserver::ServerUnderTest;
    use crate::conformance::{built, EtcdToStart};
    use crate::real_server::run::{self, End, Outcome, Settings};

    /// Objects the world writes: k00..k03.
    const KEYS: u8 = 4;

    pub fn run<K: Clients>(args: &SimulateArgs, etcd: &EtcdToStart, k: &K) -> i32 {
        let fail = |e: String| {
            eprintln!("listwatch: simulate --server: {e}");
            2
        };
        let Some(driver) = built::find("rest/rest") else {
            return fail("the REST driver is not built: run scripts/build-rest".into());
        };
        let server = args.server.as_ref().expect("--server given");
        let mut started = None;
        let (driver_args, side) = match server {
            ServerChoice::Url(url) => {
                let resource = args.resource.as_deref().unwrap_or("v1/configmaps");
                let mut a = vec![format!("--server={url}"), format!("--resource={resource}")];
                if let Some(kc) = &args.kubeconfig {
                    a.push(format!("--kubeconfig={}", kc.display()));
                }
                (a, RestSide::reached(url.clone(), None))
            }
            ServerChoice::Sample => {
                let to_start = SampleToStart {
                    release: None,
                    etcd,
                    mistake: None,
                    resource: args.resource.as_deref(),
                    namespace: None,
                };
                match start_sample(&to_start) {
                    Ok((etcd, sample, _, driver_args, release)) => {
                        let name = format!("k8s.io/sample-apiserver {release} at {}", sample.url);
                        started = Some((etcd, sample));
                        (driver_args, RestSide::started(name, None))
                    }
                    Err(e) => return fail(e),
                }
            }
        };
        // The run compacts only an etcd it started.
        let compactions = side.etcd;
        let mut process =
            match ApiServerProcess::rest(&driver, &driver_args, side).and_then(ApiServerProcess::connect) {
                Ok(p) => p,
                Err(e) => return fail(format!("reaching the server: {e}")),
            };
        let kinds = args.fault_kinds.unwrap_or_else(FaultKinds::all);
        let flaws = match args.flaws() {
            Ok(flaws) => flaws,
            Err(e) => return fail(e.0),
        };
        let first = args.seed.unwrap_or(0);
        let seeds = args.seeds.unwrap_or(if args.seed.is_some() { 1 } else { 10 });
        let started_by = if started.is_some() { " (started by listwatch)" } else { "" };
        let side_by_side = match args.reflectors {
            1 => String::new(),
            n => format!(", {n} side by side (reflector-0 to reflector-{})", n - 1),
        };
        println!("simulate: {}{side_by_side} against {}{started_by}", k.name(), process.describe());
        println!(
            "  not deterministic: the server's answers and when its events arrive are its own; a seed fixes \
             the world's choices only, and a failing run is kept as the frames it saw"
        );
        let (mut rested, mut failed) = (0u64, 0u64);
        let mut not_judged: &[(&str, &str)] = &[];
        for seed in first..first + seeds {
            let settings = Settings {
                seed,
                steps: args.steps,
                keys: KEYS,
                faults: kinds,
                compactions,
                flaws,
                reflectors: args.reflectors,
            };
            let outcome = process.session().and_then(|mut session| {
                let outcome = run::run(k, &mut session, settings)?;
                session.finish()?;
                Ok(outcome)
            });
            let outcome = match outcome {
                Ok(o) => o,
                Err(e) => return fail(format!("seed {seed}: {e}")),
            };
            let alive = started.as_mut().map_or(Ok(()), |(etcd, sample)| {
                if !etcd.alive() {
                    Err("etcd")
                } else if !sample.alive() {
                    Err("the sample-apiserver")
                } else {
                    Ok(())
                }
            });
            if let Err(who) = alive {
                return fail(format!("{who} died during seed {seed}"));
            }
            not_judged = outcome.not_judged;
            match report(args, seed, &outcome) {
                Ok(true) => rested += 1,
                Ok(false) => failed += 1,
                Err(e) => return fail(e),
            }
        }
        for (property, why) in not_judged {
            println!("  not judged: {property} ({why})");
        }
        println!("{seeds} seeds: {rested} came to rest with every property held, {failed} failed");
        i32::from(failed > 0)
    }

    /// Print one seed's line; a failure's frames are written to --out. Whether it passed.
    fn report(args: &SimulateArgs, seed: u64, o: &Outcome) -> Result<bool, String> {
        let counts = format!(
            "{} frames, {} writes, faults: {}, {} requests, {} × 410",
            o.frames.len(),
            o.writes,
            o.faults,
            o.requests,
            o.expired
        );
        let why = match &o.end {
            End::Rest => {
                println!("seed {seed}: every property held, came to rest ({counts})");
                return Ok(true);
            }
            End::Broke(i, v) => format!("{} breaks at frame {i}: {}", v.property, v.detail),
            End::NoRest => "did not come to rest after the heal".to_string(),
            End::Halted(why) => format!("halted: {why}"),
        };
        let path = args.out.join(format!("server-seed-{seed}.frames.json"));
        write_frames(&path, &o.frames).map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
        println!("seed {seed}: {why} ({counts})");
        for line in last_lines(&o.frames, 12) {
            println!("    {line}");
        }
        println!("  frames written to {} (listwatch show reads them)", path.display());
        Ok(false)
    }

    /// The last `n` observations, numbered by frame.
    fn last_lines(frames: &[Frame], n: usize) -> Vec<String> {
        let all: Vec<String> = frames
            .iter()
            .enumerate()
            .flat_map(|(i, f)| f.seen.iter().map(move |o| format!("{i:>4}  {o}")))
            .collect();
        all[all.len().saturating_sub(n)..].to_vec()
    }

    /// Write the frames whole or not at all.
    fn write_frames(path: &std::path::Path, frames: &[Frame]) -> std::io::Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let json = serde_json::to_string_pretty(frames).map_err(std::io::Error::other)?;
        let partial = path.with_extension("partial");
        let mut f = std::fs::File::create(&partial)?;
        f.write_all(json.as_bytes())?;
        f.write_all(b"\n")?;
        f.sync_all()?;
        std::fs::rename(&partial, path)
    }
}
