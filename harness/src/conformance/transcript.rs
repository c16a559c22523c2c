//! What a store answered to a sequence: one step per operation (its answer and the watch messages that
//! followed it), then what every watch still open says at the end.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// A key's value as a read or an event shows it (E2), with the value the sequence put there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Kv {
    pub key: u8,
    pub create_rev: u32,
    pub mod_rev: u32,
    pub version: u32,
    pub value: u16,
}

impl fmt::Display for Kv {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "k{}=v{} (create {}, mod {}, version {})",
            self.key, self.value, self.create_rev, self.mod_rev, self.version
        )
    }
}

/// Why etcd refused a read or a compaction (E4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Refusal {
    /// `mvcc: required revision has been compacted`
    Compacted,
    /// `mvcc: required revision is a future revision`
    FutureRevision,
}

/// The answer to one operation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "answer")]
pub enum Answer {
    /// A put took revision `rev`.
    Written {
        rev: u32,
    },
    /// A delete (or a multi-key delete) removed `keys` at `rev`; nothing removed leaves `rev` the current
    /// revision.
    Deleted {
        rev: u32,
        keys: Vec<u8>,
    },
    Compacted {
        rev: u32,
    },
    Refused {
        refusal: Refusal,
    },
    Range {
        rev: u32,
        kvs: Vec<Kv>,
    },
    /// The watch was created; whether it is cancelled at once (E5) shows in its messages.
    WatchCreated,
    Cancelled,
    /// A progress notification at `rev` (E7).
    Progress {
        rev: u32,
    },
    /// No progress notification comes (E7: etcd 3.5.22+, 3.6.2+ and 3.7 send none while the watch's
    /// start revision is ahead of the current one).
    NoProgress,
    /// A cancel or a progress request on a watch that is not open: no request is sent.
    NotOpen,
}

/// A message on a watch (E3, E5, E6).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "msg")]
pub enum WatchMsg {
    /// An event at `rev` on `key`: `put` is the new value (`None` for a delete, E3); `prev` is `prev_kv`.
    Event { rev: u32, key: u8, put: Option<Kv>, prev: Option<Kv> },
    /// The watch was cancelled because it is below the compacted revision (E5).
    Cancelled { compact_rev: u32 },
}

impl fmt::Display for WatchMsg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WatchMsg::Event { rev, key, put, prev } => {
                match put {
                    Some(kv) => write!(f, "PUT at {rev}: {kv}")?,
                    None => write!(f, "DELETE at {rev}: k{key}")?,
                }
                match prev {
                    Some(p) => write!(f, ", prev_kv {p}"),
                    None => write!(f, ", prev_kv nil"),
                }
            }
            WatchMsg::Cancelled { compact_rev } => write!(f, "cancelled: compacted at {compact_rev}"),
        }
    }
}

/// One operation's answer and the messages each watch received after it, by watch id.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    pub answer: Option<Answer>,
    pub messages: BTreeMap<u8, Vec<WatchMsg>>,
}

/// A whole run: a step per operation, then a progress request on every watch still open (with anything
/// that arrived before its answer).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Transcript {
    pub steps: Vec<Step>,
    pub end: BTreeMap<u8, Step>,
}

impl Transcript {
    /// How many watch messages the transcript holds, for the summary.
    pub fn messages(&self) -> usize {
        let count = |s: &Step| s.messages.values().map(Vec::len).sum::<usize>();
        self.steps.iter().map(count).sum::<usize>() + self.end.values().map(count).sum::<usize>()
    }
}
