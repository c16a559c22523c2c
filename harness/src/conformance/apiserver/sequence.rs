//! The operations of an API server conformance sequence, in the model's terms: keys are small numbers,
//! resource versions count from the sequence's start (the real side adds the etcd revision it began at).

use serde::{Deserialize, Serialize};

use crate::conformance::compare::Ops;

/// The resourceVersion (and resourceVersionMatch) of a LIST or a streaming list (A2, A12).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "rv", content = "at")]
pub enum Rv {
    /// Unset: a consistent read.
    Consistent,
    /// "0": whatever the cache has.
    Any,
    /// `X`, NotOlderThan.
    NotOlderThan(u32),
    /// `X`, resourceVersionMatch=Exact.
    Exact(u32),
}

/// One operation on the API server (writes go through its storage, E1–E3; compactions and multi-key
/// deletes straight to etcd, as the API server's compactor and a lease revoke do).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "op")]
pub enum ApiOp {
    /// Create or update object `key`; `other` writes another resource type's key instead, which moves
    /// the revision without an event for the watched resource.
    Put {
        key: u8,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        other: bool,
    },
    /// Delete object `key` (a missing one deletes nothing).
    Delete { key: u8 },
    /// Delete several objects in one etcd transaction, at one revision (E8).
    DeleteAll { keys: Vec<u8> },
    /// Compact etcd at `rev` (E4).
    Compact { rev: u32 },
    /// LIST with `rv`, and `limit` when set (A2, A13).
    List {
        rv: Rv,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        limit: Option<u8>,
    },
    /// The next page of the last LIST that returned a continue token (A13).
    Continue { limit: u8 },
    /// LIST with `rv` and the field selector `metadata.name=<key>`, whole: in the run's namespace
    /// (the registry lists the one key), or across namespaces (the whole resource, filtered).
    ListNamed { rv: Rv, key: u8, namespaced: bool },
    /// WATCH `id` from `from` (A3, A4), "0" when absent, or with no resourceVersion at all when
    /// `unset` (A3 gives it the meaning of "0": every release serves it from the cache, see
    /// [`crate::conformance::apiserver::model_side`]). With `timeout`, `timeoutSeconds=1`, and the
    /// operation lasts until the server ends the watch (A9: cleanly, with no ERROR, once what it owed
    /// was sent); nothing else happens meanwhile.
    Watch {
        id: u8,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        from: Option<u32>,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        unset: bool,
        bookmarks: bool,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        timeout: bool,
    },
    /// A streaming list on watch `id` (A12). With `timeout`, `timeoutSeconds=2`
    /// ([`WATCH_LIST_TIMEOUT_SECS`]), and the operation lasts until the server ends the watch (A9:
    /// cleanly, once the initial events and their initial-events-end bookmark were sent).
    WatchList {
        id: u8,
        rv: Rv,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        timeout: bool,
    },
    /// The client stops watch `id`.
    Stop { id: u8 },
    /// From here the cache's etcd watch delivers nothing (events and progress notifications wait):
    /// the watch cache lags etcd, as behind a slow or partitioned etcd watch, and the requests made
    /// meanwhile meet a lagging cache (A2, A12's freshness waits).
    HoldCache,
    /// The cache's etcd watch delivers what waited, and the cache catches up.
    ReleaseCache,
    /// The cache's etcd watch ends as one that fell below etcd's compacted revision ends, and the cache
    /// relists from etcd (A5): every watch it serves closes, and its window of events starts anew at
    /// the revision it listed at (A4). The barrier after it waits until the cache serves again (A14).
    RelistCache,
    /// A minute passes on the cacher's clock (the real time the cacher's timers wait does not): the
    /// cacher sends its heartbeat bookmark to the watches whose minute is up (A8,
    /// [`listwatch_model::heartbeat`]), and these bookmarks are compared.
    Minute,
}

