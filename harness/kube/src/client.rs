//! kube-runtime's `watcher` and reflector `Store`, unmodified, as a [`Client`] the model system steps.
//!
//! It runs on its own current-thread tokio runtime with paused time. After every input the runtime runs
//! until nothing moves (no request, no body poll, no event for several rounds); time never passes then.
//! Time passes only at a [`Input::Timer`] step, by exactly the delay of the timer that fires. kube-runtime
//! has two timers, and the adapter knows each from what it can see:
//! - the watch's idle timeout (`watcher::Config::timeout` + 5 s, as its documentation gives it), running
//!   while the watcher waits on an open watch body with nothing to read;
//! - the backoff of `WatchStreamExt::default_backoff()`, whose delays are read off the `Backoff` as it
//!   hands them out ([`Observed`], a pass-through).
//!
//! What it shows is what the properties judge (observations only):
//! - the requests it sent; the RV it claims is the RV of its last WATCH, moved by every event it took
//!   from the watch after its initial list, and set to the list's RV when its stream yields `InitDone`
//!   (it watches from there next);
//! - its `Store`'s contents, as (key, uid, rv, content);
//! - readiness: several tasks await `Store::wait_until_ready()` from before the first sync; it is ready
//!   once every one of them has returned;
//! - the notifications its stream's events stand for: `Apply` an add or an update, `Delete` a delete,
//!   `InitDone` a replace by the objects of `InitApply` since `Init`.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::runtime::reflector::{self, Store};
use kube::runtime::utils::Backoff;
use kube::runtime::watcher::{self, DefaultBackoff, Event};
use kube::runtime::WatchStreamExt;
use kube::Api;
use listwatch_model::{
    Cache, Client, Effect, Input, Millis, Notification, Object, Request, Rev, Timer, WatchEvent,
};
use tokio::runtime::Runtime;
use tokio::time::Instant;

use crate::config::KubeConfig;
use crate::exchange::{lock, Exchange, Shared, Wire};
use crate::wire::object::from_configmap;

/// Rounds of the runtime with nothing moving before it counts as at rest.
const QUIET_ROUNDS: u32 = 4;
/// Rounds one step may take before the client counts as spinning (a verdict, not a hang).
const STEP_ROUNDS: u32 = 20_000;

/// What the adapter folds from the stream and the wire, shared with the task that drives the stream.
#[derive(Default)]
struct Shown {
    /// The objects the stream's events stand for, folded.
    told: BTreeMap<listwatch_model::Key, Object>,
    /// `InitApply` objects since `Init`.
    init: Option<Vec<Object>>,
    /// The RV the client claims (see the module doc).
    claimed: Rev,
    /// The RV of the list (or streaming list) in progress: where `InitDone` leaves the client.
    listed: Option<Rev>,
    /// Whether the open watch is past its initial events (a plain WATCH always is).
    past_initial: bool,
    /// Per task awaiting `Store::wait_until_ready()`: whether it returned.
    ready: Vec<bool>,
    /// The backoff delay handed out last, and when.
    backoff: Option<(Instant, Duration)>,
    /// Why an event the stream yielded holds something no server sent, if one did.
    foreign: Option<String>,
}

/// A pass-through `Backoff` that shows the delays it hands out: the same delays, the same resets.
pub(crate) struct Observed<B> {
    inner: B,
    shown: Arc<Mutex<Shown>>,
}

impl<B: Iterator<Item = Duration>> Iterator for Observed<B> {
    type Item = Duration;
    fn next(&mut self) -> Option<Duration> {
        let d = self.inner.next();
        if let Some(d) = d {
            self.shown.lock().unwrap_or_else(|p| p.into_inner()).backoff = Some((Instant::now(), d));
        }
        d
    }
}

impl<B: Backoff> Backoff for Observed<B> {
    fn reset(&mut self) {
        self.inner.reset();
    }
}

/// kube-runtime under test.
pub struct KubeRuntime {
    config: KubeConfig,
    rt: Runtime,
    wire: Shared,
    shown: Arc<Mutex<Shown>>,
    store: Option<Store<ConfigMap>>,
    cache: Cache,
    effects: Vec<Effect>,
    /// Why the client could not be stepped further, if it could not.
    stuck: Option<String>,
    seed: u64,
}

impl std::fmt::Debug for KubeRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KubeRuntime").field("config", &self.config.name).finish_non_exhaustive()
    }
}

