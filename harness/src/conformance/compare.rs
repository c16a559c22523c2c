//! Comparing a store's transcript with the model's, shrinking a difference, and a seeded campaign.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};

use listwatch_model::store::TombstonePolicy;

use super::generate;
use super::model_side::{model_transcript_with, Plant};
use super::sequence::Sequence;
use super::transcript::{Step, Transcript};
use super::{SideError, StoreUnderTest};

/// Where two transcripts first differ, and what each side said there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Difference {
    /// "step 3 (range at 2)", or "end, watch w1".
    pub place: String,
    pub model: String,
    pub store: String,
}

impl Difference {
    /// The same difference, said not to have come again when its sequence ran again.
    pub fn not_reproduced(self) -> Difference {
        let place =
            format!("{} (not seen again when the sequence ran again: it depends on timing)", self.place);
        Difference { place, ..self }
    }
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: the model says {}; the store says {}", self.place, self.model, self.store)
    }
}

fn render_step(step: Option<&Step>) -> String {
    let Some(step) = step else { return "nothing".into() };
    let mut parts = vec![match &step.answer {
        Some(a) => serde_json::to_string(a).unwrap_or_default(),
        None => "no answer".into(),
    }];
    for (id, msgs) in &step.messages {
        let msgs: Vec<String> = msgs.iter().map(ToString::to_string).collect();
        parts.push(format!("w{id} got [{}]", msgs.join("; ")));
    }
    parts.join(", ")
}

/// The first place where `store` differs from `model` for `sequence`.
pub fn first_difference(sequence: &Sequence, model: &Transcript, store: &Transcript) -> Option<Difference> {
    for (i, op) in sequence.ops.iter().enumerate() {
        let (m, s) = (model.steps.get(i), store.steps.get(i));
        if m != s {
            return Some(Difference {
                place: format!("step {i} ({op})"),
                model: render_step(m),
                store: render_step(s),
            });
        }
    }
    let ids: std::collections::BTreeSet<u8> = model.end.keys().chain(store.end.keys()).copied().collect();
    for id in ids {
        let (m, s) = (model.end.get(&id), store.end.get(&id));
        if m != s {
            return Some(Difference {
                place: format!("the end, progress on w{id}"),
                model: render_step(m),
                store: render_step(s),
            });
        }
    }
    None
}

/// Run `sequence` on the model and on `store` and compare; the transcripts come back for the counts.
pub fn compare(
    sequence: &Sequence,
    tombstones: TombstonePolicy,
    plant: Plant,
    store: &mut dyn StoreUnderTest,
) -> Result<(Option<Difference>, Transcript, Transcript), SideError> {
    let model = model_transcript_with(sequence, tombstones, plant, store.progress_after_start());
    let real = store.run(sequence, &model)?;
    Ok((first_difference(sequence, &model, &real), model, real))
}

/// A sequence of operations the shrinker can remove some from: the etcd sequences and the API server's.
pub trait Ops: Clone {
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The sequence without the operations in `range`.
    fn without(&self, range: std::ops::Range<usize>) -> Self;
    /// How many of its requests meet a cache held behind on purpose (none by default).
    fn lagging(&self) -> usize {
        0
    }
    /// How many times it makes the cache relist (none by default).
    fn relists(&self) -> usize {
        0
    }
    /// How many of its watches last until the server ends them at their timeout (none by default).
    fn timeouts(&self) -> usize {
        0
    }
    /// How many minutes pass on the server's clock, each with its heartbeat bookmarks (none by default).
    fn minutes(&self) -> usize {
        0
    }
}

impl Ops for Sequence {
    fn len(&self) -> usize {
        self.ops.len()
    }
    fn without(&self, range: std::ops::Range<usize>) -> Self {
        let mut s = self.clone();
        s.ops.drain(range);
        s
    }
}

