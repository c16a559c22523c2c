//! checker: unique states per second of the exhaustive checker (stateright BFS over the list/watch
//! world, every property checked at every state) on the `small` and `default` scopes, with one thread (as
//! `listwatch check` runs, for shortest and stable counterexamples) and with two.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use listwatch_harness::checker::CheckModel;
use listwatch_harness::scope::Scope;
use stateright::{Checker, Model};

fn unique_states(scope: Scope, threads: usize) -> usize {
    let checker = CheckModel::new(scope.config()).checker().threads(threads).spawn_bfs().join();
    assert!(checker.is_done());
    checker.unique_state_count()
}

fn checker(c: &mut Criterion) {
    for scope in [Scope::Small, Scope::Default] {
        let states = unique_states(scope, 1);
        let mut g = c.benchmark_group(format!("checker/{}", scope.name()));
        g.throughput(Throughput::Elements(states as u64));
        g.sample_size(10);
        for threads in [1, 2] {
            g.bench_with_input(BenchmarkId::new("threads", threads), &threads, |b, &threads| {
                b.iter(|| assert_eq!(unique_states(scope, threads), states))
            });
        }
        g.finish();
    }
}

criterion_group!(benches, checker);
criterion_main!(benches);