impl KubeRuntime {
    /// A client of this configuration; `seed` seeds its backoff jitter.
    pub fn new(config: KubeConfig, seed: u64) -> Self {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .expect("a current-thread runtime builds without IO");
        KubeRuntime {
            config,
            rt,
            wire: Arc::new(Mutex::new(Exchange::default())),
            shown: Arc::new(Mutex::new(Shown::default())),
            store: None,
            cache: Cache::default(),
            effects: Vec::new(),
            stuck: None,
            seed,
        }
    }

    fn shown(&self) -> std::sync::MutexGuard<'_, Shown> {
        self.shown.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Run the runtime until nothing moves, then fold what the wire and the stream showed.
    fn settle(&mut self) {
        let wire = self.wire.clone();
        let rounds = self.rt.block_on(async move {
            let (mut last, mut quiet) = (u64::MAX, 0);
            for round in 0..STEP_ROUNDS {
                tokio::task::yield_now().await;
                let now = lock(&wire).activity;
                quiet = if now == last { quiet + 1 } else { 0 };
                last = now;
                if quiet >= QUIET_ROUNDS {
                    return round;
                }
            }
            STEP_ROUNDS
        });
        if rounds >= STEP_ROUNDS {
            self.stuck
                .get_or_insert(format!("kept its runtime busy for {STEP_ROUNDS} rounds without waiting"));
        }
        self.fold();
    }

    fn fold(&mut self) {
        let mut ex = lock(&self.wire);
        let mut shown = self.shown.lock().unwrap_or_else(|p| p.into_inner());
        // Events the watcher took: a bookmark moves the RV it resumes from; an object event does too, as
        // its stream's `Apply` or `Delete` shows (`tell`); the end of the initial events is where its
        // `InitDone` leaves it.
        for event in std::mem::take(&mut ex.taken) {
            match event {
                // Bookmarks of one watch only move forward; taken in the same step as an object event
                // the stream already showed, the later of the two stands.
                WatchEvent::Bookmark(rv) if shown.past_initial => shown.claimed = shown.claimed.max(rv),
                _ => {}
            }
        }
        self.effects.extend(ex.effects.drain(..));
        drop(ex);
        if let Some(store) = &self.store {
            let objects: Result<Vec<Object>, String> =
                store.state().iter().map(|cm| from_configmap(cm)).collect();
            match objects {
                Ok(objects) => self.cache = objects.into_iter().collect(),
                Err(e) => {
                    self.stuck.get_or_insert(format!("its store holds an object no server sent: {e}"));
                }
            }
        }
    }

    fn timer(&self) -> Option<(Timer, Millis)> {
        let _in_runtime = self.rt.enter();
        let now = Instant::now();
        let shown = self.shown();
        let backoff = shown.backoff.map(|(at, d)| at + d).filter(|t| *t > now).map(|t| (Timer::Backoff, t));
        drop(shown);
        let ex = lock(&self.wire);
        let watching = ex.open_request().is_some_and(|r| !r.is_list());
        let idle = Duration::from_secs(u64::from(self.config.watch_timeout_secs()) + 5);
        let idle = ex.awaiting_since.filter(|_| watching).map(|since| (Timer::WatchTimeout, since + idle));
        [backoff, idle]
            .into_iter()
            .flatten()
            .min_by_key(|(_, at)| *at)
            // Rounded up: a jittered delay is not a whole number of milliseconds, and advancing by less
            // than it would leave the timer armed with nothing left to wait.
            .map(|(timer, at)| {
                (timer, at.saturating_duration_since(now).as_nanos().div_ceil(1_000_000) as Millis)
            })
    }
}

/// Notifications for one event of the stream, folding it into what the client was told.
fn tell(
    shown: &mut Shown,
    ex: &mut Exchange,
    event: &Event<ConfigMap>,
    out: &mut Vec<Effect>,
) -> Result<(), String> {
    match event {
        Event::Init => shown.init = Some(Vec::new()),
        Event::InitApply(cm) => shown.init.get_or_insert_with(Vec::new).push(from_configmap(cm)?),
        Event::InitDone => {
            let items = shown.init.take().unwrap_or_default();
            let listed: Vec<_> = items.iter().map(|o| o.key).collect();
            let gone: Vec<_> = shown.told.keys().filter(|k| !listed.contains(k)).copied().collect();
            for key in gone {
                if let Some(last) = shown.told.remove(&key) {
                    out.push(Effect::Notify(Notification::DeletedFinalStateUnknown(last)));
                }
            }
            for o in items {
                out.push(Effect::Notify(upsert(&mut shown.told, o)));
            }
            // A streaming list ends at its initial-events-end bookmark; a LIST at its pages' RV.
            if let Some(rv) = ex.initial_end.take().or(shown.listed.take()) {
                shown.claimed = rv;
            }
            shown.listed = None;
            shown.past_initial = true;
        }
        Event::Apply(cm) => {
            let o = from_configmap(cm)?;
            out.push(Effect::Notify(upsert(&mut shown.told, o)));
            shown.claimed = o.rv;
        }
        Event::Delete(cm) => {
            let o = from_configmap(cm)?;
            shown.told.remove(&o.key);
            out.push(Effect::Notify(Notification::Delete(o)));
            shown.claimed = o.rv;
        }
    }
    Ok(())
}

