//! simulate: steps per second of the seeded swarm simulator on one core: the correct system, seeds
//! 0..200 at the CLI's default of 200 safety steps, each followed by its heal phase, every property
//! checked after every step.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use listwatch_harness::sim::campaign::Campaign;
use listwatch_harness::sim::run::run_seed;
use listwatch_model::Flaws;

const SEEDS: u64 = 200;

fn steps_of_all_seeds(c: &Campaign) -> u64 {
    c.shard_seeds()
        .map(|seed| {
            let run = run_seed(seed, c.flaws, c.steps, c.heal_limit());
            run.tally.safety_steps + run.tally.heal_steps
        })
        .sum()
}

fn simulate(c: &mut Criterion) {
    let campaign = Campaign::new(SEEDS, 200, Flaws::NONE, std::env::temp_dir());
    let steps = steps_of_all_seeds(&campaign);
    let mut g = c.benchmark_group("simulate");
    g.throughput(Throughput::Elements(steps));
    g.sample_size(10);
    g.bench_function("correct-200-seeds", |b| b.iter(|| assert_eq!(steps_of_all_seeds(&campaign), steps)));
    g.finish();
}

criterion_group!(benches, simulate);
criterion_main!(benches);