/// The `timeoutSeconds` of a streaming list that lasts until its timeout: two seconds, so that what
/// the cacher sends before the timeout is the same on every run. The releases that serve streaming
/// lists (v0.32 and v0.34 on, `ApiServerRelease::watch_list`) send the initial-events-end bookmark
/// right after the initial events (`setInitialEventsEndBookmarkIfRequested`,
/// `cacheWatcher.processInterval`, kubernetes commit 723920253349), so for them one second would do;
/// two leave room for a consistent list's freshness wait (etcd asked for its revision first) and for
/// a release that sends the bookmark at its timer's next tick instead (before v0.32: each second,
/// jittered up to a quarter more, `nextBookmarkTime` case (c)), which one second could miss. Once the
/// deadline is within 2 s the cacher schedules no bookmark before the timeout (`nextBookmarkTime`
/// case (a)); a plain bookmark of a streaming list is not compared anyway. Read in k8s.io/apiserver
/// v0.27.16, v0.31.0, v0.32.0 and v0.37.2, `storage/cacher/cacher.go` and `cache_watcher.go`.
pub const WATCH_LIST_TIMEOUT_SECS: u32 = 2;

pub const MAX_KEY: u8 = 99;
pub const MAX_WATCH: u8 = 7;

/// A sequence, as a file writes it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiSequence {
    pub format: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<u64>,
    pub ops: Vec<ApiOp>,
}

impl Ops for ApiSequence {
    fn len(&self) -> usize {
        self.ops.len()
    }
    fn without(&self, range: std::ops::Range<usize>) -> Self {
        let mut s = self.clone();
        s.ops.drain(range);
        s
    }
    /// The LISTs and WATCHes made while the cache's etcd watch was held.
    fn lagging(&self) -> usize {
        let mut held = false;
        let mut n = 0;
        for op in &self.ops {
            match op {
                ApiOp::HoldCache => held = true,
                ApiOp::ReleaseCache => held = false,
                ApiOp::List { .. }
                | ApiOp::ListNamed { .. }
                | ApiOp::Continue { .. }
                | ApiOp::Watch { .. }
                | ApiOp::WatchList { .. } => n += usize::from(held),
                _ => {}
            }
        }
        n
    }
    fn relists(&self) -> usize {
        self.ops.iter().filter(|o| matches!(o, ApiOp::RelistCache)).count()
    }
    fn timeouts(&self) -> usize {
        self.ops.iter().filter(|o| o.times_out()).count()
    }
    fn minutes(&self) -> usize {
        self.ops.iter().filter(|o| matches!(o, ApiOp::Minute)).count()
    }
}

impl ApiOp {
    /// A watch or streaming list that lasts until the server ends it at its `timeoutSeconds` (A9).
    pub fn times_out(&self) -> bool {
        matches!(self, ApiOp::Watch { timeout: true, .. } | ApiOp::WatchList { timeout: true, .. })
    }
}

impl ApiSequence {
    pub const FORMAT: &'static str = "listwatch-apiserver-sequence/1";

    pub fn new(seed: Option<u64>, index: Option<u64>, ops: Vec<ApiOp>) -> Self {
        ApiSequence { format: Self::FORMAT.to_string(), seed, index, ops }
    }

    /// A cache relist between watches (A5): two writes, a watch from "0", the relist, then watches
    /// from before the relist's revision and from it, and a write. The sequence the tests drive through
    /// the model and through the real cacher.
    pub fn relist_case() -> Self {
        let put = |key| ApiOp::Put { key, other: false };
        let watch = |id, from| ApiOp::Watch { id, from, unset: false, bookmarks: true, timeout: false };
        let ops = vec![
            put(0),
            put(1),
            watch(0, None),
            ApiOp::RelistCache,
            watch(1, Some(1)),
            watch(2, Some(2)),
            put(0),
        ];
        ApiSequence::new(None, None, ops)
    }

    /// Watches until their timeout (A9) beside one without: two writes, a watch from the first with
    /// `timeoutSeconds=1` (the second write, then a clean close), a watch from the first with none,
    /// and a write only that one gets; then a streaming list from "0" with `timeoutSeconds=2` (the
    /// three objects, the initial-events-end bookmark, then a clean close), and a write only the watch
    /// without a timeout gets. The sequence the tests drive through the model, the real cacher and a
    /// server over HTTP.
    pub fn timeout_case() -> Self {
        let put = |key| ApiOp::Put { key, other: false };
        let watch = |id, timeout| ApiOp::Watch { id, from: Some(1), unset: false, bookmarks: true, timeout };
        let ops = vec![
            put(0),
            put(1),
            watch(0, true),
            watch(1, false),
            put(2),
            ApiOp::WatchList { id: 2, rv: Rv::Any, timeout: true },
            put(3),
        ];
        ApiSequence::new(None, None, ops)
    }

