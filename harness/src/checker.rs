//! The exhaustive checker: the model system with its property monitor as a stateright `Model`, and
//! a run of it over one world with a summary of every property.
//!
//! The checker runs the model reflector ([`ModelClient`]); any client that can be cloned and hashed
//! (a test's wrapper that plants a bug in it, say) runs the same way through [`run_with`].

use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use listwatch_model::{Action, Client, ClientId, Config, ModelClient, Observed, System};
use listwatch_properties::{violation, witnessed, Monitor, Property, Violation};
use stateright::{Checker, HasDiscoveries, Model};

/// The system and what its monitor remembers: one state of the checker.
///
/// `depth` is how many steps the state was first reached in; it is not part of the state's identity.
#[derive(Clone, Debug)]
pub struct CheckState<C = ModelClient> {
    pub sys: System<C>,
    pub monitor: Monitor,
    pub depth: usize,
}

impl<C: PartialEq> PartialEq for CheckState<C> {
    fn eq(&self, other: &Self) -> bool {
        self.sys == other.sys && self.monitor == other.monitor
    }
}

impl<C: Eq> Eq for CheckState<C> {}

impl<C: Hash> Hash for CheckState<C> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.sys.hash(state);
        self.monitor.hash(state);
    }
}

impl CheckState {
    pub fn start(config: Config) -> Self {
        Self::start_with(config, |_| ModelClient::new(config.reflector, config.flaws))
    }
}

impl<C: Client> CheckState<C> {
    /// The initial state with clients made by `make`.
    pub fn start_with(config: Config, make: impl FnMut(ClientId) -> C) -> Self {
        let (sys, seen) = System::start_with(config, make);
        let monitor = Monitor::new(&sys, &seen);
        CheckState { sys, monitor, depth: 0 }
    }

    /// Take one step and fold what it showed into the monitor.
    pub fn step(&mut self, action: Action) -> Vec<Observed> {
        let seen = self.sys.apply(action);
        self.monitor.observe(&self.sys, &seen);
        self.depth += 1;
        seen
    }
}

/// What a client must be for the checker to explore it: a value it can clone, compare and hash.
pub trait Checkable: Client + Clone + fmt::Debug + Eq + Hash + Send + Sync + 'static {}

impl<C: Client + Clone + fmt::Debug + Eq + Hash + Send + Sync + 'static> Checkable for C {}

/// The stateright model of one world.
pub struct CheckModel<C = ModelClient> {
    pub config: Config,
    make: fn(&Config, ClientId) -> C,
    /// Per property, the depth of the first violation found (`usize::MAX`: none yet). stateright keeps
    /// the *last* violating path it visits; reporting only violations no deeper than the first keeps
    /// BFS's counterexamples shortest.
    first_violation_depth: Arc<[AtomicUsize; Property::COUNT]>,
}

impl<C> fmt::Debug for CheckModel<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CheckModel").field("config", &self.config).finish_non_exhaustive()
    }
}

impl CheckModel {
    pub fn new(config: Config) -> Self {
        CheckModel::with_clients(config, |c, _| ModelClient::new(c.reflector, c.flaws))
    }
}

impl<C: Checkable> CheckModel<C> {
    /// A model whose clients `make` builds.
    pub fn with_clients(config: Config, make: fn(&Config, ClientId) -> C) -> Self {
        CheckModel {
            config,
            make,
            first_violation_depth: Arc::new(std::array::from_fn(|_| AtomicUsize::new(usize::MAX))),
        }
    }

    fn holds(&self, property: Property, s: &CheckState<C>) -> bool {
        if violation(property, &s.sys, &s.monitor).is_none() {
            return true;
        }
        let first = &self.first_violation_depth[property as usize];
        let known = first.fetch_min(s.depth, Ordering::Relaxed);
        s.depth > known
    }
}

macro_rules! property_fns {
    ($($p:ident => $always:ident, $sometimes:ident;)*) => {
        $(
            fn $always<C: Checkable>(m: &CheckModel<C>, s: &CheckState<C>) -> bool {
                m.holds(Property::$p, s)
            }
            fn $sometimes<C: Checkable>(_: &CheckModel<C>, s: &CheckState<C>) -> bool {
                witnessed(Property::$p, &s.sys, &s.monitor)
            }
        )*
        fn stateright_properties<C: Checkable>() -> Vec<stateright::Property<CheckModel<C>>> {
            vec![$(
                stateright::Property::always(Property::$p.name(), $always::<C>),
                stateright::Property::sometimes(Property::$p.witness(), $sometimes::<C>),
            )*]
        }
    };
}

