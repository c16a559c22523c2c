//! The shards of one check (`check --shard K/N --json`, run on N machines or as N processes, each
//! checking every Nth world of the scope) merged into the whole check's verdict: its worlds in the
//! scope's order, and for each property the verdict `check --json` of every world would give. A
//! property breaks where it breaks in the first world (in the scope's order) that breaks it, as
//! there; it holds when every world was checked to the end and none breaks it.
//!
//! The JSON is the single run's but for the order of keys within a world and its timings; the exit
//! status is `check`'s: 1 a property breaks, 2 a world stopped before its end, 3 a property holds
//! without its witness reached (vacuously), else 0.

use std::collections::BTreeSet;
use std::fmt::Write;

use serde::Deserialize;
use serde_json::Value;

use crate::scope::WORLD_NAMES;
use crate::sim::merge::Shard;

/// The merged check: its JSON, its text and the exit status `check` would give.
#[derive(Clone, Debug)]
pub struct Merged {
    pub json: String,
    pub text: String,
    pub status: i32,
}

/// Whether `json` is a `check --json` result (rather than a campaign's summary).
pub fn is_check(json: &Value) -> bool {
    json.get("checker").is_some() && json.get("worlds").is_some()
}

/// One property's verdict over the merged worlds.
struct Verdict {
    name: String,
    broken: Option<(usize, Value)>,
    witnessed: bool,
}

/// Merge the shards of one check; `Err` is one line naming the shard and what is wrong (not a check
/// result, another check, a shard missing or given twice, a world in two shards).
pub fn merge(shards: &[Shard]) -> Result<Merged, String> {
    let mut parsed = Vec::with_capacity(shards.len());
    for s in shards {
        let v: Value = serde_json::from_str(&s.json)
            .map_err(|e| format!("{}: not a `check --json` result ({e})", s.name))?;
        if !is_check(&v) {
            return Err(format!("{}: not a `check --json` result (no checker or worlds)", s.name));
        }
        parsed.push((s.name.as_str(), v));
    }
    let (first_name, first) = parsed.first().ok_or("no shard given")?;
    let same = ["scope", "flaws", "checker"];
    let n = shard_of(first_name, first)?.1;
    let mut ks = BTreeSet::new();
    for (name, v) in &parsed {
        if let Some(key) = same.iter().find(|k| v[**k] != first[**k]) {
            return Err(format!("{name}: another check than {first_name}'s (its {key} differs)"));
        }
        let (k, of) = shard_of(name, v)?;
        if of != n {
            return Err(format!("{name}: shard {k}/{of}, where {first_name} is one of {n}"));
        }
        if !ks.insert(k) {
            return Err(format!("{name}: shard {k}/{n} is given twice"));
        }
    }
    if let Some(k) = (1..=n).find(|k| !ks.contains(k)) {
        return Err(format!("shard {k}/{n} is missing"));
    }
    let mut worlds: Vec<(usize, Value)> = Vec::new();
    for (name, v) in &parsed {
        for w in v["worlds"].as_array().ok_or_else(|| format!("{name}: its worlds are not a list"))? {
            let world = w["world"].as_str().unwrap_or("");
            let at = WORLD_NAMES
                .iter()
                .position(|n| *n == world)
                .ok_or_else(|| format!("{name}: an unknown world {world:?}"))?;
            if worlds.iter().any(|(i, _)| *i == at) {
                return Err(format!("{name}: the world {world} is in two shards"));
            }
            worlds.push((at, w.clone()));
        }
    }
    worlds.sort_by_key(|(at, _)| *at);
    let complete = worlds.iter().all(|(_, w)| w["complete"] == Value::Bool(true));
    let verdicts = properties(&parsed)?;
    Ok(Merged {
        json: json(first, &worlds, &verdicts, complete),
        text: text(first, n, &worlds, &verdicts, complete),
        status: status(&verdicts, complete),
    })
}

fn shard_of(name: &str, v: &Value) -> Result<(u64, u64), String> {
    match &v["shard"] {
        Value::Null => Ok((1, 1)),
        s => match (s[0].as_u64(), s[1].as_u64()) {
            (Some(k), Some(n)) if 1 <= k && k <= n => Ok((k, n)),
            _ => Err(format!("{name}: its shard {s} is not [K, N] with 1 <= K <= N")),
        },
    }
}

/// Each property's verdict, in the first shard's order of properties.
fn properties(parsed: &[(&str, Value)]) -> Result<Vec<Verdict>, String> {
    let (first_name, first) = &parsed[0];
    let names: Vec<String> = first["properties"]
        .as_array()
        .ok_or_else(|| format!("{first_name}: its properties are not a list"))?
        .iter()
        .filter_map(|p| p["property"].as_str().map(str::to_string))
        .collect();
    let mut out = Vec::with_capacity(names.len());
    for name in names {
        let mut verdict = Verdict { name: name.clone(), broken: None, witnessed: false };
        for (shard, v) in parsed {
            let p = v["properties"]
                .as_array()
                .and_then(|ps| ps.iter().find(|p| p["property"] == name.as_str()))
                .ok_or_else(|| format!("{shard}: it judges no property {name}"))?;
            verdict.witnessed |= p["witnessed"] == Value::Bool(true);
            if p["holds"] == Value::Bool(false) {
                let world = p["violation"]["world"].as_str().unwrap_or("");
                let at = WORLD_NAMES.iter().position(|n| *n == world).ok_or_else(|| {
                    format!("{shard}: {name} breaks in no world it names (a check before --shard?)")
                })?;
                if verdict.broken.as_ref().is_none_or(|(b, _)| at < *b) {
                    verdict.broken = Some((at, p["violation"].clone()));
                }
            }
        }
        out.push(verdict);
    }
    Ok(out)
}

