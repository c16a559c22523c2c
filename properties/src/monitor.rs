//! A monitor of each reflector's history: the few facts a step-by-step judgement needs (the RV it
//! claimed, the watch stream it is reading, what it owes after a clean end), folded from what was
//! observed. Its first violation is kept, so that a checker sees it as part of the state.
//!
//! It reads only the observation surface: `Observed` events, client views, the store's ground truth.

use std::collections::BTreeSet;

use listwatch_model::{
    ApiError, ClientId, Message, Notification, Observed, Request, Rev, System, Timer, Uid, WatchEvent,
    WatchFrom,
};

use crate::property::{Property, Violation};
use crate::truth::cache_equals_truth;

/// Steps in a row that take no time and make no progress before it is a busy loop.
pub const BUSY_STEPS_MAX: u8 = 8;
/// Requests a reflector may make, once the environment is quiet, before it must be at rest.
pub const QUIET_REQUESTS_MAX: u8 = 3;

/// The watch stream a client is reading.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Stream {
    pub from: Rev,
    pub last: Rev,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outstanding {
    List,
    Watch,
}

/// What the monitor remembers of one client.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ClientMonitor {
    pub claimed: Rev,
    /// Incarnations the cache has notified as deleted.
    pub deleted: BTreeSet<Uid>,
    pub stream: Option<Stream>,
    pub outstanding: Option<Outstanding>,
    /// The current watch delivered an event or lasted past the short-watch threshold.
    pub watch_progress: bool,
    /// A clean end (or client timeout) of a watch with progress: the next request must be a WATCH.
    pub owe_rewatch: bool,
    /// The outstanding WATCH resumes after a clean end.
    pub resumed: bool,
    pub last_error: Option<ApiError>,
    pub busy_steps: u8,
    /// The last request got an answer (a server saw it): only answered requests count against the
    /// quiet bound, so that a schedule that never routes anything proves nothing.
    pub answered: bool,
    pub quiet_requests: u8,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Monitor {
    pub clients: Vec<ClientMonitor>,
    pub violation: Option<Violation>,
}

impl Monitor {
    /// A monitor of a system just started, given what starting it observed.
    pub fn new(sys: &System, seen: &[Observed]) -> Self {
        let mut m = Monitor {
            clients: sys.client_ids().map(|_| ClientMonitor::default()).collect(),
            violation: None,
        };
        m.observe(sys, seen);
        m
    }

    fn fail(&mut self, property: Property, client: ClientId, detail: String) {
        if self.violation.is_none() {
            self.violation = Some(Violation { property, client: Some(client), detail });
        }
    }

    /// Fold one step's observations; `sys` is the state after the step.
    pub fn observe(&mut self, sys: &System, seen: &[Observed]) {
        for o in seen {
            self.observe_one(sys, o);
        }
        for client in sys.client_ids() {
            self.after_step(sys, client);
        }
    }

    fn observe_one(&mut self, sys: &System, o: &Observed) {
        let client = match o {
            Observed::Sent { client, .. }
            | Observed::Received { client, .. }
            | Observed::Cancelled { client }
            | Observed::Broken { client }
            | Observed::TimerFired { client, .. }
            | Observed::Notified { client, .. } => *client,
            Observed::Wrote { .. }
            | Observed::Ingested { .. }
            | Observed::Routed { .. }
            | Observed::ManagerDone { .. } => return,
        };
        let i = usize::from(client.0);
        match o {
            Observed::Sent { request, .. } => self.sent(sys, client, request),
            Observed::Received { message, .. } => {
                self.clients[i].busy_steps = 0;
                self.clients[i].answered = true;
                self.received(sys, client, message);
            }
            Observed::Cancelled { .. } => {
                let c = &mut self.clients[i];
                c.stream = None;
                c.outstanding = None;
            }
            Observed::Broken { .. } => {
                let c = &mut self.clients[i];
                if c.outstanding == Some(Outstanding::Watch) {
                    c.owe_rewatch = c.watch_progress;
                }
                c.stream = None;
                c.outstanding = None;
            }
            Observed::TimerFired { timer, after_ms, .. } => {
                let c = &mut self.clients[i];
                c.busy_steps = if *after_ms == 0 { c.busy_steps.saturating_add(1) } else { 0 };
                match timer {
                    Timer::WatchAged => c.watch_progress = true,
                    Timer::WatchTimeout => c.owe_rewatch = true,
                    _ => {}
                }
                let busy = c.busy_steps;
                if busy > BUSY_STEPS_MAX {
                    let detail = format!("{busy} zero-delay steps in a row without a request or event");
                    self.fail(Property::NoBusyLoop, client, detail);
                }
            }
            Observed::Notified { notification, .. } => match notification {
                Notification::Delete(obj) | Notification::DeletedFinalStateUnknown(obj) => {
                    self.clients[i].deleted.insert(obj.uid);
                }
                Notification::Add(obj) | Notification::Update { new: obj, .. } => {
                    if self.clients[i].deleted.contains(&obj.uid) {
                        let detail = format!("{obj} was deleted from the cache and is back");
                        self.fail(Property::NoResurrectedDelete, client, detail);
                    }
                }
            },
            Observed::Wrote { .. }
            | Observed::Ingested { .. }
            | Observed::Routed { .. }
            | Observed::ManagerDone { .. } => {}
        }
    }

