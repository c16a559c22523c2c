//! `listwatch simulate`: arguments and output.

use std::path::PathBuf;

use listwatch_model::{Flaw, Flaws};

use super::UsageError;
use crate::sim::campaign::{self, Campaign};

fn number(name: &str, v: &str) -> Result<u64, UsageError> {
    v.parse::<u64>().map_err(|_| UsageError(format!("{name}: '{v}' is not a whole number")))
}

/// Parse `simulate`'s arguments; also returns whether `--json` was given.
pub fn parse(args: &[String]) -> Result<(Campaign, bool), UsageError> {
    let mut seed = None;
    let mut seeds = None;
    let mut shard = (1, 1);
    let mut steps = 200u32;
    let mut flaws = Flaws::NONE;
    let mut json = false;
    let mut out = PathBuf::from("target/listwatch/failures");
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut value =
            |name: &str| it.next().cloned().ok_or_else(|| UsageError(format!("{name}: missing value")));
        match arg.as_str() {
            "--seed" => seed = Some(number("--seed", &value("--seed")?)?),
            "--seeds" => {
                let n = number("--seeds", &value("--seeds")?)?;
                if n == 0 {
                    return Err(UsageError("--seeds: must be at least 1".into()));
                }
                seeds = Some(n);
            }
            "--steps" => {
                let v = value("--steps")?;
                steps =
                    v.parse::<u32>().ok().filter(|n| (1..=1_000_000).contains(n)).ok_or_else(|| {
                        UsageError(format!("--steps: '{v}' is not a number in 1..=1000000"))
                    })?;
            }
            "--shard" => {
                let v = value("--shard")?;
                let bad = || UsageError(format!("--shard: '{v}' is not K/N with 1 <= K <= N (e.g. 2/8)"));
                let (k, n) = v.split_once('/').ok_or_else(bad)?;
                let (k, n) = (k.parse::<u64>().map_err(|_| bad())?, n.parse::<u64>().map_err(|_| bad())?);
                if k == 0 || k > n {
                    return Err(bad());
                }
                shard = (k, n);
            }
            "--flaw" => {
                let v = value("--flaw")?;
                let flaw: Flaw = v.parse().map_err(|e| UsageError(format!("--flaw: {e}")))?;
                flaws = flaws.with(flaw);
            }
            "--out" => out = PathBuf::from(value("--out")?),
            "--json" => json = true,
            other => return Err(UsageError(format!("simulate: unknown argument '{other}'"))),
        }
    }
    let first_seed = seed.unwrap_or(0);
    let seeds = seeds.unwrap_or(if seed.is_some() { 1 } else { 100 });
    if first_seed.checked_add(seeds).is_none() {
        return Err(UsageError("--seed/--seeds: the seed range overflows".into()));
    }
    Ok((Campaign { first_seed, seeds, shard, steps, flaws, out }, json))
}

/// Run `simulate`: 0 when every seed passes, 1 when one fails, 2 when a trace cannot be written.
pub fn simulate(args: &[String]) -> Result<i32, UsageError> {
    let (c, json) = parse(args)?;
    let summary = match campaign::run(&c) {
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
