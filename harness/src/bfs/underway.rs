//! A breadth-first search underway: everything it has found and the place it has reached, so that a
//! stop puts it aside and [`Underway::go`] takes it up again where it stopped. A stop keeps the chunks
//! of a window finished before the first one it cut (what it cut is done again, as is the making of a
//! level it cut). Each time it is taken up the search finishes a chunk, or the making of the level it
//! stopped in, before it heeds a stop, so that it gets on however short the times it is given. It finds
//! the same states in the same order, and the same verdicts and counterexamples, as a search never
//! stopped.

use std::sync::atomic::{AtomicBool, Ordering};

use listwatch_model::Action;
use listwatch_properties::{violation, Property, Violation};
use rayon::prelude::*;

use super::frontier::{Frontier, Making, States};
use super::seen::{self, FingerprintSet};
use super::steps::Steps;
use super::{
    fingerprint, judge, over, path, realize, successor_into, Chunk, Fingerprints, Found, Left, MarkDone,
    Progress, Settings, MERGE_MEMORY_EVERY, ROOT, SEEN_SHARE, WINDOW_CHUNKS,
};
use crate::check_model::{resident_bytes, CheckModel, CheckState, Checkable};

/// A search underway over one model, with the settings it was begun with.
pub struct Underway<C: Checkable> {
    settings: Settings,
    /// Whether the search keeps one state of each naming of the API servers.
    symmetry: bool,
    visited: FingerprintSet,
    parents: Steps,
    first_violation: Vec<Option<(u32, Violation)>>,
    witnessed_at: [Option<usize>; Property::COUNT],
    /// The level being judged and expanded, or, when `at` is [`At::Make`], the next one.
    level: Frontier<C>,
    /// The buffer the next level is made into, reused level after level instead of fresh pages being
    /// asked of the kernel (and zeroed by it) for every level.
    spare: States<C>,
    /// The bytes a made state took in the last level made, to tell whether the next one fits.
    state_bytes: Option<u64>,
    kept_from: Option<usize>,
    kept_levels: usize,
    /// Each state's number in the trace, in the level being judged; and in the next, as it is found.
    ids: Vec<u32>,
    new_ids: Vec<u32>,
    /// Whether the seen set reached its budget, or the merge the memory limit: the level merged so far
    /// is judged, and nothing is expanded.
    seen_full: bool,
    hit_max_states: bool,
    out_of_memory: bool,
    /// Successors made, the initial state included, as in TLC.
    generated: u64,
    /// The level being judged (the initial state's is 1).
    depth: usize,
    /// Where the search is.
    at: At,
}

impl<C: Checkable> std::fmt::Debug for Underway<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Underway")
            .field("states", &self.parents.len())
            .field("depth", &self.depth)
            .field("ended", &self.ended())
            .finish_non_exhaustive()
    }
}

/// Where a search is between two of its steps.
enum At {
    /// About to judge the level in `level`, if it has states.
    Level,
    /// Judging a level, from its window that begins at a chunk.
    Window(Judging),
    /// The level judged; the next, found, to be made.
    Make,
    /// Ended: the states judged.
    Ended(usize),
}

/// A level being judged.
struct Judging {
    /// Whether its states are expanded: their actions listed and counted as generated.
    expand: bool,
    chunk_len: usize,
    chunk_count: usize,
    /// Chunks a window.
    window: usize,
    /// The first chunk of the next window.
    next: usize,
    /// The number in the trace of the next level's first state: the states before it are this level's
    /// and the levels' before it.
    first: u32,
    /// The next level so far: the step that reaches each state from its parent's place in this one.
    new: Vec<(u32, Action)>,
    /// Successors merged so far.
    merged: usize,
}

impl<C: Checkable> Underway<C> {
    /// A search of `model` at its initial state.
    pub fn new(model: &CheckModel<C>, settings: Settings) -> Self {
        let symmetry = settings.symmetry && model.initial_state().sys.servers_symmetric();
        let mut init = model.initial_state();
        if symmetry {
            init.sys.canonicalize_servers();
        }
        let mut visited =
            FingerprintSet::new(settings.memory_limit_bytes.map_or(u64::MAX, |m| m / SEEN_SHARE));
        let mut parents = Steps::new();
        // The first fingerprint always fits.
        let _ = visited.insert_within(fingerprint(&init), |_| true);
        parents.push(ROOT, 0);
        Underway {
            settings,
            symmetry,
            visited,
            parents,
            first_violation: vec![None; Property::COUNT],
            witnessed_at: [None; Property::COUNT],
            level: Frontier::new(init),
            spare: Vec::new(),
            state_bytes: None,
            kept_from: None,
            kept_levels: 0,
            ids: vec![0],
            new_ids: Vec::new(),
            seen_full: false,
            hit_max_states: false,
            out_of_memory: false,
            generated: 1,
            depth: 0,
            at: At::Level,
        }
    }

