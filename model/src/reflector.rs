//! The client-go reflector as a sans-IO state machine (SEMANTICS C1–C10).
//!
//! Inputs are `handle_*` calls: a LIST result, a refused WATCH, a watch event, the end of a stream, a
//! timer that fired. Outputs are pulled with [`Reflector::poll_output`] (requests to send, a watch to
//! cancel, operations on the cache) and the armed timers are read with [`Reflector::next_timer`].
//! The driver owns every clock: a timer's duration counts from the step that armed it, and all timers a
//! reflector has armed at once were armed in the same step, so the shortest one always fires first.
//!
//! Call order: `start` once; after every `handle_*`, drain `poll_output` until it returns `None` and
//! re-read the armed timers.
//!
//! The correct reflector follows client-go at HEAD and additionally never lets its RV go backwards.

use std::collections::VecDeque;

use crate::api::{ApiError, ListResponse, ListRv, Request, WatchEnd, WatchEvent, WatchFrom};
use crate::cache::CacheOp;
use crate::flaw::{Flaw, Flaws};
use crate::guard;
use crate::types::Object;
use crate::types::{Millis, Rev};

/// Durations and options; client-go's defaults unless a driver sets others.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ReflectorConfig {
    /// C1: backoff starts at 800 ms, doubles, caps at 30 s and resets after 2 min without one.
    pub backoff_initial_ms: Millis,
    pub backoff_max_ms: Millis,
    pub backoff_reset_ms: Millis,
    /// C3: `timeoutSeconds` of every WATCH. Upstream draws it at random in 5–10 min per watch;
    /// simplified: the driver draws it once (from its seed) and the model uses it for every watch.
    pub watch_timeout_secs: u32,
    /// C5: a watch that ends sooner than this with no event is an error.
    pub short_watch_ms: Millis,
    /// C3: ask for bookmarks.
    pub bookmarks: bool,
    /// A9: how long a silently dead connection goes unnoticed: client-go's HTTP/2 health check pings
    /// after 30 s without a frame (`ReadIdleTimeout`) and gives the connection up 15 s later
    /// (`PingTimeout`, PR #95981). A live connection always answers the ping, so it never fires there.
    pub health_check_ms: Millis,
    /// A13: list in pages of this many items (client-go's pager, `WatchListPageSize`; 500 upstream)
    /// instead of one response. `None`: unpaginated. An `rv="0"` list is served whole anyway.
    pub page_size: Option<u8>,
    /// C10: how the reflector gets the state it starts from: a LIST, or a streaming list.
    pub mode: ListMode,
}

/// C10: `list-watch` (a LIST, then a WATCH from its RV) or `watch-list` (client-go's `WatchListClient`,
/// on by default since 1.35: the A12 watch with `sendInitialEvents=true`, whose initial events are
/// the list).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub enum ListMode {
    #[default]
    ListWatch,
    WatchList,
}

impl ListMode {
    pub const ALL: [ListMode; 2] = [ListMode::ListWatch, ListMode::WatchList];

    pub fn name(self) -> &'static str {
        match self {
            ListMode::ListWatch => "list-watch",
            ListMode::WatchList => "watch-list",
        }
    }

    pub fn parse(name: &str) -> Option<ListMode> {
        ListMode::ALL.into_iter().find(|m| m.name() == name)
    }
}

impl Default for ReflectorConfig {
    fn default() -> Self {
        ReflectorConfig {
            backoff_initial_ms: 800,
            backoff_max_ms: 30_000,
            backoff_reset_ms: 120_000,
            watch_timeout_secs: 300,
            short_watch_ms: 1_000,
            bookmarks: true,
            health_check_ms: 45_000,
            page_size: None,
            mode: ListMode::ListWatch,
        }
    }
}

/// What the reflector does after a backoff.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Next {
    Relist,
    Rewatch,
}