property_fns! {
    NoResurrectedDelete => always_no_resurrected_delete, sometimes_no_resurrected_delete;
    NoRvRegression => always_no_rv_regression, sometimes_no_rv_regression;
    CacheIsSnapshot => always_cache_is_snapshot, sometimes_cache_is_snapshot;
    Converges => always_converges, sometimes_converges;
    NoLockAcrossUnboundedWait => always_no_lock, sometimes_no_lock;
    NoNeedlessRelist => always_no_needless_relist, sometimes_no_needless_relist;
    NoBusyLoop => always_no_busy_loop, sometimes_no_busy_loop;
    WatchOrdered => always_watch_ordered, sometimes_watch_ordered;
    WatchReliable => always_watch_reliable, sometimes_watch_reliable;
    Backoff => always_backoff, sometimes_backoff;
    NotificationsMatchCache => always_notifications_match_cache, sometimes_notifications_match_cache;
    StaleBounded => always_stale_bounded, sometimes_stale_bounded;
}

impl<C: Checkable> Model for CheckModel<C> {
    type State = CheckState<C>;
    type Action = Action;

    fn init_states(&self) -> Vec<CheckState<C>> {
        let (config, make) = (self.config, self.make);
        vec![CheckState::start_with(config, |c| make(&config, c))]
    }

    fn actions(&self, state: &CheckState<C>, actions: &mut Vec<Action>) {
        // A state whose history already broke a guarantee is a counterexample's end: no need to go on.
        if state.monitor.violation.is_none() {
            state.sys.actions(actions);
        }
    }

    fn next_state(&self, state: &CheckState<C>, action: Action) -> Option<CheckState<C>> {
        let mut next = state.clone();
        next.step(action);
        Some(next)
    }

    fn properties(&self) -> Vec<stateright::Property<Self>> {
        stateright_properties()
    }
}

/// Breadth-first (shortest counterexamples) or depth-first (far less memory).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Search {
    Bfs,
    Dfs,
}

/// Limits of one run.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// States generated (revisits included) before the run stops.
    pub max_states: usize,
    pub time_limit: Duration,
    /// Stop at the first violation (for catching flaws) instead of exploring everything.
    pub stop_at_violation: bool,
}

/// What one property came to in one world.
#[derive(Clone, Debug)]
pub struct Verdict {
    pub property: Property,
    /// The shortest (BFS) or some (DFS) counterexample: its actions and the violation at its end.
    pub counterexample: Option<(Vec<Action>, Violation)>,
    pub witnessed: bool,
}

/// What a run over one world found.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub states: usize,
    pub depth: usize,
    pub seconds: f64,
    /// Whether the run explored everything within the scope (no limit hit, no early stop).
    pub complete: bool,
    pub verdicts: Vec<Verdict>,
}

impl Outcome {
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
    let started = Instant::now();
    let builder = model
        .checker()
        // One thread: BFS then yields the shortest counterexample, and the same one on every run.
        .threads(1)
        .target_state_count(limits.max_states)
        .timeout(limits.time_limit);
    let builder =
        if limits.stop_at_violation { builder.finish_when(HasDiscoveries::AnyFailures) } else { builder };
    match search {
        Search::Bfs => summarize(with_progress(builder.spawn_bfs()), started, limits),
        Search::Dfs => summarize(with_progress(builder.spawn_dfs()), started, limits),
    }
}

/// Wait for a run, showing a progress line (states, states/s, depth) once a second when stderr is a
/// terminal; nothing when it is piped.
fn with_progress<C: Checkable, K: Checker<CheckModel<C>>>(checker: K) -> K {
    use std::io::{IsTerminal, Write};
    let tty = std::io::stderr().is_terminal();
    let started = Instant::now();
    let mut shown = false;
    while !checker.is_done() {
        std::thread::sleep(Duration::from_millis(100));
        if tty && started.elapsed() >= Duration::from_secs(1) {
            let states = checker.unique_state_count();
            let rate = states as f64 / started.elapsed().as_secs_f64();
            eprint!("\r  {states} states, {rate:.0} states/s, depth {}   ", checker.max_depth());
            let _ = std::io::stderr().flush();
            shown = true;
        }
    }
    if shown {
        eprint!("\r{:60}\r", "");
    }
    checker.join()
}

fn summarize<C: Checkable>(
    checker: impl Checker<CheckModel<C>>,
    started: Instant,
    limits: Limits,
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
        let witnessed = checker.discovery(property.witness()).is_some();
        verdicts.push(Verdict { property, counterexample, witnessed });
    }
    let states = checker.unique_state_count();
    let any_violation = verdicts.iter().any(|v| v.counterexample.is_some());
    // stateright's target counts generated states, revisits included.
    let limit_hit = checker.state_count() >= limits.max_states || started.elapsed() >= limits.time_limit;
    let stopped_early = limits.stop_at_violation && any_violation;
    let complete = !(limit_hit || stopped_early);
    Outcome { states, depth: checker.max_depth(), seconds, complete, verdicts }
}

/// Serve stateright's Explorer over one world; returns only if the server stops.
pub fn explore(config: Config, addr: std::net::SocketAddr) {
    let checker = CheckModel::new(config).checker().threads(1).serve(addr);
    while !checker.is_done() {
        std::thread::sleep(Duration::from_secs(1));
    }
}