    /// Whether the search has ended: nothing is left to do.
    pub fn ended(&self) -> bool {
        matches!(self.at, At::Ended(_))
    }

    /// Search on, on `settings.threads` threads, until the search ends (`true`) or `stop` is set
    /// (`false`): then it can be taken up again.
    pub fn go(&mut self, stop: &AtomicBool, progress: &Progress) -> bool {
        // Done however the search ends, a panic included: the watch waits for this flag, and would wait
        // forever for a thread that has died.
        let _done = MarkDone(&progress.done);
        progress.states.store(self.parents.len(), Ordering::Relaxed);
        progress.depth.store(self.depth, Ordering::Relaxed);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(self.settings.threads.max(1))
            .thread_name(|i| format!("bfs-{i}"))
            .build();
        match pool {
            Ok(pool) => pool.install(|| self.go_in_pool(stop, progress)),
            // No threads could be made: search on this one.
            Err(_) => self.go_in_pool(stop, progress),
        }
    }

    fn go_in_pool(&mut self, stop: &AtomicBool, progress: &Progress) -> bool {
        // Whether a chunk has been finished since the search was taken up.
        let mut got_on = false;
        loop {
            self.at = match std::mem::replace(&mut self.at, At::Level) {
                At::Ended(judged) => {
                    self.at = At::Ended(judged);
                    return true;
                }
                At::Level if self.level.is_empty() => At::Ended(self.parents.len()),
                At::Level => {
                    self.depth += 1;
                    progress.depth.store(self.depth, Ordering::Relaxed);
                    At::Window(self.begin_level())
                }
                At::Window(mut judging) => {
                    let finished = self.window(&mut judging, !got_on, stop, progress);
                    got_on = true;
                    if !finished {
                        self.at = At::Window(judging);
                        return false;
                    }
                    if judging.next < judging.chunk_count {
                        At::Window(judging)
                    } else {
                        self.end_level(judging)
                    }
                }
                At::Make => {
                    let never = AtomicBool::new(false);
                    let made = self.make(if got_on { stop } else { &never });
                    got_on = true;
                    match made {
                        Some(at) => at,
                        None => {
                            self.at = At::Make;
                            return false;
                        }
                    }
                }
            };
        }
    }

    /// The level in `level` to be judged, a window of chunks at a time.
    fn begin_level(&mut self) -> Judging {
        let threads = rayon::current_num_threads();
        let len = self.level.len();
        let chunk_len = (len / (threads * 8)).clamp(16, 4096);
        let chunk_count = len.div_ceil(chunk_len);
        Judging {
            expand: !self.hit_max_states && !self.seen_full,
            chunk_len,
            chunk_count,
            window: (self.settings.window_states / chunk_len).clamp(1, threads * WINDOW_CHUNKS),
            next: 0,
            first: self.parents.len() as u32,
            new: Vec::new(),
            merged: 0,
        }
    }

