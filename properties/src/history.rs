//! The history of each client that several guarantees judge by: the RV it claimed, the watch stream it
//! is reading, what it owes after an ending or a failure, how long it has been stale, folded from what
//! was observed. The rules it checks as it folds (a claim that goes back, an event out of order, a
//! request too soon after a failure, ...) are found here and handed to the [`crate::Monitor`], which
//! keeps them with what each guarantee finds in its own history.
//!
//! It reads only [`Observed`] events and [`Observations`]: never a component's internals.

use listwatch_model::{
    ApiError, ClientId, Key, ListRv, Message, Millis, Object, Observed, Request, Rev, Uid, WatchEvent,
    WatchFrom,
};

pub use crate::key_set::KeySet;
use crate::observations::{Environment, Observations, Truth};
use crate::property::{Property, Violation};
use crate::truth::cache_equals_truth;

/// Requests a client may make, once the environment is quiet, before it must be at rest.
pub const QUIET_REQUESTS_MAX: u8 = 3;
/// C1: the shortest backoff after a failure (client-go's initial 800 ms).
pub const BACKOFF_FLOOR_MS: Millis = 800;
/// C1: the backoff a client must reach by doubling (client-go's and kube-runtime's cap, 30 s).
pub const BACKOFF_CAP_MS: Millis = 30_000;
/// C1: backoffs in a row after which the floor, doubled each time, has reached the cap.
pub const BACKOFFS_TO_CAP: u8 = 6;
/// C1: requests a client may send without its RV moving and without the backoff floor of time passing.
/// The correct reflector needs at most four: a LIST that gets 410, its consistent retry, a WATCH, and a
/// re-watch after that watch broke having made progress.
pub const REQUESTS_WITHOUT_PROGRESS_MAX: u8 = 4;
/// C5: a watch that ends sooner than this with no event is an error ("very short watch").
pub const SHORT_WATCH_MS: Millis = 1_000;
/// How long, in model time, a client may stay stale once the environment is quiet: four of the longest
/// backoffs (30 s, C1). A client that waits for its 5-10 minute watch timeout to notice what it could
/// have seen at once is caught; noticing a dead connection takes client-go 45 s (A9).
pub const STALE_MS_MAX: Millis = 2 * 60 * 1_000;

/// The watch stream a client is reading.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Stream {
    pub from: Rev,
    pub last: Rev,
    /// E8: the keys whose events at `last` arrived on this stream (several for a multi-key revision).
    pub at_last: KeySet,
    /// A watch from "now" (`rv=""`/`"0"`) starts with synthetic ADDED events for the current state (A3),
    /// which are not the store's writes at their RVs.
    pub synthetic: bool,
    /// A12: a streaming list before its initial-events-end bookmark: the events are the state at the
    /// bookmark's RV, in key order, not the store's writes.
    pub initial: bool,
    /// A line of this stream did not decode: the event it carried, which the client never got.
    pub garbled: Option<WatchEvent>,
}

/// The request a client has outstanding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outstanding {
    List {
        rv: ListRv,
    },
    Watch,
    /// C10: a streaming list (A12) before its initial-events-end bookmark; a WATCH after it.
    WatchList {
        rv: ListRv,
    },
}

/// How a watch ended that obliges the next request to be a re-watch (the table of
/// [`Property::NoNeedlessRelist`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ending {
    /// The server closed the stream cleanly (its timeout, a cache relist) after progress.
    Closed,
    /// The client closed it itself (its own timeout), with no error.
    ClientClosed,
    /// The connection broke after progress.
    Broke,
    /// 429 or a refused connection, before or after the stream opened.
    Throttled(ApiError),
}

impl Ending {
    fn describe(self) -> String {
        match self {
            Ending::Closed => "its watch was closed cleanly".into(),
            Ending::ClientClosed => "it closed its own watch (client-side timeout)".into(),
            Ending::Broke => "its watch broke after making progress".into(),
            Ending::Throttled(e) => format!("its watch got {e}"),
        }
    }
}

