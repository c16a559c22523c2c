//! apply: watch events per second into each reflector's store, on the identical stream of real
//! `k8s_openapi` objects: 10k keys all live, then 10k writes, 80% add/modify and 20% delete.
//!
//! - `kube-runtime`: `reflector::store::Writer::apply_watcher_event(&event)`, as kube's reflector calls it.
//! - `listwatch`: `ObjectWriter::apply(event)` into the live shared cache, RV and UID guards on.
//! - `listwatch-cloning`: the same, cloning each event first as kube's by-reference API must; it shows how
//!   much of the difference comes from owning the event.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use listwatch_benches::objects::{configmap, pod};
use listwatch_benches::{
    kube_events, kube_relist, kube_store, listwatch_events, listwatch_store, Stream, Write,
};
use listwatch_live::object_cache::ApiObject;

const SEED: u64 = 1;
const KEYS: u32 = 10_000;
const WRITES: usize = 10_000;
const DELETES_PERCENT: u64 = 20;

fn group<K>(c: &mut Criterion, object: &str, make: impl Fn(&Write) -> K)
where
    K: kube::Resource<DynamicType = ()> + ApiObject + Clone + 'static,
{
    let stream = Stream::draw(SEED, KEYS, WRITES, DELETES_PERCENT);
    let kube_initial = kube_relist(&stream.initial, &make);
    let kube_stream = kube_events(&stream.writes, &make);
    let ours = listwatch_events(&stream.writes, &make);

    let mut g = c.benchmark_group(format!("apply/{object}"));
    g.throughput(Throughput::Elements(WRITES as u64));
    g.bench_function("kube-runtime", |b| {
        b.iter_batched_ref(
            || kube_store(&kube_initial),
            |writer| {
                for event in &kube_stream {
                    writer.apply_watcher_event(event);
                }
            },
            BatchSize::PerIteration,
        )
    });
    g.bench_function("listwatch", |b| {
        b.iter_batched_ref(
            || (listwatch_store(&stream.initial, &make), ours.clone()),
            |(writer, events)| {
                for event in events.drain(..) {
                    writer.apply(event);
                }
            },
            BatchSize::PerIteration,
        )
    });
    g.bench_function("listwatch-cloning", |b| {
        b.iter_batched_ref(
            || listwatch_store(&stream.initial, &make),
            |writer| {
                for event in &ours {
                    writer.apply(event.clone());
                }
            },
            BatchSize::PerIteration,
        )
    });
    g.finish();

    // Both stores end equal to the stream's truth.
    let mut kube = kube_store(&kube_initial);
    kube_stream.iter().for_each(|e| kube.apply_watcher_event(e));
    let mut listwatch = listwatch_store(&stream.initial, &make);
    ours.iter().for_each(|e| {
        listwatch.apply(e.clone());
    });
    assert_eq!(kube.as_reader().len(), listwatch.cache().len(), "the stores disagree after the stream");
    assert_eq!(listwatch.resource_version(), stream.last_rv());
}

fn apply(c: &mut Criterion) {
    group(c, "configmap", configmap);
    group(c, "pod", pod);
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(std::time::Duration::from_secs(4));
    targets = apply
}
criterion_main!(benches);
