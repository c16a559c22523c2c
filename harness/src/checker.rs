//! The exhaustive checker: a run of the checker's model (`check_model`) over one world, by listwatch's
//! breadth-first search or stateright's checkers, with limits that hold and a summary of every property.
//!
//! The checker runs the model reflector; any client that can be cloned and hashed (a test's wrapper that
//! plants a bug in it, say) runs the same way through [`run_with`].

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use listwatch_model::{Action, Config};
use listwatch_properties::{violation, Property, Violation};
use stateright::{Checker, HasDiscoveries, Model};

pub use crate::check_model::{resident_bytes, CheckModel, CheckState, Checkable};
pub use crate::interrupt::interrupted;

/// Breadth-first (shortest counterexamples) or depth-first (far less memory).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Search {
    /// listwatch's own parallel breadth-first search ([`crate::bfs`]).
    Bfs,
    /// stateright's depth-first checker.
    Dfs,
    /// stateright's breadth-first checker on one thread: the reference [`Search::Bfs`] is tested against.
    StaterightBfs,
}

/// Limits of one run.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Unique states after which the run stops (stateright's checkers: states generated, revisits
    /// included).
    pub max_states: usize,
    /// Threads of the breadth-first search; its results do not depend on them.
    pub threads: usize,
    /// The breadth-first search's symmetry reduction over API servers ([`crate::bfs::Settings`]).
    pub symmetry: bool,
    /// How long the run may take; it stops within a fraction of a second of it.
    pub time_limit: Duration,
    /// Stop at the first violation (for catching flaws) instead of exploring everything.
    pub stop_at_violation: bool,
    /// The process's resident memory at which the run stops, before the kernel would kill it.
    pub memory_limit_bytes: Option<u64>,
    /// The most states the breadth-first search makes a level with; a wider level, or one that would
    /// not fit under the memory limit, is kept as steps and made again when judged
    /// ([`crate::bfs::Settings::made_states`]). Unbounded by default.
    pub made_states: usize,
    /// The most states of a level the breadth-first search makes and expands before their new
    /// successors are merged ([`crate::bfs::Settings::window_states`]). Unbounded by default: a window
    /// of [`crate::bfs::WINDOW_CHUNKS`] chunks a thread.
    pub window_states: usize,
}

impl Limits {
    /// At most `max_states` generated states and ten minutes, no memory limit.
    pub fn states(max_states: usize, stop_at_violation: bool) -> Self {
        Limits {
            max_states,
            threads: default_threads(),
            symmetry: true,
            time_limit: Duration::from_secs(600),
            stop_at_violation,
            memory_limit_bytes: None,
            made_states: usize::MAX,
            window_states: usize::MAX,
        }
    }
}

/// One thread per core.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// Why a run ended before it explored everything.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cut {
    MaxStates,
    TimeLimit,
    MemoryLimit,
    /// SIGINT or SIGTERM.
    Interrupted,
    /// It stopped at its first violation, as asked.
    FirstViolation,
}

impl Cut {
    pub fn describe(self) -> &'static str {
        match self {
            Cut::MaxStates => "the --max-states limit",
            Cut::TimeLimit => "the --time-limit",
            Cut::MemoryLimit => "the --memory-limit",
            Cut::Interrupted => "a signal (SIGINT or SIGTERM)",
            Cut::FirstViolation => "the first violation",
        }
    }
}

/// What one property came to in one world.
#[derive(Clone, Debug)]
pub struct Verdict {
    pub property: Property,
    /// The shortest (BFS) or some (DFS) counterexample: its actions and the violation at its end.
    pub counterexample: Option<(Vec<Action>, Violation)>,
    /// The steps to a state that reaches the property's witness, if one was reached: the fewest under
    /// listwatch's BFS, the length of the path stateright found under its searches.
    pub witnessed_at: Option<usize>,
}

impl Verdict {
    /// Whether the property's witness was reached: the property was not vacuous in this world.
    pub fn witnessed(&self) -> bool {
        self.witnessed_at.is_some()
    }
}

