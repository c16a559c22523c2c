//! One seed's run: a safety phase with faults, then a heal phase without them that must bring every
//! reflector to rest with its cache equal to the truth. Every state is judged by the same properties as
//! the exhaustive checker.

use listwatch_model::manager::{cluster_ids, request_ids, ClusterManager};
use listwatch_model::{Action, Client, Clients, FaultKind, ModelReflector, Observed, System};
use listwatch_properties::{
    first_violation, violation, witnessed, Monitor, Observations, Property, Viewed, Violation,
};

use super::draw::{Draw, Narrowing};
use super::rng::Rng;
use listwatch_model::Flaws;

/// Counts a run adds to a campaign's summary.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub safety_steps: u64,
    pub heal_steps: u64,
    /// Faults injected, by `FaultKind as usize`.
    pub faults: [u64; FaultKind::ALL.len()],
    /// LISTs the reflectors sent.
    pub lists: u64,
    /// WATCHes the reflectors sent, streaming lists (A12) not among them.
    pub watches: u64,
    /// Streaming lists (A12: WATCH with `sendInitialEvents`) the reflectors sent.
    pub streaming_lists: u64,
    /// Per property (catalogue order): 1 if its witness was reached in this run.
    pub witnessed: [u64; Property::COUNT],
}

impl Tally {
    pub fn add(&mut self, other: &Tally) {
        self.safety_steps += other.safety_steps;
        self.heal_steps += other.heal_steps;
        for (a, b) in self.faults.iter_mut().zip(other.faults) {
            *a += b;
        }
        self.lists += other.lists;
        self.watches += other.watches;
        self.streaming_lists += other.streaming_lists;
        for (a, b) in self.witnessed.iter_mut().zip(other.witnessed) {
            *a += b;
        }
    }
}

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum End {
    /// Every property held and every reflector came to rest after healing.
    Rest,
    /// A property broke after the last action taken: the first ([`Run::broken`] has every other).
    Broke(Violation),
    /// The heal phase ran out of steps before every reflector came to rest.
    NoRest,
    /// A client could not be stepped further ([`listwatch_model::Client::halted`]): why.
    Halted(String),
    /// A client's own machinery is gone ([`listwatch_model::Client::gone`]): not a verdict, an error
    /// naming the step.
    Gone(String),
}

