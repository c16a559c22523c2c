//! listwatch's own breadth-first search over a [`CheckModel`]: level by level, the states of a level
//! judged and expanded on every thread a window of chunks at a time, the window's new successors merged
//! before the next window is made, in the order a one-thread FIFO search would meet them. The states
//! found, their order, the verdicts and the counterexamples are therefore the same whatever the number
//! of threads.
//!
//! Why not stateright's `BfsChecker` (still used for `--checker dfs` and the Explorer, and the reference
//! this search is tested against, `harness/tests/bfs.rs`): it shares its visited set through a
//! `DashMap` that hashes every fingerprint again (SipHash) on every lookup and insert, judges all 26
//! stateright properties at every state, and keeps one queue per worker, so that with more than one
//! thread its counterexamples depend on thread timing. Here
//! a state is fingerprinted with foldhash's quality hasher by the thread that made it, the visited set
//! is read without locks while a level is expanded and written only between levels, a property is
//! judged only until it is decided, and a state is kept as its fingerprint ([`seen`]) and, on disk, its
//! parent's number and the place of the step that reached it ([`steps`]); BENCHMARKS.md has the figures
//! side by side.

mod frontier;
mod seen;
mod steps;
mod underway;

use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use listwatch_model::Action;
use listwatch_properties::{violation, witnessed, Property, Viewed, Violation};

use crate::check_model::{resident_bytes, CheckModel, CheckState, Checkable};
use steps::Steps;
pub use underway::Underway;

/// How a state's fingerprint is taken: 64 bits of foldhash's quality hasher with a fixed seed, so that
/// a run is the same on every run. Two different states with one fingerprint would make the second
/// look visited; at 10^8 states the chance of any such pair is about 3 in 10,000 (the birthday bound),
/// the same trade stateright and TLC make.
const SEED: u64 = 0x6c69_7374_7761_7463;

/// A state's fingerprint. Its `Hash` writes hundreds of small fields one by one; hashing each as it comes
/// makes a chain of dependent multiplications. Instead the fields' bytes are gathered in a buffer and the
/// buffer is hashed in one pass: the same bytes, so the same quality, and a whole run about 12% faster
/// (BENCHMARKS.md).
fn fingerprint<C: Checkable>(state: &CheckState<C>) -> u64 {
    thread_local! {
        static BYTES: std::cell::RefCell<Gather> = const { std::cell::RefCell::new(Gather(Vec::new())) };
    }
    BYTES.with(|bytes| {
        let mut bytes = bytes.borrow_mut();
        bytes.0.clear();
        state.hash(&mut *bytes);
        bytes.finish()
    })
}

/// A `Hasher` that keeps the bytes written to it, for [`fingerprint`] to hash at once.
struct Gather(Vec<u8>);

impl Hasher for Gather {
    fn write(&mut self, bytes: &[u8]) {
        self.0.extend_from_slice(bytes);
    }
    fn write_u8(&mut self, i: u8) {
        self.0.push(i);
    }
    fn write_u16(&mut self, i: u16) {
        self.0.extend_from_slice(&i.to_le_bytes());
    }
    fn write_u32(&mut self, i: u32) {
        self.0.extend_from_slice(&i.to_le_bytes());
    }
    fn write_u64(&mut self, i: u64) {
        self.0.extend_from_slice(&i.to_le_bytes());
    }
    fn write_usize(&mut self, i: usize) {
        self.0.extend_from_slice(&(i as u64).to_le_bytes());
    }
    /// The gathered bytes, hashed in one pass.
    fn finish(&self) -> u64 {
        foldhash::quality::FixedState::with_seed(SEED).hash_one(self.0.as_slice())
    }
}

/// The initial state's parent. A state's number is its place in BFS order; its fingerprint, its parent's
/// number and the place of the step that reached it are all that is kept of it once its level is done.
const ROOT: u32 = u32::MAX;