/// A failure after which C1 asks for a backoff.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Failure {
    ListFailed(ApiError),
    ListBroke,
    WatchRefused(ApiError),
    ErrorEvent(ApiError),
    /// C5: a watch that ended within a second with no event.
    ShortWatch,
    /// A watch (or a streaming list) whose connection broke within a second with no event.
    WatchBroke,
    /// A watch line that did not decode.
    Undecodable,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::ListFailed(e) => write!(f, "its LIST failed with {e}"),
            Failure::ListBroke => write!(f, "its LIST broke"),
            Failure::WatchRefused(e) => write!(f, "its WATCH was refused with {e}"),
            Failure::ErrorEvent(e) => write!(f, "an ERROR event ({e})"),
            Failure::ShortWatch => write!(f, "its watch ended within a second with no event"),
            Failure::WatchBroke => write!(f, "its watch broke within a second with no event"),
            Failure::Undecodable => write!(f, "a watch line that did not decode"),
        }
    }
}

/// What the monitor remembers of one client.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ClientHistory {
    pub claimed: Rev,
    /// After the last step, something delivered to the client still waited to be read: its claim may
    /// move up to what it received (`latest`) when it reads, in the step that re-watches.
    pub unread: bool,
    /// E8: the highest RV the client received (a LIST's, an event's, a bookmark's), the last RV it
    /// knows complete (a LIST's, a bookmark's, or an event's that a later RV followed), and the keys
    /// whose events at `latest` arrived while it is not known complete.
    pub latest: Rev,
    pub complete: Rev,
    pub open_keys: KeySet,
    pub stream: Option<Stream>,
    pub outstanding: Option<Outstanding>,
    /// The current watch delivered an event or lasted past [`SHORT_WATCH_MS`].
    pub watch_progress: bool,
    /// Model time since the current WATCH was sent, counted up to [`SHORT_WATCH_MS`].
    pub watch_ms: Millis,
    /// The ending the next request must answer with a re-watch.
    pub owe_rewatch: Option<Ending>,
    /// The outstanding WATCH resumes after such an ending.
    pub resumed: bool,
    /// The current watch got a bookmark past its last event (A8).
    pub bookmarked: bool,
    pub last_error: Option<ApiError>,
    /// C1: a failure was seen and the floor has not passed since: the next request must wait.
    pub owe_backoff: Option<Failure>,
    /// Model time since that failure, counted up to the backoff owed.
    pub since_failure_ms: Millis,
    /// C1: backoffs waited out in a row, with no progress between them (a LIST answered, a watch event
    /// or bookmark, a watch that lasted, the RV moving), up to [`BACKOFFS_TO_CAP`]: each failure after
    /// them owes twice the wait of the one before.
    pub backoffs: u8,
    /// The one LIST allowed at once after a failed one, at this RV: consistent after a LIST got 410 or
    /// too large (C2); the whole list at the requested RV after a continued page got 410 (A13's pager).
    pub may_retry: Option<ListRv>,
    /// C10: a streaming list failed before its initial-events-end bookmark other than with 429 or a
    /// refused connection: one request may follow at once, a streaming list again or a LIST.
    pub may_restart: bool,
    /// A page with more to follow arrived (A13): the next request may continue that LIST, requested
    /// at this RV.
    pub paging: Option<ListRv>,
    /// The outstanding request was sent after a backoff was waited out.
    pub backed_off: bool,
    /// Requests since the RV last moved or the floor of time last passed.
    pub requests_without_progress: u8,
    /// Model time towards the next reset of that count.
    pub rate_ms: Millis,
    /// The last request got an answer (a server saw it): only answered requests count against the
    /// quiet bound, so that a schedule that never routes anything proves nothing.
    pub answered: bool,
    pub quiet_requests: u8,
    /// After the last step the environment was quiet and settled and the cache differed from the store.
    pub stale: bool,
    /// Model time spent stale that way, counted up to past [`STALE_MS_MAX`].
    pub stale_ms: Millis,
    /// The last step ended a stale spell.
    pub recovered: bool,
}

/// What is remembered of every client's history, and the violations found folding the last step,
/// which the [`crate::Monitor`] takes.
#[derive(Debug, Default, PartialEq, Eq, Hash)]
pub struct History {
    pub clients: Vec<ClientHistory>,
    /// Found folding the step in progress, in the order found; empty between steps.
    found: Vec<Violation>,
}
listwatch_model::clone_by_field!(History { clients, found });

impl History {
    /// The history of a system just started, before anything was observed.
    pub fn new(obs: &impl Observations) -> Self {
        History { clients: obs.client_ids().map(|_| ClientHistory::default()).collect(), found: Vec::new() }
    }

    fn fail(&mut self, property: Property, client: Option<ClientId>, detail: String) {
        self.found.push(Violation { property, client, detail });
    }

