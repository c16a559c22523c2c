//! A client under test: anything that talks to the API servers through the network and keeps a cache.
//! The system steps the environment (store, servers, network, faults) and hands each client what reaches
//! it; the client answers with effects. The model reflector with its informer cache ([`ModelClient`]) is
//! one implementation; a test may wrap it to plant a bug, and a foreign client library can stand in its
//! place through the same calls.
//!
//! Call order, as for the reflector: `start` once; after every `handle`, drain `poll_effect` until it
//! returns `None` and re-read the next timer.
//!
//! This is the one seam for every client under test: a [`Client`] is what a driver steps, and a
//! [`Clients`] is a client in one named configuration, which makes a fresh one for each reflector of a
//! world. The model reflector ([`ModelReflector`]), kube-runtime and any reflector over a `kube::Client`
//! (`listwatch-kube`), and client-go (`listwatch-client-go`) each implement both; every driver is
//! generic over `Clients`, and the command line picks one by name.

use std::fmt;

use crate::api::{ApiError, Message, WatchEnd, WatchEvent};
use crate::cache::{Cache, CacheOp, Notification};
use crate::config::{Config, ManagerConfig};
use crate::flaw::{Flaw, Flaws};
use crate::manager::{ClusterManager, Manager};
use crate::reflector::{Output, Phase, Reflector, ReflectorConfig, Timer};
use crate::types::{ClientId, Key, Millis, Rev};

/// What reaches a client.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Input {
    /// The next message on its connection.
    Message(Message),
    /// Its connection broke under it, losing whatever was queued.
    Broken,
    /// Its next timer fired.
    Timer(Timer),
    /// The next line on its watch did not decode: the event it carried is lost to the client.
    Garbled,
    /// Its WATCH reached a server that took it (A3, A12): on the wire, the response headers. A LIST's
    /// answer and a refused WATCH come as a [`Message`] instead. The model reflector learns nothing from
    /// it; a client behind a real HTTP stack needs it to finish its request.
    Opened,
    /// The consumer between its reflector and its cache stops before its next pop: a slow handler
    /// with a backlog. What the reflector pushes waits in its queue ([`Client::consumer_held`]).
    Hold,
    /// The held consumer goes on, and pops until its queue is empty.
    Release,
}

/// What a client asks of the system, in order.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Effect {
    /// Send a request on a new connection.
    Send(crate::api::Request),
    /// Close the current connection.
    Cancel,
    /// The cache notified its handler (the first, where it has several).
    Notify(Notification),
    /// The cache notified another of its handlers (`handler` from 1): client-go's informer gives each
    /// handler its own queue and goroutine, so each is told everything on its own.
    NotifyAnother { handler: u8, notification: Notification },
    /// The client told its user that an attempt to list and watch failed (C12).
    Tell,
}