/// Where the reflector is in `ListAndWatch`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Phase {
    /// Created, nothing sent.
    Empty,
    /// A LIST is outstanding.
    Listing { rv: ListRv },
    /// A WATCH is outstanding or streaming.
    Watching { from: Rev, saw_event: bool, aged: bool },
    /// C10: a streaming list (A12) is outstanding or sending its initial events, requested at `rv`.
    Streaming { rv: ListRv, saw_event: bool, aged: bool },
    /// Waiting out a backoff before `Next`.
    Backoff { then: Next },
    /// `stop-on-close`: the consumer returned and will never watch again.
    Stopped,
    /// `spin-on-close`: the consumer reads a closed channel in a loop.
    Spinning,
}

/// A timer the reflector can arm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Timer {
    /// `spin-on-close`'s busy loop: reads again at once.
    Spin,
    /// C1: the backoff before the next attempt.
    Backoff,
    /// C5: the watch has lasted long enough not to count as "very short".
    WatchAged,
    /// C1: two minutes without a backoff reset it.
    BackoffReset,
    /// C3/C5: the client-side watch timeout.
    WatchTimeout,
    /// C8: a task waiting for the cache to sync looks again (client-go's `WaitForCacheSync` polls every
    /// 100 ms). The model reflector's readiness is its own and it never arms this; a client under test
    /// whose waiters poll does.
    Poll,
    /// A handler panicked and its notifications wait before they go on (client-go's
    /// `processorListener.run` sleeps one second before the next notification after a panic it
    /// recovered). Never armed by the model reflector, whose handlers do not panic.
    HandlerRetry,
}

impl Timer {
    /// The timers the model reflector arms ([`Timer::Poll`] and [`Timer::HandlerRetry`] are not).
    const ALL: [Timer; 5] =
        [Timer::Spin, Timer::Backoff, Timer::WatchAged, Timer::BackoffReset, Timer::WatchTimeout];

    fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

/// What the reflector asks its driver to do.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Output {
    /// Send a request on a new connection.
    Send(Request),
    /// Close the current connection (a watch the reflector gives up on).
    Cancel,
    /// Change the cache.
    Cache(CacheOp),
    /// Tell the user that this round of `ListAndWatch` failed (C12: client-go's watch error handler).
    Tell,
    /// A timer was (re)armed: it fires [`Reflector::duration`] from now unless disarmed first. A driver
    /// with a clock sets its deadline; the model's scheduler fires armed timers as actions instead.
    Arm(Timer),
}

#[derive(Debug, PartialEq, Eq)]
pub struct Reflector {
    phase: Phase,
    /// C4: the RV the reflector claims (`lastSyncResourceVersion`); `Rev(0)` before the first list.
    last_rv: Rev,
    /// E8: the last RV the reflector knows complete: a LIST's RV, a bookmark's (A8: every event up to
    /// it was sent), or the RV of an event that a later RV followed. Below `last_rv` while the last
    /// event's revision may still have events on their way.
    complete_rv: Rev,
    /// C8: informed by one full list.
    synced: bool,
    /// C2: the last RV is unavailable (410 / too large on a list): relist with `rv=""`.
    rv_unavailable: bool,
    backoff_step: u8,
    armed: u8,
    /// How long ago the armed timers were armed: the duration of the last one of them that fired. All
    /// timers armed at once are armed in the same step, so this is the reflector's time since then.
    fired_ms: Millis,
    outputs: VecDeque<Output>,
    /// A13: the items of the pages received so far of a paginated LIST; C10: the temporary store of
    /// a streaming list's initial events, in key order.
    pages: Vec<Object>,
    config: ReflectorConfig,
    flaws: Flaws,
}
crate::clone_by_field!(Reflector {
    phase,
    last_rv,
    complete_rv,
    synced,
    rv_unavailable,
    backoff_step,
    armed,
    fired_ms,
    outputs,
    pages,
    config,
    flaws
});

