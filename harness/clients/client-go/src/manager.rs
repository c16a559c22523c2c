//! A Go user's client manager under test (`go:DIR,test=NAME,manager`, a test that calls
//! `listwatchtest.RunManager`), as the [`ClusterManager`] a world steps in place of the model's (C8,
//! seed 004). Its requests run on goroutines of their own from the start; the world only answers a
//! cluster's first list ([`ClusterManager::sync`]), keeps an unreachable cluster's lists unanswered,
//! and lets the manager's sync-wait bound of time pass. After each command the program has settled
//! and reports what a lock and wait tracer sees of each request (what the code told
//! `ManagerEnv.Locked`, `Unlocked`, `Waiting` and `Waited`) and how each ended.
//!
//! A request blocked on a `sync.Mutex` keeps the program's bubble from ever going still: its
//! watchdog then reports the requests' last traces with who waits on which lock and who holds it.
//! The manager halts there, its requests never answered, with that as why.

use listwatch_model::manager::{
    ClusterId, ClusterManager, LockMode, Manager, Outcome, RequestId, RequestTrace,
};
use listwatch_model::ManagerConfig;
use serde_json::{json, Value};

use crate::config::ClientGo;
use crate::process::{Kind, Process, Reply};

/// A Go user's client manager, driven through its test binary.
#[derive(Debug)]
pub struct GoManager {
    process: Option<Process>,
    clusters: u8,
    traces: Vec<RequestTrace>,
    listing: Vec<bool>,
    paused: Vec<bool>,
    halted: Option<String>,
    gone: Option<String>,
}

impl GoManager {
    /// Start the manager of `config`'s test for a world with `m`; `seed` seeds its randomness.
    pub fn start(config: &ClientGo, m: ManagerConfig, seed: u64) -> GoManager {
        let clusters = m.clusters.max(1);
        let mut manager = GoManager {
            process: None,
            clusters,
            traces: vec![RequestTrace::default(); usize::from(m.requests)],
            listing: vec![false; usize::from(clusters)],
            paused: vec![false; usize::from(clusters)],
            halted: None,
            gone: None,
        };
        let kind = Kind {
            binary: config.binary.clone(),
            env: Vec::new(),
            test: config.go.as_ref().map(|g| g.test.clone()),
        };
        match Process::take(&kind) {
            Ok(p) => manager.process = Some(p),
            Err(e) => {
                manager.gone = Some(e);
                return manager;
            }
        }
        manager.command(json!({
            "cmd": "start",
            "seed": seed,
            "manager": {"clusters": clusters, "requests": m.requests, "wait_ms": Manager::SYNC_WAIT_MS},
        }));
        manager
    }

    fn command(&mut self, command: Value) {
        if self.gone.is_some() || self.halted.is_some() {
            return;
        }
        let Some(process) = self.process.as_mut() else { return };
        match process.call(&command) {
            Ok(Reply::Halted(halt, reply)) => {
                self.process = None;
                if let Err(e) = self.fold(&reply["state"]) {
                    self.gone = Some(e);
                }
                self.halted = Some(format!("its bubble can never go on: {}", halt.at()));
            }
            Ok(Reply::Answer(reply)) => {
                if let Err(e) = self.fold(&reply) {
                    self.gone = Some(e);
                }
            }
            Err(e) => {
                self.process = None;
                self.gone = Some(e);
            }
        }
    }

    /// Take a reply's requests and listing clusters.
    fn fold(&mut self, reply: &Value) -> Result<(), String> {
        let bad = |what: &str| format!("the manager program's reply has no valid {what}: {reply}");
        let requests = reply["requests"].as_array().ok_or_else(|| bad("requests"))?;
        if requests.len() != self.traces.len() {
            return Err(bad("requests (one a request)"));
        }
        for (trace, r) in self.traces.iter_mut().zip(requests) {
            let held = match r["held"].as_str() {
                None => None,
                Some("read") => Some(LockMode::Read),
                Some("write") => Some(LockMode::Write),
                Some(_) => return Err(bad("held")),
            };
            let wait = match &r["wait"] {
                Value::Null => None,
                w => {
                    let cluster = w["cluster"].as_u64().and_then(|c| u8::try_from(c).ok());
                    let cluster =
                        cluster.filter(|c| *c < self.clusters).ok_or_else(|| bad("wait.cluster"))?;
                    let bound = w["bound_ms"].as_f64().map(|ms| ms.max(0.0).ceil() as u64);
                    Some((ClusterId(cluster), bound))
                }
            };
            let outcome = match r["outcome"].as_str() {
                None => None,
                Some("served") => Some(Outcome::Served),
                Some("failed") => Some(Outcome::TimedOut),
                Some(_) => return Err(bad("outcome")),
            };
            *trace = RequestTrace { held, wait, outcome };
        }
        let listing = reply["listing"].as_array().ok_or_else(|| bad("listing"))?;
        if listing.len() != self.listing.len() {
            return Err(bad("listing (one a cluster)"));
        }
        for (l, v) in self.listing.iter_mut().zip(listing) {
            *l = v.as_bool().ok_or_else(|| bad("listing"))?;
        }
        Ok(())
    }

