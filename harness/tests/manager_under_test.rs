//! A client manager under test in place of the model's ([`ClusterManager`], [`Clients::make_manager`]):
//! the simulator draws worlds with a manager and no reflectors for it, judges its first state, and
//! ends a run where it halts. Shown with two small managers of this test's own, written as a user's
//! goroutines behave (their requests move on their own; the world only answers lists and lets time
//! pass): one that waits for a sync under its write lock, one that waits outside it with a bound.

use listwatch_harness::sim::run::{run_seed_with, End};
use listwatch_model::manager::{
    ClusterId, ClusterManager, LockMode, Manager, Outcome, RequestId, RequestTrace,
};
use listwatch_model::{ClientId, Clients, Config, ManagerConfig, ModelClient};
use listwatch_properties::Property;

/// A manager whose requests have all started: the first holds the write lock (or not) while it waits
/// for cluster 0 (with no bound, or a bound); the others wait for that lock, or for their own
/// cluster outside any lock. With `under_lock` it can never go on once it starts: it halts.
#[derive(Debug)]
struct Started {
    clusters: u8,
    traces: Vec<RequestTrace>,
    under_lock: bool,
    listing: Vec<bool>,
    paused: Vec<bool>,
}

impl Started {
    fn new(m: ManagerConfig, under_lock: bool) -> Started {
        let traces = (0..m.requests)
            .map(|i| {
                let cluster = ClusterId(i % m.clusters);
                match (i, under_lock) {
                    (0, true) => RequestTrace {
                        held: Some(LockMode::Write),
                        wait: Some((cluster, None)),
                        outcome: None,
                    },
                    (_, true) => RequestTrace::default(),
                    (_, false) => RequestTrace {
                        held: None,
                        wait: Some((cluster, Some(Manager::SYNC_WAIT_MS))),
                        outcome: None,
                    },
                }
            })
            .collect();
        Started {
            clusters: m.clusters,
            traces,
            under_lock,
            listing: vec![true; usize::from(m.clusters)],
            paused: vec![false; usize::from(m.clusters)],
        }
    }
}

impl ClusterManager for Started {
    fn cluster_count(&self) -> u8 {
        self.clusters
    }
    fn request_count(&self) -> u8 {
        self.traces.len() as u8
    }
    fn can_step(&self, _: RequestId) -> bool {
        false
    }
    fn step(&mut self, _: RequestId) {}
    fn can_pass_time(&self) -> bool {
        !self.under_lock && self.traces.iter().any(|t| t.outcome.is_none())
    }
    fn pass_time(&mut self) {
        for t in self.traces.iter_mut().filter(|t| t.outcome.is_none()) {
            *t = RequestTrace { outcome: Some(Outcome::TimedOut), ..RequestTrace::default() };
        }
    }
    fn can_sync(&self, c: ClusterId) -> bool {
        !self.under_lock && self.listing[usize::from(c.0)] && !self.paused[usize::from(c.0)]
    }
    fn sync(&mut self, c: ClusterId) {
        self.listing[usize::from(c.0)] = false;
        for (i, t) in self.traces.iter_mut().enumerate() {
            if i as u8 % self.clusters == c.0 && t.outcome.is_none() {
                *t = RequestTrace { outcome: Some(Outcome::Served), ..RequestTrace::default() };
            }
        }
    }
    fn is_paused(&self, c: ClusterId) -> bool {
        self.paused[usize::from(c.0)]
    }
    fn pause(&mut self, c: ClusterId) {
        self.paused[usize::from(c.0)] = true;
    }
    fn resume(&mut self, c: ClusterId) {
        self.paused[usize::from(c.0)] = false;
    }
    fn trace(&self, id: RequestId) -> RequestTrace {
        self.traces[usize::from(id.0)]
    }
    fn halted(&self) -> Option<String> {
        self.under_lock.then(|| "request-1 waits for the lock request-0 holds".to_string())
    }
}

/// The model reflector as clients (there are none in these worlds) and [`Started`] as the manager.
struct ManagerUnderTest {
    under_lock: bool,
}

impl Clients for ManagerUnderTest {
    type C = ModelClient;
    type M = Started;
    fn name(&self) -> String {
        "started-manager".into()
    }
    fn make(&self, config: &Config, _seed: u64, _id: ClientId) -> ModelClient {
        ModelClient::new(config.reflector, config.flaws)
    }
    fn make_manager(&self, _config: &Config, _seed: u64, m: ManagerConfig) -> Started {
        Started::new(m, self.under_lock)
    }
    fn manager_under_test(&self) -> bool {
        true
    }
}

/// The manager that waits under its lock breaks no-lock-across-unbounded-wait in its first state, and
/// the run ends there with why it halted; every seed's world has a manager and no reflectors.
#[test]
fn a_manager_that_waits_under_its_lock_breaks_the_property_at_its_start() {
    for seed in 0..20 {
        let run = run_seed_with(&ManagerUnderTest { under_lock: true }, seed, Default::default(), 200, 200);
        let config = run.draw.config;
        assert_eq!(config.reflectors, 0, "seed {seed}");
        assert!(config.manager.is_some_and(|m| m.clusters >= 2), "seed {seed}: {:?}", config.manager);
        match &run.end {
            End::Broke(v) => assert_eq!(v.property, Property::NoLockAcrossUnboundedWait, "seed {seed}"),
            other => panic!("seed {seed}: {other:?}"),
        }
        assert!(run.actions.is_empty(), "seed {seed}: broken at the start, yet {} steps", run.actions.len());
        assert!(
            run.halted.as_deref().is_some_and(|h| h.contains("request-0 holds")),
            "seed {seed}: {:?}",
            run.halted
        );
    }
}

/// The manager that waits outside its lock with a bound comes to rest: its requests are served or
/// time out, and no property breaks.
#[test]
fn a_manager_that_waits_outside_its_lock_comes_to_rest() {
    for seed in 0..20 {
        let run = run_seed_with(&ManagerUnderTest { under_lock: false }, seed, Default::default(), 200, 200);
        assert_eq!(run.end, End::Rest, "seed {seed}: {:?}", run.broken);
        assert!(run.halted.is_none());
    }
}