    fn sent(&mut self, sys: &System, client: ClientId, request: &Request) {
        let i = usize::from(client.0);
        let c = &mut self.clients[i];
        c.busy_steps = 0;
        let owed = c.owe_rewatch;
        c.owe_rewatch = false;
        c.resumed = false;
        match request {
            Request::List { rv } => {
                c.outstanding = Some(Outstanding::List);
                c.stream = None;
                if owed {
                    let detail = format!("sent LIST {rv} after its watch ended cleanly");
                    self.fail(Property::NoNeedlessRelist, client, detail);
                }
            }
            Request::Watch { from, .. } => {
                c.outstanding = Some(Outstanding::Watch);
                c.watch_progress = false;
                c.resumed = owed;
                let start = match from {
                    WatchFrom::Rv(rv) => *rv,
                    WatchFrom::Now => Rev::ZERO,
                };
                c.stream = Some(Stream { from: start, last: start });
            }
        }
        let c = &mut self.clients[i];
        let answered = std::mem::take(&mut c.answered);
        if answered && sys.quiet() && sys.servers_caught_up() {
            c.quiet_requests = c.quiet_requests.saturating_add(1);
            if c.quiet_requests > QUIET_REQUESTS_MAX {
                let detail = format!(
                    "{} requests since the environment went quiet without the RV moving, none reaching an \
                     open watch with a cache equal to the store",
                    c.quiet_requests
                );
                self.fail(Property::Converges, client, detail);
            }
        }
    }

    fn received(&mut self, sys: &System, client: ClientId, message: &Message) {
        let i = usize::from(client.0);
        match message {
            Message::List(Ok(_)) => {
                let c = &mut self.clients[i];
                c.outstanding = None;
                c.last_error = None;
            }
            Message::List(Err(e)) | Message::WatchRefused(e) => {
                let c = &mut self.clients[i];
                c.outstanding = None;
                c.last_error = Some(*e);
            }
            Message::End(_) => {
                let c = &mut self.clients[i];
                if c.outstanding == Some(Outstanding::Watch) {
                    c.owe_rewatch = c.watch_progress;
                }
                c.stream = None;
                c.outstanding = None;
            }
            Message::Event(WatchEvent::Error(e)) => {
                let c = &mut self.clients[i];
                c.last_error = Some(*e);
                c.stream = None;
            }
            Message::Event(event) => self.watch_event(sys, client, event),
        }
    }

    fn watch_event(&mut self, sys: &System, client: ClientId, event: &WatchEvent) {
        let i = usize::from(client.0);
        let Some(rv) = event.rv() else { return };
        let claimed = self.clients[i].claimed;
        let is_object = !matches!(event, WatchEvent::Bookmark(_));
        if is_object && rv <= claimed {
            self.fail(
                Property::NoRvRegression,
                client,
                format!("applied {event} at or below its RV {claimed}"),
            );
        }
        let Some(stream) = self.clients[i].stream else { return };
        if rv <= stream.last {
            let detail = format!("{event} after RV {} on a watch from {}", stream.last, stream.from);
            self.fail(Property::WatchOrdered, client, detail);
        } else {
            let next = sys.store().next_watched_write_after(stream.last);
            let skipped = if is_object { next != Some(rv) } else { next.is_some_and(|n| n <= rv) };
            if skipped {
                let missed = next.map_or("nothing".to_string(), |n| format!("the write at {n}"));
                self.fail(Property::WatchReliable, client, format!("{event} arrived before {missed}"));
            }
        }
        let c = &mut self.clients[i];
        c.stream = Some(Stream { last: rv.max(stream.last), ..stream });
        c.watch_progress = true;
    }

    /// Per-client checks on the state after a step.
    fn after_step(&mut self, sys: &System, client: ClientId) {
        let i = usize::from(client.0);
        let view = sys.view(client);
        if view.resource_version < self.clients[i].claimed {
            let detail = format!("claimed RV {} after {}", view.resource_version, self.clients[i].claimed);
            self.fail(Property::NoRvRegression, client, detail);
        }
        // A request that moved the RV forward made progress: only requests without progress count
        // against the quiet bound (a reflector whose watches keep timing out, each after one event, still
        // catches up).
        if view.resource_version > self.clients[i].claimed {
            self.clients[i].quiet_requests = 0;
        }
        self.clients[i].claimed = view.resource_version;
        if self.clients[i].quiet_requests > 0 && view.watch_at_rest && cache_equals_truth(sys, client) {
            self.clients[i].quiet_requests = 0;
        }
    }
}
