//! Differential conformance of the API server model (`model/src/server.rs` over `model/src/store.rs`,
//! SEMANTICS A1–A14 over E1–E8) against the real Kubernetes watch cache: k8s.io/apiserver's etcd3 store
//! under its cacher (`harness/apiserver/`, built by `scripts/build-apiserver`) over a real etcd.
//!
//! The pure half builds by default: the operations, the model's transcript, the generator and the
//! comparison. The real server (its process and the client that drives it) is behind the `apiserver`
//! cargo feature.

pub mod generate;
pub mod model_side;
pub mod sequence;
pub mod transcript;

#[cfg(feature = "apiserver")]
pub mod sample;
#[cfg(feature = "apiserver")]
pub mod server;

use listwatch_model::store::TombstonePolicy;
use listwatch_model::ApiServerRelease;

pub use generate::Draws;
pub use model_side::{model_transcript, ModelSetup};
pub use sequence::{ApiOp, ApiSequence, Rv};
pub use transcript::{first_difference, ApiAnswer, ApiMsg, ApiStep, ApiTranscript, Obj, Token};

use super::compare::Suite;
use super::{Difference, Plant, SideError};

/// An API server that runs a sequence and reports what it answered.
pub trait ServerUnderTest {
    fn describe(&self) -> String;
    /// Whether its etcd answers progress requests (E7; etcd >= 3.4.31, 3.5.13, 3.6), which decides
    /// whether consistent reads are served from the cache (A2) and streaming lists with rv unset work
    /// (A12).
    fn progress_requests(&self) -> bool;
    /// Its k8s.io/apiserver release, whose rules the model follows ([`ApiServerRelease`]).
    fn release(&self) -> ApiServerRelease;
    /// Its `WatchList` gate (A12): by default its release's.
    fn watch_list(&self) -> bool {
        self.release().watch_list()
    }
    /// Whether it pages a LIST with `limit` (A13): a server may ignore `limit`.
    fn paginates(&self) -> bool {
        true
    }
    /// What the run may draw for it: by default everything it serves.
    fn draws(&self) -> Draws {
        Draws { watch_list: self.watch_list(), ..Draws::ALL }
    }
    /// What the report says of it besides the counts (a feature it does not serve, and why that is
    /// allowed).
    fn notes(&self) -> Vec<String> {
        Vec::new()
    }
    /// Whether requests reach it through the API server's HTTP handler ([`ModelSetup::handlers`]),
    /// not straight at its storage layer.
    fn handlers(&self) -> bool {
        false
    }
    /// Run `seq` from a fresh cache; `expected` tells it how many watch messages to wait for.
    fn run(&mut self, seq: &ApiSequence, expected: &ApiTranscript) -> Result<ApiTranscript, SideError>;
}

/// The API server suite: the model against a [`ServerUnderTest`].
pub struct ApiSuite<'a>(pub &'a mut dyn ServerUnderTest);

impl std::fmt::Debug for ApiSuite<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ApiSuite({})", self.0.describe())
    }
}

impl ApiSuite<'_> {
    /// Every kind of operation the release serves: what the real cacher does without progress
    /// requests is in the model (A12); a release without streaming lists gets none ([`Draws`]).
    pub fn draws(&self) -> Draws {
        self.0.draws()
    }

    pub fn setup(&self, tombstones: TombstonePolicy, plant: Plant) -> ModelSetup {
        ModelSetup {
            tombstones,
            plant,
            // A consistent read moves the cache to etcd's revision only where it is served from the
            // cache (ApiServerRelease::consistent_list_from_cache).
            progress_requests: self.0.progress_requests() && self.0.release().consistent_list_from_cache(),
            release: self.0.release(),
            watch_list: self.0.watch_list(),
            pagination: self.0.paginates(),
            handlers: self.0.handlers(),
        }
    }
}

