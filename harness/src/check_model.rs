//! The model system with its property monitor as a stateright `Model`: one checker state is the system
//! and what its monitor remembers. Both searches take it: stateright's checkers and listwatch's own
//! breadth-first search (`bfs`); `checker` runs them over a world.
//!
//! Any client that can be cloned and hashed ([`Checkable`]) runs the same way: the model reflector
//! ([`ModelClient`]), or a test's wrapper that plants a bug in it.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use listwatch_model::manager::{ClusterManager, Manager};
use listwatch_model::{Action, Client, ClientId, Clients, Config, ModelClient, Observed, System};
use listwatch_properties::{violation, witnessed, Monitor, Property};
use stateright::Model;

/// The system and what its monitor remembers: one state of the checker.
///
/// `depth` is how many steps the state was first reached in; it is not part of the state's identity.
#[derive(Debug)]
pub struct CheckState<C = ModelClient, M = Manager> {
    pub sys: System<C, M>,
    pub monitor: Monitor,
    pub depth: usize,
}
listwatch_model::clone_by_field!(CheckState<C, M> { sys, monitor, depth });

impl<C: PartialEq, M: PartialEq> PartialEq for CheckState<C, M> {
    fn eq(&self, other: &Self) -> bool {
        self.sys == other.sys && self.monitor == other.monitor
    }
}

impl<C: Eq, M: Eq> Eq for CheckState<C, M> {}

impl<C: Hash, M: Hash> Hash for CheckState<C, M> {
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
        Self::of(System::start_with(config, make))
    }
}

impl<C: Client, M: ClusterManager> CheckState<C, M> {
    /// The initial state of a run of `config` with `clients`' clients and manager.
    pub fn start_clients<K: Clients<C = C, M = M>>(clients: &K, config: Config, seed: u64) -> Self {
        Self::of(System::start_clients(clients, config, seed))
    }

    fn of((sys, seen): (System<C, M>, Vec<Observed>)) -> Self {
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

/// How a model builds each client of a world.
type MakeClient<C> = Arc<dyn Fn(&Config, ClientId) -> C + Send + Sync>;

/// The stateright model of one world.
pub struct CheckModel<C = ModelClient> {
    pub config: Config,
    make: MakeClient<C>,
    /// Per property, the depth of the first violation found (`usize::MAX`: none yet). stateright keeps
    /// the *last* violating path it visits; reporting only violations no deeper than the first keeps
    /// BFS's counterexamples shortest.
    first_violation_depth: Arc<[AtomicUsize; Property::COUNT]>,
    /// Set to end the run early: every state becomes a leaf and nothing more is judged, so stateright
    /// drains its queue at once and what was found so far stays (a deadline, a signal, the memory
    /// limit). stateright's own timeout is consulted only when a worker runs out of work.
    pub(crate) stop: Arc<AtomicBool>,
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
    pub fn with_clients(
        config: Config,
        make: impl Fn(&Config, ClientId) -> C + Send + Sync + 'static,
    ) -> Self {
        CheckModel {
            config,
            make: Arc::new(make),
            first_violation_depth: Arc::new(std::array::from_fn(|_| AtomicUsize::new(usize::MAX))),
            stop: Arc::new(AtomicBool::new(false)),
        }
    }

    /// The world's initial state.
    pub fn initial_state(&self) -> CheckState<C> {
        let config = self.config;
        CheckState::start_with(config, |c| (self.make)(&config, c))
    }

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    fn holds(&self, property: Property, s: &CheckState<C>) -> bool {
        if self.stopped() || violation(property, &s.sys, &s.monitor).is_none() {
            return true;
        }
        let first = &self.first_violation_depth[property as usize];
        let known = first.fetch_min(s.depth, Ordering::Relaxed);
        s.depth > known
    }
}

/// Property `P` of [`Property::ALL`] holds in `s` (stateright takes a function per property).
fn always<C: Checkable, const P: usize>(m: &CheckModel<C>, s: &CheckState<C>) -> bool {
    m.holds(Property::ALL[P], s)
}

/// Property `P`'s witness is reached in `s`.
fn sometimes<C: Checkable, const P: usize>(m: &CheckModel<C>, s: &CheckState<C>) -> bool {
    !m.stopped() && witnessed(Property::ALL[P], &s.sys, &s.monitor)
}

type Judge<C> = fn(&CheckModel<C>, &CheckState<C>) -> bool;

/// The most properties the list below reaches; registering more needs a longer list.
const MAX_PROPERTIES: usize = 24;
const _: () = assert!(Property::COUNT <= MAX_PROPERTIES, "extend `judges` to every property");

/// One `always` and one `sometimes` function per index, for the first [`Property::COUNT`] of them.
fn judges<C: Checkable>() -> [(Judge<C>, Judge<C>); MAX_PROPERTIES] {
    macro_rules! each {
        ($($p:literal)*) => { [$((always::<C, $p> as Judge<C>, sometimes::<C, $p> as Judge<C>),)*] };
    }
    each!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23)
}

/// Every property as stateright sees it: each guarantee always, each witness sometimes.
fn stateright_properties<C: Checkable>() -> Vec<stateright::Property<CheckModel<C>>> {
    Property::ALL
        .into_iter()
        .zip(judges::<C>())
        .flat_map(|(p, (always, sometimes))| {
            [
                stateright::Property::always(p.name(), always),
                stateright::Property::sometimes(p.witness(), sometimes),
            ]
        })
        .collect()
}

impl<C: Checkable> Model for CheckModel<C> {
    type State = CheckState<C>;
    type Action = Action;

    fn init_states(&self) -> Vec<CheckState<C>> {
        vec![self.initial_state()]
    }

    fn actions(&self, state: &CheckState<C>, actions: &mut Vec<Action>) {
        // A state whose history already broke a guarantee is a counterexample's end: no need to go on.
        if state.monitor.violation.is_none() && !self.stopped() {
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

    /// The one spelling of a step (the model's `Display`), as `show`, `check` and `bugs` print it.
    fn format_action(&self, action: &Action) -> String {
        action.to_string()
    }

    /// The state after a step in Kubernetes terms, not `Debug`.
    fn format_step(&self, last_state: &CheckState<C>, action: Action) -> Option<String> {
        self.next_state(last_state, action).map(|next| crate::state_text::render(&next.sys))
    }
}

/// The resident memory of this process, from `/proc/self/statm` (`None` where there is none).
pub fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}
