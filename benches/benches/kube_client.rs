//! kube_client: kube-runtime in the loop, beside the model reflector, in one run.
//! - `simulate/*`: simulator steps/s on one core over the same seeds (0..100, 200 safety steps, every
//!   property judged after every step), the model reflector and kube-runtime (default configuration,
//!   one task awaiting readiness, so that runs go on past the first LIST).
//! - `event/*`: the end-to-end cost of one watch event once synced: a write, the watch cache ingesting
//!   it, and its delivery to the client. For kube-runtime that delivery is the whole wire: the event
//!   encoded as a JSON line, read off the body by kube-client, decoded, applied by the watcher and the
//!   reflector `Store`, and read back as observations. The difference of the two is the wire's cost.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use listwatch_harness::scope::Scope;
use listwatch_harness::sim::run::run_seed_with;
use listwatch_kube::{Kube, KubeConfig};
use listwatch_model::{
    Action, Client, ClientId, Clients, Config, Flaws, Key, ModelReflector, ServerId, System,
};

const SEEDS: u64 = 100;
const EVENTS: u8 = 200;

fn steps<K: Clients>(client: &K) -> u64 {
    (0..SEEDS)
        .map(|seed| {
            let run = run_seed_with(client, seed, Flaws::NONE, 200, 6_000);
            run.tally.safety_steps + run.tally.heal_steps
        })
        .sum()
}

fn simulate(c: &mut Criterion) {
    let kube = Kube(KubeConfig::parse("kube-runtime,waiters=1").expect("a configuration"));
    let mut g = c.benchmark_group("simulate");
    g.sample_size(10);
    let n = steps(&ModelReflector);
    g.throughput(Throughput::Elements(n));
    g.bench_function("model", |b| b.iter(|| assert_eq!(steps(&ModelReflector), n)));
    let n = steps(&kube);
    g.throughput(Throughput::Elements(n));
    g.bench_function("kube-runtime", |b| b.iter(|| assert_eq!(steps(&kube), n)));
    g.finish();
}

/// A world with one key, `EVENTS` writes and nothing else: the client synced and watching.
fn watching<K: Clients>(k: &K) -> System<K::C> {
    let config = Config {
        keys: 1,
        writes: EVENTS,
        foreign_writes: 0,
        compactions: 0,
        lease_revokes: 0,
        faults: 0,
        servers: 1,
        reflectors: 1,
        ..Scope::Small.config()
    };
    let (mut sys, _) = System::start_with(config, |id| k.make(&config, 0, id));
    let (c, s) = (ClientId(0), ServerId(0));
    for a in [
        Action::Create(Key(0)),
        Action::Ingest(s),
        Action::Route(c, s),
        Action::Deliver(c),
        Action::Route(c, s),
    ] {
        sys.apply(a);
    }
    assert!(sys.view(c).synced || !sys.client(c).cache().is_empty(), "the client listed");
    sys
}

/// Write, ingest and deliver `EVENTS - 1` updates; the client must end with the last one.
fn events<C: Client>(mut sys: System<C>) {
    let (c, s) = (ClientId(0), ServerId(0));
    for _ in 1..EVENTS {
        sys.apply(Action::Update(Key(0)));
        sys.apply(Action::Ingest(s));
        sys.apply(Action::Deliver(c));
    }
    let rv = sys.store().rev();
    assert_eq!(sys.client(c).cache().get(Key(0)).map(|o| o.rv), Some(rv), "every event reached the cache");
}

fn event(c: &mut Criterion) {
    let kube = Kube(KubeConfig::parse("kube-runtime,waiters=1").expect("a configuration"));
    let mut g = c.benchmark_group("event");
    g.throughput(Throughput::Elements(u64::from(EVENTS - 1)));
    g.bench_function("model", |b| {
        b.iter_batched(|| watching(&ModelReflector), events, BatchSize::SmallInput)
    });
    g.bench_function("kube-runtime", |b| b.iter_batched(|| watching(&kube), events, BatchSize::SmallInput));
    g.finish();
}

criterion_group!(benches, simulate, event);
criterion_main!(benches);