    /// What folding found since the last call.
    pub(crate) fn take_found(&mut self) -> Vec<Violation> {
        std::mem::take(&mut self.found)
    }

    /// What is remembered of `client`.
    pub fn client(&self, client: ClientId) -> &ClientHistory {
        &self.clients[usize::from(client.0)]
    }

    /// E8: whether the client's claimed RV is a revision it has received only part of, as far as it
    /// can tell: its last RV received, with no later RV or bookmark behind it.
    pub fn open_revision(&self, obs: &impl Observations, c: ClientId) -> bool {
        let m = self.client(c);
        m.complete < m.latest && m.latest == obs.client(c).resource_version
    }

    /// E8: the keys the client's open revision changed whose events have not reached it yet.
    pub fn pending_keys(&self, obs: &impl Observations, c: ClientId) -> Vec<Key> {
        if !self.open_revision(obs, c) {
            return Vec::new();
        }
        let m = self.client(c);
        obs.truth().keys_written_at(m.latest).into_iter().filter(|k| !m.open_keys.contains(*k)).collect()
    }

    /// Fold one observed event; `obs` shows the state after the step.
    pub(crate) fn observe_one(&mut self, obs: &impl Observations, o: &Observed) {
        let client = match o {
            Observed::Sent { client, .. }
            | Observed::Received { client, .. }
            | Observed::Cancelled { client }
            | Observed::LeftOpen { client }
            | Observed::Broken { client }
            | Observed::TimerFired { client, .. }
            | Observed::Garbled { client, .. }
            | Observed::SilenceNoticed { client, .. }
            | Observed::WaitedInVain { client, .. }
            | Observed::Notified { client, .. } => *client,
            _ => return,
        };
        let i = usize::from(client.0);
        match o {
            Observed::Sent { request, .. } => self.sent(obs, client, request),
            Observed::Received { message, .. } => {
                self.clients[i].answered = true;
                self.received(obs, client, message);
            }
            Observed::Garbled { event, .. } => {
                let c = &mut self.clients[i];
                c.answered = true;
                if let Some(stream) = c.stream.as_mut() {
                    stream.garbled.get_or_insert(*event);
                }
                // client-go takes a line it cannot decode as an internal error (C5, C1).
                c.failed(Failure::Undecodable);
            }
            // A connection left open: the client has given it up, for a reason of its own that it did
            // not show (no-leaked-connection judges the leak). It owes nothing for how it ended.
            Observed::LeftOpen { .. } => {
                let c = &mut self.clients[i];
                c.stream = None;
                c.outstanding = None;
            }
            Observed::Cancelled { .. } => {
                let c = &mut self.clients[i];
                let undecodable = c.stream.as_ref().is_some_and(|s| s.garbled.is_some());
                match c.outstanding {
                    // A client that closes a watch after a line it could not decode ends it as an
                    // error (C5: an internal error), not as a timeout.
                    Some(Outstanding::Watch) if undecodable => {}
                    Some(Outstanding::Watch) => c.owe_rewatch = Some(Ending::ClientClosed),
                    Some(Outstanding::WatchList { .. }) => c.may_restart = true,
                    _ => {}
                }
                c.stream = None;
                c.outstanding = None;
            }
            Observed::Broken { .. } => {
                let c = &mut self.clients[i];
                match c.outstanding {
                    Some(Outstanding::Watch) if c.watch_progress => c.owe_rewatch = Some(Ending::Broke),
                    Some(Outstanding::Watch) => c.failed(Failure::WatchBroke),
                    Some(Outstanding::WatchList { .. }) => c.stream_ended_early(Failure::WatchBroke),
                    Some(Outstanding::List { .. }) => c.failed(Failure::ListBroke),
                    None => {}
                }
                c.stream = None;
                c.outstanding = None;
            }
            Observed::TimerFired { after_ms, .. }
            | Observed::SilenceNoticed { after_ms, .. }
            | Observed::WaitedInVain { after_ms, .. } => self.time_passed(client, *after_ms),
            _ => {}
        }
    }

