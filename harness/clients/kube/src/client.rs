//! A reflector under test ([`UnderTest`]) as a [`Client`] the model system steps.
//!
//! It runs on its own current-thread tokio runtime with paused time. After every input the runtime runs
//! until nothing moves (no request, no body poll, no report for several rounds); time never passes then.
//! Time passes only at a [`Input::Timer`] step, by exactly the delay of the timer that fires: the one the
//! reflector reported last through [`Show::armed`], or its watch idle timeout, which the adapter keeps
//! while the reflector waits on an open watch body with nothing to read.
//!
//! What it shows is what the properties judge (observations only):
//! - the requests it sent; the RV it claims is the RV of its last WATCH, moved by every event it applied
//!   and every bookmark it took after its initial list, and set to the list's RV when it reports
//!   `InitDone` (it watches from there next);
//! - its cache, as (key, uid, rv, content), read after every step;
//! - readiness, as the tasks that wait for it see it: ready once every one has;
//! - the notifications its reported events stand for: `Apply` an add or an update, `Delete` a delete,
//!   `InitDone` a replace by the objects of `InitApply` since `Init`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use listwatch_model::{
    Cache, Client, Effect, Input, Message, Millis, Object, Request, Rev, Timer, WatchEvent, WatchFrom,
};
use tokio::runtime::Runtime;
use tokio::time::Instant;

use crate::exchange::{lock, Exchange, Shared, Wire};
use crate::show::{from_configmap, Show, Shown};
use crate::under_test::UnderTest;

/// Rounds of the runtime with nothing moving before it counts as at rest.
const QUIET_ROUNDS: u32 = 4;
/// Rounds one step may take before the client counts as spinning (a verdict, not a hang).
const STEP_ROUNDS: u32 = 20_000;

/// A reflector under test, stepped by the model system.
pub struct Harnessed<U> {
    under_test: U,
    rt: Runtime,
    show: Show,
    cache: Cache,
    effects: Vec<Effect>,
    /// Why the client could not be stepped further, if it could not.
    stuck: Option<String>,
    seed: u64,
}

impl<U: UnderTest> std::fmt::Debug for Harnessed<U> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Harnessed").field("under_test", &self.under_test.name()).finish_non_exhaustive()
    }
}

impl<U: UnderTest> Harnessed<U> {
    /// `under_test`, not started yet; `seed` seeds its randomness.
    pub fn new(under_test: U, seed: u64) -> Self {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .expect("a current-thread runtime builds without IO");
        let wire: Shared = Arc::new(Mutex::new(Exchange::default()));
        let show = Show { shown: Arc::new(Mutex::new(Shown::default())), wire };
        Harnessed { under_test, rt, show, cache: Cache::default(), effects: Vec::new(), stuck: None, seed }
    }

    fn wire(&self) -> &Shared {
        &self.show.wire
    }

    /// Run the runtime until nothing moves, then fold what the wire and the reflector showed.
    fn settle(&mut self) {
        let wire = self.wire().clone();
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
        let mut ex = lock(&self.show.wire);
        let mut shown = self.show.lock();
        // Bookmarks the reflector took move the RV it resumes from (only forward: taken in the same step
        // as an object event it already reported, the later of the two stands). Object events move it
        // as the reflector reports applying them.
        for event in std::mem::take(&mut ex.taken) {
            if let WatchEvent::Bookmark(rv) = event {
                if shown.past_initial {
                    shown.claimed = shown.claimed.max(rv);
                }
            }
        }
        self.effects.extend(ex.effects.drain(..));
        drop(ex);
        let objects: Option<Result<Vec<Object>, String>> =
            shown.cache.as_ref().map(|read| read().iter().map(from_configmap).collect());
        drop(shown);
        match objects {
            Some(Ok(objects)) => self.cache = objects.into_iter().collect(),
            Some(Err(e)) => {
                self.stuck.get_or_insert(format!("its cache holds an object no server sent: {e}"));
            }
            None => {}
        }
    }

    fn timer(&self) -> Option<(Timer, Millis)> {
        let _in_runtime = self.rt.enter();
        let now = Instant::now();
        let armed = self.show.lock().timer.map(|(t, at, d)| (t, at + d)).filter(|(_, at)| *at > now);
        let ex = lock(self.wire());
        let watching = ex.open_request().is_some_and(|r| !r.is_list());
        let idle = (self.under_test.watch_idle_timeout().zip(ex.awaiting_since))
            .filter(|_| watching)
            .map(|(idle, since)| (Timer::WatchTimeout, since + idle));
        [armed, idle]
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

impl<U: UnderTest> Client for Harnessed<U> {
    fn start(&mut self) {
        self.under_test.seed(self.seed);
        let _in_runtime = self.rt.enter();
        let client = kube::Client::new(Wire { shared: self.wire().clone() }, "default");
        self.under_test.spawn(client, self.show.clone());
        self.settle();
    }

    fn handle(&mut self, input: Input) {
        let wire = self.wire().clone();
        match &input {
            Input::Message(Message::List(Ok(page))) => self.show.lock().listed = Some(page.rv),
            Input::Timer(_) => {
                if let Some((_, after)) = self.timer() {
                    self.rt.block_on(tokio::time::advance(Duration::from_millis(after)));
                }
            }
            _ => {}
        }
        for op in listwatch_wire::http::of_input(&input) {
            lock(&wire).apply(op, &wire);
        }
        self.settle();
    }

    fn poll_effect(&mut self) -> Option<Effect> {
        if self.effects.is_empty() {
            return None;
        }
        let effect = self.effects.remove(0);
        if let Effect::Send(r) = effect {
            let mut shown = self.show.lock();
            match r {
                // The RV a WATCH is sent from is the RV the client claims.
                Request::Watch { from: WatchFrom::Rv(rv), .. } => {
                    shown.claimed = rv;
                    shown.past_initial = true;
                }
                r if r.sends_initial_events() || r.is_list() => shown.past_initial = false,
                _ => {}
            }
        }
        Some(effect)
    }

    fn next_timer(&self) -> Option<(Timer, Millis)> {
        self.timer()
    }

    fn unread(&self) -> bool {
        let ex = lock(self.wire());
        ex.unread > 0 || ex.end_unread
    }

    fn halted(&self) -> Option<String> {
        let foreign = self.show.lock().foreign.clone();
        self.stuck.clone().or(foreign.map(|e| format!("it reported an object no server sent: {e}")))
    }

    fn resource_version(&self) -> Rev {
        self.show.lock().claimed
    }

    fn has_synced(&self) -> bool {
        let shown = self.show.lock();
        !shown.ready.is_empty() && shown.ready.iter().all(|r| *r)
    }

    fn cache(&self) -> &Cache {
        &self.cache
    }
}
