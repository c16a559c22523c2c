//! Writes the benchmarks' objects as Kubernetes JSON (see `listwatch_benches::wire`) to
//! `target/bench-bytes/` or the directory given: the bytes client-go's benchmark (`benches/client-go`)
//! reads, identical to those `benches/reflector.rs` decodes.
//!
//! ```sh
//! cargo run --release -p listwatch-benches --bin wire_bytes [DIR]
//! ```

use std::fs::File;
use std::io::{self, BufWriter, Write as _};
use std::path::{Path, PathBuf};

use k8s_openapi::serde::Serialize;
use k8s_openapi::ListableResource;
use listwatch_benches::objects::{configmap, pod};
use listwatch_benches::wire::{apply_stream, relist_lists, write_events, write_list, RELIST_SIZES};
use listwatch_benches::Write;

fn write(
    dir: &Path,
    name: &str,
    body: impl FnOnce(&mut BufWriter<File>) -> io::Result<()>,
) -> io::Result<()> {
    let path = dir.join(name);
    let mut out = BufWriter::new(File::create(&path)?);
    body(&mut out)?;
    out.flush()?;
    println!("{} ({} bytes)", path.display(), std::fs::metadata(&path)?.len());
    Ok(())
}

fn kind<K>(dir: &Path, name: &str, make: impl Fn(&Write) -> K + Copy) -> io::Result<()>
where
    K: Serialize + ListableResource + Clone,
{
    let stream = apply_stream();
    let initial_rv = stream.initial.last().map_or(0, |w| w.rv);
    write(dir, &format!("{name}.events-list.json"), |out| {
        write_list(out, &stream.initial, make, initial_rv)
    })?;
    write(dir, &format!("{name}.events.jsonl"), |out| write_events(out, &stream.writes, make))?;
    for (n, label) in RELIST_SIZES {
        let (before, after, rv) = relist_lists(n);
        let before_rv = before.last().map_or(0, |w| w.rv);
        write(dir, &format!("{name}.list-{label}.initial.json"), |out| {
            write_list(out, &before, make, before_rv)
        })?;
        write(dir, &format!("{name}.list-{label}.json"), |out| write_list(out, &after, make, rv))?;
    }
    Ok(())
}

fn main() -> io::Result<()> {
    let dir = std::env::args_os().nth(1).map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").join("target").join("bench-bytes"),
        PathBuf::from,
    );
    std::fs::create_dir_all(&dir)?;
    kind(&dir, "configmaps", configmap)?;
    kind(&dir, "pods", pod)?;
    Ok(())
}