    /// Time passes for a client only when one of its timers fires, its transport finds a silent
    /// connection dead (A9), or a server made its request wait out a freshness bound (A12).
    fn time_passed(&mut self, client: ClientId, after_ms: Millis) {
        let c = &mut self.clients[usize::from(client.0)];
        if matches!(c.outstanding, Some(Outstanding::Watch | Outstanding::WatchList { .. })) {
            c.watch_ms = (c.watch_ms + after_ms).min(SHORT_WATCH_MS);
            c.watch_progress |= c.watch_ms >= SHORT_WATCH_MS;
            if c.watch_progress {
                c.progressed();
            }
        }
        if let Some(why) = c.owe_backoff {
            let owed = c.backoff_owed_ms(why);
            c.since_failure_ms = (c.since_failure_ms + after_ms).min(owed);
            if c.since_failure_ms >= owed {
                c.owe_backoff = None;
                c.backed_off = true;
                if !why.paced_by_server() {
                    c.backoffs = (c.backoffs + 1).min(BACKOFFS_TO_CAP);
                }
            }
        }
        c.rate_ms = (c.rate_ms + after_ms).min(BACKOFF_FLOOR_MS);
        if c.rate_ms >= BACKOFF_FLOOR_MS {
            c.rate_ms = 0;
            c.requests_without_progress = 0;
        }
        if c.stale {
            c.stale_ms = (c.stale_ms + after_ms).min(STALE_MS_MAX + 1);
            if c.stale_ms > STALE_MS_MAX {
                let detail = format!(
                    "stale for more than {} s of model time since the environment went quiet",
                    STALE_MS_MAX / 1000
                );
                self.fail(Property::StaleBounded, Some(client), detail);
            }
        }
    }

    fn sent(&mut self, obs: &impl Observations, client: ClientId, request: &Request) {
        let i = usize::from(client.0);
        let c = &mut self.clients[i];
        if let (Some(rv), Request::ListPage { cont: Some(_), .. }) = (c.paging, request) {
            // A13: the next page of the LIST in progress, not a new request for the backoff, relist
            // and convergence rules.
            c.outstanding = Some(Outstanding::List { rv });
            c.answered = false;
            return;
        }
        c.paging = None;
        let owed = c.owe_rewatch.take();
        let retry = std::mem::take(&mut c.may_retry);
        let restart = std::mem::take(&mut c.may_restart);
        let backoff = c.owe_backoff.take();
        c.backed_off = backoff.is_none() && std::mem::take(&mut c.backed_off);
        c.resumed = owed.is_some() && !request.is_list();
        c.bookmarked = false;
        c.requests_without_progress = c.requests_without_progress.saturating_add(1);
        let burst = c.requests_without_progress;
        let (claimed, complete, latest, unread) = (c.claimed, c.complete, c.latest, c.unread);
        match request {
            Request::List { rv } | Request::ListPage { rv, .. } => {
                c.outstanding = Some(Outstanding::List { rv: *rv });
                c.stream = None;
            }
            Request::Watch { from, .. } => {
                c.outstanding = Some(Outstanding::Watch);
                c.watch_progress = false;
                c.watch_ms = 0;
                let (start, synthetic) = match from {
                    WatchFrom::Rv(rv) => (*rv, false),
                    WatchFrom::Now => (Rev::ZERO, true),
                };
                let at_last = KeySet::default();
                c.stream = Some(Stream {
                    from: start,
                    last: start,
                    synthetic,
                    initial: false,
                    at_last,
                    garbled: None,
                });
            }
            Request::WatchList { rv, .. } => {
                c.outstanding = Some(Outstanding::WatchList { rv: *rv });
                c.watch_progress = false;
                c.watch_ms = 0;
                let at_last = KeySet::default();
                c.stream = Some(Stream {
                    from: Rev::ZERO,
                    last: Rev::ZERO,
                    synthetic: true,
                    initial: true,
                    at_last,
                    garbled: None,
                });
            }
        }
        match (owed, request) {
            (Some(ending), Request::List { rv } | Request::ListPage { rv, .. }) => {
                let detail = format!("sent LIST {rv} after {}", ending.describe());
                self.fail(Property::NoNeedlessRelist, Some(client), detail);
            }
            // C10: asking for the initial events again is a relist streamed.
            (Some(ending), Request::WatchList { rv, .. }) => {
                let detail =
                    format!("sent a streaming list (sendInitialEvents) {rv} after {}", ending.describe());
                self.fail(Property::NoNeedlessRelist, Some(client), detail);
            }
            // E8: resuming from the last RV known complete, below the claim, is how a client gets the
            // rest of a revision whose events it may have got only in part.
            (Some(ending), Request::Watch { from: WatchFrom::Rv(rv), .. })
                if *rv != claimed
                    && !(*rv == complete && complete < latest)
                    && !(unread && claimed < *rv && *rv <= latest) =>
            {
                let detail =
                    format!("re-watched from RV {rv} after {}, claiming RV {claimed}", ending.describe());
                self.fail(Property::NoNeedlessRelist, Some(client), detail);
            }
            _ => {}
        }
        let consistent_retry = match request {
            Request::List { rv } | Request::ListPage { rv, cont: None, .. } => restart || retry == Some(*rv),
            Request::WatchList { .. } => restart,
            _ => false,
        };
        // What is owed is weighed when the request goes: a success during the wait lowers it.
        let owed_now = backoff.map(|why| (why, self.clients[i].backoff_owed_ms(why)));
        let short = owed_now.filter(|(_, owed)| self.clients[i].since_failure_ms < *owed).map(|(why, _)| why);
        if let (Some(why), false) = (short, consistent_retry) {
            let c = &self.clients[i];
            let (owed, waited) = (c.backoff_owed_ms(why), c.since_failure_ms);
            let detail = match c.backoffs {
                _ if waited < BACKOFF_FLOOR_MS => format!("sent {request} less than {BACKOFF_FLOOR_MS} ms after {why}"),
                n => format!(
                    "sent {request} {waited} ms after {why}, the failure after {n} backoff{} in a row with no \
                     progress between them: it owed {owed} ms (C1: the backoff doubles up to {} s)",
                    if n == 1 { "" } else { "s" },
                    BACKOFF_CAP_MS / 1000
                ),
            };
            self.fail(Property::Backoff, Some(client), detail);
        }
        if burst > REQUESTS_WITHOUT_PROGRESS_MAX {
            let detail = format!("{burst} requests without its RV moving or {BACKOFF_FLOOR_MS} ms passing");
            self.fail(Property::Backoff, Some(client), detail);
        }
        let c = &mut self.clients[i];
        let answered = std::mem::take(&mut c.answered);
        let env = obs.environment();
        // The one LIST allowed at once after a failed one (C2's consistent retry, A13's pager fallback
        // after an expired continue, C10's restart) goes on with the same relist: not another request.
        if answered && env.quiet && env.caught_up && !consistent_retry {
            c.quiet_requests = c.quiet_requests.saturating_add(1);
            if c.quiet_requests > QUIET_REQUESTS_MAX {
                let detail = format!(
                    "{} requests since the environment went quiet without the RV moving, none reaching an \
                     open watch with a cache equal to the store",
                    c.quiet_requests
                );
                self.fail(Property::Converges, Some(client), detail);
            }
        }
    }

