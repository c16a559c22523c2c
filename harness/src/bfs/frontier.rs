//! The level of the search being judged and expanded. Every level is kept as the steps that reach it
//! from the level before (its parent's place there and the action: a few bytes a state, where a made
//! state takes hundreds), and its states are made while they fit in memory. A level that would not fit
//! is not made: it is made again, a chunk at a time, whenever it is judged and expanded, from the last
//! level still made, or, once memory runs short, from the initial state. The same states come in the
//! same order, so the same successors and the same result; only the time to make them grows, by the
//! levels above it (whose widths, growing level by level, add up to less than its own).

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
    /// The initial state, level 0.
    root: States<C>,
    /// `steps[k]` reaches level k + 1 from level k: (the parent's place in level k, the action), in
    /// order of the parents.
    steps: Vec<Vec<(u32, Action)>>,
    /// The last level made, and its number, unless dropped for memory.
    made: Option<(usize, States<C>)>,
}

impl<C: Checkable> Frontier<C> {
    pub fn new(init: CheckState<C>) -> Self {
        Frontier { root: vec![Some(init)], steps: Vec::new(), made: None }
    }

    /// The current level's number (0: the initial state's).
    fn current(&self) -> usize {
        self.steps.len()
    }

    /// How many states the current level has.
    pub fn len(&self) -> usize {
        self.steps.last().map_or(self.root.len(), Vec::len)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many levels are made again to judge the current one (0: it is made).
    pub fn kept(&self) -> usize {
        self.current() - self.made.as_ref().map_or(0, |(at, _)| *at)
    }

    /// The bytes the steps take.
    pub fn steps_bytes(&self) -> u64 {
        let one = std::mem::size_of::<(u32, Action)>() as u64;
        self.steps.iter().map(|s| s.capacity() as u64 * one).sum()
    }

    /// The states at `range` of the current level: borrowed where it is made, made again otherwise.
    pub fn states(&self, range: Range<usize>, symmetry: bool) -> Cow<'_, [Option<CheckState<C>>]> {
        self.level(self.current(), range, symmetry)
    }

    /// The states at `range` of level `at`, made from the states of the level before that their steps
    /// start from.
    fn level(&self, at: usize, range: Range<usize>, symmetry: bool) -> Cow<'_, [Option<CheckState<C>>]> {
        match &self.made {
            _ if at == 0 => return Cow::Borrowed(&self.root[range]),
            Some((made, states)) if *made == at => return Cow::Borrowed(&states[range]),
            _ => {}
        }
        let steps = &self.steps[at - 1][range];
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
        self.steps.push(next);
    }

    /// Drop the level made: levels are made again from the initial state from here on.
    pub fn drop_made(&mut self) {
        if let Some((_, states)) = self.made.take() {
            drop_states(states);
        }
    }

    /// Make the current level's states, on every thread, into `spare` (a buffer reused level after
    /// level); they replace the level made before. A state is left unmade once `stop` is set. `full` is
    /// asked every [`MEMORY_EVERY`] states: once it says so, the making is given up, the level stays
    /// unmade, and `false` is returned.
    pub fn make(
        &mut self,
        spare: &mut States<C>,
        symmetry: bool,
        stop: &AtomicBool,
        full: &(dyn Fn() -> bool + Sync),
    ) -> bool {
        let at = self.current();
        if at == 0 || self.kept() == 0 {
            return true;
        }
        let given_up = AtomicBool::new(false);
        let check = |i: usize| {
            if i.is_multiple_of(MEMORY_EVERY) && !given_up.load(Ordering::Relaxed) && full() {
                given_up.store(true, Ordering::Relaxed);
            }
            given_up.load(Ordering::Relaxed) || stop.load(Ordering::Relaxed)
        };
        let steps = &self.steps[at - 1];
        if self.kept() == 1 {
            // From the level made: each state from its parent, as the search always made a level.
            let this = &*self;
            steps
                .par_iter()
                .enumerate()
                .map(|(i, &(place, action))| {
                    let parent = this.level(at - 1, place as usize..place as usize + 1, symmetry);
                    parent[0].as_ref().filter(|_| !check(i)).map(|p| successor(p, action, symmetry))
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
            drop_states(std::mem::take(spare));
            return false;
        }
        let old = self.made.replace((at, std::mem::take(spare)));
        if let Some((_, mut states)) = old {
            // The old level's buffer is reused for the next one.
            states.par_drain(..).for_each(drop);
            *spare = states;
        }
        true
    }
}

/// Drop a level's states on every thread.
fn drop_states<C: Checkable>(mut states: States<C>) {
    states.par_drain(..).for_each(drop);
}