/// A finished run.
#[derive(Clone, Debug)]
pub struct Run {
    pub draw: Draw,
    /// The steps taken, up to the first violation where a property broke (the steps a trace keeps).
    pub actions: Vec<Action>,
    pub end: End,
    /// Every property the run broke, each with its first violation and the number of steps taken when
    /// it broke, in the order they broke: a run goes on after its first violation, through its safety
    /// and heal phases, so that one frequent finding hides no other.
    pub broken: Vec<(Violation, usize)>,
    pub tally: Tally,
    /// The properties the clients cannot be judged by, each with why ([`Client::not_judged`]).
    pub not_judged: Vec<(Property, &'static str)>,
    /// Why a client or the client manager could go no further, where the run ended so (after a
    /// property broke, too: a manager whose requests wait on a lock for ever says who holds it).
    pub halted: Option<String>,
}

/// Run one seed for `safety_steps` steps of the safety phase, then heal for at most `heal_limit`.
pub fn run_seed(seed: u64, flaws: Flaws, safety_steps: u32, heal_limit: u32) -> Run {
    run_seed_with(&ModelReflector, seed, flaws, safety_steps, heal_limit)
}

/// [`run_seed`] with the clients `clients` makes in place of the model reflector.
pub fn run_seed_with<K: Clients>(
    clients: &K,
    seed: u64,
    flaws: Flaws,
    safety_steps: u32,
    heal_limit: u32,
) -> Run {
    run_seed_in(clients, seed, flaws, Narrowing::none(), safety_steps, heal_limit)
}

/// [`run_seed_with`], each seed's world narrowed as a campaign asks (the rest of the draw unchanged).
pub fn run_seed_in<K: Clients>(
    clients: &K,
    seed: u64,
    flaws: Flaws,
    narrowing: Narrowing,
    safety_steps: u32,
    heal_limit: u32,
) -> Run {
    let (mut draw, mut rng) = Draw::new_with(seed, flaws, clients.over_the_wire(), clients.consumer_lever());
    draw.restrict(narrowing);
    if clients.manager_under_test() {
        draw.manager_only();
    }
    let config = draw.config;
    let (mut sys, seen) = System::start_clients(clients, config, seed);
    let mut monitor = Monitor::new(&sys, &seen);
    let not_judged = sys.not_judged();
    let mut runner = Runner {
        draw: &draw,
        actions: Vec::new(),
        tally: Tally::default(),
        enabled: Vec::new(),
        broken: Vec::new(),
    };
    runner.count(&seen);
    if let Some(why) = sys.gone() {
        let (tally, end) = (runner.tally, End::Gone(format!("at the start: {why}")));
        return Run { draw, actions: Vec::new(), end, broken: Vec::new(), tally, not_judged, halted: None };
    }
    // A client manager under test runs as it starts: its first state may break a property already.
    runner.judge(&sys, &monitor);
    if let Some(why) = sys.halted() {
        let Runner { tally, broken, .. } = runner;
        let end = broken.first().map_or(End::Halted(why.clone()), |(first, _)| End::Broke(first.clone()));
        return Run { draw, actions: Vec::new(), end, broken, tally, not_judged, halted: Some(why) };
    }
    // The state the heal step leaves is judged like any other.
    let end = runner
        .safety(&mut sys, &mut monitor, &mut rng, safety_steps)
        .or_else(|| runner.step(&mut sys, &mut monitor, Action::Heal))
        .unwrap_or_else(|| runner.heal(&mut sys, &mut monitor, &mut rng, heal_limit));
    let Runner { mut actions, tally, broken, .. } = runner;
    let end = match (end, broken.first()) {
        (End::Gone(why), _) => End::Gone(why),
        (_, Some((first, step))) => {
            actions.truncate(*step);
            End::Broke(first.clone())
        }
        (end, None) => end,
    };
    Run { draw, actions, end, broken, tally, not_judged, halted: sys.halted() }
}

struct Runner<'a> {
    draw: &'a Draw,
    actions: Vec<Action>,
    tally: Tally,
    enabled: Vec<Action>,
    /// Every property broken so far, with the steps taken when it broke.
    broken: Vec<(Violation, usize)>,
}