/// What a run over one world found.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub states: usize,
    pub depth: usize,
    pub seconds: f64,
    /// Whether the run explored everything within the scope (no limit hit, no early stop).
    pub complete: bool,
    /// What ended it early, if anything did.
    pub cut: Option<Cut>,
    pub verdicts: Vec<Verdict>,
    /// The seen set's figures, for listwatch's own breadth-first search (stateright's do not say).
    pub fingerprints: Option<crate::bfs::Fingerprints>,
    /// How far into its last level a breadth-first search that a limit stopped got, and what it left.
    pub left: Option<crate::bfs::Left>,
}

impl Outcome {
    /// A world that was not checked at all: the run was cut before it began.
    pub fn not_run(cut: Cut) -> Self {
        let verdicts = Property::ALL
            .into_iter()
            .map(|property| Verdict { property, counterexample: None, witnessed_at: None })
            .collect();
        Outcome {
            states: 0,
            depth: 0,
            seconds: 0.0,
            complete: false,
            cut: Some(cut),
            verdicts,
            fingerprints: None,
            left: None,
        }
    }

    pub fn violated(&self) -> impl Iterator<Item = &Verdict> {
        self.verdicts.iter().filter(|v| v.counterexample.is_some())
    }
}

/// Check one world with the model reflector.
pub fn run(config: Config, search: Search, limits: Limits) -> Outcome {
    run_with(CheckModel::new(config), search, limits)
}

/// Check one world with the clients the model builds.
pub fn run_with<C: Checkable>(model: CheckModel<C>, search: Search, limits: Limits) -> Outcome {
    run_labelled(model, search, limits, "check")
}

/// [`run_with`], naming the world in progress lines.
pub fn run_labelled<C: Checkable>(
    model: CheckModel<C>,
    search: Search,
    limits: Limits,
    label: &str,
) -> Outcome {
    if search == Search::Bfs {
        return run_resumable(model, limits, label).0;
    }
    let started = Instant::now();
    let watch = Watch { stop: Arc::clone(&model.stop), limits, label, started, spent: Duration::ZERO };
    let builder = model
        .checker()
        // One thread: BFS then yields the shortest counterexample, and the same one on every run.
        .threads(1)
        .target_state_count(limits.max_states);
    let builder =
        if limits.stop_at_violation { builder.finish_when(HasDiscoveries::AnyFailures) } else { builder };
    if search == Search::Dfs {
        finish_stateright(builder.spawn_dfs(), &watch)
    } else {
        finish_stateright(builder.spawn_bfs(), &watch)
    }
}

/// Watch one of stateright's checkers to its end, or to a limit's, and summarize what it found.
fn finish_stateright<C: Checkable>(checker: impl Checker<CheckModel<C>>, watch: &Watch<'_>) -> Outcome {
    let cut = watch.wait(&StaterightRun::new(&checker));
    let checker = checker.join();
    // The run is over: stateright rebuilds each counterexample by replaying `actions`, which must offer
    // the same steps again.
    watch.stop.store(false, Ordering::Relaxed);
    summarize(checker, watch.started, watch.limits, cut)
}

/// A world's breadth-first search that its time limit cut, put aside to be taken up again where it
/// stopped ([`crate::bfs::Underway`]): taken up, it goes on to the same result as a run never cut.
#[derive(Debug)]
pub struct Paused<C: Checkable = listwatch_model::ModelClient> {
    model: CheckModel<C>,
    search: crate::bfs::Underway<C>,
    limits: Limits,
    /// The time already spent on it.
    spent: Duration,
}

impl<C: Checkable> Paused<C> {
    /// Search on for at most `time_limit`: the outcome so far, and the search again if the time limit
    /// cut it once more.
    pub fn resume(self, time_limit: Duration, label: &str) -> (Outcome, Option<Paused<C>>) {
        let limits = Limits { time_limit, ..self.limits };
        go_bfs(Paused { limits, ..self }, label)
    }

    /// Let go of the states the search holds, for the worlds checked while it waits: taken up
    /// again, it makes them again from the initial state, to the same result
    /// ([`crate::bfs::Underway::lighten`]).
    pub fn lighten(&mut self) {
        self.search.lighten();
    }
}

