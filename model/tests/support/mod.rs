//! A small script runner for hand-written stories: every step must be enabled, and everything the
//! system observed is kept for the assertions.

#![allow(dead_code)]

use listwatch_model::{
    Action, ClientId, Config, Key, ListRv, Message, Observed, Request, ServerId, System, Timer, WatchEvent,
};

pub const R: ClientId = ClientId(0);
pub const S0: ServerId = ServerId(0);
pub const S1: ServerId = ServerId(1);

pub struct Story {
    pub sys: System,
    pub log: Vec<Observed>,
}

impl Story {
    pub fn new(config: Config) -> Self {
        let (sys, log) = System::start(config);
        Story { sys, log }
    }

    /// Take one step; a step that is not enabled fails the test with what was enabled.
    pub fn step(&mut self, action: Action) -> &mut Self {
        match self.sys.try_apply(action) {
            Ok(seen) => self.log.extend(seen),
            Err(e) => {
                let mut enabled = Vec::new();
                self.sys.actions(&mut enabled);
                let names: Vec<String> = enabled.iter().map(|a| a.to_string()).collect();
                panic!("{e}; enabled: {}", names.join(" | "));
            }
        }
        self
    }

    pub fn steps(&mut self, actions: &[Action]) -> &mut Self {
        for a in actions {
            self.step(*a);
        }
        self
    }

    /// Let a server's cache take every etcd event waiting for it.
    pub fn ingest(&mut self, server: ServerId) -> &mut Self {
        while self.sys.enabled(Action::Ingest(server)) {
            self.step(Action::Ingest(server));
        }
        self
    }

    /// Hand the client every message queued for it.
    pub fn deliver(&mut self, client: ClientId) -> &mut Self {
        while self.sys.enabled(Action::Deliver(client)) {
            self.step(Action::Deliver(client));
        }
        self
    }

    /// Route the client's pending request to a server and deliver whatever comes back.
    pub fn serve(&mut self, client: ClientId, server: ServerId) -> &mut Self {
        self.step(Action::Route(client, server)).deliver(client)
    }

    /// Let every reinitialising watch cache finish its list (A14): no client timer fires before.
    pub fn ready_caches(&mut self) -> &mut Self {
        let ids: Vec<ServerId> =
            self.sys.servers().iter().filter(|s| s.initializing()).map(|s| s.id()).collect();
        for id in ids {
            self.step(Action::CacheReady(id));
        }
        self
    }

    /// Fire the client's timers, shortest first, until `timer` has fired.
    pub fn fire_until(&mut self, client: ClientId, timer: Timer) -> &mut Self {
        self.ready_caches();
        for _ in 0..8 {
            let next = self.sys.reflector(client).next_timer().map(|(t, _)| t);
            self.step(Action::FireTimer(client));
            if next == Some(timer) {
                return self;
            }
        }
        panic!("{timer:?} never fired");
    }

    /// Let the client recover on its own against one server: route its requests there, deliver the
    /// answers, wait out its backoffs; stop when it is watching with nothing left to do.
    pub fn recover(&mut self, client: ClientId, server: ServerId) -> &mut Self {
        for _ in 0..16 {
            self.ready_caches();
            if self.sys.enabled(Action::Route(client, server)) {
                self.serve(client, server);
            } else if self.sys.reflector(client).next_timer().map(|t| t.0) == Some(Timer::Backoff) {
                self.step(Action::FireTimer(client));
            } else {
                return self;
            }
        }
        panic!("{client} did not settle");
    }

    pub fn sent(&self, client: ClientId) -> Vec<Request> {
        self.log
            .iter()
            .filter_map(|o| match o {
                Observed::Sent { client: c, request } if *c == client => Some(*request),
                _ => None,
            })
            .collect()
    }

    pub fn lists(&self, client: ClientId) -> Vec<ListRv> {
        self.sent(client)
            .into_iter()
            .filter_map(|r| match r {
                Request::List { rv } => Some(rv),
                _ => None,
            })
            .collect()
    }

    pub fn received_events(&self, client: ClientId) -> Vec<WatchEvent> {
        self.log
            .iter()
            .filter_map(|o| match o {
                Observed::Received { client: c, message: Message::Event(e) } if *c == client => Some(*e),
                _ => None,
            })
            .collect()
    }

    pub fn cache_keys(&self, client: ClientId) -> Vec<Key> {
        self.sys.view(client).cache.objects().map(|o| o.key).collect()
    }

    pub fn truth_keys(&self) -> Vec<Key> {
        self.sys.store().truth_at(self.sys.store().rev()).keys().copied().collect()
    }

    pub fn mark(&self) -> usize {
        self.log.len()
    }

    pub fn since(&self, mark: usize) -> &[Observed] {
        &self.log[mark..]
    }
}