/// A client under test.
pub trait Client: fmt::Debug {
    /// Begin: send the first request.
    fn start(&mut self);
    /// Take one input.
    fn handle(&mut self, input: Input);
    /// The next effect, in order.
    fn poll_effect(&mut self) -> Option<Effect>;
    /// The timer that fires next, and how long after the client's last step it fires.
    fn next_timer(&self) -> Option<(Timer, Millis)>;
    /// Time passed for the client with no timer of its own firing: its transport found a connection
    /// dead after `ms` (A9), or a server made its request wait `ms` (A12). A client whose clock is its
    /// own (a real library on a fake clock) moves it; the model reflector counts time by its timers only.
    fn elapse(&mut self, _ms: Millis) {}
    /// How many handlers its cache notifies, each judged on its own (one for the model reflector).
    fn handlers(&self) -> u8 {
        1
    }
    /// Whether any timer is armed.
    fn has_timer(&self) -> bool {
        self.next_timer().is_some()
    }
    /// How long the client's transport takes to notice a silently dead connection (A9) with no timer of
    /// the client's own involved, if it notices at all (client-go: its HTTP/2 health check). A client
    /// whose detection is a timer of its own (an idle timeout) answers `None` and arms that timer.
    fn dead_connection_noticed_after(&self) -> Option<Millis> {
        None
    }
    /// A9: when the client gives up its silently dead connection as the next thing it does: its
    /// transport's bound, unless a timer of its own is armed to fire sooner (that one goes first).
    fn dead_connection_noticed_next(&self) -> Option<Millis> {
        let bound = self.dead_connection_noticed_after()?;
        self.next_timer().is_none_or(|(_, after)| after >= bound).then_some(bound)
    }
    /// Whether something delivered to the client still waits to be read by it (bytes in its socket
    /// buffer while it sleeps a backoff, say). The model reflector reads what arrives at once.
    fn unread(&self) -> bool {
        false
    }
    /// Whether the client's cache has synced but a task waiting for it has not looked yet: client-go's
    /// `WaitForCacheSync` polls every 100 ms (C8), so its readiness lags a full LIST until the next poll,
    /// a timer of the client's ([`Timer::Poll`]). The model reflector is ready the moment it lists.
    fn readiness_pending(&self) -> bool {
        false
    }
    /// Whether the consumer that carries what the reflector pushes into the cache is held
    /// ([`Input::Hold`]): the environment is not quiet until it goes on.
    fn consumer_held(&self) -> bool {
        false
    }
    /// Whether its consumer can be held or released now: it has one, and the moment allows it
    /// (client-go: only while one of its requests is open).
    fn can_move_consumer(&self) -> bool {
        false
    }
    /// Whether something the reflector pushed still waits for the consumer: the cache lags the RV
    /// the client claims, and shows what it will hold only once the consumer has popped it.
    fn queued(&self) -> bool {
        false
    }
    /// Whether a handler of its cache is held with notifications waiting for it: the cache is up to
    /// date, the handler lags it until it goes on (a SharedIndexInformer gives each handler a buffer of
    /// its own). Never for the model reflector, whose consumer fills the cache and tells the handlers
    /// in one step.
    fn handlers_behind(&self) -> bool {
        false
    }
    /// Why the client cannot be stepped any further, if it cannot: a client under test that keeps
    /// itself busy without waiting on anything the environment does, or shows an object no server sent.
    /// A driver ends the run there, with this as its verdict (the model reflector never halts).
    fn halted(&self) -> Option<String> {
        None
    }
    /// Why the client's own machinery is gone, if it is: a process that died or stopped answering. Not
    /// a verdict on the client: a driver stops with this as an error that names the step.
    fn gone(&self) -> Option<String> {
        None
    }
    /// The properties this client cannot be judged by, each with why (a property's name as the
    /// properties crate spells it): what it does not show at all, such as notifications where it has no
    /// handlers. A report names them as not judged rather than passing them silently.
    fn not_judged(&self) -> &'static [(&'static str, &'static str)] {
        &[]
    }
    /// The RV the client claims to have seen everything up to.
    fn resource_version(&self) -> Rev;
    /// Whether it has been informed by one full list (C8).
    fn has_synced(&self) -> bool;
    /// Its cache.
    fn cache(&self) -> &Cache;
}

/// A client under test in one named configuration: how a driver makes the clients of a world, one per
/// reflector the configuration asks for, fresh for every run it executes.
pub trait Clients {
    type C: Client;
    /// The client manager of a run whose configuration has one: the model's ([`Manager`]), or a
    /// user's own under test.
    type M: ClusterManager;
    /// The name trace files and reports give this client (`model`, `kube-runtime,waiters=1`): the spec
    /// the command line reads back.
    fn name(&self) -> String;
    /// A fresh client for reflector `id` of a run of `config`; `seed` is the run's seed (0 when a run has
    /// none), from which a client with randomness of its own draws it.
    fn make(&self, config: &Config, seed: u64, id: ClientId) -> Self::C;
    /// A fresh client manager for a run of `config`, which has `manager`.
    fn make_manager(&self, config: &Config, seed: u64, manager: ManagerConfig) -> Self::M;
    /// Whether the client reads Kubernetes' real wire, so that the simulator also draws the wire's own
    /// faults for it (a watch line that does not decode).
    fn over_the_wire(&self) -> bool {
        false
    }
    /// Whether its consumer can be held ([`Input::Hold`]), so that the simulator also draws a slow
    /// consumer for it.
    fn consumer_lever(&self) -> bool {
        true
    }
    /// Whether what is under test is the client manager ([`Self::make_manager`]): the simulator then
    /// draws worlds with a manager and no reflectors.
    fn manager_under_test(&self) -> bool {
        false
    }
}

/// The model reflector with its informer cache, as a [`Clients`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ModelReflector;

impl ModelReflector {
    pub const NAME: &'static str = "model";
}

impl Clients for ModelReflector {
    type C = ModelClient;
    fn name(&self) -> String {
        Self::NAME.to_string()
    }
    type M = Manager;
    fn make(&self, config: &Config, _seed: u64, _id: ClientId) -> ModelClient {
        ModelClient::new(config.reflector, config.flaws)
    }
    fn make_manager(&self, config: &Config, _seed: u64, m: ManagerConfig) -> Manager {
        Manager::new(m.clusters, m.requests, config.flaws)
    }
    fn consumer_lever(&self) -> bool {
        true
    }
}

/// The model reflector and the informer cache it feeds, through a queue whose consumer can be held
/// (C7: client-go's DeltaFIFO between the reflector and the indexer).
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct ModelClient {
    pub reflector: Reflector,
    pub cache: Cache,
    flaws: Flaws,
    /// Notifications the cache made that were not yet polled.
    notes: Vec<Notification>,
    /// The consumer is held: what the reflector asks of the cache waits in `queue`, in order, each with
    /// the keys a `Replace` must leave alone ([`Flaw::ReplaceMissesQueued`]; none without the flaw).
    held: bool,
    queue: Vec<(CacheOp, Vec<Key>)>,
    /// Ready (C8): the reflector has synced and its list has reached the cache.
    synced: bool,
}
crate::clone_by_field!(ModelClient { reflector, cache, flaws, notes, held, queue, synced });

