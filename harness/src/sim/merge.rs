//! The shards of one campaign (`simulate --shard K/N --json`, run on N machines or as N processes)
//! merged into the campaign a single run would have given: the same summary, text or JSON, byte for
//! byte.
//!
//! A single run visits the seeds in order and shrinks the first failure of each kind; shard K of N
//! visits every Nth seed from the Kth, so each shard shrank its own first failures. The merge orders
//! the failures by seed and keeps the shrunk trace of the first of each kind only: the one a single
//! run wrote, under the same name when the shards shared one `--out`.

use std::path::PathBuf;

use listwatch_model::{FaultKind, FaultKinds, Flaw, Flaws};
use listwatch_properties::Property;
use serde_json::Value;

use super::campaign::{Campaign, Failure, Summary};
use super::draw::Narrowing;
use super::run::Tally;

/// One shard's JSON summary, named for errors (its file).
#[derive(Clone, Debug)]
pub struct Shard {
    pub name: String,
    pub json: String,
}

/// Merge the shards of one campaign; `Err` is one line naming the shard and what is wrong (not JSON,
/// another campaign, a shard missing or given twice).
pub fn merge(shards: &[Shard]) -> Result<(Campaign, Summary), String> {
    let first = shards.first().ok_or("no shard given")?;
    let mut parsed = Vec::with_capacity(shards.len());
    for s in shards {
        let v: Value = serde_json::from_str(&s.json)
            .map_err(|e| format!("{}: not a `simulate --json` summary ({e})", s.name))?;
        parsed.push(read(&s.name, &v)?);
    }
    let head = &parsed[0];
    let (campaign, n) = (head.campaign.clone(), head.shard.1);
    // A set, not a vector of N: N comes from the files, and a file may say anything.
    let mut seen = std::collections::BTreeSet::new();
    let mut summary = Summary {
        client: head.summary.client.clone(),
        not_judged: head.summary.not_judged.clone(),
        ..Summary::default()
    };
    for (s, read) in shards.iter().zip(parsed) {
        let Read { campaign: c, shard: (shard_k, shard_n), summary: part } = read;
        if (&c, &part.client, &part.not_judged) != (&campaign, &summary.client, &summary.not_judged) {
            return Err(format!(
                "{}: another campaign than {}'s (seeds, steps, flaws, fault kinds or client differ)",
                s.name, first.name
            ));
        }
        if shard_n != n {
            return Err(format!("{}: shard {shard_k}/{shard_n}, but {} is one of {n}", s.name, first.name));
        }
        if !seen.insert(shard_k) {
            return Err(format!("{}: shard {shard_k}/{n} is given twice", s.name));
        }
        summary.seeds_run += part.seeds_run;
        summary.tally.add(&part.tally);
        summary.failures.extend(part.failures);
    }
    let missing = n - seen.len() as u64;
    if missing > 0 {
        let named: Vec<String> =
            (1..=n).filter(|k| !seen.contains(k)).take(10).map(|k| format!("{k}/{n}")).collect();
        let more = if missing > 10 { format!(" and {} more", missing - 10) } else { String::new() };
        return Err(format!("shards missing: {}{more} (every shard of {n} is needed)", named.join(", ")));
    }
    summary.failures.sort_by_key(|f| f.seed);
    let mut kinds_shrunk: Vec<String> = Vec::new();
    for f in &mut summary.failures {
        if kinds_shrunk.contains(&f.what) {
            f.shrunk = None;
        } else if f.shrunk.is_some() {
            kinds_shrunk.push(f.what.clone());
        }
    }
    Ok((campaign, summary))
}

/// What one shard's JSON says: its campaign (`shard` left 1/1), which shard it is, and its summary.
struct Read {
    campaign: Campaign,
    shard: (u64, u64),
    summary: Summary,
}

/// A release a summary names (`etcd`, `apiserver`), absent for none: `key`'s value read by `parse`.
fn release<R>(
    v: &Value,
    bad: &dyn Fn(&str) -> String,
    key: &str,
    parse: fn(&str) -> Option<R>,
    like: &str,
) -> Result<Option<R>, String> {
    let read = |r: &Value| r.as_str().and_then(parse);
    v.get(key)
        .map(|r| read(r).ok_or_else(|| bad(&format!("{key} {r} is not a release like {like}"))))
        .transpose()
}