impl Suite for ApiSuite<'_> {
    type Seq = ApiSequence;
    type Real = ApiTranscript;
    fn generate(&self, seed: u64, index: u64, max_ops: usize) -> ApiSequence {
        generate::sequence(seed, index, max_ops, self.draws())
    }
    fn run(
        &mut self,
        seq: &ApiSequence,
        tombstones: TombstonePolicy,
        plant: Plant,
    ) -> Result<(ApiTranscript, usize), SideError> {
        let model = model_transcript(seq, self.setup(tombstones, plant));
        Ok((self.0.run(seq, &model)?, model.messages()))
    }
    fn check(
        &self,
        seq: &ApiSequence,
        real: &ApiTranscript,
        tombstones: TombstonePolicy,
        plant: Plant,
    ) -> Option<Difference> {
        first_difference(seq, &model_transcript(seq, self.setup(tombstones, plant)), real)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicBool;

    use super::*;
    use crate::conformance::Campaign;

    /// The correct model as the server under test: the comparison and the shrinker checked without Go.
    struct ModelApi(bool);

    impl ServerUnderTest for ModelApi {
        fn describe(&self) -> String {
            "the model".into()
        }
        fn progress_requests(&self) -> bool {
            self.0
        }
        fn release(&self) -> ApiServerRelease {
            ApiServerRelease::NEWEST
        }
        fn run(&mut self, seq: &ApiSequence, _: &ApiTranscript) -> Result<ApiTranscript, SideError> {
            Ok(model_transcript(seq, ModelSetup::storage(self.0)))
        }
    }

    const DROP: TombstonePolicy = TombstonePolicy::DropAtCompaction;

    #[test]
    fn the_model_agrees_with_itself() {
        for progress in [false, true] {
            let campaign = Campaign { seed: 2, sequences: 200, max_ops: 30, plant: Plant::None };
            let summary = campaign
                .run_suite(&mut ApiSuite(&mut ModelApi(progress)), DROP, &AtomicBool::new(false), |_| {})
                .unwrap();
            assert!(summary.difference.is_none(), "{:?}", summary.difference);
            assert!(summary.messages > 200, "watches get events: {}", summary.messages);
            assert!(summary.lagging > 10, "requests meet a held cache: {}", summary.lagging);
            assert!(summary.relists > 5, "caches relist: {}", summary.relists);
            assert!(summary.timeouts > 3, "watches time out: {}", summary.timeouts);
            assert!(summary.minutes > 5, "minutes pass: {}", summary.minutes);
        }
    }

    /// A server that sends no heartbeat is found through a minute, shrunk to it, and named A8.
    #[test]
    fn a_planted_missing_heartbeat_is_found_and_named() {
        let campaign = Campaign { seed: 0, sequences: 200, max_ops: 30, plant: Plant::HeartbeatMissing };
        let summary = campaign
            .run_suite(&mut ApiSuite(&mut ModelApi(true)), DROP, &AtomicBool::new(false), |_| {})
            .unwrap();
        let (shortest, diff) = summary.difference.expect("the planted bug is found");
        assert!(shortest.ops.len() <= 4, "{shortest:?}: {diff}");
        assert_eq!(shortest.ops.last(), Some(&ApiOp::Minute), "{shortest:?}: {diff}");
        assert!(diff.place.contains("breaks A8 (heartbeat bookmarks)"), "{diff}");
    }

    #[test]
    fn a_planted_consistent_list_bug_is_found_and_shrunk() {
        let campaign =
            Campaign { seed: 1, sequences: 100, max_ops: 30, plant: Plant::ConsistentListOneRevisionBehind };
        let summary = campaign
            .run_suite(&mut ApiSuite(&mut ModelApi(true)), DROP, &AtomicBool::new(false), |_| {})
            .unwrap();
        let (shortest, diff) = summary.difference.expect("the planted bug is found");
        assert!(shortest.ops.len() <= 2, "{shortest:?}: {diff}");
        assert!(
            shortest.ops.iter().any(|o| matches!(o, ApiOp::List { rv: Rv::Consistent, .. })),
            "{shortest:?}"
        );
        assert!(diff.place.contains("breaks A2 (LIST by resourceVersion)"), "the rule is named: {diff}");
    }

    /// A bug that shows only while the cache lags is found through a held cache, and shrunk to it.
    #[test]
    fn a_planted_lagging_consistent_read_is_found_through_a_held_cache() {
        let campaign = Campaign { seed: 0, sequences: 100, max_ops: 30, plant: Plant::ConsistentReadLags };
        let summary = campaign
            .run_suite(&mut ApiSuite(&mut ModelApi(true)), DROP, &AtomicBool::new(false), |_| {})
            .unwrap();
        let (shortest, diff) = summary.difference.expect("the planted bug is found");
        assert!(shortest.ops.len() <= 4, "{shortest:?}: {diff}");
        assert_eq!(shortest.ops.first(), Some(&ApiOp::HoldCache), "{shortest:?}: {diff}");
    }

    /// A bug that shows only at a cache relist is found through one, shrunk to it, and named A5.
    #[test]
    fn a_planted_ignored_relist_is_found_and_named() {
        let campaign = Campaign { seed: 0, sequences: 100, max_ops: 30, plant: Plant::RelistIgnored };
        let summary = campaign
            .run_suite(&mut ApiSuite(&mut ModelApi(true)), DROP, &AtomicBool::new(false), |_| {})
            .unwrap();
        let (shortest, diff) = summary.difference.expect("the planted bug is found");
        assert!(shortest.ops.len() <= 3, "{shortest:?}: {diff}");
        assert!(shortest.ops.contains(&ApiOp::RelistCache), "{shortest:?}: {diff}");
        assert!(diff.place.contains("breaks A5") || diff.place.contains("breaks A4"), "{diff}");
    }

    /// A server that lets a watch outlive its timeoutSeconds is found through a timed watch, shrunk
    /// to it, and named A9.
    #[test]
    fn a_planted_ignored_timeout_is_found_and_named() {
        let campaign = Campaign { seed: 0, sequences: 100, max_ops: 30, plant: Plant::TimeoutIgnored };
        let summary = campaign
            .run_suite(&mut ApiSuite(&mut ModelApi(true)), DROP, &AtomicBool::new(false), |_| {})
            .unwrap();
        let (shortest, diff) = summary.difference.expect("the planted bug is found");
        assert!(shortest.ops.len() <= 2, "{shortest:?}: {diff}");
        assert!(shortest.ops.last().is_some_and(ApiOp::times_out), "{shortest:?}");
        assert!(diff.place.contains("breaks A9"), "{diff}");
        // A timed streaming list alone: the planted server lets it outlive its timeout, named A9 too.
        let put = |key| ApiOp::Put { key, other: false };
        let list = ApiOp::WatchList { id: 0, rv: Rv::Any, timeout: true };
        let case = ApiSequence::new(None, None, vec![put(0), put(1), list]);
        let setup = ModelSetup::storage(true);
        let planted = ModelSetup { plant: Plant::TimeoutIgnored, ..setup };
        let (model, real) = (model_transcript(&case, setup), model_transcript(&case, planted));
        let diff = first_difference(&case, &model, &real).expect("the list outlives its timeout");
        assert!(diff.place.starts_with("step 2 ") && diff.place.contains("breaks A9"), "{diff}");
    }

    /// A timed watch (A9): what it owed from its RV, then a clean close, in the step that opened it;
    /// a watch beside it goes on; a timed streaming list: its objects, their end, a clean close.
    #[test]
    fn a_timed_watch_gets_its_events_then_closes() {
        let seq = ApiSequence::timeout_case();
        let t = model_transcript(&seq, ModelSetup::storage(true));
        t.holds_timeout_case().unwrap();
    }

    /// A8's heartbeats in the model: none before the cache moves past a watch, one a minute to each
    /// watch with bookmarks after, at an RV already sent too; a watch from "0" opened on an empty cache
    /// gets one at once before v0.32 and none from v0.32.
    #[test]
    fn heartbeats_come_each_minute_as_the_release_sends_them() {
        let seq = ApiSequence::heartbeat_case();
        for (release, reopened) in
            [(ApiServerRelease::NEWEST, vec![]), (ApiServerRelease::new(31, 14), vec![4])]
        {
            let t = model_transcript(&seq, ModelSetup { release, ..ModelSetup::storage(true) });
            let beats = |step: usize, id: u8| -> Vec<u32> {
                let msgs = t.steps[step].messages.get(&id).cloned().unwrap_or_default();
                msgs.iter()
                    .map(|m| match m {
                        ApiMsg::Bookmark { rv } => *rv,
                        other => panic!("step {step}: {other:?}"),
                    })
                    .collect()
            };
            assert!(t.steps[5].messages.is_empty(), "{release}: {:?}", t.steps[5]);
            for step in [7, 8] {
                assert_eq!((beats(step, 0), beats(step, 1), beats(step, 2)), (vec![3], vec![3], vec![]));
            }
            assert_eq!((beats(11, 0), beats(11, 1)), (vec![4], reopened), "{release}");
        }
    }

    /// A LIST of one name answers the whole LIST's RV with that object only (or none), in the
    /// namespace and across namespaces alike.
    #[test]
    fn a_named_list_answers_the_whole_lists_rv_with_one_object() {
        let seq = ApiSequence::named_case();
        let t = model_transcript(&seq, ModelSetup::storage(true));
        let whole: Vec<ApiOp> = seq
            .ops
            .iter()
            .map(|o| match *o {
                ApiOp::ListNamed { rv, .. } => ApiOp::List { rv, limit: None },
                ref o => o.clone(),
            })
            .collect();
        let w = model_transcript(&ApiSequence::new(None, None, whole), ModelSetup::storage(true));
        for (i, op) in seq.ops.iter().enumerate() {
            let ApiOp::ListNamed { key, .. } = op else { continue };
            let (
                Some(ApiAnswer::List { rv, items, .. }),
                Some(ApiAnswer::List { rv: all_rv, items: all, .. }),
            ) = (&t.steps[i].answer, &w.steps[i].answer)
            else {
                panic!("step {i}: {:?}", t.steps[i])
            };
            assert_eq!(rv, all_rv, "step {i}");
            let want: Vec<Obj> = all.iter().filter(|o| o.key == *key).copied().collect();
            assert_eq!(items, &want, "step {i}");
        }
        let sizes: Vec<usize> = t
            .steps
            .iter()
            .filter_map(|s| match &s.answer {
                Some(ApiAnswer::List { items, .. }) => Some(items.len()),
                _ => None,
            })
            .collect();
        assert_eq!(sizes, vec![1, 1, 1, 1, 1, 0, 1], "k1 is not there at revision 1");
    }

    /// A6 on a DELETE's own answer: a release that answers the object with its own last RV (before
    /// v0.26, kubernetes#113368) differs from the newest at the delete, and the rule is named; over
    /// HTTP, where the registry may answer a Status instead, the object is not compared.
    #[test]
    fn a_delete_answers_its_object_with_the_rv_its_release_stamps() {
        let seq =
            ApiSequence::new(None, None, vec![ApiOp::Put { key: 0, other: false }, ApiOp::Delete { key: 0 }]);
        let setup = |release: &str, handlers| ModelSetup {
            tombstones: DROP,
            plant: Plant::None,
            progress_requests: true,
            release: ApiServerRelease::parse(release).unwrap(),
            watch_list: true,
            pagination: true,
            handlers,
        };
        let newest = model_transcript(&seq, setup("v0.37.2", false));
        let deleted = |t: &ApiTranscript| t.steps[1].answer.clone();
        let at = |rv| Obj { key: 0, created: 1, rv, version: 1 };
        assert_eq!(deleted(&newest), Some(ApiAnswer::Deleted { rev: 2, keys: vec![0], object: Some(at(2)) }));
        let older = model_transcript(&seq, setup("v0.25.16", false));
        assert_eq!(deleted(&older), Some(ApiAnswer::Deleted { rev: 2, keys: vec![0], object: Some(at(1)) }));
        let diff = first_difference(&seq, &newest, &older).expect("the releases differ at the delete");
        assert!(diff.place.starts_with("step 1 (") && diff.place.contains("breaks A6"), "{diff}");
        assert_eq!(model_transcript(&seq, setup("v0.26.15", false)), newest);
        let http = model_transcript(&seq, setup("v0.37.2", true));
        assert_eq!(deleted(&http), Some(ApiAnswer::Deleted { rev: 2, keys: vec![0], object: None }));
    }

    /// A5: a relist closes the watches the cache serves, cleanly; its window starts at the revision it
    /// listed at, so a watch from before it gets 410 (A4) and one from it opens and gets what follows.
    #[test]
    fn a_relist_closes_the_watches_and_starts_the_window_anew() {
        let seq = ApiSequence::relist_case();
        let setup = ModelSetup::storage(true);
        let t = model_transcript(&seq, setup);
        let msgs = |step: usize, id: u8| t.steps[step].messages.get(&id).cloned().unwrap_or_default();
        assert_eq!(msgs(2, 0).len(), 2, "the initial ADDEDs");
        assert_eq!(msgs(3, 0), vec![ApiMsg::Closed], "the relist closes w0, with no ERROR");
        assert_eq!(t.steps[3].answer, Some(ApiAnswer::Nothing));
        assert_eq!(
            msgs(4, 1),
            vec![ApiMsg::Error { code: 410 }, ApiMsg::Closed],
            "w1 is older than the window"
        );
        assert_eq!(t.steps[5].answer, Some(ApiAnswer::WatchOpened));
        assert!(msgs(5, 2).is_empty(), "w2 opens at the relist's revision");
        assert!(matches!(msgs(6, 2)[..], [ApiMsg::Modified(Obj { key: 0, rv: 3, .. })]), "{:?}", msgs(6, 2));
        assert_eq!(t.steps[6].messages.get(&0), None, "w0 stays closed");
    }

    #[test]
    fn a_sequence_file_round_trips_and_bad_ones_are_named() {
        let seq = generate::sequence(5, 1, 30, Draws::ALL);
        assert_eq!(ApiSequence::parse(&seq.to_json()).unwrap(), seq);
        let bad = seq.to_json().replace(ApiSequence::FORMAT, "other/1");
        assert!(ApiSequence::parse(&bad).unwrap_err().contains("other/1"));
    }
}