/// What a run reports while it runs: read by the progress line and the limits' watch.
#[derive(Debug, Default)]
pub struct Progress {
    pub states: AtomicUsize,
    pub depth: AtomicUsize,
    pub done: AtomicBool,
}

/// What a search found.
#[derive(Debug)]
pub struct Found {
    /// Unique states judged; for a search a stop put aside, the states found through the level it
    /// stopped in, of whose states [`Left`] says how many were judged.
    pub states: usize,
    /// Steps from the initial state to the deepest state judged (the initial state's depth is 1, as in
    /// stateright).
    pub depth: usize,
    /// Per property, the first violation in BFS order: its steps and the violation.
    pub violations: Vec<Option<(Vec<Action>, Violation)>>,
    /// Per property, the fewest steps from the initial state to a state that reaches its witness.
    pub witnessed: Vec<Option<usize>>,
    /// Whether the search stopped at `max_states` before the state space was exhausted.
    pub hit_max_states: bool,
    /// Whether it stopped because the process reached `memory_limit_bytes` while making a level, or the
    /// seen set its share of it ([`SEEN_SHARE`]).
    pub out_of_memory: bool,
    /// What the seen set cost and risked.
    pub fingerprints: Fingerprints,
    /// Where a search that a stop put aside stopped: `None` once it has ended.
    pub left: Option<Left>,
}

/// How far a search that a stop put aside got into the level it was in, and what it left: the rest of
/// that level, the states of the next level its judged states have not reached yet, and every level
/// past it. `check --json` writes it as `left`, and `merge` reads it back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Left {
    /// The level it stopped in (the initial state's is 1).
    pub depth: usize,
    /// That level's states.
    pub level_states: usize,
    /// Of those, the states judged and expanded.
    pub level_judged: usize,
    /// The states of the next level found so far, by the states expanded.
    pub next_found: usize,
}

impl Left {
    /// One line for a report: where the search stopped and what it left.
    pub fn describe(self) -> String {
        let Left { depth, level_states, level_judged, next_found } = self;
        let next = depth + 1;
        if level_judged < level_states {
            format!(
                "stopped in depth {depth}: {level_judged} of its {level_states} states judged, {next_found} \
                 states of depth {next} found so far; the deeper levels not reached"
            )
        } else {
            format!(
                "stopped after depth {depth}, all {level_states} of its states judged: the {next_found} \
                 states of depth {next} found, not yet judged; the deeper levels not reached"
            )
        }
    }
}

/// The seen set of a search: fingerprints only, so two states with one fingerprint would make the
/// second look seen. Reported as TLC reports it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Fingerprints {
    /// Successors made, the ones already seen among them (TLC's "states generated").
    pub generated: u64,
    /// Fingerprints the seen set holds: the states judged, and after a stop mid-level the successors
    /// of the next level already merged.
    pub held: usize,
    /// Bytes the seen set holds in memory: the fingerprint table, and the newest states' parents and
    /// steps not yet written out.
    pub seen_bytes: u64,
    /// Bytes of parents and steps on disk (6 a state).
    pub trace_bytes: u64,
    /// The first depth whose level did not fit in memory made, or whose states were let go while the
    /// search was put aside ([`Underway::lighten`]), and was made again from the steps that reach it
    /// when judged ([`frontier`]); `None` when every level was made.
    pub kept_from: Option<usize>,
    /// The most levels made again to judge one, from the last level made or the initial state.
    pub kept_levels: usize,
    /// The most bytes the newest level's steps took in memory ([`frontier`]); every level's are in the
    /// trace, on disk.
    pub steps_bytes: u64,
}

impl Fingerprints {
    /// TLC's "calculated (optimistic)" estimate of the probability that a fingerprint collision hid a
    /// state: each of the `generated - distinct` lookups that found a fingerprint could have matched
    /// any of the `distinct` ones by chance, 2^-64 each (tlc2.tool.ModelChecker, `reportSuccess`).
    /// The distinct states are the fingerprints held, which a stop mid-level leaves beyond the states
    /// judged.
    pub fn collision_probability(self) -> f64 {
        let distinct = self.held as f64;
        distinct * (self.generated as f64 - distinct).max(0.0) / 2f64.powi(64)
    }

