//! What a reflector under test shows the harness, from inside its own tasks: the events it applied,
//! its cache, its readiness and its timers. kube-runtime reports through it ([`crate::kube_runtime`]);
//! so does a user's own reflector (`harness/examples/own_reflector.rs`).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::runtime::utils::Backoff;
use kube::runtime::watcher::Event;
use listwatch_model::{Effect, Key, Notification, Object, Rev, Timer};
use tokio::time::Instant;

use crate::exchange::{lock, Shared};

type CacheFn = Box<dyn Fn() -> Vec<ConfigMap> + Send>;

/// What the adapter folds from the reflector's reports and the wire.
#[derive(Default)]
pub(crate) struct Shown {
    /// The objects the reported events stand for, folded.
    pub told: BTreeMap<Key, Object>,
    /// `InitApply` objects since `Init`.
    pub init: Option<Vec<Object>>,
    /// The RV the client claims (see [`crate::client`]).
    pub claimed: Rev,
    /// The RV of the list in progress: where `InitDone` leaves the client.
    pub listed: Option<Rev>,
    /// Whether the open watch is past its initial events (a plain WATCH always is).
    pub past_initial: bool,
    /// Per task awaiting readiness: whether it saw it.
    pub ready: Vec<bool>,
    /// The timer armed last: which, when and for how long.
    pub timer: Option<(Timer, Instant, Duration)>,
    /// Why something reported holds what no server sent, if it does.
    pub foreign: Option<String>,
    /// Reads the reflector's cache.
    pub cache: Option<CacheFn>,
}

/// The reflector's handle on the harness. Cheap to clone; every call is synchronous.
#[derive(Clone)]
pub struct Show {
    pub(crate) shown: Arc<Mutex<Shown>>,
    pub(crate) wire: Shared,
}

impl std::fmt::Debug for Show {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Show")
    }
}

impl Show {
    pub(crate) fn lock(&self) -> MutexGuard<'_, Shown> {
        self.shown.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// How the harness reads the reflector's cache (the contents its users see), after every step.
    pub fn cache_from(&self, read: impl Fn() -> Vec<ConfigMap> + Send + 'static) {
        self.lock().cache = Some(Box::new(read));
    }

    /// `n` tasks wait for readiness from the start; the client is ready once each called
    /// [`Self::ready`].
    pub fn readiness_waiters(&self, n: usize) {
        self.lock().ready = vec![false; n];
    }

    /// Waiting task `i` saw the reflector ready.
    pub fn ready(&self, i: usize) {
        if let Some(r) = self.lock().ready.get_mut(i) {
            *r = true;
        }
        lock(&self.wire).activity += 1;
    }

    /// A timer the reflector armed: it fires `after` from now. Every delay a reflector waits on must be
    /// reported, or time never passes for it.
    pub fn armed(&self, timer: Timer, after: Duration) {
        self.lock().timer = Some((timer, Instant::now(), after));
    }

    /// Sleep for a backoff the harness sees ([`Self::armed`] and a tokio sleep).
    pub async fn sleep(&self, after: Duration) {
        self.armed(Timer::Backoff, after);
        tokio::time::sleep(after).await;
    }

    /// A pass-through `Backoff` (for `WatchStreamExt::backoff`) whose delays the harness sees.
    pub fn backoff<B: Backoff>(&self, inner: B) -> ShownBackoff<B> {
        ShownBackoff { inner, show: self.clone() }
    }

    /// The reflector told its user that an attempt to list or watch failed (kube-runtime: an error
    /// item of its stream), judged by failures-told (C12): before it tries again.
    pub fn told_failure(&self) {
        let mut ex = lock(&self.wire);
        ex.activity += 1;
        ex.effects.push_back(Effect::Tell);
    }

    /// One event the reflector applied to its cache, in kube-runtime's terms: `Apply` and `Delete` on a
    /// watch, `Init`, `InitApply` and `InitDone` around a (re)list.
    pub fn event(&self, event: &Event<ConfigMap>) {
        let mut shown = self.lock();
        let mut ex = lock(&self.wire);
        let mut out = Vec::new();
        if let Err(e) = tell(&mut shown, &mut ex.initial_end, event, &mut out) {
            shown.foreign.get_or_insert(e);
        }
        ex.activity += 1;
        ex.effects.extend(out);
    }
}

/// A `Backoff` whose delays the harness sees: the same delays, the same resets.
pub struct ShownBackoff<B> {
    inner: B,
    show: Show,
}

impl<B> std::fmt::Debug for ShownBackoff<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ShownBackoff")
    }
}

impl<B: Iterator<Item = Duration>> Iterator for ShownBackoff<B> {
    type Item = Duration;
    fn next(&mut self) -> Option<Duration> {
        let d = self.inner.next();
        if let Some(d) = d {
            self.show.armed(Timer::Backoff, d);
        }
        d
    }
}

impl<B: Backoff> Backoff for ShownBackoff<B> {
    fn reset(&mut self) {
        self.inner.reset();
    }
}

/// Notifications for one event, folding it into what the client was told; the claimed RV moves with it.
fn tell(
    shown: &mut Shown,
    initial_end: &mut Option<Rev>,
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
            if let Some(rv) = initial_end.take().or(shown.listed.take()) {
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

fn upsert(told: &mut BTreeMap<Key, Object>, new: Object) -> Notification {
    match told.insert(new.key, new) {
        None => Notification::Add(new),
        Some(old) => Notification::Update { old, new },
    }
}

/// The model object a ConfigMap the reflector holds stands for, or why it is not one a server sent.
pub(crate) fn from_configmap(cm: &ConfigMap) -> Result<Object, String> {
    let json = serde_json::to_value(cm).map_err(|e| format!("a ConfigMap that does not serialize: {e}"))?;
    listwatch_wire::object::from_json(&json)
}