    /// Judge and expand the next window of the level on every thread, then merge its new successors,
    /// so that the successors held wait for the merge a window's worth, not a level's. A successor
    /// already merged from an earlier window is found seen while its chunk is expanded instead of at
    /// the merge: the same states, in the same order. `false` if `stop` was set: the chunks finished
    /// before the first it cut are kept, the rest are done again. `first`: the window's first chunk is
    /// finished whatever `stop` says.
    fn window(&mut self, judging: &mut Judging, first: bool, stop: &AtomicBool, progress: &Progress) -> bool {
        let (symmetry, expand, chunk_len) = (self.symmetry, judging.expand, judging.chunk_len);
        let len = self.level.len();
        let want_violation: [bool; Property::COUNT] =
            std::array::from_fn(|i| self.first_violation[i].is_none());
        let want_witness: [bool; Property::COUNT] = std::array::from_fn(|i| self.witnessed_at[i].is_none());
        // Successors are made only while the merge takes them; once the seen set is full or the states
        // are at their most, the rest of the level is judged and its actions counted.
        let make = expand && !self.hit_max_states && !self.seen_full;
        let (visited, level, trace) = (&self.visited, &self.level, &self.parents);
        let start = judging.next;
        let chunks: Vec<Chunk> = (start..(start + judging.window).min(judging.chunk_count))
            .into_par_iter()
            .map(|n| {
                let range = n * chunk_len..((n + 1) * chunk_len).min(len);
                let capacity = if make { range.len() * 4 } else { 0 };
                let mut out = Chunk { successors: Vec::with_capacity(capacity), ..Chunk::default() };
                let stopped = || !(first && n == start) && stop.load(Ordering::Relaxed);
                if stopped() {
                    return out;
                }
                let states = level.states(range, trace, symmetry);
                let mut actions = Vec::new();
                let mut spare: Option<CheckState<C>> = None;
                for (i, state) in states.iter().enumerate() {
                    if stopped() {
                        return out;
                    }
                    let Some(state) = state else { continue };
                    let place = n * chunk_len + i;
                    judge(state, place, &want_violation, &want_witness, &mut out);
                    if !expand || state.monitor.violation.is_some() {
                        continue;
                    }
                    actions.clear();
                    state.sys.actions(&mut actions);
                    out.generated += actions.len() as u64;
                    if !make {
                        continue;
                    }
                    for (k, &action) in actions.iter().enumerate() {
                        let next = spare.get_or_insert_with(|| state.clone());
                        successor_into(next, state, action, symmetry);
                        let fp = fingerprint(next);
                        if !visited.contains(fp) {
                            let k = u16::try_from(k).expect("a state has fewer than 65,536 actions");
                            out.successors.push((fp, place as u32, action, k));
                        }
                    }
                }
                out.done = true;
                out
            })
            .collect();
        let finished = chunks.iter().take_while(|c| c.done).count();
        let chunks = &chunks[..finished];
        judging.next = start + finished;

        // The window's verdicts: per property, its first violation in BFS order.
        let depth = self.depth;
        for chunk in chunks {
            self.generated += chunk.generated;
            for (i, w) in chunk.witnessed.iter().enumerate() {
                if *w && self.witnessed_at[i].is_none() {
                    // The initial state is level 1 and zero steps from itself.
                    self.witnessed_at[i] = Some(depth - 1);
                }
            }
            for (place, property, v) in &chunk.violations {
                let slot = &mut self.first_violation[*property as usize];
                if slot.is_none() {
                    *slot = Some((self.ids[*place], v.clone()));
                }
            }
        }
        if make {
            self.merge(chunks, judging);
            progress.states.store(self.parents.len(), Ordering::Relaxed);
        }
        !stop.load(Ordering::Relaxed) || judging.next == judging.chunk_count
    }

    /// The window's new successors, in order, each state once. The merge is one thread's, so it
    /// watches the memory itself, as the making does: the seen set grows only where the process has
    /// room for its larger table beside the old one, and past the limit the level is merged no further.
    fn merge(&mut self, chunks: &[Chunk], judging: &mut Judging) {
        let limit = self.settings.memory_limit_bytes;
        let room = |bytes: u64| !over(limit.map(|l| l.saturating_sub(bytes)));
        for chunk in chunks {
            for &(fp, place, action, k) in &chunk.successors {
                judging.merged += 1;
                if judging.merged.is_multiple_of(MERGE_MEMORY_EVERY) && over(limit) {
                    self.seen_full = true;
                    self.out_of_memory = true;
                    return;
                }
                match self.visited.insert_within(fp, room) {
                    Ok(false) => {}
                    Ok(true) => {
                        let id = self.parents.len() as u32;
                        self.parents.push(self.ids[place as usize], k);
                        judging.new.push((place, action));
                        self.new_ids.push(id);
                        if self.parents.len() >= self.settings.max_states {
                            self.hit_max_states = true;
                            return;
                        }
                    }
                    Err(seen::Full) => {
                        self.seen_full = true;
                        self.out_of_memory = true;
                        return;
                    }
                }
            }
        }
    }

    /// The level judged: the search ends at a violation if asked to, or the next level is kept as the
    /// steps that reach it, to be made.
    fn end_level(&mut self, judging: Judging) -> At {
        if self.settings.stop_at_violation && self.first_violation.iter().any(Option::is_some) {
            return At::Ended(judging.first as usize);
        }
        self.level.push(judging.new, judging.first);
        At::Make
    }