    /// Heartbeats (A8): two writes; watches from the last one and from "0" with bookmarks and one
    /// without; a minute (nothing is due: the cache has not moved past them); a write, then two
    /// minutes (a heartbeat at its RV each, to both watches with bookmarks); every object deleted at
    /// one revision, the watch from "0" opened again on the empty cache, and a minute (from v0.32 that
    /// watch starts at the cache's RV and gets none; before, at 0, and gets one). The sequence the
    /// tests drive through the model and the real cacher.
    pub fn heartbeat_case() -> Self {
        let put = |key| ApiOp::Put { key, other: false };
        let watch = |id, from, bookmarks| ApiOp::Watch { id, from, unset: false, bookmarks, timeout: false };
        let ops = vec![
            put(0),
            put(1),
            watch(0, Some(2), true),
            watch(1, None, true),
            watch(2, Some(1), false),
            ApiOp::Minute,
            put(2),
            ApiOp::Minute,
            ApiOp::Minute,
            ApiOp::DeleteAll { keys: vec![0, 1, 2] },
            watch(1, None, true),
            ApiOp::Minute,
        ];
        ApiSequence::new(None, None, ops)
    }

    /// LISTs of one name by field selector (A2): two writes, a write of another resource (etcd's
    /// revision moves past the watched one's), then each kind of RV, in the namespace and across
    /// namespaces, for a name that is there and one that is not yet at the RV read. The sequence the
    /// tests drive through the model, the real cacher and a server over HTTP.
    pub fn named_case() -> Self {
        let put = |key| ApiOp::Put { key, other: false };
        let named = |rv, key, namespaced| ApiOp::ListNamed { rv, key, namespaced };
        let ops = vec![
            put(0),
            put(1),
            ApiOp::Put { key: 0, other: true },
            named(Rv::Consistent, 1, true),
            named(Rv::Consistent, 0, false),
            named(Rv::Any, 0, true),
            named(Rv::Any, 1, false),
            named(Rv::NotOlderThan(2), 1, true),
            named(Rv::Exact(1), 1, true),
            named(Rv::Exact(1), 0, false),
        ];
        ApiSequence::new(None, None, ops)
    }

    /// Read a sequence file; the error names what is wrong.
    pub fn parse(text: &str) -> Result<Self, String> {
        let seq: ApiSequence =
            serde_json::from_str(text).map_err(|e| format!("not an API server sequence file: {e}"))?;
        if seq.format != Self::FORMAT {
            return Err(format!("format '{}' is not '{}'", seq.format, Self::FORMAT));
        }
        for (i, op) in seq.ops.iter().enumerate() {
            let bad = match op {
                ApiOp::Put { key, .. } | ApiOp::Delete { key } | ApiOp::ListNamed { key, .. } => {
                    *key > MAX_KEY
                }
                ApiOp::DeleteAll { keys } => keys.is_empty() || keys.iter().any(|k| *k > MAX_KEY),
                // A watch with no resourceVersion has no RV to start from either.
                ApiOp::Watch { id, from, unset, .. } => *id > MAX_WATCH || (*unset && from.is_some()),
                ApiOp::WatchList { id, .. } | ApiOp::Stop { id } => *id > MAX_WATCH,
                ApiOp::Compact { rev } => *rev == 0,
                ApiOp::List { limit, .. } => *limit == Some(0),
                ApiOp::Continue { limit } => *limit == 0,
                ApiOp::HoldCache | ApiOp::ReleaseCache | ApiOp::RelistCache | ApiOp::Minute => false,
            };
            if bad {
                return Err(format!(
                    "operation {i}: {op:?} is out of range (keys 0..={MAX_KEY}, watches 0..={MAX_WATCH}, \
                     compaction above 0, limits above 0, a multi-key delete names a key, a watch with \
                     no resourceVersion has no `from`)"
                ));
            }
        }
        Ok(seq)
    }

    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).expect("a sequence serializes");
        text.push('\n');
        text
    }
}