    fn received(&mut self, obs: &impl Observations, client: ClientId, message: &Message) {
        let c = &mut self.clients[usize::from(client.0)];
        match message {
            Message::List(Ok(list)) => {
                // A13: only the last page completes the LIST.
                let rv = match c.outstanding.take() {
                    Some(Outstanding::List { rv }) => rv,
                    _ => ListRv::Consistent,
                };
                c.last_error = None;
                c.paging = list.cont.is_some().then_some(rv);
                if list.cont.is_none() {
                    // A complete LIST past the claim moves the client's RV: the request it sends next, in
                    // the same step and before its claim is seen, is not one more without progress. Only
                    // past the last complete LIST too, so that a client answered the same RV again and again
                    // without ever claiming it still counts its requests.
                    if list.rv > c.claimed.max(c.complete) {
                        c.requests_without_progress = 0;
                    }
                    (c.latest, c.complete, c.open_keys) = (list.rv, list.rv, KeySet::default());
                    c.progressed();
                }
            }
            Message::List(Err(e)) => {
                let rv = match c.outstanding {
                    Some(Outstanding::List { rv }) => Some(rv),
                    _ => None,
                };
                c.outstanding = None;
                c.last_error = Some(*e);
                // C2: the RV is unavailable; a consistent LIST may follow at once, once.
                let unavailable = matches!(e, ApiError::Expired | ApiError::TooLargeResourceVersion);
                let continued = c.paging.take().is_some() && *e == ApiError::Expired;
                c.may_retry = match rv {
                    Some(rv) if continued => Some(rv),
                    Some(rv) if unavailable && rv != ListRv::Consistent => Some(ListRv::Consistent),
                    _ => None,
                };
                c.failed(Failure::ListFailed(*e));
            }
            Message::WatchRefused(e) => {
                let streaming = matches!(c.outstanding, Some(Outstanding::WatchList { .. }));
                c.outstanding = None;
                c.last_error = Some(*e);
                // C11: a status with `Retry-After` is sent again by the REST client itself.
                let throttled = e.watch_retriable();
                if throttled && !streaming {
                    c.owe_rewatch = Some(Ending::Throttled(*e));
                }
                c.may_restart = streaming && !throttled;
                c.failed(Failure::WatchRefused(*e));
            }
            Message::Event(WatchEvent::Error(e)) => {
                let streaming = matches!(c.outstanding, Some(Outstanding::WatchList { .. }));
                c.last_error = Some(*e);
                c.stream = None;
                c.outstanding = None;
                if e.retry_after() && !streaming {
                    c.owe_rewatch = Some(Ending::Throttled(*e));
                }
                c.may_restart = streaming && !e.retry_after();
                c.failed(Failure::ErrorEvent(*e));
            }
            Message::End(_) => {
                match c.outstanding {
                    Some(Outstanding::Watch) if c.watch_progress => c.owe_rewatch = Some(Ending::Closed),
                    Some(Outstanding::Watch) => c.failed(Failure::ShortWatch),
                    Some(Outstanding::WatchList { .. }) => c.stream_ended_early(Failure::ShortWatch),
                    _ => {}
                }
                c.stream = None;
                c.outstanding = None;
            }
            Message::Event(event) => self.watch_event(obs, client, event),
        }
    }

