//! Comparing a store's transcript with the model's, shrinking a difference, and a seeded campaign.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};

use listwatch_model::store::TombstonePolicy;

use super::generate;
use super::model_side::{model_transcript, Plant};
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
    let model = model_transcript(sequence, tombstones, plant);
    let real = store.run(sequence, &model)?;
    Ok((first_difference(sequence, &model, &real), model, real))
}

/// Remove operations while a difference remains (delta debugging: halves, then quarters, ... then single
/// operations, repeated until none can go). Returns the smallest sequence and its difference.
pub fn shrink(
    sequence: &Sequence,
    mut differs: impl FnMut(&Sequence) -> Result<Option<Difference>, SideError>,
) -> Result<Option<(Sequence, Difference)>, SideError> {
    let Some(mut diff) = differs(sequence)? else { return Ok(None) };
    let mut best = sequence.clone();
    let mut chunk = best.ops.len().div_ceil(2).max(1);
    loop {
        let mut changed = false;
        let mut start = 0;
        while start < best.ops.len() {
            let mut candidate = best.clone();
            candidate.ops.drain(start..(start + chunk).min(best.ops.len()));
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

/// A seeded run of many sequences.
#[derive(Clone, Copy, Debug)]
pub struct Campaign {
    pub seed: u64,
    pub sequences: u64,
    pub max_ops: usize,
    pub plant: Plant,
}

/// What a campaign compared and found.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    pub sequences: u64,
    pub operations: u64,
    /// Watch messages compared (the model's count; the store's, if it sent others, is a difference).
    pub messages: u64,
    /// The first unexplained difference, shrunk.
    pub difference: Option<(Sequence, Difference)>,
    /// The other tombstone policy (E4) than the one the store follows: in how many sequences it
    /// differs, and the shortest such sequence.
    pub other_policy: TombstonePolicy,
    pub other_policy_differs: u64,
    pub other_policy_example: Option<(Sequence, Difference)>,
    /// Stopped by a signal before all sequences ran.
    pub interrupted: bool,
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
        mut progress: impl FnMut(u64),
    ) -> Result<Summary, SideError> {
        let alternative = other(tombstones);
        let mut summary = Summary { other_policy: alternative, ..Summary::default() };
        for index in 0..self.sequences {
            if stop.load(Ordering::Relaxed) {
                summary.interrupted = true;
                break;
            }
            let sequence = generate::sequence(self.seed, index, self.max_ops);
            let (diff, model, real) = compare(&sequence, tombstones, self.plant, store)?;
            summary.sequences += 1;
            summary.operations += sequence.ops.len() as u64;
            summary.messages += model.messages() as u64;
            progress(index + 1);
            if diff.is_some() {
                summary.difference = shrink(&sequence, |s| Ok(compare(s, tombstones, self.plant, store)?.0))?;
                break;
            }
            let other_model = model_transcript(&sequence, alternative, self.plant);
            if first_difference(&sequence, &other_model, &real).is_some() {
                summary.other_policy_differs += 1;
                if summary.other_policy_example.is_none() {
                    summary.other_policy_example =
                        shrink(&sequence, |s| Ok(compare(s, alternative, self.plant, store)?.0))?;
                }
            }
        }
        Ok(summary)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