fn upsert(told: &mut BTreeMap<listwatch_model::Key, Object>, new: Object) -> Notification {
    match told.insert(new.key, new) {
        None => Notification::Add(new),
        Some(old) => Notification::Update { old, new },
    }
}

impl Client for KubeRuntime {
    fn start(&mut self) {
        fastrand::seed(self.seed);
        let _in_runtime = self.rt.enter();
        let client = kube::Client::new(Wire { shared: self.wire.clone() }, "default");
        let api: Api<ConfigMap> = Api::namespaced(client, "default");
        let (reader, writer) = reflector::store::<ConfigMap>();
        self.shown().ready = vec![false; self.config.waiters];
        for i in 0..self.config.waiters {
            let (reader, shown, wire) = (reader.clone(), self.shown.clone(), self.wire.clone());
            self.rt.spawn(async move {
                if reader.wait_until_ready().await.is_ok() {
                    shown.lock().unwrap_or_else(|p| p.into_inner()).ready[i] = true;
                    lock(&wire).activity += 1;
                }
            });
        }
        let watcher = watcher::watcher(api, self.config.watcher_config());
        let (shown, wire) = (self.shown.clone(), self.wire.clone());
        let stream = if self.config.backoff {
            let backoff = Observed { inner: DefaultBackoff::default(), shown: shown.clone() };
            watcher.backoff(backoff).reflect(writer).boxed()
        } else {
            watcher.reflect(writer).boxed()
        };
        self.rt.spawn(async move {
            let mut stream = stream;
            while let Some(item) = stream.next().await {
                let mut out = Vec::new();
                let mut s = shown.lock().unwrap_or_else(|p| p.into_inner());
                let mut ex = lock(&wire);
                // An error the stream yields shows on the wire (the request that follows it); only its
                // events are folded.
                let result = match &item {
                    Ok(event) => tell(&mut s, &mut ex, event, &mut out),
                    Err(_) => Ok(()),
                };
                if let Err(e) = result {
                    s.foreign.get_or_insert(e);
                }
                drop(s);
                ex.activity += 1;
                ex.effects.extend(out);
            }
        });
        self.store = Some(reader);
        self.settle();
    }

    fn handle(&mut self, input: Input) {
        let wire = self.wire.clone();
        match input {
            Input::Message(message) => {
                if let listwatch_model::Message::List(Ok(page)) = &message {
                    self.shown().listed = Some(page.rv);
                }
                lock(&wire).answer(&message, &wire)
            }
            Input::Broken => lock(&wire).broken(),
            Input::Opened => lock(&wire).opened(&wire),
            Input::Timer(_) => {
                if let Some((_, after)) = self.timer() {
                    self.rt.block_on(tokio::time::advance(Duration::from_millis(after)));
                }
            }
        }
        self.settle();
    }

    fn poll_effect(&mut self) -> Option<Effect> {
        if self.effects.is_empty() {
            return None;
        }
        let effect = self.effects.remove(0);
        if let Effect::Send(Request::Watch { from: listwatch_model::WatchFrom::Rv(rv), .. }) = effect {
            // The RV a WATCH is sent from is the RV the client claims.
            let mut shown = self.shown();
            shown.claimed = rv;
            shown.past_initial = true;
        }
        if let Effect::Send(r) = effect {
            if r.sends_initial_events() || r.is_list() {
                self.shown().past_initial = false;
            }
        }
        Some(effect)
    }

    fn next_timer(&self) -> Option<(Timer, Millis)> {
        self.timer()
    }

    fn halted(&self) -> Option<String> {
        let foreign = self.shown().foreign.clone();
        self.stuck.clone().or(foreign.map(|e| format!("its stream yielded an object no server sent: {e}")))
    }

    fn resource_version(&self) -> Rev {
        self.shown().claimed
    }

    fn has_synced(&self) -> bool {
        let shown = self.shown();
        !shown.ready.is_empty() && shown.ready.iter().all(|r| *r)
    }

    fn cache(&self) -> &Cache {
        &self.cache
    }
}
