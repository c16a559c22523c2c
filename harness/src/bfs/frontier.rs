//! The level of the search being judged and expanded. Every level is kept as the steps that reach it
//! from the level before: the trace's records on disk ([`Steps`]: each state's parent and the place of
//! its step among the parent's actions, six bytes a state), and, until the level is made, the newest
//! level's steps in memory with their actions. Its states are made while they fit in memory. A level
//! that would not fit is not made: it is made again, a chunk at a time, whenever it is judged and
//! expanded, from the last level still made, or, once memory runs short, from the initial state, its
//! steps read back from the trace and each action found again among its parent's. The same states come
//! in the same order, so the same successors and the same result; only the time to make them grows, by
//! the levels above it (whose widths, growing level by level, add up to less than its own).

use std::borrow::Cow;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};

use listwatch_model::Action;
use rayon::prelude::*;

use super::steps::Steps;
use super::{successor, MEMORY_EVERY};
use crate::check_model::{CheckState, Checkable};

/// A level's states. `None` marks a state left unmade by a making that a stop or the memory limit cut
/// short; such a making is thrown away whole ([`Making::Stopped`], [`Making::GivenUp`]), so a level kept
/// has every state.
pub type States<C> = Vec<Option<CheckState<C>>>;

/// What became of the making of a level.
pub enum Making {
    Done,
    /// The memory filled: the level is left unmade, to be made again when judged.
    GivenUp,
    /// A stop cut it short: the frontier is as it was before.
    Stopped,
}

pub struct Frontier<C: Checkable> {
    /// The initial state, level 0.
    root: States<C>,
    /// `levels[k]`: the numbers of level k's states in the trace (consecutive, in order).
    levels: Vec<Range<u32>>,
    /// The steps that reach the current level from the one before, (the parent's place there, the
    /// action), in order of the parents: held from when the level is found until it is made or left
    /// unmade; every other level's are read back from the trace.
    newest: Option<Vec<(u32, Action)>>,
    /// The most bytes `newest` took.
    peak_steps_bytes: u64,
    /// The last level made, and its number, unless dropped for memory.
    made: Option<(usize, States<C>)>,
}

impl<C: Checkable> Frontier<C> {
    pub fn new(init: CheckState<C>) -> Self {
        let levels = std::iter::once(0..1).collect();
        Frontier { root: vec![Some(init)], levels, newest: None, peak_steps_bytes: 0, made: None }
    }

    /// The current level's number (0: the initial state's).
    fn current(&self) -> usize {
        self.levels.len() - 1
    }

    /// How many states the current level has.
    pub fn len(&self) -> usize {
        self.levels.last().map_or(0, ExactSizeIterator::len)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many levels are made again to judge the current one (0: it is made).
    pub fn kept(&self) -> usize {
        self.current() - self.made.as_ref().map_or(0, |(at, _)| *at)
    }

    /// The most bytes the newest level's steps took in memory (the others are on disk, in the trace).
    pub fn steps_bytes(&self) -> u64 {
        self.peak_steps_bytes
    }

    /// The states at `range` of the current level: borrowed where it is made, made again otherwise.
    pub fn states(
        &self,
        range: Range<usize>,
        trace: &Steps,
        symmetry: bool,
    ) -> Cow<'_, [Option<CheckState<C>>]> {
        self.level(self.current(), range, trace, symmetry)
    }