/// Remove operations while a difference remains (delta debugging: halves, then quarters, ... then single
/// operations, repeated until none can go). Returns the smallest sequence and its difference.
pub fn shrink<S: Ops>(
    sequence: &S,
    mut differs: impl FnMut(&S) -> Result<Option<Difference>, SideError>,
) -> Result<Option<(S, Difference)>, SideError> {
    let Some(mut diff) = differs(sequence)? else { return Ok(None) };
    let mut best = sequence.clone();
    let mut chunk = best.len().div_ceil(2).max(1);
    loop {
        let mut changed = false;
        let mut start = 0;
        while start < best.len() {
            let candidate = best.without(start..(start + chunk).min(best.len()));
            match differs(&candidate)? {
                Some(d) => (best, diff, changed) = (candidate, d, true),
                None => start += chunk,
            }
        }
        if chunk == 1 && !changed {
            return Ok(Some((best, diff)));
        }
        chunk = if changed { chunk } else { chunk.div_ceil(2) }.max(1);
    }
}

/// What a campaign runs, whatever the side under test: how a sequence is made, how the side runs it
/// (told what the model expects, so that it knows what to wait for) and how its answers compare with the
/// model's under either tombstone policy (E4).
pub trait Suite {
    type Seq: Ops;
    /// What the side answered to one sequence.
    type Real;
    fn generate(&self, seed: u64, index: u64, max_ops: usize) -> Self::Seq;
    /// Run `seq` on the side; also the number of watch messages the model expects.
    fn run(
        &mut self,
        seq: &Self::Seq,
        tombstones: TombstonePolicy,
        plant: Plant,
    ) -> Result<(Self::Real, usize), SideError>;
    /// Where `real` first differs from the model's answers under `tombstones`.
    fn check(
        &self,
        seq: &Self::Seq,
        real: &Self::Real,
        tombstones: TombstonePolicy,
        plant: Plant,
    ) -> Option<Difference>;
}

/// The etcd suite: the store model against a [`StoreUnderTest`].
pub struct StoreSuite<'a>(pub &'a mut dyn StoreUnderTest);

impl std::fmt::Debug for StoreSuite<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "StoreSuite({})", self.0.describe())
    }
}

impl Suite for StoreSuite<'_> {
    type Seq = Sequence;
    type Real = Transcript;
    fn generate(&self, seed: u64, index: u64, max_ops: usize) -> Sequence {
        generate::sequence(seed, index, max_ops)
    }
    fn run(
        &mut self,
        seq: &Sequence,
        tombstones: TombstonePolicy,
        plant: Plant,
    ) -> Result<(Transcript, usize), SideError> {
        let model = model_transcript_with(seq, tombstones, plant, self.0.progress_after_start());
        Ok((self.0.run(seq, &model)?, model.messages()))
    }
    fn check(
        &self,
        seq: &Sequence,
        real: &Transcript,
        tombstones: TombstonePolicy,
        plant: Plant,
    ) -> Option<Difference> {
        first_difference(
            seq,
            &model_transcript_with(seq, tombstones, plant, self.0.progress_after_start()),
            real,
        )
    }
}

/// A seeded run of many sequences.
#[derive(Clone, Copy, Debug)]
pub struct Campaign {
    pub seed: u64,
    pub sequences: u64,
    pub max_ops: usize,
    pub plant: Plant,
}

/// What a campaign compared and found.
#[derive(Clone, Debug)]
pub struct Summary<Q = Sequence> {
    pub sequences: u64,
    pub operations: u64,
    /// Watch messages compared (the model's count; the store's, if it sent others, is a difference).
    pub messages: u64,
    /// The first unexplained difference, shrunk.
    pub difference: Option<(Q, Difference)>,
    /// The other tombstone policy (E4) than the one the store follows: in how many sequences it
    /// differs, and the shortest such sequence.
    pub other_policy: TombstonePolicy,
    pub other_policy_differs: u64,
    pub other_policy_example: Option<(Q, Difference)>,
    /// Stopped by a signal before all sequences ran.
    pub interrupted: bool,
    /// Requests made while the cache lagged on purpose ([`Ops::lagging`]).
    pub lagging: u64,
    /// Cache relists made on purpose ([`Ops::relists`]).
    pub relists: u64,
    /// Watches that last until the server's timeout ends them ([`Ops::timeouts`]).
    pub timeouts: u64,
    /// Minutes passed on the server's clock, whose heartbeat bookmarks are compared ([`Ops::minutes`]).
    pub minutes: u64,
}