    /// Make the next level, in order, where it fits: the level's vector takes its whole size as it is
    /// filled, and each state what the last level made took a state; otherwise, or once the making
    /// finds the memory full, leave it to be made again from the initial state when judged. `None` if
    /// `stop` cut the making short: it is done again, whole, when the search is taken up.
    fn make(&mut self, stop: &AtomicBool) -> Option<At> {
        let limit = self.settings.memory_limit_bytes;
        let width = self.level.len();
        let vector = (width * std::mem::size_of::<Option<CheckState<C>>>()) as u64;
        let need = vector + self.state_bytes.unwrap_or(0) * width as u64;
        let before = resident_bytes();
        let wanted = width <= self.settings.made_states;
        let fits = !over(limit.map(|l| l.saturating_sub(need)));
        let made = if wanted && fits {
            self.level.make(&mut self.spare, &self.parents, self.symmetry, stop, &|| over(limit))
        } else {
            Making::GivenUp
        };
        match made {
            Making::Stopped => return None,
            Making::Done => {
                if let (Some(before), Some(after)) = (before, resident_bytes()) {
                    let taken = after.saturating_sub(before).saturating_sub(vector);
                    self.state_bytes = Some(taken / width.max(1) as u64);
                }
            }
            Making::GivenUp => {
                self.level.release_steps();
                if wanted {
                    // Short of memory: the level made before goes too, and levels are made again from
                    // the initial state.
                    self.level.drop_made();
                }
                self.kept_from.get_or_insert(self.depth + 1);
                self.kept_levels = self.kept_levels.max(self.level.kept());
                if over(limit) {
                    // Not even the steps fit.
                    self.out_of_memory = true;
                    return Some(At::Ended(self.parents.len()));
                }
            }
        }
        std::mem::swap(&mut self.ids, &mut self.new_ids);
        self.new_ids.clear();
        Some(At::Level)
    }

    /// Let go of the states the search holds, for other work while it is put aside: the level made
    /// and the buffer the next is made into. The seen set and the trace stay. Taken up again, it makes
    /// the states it needs again from the initial state, as when memory runs short, and finds the same
    /// states in the same order; the level it stopped in counts among those made again.
    pub fn lighten(&mut self) {
        self.level.drop_made();
        self.spare = Vec::new();
        let judged = match self.at {
            At::Level => self.depth + 1,
            At::Window(_) => self.depth,
            // The next level is made when the search is taken up, from the initial state.
            At::Make | At::Ended(_) => return,
        };
        if self.level.kept() > 0 {
            self.kept_from.get_or_insert(judged);
            self.kept_levels = self.kept_levels.max(self.level.kept());
        }
    }

    /// What the search has found so far: where it has ended, or where a stop put it aside (the states
    /// found through the level it stopped in, that level counted in its depth, how far into it the
    /// search got, and its first violations).
    pub fn found(&self, model: &CheckModel<C>) -> Found {
        let states = match &self.at {
            At::Ended(judged) => *judged,
            At::Window(judging) => judging.first as usize,
            At::Level | At::Make => self.parents.len() - self.level.len(),
        };
        let fingerprints = Fingerprints {
            generated: self.generated,
            held: self.parents.len(),
            seen_bytes: self.visited.bytes() + self.parents.memory_bytes(),
            trace_bytes: self.parents.disk_bytes(),
            kept_from: self.kept_from,
            kept_levels: self.kept_levels,
            steps_bytes: self.level.steps_bytes(),
        };
        let symmetry = self.symmetry;
        let violations = self
            .first_violation
            .iter()
            .enumerate()
            .map(|(i, v)| {
                v.as_ref().map(|(id, found)| {
                    let steps = path(model, &self.parents, *id, symmetry);
                    if !symmetry {
                        return (steps, found.clone());
                    }
                    let (steps, end) = realize(model, &steps);
                    // The same violation, now in the names of the real run.
                    let found = violation(Property::ALL[i], &end.sys, &end.monitor).unwrap_or(found.clone());
                    (steps, found)
                })
            })
            .collect();
        Found {
            states,
            depth: self.depth,
            violations,
            witnessed: self.witnessed_at.to_vec(),
            hit_max_states: self.hit_max_states,
            out_of_memory: self.out_of_memory,
            fingerprints,
            left: self.left(),
        }
    }

    /// Where the search stopped, unless it has ended.
    fn left(&self) -> Option<Left> {
        let depth = self.depth;
        match &self.at {
            At::Ended(_) => None,
            // Not begun: the level in `level` is the next one.
            At::Level => Some(Left {
                depth: depth + 1,
                level_states: self.level.len(),
                level_judged: 0,
                next_found: 0,
            }),
            At::Window(judging) => {
                let level_states = self.level.len();
                let level_judged = (judging.next * judging.chunk_len).min(level_states);
                Some(Left { depth, level_states, level_judged, next_found: judging.new.len() })
            }
            // The level judged (its states' numbers still in `ids`), the next found and yet to be made.
            At::Make => {
                let judged = self.ids.len();
                Some(Left { depth, level_states: judged, level_judged: judged, next_found: self.level.len() })
            }
        }
    }
}