    /// The seen set's bytes per fingerprint held.
    pub fn bytes_per_state(self) -> f64 {
        self.seen_bytes as f64 / self.held.max(1) as f64
    }

    /// The traces' bytes on disk per fingerprint held.
    pub fn trace_bytes_per_state(self) -> f64 {
        self.trace_bytes as f64 / self.held.max(1) as f64
    }
}

/// What one thread made of one chunk of a level.
#[derive(Default)]
struct Chunk {
    /// (place in the level, property, violation): the first of each property in the chunk.
    violations: Vec<(usize, Property, Violation)>,
    witnessed: [bool; Property::COUNT],
    /// Successors made, seen before or not.
    generated: u64,
    /// Successors not seen before their window: fingerprint, parent's place in the level, step, and
    /// the step's place among the parent's actions. The state itself is dropped at once and made again if
    /// it is new: keeping every successor until its window is merged costs more in memory traffic than
    /// the second step costs.
    successors: Vec<(u64, u32, Action, u16)>,
    /// Whether every state of the chunk was judged and expanded: a stop leaves a chunk unfinished.
    done: bool,
}

/// The settings of one search.
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    pub threads: usize,
    /// Unique states after which no more are taken: the search judges what it has and stops.
    pub max_states: usize,
    /// Stop once any property is violated (the level it was found in is finished first).
    pub stop_at_violation: bool,
    /// Keep one state of each class of states that differ only in the API servers' names
    /// ([`listwatch_model::System::canonical_server_order`]), where the world's servers are alike.
    pub symmetry: bool,
    /// The resident memory at which the search stops. A level is made in one go, faster than a watch
    /// that polls could stop it, so the search checks it itself every [`MEMORY_EVERY`] states it makes.
    pub memory_limit_bytes: Option<u64>,
    /// The most states a level is made with. Every level is kept as steps ([`frontier`]); a wider one,
    /// or one that would not fit under `memory_limit_bytes`, is not made at once but remade from the
    /// initial state when it is judged. `usize::MAX` by default; a test makes it small.
    pub made_states: usize,
    /// The most states of a level made and expanded before their new successors are merged: at most
    /// [`WINDOW_CHUNKS`] chunks a thread, and at least one chunk. `usize::MAX` by default; a test makes
    /// it small.
    pub window_states: usize,
}

/// The share of the memory limit the seen set may take (the levels' states, the newest level's steps and
/// a window's successors take the rest): half. A level is made only where it fits beside it.
pub const SEEN_SHARE: u64 = 2;

/// How many states a thread makes between two looks at the resident memory (a read of
/// `/proc/self/statm`, a few microseconds): about a megabyte of states.
const MEMORY_EVERY: usize = 1024;

/// How many chunks of a level a thread makes and expands before their new successors are merged: the
/// successors held until the merge stay under about 25 MB (4,096 states a chunk, some 4 new successors a
/// state at most, 24 bytes each), and a window's last chunk leaves the other threads idle for at most a
/// 32nd of the window.
pub const WINDOW_CHUNKS: usize = 32;

/// How many successors the merge takes between two looks at the resident memory: each costs a probe of
/// the seen set, and a new one some twenty bytes.
const MERGE_MEMORY_EVERY: usize = 1 << 16;

/// The state `action` leads to from `state`, its servers in canonical order under symmetry.
fn successor<C: Checkable>(state: &CheckState<C>, action: Action, symmetry: bool) -> CheckState<C> {
    let mut next = state.clone();
    step(&mut next, action, symmetry);
    next
}

/// [`successor`] made into `next`, whose vectors and queues are reused (`clone_from`): the successors
/// the search only fingerprints are made this way, one spare state a chunk.
fn successor_into<C: Checkable>(
    next: &mut CheckState<C>,
    state: &CheckState<C>,
    action: Action,
    symmetry: bool,
) {
    next.clone_from(state);
    step(next, action, symmetry);
}