/// The tombstone policy that is not `p`.
pub fn other(p: TombstonePolicy) -> TombstonePolicy {
    match p {
        TombstonePolicy::DropAtCompaction => TombstonePolicy::KeepAtCompactRev,
        TombstonePolicy::KeepAtCompactRev => TombstonePolicy::DropAtCompaction,
    }
}

impl Campaign {
    /// Run the campaign against `store`, which follows `tombstones` (E4). Stops at the first unexplained
    /// difference, which it shrinks, or when `stop` is set.
    pub fn run(
        &self,
        store: &mut dyn StoreUnderTest,
        tombstones: TombstonePolicy,
        stop: &AtomicBool,
        progress: impl FnMut(u64),
    ) -> Result<Summary, SideError> {
        self.run_suite(&mut StoreSuite(store), tombstones, stop, progress)
    }

    /// Run the campaign on any [`Suite`].
    pub fn run_suite<S: Suite>(
        &self,
        suite: &mut S,
        tombstones: TombstonePolicy,
        stop: &AtomicBool,
        mut progress: impl FnMut(u64),
    ) -> Result<Summary<S::Seq>, SideError> {
        let alternative = other(tombstones);
        let mut summary = Summary { other_policy: alternative, ..Summary::default() };
        let plant = self.plant;
        for index in 0..self.sequences {
            if stop.load(Ordering::Relaxed) {
                summary.interrupted = true;
                break;
            }
            let sequence = suite.generate(self.seed, index, self.max_ops);
            let (real, messages) = suite
                .run(&sequence, tombstones, plant)
                .map_err(|e| SideError(format!("{e}, in sequence {index} of seed {}", self.seed)))?;
            let diff = suite.check(&sequence, &real, tombstones, plant);
            summary.sequences += 1;
            summary.operations += sequence.len() as u64;
            summary.lagging += sequence.lagging() as u64;
            summary.relists += sequence.relists() as u64;
            summary.timeouts += sequence.timeouts() as u64;
            summary.minutes += sequence.minutes() as u64;
            summary.messages += messages as u64;
            progress(index + 1);
            if let Some(first) = diff {
                let shrunk = shrink(&sequence, |s| {
                    let (real, _) = suite.run(s, tombstones, plant)?;
                    Ok(suite.check(s, &real, tombstones, plant))
                })?;
                // A difference that does not come again when its sequence runs again still stands:
                // the whole sequence, said to depend on timing, never a pass.
                summary.difference = shrunk.or_else(|| Some((sequence.clone(), first.not_reproduced())));
                break;
            }
            if suite.check(&sequence, &real, alternative, plant).is_some() {
                summary.other_policy_differs += 1;
                if summary.other_policy_example.is_none() {
                    summary.other_policy_example = shrink(&sequence, |s| {
                        let (real, _) = suite.run(s, alternative, plant)?;
                        Ok(suite.check(s, &real, alternative, plant))
                    })?;
                }
            }
        }
        Ok(summary)
    }
}

