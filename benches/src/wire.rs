//! The benchmarks' objects as an API server sends them: Kubernetes JSON, one watch event a line, and
//! LIST bodies. `benches/reflector.rs` decodes these bytes, and the `wire_bytes` binary writes the same
//! bytes to files for client-go's benchmark (`benches/client-go`), so that every reflector measured
//! there reads identical bytes.
//!
//! - `<kind>.events-list.json`: the apply stream's 10k initial objects, as one LIST body;
//! - `<kind>.events.jsonl`: the stream's 10k writes as watch event lines (80% ADDED or MODIFIED, 20%
//!   DELETED), the stream of `benches/apply.rs`;
//! - `<kind>.list-<n>.initial.json` and `<kind>.list-<n>.json` (n = 10k, 100k): the content a store
//!   holds before a relist and the LIST that replaces it (every object at a newer RV), the lists of
//!   `benches/relist.rs`.

use std::io;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ListMeta;
use k8s_openapi::serde::Serialize;
use k8s_openapi::{List, ListableResource};
use kube::core::WatchEvent;
use serde_json::ser::Serializer;

use crate::{Stream, Write, WriteKind};

/// The apply stream: the seed, keys, writes and share of deletes of `benches/apply.rs`.
pub fn apply_stream() -> Stream {
    Stream::draw(1, 10_000, 10_000, 20)
}

/// The relist sizes, as they are named in the files.
pub const RELIST_SIZES: [(u32, &str); 2] = [(10_000, "10k"), (100_000, "100k")];

/// A relist of `n` objects as `benches/relist.rs` draws it: the content held before, the LIST that
/// replaces it (every object written again) and the LIST's RV.
pub fn relist_lists(n: u32) -> (Vec<Write>, Vec<Write>, u64) {
    let before = Stream::draw(2, n, 0, 0).initial;
    let after: Vec<Write> = before.iter().map(|w| Write { rv: w.rv + u64::from(n), ..*w }).collect();
    (before, after, 2 * u64::from(n))
}

/// A LIST response body: `{"apiVersion":"v1","kind":"<Kind>List","metadata":{"resourceVersion":..},"items":[..]}`.
pub fn write_list<K>(
    out: impl io::Write,
    items: &[Write],
    make: impl Fn(&Write) -> K,
    rv: u64,
) -> io::Result<()>
where
    K: Serialize + ListableResource,
{
    let list = List {
        items: items.iter().map(make).collect(),
        metadata: ListMeta { resource_version: Some(rv.to_string()), ..ListMeta::default() },
    };
    serde_json::to_writer(out, &list).map_err(io::Error::other)
}

/// Watch event lines: `{"type":"ADDED","object":{..}}\n`, one per write.
pub fn write_events<K>(
    mut out: impl io::Write,
    writes: &[Write],
    make: impl Fn(&Write) -> K,
) -> io::Result<()>
where
    K: Serialize + Clone,
{
    for w in writes {
        let object = make(w);
        let event = match w.kind {
            WriteKind::Added => WatchEvent::Added(object),
            WriteKind::Modified => WatchEvent::Modified(object),
            WriteKind::Deleted => WatchEvent::Deleted(object),
        };
        event.serialize(&mut Serializer::new(&mut out)).map_err(io::Error::other)?;
        out.write_all(b"\n")?;
    }
    Ok(())
}

/// A LIST body in memory.
pub fn list<K>(items: &[Write], make: impl Fn(&Write) -> K, rv: u64) -> Vec<u8>
where
    K: Serialize + ListableResource,
{
    let mut out = Vec::new();
    write_list(&mut out, items, make, rv).expect("writing to memory does not fail");
    out
}

/// Watch event lines in memory.
pub fn events<K>(writes: &[Write], make: impl Fn(&Write) -> K) -> Vec<u8>
where
    K: Serialize + Clone,
{
    let mut out = Vec::new();
    write_events(&mut out, writes, make).expect("writing to memory does not fail");
    out
}

/// The lines of a watch response body.
pub fn lines(body: &[u8]) -> impl Iterator<Item = &[u8]> {
    body.split(|&b| b == b'\n').filter(|l| !l.is_empty())
}
