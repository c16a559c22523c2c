//! reflector: kube-runtime's store and listwatch's live layer fed from the bytes client-go's benchmark
//! reads (`benches/client-go`, BENCHMARKS.md section 6), so that the three are measured on the same
//! work: bytes to a cache.
//!
//! Each event line and each LIST body is decoded with serde_json into kube's `WatchEvent<K>` and
//! `ObjectList<K>`, as kube-client decodes them; listwatch's live layer has no decoder of its own, so
//! it is given the same decoded objects. The `store-only` rows apply already decoded objects (the
//! figures of `apply` and `relist`), in the same run, to show what the decoding costs.
//!
//! - `decode-apply/<kind>/*`: the apply stream's 10k event lines (10k keys all live, 80% add/modify,
//!   20% delete), decoded and applied: kube-runtime's `Writer::apply_watcher_event` (`Apply` for
//!   ADDED and MODIFIED, `Delete` for DELETED, as its watcher maps them), listwatch's
//!   `ObjectWriter::apply`.
//! - `decode-relist/<n>/*`: a LIST of 10k or 100k ConfigMaps decoded and replacing a store that holds
//!   an older version of every one: kube-runtime's `Init`, `InitApply` per item, `InitDone`;
//!   listwatch's `ObjectWriter::replace`.
//! - `decode-reader-wait/100000/*` (not criterion: its figure is not the iteration's time): the 100k
//!   relist run five times while a reader thread calls `get` in a loop; printed are the longest single
//!   read (the mean over the runs of each run's longest, and the largest) and the mean read.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, BatchSize, Criterion, Throughput};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::core::{ObjectList, WatchEvent};
use kube::runtime::reflector::store::Writer;
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;
use listwatch_benches::objects::{configmap, pod};
use listwatch_benches::wire::{self, apply_stream, relist_lists};
use listwatch_benches::{kube_events, kube_relist, kube_store, listwatch_events, listwatch_store, Write};
use listwatch_live::object_cache::{ApiObject, ObjectEvent, ObjectWriter};
use listwatch_live::object_key::ObjectKey;

/// How many distinct keys the reader cycles through (as in `relist.rs` and client-go's benchmark).
const READER_KEYS: u32 = 1_000;
/// How many relists the reader-wait figures are taken over.
const READER_RUNS: usize = 5;

fn decode_event<K: k8s_openapi::serde::de::DeserializeOwned + Clone>(line: &[u8]) -> WatchEvent<K> {
    serde_json::from_slice(line).expect("the benchmark's own bytes decode")
}

fn decode_list<K: k8s_openapi::serde::de::DeserializeOwned + Clone>(body: &[u8]) -> ObjectList<K> {
    serde_json::from_slice(body).expect("the benchmark's own bytes decode")
}

fn list_rv<K: Clone>(list: &ObjectList<K>) -> u64 {
    list.metadata.resource_version.as_deref().and_then(|rv| rv.parse().ok()).expect("a LIST carries its RV")
}

/// kube-runtime's store after one decoded relist: what kube's watcher yields for a LIST, applied.
fn kube_relist_decoded<K>(writer: &mut Writer<K>, body: &[u8])
where
    K: kube::Resource<DynamicType = ()> + k8s_openapi::serde::de::DeserializeOwned + Clone + 'static,
{
    let list: ObjectList<K> = decode_list(body);
    writer.apply_watcher_event(&watcher::Event::Init);
    for item in list.items {
        writer.apply_watcher_event(&watcher::Event::InitApply(item));
    }
    writer.apply_watcher_event(&watcher::Event::InitDone);
}

fn listwatch_relist_decoded<K>(writer: &mut ObjectWriter<K>, body: &[u8])
where
    K: ApiObject + k8s_openapi::serde::de::DeserializeOwned + Clone,
{
    let list: ObjectList<K> = decode_list(body);
    let rv = list_rv(&list);
    writer.replace(list.items, rv);
}