impl<Q> Default for Summary<Q> {
    /// A summary with nothing counted yet.
    fn default() -> Self {
        Summary {
            sequences: 0,
            operations: 0,
            messages: 0,
            difference: None,
            other_policy: TombstonePolicy::default(),
            other_policy_differs: 0,
            other_policy_example: None,
            interrupted: false,
            lagging: 0,
            relists: 0,
            timeouts: 0,
            minutes: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conformance::generate;
    use crate::conformance::model_side::model_transcript;
    use crate::conformance::sequence::Op;

    /// The model itself as the store under test, with a bug planted or not: the comparison and the
    /// shrinker checked without an etcd.
    struct ModelStore(TombstonePolicy, Plant);

    impl StoreUnderTest for ModelStore {
        fn describe(&self) -> String {
            "the model".into()
        }
        fn run(&mut self, sequence: &Sequence, _: &Transcript) -> Result<Transcript, SideError> {
            Ok(model_transcript(sequence, self.0, self.1))
        }
    }

    const DROP: TombstonePolicy = TombstonePolicy::DropAtCompaction;

    #[test]
    fn the_model_agrees_with_itself_over_a_campaign() {
        let campaign = Campaign { seed: 3, sequences: 300, max_ops: 30, plant: Plant::None };
        let summary =
            campaign.run(&mut ModelStore(DROP, Plant::None), DROP, &AtomicBool::new(false), |_| {}).unwrap();
        assert_eq!(summary.sequences, 300);
        assert!(summary.difference.is_none());
        assert!(summary.messages > 300, "the sequences make watches deliver events");
        assert!(summary.other_policy_differs > 0, "the two tombstone policies are told apart (E4)");
        let (shortest, _) = summary.other_policy_example.unwrap();
        assert!(shortest.ops.len() <= 5, "{shortest:?}");
    }

    #[test]
    fn a_planted_compaction_bug_is_found_and_shrunk_to_a_few_operations() {
        let campaign =
            Campaign { seed: 1, sequences: 500, max_ops: 30, plant: Plant::CompactionKeepsOneRevisionTooFew };
        let summary =
            campaign.run(&mut ModelStore(DROP, Plant::None), DROP, &AtomicBool::new(false), |_| {}).unwrap();
        let (shortest, diff) = summary.difference.expect("the planted bug is found");
        assert!(shortest.ops.len() <= 5, "{shortest:?}");
        assert!(shortest.ops.iter().any(|o| matches!(o, Op::Compact { .. })), "{shortest:?} {diff}");
    }

    /// A store with the planted bug in its `nth` run only, as a race that a second run does not meet.
    struct DiffersOnce {
        runs: u64,
        nth: u64,
    }

    impl StoreUnderTest for DiffersOnce {
        fn describe(&self) -> String {
            "a store that differs once".into()
        }
        fn run(&mut self, sequence: &Sequence, _: &Transcript) -> Result<Transcript, SideError> {
            let plant =
                if self.runs == self.nth { Plant::CompactionKeepsOneRevisionTooFew } else { Plant::None };
            self.runs += 1;
            Ok(model_transcript(sequence, DROP, plant))
        }
    }

    #[test]
    fn a_difference_that_does_not_come_again_is_still_reported() {
        let meets_the_bug = |i| {
            let seq = generate::sequence(1, i, 30);
            let planted = model_transcript(&seq, DROP, Plant::CompactionKeepsOneRevisionTooFew);
            first_difference(&seq, &model_transcript(&seq, DROP, Plant::None), &planted).is_some()
        };
        let nth = (0..500).find(|&i| meets_the_bug(i)).expect("seed 1 meets the planted bug (test above)");
        let campaign = Campaign { seed: 1, sequences: 500, max_ops: 30, plant: Plant::None };
        let mut store = DiffersOnce { runs: 0, nth };
        let summary = campaign.run(&mut store, DROP, &AtomicBool::new(false), |_| {}).unwrap();
        let (seq, diff) = summary.difference.expect("the difference is reported, not passed");
        assert_eq!(summary.sequences, nth + 1);
        assert_eq!(seq, generate::sequence(1, nth, 30), "the whole sequence, unshrunk");
        assert!(diff.place.contains("depends on timing"), "{diff}");
    }

    #[test]
    fn a_difference_names_the_step_and_both_answers() {
        let seq = Sequence::new(
            None,
            None,
            vec![
                Op::Put { key: 0, other: false, value: 1 },
                Op::Put { key: 0, other: false, value: 2 },
                Op::Compact { rev: 1 },
                Op::Range { at: Some(1) },
            ],
        );
        let model = model_transcript(&seq, DROP, Plant::None);
        let planted = model_transcript(&seq, DROP, Plant::CompactionKeepsOneRevisionTooFew);
        let diff = first_difference(&seq, &planted, &model).unwrap();
        assert_eq!(diff.place, "step 3 (range at 1)");
        assert!(diff.model.contains("refused") && diff.store.contains("\"range\""), "{diff}");
    }
}
