//! The observation interface: the only thing the properties read.
//!
//! A property judges a client by the steps' [`Observed`](listwatch_model::Observed) events (what it did
//! and what reached it) and by [`Observations`]: what each client shows after a step (its claimed RV,
//! readiness, cache, whether it holds a connection or has a timer armed), the environment's state, and
//! the store's ground truth. The model system provides it; so does a recorded stream
//! ([`crate::recording`]), so a client that is not the model reflector is judged by the same code.

use litemap::LiteMap;

use listwatch_model::manager::ClusterManager;
use listwatch_model::store::Store;
use listwatch_model::{Client, ClientId, ClientView, Key, Object, Rev, System};

use crate::property::Property;

/// The store's ground truth: every write to the watched resource, including what compaction hid.
pub trait Truth {
    /// The current revision.
    fn rev(&self) -> Rev;
    /// The compacted revision.
    fn compacted(&self) -> Rev;
    /// The watched resource's objects at `rev`, as the API server would serve them.
    fn state_at(&self, rev: Rev) -> LiteMap<Key, Object>;
    /// The revision of the first write to the watched resource after `rev`.
    fn next_write_after(&self, rev: Rev) -> Option<Rev>;
    /// The keys of the watched resource written at `rev`: several for a multi-key transaction (E8).
    fn keys_written_at(&self, rev: Rev) -> Vec<Key>;
    /// One object of the watched resource at `rev`.
    fn object_at(&self, key: Key, rev: Rev) -> Option<Object> {
        self.state_at(rev).remove(&key)
    }
}

impl Truth for Store {
    fn rev(&self) -> Rev {
        Store::rev(self)
    }

    fn compacted(&self) -> Rev {
        Store::compacted(self)
    }

    fn state_at(&self, rev: Rev) -> LiteMap<Key, Object> {
        let truth = self.truth_at(rev);
        let mut state = LiteMap::with_capacity(truth.len());
        for (k, kv) in truth.iter() {
            // Already in key order: each insert appends.
            state.insert(*k, kv.object());
        }
        state
    }

    fn next_write_after(&self, rev: Rev) -> Option<Rev> {
        self.next_watched_write_after(rev)
    }

    fn keys_written_at(&self, rev: Rev) -> Vec<Key> {
        self.watched_keys_at(rev)
    }

    fn object_at(&self, key: Key, rev: Rev) -> Option<Object> {
        self.truth_of(key, rev).map(|kv| kv.object())
    }
}

/// What the environment is doing, as a driver sees it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Environment {
    /// No writes, compactions or faults are left to inject.
    pub quiet: bool,
    /// Nothing is in flight: every message delivered, every request routed, every cache caught up.
    pub settled: bool,
    /// Every API server's cache has taken every etcd event it will get.
    pub caught_up: bool,
    /// The environment injects faults at all (for the witness of `converges`).
    pub faulty: bool,
}

/// Everything a property may read besides the steps' observations.
pub trait Observations {
    type Truth: Truth;
    /// How many clients there are (ids `0..n`).
    fn clients(&self) -> u8;
    /// What a client shows now.
    fn client(&self, client: ClientId) -> ClientView<'_>;
    fn truth(&self) -> &Self::Truth;
    fn environment(&self) -> Environment;

    fn client_ids(&self) -> std::iter::Map<std::ops::Range<u8>, fn(u8) -> ClientId> {
        (0..self.clients()).map(ClientId as fn(u8) -> ClientId)
    }

    /// The properties the clients cannot be judged by ([`Client::not_judged`]), each with why.
    fn not_judged(&self) -> Vec<(Property, &'static str)> {
        Vec::new()
    }
}

impl<C: Client, M: ClusterManager> Observations for System<C, M> {
    type Truth = Store;

    fn clients(&self) -> u8 {
        self.client_ids().count() as u8
    }

    fn client(&self, client: ClientId) -> ClientView<'_> {
        self.view(client)
    }

    fn truth(&self) -> &Store {
        self.store()
    }

    fn not_judged(&self) -> Vec<(Property, &'static str)> {
        let mut out: Vec<(Property, &'static str)> = Vec::new();
        for c in System::client_ids(self) {
            for (name, why) in self.client(c).not_judged() {
                let p = Property::parse(name).unwrap_or_else(|| panic!("{c} names no property: {name}"));
                if out.iter().all(|(q, _)| *q != p) {
                    out.push((p, why));
                }
            }
        }
        out
    }

    fn environment(&self) -> Environment {
        Environment {
            quiet: self.quiet(),
            settled: self.settled(),
            caught_up: self.servers_caught_up(),
            faulty: self.config().faults > 0,
        }
    }
}

/// What a system shows in one state, each client's view and the environment taken once: a step or a
/// state is judged by every guarantee, each asking for them, and a client's view walks its timers and
/// its connection. The system does not change while it is judged, so each answer is the one it would
/// give. [`crate::Monitor::observe`] and [`crate::first_violation`] judge through one; a checker that
/// judges a state property by property does the same.
#[derive(Debug)]
pub struct Viewed<'a, O> {
    obs: &'a O,
    views: Vec<ClientView<'a>>,
    environment: Environment,
}

impl<'a, O: Observations> Viewed<'a, O> {
    pub fn of(obs: &'a O) -> Self {
        Viewed {
            obs,
            views: obs.client_ids().map(|c| obs.client(c)).collect(),
            environment: obs.environment(),
        }
    }
}

impl<O: Observations> Observations for Viewed<'_, O> {
    type Truth = O::Truth;

    fn clients(&self) -> u8 {
        self.obs.clients()
    }

    fn client(&self, client: ClientId) -> ClientView<'_> {
        self.views[usize::from(client.0)]
    }

    fn truth(&self) -> &Self::Truth {
        self.obs.truth()
    }

    fn environment(&self) -> Environment {
        self.environment
    }

    fn not_judged(&self) -> Vec<(Property, &'static str)> {
        self.obs.not_judged()
    }
}
