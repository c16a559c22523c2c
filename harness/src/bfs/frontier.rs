//! The level of the search being judged and expanded. Its states are made (a checkpoint) while they fit
//! in memory; a level that would not fit is kept instead as the steps that reach it from the level
//! before (its parent's place there and the action: 12 bytes a state, where a made state takes
//! hundreds), so that memory grows with a level's width by those bytes only. A level kept so is made
//! again, a chunk at a time, from the last level made whenever it is judged and expanded: the same
//! states in the same order, so the same successors and the same result; only the time to make them
//! grows with the levels kept since the last one made.

use std::borrow::Cow;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};

use listwatch_model::Action;
use rayon::prelude::*;

use super::{successor, MEMORY_EVERY};
use crate::check_model::{CheckState, Checkable};

/// A level's states, `None` for a state a stop left unmade.
pub type States<C> = Vec<Option<CheckState<C>>>;

pub struct Frontier<C: Checkable> {
    /// The last level made.
    made: States<C>,
    /// The levels after it, each as (its parent's place in the level before, the action), in order:
    /// a level's parents' places never go down.
    kept: Vec<Vec<(u32, Action)>>,
}

impl<C: Checkable> Frontier<C> {
    pub fn new(init: CheckState<C>) -> Self {
        Frontier { made: vec![Some(init)], kept: Vec::new() }
    }

    /// How many states the current level has.
    pub fn len(&self) -> usize {
        self.kept.last().map_or(self.made.len(), Vec::len)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many levels are kept as steps since the last one made (0: the current level is made).
    pub fn kept(&self) -> usize {
        self.kept.len()
    }

    /// The states at `range` of the current level: borrowed where it is made, made again where it is
    /// kept.
    pub fn states(&self, range: Range<usize>, symmetry: bool) -> Cow<'_, [Option<CheckState<C>>]> {
        self.level(self.kept.len(), range, symmetry)
    }

    /// The states at `range` of level `at` (0: the last one made; `k`: the k-th kept after it), made
    /// from the states of the level before that their steps start from.
    fn level(&self, at: usize, range: Range<usize>, symmetry: bool) -> Cow<'_, [Option<CheckState<C>>]> {
        if at == 0 {
            return Cow::Borrowed(&self.made[range]);
        }
        let steps = &self.kept[at - 1][range];
        let (Some(first), Some(last)) = (steps.first(), steps.last()) else { return Cow::Owned(Vec::new()) };
        let from = first.0 as usize;
        let parents = self.level(at - 1, from..last.0 as usize + 1, symmetry);
        Cow::Owned(
            steps
                .iter()
                .map(|&(place, action)| {
                    parents[place as usize - from].as_ref().map(|p| successor(p, action, symmetry))
                })
                .collect(),
        )
    }

    /// The next level, as the steps that reach it from the current one (in order of their parents).
    pub fn push(&mut self, next: Vec<(u32, Action)>) {
        debug_assert!(next.windows(2).all(|w| w[0].0 <= w[1].0), "parents in order");
        self.kept.push(next);
    }

    /// Make the current level's states, on every thread, into `spare` (a buffer reused level after
    /// level). A state is left unmade once `stop` is set. `full` is asked every [`MEMORY_EVERY`]
    /// states: once it says so, the making is given up and the level stays kept as steps, and `false`
    /// is returned.
    pub fn make(
        &mut self,
        spare: &mut States<C>,
        symmetry: bool,
        stop: &AtomicBool,
        full: &(dyn Fn() -> bool + Sync),
    ) -> bool {
        let Some(steps) = self.kept.last() else { return true };
        let given_up = AtomicBool::new(false);
        let check = |i: usize| {
            if i % MEMORY_EVERY == 0 && !given_up.load(Ordering::Relaxed) && full() {
                given_up.store(true, Ordering::Relaxed);
            }
            given_up.load(Ordering::Relaxed) || stop.load(Ordering::Relaxed)
        };
        if self.kept.len() == 1 {
            // From the level made: each state from its parent, as the search always made a level.
            let made = &self.made;
            steps
                .par_iter()
                .enumerate()
                .map(|(i, &(place, action))| {
                    let parent = made[place as usize].as_ref();
                    parent.filter(|_| !check(i)).map(|p| successor(p, action, symmetry))
                })
                .collect_into_vec(spare);
        } else {
            let len = steps.len();
            let chunk = (len / (rayon::current_num_threads() * 8)).clamp(16, 4096);
            let parts: Vec<States<C>> = (0..len.div_ceil(chunk))
                .into_par_iter()
                .map(|n| {
                    let range = n * chunk..((n + 1) * chunk).min(len);
                    if check(range.start) {
                        return vec![None; range.len()];
                    }
                    self.states(range, symmetry).into_owned()
                })
                .collect();
            spare.clear();
            spare.extend(parts.into_iter().flatten());
        }
        if given_up.into_inner() {
            spare.par_drain(..).for_each(drop);
            return false;
        }
        std::mem::swap(&mut self.made, spare);
        self.kept.clear();
        spare.par_drain(..).for_each(drop);
        true
    }
}
