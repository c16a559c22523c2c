//! checker: unique states per second of the exhaustive checker over the list/watch world of the `small`
//! and `default` scopes, and of `small` with two API servers, every property judged at every state:
//! `check`'s own breadth-first search on one thread and on two, with and without the symmetry
//! reduction, beside stateright's `BfsChecker` on one thread. The allocator is the binary's (mimalloc,
//! with its own settings, as in `harness/src/main.rs`).

use std::sync::atomic::AtomicBool;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use listwatch_harness::bfs::{search, Progress, Settings};
use listwatch_harness::checker::CheckModel;
use listwatch_harness::scope::Scope;
use listwatch_model::Config;
use stateright::{Checker, Model};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn bfs(config: Config, threads: usize, symmetry: bool) -> usize {
    let settings = Settings {
        threads,
        max_states: usize::MAX,
        stop_at_violation: false,
        symmetry,
        memory_limit_bytes: None,
        made_states: usize::MAX,
        window_states: usize::MAX,
    };
    search(&CheckModel::new(config), settings, &AtomicBool::new(false), &Progress::default()).states
}

fn stateright_bfs(config: Config) -> usize {
    let checker = CheckModel::new(config).checker().threads(1).spawn_bfs().join();
    assert!(checker.is_done());
    checker.unique_state_count()
}

fn checker(c: &mut Criterion) {
    let two_servers = Config { servers: 2, ..Scope::Small.config() };
    for (name, config) in [
        ("small", Scope::Small.config()),
        ("default", Scope::Default.config()),
        ("small-2-servers", two_servers),
    ] {
        let states = stateright_bfs(config);
        let mut g = c.benchmark_group(format!("checker/{name}"));
        g.throughput(Throughput::Elements(states as u64));
        g.sample_size(10);
        g.bench_function("stateright-bfs/1", |b| b.iter(|| assert_eq!(stateright_bfs(config), states)));
        for threads in [1, 2] {
            for symmetry in [false, true] {
                let id = BenchmarkId::new(if symmetry { "bfs-symmetry" } else { "bfs" }, threads);
                b_iter(&mut g, id, config, threads, symmetry, states);
            }
        }
        g.finish();
    }
}

/// One measurement; the states counted are those of the whole space (stateright's), so that the
/// throughput of a reduced run counts the states it stands for.
fn b_iter(
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    id: BenchmarkId,
    config: Config,
    threads: usize,
    symmetry: bool,
    all: usize,
) {
    g.bench_with_input(id, &threads, |b, &threads| {
        b.iter(|| {
            let states = bfs(config, threads, symmetry);
            assert!(states <= all && (symmetry || states == all));
        })
    });
}

criterion_group!(benches, checker);
criterion_main!(benches);