    /// The states at `range` of level `at`, made from the states of the level before that their steps
    /// start from.
    fn level(
        &self,
        at: usize,
        range: Range<usize>,
        trace: &Steps,
        symmetry: bool,
    ) -> Cow<'_, [Option<CheckState<C>>]> {
        match &self.made {
            _ if at == 0 => return Cow::Borrowed(&self.root[range]),
            Some((made, states)) if *made == at => return Cow::Borrowed(&states[range]),
            _ => {}
        }
        if let Some(steps) = self.newest.as_ref().filter(|_| at == self.current()) {
            let steps = &steps[range];
            let (Some(first), Some(last)) = (steps.first(), steps.last()) else {
                return Cow::Owned(Vec::new());
            };
            let from = first.0 as usize;
            let parents = self.level(at - 1, from..last.0 as usize + 1, trace, symmetry);
            return Cow::Owned(
                steps
                    .iter()
                    .map(|&(place, action)| {
                        parents[place as usize - from].as_ref().map(|p| successor(p, action, symmetry))
                    })
                    .collect(),
            );
        }
        // From the trace: each state's parent and the place of its step among the parent's actions,
        // which are listed again once for each parent (its children are consecutive).
        let (ids, above) = (&self.levels[at], self.levels[at - 1].start);
        let records = trace.records(ids.start + range.start as u32..ids.start + range.end as u32);
        let (Some(first), Some(last)) = (records.first(), records.last()) else {
            return Cow::Owned(Vec::new());
        };
        let from = (first.0 - above) as usize;
        let parents = self.level(at - 1, from..(last.0 - above) as usize + 1, trace, symmetry);
        let (mut actions, mut listed) = (Vec::new(), None);
        Cow::Owned(
            records
                .iter()
                .map(|&(parent, k)| {
                    let place = (parent - above) as usize - from;
                    parents[place].as_ref().map(|p| {
                        if listed != Some(place) {
                            actions.clear();
                            p.sys.actions(&mut actions);
                            listed = Some(place);
                        }
                        successor(p, actions[usize::from(k)], symmetry)
                    })
                })
                .collect(),
        )
    }

    /// The next level, as the steps that reach it from the current one (in order of their parents),
    /// its states numbered from `first` in the trace.
    pub fn push(&mut self, next: Vec<(u32, Action)>, first: u32) {
        debug_assert!(next.windows(2).all(|w| w[0].0 <= w[1].0), "parents in order");
        let bytes = (next.capacity() * std::mem::size_of::<(u32, Action)>()) as u64;
        self.peak_steps_bytes = self.peak_steps_bytes.max(bytes);
        self.levels.push(first..first + next.len() as u32);
        self.newest = Some(next);
    }

    /// Let the newest level's steps go from memory (a level left unmade): they are read back from the
    /// trace.
    pub fn release_steps(&mut self) {
        self.newest = None;
    }

    /// Drop the level made: levels are made again from the initial state from here on.
    pub fn drop_made(&mut self) {
        if let Some((_, states)) = self.made.take() {
            drop_states(states);
        }
    }

    /// Make the current level's states, on every thread, into `spare` (a buffer reused level after
    /// level); they replace the level made before. `full` is asked every [`MEMORY_EVERY`] states: once
    /// it says so, the making is given up and the level stays unmade. Once `stop` is set the making is
    /// cut short, and the frontier left as it was, to be made again.
    pub fn make(
        &mut self,
        spare: &mut States<C>,
        trace: &Steps,
        symmetry: bool,
        stop: &AtomicBool,
        full: &(dyn Fn() -> bool + Sync),
    ) -> Making {
        let at = self.current();
        if at == 0 || self.kept() == 0 {
            return Making::Done;
        }
        let given_up = AtomicBool::new(false);
        let check = |i: usize| {
            if i.is_multiple_of(MEMORY_EVERY) && !given_up.load(Ordering::Relaxed) && full() {
                given_up.store(true, Ordering::Relaxed);
            }
            given_up.load(Ordering::Relaxed) || stop.load(Ordering::Relaxed)
        };
        if spare.capacity() < self.len() {
            // Too small for this level: given back before a buffer of the level's size is taken.
            // Grown in place instead, its old bytes (the last level's, all dropped) would be copied
            // into fresh pages by the reallocation: a fifth of the search's page faults, and 80 MiB of
            // its peak, in the default scope's list-watch world (BENCHMARKS.md).
            *spare = Vec::new();
        }
        if let (1, Some(steps)) = (self.kept(), &self.newest) {
            // From the level made: each state from its parent, as the search always made a level.
            let this = &*self;
            steps
                .par_iter()
                .enumerate()
                .map(|(i, &(place, action))| {
                    let parent = this.level(at - 1, place as usize..place as usize + 1, trace, symmetry);
                    parent[0].as_ref().filter(|_| !check(i)).map(|p| successor(p, action, symmetry))
                })
                .collect_into_vec(spare);
        } else {
            let len = self.len();
            let chunk = (len / (rayon::current_num_threads() * 8)).clamp(16, 4096);
            let parts: Vec<States<C>> = (0..len.div_ceil(chunk))
                .into_par_iter()
                .map(|n| {
                    let range = n * chunk..((n + 1) * chunk).min(len);
                    if check(range.start) {
                        return vec![None; range.len()];
                    }
                    self.states(range, trace, symmetry).into_owned()
                })
                .collect();
            spare.clear();
            spare.extend(parts.into_iter().flatten());
        }
        if stop.load(Ordering::Relaxed) {
            drop_states(std::mem::take(spare));
            return Making::Stopped;
        }
        self.newest = None;
        if given_up.into_inner() {
            drop_states(std::mem::take(spare));
            return Making::GivenUp;
        }
        let old = self.made.replace((at, std::mem::take(spare)));
        if let Some((_, mut states)) = old {
            // The old level's buffer is reused for the next one.
            states.par_drain(..).for_each(drop);
            *spare = states;
        }
        Making::Done
    }
}

/// Drop a level's states on every thread.
fn drop_states<C: Checkable>(mut states: States<C>) {
    states.par_drain(..).for_each(drop);
}
