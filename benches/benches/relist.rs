//! relist: replacing a store's whole content with a LIST of 10k or 100k ConfigMaps (every object at a
//! newer RV than the one held), in each reflector's own way:
//!
//! - `kube-runtime`: `Init`, one `InitApply` per object, `InitDone` through `apply_watcher_event`.
//! - `listwatch`: `ObjectWriter::replace(items, rv)`.
//!
//! `relist/N/*` is the total time of one relist. `reader-block/N/*` is the longest a concurrent reader
//! waits in one `get` during a relist: a reader thread reads in a loop while the writer relists, and
//! the figure reported as the "time" of an iteration is that longest wait.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::runtime::reflector::ObjectRef;
use listwatch_benches::objects::configmap;
use listwatch_benches::{kube_relist, kube_store, listwatch_store, Stream, Write};
use listwatch_live::object_key::ObjectKey;

const SEED: u64 = 2;
const SIZES: [u32; 2] = [10_000, 100_000];
/// How many distinct keys the reader cycles through.
const READER_KEYS: u32 = 1_000;

/// The content held before the relist, and the LIST that replaces it (every object written again).
fn lists(n: u32) -> (Vec<Write>, Vec<Write>, u64) {
    let before = Stream::draw(SEED, n, 0, 0).initial;
    let after: Vec<Write> = before.iter().map(|w| Write { rv: w.rv + u64::from(n), ..*w }).collect();
    let rv = 2 * u64::from(n);
    (before, after, rv)
}

/// Run `read` in a loop on another thread while `relist` runs here; the longest single read.
fn longest_read(read: impl Fn(u32) + Send + 'static, relist: impl FnOnce()) -> Duration {
    let stop = Arc::new(AtomicBool::new(false));
    let started = Arc::new(AtomicBool::new(false));
    let reader = {
        let (stop, started) = (Arc::clone(&stop), Arc::clone(&started));
        std::thread::spawn(move || {
            let mut longest = Duration::ZERO;
            let mut i = 0u32;
            started.store(true, Ordering::Release);
            while !stop.load(Ordering::Acquire) {
                let t = Instant::now();
                read(i % READER_KEYS);
                longest = longest.max(t.elapsed());
                i = i.wrapping_add(1);
            }
            longest
        })
    };
    while !started.load(Ordering::Acquire) {
        std::hint::spin_loop();
    }
    relist();
    stop.store(true, Ordering::Release);
    reader.join().expect("the reader thread does not panic")
}

fn relist(c: &mut Criterion) {
    for n in SIZES {
        let (before, after, rv) = lists(n);
        let kube_before = kube_relist(&before, configmap);
        let kube_after = kube_relist(&after, configmap);

        let mut g = c.benchmark_group(format!("relist/{n}"));
        g.throughput(Throughput::Elements(u64::from(n)));
        g.sample_size(10);
        g.bench_function("kube-runtime", |b| {
            b.iter_batched_ref(
                || kube_store(&kube_before),
                |writer| kube_after.iter().for_each(|e| writer.apply_watcher_event(e)),
                BatchSize::PerIteration,
            )
        });
        g.bench_function("listwatch", |b| {
            b.iter_batched_ref(
                || (listwatch_store(&before, configmap), after.iter().map(configmap).collect::<Vec<_>>()),
                |(writer, items)| writer.replace(std::mem::take(items), rv),
                BatchSize::PerIteration,
            )
        });
        g.finish();

        let mut g = c.benchmark_group(format!("reader-block/{n}"));
        g.sample_size(10);
        g.bench_function(BenchmarkId::from_parameter("kube-runtime"), |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| {
                        let mut writer = kube_store(&kube_before);
                        let store = writer.as_reader();
                        let refs: Vec<ObjectRef<ConfigMap>> = (0..READER_KEYS)
                            .map(|k| ObjectRef::new(&format!("cm-{k:05}")).within("default"))
                            .collect();
                        let read = move |k: u32| {
                            assert!(store.get(&refs[k as usize]).is_some());
                        };
                        longest_read(read, || kube_after.iter().for_each(|e| writer.apply_watcher_event(e)))
                    })
                    .sum()
            })
        });
        g.bench_function(BenchmarkId::from_parameter("listwatch"), |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| {
                        let mut writer = listwatch_store(&before, configmap);
                        let items: Vec<ConfigMap> = after.iter().map(configmap).collect();
                        let cache = writer.cache();
                        let keys: Vec<ObjectKey> =
                            (0..READER_KEYS).map(|k| ObjectKey::new(&format!("default/cm-{k:05}"))).collect();
                        let read = move |k: u32| {
                            assert!(cache.get(&keys[k as usize]).is_some());
                        };
                        longest_read(read, || writer.replace(items, rv))
                    })
                    .sum()
            })
        });
        g.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(5));
    targets = relist
}
criterion_main!(benches);
