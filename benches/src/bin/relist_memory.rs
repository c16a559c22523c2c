//! One relist, timed and its memory counted: a store holding `configmaps.list-<size>.initial.json`
//! replaced by decoding `configmaps.list-<size>.json` (the bytes `wire_bytes` writes, which client-go's
//! benchmark reads too). Prints the relist's time, the resident set before it and how far the kernel's
//! peak of the resident set (`VmHWM`, reset through `/proc/self/clear_refs` when the relist starts) rose
//! over it. The allocator is the system's, as in the criterion benches. `scripts/bench-client-go` runs
//! it under GNU time for the process's peak RSS as well.
//!
//! ```sh
//! cargo run --release -p listwatch-benches --bin relist_memory -- kube-runtime|listwatch 10k|100k [DIR]
//! ```

use std::path::PathBuf;
use std::time::Instant;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::core::ObjectList;
use kube::runtime::reflector::store::Writer;
use kube::runtime::watcher;
use listwatch_live::object_cache::ObjectWriter;

/// A field of `/proc/self/status` in KiB (`VmRSS`, `VmHWM`).
fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("Linux's /proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/self/status"))
}

/// The resident set now; the kernel's peak (`VmHWM`) is reset to it.
fn reset_peak() -> u64 {
    std::fs::write("/proc/self/clear_refs", "5").expect("resetting the peak RSS (Linux 4.0 or later)");
    status_kib("VmRSS")
}

fn decode(body: &[u8]) -> ObjectList<ConfigMap> {
    serde_json::from_slice(body).expect("the bytes wire_bytes wrote decode")
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [store, size, rest @ ..] = args.as_slice() else {
        eprintln!("usage: relist_memory kube-runtime|listwatch 10k|100k [DIR]");
        std::process::exit(2);
    };
    let dir = rest.first().map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").join("target").join("bench-bytes"),
        PathBuf::from,
    );
    let read = |name: String| {
        std::fs::read(dir.join(&name))
            .unwrap_or_else(|e| panic!("{name}: {e} (run the wire_bytes binary first)"))
    };
    let before = read(format!("configmaps.list-{size}.initial.json"));
    let after = read(format!("configmaps.list-{size}.json"));
    let held = decode(&before).items;
    let n = held.len();

    let (base, peak, seconds) = match store.as_str() {
        "kube-runtime" => {
            let mut writer: Writer<ConfigMap> = Writer::default();
            writer.apply_watcher_event(&watcher::Event::Init);
            held.into_iter().for_each(|o| writer.apply_watcher_event(&watcher::Event::InitApply(o)));
            writer.apply_watcher_event(&watcher::Event::InitDone);
            let base = reset_peak();
            let t = Instant::now();
            let list = decode(&after);
            writer.apply_watcher_event(&watcher::Event::Init);
            list.items.into_iter().for_each(|o| writer.apply_watcher_event(&watcher::Event::InitApply(o)));
            writer.apply_watcher_event(&watcher::Event::InitDone);
            let seconds = t.elapsed().as_secs_f64();
            assert_eq!(writer.as_reader().len(), n);
            (base, status_kib("VmHWM"), seconds)
        }
        "listwatch" => {
            let mut writer: ObjectWriter<ConfigMap> = ObjectWriter::new();
            writer.replace(held, 0);
            let base = reset_peak();
            let t = Instant::now();
            let list = decode(&after);
            let rv = list.metadata.resource_version.as_deref().and_then(|rv| rv.parse().ok()).expect("an RV");
            writer.replace(list.items, rv);
            let seconds = t.elapsed().as_secs_f64();
            assert_eq!(writer.cache().len(), n);
            (base, status_kib("VmHWM"), seconds)
        }
        other => {
            eprintln!("relist_memory: unknown store {other:?}");
            std::process::exit(2);
        }
    };
    println!(
        "relist {store} {size}: {:.1} ms, RSS before {:.1} MiB, peak RSS growth {:.1} MiB",
        seconds * 1e3,
        mib(base),
        mib(peak - base)
    );
}
