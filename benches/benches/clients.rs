//! clients: the clients under test in the loop, side by side in one run: the model reflector,
//! kube-runtime and, when its Go program is built (scripts/build-client-go), client-go.
//! - `simulate/*`: simulator steps/s over the same seeds (0..100, 200 safety steps, every property
//!   judged after every step), each client in its default configuration with one task awaiting
//!   readiness, so that runs go on past the first LIST.
//! - `event/*`: the end-to-end cost of one watch event once synced: a write, the watch cache ingesting
//!   it, and its delivery to the client. For kube-runtime and client-go that delivery is the whole wire:
//!   the event encoded as a JSON line, read off the body by the library, decoded, applied to its cache,
//!   and read back as observations (for client-go, across a pipe to its Go process and back). The
//!   difference from the model's is the wire's cost.
//! - `session/client-go`: one client-go session started (a Go process from the pool: the informer built
//!   in a new bubble, its first request sent) and stopped.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use listwatch_client_go::ClientGo;
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
    if let Some(go) = client_go() {
        let n = steps(&go);
        g.throughput(Throughput::Elements(n));
        g.bench_function("client-go", |b| b.iter(|| assert_eq!(steps(&go), n)));
    }
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
    if let Some(go) = client_go() {
        g.bench_function("client-go", |b| b.iter_batched(|| watching(&go), events, BatchSize::SmallInput));
    }
    g.finish();
}

/// client-go with one waiter (`client-go-no-watchlist`, so that the world's LIST path is the one
/// measured), if its Go program is built.
fn client_go() -> Option<ClientGo> {
    match ClientGo::parse("client-go-no-watchlist,waiters=1") {
        Ok(go) => Some(go),
        Err(e) => {
            eprintln!("clients: client-go left out: {e}");
            None
        }
    }
}

fn session(c: &mut Criterion) {
    let Some(go) = client_go() else { return };
    let config = Scope::Small.config();
    let mut g = c.benchmark_group("session");
    g.bench_function("client-go", |b| {
        b.iter(|| {
            let (sys, seen) = System::start_with(config, |id| go.make(&config, 0, id));
            assert!(!seen.is_empty() && sys.gone().is_none(), "client-go sent its first request");
        })
    });
    g.finish();
}

criterion_group!(benches, simulate, event, session);
criterion_main!(benches);
