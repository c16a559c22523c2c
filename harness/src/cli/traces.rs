//! `listwatch show` and `listwatch replay`: reading trace files.

use std::path::Path;

use super::clients::{with_clients, ClientChoice};
use super::UsageError;
use crate::render;
use crate::replay::{check_enabled, judge_with, replay_with, Replayed};
use crate::tracefile::Trace;

fn format(v: &str) -> Result<String, String> {
    match v {
        "text" | "mermaid" | "json" => Ok(v.to_string()),
        _ => Err(format!("unknown format '{v}' (known: text, mermaid, json)")),
    }
}

/// `show`'s arguments.
#[derive(Clone, Debug, PartialEq, Eq, clap::Args)]
pub struct ShowArgs {
    /// The trace file
    #[arg(value_name = "FILE")]
    pub file: String,
    /// text (one line per step), mermaid (a sequence diagram) or json
    #[arg(long, value_name = "FORMAT", default_value = "text", value_parser = format)]
    pub format: String,
}

/// `replay`'s arguments.
#[derive(Clone, Debug, PartialEq, Eq, clap::Args)]
#[command(
    after_help = "exit status: 0 every file reproduces its verdict and the correct reflector holds on \
its steps, 1 a verdict changed, 2 a file cannot be read (named, with the position)."
)]
pub struct ReplayArgs {
    /// Trace files (e.g. corpus/*.json)
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<String>,
    /// Replay as this client only: a file recorded with another client is refused (`listwatch clients`)
    #[arg(long, value_name = "NAME", value_parser = ClientChoice::parse)]
    pub client: Option<ClientChoice>,
}

/// Load a trace file and the client it names; an error is one line naming the file.
fn load(file: &str) -> Result<(Trace, ClientChoice), String> {
    let trace = Trace::load(Path::new(file)).map_err(|e| e.to_string())?;
    let client = ClientChoice::parse(&trace.client).map_err(|m| format!("{file}: client: {m}"))?;
    Ok((trace, client))
}

/// `show FILE [--format text|mermaid|json]`.
pub fn show(args: &ShowArgs) -> Result<i32, UsageError> {
    let (file, format) = (&args.file, &args.format);
    if file.ends_with(".frames.json") {
        return Ok(show_frames(file, format));
    }
    let (trace, client) = match load(file) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("listwatch: {e}");
            return Ok(2);
        }
    };
    if !trace.is_model() && format != "text" {
        eprintln!(
            "listwatch: {file}: --format {format} renders model-reflector traces; this one is of {}",
            trace.client
        );
        return Ok(2);
    }
    let seed = trace.seed.unwrap_or(0);
    let judged = with_clients!(&client, k => {
        check_enabled(k, &trace).and_then(|()| judge_with(k, seed, trace.config, &trace.actions))
    });
    let (verdict, violation) = match judged {
        Ok(v) => v,
        Err(e) => {
            eprintln!("listwatch: {file}: {e}");
            return Ok(2);
        }
    };
    if !trace.is_model() {
        // The renderers step the model reflector; a foreign client's trace is shown as its steps and
        // the verdict its own replay gives.
        println!("{}\nclient: {}", trace.title, trace.client);
        for (i, a) in trace.actions.iter().enumerate() {
            println!("{:>4}  {}", i + 1, crate::action_text::format(a));
        }
        if trace.actions.is_empty() {
            // A client whose own code moves at the start (a manager's requests) can break a property
            // before the world takes a step: the verdict is on its start state.
            println!("   (no step: the start state already breaks it, before the world takes a step)");
        }
        println!("verdict: {verdict}");
        if let Some(v) = violation {
            println!("{v}");
        }
        return Ok(0);
    }
    let text = match format.as_str() {
        "mermaid" => render::mermaid(&trace),
        "json" => render::json(&trace),
        _ => render::text(&trace),
    };
    print!("{text}");
    Ok(0)
}

/// `show FILE.frames.json`: a recorded run (`simulate --server` keeps one for each failing seed), frame
/// by frame, judged again from the file alone.
fn show_frames(file: &str, format: &str) -> i32 {
    if format != "text" {
        eprintln!(
            "listwatch: {file}: --format {format} renders traces of steps; a recorded run shows as text"
        );
        return 2;
    }
    let frames: Vec<listwatch_properties::Frame> =
        match std::fs::read_to_string(file).map_err(|e| e.to_string()).and_then(|t| {
            serde_json::from_str(&t).map_err(|e| format!("not a recorded run (a JSON list of frames): {e}"))
        }) {
            Ok(f) => f,
            Err(e) => {
                eprintln!("listwatch: {file}: {e}");
                return 2;
            }
        };
    println!(
        "{file}: a recorded run, {} frames (not replayable: judged again from what it saw)",
        frames.len()
    );
    for (i, frame) in frames.iter().enumerate() {
        for o in &frame.seen {
            println!("{i:>4}  {o}");
        }
        if let Some(c) = frame.clients.first() {
            let cache: Vec<String> = c.cache.iter().map(ToString::to_string).collect();
            println!("        · claims RV {}, cache [{}]", c.resource_version, cache.join(", "));
        }
    }
    if let Some(first) = frames.first().filter(|f| !f.not_judged.is_empty()) {
        let names: Vec<&str> = first.not_judged.iter().map(|p| p.name()).collect();
        println!("not judged, as the run recorded: {}", names.join(", "));
    }
    match listwatch_properties::judge_frames(&frames) {
        Some((i, v)) => println!("verdict: {} breaks at frame {i}\n{v}", v.property),
        None => println!("verdict: every property holds"),
    }
    0
}

/// `replay FILE...`: 0 when every file reproduces its verdict, 1 when one changed, 2 when one cannot be
/// read or run. Every file is read before anything is replayed, so a bad file stops the run at once.
pub fn replay_files(args: &ReplayArgs) -> Result<i32, UsageError> {
    let (files, only) = (&args.files, &args.client);
    let mut traces = Vec::new();
    for file in files {
        match load(file) {
            Ok((t, c)) if only.as_ref().is_some_and(|o| *o != c) => {
                let asked = only.as_ref().map(ClientChoice::spec).unwrap_or_default();
                eprintln!("listwatch: {file}: a trace of client {}, not of {asked} (--client)", t.client);
                return Ok(2);
            }
            Ok(t) => traces.push((file, t)),
            Err(e) => {
                eprintln!("listwatch: {e}");
                return Ok(2);
            }
        }
    }
    let mut changed = 0;
    for (file, (trace, client)) in &traces {
        let r: Replayed = match with_clients!(client, k => replay_with(k, trace)) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("listwatch: {file}: {e}");
                return Ok(2);
            }
        };
        if r.reproduces(trace) {
            let other = if trace.is_model() { "correct reflector" } else { "model reflector, same steps" };
            println!("ok       {file}: {} ({other}: {})", r.verdict, r.correct);
        } else {
            changed += 1;
            println!(
                "CHANGED  {file}: recorded {}, now {}; correct reflector: {}",
                trace.expect, r.verdict, r.correct
            );
        }
    }
    println!("{} of {} traces reproduce", traces.len() - changed, traces.len());
    Ok(if changed == 0 { 0 } else { 1 })
}