impl Runner<'_> {
    /// Safety phase: steps drawn by weight among all enabled ones. `Some` if the run ended early.
    fn safety<C: Client, M: ClusterManager>(
        &mut self,
        sys: &mut System<C, M>,
        monitor: &mut Monitor,
        rng: &mut Rng,
        steps: u32,
    ) -> Option<End> {
        for _ in 0..steps {
            self.enabled.clear();
            sys.actions(&mut self.enabled);
            let (draw, now) = (self.draw, self.draw.now(sys));
            let Some(action) = pick(rng, &self.enabled, |a| draw.weight(a, &now)) else { break };
            self.tally.safety_steps += 1;
            if let Some(end) = self.step(sys, monitor, action) {
                return Some(end);
            }
        }
        None
    }

    /// Heal phase: no faults; time passes (a timer fires, a bookmark arrives) only when nothing else
    /// can happen, so that the system settles if it can.
    fn heal<C: Client, M: ClusterManager>(
        &mut self,
        sys: &mut System<C, M>,
        monitor: &mut Monitor,
        rng: &mut Rng,
        limit: u32,
    ) -> End {
        for _ in 0..limit {
            if at_rest(sys) {
                return End::Rest;
            }
            self.enabled.clear();
            sys.actions(&mut self.enabled);
            let (draw, now) = (self.draw, self.draw.now(sys));
            // A step kind weighed 0 would never happen: in the heal phase everything must be able to.
            let weight = |a: &Action| draw.weight(a, &now).max(1);
            let busy = |a: &Action| !matches!(a, Action::FireTimer(_) | Action::Bookmark(_));
            let work = |a: &Action| if busy(a) { weight(a) } else { 0 };
            let time = |a: &Action| if busy(a) { 0 } else { weight(a) };
            let Some(action) = pick(rng, &self.enabled, work).or_else(|| pick(rng, &self.enabled, time))
            else {
                return if at_rest(sys) { End::Rest } else { End::NoRest };
            };
            self.tally.heal_steps += 1;
            if let Some(end) = self.step(sys, monitor, action) {
                return end;
            }
        }
        if at_rest(sys) {
            End::Rest
        } else {
            End::NoRest
        }
    }

    fn step<C: Client, M: ClusterManager>(
        &mut self,
        sys: &mut System<C, M>,
        monitor: &mut Monitor,
        action: Action,
    ) -> Option<End> {
        if let Action::Fault(f) = &action {
            self.tally.faults[f.kind() as usize] += 1;
        }
        let seen = sys.apply(action);
        self.actions.push(action);
        if let Some(why) = sys.gone() {
            return Some(End::Gone(format!("step {} ({action}): {why}", self.actions.len())));
        }
        self.count(&seen);
        monitor.observe(sys, &seen);
        for p in Property::ALL {
            if self.tally.witnessed[p as usize] == 0 && witnessed(p, sys, monitor) {
                self.tally.witnessed[p as usize] = 1;
            }
        }
        self.judge(sys, monitor);
        sys.halted().map(End::Halted)
    }

    /// Every property not broken yet that this state breaks, the first one as the checker finds it.
    fn judge<C: Client, M: ClusterManager>(&mut self, sys: &System<C, M>, monitor: &Monitor) {
        let step = self.actions.len();
        if self.broken.is_empty() {
            if let Some(v) = first_violation(sys, monitor) {
                self.broken.push((v, step));
            }
        }
        if self.broken.is_empty() {
            return;
        }
        let obs = &Viewed::of(sys);
        for p in Property::ALL {
            if self.broken.iter().all(|(v, _)| v.property != p) {
                if let Some(v) = violation(p, obs, monitor) {
                    self.broken.push((v, step));
                }
            }
        }
    }

    fn count(&mut self, seen: &[Observed]) {
        for o in seen {
            if let Observed::Sent { request, .. } = o {
                if request.is_list() {
                    self.tally.lists += 1;
                } else if request.sends_initial_events() {
                    self.tally.streaming_lists += 1;
                } else {
                    self.tally.watches += 1;
                }
            }
        }
    }
}

/// Every reflector at rest (watching with nothing in flight, or stopped), the environment quiet and
/// settled, and the client manager with nothing left to do.
pub fn at_rest<C: Client, M: ClusterManager>(sys: &System<C, M>) -> bool {
    if !(sys.quiet() && sys.settled()) {
        return false;
    }
    let reflectors_rest = sys.client_ids().all(|c| sys.view(c).resting());
    let manager_rest = sys.manager().is_none_or(|m| {
        request_ids(m).all(|id| !m.can_step(id))
            && !m.can_pass_time()
            && cluster_ids(m).all(|c| !m.can_sync(c) && !m.is_paused(c))
    });
    reflectors_rest && manager_rest
}

/// A step drawn among `enabled` in proportion to `weight`; `None` if every weight is 0.
fn pick(rng: &mut Rng, enabled: &[Action], weight: impl Fn(&Action) -> u32) -> Option<Action> {
    let total: u64 = enabled.iter().map(|a| u64::from(weight(a))).sum();
    if total == 0 {
        return None;
    }
    let mut x = rng.below(total);
    for a in enabled {
        let w = u64::from(weight(a));
        if x < w {
            return Some(*a);
        }
        x -= w;
    }
    None
}