    fn watch_event(&mut self, obs: &impl Observations, client: ClientId, event: &WatchEvent) {
        let i = usize::from(client.0);
        let Some(rv) = event.rv() else { return };
        let key = match event {
            WatchEvent::Added(o) | WatchEvent::Modified(o) | WatchEvent::Deleted(o) => Some(o.key),
            WatchEvent::Bookmark(_) | WatchEvent::InitialEventsEnd(_) | WatchEvent::Error(_) => None,
        };
        if let Some(Stream { initial: true, .. }) = self.clients[i].stream {
            self.initial_event(client, event);
            return;
        }
        let c = &self.clients[i];
        let claimed = c.claimed;
        let is_object = key.is_some();
        // C5's progress: a bookmark, or an event above the last RV received (E8: a revision received
        // again is not news).
        let news = !is_object || rv > c.latest;
        // E8: the open revision (the last RV received, not known complete) may bring more keys at
        // that RV; and a stream resumed from the last complete RV gets it again, whose events the
        // cache guards drop where it holds them.
        let resumed = c.stream.is_some_and(|s| s.from == c.complete && s.from < claimed);
        let same_revision = c.complete < c.latest
            && rv == c.latest
            && key.is_some_and(|k| resumed || !c.open_keys.contains(k));
        if is_object && rv <= claimed && !same_revision {
            let detail = format!("applied {event} at or below its RV {claimed}");
            self.fail(Property::NoRvRegression, Some(client), detail);
        }
        self.track_completeness(client, rv, key);
        let Some(stream) = self.clients[i].stream else { return };
        if let Some(lost) = stream.garbled {
            // The line that did not decode carried an event; a client that reads on takes the stream
            // with that event missing.
            let detail = format!("took {event} from a stream after a line that did not decode ({lost} lost)");
            self.fail(Property::WatchReliable, Some(client), detail);
        }
        // E8: several events may share an RV (a multi-key revision), each key once; a bookmark may
        // carry the RV of the last event sent (A8).
        let repeated = key.is_some_and(|k| rv == stream.last && stream.at_last.contains(k));
        if rv < stream.last || repeated || (is_object && rv <= stream.from) {
            let detail = format!("{event} after RV {} on a watch from {}", stream.last, stream.from);
            self.fail(Property::WatchOrdered, Some(client), detail);
        } else if !stream.synthetic {
            if let Some(wrong) = skipped(obs, &stream, rv, is_object) {
                self.fail(Property::WatchReliable, Some(client), format!("{event} arrived before {wrong}"));
            } else if let Some(wrong) = not_the_write(obs, event) {
                self.fail(Property::WatchReliable, Some(client), wrong);
            }
        }
        let c = &mut self.clients[i];
        c.bookmarked |= !is_object && rv > stream.last;
        let at_last = match key {
            Some(k) if rv == stream.last => {
                let mut keys = stream.at_last;
                keys.insert(k);
                keys
            }
            Some(k) => KeySet::of(k),
            None if rv == stream.last => stream.at_last,
            None => KeySet::default(),
        };
        c.stream = Some(Stream { last: rv.max(stream.last), at_last, ..stream });
        c.watch_progress |= news;
        if news {
            c.progressed();
        }
    }

