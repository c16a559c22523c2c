//! The simulator: deterministic to the byte, shards that add up to the whole, every catalogue flaw it can
//! reach found and shrunk into a trace that replays, and the correct system passing.

use std::path::PathBuf;

use listwatch_harness::replay::{replay, take_enabled};
use listwatch_harness::sim::campaign::{self, Campaign};
use listwatch_harness::sim::draw::Narrowing;
use listwatch_harness::sim::shrink::BUDGETS;
use listwatch_harness::tracefile::{Trace, Verdict};
use listwatch_model::{Action, Config, FaultKinds, Flaw, Flaws, ModelReflector};

fn campaign(name: &str, seeds: u64, flaws: Flaws) -> Campaign {
    Campaign::new(seeds, 200, flaws, PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("simulate").join(name))
}

#[test]
fn the_same_campaign_prints_the_same_bytes() {
    let c = campaign("determinism", 300, Flaws::only(Flaw::StaleDeleteRv));
    let first = campaign::run(&c, &ModelReflector).expect("runs");
    let trace_path = first.failures[0].shrunk.as_ref().expect("the first failure is shrunk").1.clone();
    let trace_bytes = std::fs::read(&trace_path).expect("written");
    let second = campaign::run(&c, &ModelReflector).expect("runs");
    assert_eq!(campaign::json(&c, &first), campaign::json(&c, &second));
    assert_eq!(campaign::text(&c, &first), campaign::text(&c, &second));
    assert_eq!(std::fs::read(&trace_path).expect("written"), trace_bytes);
}

#[test]
fn shards_split_the_seeds_and_add_up_to_the_whole() {
    let whole = campaign("whole", 90, Flaws::NONE);
    let all = campaign::run(&whole, &ModelReflector).expect("runs");
    let mut seeds = Vec::new();
    let mut steps = 0;
    for k in 1..=3 {
        let shard = Campaign { shard: (k, 3), ..whole.clone() };
        seeds.extend(shard.shard_seeds());
        let s = campaign::run(&shard, &ModelReflector).expect("runs");
        steps += s.tally.safety_steps + s.tally.heal_steps;
    }
    seeds.sort_unstable();
    assert_eq!(seeds, (0..90).collect::<Vec<_>>());
    assert_eq!(steps, all.tally.safety_steps + all.tally.heal_steps);
}

#[test]
fn the_correct_system_passes_and_reaches_every_witness_it_can() {
    let c = campaign("correct", 1000, Flaws::NONE);
    let s = campaign::run(&c, &ModelReflector).expect("runs");
    assert!(s.failures.is_empty(), "{}", campaign::text(&c, &s));
    // Every property but the manager's (whose witness needs a paused cluster and a served request in
    // one seed) is exercised, not only vacuously held.
    for (i, n) in s.tally.witnessed.iter().enumerate() {
        assert!(*n > 0 || i == 4, "property {i} never reached its witness:\n{}", campaign::text(&c, &s));
    }
}

#[test]
fn every_flaw_is_found_in_1000_seeds_and_its_shrunk_trace_replays_and_is_minimal() {
    for flaw in Flaw::ALL {
        let c = campaign(flaw.name(), 1000, Flaws::only(flaw));
        let s = campaign::run(&c, &ModelReflector).expect("runs");
        // The first broken property (a run that does not come to rest is a finding too, not shrunk).
        let first = s
            .failures
            .iter()
            .find(|f| f.what != "no-rest")
            .unwrap_or_else(|| panic!("{flaw}: no property broken in 1000 seeds"));
        let (len, path) = first.shrunk.clone().expect("the first failure of its property is shrunk");
        assert!(len <= first.steps, "{flaw}: shrinking made it longer");
        let trace = Trace::load(&path).unwrap_or_else(|e| panic!("{e}"));
        let r = replay(&trace).unwrap_or_else(|e| panic!("{flaw}: {e}"));
        assert!(matches!(r.verdict, Verdict::Breaks { step, .. } if step == len), "{flaw}: {}", r.verdict);
        assert_eq!(r.correct, Verdict::Holds, "{flaw}: the correct reflector breaks on the shrunk trace");
        assert_minimal(&trace, flaw);
    }
}