    fn pending(&self) -> bool {
        self.traces.iter().any(|t| t.outcome.is_none())
    }
}

impl Drop for GoManager {
    fn drop(&mut self) {
        if let Some(p) = self.process.take() {
            p.release();
        }
    }
}

impl ClusterManager for GoManager {
    fn cluster_count(&self) -> u8 {
        self.clusters
    }
    fn request_count(&self) -> u8 {
        self.traces.len() as u8
    }
    /// Its requests run on their own.
    fn can_step(&self, _id: RequestId) -> bool {
        false
    }
    fn step(&mut self, _id: RequestId) {}
    fn can_pass_time(&self) -> bool {
        self.pending() && self.halted.is_none() && self.gone.is_none()
    }
    fn pass_time(&mut self) {
        if self.can_pass_time() {
            self.command(json!({"cmd": "advance", "ms": Manager::SYNC_WAIT_MS}));
        }
    }
    fn can_sync(&self, cluster: ClusterId) -> bool {
        let k = usize::from(cluster.0);
        self.halted.is_none() && self.listing.get(k) == Some(&true) && self.paused.get(k) == Some(&false)
    }
    fn sync(&mut self, cluster: ClusterId) {
        if self.can_sync(cluster) {
            self.command(json!({"cmd": "sync", "cluster": cluster.0}));
        }
    }
    fn is_paused(&self, cluster: ClusterId) -> bool {
        self.paused.get(usize::from(cluster.0)) == Some(&true)
    }
    fn pause(&mut self, cluster: ClusterId) {
        if let Some(p) = self.paused.get_mut(usize::from(cluster.0)) {
            *p = true;
        }
    }
    fn resume(&mut self, cluster: ClusterId) {
        if let Some(p) = self.paused.get_mut(usize::from(cluster.0)) {
            *p = false;
        }
    }
    fn trace(&self, id: RequestId) -> RequestTrace {
        self.traces.get(usize::from(id.0)).copied().unwrap_or_default()
    }
    fn halted(&self) -> Option<String> {
        self.halted.clone()
    }
    fn gone(&self) -> Option<String> {
        self.gone.clone()
    }
}

/// The manager of a world run with a [`ClientGo`]: the model's, or a Go user's under test.
#[derive(Debug)]
pub enum Managed {
    Model(Manager),
    Go(GoManager),
}

impl Managed {
    fn get(&self) -> &dyn ClusterManager {
        match self {
            Managed::Model(m) => m,
            Managed::Go(m) => m,
        }
    }
    fn get_mut(&mut self) -> &mut dyn ClusterManager {
        match self {
            Managed::Model(m) => m,
            Managed::Go(m) => m,
        }
    }
}

impl ClusterManager for Managed {
    fn cluster_count(&self) -> u8 {
        self.get().cluster_count()
    }
    fn request_count(&self) -> u8 {
        self.get().request_count()
    }
    fn can_step(&self, id: RequestId) -> bool {
        self.get().can_step(id)
    }
    fn step(&mut self, id: RequestId) {
        self.get_mut().step(id)
    }
    fn can_pass_time(&self) -> bool {
        self.get().can_pass_time()
    }
    fn pass_time(&mut self) {
        self.get_mut().pass_time()
    }
    fn can_sync(&self, cluster: ClusterId) -> bool {
        self.get().can_sync(cluster)
    }
    fn sync(&mut self, cluster: ClusterId) {
        self.get_mut().sync(cluster)
    }
    fn is_paused(&self, cluster: ClusterId) -> bool {
        self.get().is_paused(cluster)
    }
    fn pause(&mut self, cluster: ClusterId) {
        self.get_mut().pause(cluster)
    }
    fn resume(&mut self, cluster: ClusterId) {
        self.get_mut().resume(cluster)
    }
    fn trace(&self, id: RequestId) -> RequestTrace {
        self.get().trace(id)
    }
    fn halted(&self) -> Option<String> {
        self.get().halted()
    }
    fn gone(&self) -> Option<String> {
        self.get().gone()
    }
}