/// [`run_labelled`] with listwatch's breadth-first search, which a time limit puts aside instead of
/// ending: the outcome so far, and the search if the time limit cut it (a signal or a memory limit
/// ends it).
pub fn run_resumable<C: Checkable>(
    model: CheckModel<C>,
    limits: Limits,
    label: &str,
) -> (Outcome, Option<Paused<C>>) {
    let settings = crate::bfs::Settings {
        threads: limits.threads,
        max_states: limits.max_states,
        stop_at_violation: limits.stop_at_violation,
        symmetry: limits.symmetry,
        memory_limit_bytes: limits.memory_limit_bytes,
        made_states: limits.made_states,
        window_states: limits.window_states,
    };
    let search = crate::bfs::Underway::new(&model, settings);
    go_bfs(Paused { model, search, limits, spent: Duration::ZERO }, label)
}

/// The breadth-first search of [`crate::bfs`] on its own thread, watched from this one.
fn go_bfs<C: Checkable>(mut paused: Paused<C>, label: &str) -> (Outcome, Option<Paused<C>>) {
    let progress = crate::bfs::Progress::default();
    let limits = paused.limits;
    let watch = Watch {
        stop: Arc::clone(&paused.model.stop),
        limits,
        label,
        started: Instant::now(),
        spent: paused.spent,
    };
    let search = &mut paused.search;
    let (ended, cut) = std::thread::scope(|scope| {
        let searching = scope.spawn(|| search.go(&watch.stop, &progress));
        let cut = watch.wait(&progress);
        (searching.join(), cut)
    });
    watch.stop.store(false, Ordering::Relaxed);
    let ended = match ended {
        Ok(ended) => ended,
        Err(panic) => std::panic::resume_unwind(panic),
    };
    paused.spent += watch.started.elapsed();
    let found = paused.search.found(&paused.model);
    let verdicts: Vec<Verdict> = Property::ALL
        .into_iter()
        .map(|property| Verdict {
            property,
            counterexample: found.violations[property as usize].clone(),
            witnessed_at: found.witnessed[property as usize],
        })
        .collect();
    let any_violation = verdicts.iter().any(|v| v.counterexample.is_some());
    // A search that ended before the watch's stop reached it was not cut.
    let cut = cut
        .filter(|_| !ended)
        .or_else(|| found.out_of_memory.then_some(Cut::MemoryLimit))
        .or_else(|| found.hit_max_states.then_some(Cut::MaxStates))
        .or_else(|| (limits.stop_at_violation && any_violation).then_some(Cut::FirstViolation));
    let outcome = Outcome {
        states: found.states,
        depth: found.depth,
        seconds: paused.spent.as_secs_f64(),
        complete: cut.is_none(),
        cut,
        verdicts,
        fingerprints: Some(found.fingerprints),
        left: found.left.filter(|_| cut.is_some()),
    };
    let again = (!ended && cut == Some(Cut::TimeLimit)).then_some(paused);
    (outcome, again)
}

/// A run in progress, as the watch sees it.
trait Running {
    fn is_done(&self) -> bool;
    fn states(&self) -> usize;
    fn depth(&self) -> usize;
}

impl Running for crate::bfs::Progress {
    fn is_done(&self) -> bool {
        self.done.load(Ordering::Acquire)
    }
    fn states(&self) -> usize {
        self.states.load(Ordering::Relaxed)
    }
    fn depth(&self) -> usize {
        self.depth.load(Ordering::Relaxed)
    }
}

/// A stateright checker running.
struct StaterightRun<'a, C, K>(&'a K, std::marker::PhantomData<fn() -> C>);

impl<'a, C: Checkable, K: Checker<CheckModel<C>>> StaterightRun<'a, C, K> {
    fn new(checker: &'a K) -> Self {
        StaterightRun(checker, std::marker::PhantomData)
    }
}

impl<C: Checkable, K: Checker<CheckModel<C>>> Running for StaterightRun<'_, C, K> {
    fn is_done(&self) -> bool {
        self.0.is_done()
    }
    fn states(&self) -> usize {
        self.0.unique_state_count()
    }
    fn depth(&self) -> usize {
        self.0.max_depth()
    }
}