/// No single step of the trace, and no single unit of its budgets or keys, can go with the property still
/// breaking (steps the shorter run no longer enables are left out, as the shrinker does).
fn assert_minimal(trace: &Trace, flaw: Flaw) {
    let Verdict::Breaks { property, .. } = trace.expect else { panic!("{flaw}: the trace expects a break") };
    let breaks = |config: Config, actions: &[Action]| {
        take_enabled(config, actions).1.is_some_and(|v| v.property == property)
    };
    for i in 0..trace.actions.len() {
        let mut fewer = trace.actions.clone();
        let gone = fewer.remove(i);
        assert!(!breaks(trace.config, &fewer), "{flaw}: step {} ({gone}) could go", i + 1);
    }
    for (budget, lower) in BUDGETS {
        if let Some(smaller) = lower(trace.config) {
            assert!(!breaks(smaller, &trace.actions), "{flaw}: one of the {budget} could go");
        }
    }
}

/// `--fault-kinds` narrows the faults and nothing else: a seed keeps its world, and a campaign allowed
/// no kind injects no fault.
#[test]
fn fault_kinds_narrow_the_faults_and_keep_each_seeds_world() {
    use listwatch_harness::sim::run::run_seed_in;
    use listwatch_model::FaultKind;
    let only_500 =
        Narrowing { fault_kinds: FaultKinds::NONE.with(FaultKind::InternalError), ..Narrowing::none() };
    for seed in 0..50 {
        let all = run_seed_in(&ModelReflector, seed, Flaws::NONE, Narrowing::none(), 200, 6_000);
        let narrow = run_seed_in(&ModelReflector, seed, Flaws::NONE, only_500, 200, 6_000);
        let (a, n) = (all.draw.config, narrow.draw.config);
        assert_eq!((a.keys, a.writes, a.servers, a.reflectors), (n.keys, n.writes, n.servers, n.reflectors));
        assert!(
            n.fault_kinds.iter().all(|k| k == FaultKind::InternalError),
            "seed {seed}: {:?}",
            n.fault_kinds
        );
        let injected: u64 = FaultKind::ALL
            .iter()
            .filter(|k| **k != FaultKind::InternalError)
            .map(|k| narrow.tally.faults[*k as usize])
            .sum();
        assert_eq!(injected, 0, "seed {seed}: a fault of another kind was injected");
    }
    let mut c = campaign("no-faults", 100, Flaws::NONE);
    c.narrowing.fault_kinds = FaultKinds::NONE;
    let s = listwatch_harness::sim::campaign::run(&c, &ModelReflector).expect("runs");
    assert!(s.failures.is_empty());
    assert_eq!(s.tally.faults.iter().sum::<u64>(), 0, "no fault at all");
    assert!(listwatch_harness::sim::campaign::text(&c, &s).contains("fault kinds: none"));
}

/// `--no-cache-reinit-429` gives every seed servers from before k8s 1.31 (A14 off) and keeps the rest of
/// its world: the seeds that drew A14 run without it, and say so in the summary and the reproduce line.
#[test]
fn no_cache_reinit_429_turns_a14_off_and_keeps_each_seeds_world() {
    use listwatch_harness::sim::run::run_seed_in;
    let old_servers = Narrowing { no_cache_reinit_429: true, ..Narrowing::none() };
    let mut drew_a14 = 0;
    for seed in 0..50 {
        let all = run_seed_in(&ModelReflector, seed, Flaws::NONE, Narrowing::none(), 200, 6_000);
        let old = run_seed_in(&ModelReflector, seed, Flaws::NONE, old_servers, 200, 6_000);
        let (a, o) = (all.draw.config, old.draw.config);
        drew_a14 += u32::from(a.resilient_cache_init);
        assert!(!o.resilient_cache_init, "seed {seed}");
        assert_eq!(Config { resilient_cache_init: a.resilient_cache_init, ..o }, a, "seed {seed}: its world");
    }
    assert!(drew_a14 > 10, "{drew_a14} of 50 seeds drew A14");
    let mut c = campaign("no-cache-reinit-429", 20, Flaws::NONE);
    c.narrowing.no_cache_reinit_429 = true;
    let s = campaign::run(&c, &ModelReflector).expect("runs");
    assert!(s.failures.is_empty());
    assert!(campaign::text(&c, &s).contains("caches serve at once after a relist (no A14 429s)"));
    assert!(campaign::json(&c, &s).contains("\"no_cache_reinit_429\": true"));
}

