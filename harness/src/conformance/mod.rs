//! Differential conformance of the store model (`model/src/store.rs`, SEMANTICS E1–E8) against a real
//! etcd: seeded sequences of operations applied to both, every answer and every watch message compared,
//! and a difference shrunk to a minimal sequence that a file replays.
//!
//! The same machinery (generator style, comparison, shrinker, campaign: `compare::Suite`) also runs the
//! API server model against the real Kubernetes watch cache (`apiserver`).
//!
//! The pure half is here and builds by default: the operations, the model's transcript of a sequence, the
//! generator, the comparison and the shrinker. The real etcd (`etcd`: its process and its client) is
//! behind the `etcd` cargo feature, because `etcd-client` needs `protoc` to build
//! (`scripts/install-etcd` installs it and etcd).

pub mod apiserver;
pub mod compare;
pub mod etcd_to_start;
pub mod generate;
pub mod model_side;
pub mod sequence;
pub mod transcript;

#[cfg(feature = "etcd")]
pub mod built;
#[cfg(feature = "etcd")]
pub mod etcd;

pub use compare::{first_difference, shrink, Campaign, Difference, Ops, StoreSuite, Suite, Summary};
pub use etcd_to_start::EtcdToStart;
pub use model_side::{model_transcript, model_transcript_with, Plant};
pub use sequence::{Op, Sequence};
pub use transcript::{Answer, Kv, Refusal, Step, Transcript, WatchMsg};

/// Why a store under test could not answer: it could not be started or reached, or it died.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SideError(pub String);

impl std::fmt::Display for SideError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SideError {}

/// A new directory for one child process's files, `listwatch-{what}-{pid}-{tag}…` under the
/// temporary directory (the pid lets a test find what a run left behind), that no other child shares:
/// tests start servers side by side in one process, and a shared directory let one server's
/// credentials replace another's. The child's owner removes it when the child ends.
#[cfg(feature = "etcd")]
pub(crate) fn scratch_dir(what: &str, tag: &str) -> Result<std::path::PathBuf, SideError> {
    tempfile::Builder::new()
        .prefix(&format!("listwatch-{what}-{}-{tag}", std::process::id()))
        .tempdir()
        .map(tempfile::TempDir::keep)
        .map_err(|e| {
            SideError(format!("{}: cannot make a directory for {what}: {e}", std::env::temp_dir().display()))
        })
}

/// A store that runs a sequence and reports what it answered: a real etcd, or a model (for tests of the
/// comparison itself).
pub trait StoreUnderTest {
    /// What it is, for the report ("etcd 3.4.23 at http://127.0.0.1:2379").
    fn describe(&self) -> String;
    /// Whether it answers progress requests as etcd 3.5.22+, 3.6.2+ and 3.7 do (E7: none while a
    /// watch's start revision is ahead), or as etcd 3.4.23 and 3.5.21.
    fn progress_after_start(&self) -> bool {
        false
    }
    /// Run `sequence` from a fresh namespace. `expected` is the model's transcript, which tells a real
    /// store how many watch messages to wait for after each step before it moves on (a message that
    /// never comes is waited for up to a timeout, then the step is compared as it stands).
    fn run(&mut self, sequence: &Sequence, expected: &Transcript) -> Result<Transcript, SideError>;
}