/// Watches a run: ends it at the deadline, on a signal or at the memory limit, and shows progress on
/// stderr (a live line on a terminal, a plain line every five seconds otherwise).
struct Watch<'a> {
    stop: Arc<AtomicBool>,
    limits: Limits,
    label: &'a str,
    started: Instant,
    /// The time spent on the run before this part of it, which the progress line counts.
    spent: Duration,
}

impl Watch<'_> {
    const PLAIN_EVERY: Duration = Duration::from_secs(5);

    /// Wait until the run is done; what cut it short, if anything did.
    fn wait(&self, run: &impl Running) -> Option<Cut> {
        use std::io::IsTerminal;
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = indicatif::ProgressBar::new_spinner();
            if let Ok(style) =
                indicatif::ProgressStyle::with_template("  {spinner} {prefix}: {msg} ({elapsed})")
            {
                bar.set_style(style);
            }
            bar.set_prefix(self.label.to_string());
            bar
        });
        let mut cut = None;
        let mut last_line = Instant::now();
        while !run.is_done() {
            std::thread::sleep(Duration::from_millis(50));
            if cut.is_none() {
                cut = self.cut();
                if cut.is_some() {
                    self.stop.store(true, Ordering::Relaxed);
                }
            }
            let elapsed = self.spent + self.started.elapsed();
            let states = run.states();
            let line = format!(
                "{states} states, {:.0} states/s, depth {}",
                states as f64 / elapsed.as_secs_f64().max(1e-3),
                run.depth()
            );
            match &bar {
                Some(bar) => {
                    bar.set_message(match cut {
                        Some(c) => format!("stopping at {}", c.describe()),
                        None => line,
                    });
                    bar.tick();
                }
                None if last_line.elapsed() >= Self::PLAIN_EVERY => {
                    eprintln!("listwatch: {}: {line}, {:.0} s", self.label, elapsed.as_secs_f64());
                    last_line = Instant::now();
                }
                None => {}
            }
        }
        if let Some(bar) = bar {
            bar.finish_and_clear();
        }
        cut
    }

    fn cut(&self) -> Option<Cut> {
        if interrupted().load(Ordering::Relaxed) {
            Some(Cut::Interrupted)
        } else if self.started.elapsed() >= self.limits.time_limit {
            Some(Cut::TimeLimit)
        } else if self
            .limits
            .memory_limit_bytes
            .zip(resident_bytes())
            .is_some_and(|(limit, rss)| rss >= limit)
        {
            Some(Cut::MemoryLimit)
        } else {
            None
        }
    }
}

fn summarize<C: Checkable>(
    checker: impl Checker<CheckModel<C>>,
    started: Instant,
    limits: Limits,
    cut: Option<Cut>,
) -> Outcome {
    let seconds = started.elapsed().as_secs_f64();
    let mut verdicts = Vec::new();
    for property in Property::ALL {
        let counterexample = checker.discovery(property.name()).map(|path| {
            let last = path.last_state().clone();
            let found =
                violation(property, &last.sys, &last.monitor).expect("a discovery violates its property");
            (path.into_actions(), found)
        });
        let witnessed_at = checker.discovery(property.witness()).map(|path| path.into_actions().len());
        verdicts.push(Verdict { property, counterexample, witnessed_at });
    }
    let states = checker.unique_state_count();
    let any_violation = verdicts.iter().any(|v| v.counterexample.is_some());
    // stateright's target counts generated states, revisits included.
    let cut = cut
        .or_else(|| (checker.state_count() >= limits.max_states).then_some(Cut::MaxStates))
        .or_else(|| (limits.stop_at_violation && any_violation).then_some(Cut::FirstViolation));
    Outcome {
        states,
        depth: checker.max_depth(),
        seconds,
        complete: cut.is_none(),
        cut,
        verdicts,
        fingerprints: None,
        left: None,
    }
}

/// Serve stateright's Explorer over one world; returns only if the server stops.
pub fn explore(config: Config, addr: std::net::SocketAddr) {
    let checker = CheckModel::new(config).checker().threads(1).serve(addr);
    while !checker.is_done() {
        std::thread::sleep(Duration::from_secs(1));
    }
}