fn read(name: &str, v: &Value) -> Result<Read, String> {
    let bad = |what: &str| format!("{name}: not a `simulate --json` summary ({what})");
    let u = |key: &str| v[key].as_u64().ok_or_else(|| bad(&format!("no whole number `{key}`")));
    let names = |key: &str| -> Result<Vec<String>, String> {
        v[key]
            .as_array()
            .ok_or_else(|| bad(&format!("no list `{key}`")))?
            .iter()
            .map(|n| {
                n.as_str().map(str::to_string).ok_or_else(|| bad(&format!("`{key}` holds a non-string")))
            })
            .collect()
    };
    let shard = v["shard"].as_str().ok_or_else(|| bad("no `shard`"))?;
    let (k, n) = shard
        .split_once('/')
        .and_then(|(k, n)| Some((k.parse::<u64>().ok()?, n.parse::<u64>().ok()?)))
        .filter(|(k, n)| (1..=*n).contains(k))
        .ok_or_else(|| bad(&format!("shard '{shard}' is not K/N")))?;
    let mut flaws = Flaws::NONE;
    for f in names("flaws")? {
        flaws = flaws.with(f.parse::<Flaw>().map_err(|e| format!("{name}: {e}"))?);
    }
    let mut fault_kinds = FaultKinds::NONE;
    for f in names("fault_kinds")? {
        let kind = FaultKind::ALL.into_iter().find(|k| k.name() == f);
        fault_kinds = fault_kinds.with(kind.ok_or_else(|| bad(&format!("unknown fault kind '{f}'")))?);
    }
    let campaign = Campaign {
        first_seed: u("first_seed")?,
        seeds: u("seeds")?,
        shard: (1, 1),
        steps: u32::try_from(u("safety_steps_per_seed")?).map_err(|_| bad("safety_steps_per_seed"))?,
        flaws,
        narrowing: Narrowing {
            fault_kinds,
            no_cache_reinit_429: v["no_cache_reinit_429"]
                .as_bool()
                .ok_or_else(|| bad("no_cache_reinit_429"))?,
            etcd: release(v, &bad, "etcd", listwatch_model::EtcdRelease::parse, "3.5.35")?,
            apiserver: release(v, &bad, "apiserver", listwatch_model::ApiServerRelease::parse, "v0.33.13")?,
        },
        out: PathBuf::new(),
    };
    let property = |p: &str| Property::parse(p).ok_or_else(|| bad(&format!("unknown property '{p}'")));
    let mut not_judged = Vec::new();
    if let Some(map) = v["not_judged"].as_object() {
        for (p, why) in map {
            not_judged.push((property(p)?, why.as_str().unwrap_or_default().to_string()));
        }
        // The JSON's keys are sorted by name; a campaign lists them in catalogue order.
        not_judged.sort_by_key(|(p, _)| *p as usize);
    }
    let client = v["client"].as_str().map(str::to_string);
    let tally = tally(v).ok_or_else(|| bad("steps, faults, requests or witnessed"))?;
    let mut failures = Vec::new();
    for f in v["failures"].as_array().ok_or_else(|| bad("no `failures`"))? {
        failures.push(failure(f, &property).ok_or_else(|| bad("a failure without seed, breaks or steps"))??);
    }
    let summary =
        Summary { seeds_run: u("seeds_run")?, tally, failures, client, not_judged, ..Summary::default() };
    Ok(Read { campaign, shard: (k, n), summary })
}

fn tally(v: &Value) -> Option<Tally> {
    let mut t = Tally {
        safety_steps: v["steps"]["safety"].as_u64()?,
        heal_steps: v["steps"]["heal"].as_u64()?,
        lists: v["requests"]["list"].as_u64()?,
        streaming_lists: v["requests"]["streaming_list"].as_u64()?,
        watches: v["requests"]["watch"].as_u64()?,
        ..Tally::default()
    };
    for k in FaultKind::ALL {
        t.faults[k as usize] = v["faults"][k.name()].as_u64()?;
    }
    for p in Property::ALL {
        t.witnessed[p as usize] = v["witnessed"][p.name()].as_u64()?;
    }
    Some(t)
}

type PropertyOf<'a> = dyn Fn(&str) -> Result<Property, String> + 'a;