fn apply_group<K>(c: &mut Criterion, object: &str, make: impl Fn(&Write) -> K + Copy)
where
    K: kube::Resource<DynamicType = ()>
        + ApiObject
        + k8s_openapi::serde::Serialize
        + k8s_openapi::serde::de::DeserializeOwned
        + Clone
        + 'static,
{
    let stream = apply_stream();
    let bytes = wire::events(&stream.writes, make);
    let kube_initial = kube_relist(&stream.initial, make);
    let kube_stream = kube_events(&stream.writes, make);
    let ours = listwatch_events(&stream.writes, make);

    let mut g = c.benchmark_group(format!("decode-apply/{object}"));
    g.throughput(Throughput::Elements(stream.writes.len() as u64));
    g.sample_size(10);
    g.bench_function("kube-runtime", |b| {
        b.iter_batched_ref(
            || kube_store(&kube_initial),
            |writer| {
                for line in wire::lines(&bytes) {
                    let event = match decode_event::<K>(line) {
                        WatchEvent::Added(o) | WatchEvent::Modified(o) => watcher::Event::Apply(o),
                        WatchEvent::Deleted(o) => watcher::Event::Delete(o),
                        _ => unreachable!("the stream has no bookmarks or errors"),
                    };
                    writer.apply_watcher_event(&event);
                }
            },
            BatchSize::PerIteration,
        )
    });
    g.bench_function("listwatch", |b| {
        b.iter_batched_ref(
            || listwatch_store(&stream.initial, make),
            |writer| {
                for line in wire::lines(&bytes) {
                    let event = match decode_event::<K>(line) {
                        WatchEvent::Added(o) => ObjectEvent::Added(o),
                        WatchEvent::Modified(o) => ObjectEvent::Modified(o),
                        WatchEvent::Deleted(o) => ObjectEvent::Deleted(o),
                        _ => unreachable!("the stream has no bookmarks or errors"),
                    };
                    writer.apply(event);
                }
            },
            BatchSize::PerIteration,
        )
    });
    g.bench_function("kube-runtime/store-only", |b| {
        b.iter_batched_ref(
            || kube_store(&kube_initial),
            |writer| kube_stream.iter().for_each(|e| writer.apply_watcher_event(e)),
            BatchSize::PerIteration,
        )
    });
    g.bench_function("listwatch/store-only", |b| {
        b.iter_batched_ref(
            || (listwatch_store(&stream.initial, make), ours.clone()),
            |(writer, events)| {
                for event in events.drain(..) {
                    writer.apply(event);
                }
            },
            BatchSize::PerIteration,
        )
    });
    g.finish();

    // Decoded or not, both stores end as the stream leaves them.
    let mut kube = kube_store(&kube_initial);
    let mut listwatch = listwatch_store(&stream.initial, make);
    for line in wire::lines(&bytes) {
        match decode_event::<K>(line) {
            WatchEvent::Added(o) => {
                kube.apply_watcher_event(&watcher::Event::Apply(o.clone()));
                listwatch.apply(ObjectEvent::Added(o));
            }
            WatchEvent::Modified(o) => {
                kube.apply_watcher_event(&watcher::Event::Apply(o.clone()));
                listwatch.apply(ObjectEvent::Modified(o));
            }
            WatchEvent::Deleted(o) => {
                kube.apply_watcher_event(&watcher::Event::Delete(o.clone()));
                listwatch.apply(ObjectEvent::Deleted(o));
            }
            _ => unreachable!("the stream has no bookmarks or errors"),
        }
    }
    assert_eq!(kube.as_reader().len(), listwatch.cache().len(), "the stores disagree after the stream");
    assert_eq!(listwatch.resource_version(), stream.last_rv());
}

fn relist_group(c: &mut Criterion, n: u32) {
    let (before, after, rv) = relist_lists(n);
    let body = wire::list(&after, configmap, rv);
    let kube_before = kube_relist(&before, configmap);
    let kube_after = kube_relist(&after, configmap);

    let mut g = c.benchmark_group(format!("decode-relist/{n}"));
    g.throughput(Throughput::Elements(u64::from(n)));
    g.sample_size(10);
    g.bench_function("kube-runtime", |b| {
        b.iter_batched_ref(
            || kube_store(&kube_before),
            |writer| kube_relist_decoded(writer, &body),
            BatchSize::PerIteration,
        )
    });
    g.bench_function("listwatch", |b| {
        b.iter_batched_ref(
            || listwatch_store(&before, configmap),
            |writer| listwatch_relist_decoded(writer, &body),
            BatchSize::PerIteration,
        )
    });
    g.bench_function("kube-runtime/store-only", |b| {
        b.iter_batched_ref(
            || kube_store(&kube_before),
            |writer| kube_after.iter().for_each(|e| writer.apply_watcher_event(e)),
            BatchSize::PerIteration,
        )
    });
    g.bench_function("listwatch/store-only", |b| {
        b.iter_batched_ref(
            || (listwatch_store(&before, configmap), after.iter().map(configmap).collect::<Vec<_>>()),
            |(writer, items)| writer.replace(std::mem::take(items), rv),
            BatchSize::PerIteration,
        )
    });
    g.finish();

    let mut kube = kube_store(&kube_before);
    kube_relist_decoded(&mut kube, &body);
    let mut listwatch = listwatch_store(&before, configmap);
    listwatch_relist_decoded(&mut listwatch, &body);
    assert_eq!(kube.as_reader().len(), n as usize);
    assert_eq!(listwatch.cache().len(), n as usize);
    assert_eq!(listwatch.resource_version(), rv);
}