impl std::fmt::Display for Rv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Rv::Consistent => write!(f, "rv=\"\""),
            Rv::Any => write!(f, "rv=\"0\""),
            Rv::NotOlderThan(x) => write!(f, "rv={x}"),
            Rv::Exact(x) => write!(f, "rv={x},match=Exact"),
        }
    }
}

impl std::fmt::Display for ApiOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ApiOp::Put { key, other: false } => write!(f, "put k{key}"),
            ApiOp::Put { key, other: true } => write!(f, "put other/k{key}"),
            ApiOp::Delete { key } => write!(f, "delete k{key}"),
            ApiOp::DeleteAll { keys } => {
                let keys: Vec<String> = keys.iter().map(|k| format!("k{k}")).collect();
                write!(f, "txn delete {} (one revision)", keys.join(" "))
            }
            ApiOp::Compact { rev } => write!(f, "compact {rev}"),
            ApiOp::List { rv, limit: None } => write!(f, "LIST {rv}"),
            ApiOp::List { rv, limit: Some(l) } => write!(f, "LIST {rv} limit={l}"),
            ApiOp::Continue { limit } => write!(f, "LIST limit={limit} continue=<last token>"),
            ApiOp::ListNamed { rv, key, namespaced } => {
                let scope = if *namespaced { "in the namespace" } else { "across namespaces" };
                write!(f, "LIST {rv} fieldSelector=metadata.name=k{key} ({scope})")
            }
            ApiOp::Watch { id, from: None, unset: true, bookmarks, timeout } => {
                write!(f, "WATCH w{id} rv unset{}{}", marks(*bookmarks), until_timeout(*timeout))
            }
            ApiOp::Watch { id, from: None, bookmarks, timeout, .. } => {
                write!(f, "WATCH w{id} rv=\"0\"{}{}", marks(*bookmarks), until_timeout(*timeout))
            }
            ApiOp::Watch { id, from: Some(x), bookmarks, timeout, .. } => {
                write!(f, "WATCH w{id} rv={x}{}{}", marks(*bookmarks), until_timeout(*timeout))
            }
            ApiOp::WatchList { id, rv, timeout: false } => write!(f, "WATCH w{id} sendInitialEvents {rv}"),
            ApiOp::WatchList { id, rv, timeout: true } => write!(
                f,
                "WATCH w{id} sendInitialEvents {rv} timeoutSeconds={WATCH_LIST_TIMEOUT_SECS}, until it ends"
            ),
            ApiOp::Stop { id } => write!(f, "stop w{id}"),
            ApiOp::HoldCache => write!(f, "hold the cache's etcd watch"),
            ApiOp::ReleaseCache => write!(f, "release the cache's etcd watch"),
            ApiOp::RelistCache => write!(f, "end the cache's etcd watch as compacted: the cache relists"),
            ApiOp::Minute => write!(f, "a minute passes on the cacher's clock"),
        }
    }
}

fn until_timeout(on: bool) -> &'static str {
    if on {
        " timeoutSeconds=1, until it ends"
    } else {
        ""
    }
}

fn marks(on: bool) -> &'static str {
    if on {
        " allowWatchBookmarks"
    } else {
        ""
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file whose watch has no resourceVersion and a `from` too is refused, naming the operation;
    /// either alone is read.
    #[test]
    fn a_watch_with_no_rv_and_a_from_is_refused() {
        let file = |watch: &str| format!(r#"{{"format": "{}", "ops": [{watch}]}}"#, ApiSequence::FORMAT);
        let both = ApiSequence::parse(&file(
            r#"{"op": "watch", "id": 0, "from": 3, "unset": true, "bookmarks": true}"#,
        ));
        assert!(both.unwrap_err().starts_with("operation 0:"));
        let unset =
            ApiSequence::parse(&file(r#"{"op": "watch", "id": 0, "unset": true, "bookmarks": true}"#));
        assert!(matches!(unset.unwrap().ops[..], [ApiOp::Watch { from: None, unset: true, .. }]));
        let from = ApiSequence::parse(&file(r#"{"op": "watch", "id": 0, "from": 3, "bookmarks": false}"#));
        assert!(matches!(from.unwrap().ops[..], [ApiOp::Watch { from: Some(3), unset: false, .. }]));
    }
}