/// Everything but the settings, which are the same in every state of a run: a checker hashes a state
/// for every step it explores. Equal reflectors still hash alike.
impl std::hash::Hash for Reflector {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        let Reflector {
            phase,
            last_rv,
            complete_rv,
            synced,
            rv_unavailable,
            backoff_step,
            armed,
            fired_ms,
            outputs,
            pages,
            config: _,
            flaws: _,
        } = self;
        (phase, last_rv, complete_rv, synced, rv_unavailable, backoff_step, armed, fired_ms, outputs, pages)
            .hash(state);
    }
}

impl Reflector {
    pub fn new(config: ReflectorConfig, flaws: Flaws) -> Self {
        Reflector {
            phase: Phase::Empty,
            last_rv: Rev::ZERO,
            complete_rv: Rev::ZERO,
            synced: false,
            rv_unavailable: false,
            backoff_step: 0,
            armed: 0,
            fired_ms: 0,
            outputs: VecDeque::new(),
            pages: Vec::new(),
            config,
            flaws,
        }
    }

    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// The RV the reflector claims to have seen everything up to.
    pub fn resource_version(&self) -> Rev {
        self.last_rv
    }

    pub fn has_synced(&self) -> bool {
        self.synced
    }

    /// The next output, in order.
    pub fn poll_output(&mut self) -> Option<Output> {
        self.outputs.pop_front()
    }