fn failure(f: &Value, property: &PropertyOf) -> Option<Result<Failure, String>> {
    let text = |key: &str| f[key].as_str().map(str::to_string);
    let mut also = Vec::new();
    for a in f["also"].as_array()? {
        let p = match property(a["breaks"].as_str()?) {
            Ok(p) => p,
            Err(e) => return Some(Err(e)),
        };
        also.push((p, a["steps"].as_u64()? as usize, a["detail"].as_str()?.to_string()));
    }
    let shrunk = match (f["shrunk_steps"].as_u64(), text("trace")) {
        (Some(n), Some(path)) => Some((n as usize, PathBuf::from(path))),
        _ => None,
    };
    Some(Ok(Failure {
        seed: f["seed"].as_u64()?,
        what: text("breaks")?,
        detail: text("detail")?,
        steps: f["steps"].as_u64()? as usize,
        drawn: text("drawn")?,
        also,
        shrunk,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::campaign::{self, run};
    use listwatch_model::{Flaw, ModelReflector};

    fn campaign(shard: (u64, u64), out: &std::path::Path) -> Campaign {
        let flaws = Flaws::NONE.with(Flaw::ALL[0]);
        Campaign { shard, ..Campaign::new(12, 40, flaws, out.to_path_buf()) }
    }

    fn shards(n: u64, out: &std::path::Path) -> Vec<Shard> {
        (1..=n)
            .map(|k| {
                let c = campaign((k, n), out);
                let s = run(&c, &ModelReflector).expect("a shard runs");
                Shard { name: format!("shard-{k}.json"), json: campaign::json(&c, &s) }
            })
            .collect()
    }

    #[test]
    fn three_shards_merge_into_the_single_run_byte_for_byte() {
        let out = std::env::temp_dir().join(format!("listwatch-merge-{}", std::process::id()));
        let one = campaign((1, 1), &out);
        let single = run(&one, &ModelReflector).expect("the single run");
        assert!(!single.failures.is_empty(), "the planted flaw should fail some of the 12 seeds");
        let (c, merged) = merge(&shards(3, &out)).expect("the shards merge");
        assert_eq!(campaign::text(&c, &merged), campaign::text(&one, &single));
        assert_eq!(campaign::json(&c, &merged), campaign::json(&one, &single));
        let _ = std::fs::remove_dir_all(&out);
    }

    /// The releases a summary names are read back, and one that is not a release is refused by name.
    #[test]
    fn a_summarys_releases_are_read_and_a_bad_one_is_named() {
        let bad = |what: &str| format!("s.json: {what}");
        let v: Value = serde_json::json!({"etcd": "3.5.35", "apiserver": "v0.3x.1"});
        let etcd = release(&v, &bad, "etcd", listwatch_model::EtcdRelease::parse, "3.5.35");
        assert_eq!(etcd, Ok(listwatch_model::EtcdRelease::parse("3.5.35")));
        let api = release(&v, &bad, "apiserver", listwatch_model::ApiServerRelease::parse, "v0.33.13");
        assert_eq!(api, Err("s.json: apiserver \"v0.3x.1\" is not a release like v0.33.13".to_string()));
        assert_eq!(release(&v, &bad, "none", listwatch_model::EtcdRelease::parse, "3.5.35"), Ok(None));
    }

    #[test]
    fn a_missing_a_repeated_or_a_foreign_shard_is_refused() {
        let out = std::env::temp_dir().join(format!("listwatch-merge-refused-{}", std::process::id()));
        let mut s = shards(3, &out);
        let third = s.pop().expect("three shards");
        assert_eq!(merge(&s).err().as_deref(), Some("shards missing: 3/3 (every shard of 3 is needed)"));
        s.push(Shard { name: "again.json".into(), json: s[1].json.clone() });
        assert_eq!(merge(&s).err().as_deref(), Some("again.json: shard 2/3 is given twice"));
        let huge = s[0].json.replace("\"shard\": \"1/3\"", "\"shard\": \"1/18446744073709551615\"");
        let e = merge(&[Shard { name: "huge.json".into(), json: huge }]).expect_err("one of 2^64 - 1");
        assert!(e.starts_with("shards missing: 2/18446744073709551615, "), "{e}");
        assert!(e.contains(" and 18446744073709551604 more"), "{e}");
        s.pop();
        let other = Campaign { steps: 41, ..campaign((3, 3), &out) };
        let json = campaign::json(&other, &run(&other, &ModelReflector).expect("runs"));
        s.push(Shard { name: "other.json".into(), json });
        let e = merge(&s).expect_err("another campaign");
        assert!(e.starts_with("other.json: another campaign than shard-1.json's"), "{e}");
        s.pop();
        s.push(Shard { name: "cut.json".into(), json: third.json[..third.json.len() / 2].to_string() });
        let e = merge(&s).expect_err("a cut file");
        assert!(e.starts_with("cut.json: not a `simulate --json` summary"), "{e}");
        let _ = std::fs::remove_dir_all(&out);
    }
}
