//! Seeded sequences: mostly valid operations chosen from the model's state as the sequence goes (live
//! keys to delete, revisions between the compacted and the current one), with a share of refusals (a
//! compaction at or below the last one, reads and watches below it or in the future).

use listwatch_model::store::{Prefix, Store, TombstonePolicy};
use listwatch_model::{Key, Rev};

use super::sequence::{Op, Sequence};
use crate::sim::rng::Rng;

/// How many keys and watches a generated sequence uses.
const KEYS: u8 = 4;
const WATCHES: u8 = 3;

/// Sequence `index` of the run with `seed`: between 4 and `max_ops` operations.
pub fn sequence(seed: u64, index: u64, max_ops: usize) -> Sequence {
    let mut rng = Rng::new(seed ^ index.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let mut store = Store::new(TombstonePolicy::DropAtCompaction, None);
    let len = 4 + rng.below(max_ops.saturating_sub(3).max(1) as u64) as usize;
    let mut ops = Vec::with_capacity(len);
    let mut open = [false; WATCHES as usize];
    for _ in 0..len {
        let op = draw(&mut rng, &store, &open);
        follow(&mut store, &mut open, &op);
        ops.push(op);
    }
    Sequence::new(Some(seed), Some(index), ops)
}

fn rev_between(rng: &mut Rng, lo: u32, hi: u32) -> u32 {
    lo + rng.below(u64::from(hi.saturating_sub(lo)) + 1) as u32
}

fn draw(rng: &mut Rng, store: &Store, open: &[bool]) -> Op {
    let (rev, compacted) = (store.rev().0, store.compacted().0);
    let key = rng.below(u64::from(KEYS)) as u8;
    let id = rng.below(u64::from(WATCHES)) as u8;
    let live: Vec<u8> = (0..KEYS).filter(|k| store.get(Key(*k)).is_some()).collect();
    match rng.below(100) {
        0..=29 => Op::Put { key, other: rng.chance(1, 6), value: rng.below(1000) as u16 },
        30..=39 => match live.as_slice() {
            // Mostly a live key; sometimes a missing one, which deletes nothing.
            [_, ..] if rng.chance(4, 5) => {
                Op::Delete { key: live[rng.below(live.len() as u64) as usize], other: false }
            }
            _ => Op::Delete { key, other: rng.chance(1, 4) },
        },
        40..=47 => {
            let mut keys: Vec<u8> = (0..KEYS).filter(|_| rng.chance(2, 3)).collect();
            if keys.is_empty() {
                keys.push(key);
            }
            Op::DeleteAll { keys }
        }
        48..=57 => {
            // Mostly a valid compaction; one in four at or below the last one, or in the future.
            let valid = rev > compacted && rng.chance(3, 4);
            let at = if valid { rev_between(rng, compacted + 1, rev) } else { rev_between(rng, 1, rev + 2) };
            Op::Compact { rev: at.max(1) }
        }
        58..=71 => {
            let at = rng.chance(2, 3).then(|| rev_between(rng, compacted.saturating_sub(1), rev + 1));
            Op::Range { at }
        }
        72..=85 => Op::Watch { id, from: rev_between(rng, compacted.saturating_sub(1).max(1), rev + 2) },
        86..=89 => {
            Op::Cancel { id: if open[usize::from(id)] { id } else { pick_open(rng, open).unwrap_or(id) } }
        }
        _ => Op::Progress { id: pick_open(rng, open).unwrap_or(id) },
    }
}

fn pick_open(rng: &mut Rng, open: &[bool]) -> Option<u8> {
    let ids: Vec<u8> = (0..open.len() as u8).filter(|i| open[usize::from(*i)]).collect();
    (!ids.is_empty()).then(|| ids[rng.below(ids.len() as u64) as usize])
}

/// Keep the generator's own model in step (only what the next draw reads: revisions, keys, open watches).
fn follow(store: &mut Store, open: &mut [bool], op: &Op) {
    let prefix = |other: bool| if other { Prefix::Other } else { Prefix::Watched };
    match op {
        Op::Put { key, other, .. } => {
            store.put(prefix(*other), Key(*key));
        }
        Op::Delete { key, other } => {
            let _ = store.delete(prefix(*other), Key(*key));
        }
        Op::DeleteAll { keys } => {
            let keys: Vec<Key> = keys.iter().map(|k| Key(*k)).collect();
            let _ = store.delete_all(Prefix::Watched, &keys);
        }
        Op::Compact { rev } => {
            let _ = store.compact(Rev(*rev));
        }
        Op::Watch { id, from } => open[usize::from(*id)] = Rev(*from) >= store.compacted(),
        Op::Cancel { id } => open[usize::from(*id)] = false,
        Op::Range { .. } | Op::Progress { .. } => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_and_index_give_the_same_sequence_and_others_differ() {
        assert_eq!(sequence(7, 3, 30), sequence(7, 3, 30));
        assert_ne!(sequence(7, 3, 30).ops, sequence(7, 4, 30).ops);
    }

    #[test]
    fn sequences_reach_every_kind_of_operation_and_refusal() {
        let ops: Vec<Op> = (0..200).flat_map(|i| sequence(1, i, 30).ops).collect();
        let has = |f: &dyn Fn(&Op) -> bool| ops.iter().any(f);
        assert!(has(&|o| matches!(o, Op::Put { other: true, .. })));
        assert!(has(&|o| matches!(o, Op::DeleteAll { keys } if keys.len() > 1)));
        assert!(has(&|o| matches!(o, Op::Compact { .. })));
        assert!(has(&|o| matches!(o, Op::Range { at: Some(_) })));
        assert!(has(&|o| matches!(o, Op::Watch { .. })));
        assert!(has(&|o| matches!(o, Op::Cancel { .. })));
        assert!(has(&|o| matches!(o, Op::Progress { .. })));
    }
}
