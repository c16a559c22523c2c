//! The operations of a conformance sequence, in the model's terms: keys are small numbers, revisions count
//! from the sequence's start (a real etcd adds the revision it had when the sequence began).

use serde::{Deserialize, Serialize};

/// One operation on the store.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "op")]
pub enum Op {
    /// Put `value` at `key` (E1, E2); `other` puts it under another resource type's prefix, which moves
    /// the revision without an event for the watched prefix.
    Put {
        key: u8,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        other: bool,
        value: u16,
    },
    /// Delete `key` (E2, E3); a missing key deletes nothing and does not move the revision.
    Delete {
        key: u8,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        other: bool,
    },
    /// Delete every listed key of the watched prefix in one transaction, at one revision (E8).
    DeleteAll { keys: Vec<u8> },
    /// Compact at `rev` (E4), refusals included.
    Compact { rev: u32 },
    /// Range over the watched prefix at `at` (the current revision when absent), errors included (E4).
    Range {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        at: Option<u32>,
    },
    /// Open watch `id` on the watched prefix from `from`, inclusive, with `prev_kv` (E5, E6); an open
    /// watch of the same id is cancelled first.
    Watch { id: u8, from: u32 },
    /// Cancel watch `id` at the client's request.
    Cancel { id: u8 },
    /// Ask watch `id` for a progress notification (E7).
    Progress { id: u8 },
}

/// The largest key and watch id a sequence uses, so that a file cannot ask for unbounded namespaces.
pub const MAX_KEY: u8 = 99;
pub const MAX_WATCH: u8 = 7;

/// A sequence, as a file writes it: the seed and index that generated it, and its operations.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sequence {
    pub format: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<u64>,
    pub ops: Vec<Op>,
}

impl Sequence {
    pub const FORMAT: &'static str = "listwatch-etcd-sequence/1";

    pub fn new(seed: Option<u64>, index: Option<u64>, ops: Vec<Op>) -> Self {
        Sequence { format: Self::FORMAT.to_string(), seed, index, ops }
    }

    /// Read a sequence file; the error names what is wrong.
    pub fn parse(text: &str) -> Result<Self, String> {
        let seq: Sequence = serde_json::from_str(text).map_err(|e| format!("not a sequence file: {e}"))?;
        if seq.format != Self::FORMAT {
            return Err(format!("format '{}' is not '{}'", seq.format, Self::FORMAT));
        }
        for (i, op) in seq.ops.iter().enumerate() {
            let bad = match op {
                Op::Put { key, .. } | Op::Delete { key, .. } => *key > MAX_KEY,
                Op::DeleteAll { keys } => keys.is_empty() || keys.iter().any(|k| *k > MAX_KEY),
                Op::Watch { id, .. } | Op::Cancel { id } | Op::Progress { id } => *id > MAX_WATCH,
                Op::Compact { rev } => *rev == 0,
                Op::Range { .. } => false,
            };
            if bad {
                return Err(format!(
                    "operation {i}: {op:?} is out of range (keys 0..={MAX_KEY}, watches 0..={MAX_WATCH}, \
                     compaction above 0, a multi-key delete names a key)"
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

impl std::fmt::Display for Op {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let prefix = |other: bool| if other { "other/" } else { "" };
        match self {
            Op::Put { key, other, value } => write!(f, "put {}k{key} = v{value}", prefix(*other)),
            Op::Delete { key, other } => write!(f, "delete {}k{key}", prefix(*other)),
            Op::DeleteAll { keys } => {
                let keys: Vec<String> = keys.iter().map(|k| format!("k{k}")).collect();
                write!(f, "txn delete {} (one revision)", keys.join(" "))
            }
            Op::Compact { rev } => write!(f, "compact {rev}"),
            Op::Range { at: Some(at) } => write!(f, "range at {at}"),
            Op::Range { at: None } => write!(f, "range"),
            Op::Watch { id, from } => write!(f, "watch w{id} from {from} (prev_kv)"),
            Op::Cancel { id } => write!(f, "cancel w{id}"),
            Op::Progress { id } => write!(f, "progress w{id}"),
        }
    }
}