    /// Armed timers with their durations counted from the step that armed them.
    pub fn timers(&self) -> impl Iterator<Item = (Timer, Millis)> + '_ {
        Timer::ALL.into_iter().filter(|t| self.armed & t.bit() != 0).map(|t| (t, self.duration(t)))
    }

    /// The timer that fires next, if any, and how long from now (the reflector's last step) it fires.
    pub fn next_timer(&self) -> Option<(Timer, Millis)> {
        if self.armed == 0 {
            return None;
        }
        self.timers().min_by_key(|(t, d)| (*d, *t)).map(|(t, d)| (t, d.saturating_sub(self.fired_ms)))
    }

    /// How long a silently dead connection goes unnoticed (A9), if it is noticed at all. The flaw has no
    /// health check: only the watch's own timeout ends a half-open watch.
    pub fn dead_connection_noticed_after(&self) -> Option<Millis> {
        if self.flaws.has(Flaw::NoIdleDetection) {
            return None;
        }
        Some(self.config.health_check_ms)
    }

    /// Whether any timer is armed.
    pub fn has_timer(&self) -> bool {
        self.armed != 0
    }

    /// How long a timer runs, counted from the step that armed it.
    pub fn duration(&self, timer: Timer) -> Millis {
        let c = &self.config;
        match timer {
            Timer::Spin => 0,
            // kubernetes#87794: `wait.Until(ListAndWatch, time.Second)`, one restart a second.
            Timer::Backoff if self.flaws.has(Flaw::FixedRetryPeriod) => 1_000,
            Timer::Backoff => {
                let factor = 1u64 << self.backoff_step.min(16);
                c.backoff_initial_ms.saturating_mul(factor).min(c.backoff_max_ms)
            }
            Timer::WatchAged => c.short_watch_ms,
            Timer::BackoffReset => c.backoff_reset_ms,
            Timer::WatchTimeout => Millis::from(c.watch_timeout_secs) * 1000,
            // Never armed here (see the variants).
            Timer::Poll | Timer::HandlerRetry => 0,
        }
    }

    fn arm(&mut self, timer: Timer) {
        // All timers armed at once are armed in the same step: a first one starts the count.
        if self.armed == 0 {
            self.fired_ms = 0;
        }
        self.armed |= timer.bit();
        self.outputs.push_back(Output::Arm(timer));
    }

    fn disarm(&mut self, timer: Timer) {
        self.armed &= !timer.bit();
    }

    /// C1: begin `ListAndWatch` with the first LIST, at `rv="0"` (C2), or with the first streaming
    /// list (C10: consistent, as the last RV is still unset).
    pub fn start(&mut self) {
        if self.phase == Phase::Empty {
            match self.config.mode {
                ListMode::ListWatch => self.list(ListRv::Any),
                ListMode::WatchList => self.stream(),
            }
        }
    }

    /// C10: the streaming list, from the last RV (`""` while it is unset or unavailable), into a new
    /// temporary store. The flaw keeps the temporary store of an earlier attempt that ended before
    /// its initial-events-end bookmark (kube-runtime 4.x).
    fn stream(&mut self) {
        let rv = if self.rv_unavailable || self.last_rv == Rev::ZERO {
            ListRv::Consistent
        } else {
            ListRv::NotOlderThan(self.last_rv)
        };
        if !self.flaws.has(Flaw::PartialInitialBuffer) {
            self.pages.clear();
        }
        self.phase = Phase::Streaming { rv, saw_event: false, aged: false };
        self.outputs.push_back(Output::Send(Request::WatchList {
            rv,
            timeout_secs: self.config.watch_timeout_secs,
            bookmarks: true,
        }));
        self.arm(Timer::WatchAged);
        self.arm(Timer::BackoffReset);
        self.arm(Timer::WatchTimeout);
    }

    /// C10: what follows a streaming list that failed before its initial-events-end bookmark:
    /// 410 or too large: at once again, with `rv=""`; 429, a refused connection or a status with
    /// `Retry-After` (C11): the same, after a backoff; a stream that ended after an event or a second: at once again; anything else (a
    /// very short stream, 500, 400 from a server without streaming lists): at once, the LIST of
    /// list-watch, whose relist RV follows C2.
    fn stream_failed(&mut self, error: Option<ApiError>, progress: bool) {
        self.leave_watch();
        match error {
            Some(ApiError::Expired | ApiError::TooLargeResourceVersion) => {
                self.rv_unavailable = true;
                self.stream();
            }
            Some(e) if e.watch_retriable() => self.backoff(Next::Relist),
            None if progress => self.stream(),
            _ => {
                let rv = self.relist_rv();
                self.list(rv);
            }
        }
    }

    /// C10: a temporary-store change from an initial event.
    fn buffer(&mut self, event: WatchEvent) {
        let (object, keep) = match event {
            WatchEvent::Added(o) | WatchEvent::Modified(o) => (o, true),
            WatchEvent::Deleted(o) => (o, false),
            _ => return,
        };
        match self.pages.binary_search_by_key(&object.key, |o| o.key) {
            Ok(i) if keep => self.pages[i] = object,
            Ok(i) => {
                self.pages.remove(i);
            }
            Err(i) if keep => self.pages.insert(i, object),
            Err(_) => {}
        }
    }

    fn list(&mut self, rv: ListRv) {
        self.phase = Phase::Listing { rv };
        self.pages.clear();
        let request = match self.config.page_size {
            // A13: the pager pages every list but `rv="0"`, which the cache serves whole.
            Some(limit) if rv != ListRv::Any => Request::ListPage { rv, limit, cont: None },
            _ => Request::List { rv },
        };
        self.outputs.push_back(Output::Send(request));
    }

    /// C2: the RV of a relist.
    fn relist_rv(&self) -> ListRv {
        if self.rv_unavailable {
            ListRv::Consistent
        } else if self.last_rv == Rev::ZERO || self.flaws.has(Flaw::RelistFromStaleCache) {
            // The flaw: `rv="0"` on a relist, served by whatever cache answers (kubernetes#59848).
            ListRv::Any
        } else {
            ListRv::NotOlderThan(self.last_rv)
        }
    }

    /// C3: watch from the last RV; E8: from the last RV known complete.
    ///
    /// A revision that changed several keys (a lease revoked) reaches a client as several events at one
    /// RV, one per line, and a watch from RV X sends only events above X (A3). A reflector that resumes
    /// from the RV of the last event it got loses the rest of that revision if the stream ended in the
    /// middle of it (kubernetes#110210, the flaw `resume-mid-revision`, which is client-go's rule).
    /// This reflector resumes from the last RV it knows complete instead, so the whole revision comes
    /// again; the cache guards drop the events it already applied (an upsert no newer than what the
    /// cache holds, a delete of a key it no longer holds). The cost is one revision's events sent
    /// twice, and only when the stream ended after an event with no later RV or bookmark behind it.
    ///
    /// C10: in watch-list mode too the re-watch is a plain WATCH. The flaw asks for the initial events
    /// again on every re-watch (kube-rs#1844, fixed by #1882): the whole state is sent again each time,
    /// as ordinary events, and what was deleted meanwhile is not among them.
    fn watch(&mut self) {
        let from = if self.flaws.has(Flaw::ResumeMidRevision) { self.last_rv } else { self.complete_rv };
        self.phase = Phase::Watching { from, saw_event: false, aged: false };
        let timeout_secs = self.config.watch_timeout_secs;
        let request = if self.config.mode == ListMode::WatchList && self.flaws.has(Flaw::RewatchInitialEvents)
        {
            Request::WatchList { rv: ListRv::NotOlderThan(from), timeout_secs, bookmarks: true }
        } else {
            Request::Watch { from: WatchFrom::Rv(from), timeout_secs, bookmarks: self.config.bookmarks }
        };
        self.outputs.push_back(Output::Send(request));
        self.arm(Timer::WatchAged);
        self.arm(Timer::BackoffReset);
        self.arm(Timer::WatchTimeout);
    }

    fn leave_watch(&mut self) {
        self.disarm(Timer::WatchAged);
        self.disarm(Timer::BackoffReset);
        self.disarm(Timer::WatchTimeout);
    }

    fn backoff(&mut self, then: Next) {
        self.leave_watch();
        self.phase = Phase::Backoff { then };
        self.arm(Timer::Backoff);
    }

    /// C12: `ListAndWatch` returned an error: the reflector hands it to its watch error handler, then
    /// backs off and lists again (`RunWithContext`). The flaw only logs it.
    fn failed(&mut self) {
        if !self.flaws.has(Flaw::UntoldFailures) {
            self.outputs.push_back(Output::Tell);
        }
        self.backoff(Next::Relist);
    }

    /// The LIST came back.
    pub fn handle_list_result(&mut self, result: Result<ListResponse, ApiError>) {
        let Phase::Listing { rv } = self.phase else { return };
        let mut pages = std::mem::take(&mut self.pages);
        let paging = !pages.is_empty();
        match result {
            Ok(ListResponse { items, cont: Some(cont), .. }) => {
                // A13: keep the page and ask for the next one, pinned to the first page's RV.
                pages.extend(items);
                self.pages = pages;
                let limit = self.config.page_size.unwrap_or(1);
                // A continue carries its own RV: the request names none (`rv=""`). The flaw keeps the
                // list's RV on it (kubernetes#85221).
                let page_rv = if self.flaws.has(Flaw::ContinueWithRv) { rv } else { ListRv::Consistent };
                self.outputs.push_back(Output::Send(Request::ListPage {
                    rv: page_rv,
                    limit,
                    cont: Some(cont),
                }));
            }
            Ok(mut list) => {
                pages.append(&mut list.items);
                let list = ListResponse { items: pages, ..list };
                // C2, C7: `store.Replace(items, rv)`, then `last_rv := rv` and watch from it.
                self.outputs.push_back(Output::Cache(CacheOp::Replace { items: list.items, rv: list.rv }));
                self.last_rv = list.rv;
                self.complete_rv = list.rv;
                self.synced = true;
                self.rv_unavailable = false;
                self.watch();
            }
            Err(ApiError::Expired) if paging => {
                // A13: a continue whose RV was compacted; client-go's pager falls back to one
                // unpaginated LIST at the requested RV, at once.
                self.outputs.push_back(Output::Send(Request::List { rv }));
            }
            Err(ApiError::TooLargeResourceVersion) if self.flaws.has(Flaw::RetryTooLargeRv) => {
                // The flaw: "too large" is an ordinary error; back off and ask for the same RV again.
                self.failed();
            }
            Err(ApiError::Expired | ApiError::TooLargeResourceVersion) if rv != ListRv::Consistent => {
                // C2: the RV is unavailable; retry at once with a consistent list.
                self.rv_unavailable = true;
                self.list(ListRv::Consistent);
            }
            // C11: every other failure ends `ListAndWatch`; its next round, after the backoff, lists
            // again at the same RV. C12: a 429 or a 503 with `Retry-After`, and a connection broken
            // before the answer, are the REST client's to send again (C1), no failure the reflector
            // sees or tells; the rest (401, 403, 404, 422, 500, 503, 504, a body cut short) it hands
            // its watch error handler first.
            Err(e) if e.list_resent() => self.backoff(Next::Relist),
            Err(_) => self.failed(),
        }
    }

    /// The WATCH request failed before a stream opened (C5, C10).
    pub fn handle_watch_refused(&mut self, error: ApiError) {
        if let Phase::Streaming { .. } = self.phase {
            self.stream_failed(Some(error), false);
            return;
        }
        if !matches!(self.phase, Phase::Watching { .. }) {
            return;
        }
        // C11: the REST client sends a WATCH answered with `Retry-After` again itself once that much
        // time has passed; the reflector backs off and re-watches after a refused connection or a 429
        // (`isWatchErrorRetriable`); any other status (401, 403, 404, 410, 422, 500, 503, 504) ends
        // `ListAndWatch`, whose next round, after the backoff, relists (`reflector.go`, `watch`).
        match error {
            e if e.watch_retriable() => self.backoff(Next::Rewatch),
            _ => self.failed(),
        }
    }

    /// One event arrived on a streaming list before its initial-events-end bookmark (C10): into the
    /// temporary store; the bookmark replaces the cache with it at its RV, and the stream goes on as a
    /// watch from there. The RV claimed does not move before that.
    fn handle_initial_event(&mut self, event: WatchEvent) {
        let Phase::Streaming { ref mut saw_event, aged, .. } = self.phase else { return };
        *saw_event = true;
        match event {
            WatchEvent::Added(_) | WatchEvent::Modified(_) | WatchEvent::Deleted(_) => self.buffer(event),
            WatchEvent::Bookmark(_) => {}
            WatchEvent::InitialEventsEnd(rv) => {
                let items = std::mem::take(&mut self.pages);
                self.outputs.push_back(Output::Cache(CacheOp::Replace { items, rv }));
                self.last_rv = rv;
                self.complete_rv = rv;
                self.synced = true;
                self.rv_unavailable = false;
                self.phase = Phase::Watching { from: rv, saw_event: true, aged };
            }
            WatchEvent::Error(error) => {
                if !self.flaws.has(Flaw::LeakWatchOnError) {
                    self.outputs.push_back(Output::Cancel);
                }
                self.stream_failed(Some(error), true);
            }
        }
    }

    /// One event arrived on the watch (C4).
    pub fn handle_watch_event(&mut self, event: WatchEvent) {
        if let Phase::Streaming { .. } = self.phase {
            self.handle_initial_event(event);
            return;
        }
        // C5's progress: a bookmark, or an event above the RV claimed. E8: the events of a revision
        // the re-watch gets again are not news, nor (simplified) a revision's later keys.
        let news = match event {
            WatchEvent::Bookmark(_) | WatchEvent::InitialEventsEnd(_) | WatchEvent::Error(_) => true,
            _ => event.rv().is_some_and(|rv| rv > self.last_rv),
        };
        let Phase::Watching { ref mut saw_event, .. } = self.phase else { return };
        *saw_event |= news;
        match event {
            WatchEvent::Added(_) | WatchEvent::Modified(_) | WatchEvent::Deleted(_) => {
                self.outputs.push_back(Output::Cache(CacheOp::Apply(event)));
            }
            WatchEvent::Bookmark(_) | WatchEvent::InitialEventsEnd(_) => {}
            WatchEvent::Error(error) => {
                // C5: the handler returns on the ERROR event and closes the stream.
                if !self.flaws.has(Flaw::LeakWatchOnError) {
                    self.outputs.push_back(Output::Cancel);
                }
                match error {
                    e if e.retry_after() => self.backoff(Next::Rewatch),
                    _ => self.backoff(Next::Relist),
                }
                return;
            }
        }
        // C4 records every event's RV; the correct reflector never lets it go backwards.
        if let Some(rv) = event.rv() {
            // E8: a later RV completes the revision before it; a bookmark completes its own (A8).
            let bookmark = matches!(event, WatchEvent::Bookmark(_) | WatchEvent::InitialEventsEnd(_));
            if rv > self.last_rv {
                self.complete_rv = self.last_rv;
            }
            if bookmark && rv >= self.last_rv {
                self.complete_rv = rv;
            }
            self.last_rv = guard::advance(self.last_rv, rv);
        }
    }

    /// The watch stream ended without an ERROR event (C5, C9).
    pub fn handle_watch_ended(&mut self, end: WatchEnd) {
        if let Phase::Streaming { saw_event, aged, .. } = self.phase {
            // C10: a stream that ended before its initial-events-end bookmark.
            self.stream_failed(None, saw_event || aged);
            return;
        }
        let Phase::Watching { saw_event, aged, .. } = self.phase else { return };
        if end == WatchEnd::ClientTimeout && self.flaws.has(Flaw::RelistOnTimeout) {
            // The flaw: the client-side timeout is taken for a failure and answered with a full LIST.
            self.leave_watch();
            let rv = self.relist_rv();
            self.list(rv);
            return;
        }
        if self.flaws.has(Flaw::StopOnClose) {
            self.leave_watch();
            self.phase = Phase::Stopped;
            return;
        }
        if self.flaws.has(Flaw::SpinOnClose) {
            self.leave_watch();
            self.phase = Phase::Spinning;
            self.arm(Timer::Spin);
            return;
        }
        if !saw_event && !aged {
            // C5: "very short watch": ended within a second with no event; an error, so relist.
            self.backoff(Next::Relist);
            return;
        }
        self.leave_watch();
        self.watch();
    }

    /// A timer fired.
    pub fn handle_timeout(&mut self, timer: Timer) {
        if self.armed & timer.bit() == 0 {
            return;
        }
        // The timers still armed were armed with this one: their time now counts from its end. Any
        // timer armed from now on into an empty set starts the count afresh (`arm`).
        self.fired_ms = self.duration(timer);
        self.disarm(timer);
        match timer {
            Timer::Spin => self.arm(Timer::Spin),
            Timer::Backoff => {
                self.backoff_step = self.backoff_step.saturating_add(1).min(8);
                match self.phase {
                    // C10: every new `ListAndWatch` starts with a streaming list in watch-list mode.
                    Phase::Backoff { then: Next::Relist } if self.config.mode == ListMode::WatchList => {
                        self.stream()
                    }
                    Phase::Backoff { then: Next::Relist } => {
                        let rv = self.relist_rv();
                        self.list(rv);
                    }
                    Phase::Backoff { then: Next::Rewatch } => self.watch(),
                    _ => {}
                }
            }
            Timer::WatchAged => {
                if let Phase::Watching { ref mut aged, .. } | Phase::Streaming { ref mut aged, .. } =
                    self.phase
                {
                    *aged = true;
                }
            }
            Timer::BackoffReset => self.backoff_step = 0,
            Timer::WatchTimeout => {
                self.outputs.push_back(Output::Cancel);
                self.handle_watch_ended(WatchEnd::ClientTimeout);
            }
            Timer::Poll | Timer::HandlerRetry => {}
        }
    }
}