fn apply_and_relist(c: &mut Criterion) {
    apply_group(c, "configmap", configmap);
    apply_group(c, "pod", pod);
    for (n, _) in wire::RELIST_SIZES {
        relist_group(c, n);
    }
}

/// The longest and the mean single read of `read`, called in a loop on another thread while `relist`
/// runs here.
fn reads_during(read: impl Fn(u32) + Send + 'static, relist: impl FnOnce()) -> (Duration, Duration) {
    let stop = Arc::new(AtomicBool::new(false));
    let started = Arc::new(AtomicBool::new(false));
    let reader = {
        let (stop, started) = (Arc::clone(&stop), Arc::clone(&started));
        std::thread::spawn(move || {
            let (mut longest, mut total, mut calls) = (Duration::ZERO, Duration::ZERO, 0u32);
            started.store(true, Ordering::Release);
            while !stop.load(Ordering::Acquire) {
                let t = Instant::now();
                read(calls % READER_KEYS);
                let d = t.elapsed();
                longest = longest.max(d);
                total += d;
                calls = calls.wrapping_add(1);
            }
            (longest, total / calls.max(1))
        })
    };
    while !started.load(Ordering::Acquire) {
        std::hint::spin_loop();
    }
    relist();
    stop.store(true, Ordering::Release);
    reader.join().expect("the reader thread does not panic")
}

fn report(name: &str, runs: &[(Duration, Duration)]) {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let count = runs.len() as u32;
    let longest_mean = runs.iter().map(|r| r.0).sum::<Duration>() / count;
    let longest_max = runs.iter().map(|r| r.0).max().unwrap_or_default();
    let mean = runs.iter().map(|r| r.1).sum::<Duration>() / count;
    println!(
        "{name}: longest read {:.3} ms (mean of {count} runs; largest {:.3} ms), mean read {:.0} ns",
        ms(longest_mean),
        ms(longest_max),
        mean.as_secs_f64() * 1e9,
    );
}

/// `decode-reader-wait/<n>/*`, printed; a single 10k run of each when not benchmarking (`cargo test`).
fn reader_wait() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let benchmarking = args.iter().any(|a| a == "--bench");
    let filters: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    let (n, runs) = if benchmarking { (100_000, READER_RUNS) } else { (10_000, 1) };
    let group = format!("decode-reader-wait/{n}");
    if !filters.is_empty() && !filters.iter().any(|f| group.contains(f.as_str())) {
        return;
    }
    let (before, after, rv) = relist_lists(n);
    let body = wire::list(&after, configmap, rv);
    let kube_before = kube_relist(&before, configmap);

    let kube: Vec<_> = (0..runs)
        .map(|_| {
            let mut writer = kube_store(&kube_before);
            let store = writer.as_reader();
            let refs: Vec<ObjectRef<ConfigMap>> =
                (0..READER_KEYS).map(|k| ObjectRef::new(&format!("cm-{k:05}")).within("default")).collect();
            let read = move |k: u32| assert!(store.get(&refs[k as usize]).is_some());
            reads_during(read, || kube_relist_decoded(&mut writer, &body))
        })
        .collect();
    report(&format!("{group}/kube-runtime"), &kube);

    let ours: Vec<_> = (0..runs)
        .map(|_| {
            let mut writer = listwatch_store(&before, configmap);
            let cache = writer.cache();
            let keys: Vec<ObjectKey> =
                (0..READER_KEYS).map(|k| ObjectKey::new(&format!("default/cm-{k:05}"))).collect();
            let read = move |k: u32| assert!(cache.get(&keys[k as usize]).is_some());
            reads_during(read, || listwatch_relist_decoded(&mut writer, &body))
        })
        .collect();
    report(&format!("{group}/listwatch"), &ours);
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    targets = apply_and_relist
}

fn main() {
    benches();
    reader_wait();
    Criterion::default().configure_from_args().final_summary();
}