fn step<C: Checkable>(state: &mut CheckState<C>, action: Action, symmetry: bool) {
    state.step(action);
    if symmetry {
        state.sys.canonicalize_servers();
    }
}

/// Search `model` breadth-first to its end. `stop` ends it early (a deadline, a signal, a memory
/// limit): what was judged so far is reported.
pub fn search<C: Checkable>(
    model: &CheckModel<C>,
    settings: Settings,
    stop: &AtomicBool,
    progress: &Progress,
) -> Found {
    let mut search = Underway::new(model, settings);
    search.go(stop, progress);
    search.found(model)
}

/// Sets the search's done flag when dropped, also while a panic unwinds.
struct MarkDone<'a>(&'a AtomicBool);

impl Drop for MarkDone<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Release);
    }
}

/// Judge one state for the properties still undecided.
fn judge<C: Checkable>(
    state: &CheckState<C>,
    place: usize,
    want_violation: &[bool; Property::COUNT],
    want_witness: &[bool; Property::COUNT],
    out: &mut Chunk,
) {
    if !want_violation.iter().chain(want_witness).any(|w| *w) {
        return;
    }
    let obs = &Viewed::of(&state.sys);
    for property in Property::ALL {
        let i = property as usize;
        if want_violation[i] && !out.violations.iter().any(|(_, p, _)| *p == property) {
            if let Some(v) = violation(property, obs, &state.monitor) {
                out.violations.push((place, property, v));
            }
        }
        if want_witness[i] && !out.witnessed[i] && witnessed(property, obs, &state.monitor) {
            out.witnessed[i] = true;
        }
    }
}

/// The steps from the initial state to state `id` (under symmetry, each in the names of its state's
/// canonical form): the places of its steps read back from `parents`, then replayed from the initial
/// state, as the search made them.
fn path<C: Checkable>(model: &CheckModel<C>, parents: &Steps, mut id: u32, symmetry: bool) -> Vec<Action> {
    let mut places = Vec::new();
    loop {
        let (parent, place) = parents.get(id);
        if parent == ROOT {
            break;
        }
        places.push(place);
        id = parent;
    }
    let mut state = model.initial_state();
    if symmetry {
        state.sys.canonicalize_servers();
    }
    let mut actions = Vec::new();
    let mut steps = Vec::with_capacity(places.len());
    for &place in places.iter().rev() {
        actions.clear();
        state.sys.actions(&mut actions);
        let action = actions[usize::from(place)];
        state = successor(&state, action, symmetry);
        steps.push(action);
    }
    steps
}

/// Whether the process holds `limit` bytes or more.
fn over(limit: Option<u64>) -> bool {
    limit.zip(resident_bytes()).is_some_and(|(limit, rss)| rss >= limit)
}

/// The real steps from the initial state of a path found under symmetry, whose steps name the servers
/// of each state's canonical form, and the state they end in. The canonical run is replayed beside
/// the real one; `order[i]` is the real server that canonical server `i` stands for.
fn realize<C: Checkable>(model: &CheckModel<C>, steps: &[Action]) -> (Vec<Action>, CheckState<C>) {
    let mut real = model.initial_state();
    let mut canonical = real.clone();
    let mut order: Vec<_> = canonical
        .sys
        .canonicalize_servers()
        .unwrap_or_else(|| real.sys.servers().iter().map(|s| s.id()).collect());
    let mut out = Vec::with_capacity(steps.len());
    for &step in steps {
        let action = step.rename_servers(|s| order[usize::from(s.0)]);
        real.step(action);
        out.push(action);
        canonical.step(step);
        if let Some(q) = canonical.sys.canonicalize_servers() {
            order = q.iter().map(|s| order[usize::from(s.0)]).collect();
        }
    }
    (out, real)
}