    /// A12, C10: an event of a streaming list before its initial-events-end bookmark. The initial
    /// events are the state at the bookmark's RV, not writes: they move nothing the client claims. The
    /// bookmark is a full list reaching the client at its RV (C8), and the stream goes on as a watch
    /// from there.
    fn initial_event(&mut self, client: ClientId, event: &WatchEvent) {
        let c = &mut self.clients[usize::from(client.0)];
        c.watch_progress = true;
        let WatchEvent::InitialEventsEnd(rv) = *event else { return };
        c.last_error = None;
        c.progressed();
        (c.latest, c.complete, c.open_keys) = (rv, rv, KeySet::default());
        c.outstanding = Some(Outstanding::Watch);
        let at_last = KeySet::default();
        c.stream =
            Some(Stream { from: rv, last: rv, synthetic: false, initial: false, at_last, garbled: None });
    }

    /// E8: what the client knows complete, from the RVs it received.
    fn track_completeness(&mut self, client: ClientId, rv: Rev, key: Option<Key>) {
        let c = &mut self.clients[usize::from(client.0)];
        match key {
            Some(k) if rv > c.latest => (c.complete, c.latest, c.open_keys) = (c.latest, rv, KeySet::of(k)),
            Some(k) if rv == c.latest => c.open_keys.insert(k),
            None if rv >= c.latest => (c.complete, c.latest, c.open_keys) = (rv, rv, KeySet::default()),
            _ => {}
        }
    }

    /// Per-client checks on the state after a step.
    pub(crate) fn after_step(&mut self, obs: &impl Observations, client: ClientId, env: Environment) {
        let i = usize::from(client.0);
        let view = obs.client(client);
        let c = &mut self.clients[i];
        if view.resource_version < c.claimed {
            let detail = format!("claimed RV {} after {}", view.resource_version, c.claimed);
            self.fail(Property::NoRvRegression, Some(client), detail);
        }
        let c = &mut self.clients[i];
        // A request that moved the RV forward made progress: only requests without progress count
        // against the quiet bound (a reflector whose watches keep timing out, each after one event, still
        // catches up) and the rate bound.
        if view.resource_version > c.claimed {
            c.quiet_requests = 0;
            c.requests_without_progress = 0;
            c.progressed();
        }
        c.claimed = view.resource_version;
        c.unread = view.unread;
        // Stale time: once the environment is quiet, model time that passes while nothing is in flight
        // and the cache differs from the store counts, until the cache equals it. The comparison is
        // made only where its answer is used.
        let c = &mut self.clients[i];
        let was_stale = std::mem::take(&mut c.stale) || c.stale_ms > 0;
        c.recovered = false;
        let judge_rest = c.quiet_requests > 0 && view.watch_at_rest;
        if !env.quiet {
            c.stale_ms = 0;
        }
        if !(judge_rest || env.quiet && (env.settled || was_stale)) {
            return;
        }
        let equal = cache_equals_truth(obs, client);
        let c = &mut self.clients[i];
        if equal && judge_rest {
            c.quiet_requests = 0;
        }
        if !env.quiet {
            c.stale_ms = 0;
        } else if equal {
            c.recovered = was_stale;
            c.stale_ms = 0;
        } else if env.settled {
            c.stale = true;
        }
        // Whether its cache is right yet or not: a client that holds a connection nothing will ever
        // answer, with nothing scheduled, would never hear of another change (A9 with no health check).
        let dead_end = view.connected && view.between_events && !view.watch_at_rest && !view.scheduled;
        if env.quiet && env.settled && dead_end {
            let detail = "holds a connection nothing will ever answer, with nothing scheduled".into();
            self.fail(Property::StaleBounded, Some(client), detail);
        }
    }
}

/// What a watch stream skipped before an event at `rv`, if anything: every key written at the stream's
/// last RV (E8: several for a transaction) before it moves past it or a bookmark says it was all sent,
/// and the next write after it before an object event past it.
fn skipped(obs: &impl Observations, stream: &Stream, rv: Rev, is_object: bool) -> Option<String> {
    let truth = obs.truth();
    let past = rv > stream.last || !is_object;
    if past && stream.last > stream.from {
        let missing = truth.keys_written_at(stream.last).into_iter().find(|k| !stream.at_last.contains(*k));
        if let Some(k) = missing {
            return Some(format!("the write of {k} at {}", stream.last));
        }
    }
    if rv <= stream.last {
        return None;
    }
    let next = truth.next_write_after(stream.last);
    let gap = if is_object { next != Some(rv) } else { next.is_some_and(|n| n <= rv) };
    gap.then(|| next.map_or("nothing".to_string(), |n| format!("the write at {n}")))
}