impl ModelClient {
    pub fn new(config: ReflectorConfig, flaws: Flaws) -> Self {
        ModelClient {
            reflector: Reflector::new(config, flaws),
            cache: Cache::default(),
            flaws,
            notes: Vec::new(),
            held: false,
            queue: Vec::new(),
            synced: false,
        }
    }

    /// The consumer pops everything queued, in order.
    fn release(&mut self) {
        self.held = false;
        for (op, spare) in std::mem::take(&mut self.queue) {
            self.cache.apply_sparing(&op, &spare, self.flaws, &mut self.notes);
        }
    }

    /// Queue an operation for the held consumer. C7: a `Replace` deletes every key it lacks, known to
    /// the cache or still queued; with [`Flaw::ReplaceMissesQueued`] the queued keys the cache does
    /// not hold yet are missed.
    fn enqueue(&mut self, op: CacheOp) {
        let mut spare = Vec::new();
        if let CacheOp::Replace { items, .. } = &op {
            if self.flaws.has(Flaw::ReplaceMissesQueued) {
                for (queued, _) in &self.queue {
                    let keys: Vec<Key> = match queued {
                        CacheOp::Apply(WatchEvent::Added(o) | WatchEvent::Modified(o)) => vec![o.key],
                        CacheOp::Replace { items, .. } => items.iter().map(|o| o.key).collect(),
                        CacheOp::Apply(_) => vec![],
                    };
                    for key in keys {
                        let missed = self.cache.get(key).is_none() && !items.iter().any(|o| o.key == key);
                        if missed && !spare.contains(&key) {
                            spare.push(key);
                        }
                    }
                }
            }
        }
        self.queue.push((op, spare));
    }
}

impl Client for ModelClient {
    fn start(&mut self) {
        self.reflector.start();
    }

    fn handle(&mut self, input: Input) {
        let r = &mut self.reflector;
        match input {
            Input::Message(Message::List(result)) => r.handle_list_result(result),
            Input::Message(Message::WatchRefused(error)) => r.handle_watch_refused(error),
            Input::Message(Message::Event(event)) => r.handle_watch_event(event),
            Input::Message(Message::End(end)) => r.handle_watch_ended(end),
            Input::Broken => match r.phase() {
                Phase::Listing { .. } => r.handle_list_result(Err(ApiError::Disconnected)),
                _ => r.handle_watch_ended(WatchEnd::Disconnected),
            },
            Input::Timer(timer) => r.handle_timeout(timer),
            Input::Opened => {}
            Input::Hold => self.held = true,
            Input::Release => self.release(),
            // client-go's StreamWatcher reports a line it cannot decode as an internal error and stops;
            // the reflector's watch handler returns on it (C5), as on an ERROR event.
            Input::Garbled => r.handle_watch_event(WatchEvent::Error(ApiError::InternalError)),
        }
    }

    fn poll_effect(&mut self) -> Option<Effect> {
        loop {
            if !self.notes.is_empty() {
                return Some(Effect::Notify(self.notes.remove(0)));
            }
            let Some(output) = self.reflector.poll_output() else {
                // C8: HasSynced is the queue's: true once the list's items were popped.
                self.synced = self.synced || (self.reflector.has_synced() && self.queue.is_empty());
                return None;
            };
            match output {
                Output::Send(request) => return Some(Effect::Send(request)),
                Output::Cancel => return Some(Effect::Cancel),
                Output::Tell => return Some(Effect::Tell),
                Output::Cache(op) if self.held => self.enqueue(op),
                Output::Cache(op) => self.cache.apply(&op, self.flaws, &mut self.notes),
                // The system's scheduler reads the next timer instead.
                Output::Arm(_) => {}
            }
        }
    }

    fn next_timer(&self) -> Option<(Timer, Millis)> {
        self.reflector.next_timer()
    }

    fn has_timer(&self) -> bool {
        self.reflector.has_timer()
    }

    fn dead_connection_noticed_after(&self) -> Option<Millis> {
        self.reflector.dead_connection_noticed_after()
    }

    fn resource_version(&self) -> Rev {
        self.reflector.resource_version()
    }

    fn has_synced(&self) -> bool {
        self.synced
    }

    fn consumer_held(&self) -> bool {
        self.held
    }

    fn can_move_consumer(&self) -> bool {
        true
    }

    fn queued(&self) -> bool {
        !self.queue.is_empty()
    }

    fn cache(&self) -> &Cache {
        &self.cache
    }
}