/// `--etcd` puts every seed over one etcd release and keeps the rest of its world: etcd 3.4.23 drops
/// the tombstone at the compaction revision (E4) and answers no progress requests, so the servers
/// refuse every streaming list (A12) and the reflectors list instead; the summary and the JSON name
/// the release.
#[test]
fn etcd_puts_every_seed_over_one_release_and_keeps_its_world() {
    use listwatch_harness::sim::run::run_seed_in;
    use listwatch_model::{EtcdRelease, TombstonePolicy};
    let etcd_3_4 = EtcdRelease::new(3, 4, 23);
    let over = Narrowing { etcd: Some(etcd_3_4), ..Narrowing::none() };
    for seed in 0..50 {
        let all = run_seed_in(&ModelReflector, seed, Flaws::NONE, Narrowing::none(), 200, 6_000);
        let old = run_seed_in(&ModelReflector, seed, Flaws::NONE, over, 200, 6_000);
        let (a, o) = (all.draw.config, old.draw.config);
        assert_eq!((o.tombstones, o.etcd_progress_requests), (TombstonePolicy::DropAtCompaction, false));
        let same = Config { tombstones: a.tombstones, etcd_progress_requests: true, ..o };
        assert_eq!(same, a, "seed {seed}: its world");
    }
    let mut c = campaign("etcd-3.4", 100, Flaws::NONE);
    let fresh = campaign::run(&c, &ModelReflector).expect("runs");
    c.narrowing.etcd = Some(etcd_3_4);
    let s = campaign::run(&c, &ModelReflector).expect("runs");
    assert!(s.tally.lists > fresh.tally.lists, "refused streaming lists fall back to LIST");
    assert!(campaign::text(&c, &s).contains(", over etcd 3.4.23"));
    assert!(campaign::json(&c, &s).contains("\"etcd\": \"3.4.23\""));
}

/// `--apiserver` puts every seed's servers under one release's rules and keeps the rest of its world:
/// k8s.io/apiserver v0.33 refuses streaming lists (A12: its WatchList gate is off by default), so the
/// reflectors that stream fall back to LIST, and v0.30's caches serve at once after a relist (A14);
/// the summary and the JSON name the release, and merge reads it back.
#[test]
fn apiserver_puts_every_seed_under_one_releases_rules() {
    use listwatch_harness::sim::run::run_seed_in;
    use listwatch_model::ApiServerRelease;
    let v0_30 = ApiServerRelease::new(30, 14);
    for seed in 0..50 {
        let all = run_seed_in(&ModelReflector, seed, Flaws::NONE, Narrowing::none(), 200, 6_000);
        let over = Narrowing { apiserver: Some(v0_30), ..Narrowing::none() };
        let old = run_seed_in(&ModelReflector, seed, Flaws::NONE, over, 200, 6_000);
        let (a, o) = (all.draw.config, old.draw.config);
        assert_eq!((o.apiserver, o.resilient_cache_init), (v0_30, false));
        let same = Config { apiserver: a.apiserver, resilient_cache_init: a.resilient_cache_init, ..o };
        assert_eq!(same, a, "seed {seed}: its world");
    }
    let mut c = campaign("apiserver-v0.33", 100, Flaws::NONE);
    let fresh = campaign::run(&c, &ModelReflector).expect("runs");
    c.narrowing.apiserver = Some(ApiServerRelease::new(33, 13));
    let s = campaign::run(&c, &ModelReflector).expect("runs");
    assert!(s.tally.lists > fresh.tally.lists, "refused streaming lists fall back to LIST");
    assert_eq!(s.failures.len(), fresh.failures.len(), "the correct reflector passes as before");
    assert!(campaign::text(&c, &s).contains(", API server v0.33.13"));
    let json = campaign::json(&c, &s);
    assert!(json.contains("\"apiserver\": \"v0.33.13\""));
}
