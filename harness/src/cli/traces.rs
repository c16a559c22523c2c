//! `listwatch show` and `listwatch replay`: reading trace files.

use std::path::Path;

use super::UsageError;
use crate::render;
use crate::replay::replay;
use crate::tracefile::Trace;

/// `show FILE [--format text|mermaid|json]`.
pub fn show(args: &[String]) -> Result<i32, UsageError> {
    let mut file = None;
    let mut format = "text".to_string();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--format" => {
                let v = it.next().ok_or_else(|| UsageError("--format: missing value".into()))?;
                if !["text", "mermaid", "json"].contains(&v.as_str()) {
                    return Err(UsageError(format!(
                        "--format: unknown format '{v}' (known: text, mermaid, json)"
                    )));
                }
                format = v.clone();
            }
            other if other.starts_with("--") => {
                return Err(UsageError(format!("show: unknown argument '{other}'")))
            }
            other if file.is_none() => file = Some(other.to_string()),
            other => return Err(UsageError(format!("show: one file at a time (got a second: '{other}')"))),
        }
    }
    let file = file.ok_or_else(|| UsageError("show: missing FILE".into()))?;
    let trace = match Trace::load(Path::new(&file)) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("listwatch: {e}");
            return Ok(2);
        }
    };
    let text = match format.as_str() {
        "mermaid" => render::mermaid(&trace),
        "json" => render::json(&trace),
        _ => render::text(&trace),
    };
    print!("{text}");
    Ok(0)
}

/// `replay FILE...`: 0 when every file reproduces its verdict, 1 when one changed, 2 when one cannot be
/// read. Every file is read before anything is replayed, so a bad file stops the run at once.
pub fn replay_files(args: &[String]) -> Result<i32, UsageError> {
    if let Some(flag) = args.iter().find(|a| a.starts_with("--")) {
        return Err(UsageError(format!("replay: unknown argument '{flag}'")));
    }
    if args.is_empty() {
        return Err(UsageError("replay: missing FILE (e.g. listwatch replay corpus/*.json)".into()));
    }
    let mut traces = Vec::new();
    for file in args {
        match Trace::load(Path::new(file)) {
            Ok(t) => traces.push((file, t)),
            Err(e) => {
                eprintln!("listwatch: {e}");
                return Ok(2);
            }
        }
    }
    let mut changed = 0;
    for (file, trace) in &traces {
        let r = replay(trace);
        if r.reproduces(trace) {
            println!("ok       {file}: {} (correct reflector: {})", r.verdict, r.correct);
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
