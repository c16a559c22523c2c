//! What `check` and `bugs` print: a summary table for people, JSON for machines, and the shortest
//! counterexample of every broken property.

use std::fmt::Write;

use listwatch_model::{Flaw, Flaws};
use listwatch_properties::Property;

use crate::checker::{run as check_world, Limits, Outcome, Search};
use crate::scope::{describe, worlds, Scope, World};

/// What a report is of: the scope, the flaws switched on, the search and its limits.
#[derive(Clone, Copy, Debug)]
pub struct Run {
    pub scope: Scope,
    pub flaws: Flaws,
    pub search: Search,
    pub limits: Limits,
    /// Which of the scope's worlds, as `check --shard K/N` picks them: (1, 1) for all.
    pub shard: (u64, u64),
}
use crate::trace::render;
use crate::tracefile::{Trace, Verdict as TraceVerdict};

fn search_name(search: Search) -> &'static str {
    match search {
        Search::Bfs => "bfs",
        Search::Dfs => "dfs",
        Search::StaterightBfs => "stateright-bfs",
    }
}

fn rate(o: &Outcome) -> f64 {
    o.states as f64 / o.seconds.max(1e-6)
}

/// A JSON string literal.
fn js(s: &str) -> String {
    let mut out = String::from('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Per property over all worlds: the first counterexample (world index, verdict) and whether the
/// witness was reached in any world.
fn combined(outcomes: &[Outcome], property: Property) -> (Option<usize>, bool) {
    let broken = outcomes
        .iter()
        .position(|o| o.verdicts.iter().any(|v| v.property == property && v.counterexample.is_some()));
    let witnessed =
        outcomes.iter().any(|o| o.verdicts.iter().any(|v| v.property == property && v.witnessed()));
    (broken, witnessed)
}

pub fn check_text(run: &Run, worlds: &[World], outcomes: &[Outcome]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "listwatch check: scope {}, flaws: {}, checker {}{}",
        run.scope.name(),
        run.flaws,
        search_name(run.search),
        match run.shard {
            (1, 1) => String::new(),
            (k, n) => format!(", shard {k}/{n} of its worlds"),
        }
    );
    for (w, o) in worlds.iter().zip(outcomes) {
        let _ = writeln!(
            out,
            "  {:<17} {} states, depth {}, {:.2} s ({:.0} states/s){}",
            w.name,
            o.states,
            o.depth,
            o.seconds,
            rate(o),
            match o.cut {
                None => String::new(),
                Some(crate::checker::Cut::FirstViolation) => ", stopped at the first violation".to_string(),
                Some(cut) if o.states == 0 =>
                    format!(", NOT RUN ({} came first): incomplete", cut.describe()),
                Some(cut) => format!(", INCOMPLETE (stopped by {})", cut.describe()),
            }
        );
        if let Some(left) = o.left {
            let _ = writeln!(out, "  {:<17} {}", "", left.describe());
        }
        let _ = writeln!(out, "  {:<17} {}", "", describe(&w.config));
        if let Some(f) = o.fingerprints.filter(|_| o.states > 0) {
            let _ = writeln!(
                out,
                "  {:<17} {} states generated; a fingerprint collision hid a state with probability {:.1E} \
                 (TLC's optimistic estimate); seen set {:.1} bytes per state, traces {:.1} on disk",
                "",
                f.generated,
                f.collision_probability(),
                f.bytes_per_state(),
                f.trace_bytes_per_state()
            );
            if let Some(depth) = f.kept_from {
                let _ = writeln!(
                    out,
                    "  {:<17} from depth {depth} a level that did not fit in memory was kept as the steps \
                     that reach it and made again when judged (through up to {} levels; the newest level's \
                     steps took at most {:.1} bytes a state in memory, every level's are in the trace)",
                    "",
                    f.kept_levels,
                    f.steps_bytes as f64 / o.states as f64
                );
            }
        }
    }
    let complete = outcomes.iter().all(|o| o.complete);
    let _ = writeln!(out, "\n  {:<31} {:<9} witness", "property", "verdict");
    for p in Property::ALL {
        let (broken, witnessed) = combined(outcomes, p);
        let verdict = match (broken, complete) {
            (Some(_), _) => "VIOLATED",
            (None, true) => "holds",
            (None, false) => "undecided",
        };
        let seen = if witnessed { "reached" } else { "NOT reached" };
        let _ = writeln!(out, "  {:<31} {:<9} {seen}: {}", p.name(), verdict, p.witness());
    }
    for p in Property::ALL {
        let (Some(i), _) = combined(outcomes, p) else { continue };
        let v = outcomes[i].verdicts.iter().find(|v| v.property == p).expect("listed");
        let (actions, violation) = v.counterexample.as_ref().expect("broken");
        let _ = writeln!(
            out,
            "\n{} in {} ({} steps{}):",
            p.name(),
            worlds[i].name,
            actions.len(),
            if run.search == Search::Bfs { ", shortest" } else { "" }
        );
        out.push_str(&render(worlds[i].config, actions, violation));
    }
    out.trim_end().to_string()
}

pub fn check_json(run: &Run, worlds: &[World], outcomes: &[Outcome]) -> String {
    let ws: Vec<String> = worlds
        .iter()
        .zip(outcomes)
        .map(|(w, o)| {
            let fingerprints = o.fingerprints.map_or(String::new(), |f| {
                format!(
                    ",\"generated\":{},\"collision_probability\":{:e},\"seen_bytes_per_state\":{:.1},\"trace_bytes_on_disk\":{},\"levels_kept_from_depth\":{},\"levels_kept_at_once\":{}",
                    f.generated,
                    f.collision_probability(),
                    f.bytes_per_state(),
                    f.trace_bytes,
                    f.kept_from.map_or("null".to_string(), |d| d.to_string()),
                    f.kept_levels
                )
            });
            format!(
                "{{\"world\":{},\"states\":{},\"depth\":{},\"seconds\":{:.3},\"complete\":{},\"stopped_by\":{},\"left\":{}{fingerprints}}}",
                js(w.name),
                o.states,
                o.depth,
                o.seconds,
                o.complete,
                o.cut.map_or("null".to_string(), |c| js(c.describe())),
                serde_json::to_string(&o.left).expect("plain numbers")
            )
        })
        .collect();
    let complete = outcomes.iter().all(|o| o.complete);
    let ps: Vec<String> = Property::ALL
        .into_iter()
        .map(|p| {
            let (broken, witnessed) = combined(outcomes, p);
            let holds = match (broken, complete) {
                (Some(_), _) => "false",
                (None, true) => "true",
                (None, false) => "null",
            };
            let violation = broken
                .and_then(|i| outcomes[i].verdicts.iter().find(|v| v.property == p))
                .and_then(|v| v.counterexample.as_ref())
                .map_or("null".to_string(), |(actions, v)| {
                    let steps: Vec<String> = actions.iter().map(|a| js(&a.to_string())).collect();
                    let world = broken.map_or("", |i| worlds[i].name);
                    format!(
                        "{{\"world\":{},\"message\":{},\"trace\":[{}]}}",
                        js(world),
                        js(&v.to_string()),
                        steps.join(",")
                    )
                });
            format!(
                "{{\"property\":{},\"holds\":{holds},\"witnessed\":{},\"violation\":{}}}",
                js(p.name()),
                witnessed,
                violation
            )
        })
        .collect();
    let flaws: Vec<String> = run.flaws.iter().map(|f| js(f.name())).collect();
    let shard = match run.shard {
        (1, 1) => String::new(),
        (k, n) => format!(",\"shard\":[{k},{n}]"),
    };
    format!(
        "{{\"scope\":{},\"flaws\":[{}],\"checker\":{}{shard},\"worlds\":[{}],\"properties\":[{}]}}",
        js(run.scope.name()),
        flaws.join(","),
        js(search_name(run.search)),
        ws.join(","),
        ps.join(",")
    )
}

/// How one flaw was caught.
#[derive(Clone, Debug)]
pub struct Catch {
    pub flaw: Flaw,
    /// The broken property and its shortest trace, rendered.
    pub caught: Option<(Property, usize, String)>,
    /// The shortest trace as a trace file would hold it.
    pub trace: Option<crate::tracefile::Trace>,
    pub states: usize,
    pub seconds: f64,
}

/// Check every catalogue flaw on its own, stopping at its first violation.
/// Every counterexample of a check as a trace file, with its file name (`PROPERTY.WORLD.json`).
pub fn counterexample_traces(run: &Run, worlds: &[World], outcomes: &[Outcome]) -> Vec<(String, Trace)> {
    let mut traces = Vec::new();
    for (w, o) in worlds.iter().zip(outcomes) {
        for v in o.violated() {
            let Some((actions, _)) = &v.counterexample else { continue };
            let property = v.property;
            let trace = Trace {
                title: format!(
                    "{property} breaks in world {} (scope {}, flaws: {}); {} trace from listwatch check",
                    w.name,
                    run.scope.name(),
                    run.flaws,
                    if run.search == Search::Bfs { "shortest" } else { "a" }
                ),
                config: w.config,
                seed: None,
                actions: actions.clone(),
                expect: TraceVerdict::Breaks { property, step: actions.len() },
                client: listwatch_model::ModelReflector::NAME.to_string(),
            };
            traces.push((format!("{}.{}.json", property.name(), w.name), trace));
        }
    }
    traces
}

pub fn catch_all(run: &Run) -> Vec<Catch> {
    Flaw::ALL
        .into_iter()
        .map(|flaw| {
            let mut c = Catch { flaw, caught: None, trace: None, states: 0, seconds: 0.0 };
            // The world of the flaw's own story first: the manager's flaw lives in the manager.
            let mut ws = worlds(run.scope, Flaws::only(flaw));
            ws.sort_by_key(|w| w.name != crate::scope::home_world(flaw));
            for w in ws {
                let o = check_world(w.config, Search::Bfs, Limits { stop_at_violation: true, ..run.limits });
                c.states += o.states;
                c.seconds += o.seconds;
                let found = o.violated().find_map(|v| v.counterexample.as_ref().map(|ce| (v.property, ce)));
                if let Some((property, (actions, violation))) = found {
                    c.caught = Some((property, actions.len(), render(w.config, actions, violation)));
                    c.trace = Some(crate::tracefile::Trace {
                        title: format!(
                            "{} ({}): {property} breaks; shortest trace, checker scope {}",
                            flaw.name(),
                            flaw.upstream(),
                            run.scope.name()
                        ),
                        config: w.config,
                        seed: None,
                        actions: actions.clone(),
                        expect: crate::tracefile::Verdict::Breaks { property, step: actions.len() },
                        client: listwatch_model::ModelReflector::NAME.to_string(),
                    });
                    break;
                }
            }
            c
        })
        .collect()
}

pub fn bugs_text(run: &Run, caught: &[Catch], correct: &[Outcome]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "listwatch bugs: scope {}", run.scope.name());
    let _ = writeln!(
        out,
        "  {:<24} {:<24} {:<7} {:<31} {:>9} {:>8} {:>6}",
        "flaw", "upstream", "caught", "property", "states", "seconds", "steps"
    );
    for c in caught {
        let (yes, property, steps) = match &c.caught {
            Some((p, n, _)) => ("yes", p.name(), n.to_string()),
            None => ("NO", "-", "-".to_string()),
        };
        let _ = writeln!(
            out,
            "  {:<24} {:<24} {:<7} {:<31} {:>9} {:>8.2} {:>6}",
            c.flaw.name(),
            c.flaw.upstream(),
            yes,
            property,
            c.states,
            c.seconds,
            steps
        );
    }
    let verified = correct.iter().all(|o| o.complete && o.violated().next().is_none());
    let states: usize = correct.iter().map(|o| o.states).sum();
    let seconds: f64 = correct.iter().map(|o| o.seconds).sum();
    // C10: the reflector modes the scope's worlds run, each proven.
    let mut modes: Vec<&str> = crate::scope::worlds(run.scope, listwatch_model::Flaws::NONE)
        .iter()
        .filter(|w| w.config.reflectors > 0)
        .map(|w| w.config.reflector.mode.name())
        .collect();
    modes.sort_unstable();
    modes.dedup();
    let _ = writeln!(
        out,
        "  correct system: {} in scope {}, reflectors in {} mode ({states} states, {seconds:.2} s, {:.0} states/s)",
        if verified { "verified" } else { "NOT verified" },
        run.scope.name(),
        modes.join(" and "),
        states as f64 / seconds.max(1e-6)
    );
    for c in caught {
        if let Some((p, n, trace)) = &c.caught {
            let _ = writeln!(out, "\n{} — {} broken in {n} steps:", c.flaw.name(), p.name());
            out.push_str(trace);
        }
    }
    out.trim_end().to_string()
}

pub fn bugs_json(run: &Run, caught: &[Catch], correct: &[Outcome]) -> String {
    let flaws: Vec<String> = caught
        .iter()
        .map(|c| {
            let (property, steps) = match &c.caught {
                Some((p, n, _)) => (js(p.name()), n.to_string()),
                None => ("null".to_string(), "null".to_string()),
            };
            format!(
                "{{\"flaw\":{},\"upstream\":{},\"caught\":{},\"property\":{property},\"states\":{},\"seconds\":{:.3},\"trace_len\":{steps}}}",
                js(c.flaw.name()),
                js(c.flaw.upstream()),
                c.caught.is_some(),
                c.states,
                c.seconds
            )
        })
        .collect();
    let verified = correct.iter().all(|o| o.complete && o.violated().next().is_none());
    let states: usize = correct.iter().map(|o| o.states).sum();
    let seconds: f64 = correct.iter().map(|o| o.seconds).sum();
    format!(
        "{{\"flaws\":[{}],\"correct\":{{\"verified\":{verified},\"scope\":{},\"states\":{states},\"seconds\":{seconds:.3}}}}}",
        flaws.join(","),
        js(run.scope.name())
    )
}