fn json(head: &Value, worlds: &[(usize, Value)], verdicts: &[Verdict], complete: bool) -> String {
    let ws: Vec<String> = worlds.iter().map(|(_, w)| w.to_string()).collect();
    let ps: Vec<String> = verdicts
        .iter()
        .map(|v| {
            let holds = match (&v.broken, complete) {
                (Some(_), _) => "false",
                (None, true) => "true",
                (None, false) => "null",
            };
            let violation = v.broken.as_ref().map_or("null".to_string(), |(_, b)| b.to_string());
            format!(
                "{{\"property\":{},\"holds\":{holds},\"witnessed\":{},\"violation\":{violation}}}",
                Value::from(v.name.as_str()),
                v.witnessed
            )
        })
        .collect();
    format!(
        "{{\"scope\":{},\"flaws\":{},\"checker\":{},\"worlds\":[{}],\"properties\":[{}]}}",
        head["scope"],
        head["flaws"],
        head["checker"],
        ws.join(","),
        ps.join(",")
    )
}

fn text(head: &Value, n: u64, worlds: &[(usize, Value)], verdicts: &[Verdict], complete: bool) -> String {
    let mut out = String::new();
    let flaws: Vec<&str> = head["flaws"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    let _ = writeln!(
        out,
        "listwatch merge: check of scope {}, flaws: {}, checker {}, from {n} shards",
        head["scope"].as_str().unwrap_or("?"),
        if flaws.is_empty() { "none".to_string() } else { flaws.join(", ") },
        head["checker"].as_str().unwrap_or("?"),
    );
    for (_, w) in worlds {
        let stopped = match &w["stopped_by"] {
            Value::String(why) if w["complete"] != Value::Bool(true) => {
                format!(", INCOMPLETE (stopped by {why})")
            }
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "  {:<17} {} states, depth {}{stopped}",
            w["world"].as_str().unwrap_or("?"),
            w["states"],
            w["depth"]
        );
        if let Ok(left) = crate::bfs::Left::deserialize(&w["left"]) {
            let _ = writeln!(out, "  {:<17} {}", "", left.describe());
        }
    }
    let _ = writeln!(out, "\n  {:<31} {:<9} witness", "property", "verdict");
    for v in verdicts {
        let verdict = match (&v.broken, complete) {
            (Some(_), _) => "VIOLATED",
            (None, true) => "holds",
            (None, false) => "undecided",
        };
        let seen = if v.witnessed { "reached" } else { "NOT reached" };
        let _ = writeln!(out, "  {:<31} {verdict:<9} {seen}", v.name);
    }
    for v in verdicts {
        let Some((at, b)) = &v.broken else { continue };
        let steps = b["trace"].as_array().map_or(0, Vec::len);
        let _ = writeln!(
            out,
            "\n{} in {} ({steps} steps): {}",
            v.name,
            WORLD_NAMES[*at],
            b["message"].as_str().unwrap_or("")
        );
        for (i, step) in b["trace"].as_array().into_iter().flatten().enumerate() {
            let _ = writeln!(out, "  {:>3}. {}", i + 1, step.as_str().unwrap_or("?"));
        }
    }
    out.trim_end().to_string()
}

fn status(verdicts: &[Verdict], complete: bool) -> i32 {
    if verdicts.iter().any(|v| v.broken.is_some()) {
        1
    } else if !complete {
        2
    } else if verdicts.iter().any(|v| !v.witnessed) {
        3
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bfs::Left;

    #[test]
    fn a_world_a_limit_stopped_says_where_after_the_merge_too() {
        let left = Left { depth: 9, level_states: 258_725, level_judged: 4_096, next_found: 9_000 };
        let json = format!(
            "{{\"scope\":\"large\",\"flaws\":[],\"checker\":\"bfs\",\"worlds\":[{{\"world\":\"list-watch\",\
             \"states\":115034,\"depth\":9,\"seconds\":1.0,\"complete\":false,\
             \"stopped_by\":\"the --time-limit\",\"left\":{}}}],\"properties\":[]}}",
            serde_json::to_string(&left).expect("plain numbers")
        );
        let merged = merge(&[Shard { name: "shard-1.json".into(), json }]).expect("merges");
        assert_eq!(merged.status, 2);
        let lines: Vec<&str> = merged.text.lines().map(str::trim).collect();
        let at = lines.iter().position(|l| l.starts_with("list-watch")).expect("the world's line");
        assert_eq!(lines[at + 1], left.describe(), "{}", merged.text);
        assert_eq!(
            left.describe(),
            "stopped in depth 9: 4096 of its 258725 states judged, 9000 states of depth 10 found so far; \
             the deeper levels not reached"
        );
        let v: Value = serde_json::from_str(&merged.json).expect("JSON");
        assert_eq!(Left::deserialize(&v["worlds"][0]["left"]).ok(), Some(left));
    }
}