/// What is wrong with an event that does not say what the store did at its RV, if anything: an ADDED
/// must carry the incarnation created there, a MODIFIED the new value of an older one, a DELETED the
/// last value stamped with the deletion RV (A6).
fn not_the_write(obs: &impl Observations, event: &WatchEvent) -> Option<String> {
    let truth = obs.truth();
    let (rv, key) = match event {
        WatchEvent::Added(o) | WatchEvent::Modified(o) | WatchEvent::Deleted(o) => (o.rv, o.key),
        WatchEvent::Bookmark(_) | WatchEvent::InitialEventsEnd(_) | WatchEvent::Error(_) => return None,
    };
    let now = truth.object_at(key, rv);
    let right = match (event, now) {
        (WatchEvent::Added(o), Some(t)) => t == *o && o.uid == Uid(rv),
        (WatchEvent::Modified(o), Some(t)) => t == *o && o.uid != Uid(rv),
        (WatchEvent::Deleted(o), None) => {
            let before = truth.object_at(key, Rev(rv.0.saturating_sub(1)));
            before.is_some_and(|b| Object { rv, ..b } == *o)
        }
        _ => false,
    };
    if right {
        return None;
    }
    let store = now.map_or_else(|| format!("{key} absent"), |t| t.to_string());
    Some(format!("{event} is not what the store did at RV {rv} ({store} there)"))
}

impl Failure {
    /// A failure a client's REST layer retries at a pace it was told, a bounded number of times, before
    /// its reflector's backoff takes over: those owe the floor and do not double the backoff. A 429
    /// carries `Retry-After: 1` (A14), and so may a 503 (A15; `checkWait` retries any 5xx with it). A request whose connection broke before an answer came is no
    /// server failing: client-go's REST client sends a GET again itself as if told `Retry-After: 1`
    /// (a LIST on a connection reset, a probable EOF or a lost HTTP/2 connection; a WATCH on a probable
    /// EOF or a timeout: `rest/request.go`, the `isErrRetryableFunc` of `request` and `Watch`, and
    /// `withRetry.IsNextRetry`, up to `maxRetries` = 10; read at v0.37.2). Growth is judged where a
    /// server answers with a failure or refuses the connection: the relist storm it exists to prevent.
    fn paced_by_server(self) -> bool {
        match self {
            Failure::ListFailed(e) | Failure::WatchRefused(e) | Failure::ErrorEvent(e) => e.retry_after(),
            Failure::ListBroke | Failure::WatchBroke => true,
            Failure::ShortWatch | Failure::Undecodable => false,
        }
    }
}

impl ClientHistory {
    /// C1: a failure; the next request must wait the backoff owed.
    fn failed(&mut self, why: Failure) {
        self.owe_backoff = Some(why);
        self.since_failure_ms = 0;
    }

    /// C1, the rule `backoff` judges growth by: after a failure, the next request waits at least the
    /// floor doubled once for each backoff waited out in a row before it with no progress between
    /// them, up to the cap; a failure the server paces (`Retry-After`) owes the floor. Both reference
    /// clients wait at least this: client-go's backoff (800 ms doubling to 30 s, jitter adding up to
    /// as much again, reset only after two minutes without a backoff) and kube-runtime's
    /// `DefaultBackoff` (the same numbers, jitter added on top, reset on any success).
    pub fn backoff_owed_ms(&self, why: Failure) -> Millis {
        if why.paced_by_server() {
            return BACKOFF_FLOOR_MS;
        }
        (BACKOFF_FLOOR_MS << self.backoffs).min(BACKOFF_CAP_MS)
    }

    /// Something succeeded: the next failure owes the floor again.
    fn progressed(&mut self) {
        self.backoffs = 0;
    }

    /// C10: a streaming list ended (or broke, or was given up) before its initial-events-end bookmark.
    /// client-go tries again at once; within a second and with no event it is a very short watch,
    /// and client-go falls back to a LIST at once.
    fn stream_ended_early(&mut self, why: Failure) {
        if !self.watch_progress {
            self.failed(why);
        }
        self.may_restart = true;
    }
}
