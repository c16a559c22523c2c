//! client-go as a [`Client`] the model system steps. Every input becomes the HTTP operations the
//! shared wire spells it as (`listwatch_wire::http`), sent to the Go program as commands; a timer that
//! fires is a `fire`. After each command the program has settled (nothing in its bubble can move) and
//! reports what client-go did and shows, which is all the properties judge:
//! - the requests it sent (decoded by the shared wire into the model's; one the server could not parse
//!   is answered 400 at once, as a real API server does, and never reaches a server), the connections
//!   it closed, and every notification its informer's handler got (add, update, delete, delete with
//!   final state unknown);
//! - the RV it claims: the informer's `LastSyncResourceVersion()`, the RV client-go resumes from; for
//!   the RetryWatcher, which keeps its RV to itself, the RV of the last event its consumer got, moved by
//!   every bookmark the RetryWatcher read (the rule kube-runtime's adapter follows too);
//! - readiness: several tasks call `WaitForCacheSync`, and the client is ready once every one returned;
//! - its cache: the informer's store; the delay of its next timer; whether lines wait unread.

use std::collections::VecDeque;

use listwatch_model::{Cache, Client, Effect, Input, Millis, Notification, Object, Rev, Timer, WatchEvent};
use listwatch_wire::http::{of_input, Http};
use listwatch_wire::object::{from_json, rv_of};
use listwatch_wire::request::{self, BadRequest};
use listwatch_wire::response::status_body;
use serde_json::{json, Value};

use crate::config::ClientGo;
use crate::process::{Halt, Kind, Process, Reply};

/// How long client-go takes to notice a silently dead connection (A9): its HTTP/2 transport's health
/// check, a read idle timeout of 30 s and a ping timeout of 15 s. The shim's transport is the harness;
/// it breaks the connection after this long, as that health check would, in the releases that have it
/// ([`ClientGo::has_health_check`]).
const HEALTH_CHECK_MS: Millis = 45_000;

/// client-go's informer under test.
#[derive(Debug)]
pub struct ClientGoClient {
    config: ClientGo,
    seed: u64,
    process: Option<Process>,
    effects: VecDeque<Effect>,
    cache: Cache,
    rv: Rev,
    ready: Vec<bool>,
    /// The informer's `HasSynced()`.
    informer_synced: bool,
    timer: Option<(Timer, Millis)>,
    unread: bool,
    /// The current request got its headers: a further `Open` is nothing and needs no round trip.
    opened: bool,
    /// The event each `line` command of the session carried, by its index (the program reports the
    /// indices of the lines read), and the highest RV of a bookmark read.
    lines: Vec<Option<WatchEvent>>,
    bookmark_read: Rev,
    halted: Option<String>,
    gone: Option<String>,
    /// The program's consumer can be held or released now, and whether it is held.
    holdable: bool,
    held: bool,
    /// Keys with deltas the consumer has not popped.
    queued: bool,
    /// A handler behind `,slow-handler`'s gate has notifications waiting at it.
    behind: bool,
}

impl ClientGoClient {
    /// `config` for one reflector of a world; `seed` seeds client-go's randomness (`math/rand`).
    pub fn new(config: ClientGo, seed: u64) -> Self {
        ClientGoClient {
            config,
            seed,
            process: None,
            effects: VecDeque::new(),
            cache: Cache::default(),
            rv: Rev(0),
            ready: Vec::new(),
            informer_synced: false,
            timer: None,
            unread: false,
            opened: false,
            lines: Vec::new(),
            bookmark_read: Rev(0),
            halted: None,
            gone: None,
            holdable: false,
            held: false,
            queued: false,
            behind: false,
        }
    }

    /// Send one command and fold its reply; a failure leaves the client gone.
    fn command(&mut self, command: Value) {
        if self.gone.is_some() {
            return;
        }
        let Some(process) = self.process.as_mut() else { return };
        match process.call(&command) {
            Ok(Reply::Halted(halt, _)) => {
                self.process = None;
                self.effects.clear();
                match halt {
                    // The client then takes steps of no time and no progress for ever, as the model's
                    // `spin-on-close` does. With the program's own log on, where it spins.
                    Halt::Spinning(at) => {
                        if std::env::var_os("LISTWATCH_CLIENT_GO_LOG").is_some() {
                            eprintln!("client-go: {}: {at}", self.config.spec());
                        }
                        self.timer = Some((Timer::Spin, 0));
                    }
                    Halt::Blocked(at) => {
                        self.timer = None;
                        self.halted.get_or_insert(format!("its bubble can never go on: {at}"));
                    }
                }
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

    fn fold(&mut self, reply: &Value) -> Result<(), String> {
        let bad = |what: &str| format!("the client-go program's reply has no valid {what}: {reply}");
        let mut refused = Vec::new();
        for effect in reply["effects"].as_array().ok_or_else(|| bad("effects"))? {
            if let Some(send) = effect.get("send") {
                let text = |k: &str| send[k].as_str().unwrap_or("").to_string();
                let query = text("query");
                match request::decode(&text("method"), &text("path"), Some(&query)) {
                    Ok(r) => {
                        self.opened = false;
                        self.effects.push_back(Effect::Send(r));
                    }
                    Err(BadRequest(message)) => refused.push(message),
                }
            } else if effect.get("cancel").is_some() {
                self.effects.push_back(Effect::Cancel);
            } else if effect.get("told").is_some() {
                self.effects.push_back(Effect::Tell);
            } else if let Some(n) = effect.get("notify") {
                // Which of the informer's handlers was told (`,handlers=N`); the first when absent.
                let handler = n["handler"].as_u64().unwrap_or(0);
                match notification(n) {
                    Ok(n) if handler == 0 => self.effects.push_back(Effect::Notify(n)),
                    Ok(n) => self.effects.push_back(Effect::NotifyAnother {
                        handler: u8::try_from(handler).map_err(|_| bad("notify.handler"))?,
                        notification: n,
                    }),
                    Err(e) => {
                        self.halted
                            .get_or_insert(format!("its handler was told of an object no server sent: {e}"));
                    }
                }
            } else {
                return Err(bad("effect"));
            }
        }
        for i in reply["read"].as_array().ok_or_else(|| bad("read"))? {
            let read = i.as_u64().and_then(|i| self.lines.get(usize::try_from(i).ok()?));
            if let Some(Some(WatchEvent::Bookmark(rv))) = read {
                self.bookmark_read = self.bookmark_read.max(*rv);
            }
        }
        self.rv = rv_of(reply["rv"].as_str().ok_or_else(|| bad("rv"))?).unwrap_or(Rev(0));
        if matches!(
            self.config.lists,
            crate::config::Lists::RetryWatcher | crate::config::Lists::ListWatchUntil
        ) {
            // The RetryWatcher moves its RV by the bookmarks it reads and tells no one.
            self.rv = self.rv.max(self.bookmark_read);
        }
        self.informer_synced = reply["synced"] == Value::Bool(true);
        self.ready = reply["ready"]
            .as_array()
            .ok_or_else(|| bad("ready"))?
            .iter()
            .map(|r| r.as_bool() == Some(true))
            .collect();
        let objects: Result<Vec<Object>, String> =
            reply["cache"].as_array().ok_or_else(|| bad("cache"))?.iter().map(from_json).collect();
        match objects {
            Ok(objects) => self.cache = objects.into_iter().collect(),
            Err(e) => {
                self.halted.get_or_insert(format!("its cache holds an object no server sent: {e}"));
            }
        }
        self.timer = match &reply["timer"] {
            Value::Null => None,
            t => {
                let timer = match t["kind"].as_str() {
                    Some("backoff") => Timer::Backoff,
                    Some("request-timeout") => Timer::WatchTimeout,
                    Some("poll") => Timer::Poll,
                    Some("handler-retry") => Timer::HandlerRetry,
                    _ => return Err(bad("timer kind")),
                };
                let ms = t["after_ms"].as_f64().filter(|ms| *ms >= 0.0).ok_or_else(|| bad("timer delay"))?;
                // Rounded up: firing it moves the program's clock to the timer itself, a fraction past
                // the last whole millisecond.
                Some((timer, ms.ceil() as Millis))
            }
        };
        self.unread = reply["unread"].as_u64().unwrap_or(0) > 0 || reply["end_unread"] == Value::Bool(true);
        self.holdable = reply["holdable"] == Value::Bool(true);
        self.queued = reply["queued"].as_u64().unwrap_or(0) > 0;
        self.behind = reply["behind"].as_u64().unwrap_or(0) > 0;
        if let Some(why) = reply["halted"].as_str() {
            self.halted.get_or_insert(why.to_string());
        }
        // A request no server could parse is answered at once with the 400 a real API server gives.
        for message in refused {
            let body = String::from_utf8_lossy(&status_body(400, "BadRequest", &message)).into_owned();
            self.command(json!({"cmd": "respond", "status": 400, "body": body, "retry_after": null}));
        }
        Ok(())
    }
}

/// The command for one HTTP operation.
fn command_of(op: Http) -> Value {
    match op {
        Http::Respond { status, body, retry_after } => json!({
            "cmd": "respond",
            "status": status,
            "body": String::from_utf8_lossy(&body),
            "retry_after": retry_after,
        }),
        Http::Open => json!({"cmd": "open"}),
        Http::Line { bytes, .. } => json!({"cmd": "line", "data": String::from_utf8_lossy(&bytes)}),
        Http::End => json!({"cmd": "end"}),
        Http::Reset => json!({"cmd": "break"}),
        Http::Refuse => json!({"cmd": "refuse"}),
        Http::Cut { status, body, length } => json!({
            "cmd": "cut",
            "status": status,
            "body": String::from_utf8_lossy(&body),
            "length": length,
        }),
    }
}

fn notification(n: &Value) -> Result<Notification, String> {
    let object = from_json(&n["object"])?;
    Ok(match n["kind"].as_str() {
        Some("add") => Notification::Add(object),
        Some("update") => Notification::Update { old: from_json(&n["old"])?, new: object },
        Some("delete") => Notification::Delete(object),
        Some("delete-unknown") => Notification::DeletedFinalStateUnknown(object),
        other => return Err(format!("a notification of kind {other:?}")),
    })
}

impl Client for ClientGoClient {
    fn start(&mut self) {
        let kind = Kind {
            binary: self.config.binary.clone(),
            env: self.config.watch_list_env(),
            test: self.config.go.as_ref().map(|g| g.test.clone()),
        };
        match Process::take(&kind) {
            Ok(p) => self.process = Some(p),
            Err(e) => {
                self.gone = Some(e);
                return;
            }
        }
        let retry = self.config.lists == crate::config::Lists::RetryWatcher;
        let pager = self.config.pager_mode();
        let mode = match self.config.lists {
            crate::config::Lists::Pager => pager.as_str(),
            crate::config::Lists::RetryWatcher => "retrywatcher",
            crate::config::Lists::Fifo => "fifo",
            crate::config::Lists::Reflector => "reflector",
            crate::config::Lists::IndexerInformer => "indexer-informer",
            crate::config::Lists::StoreInformer => "store-informer",
            crate::config::Lists::ListWatchUntil => "list-watch-until",
            crate::config::Lists::InformerWatcher => "informer-watcher",
            crate::config::Lists::ControllerRuntime => "controller-runtime",
            crate::config::Lists::Go => "",
            _ => "informer",
        };
        let mut start = json!({
            "cmd": "start",
            "mode": mode,
            "seed": self.seed,
            // A RetryWatcher has no list to sync from, and nobody waits for it to; nor for a bare
            // Reflector, which has nothing to wait on.
            "waiters": if retry || self.config.lists == crate::config::Lists::Reflector { 0 } else { self.config.waiters },
            "page_size": self.config.shim_page_size(),
            "timeout_ms": self.config.timeout_secs.map_or(0, |t| u64::from(t) * 1000),
        });
        // Only when asked for: a program built before the option knew nothing of it.
        if self.config.transform {
            start["transform"] = Value::Bool(true);
        }
        if self.config.panic_handler {
            start["panic_handler"] = Value::Bool(true);
        }
        if self.config.slow_handler {
            start["slow_handler"] = Value::Bool(true);
        }
        if self.config.watch_error_handler {
            start["watch_error_handler"] = Value::Bool(true);
        }
        if let Some(t) = self.config.resync_secs {
            start["resync_ms"] = json!(u64::from(t) * 1000);
        }
        if self.config.handlers != 1 {
            start["handlers"] = json!(self.config.handlers);
        }
        self.command(start);
        if let Some(e) = &mut self.gone {
            e.push_str(" (is it built? scripts/build-client-go builds it)");
        }
    }

    fn handle(&mut self, input: Input) {
        match input {
            Input::Timer(_) => {
                let ms = self.timer.map_or(0, |(_, ms)| ms);
                self.command(json!({"cmd": "fire", "ms": ms}));
                return;
            }
            Input::Hold | Input::Release if self.holdable => {
                self.held = input == Input::Hold;
                self.command(json!({"cmd": if self.held { "hold" } else { "release" }}));
                return;
            }
            Input::Hold | Input::Release => return,
            _ => {}
        }
        for op in of_input(&input) {
            match &op {
                Http::Open if self.opened => continue,
                Http::Open => self.opened = true,
                Http::Line { event, .. } => {
                    self.opened = true;
                    self.lines.push(*event);
                }
                _ => {}
            }
            self.command(command_of(op));
        }
    }

    fn poll_effect(&mut self) -> Option<Effect> {
        self.effects.pop_front()
    }

    fn elapse(&mut self, ms: Millis) {
        self.command(json!({"cmd": "advance", "ms": ms}));
    }

    fn next_timer(&self) -> Option<(Timer, Millis)> {
        self.timer.filter(|_| self.gone.is_none())
    }

    fn dead_connection_noticed_after(&self) -> Option<Millis> {
        self.config.has_health_check().then_some(HEALTH_CHECK_MS)
    }

    fn unread(&self) -> bool {
        self.unread
    }

    fn consumer_held(&self) -> bool {
        self.held
    }

    fn can_move_consumer(&self) -> bool {
        self.holdable
    }

    fn queued(&self) -> bool {
        self.queued
    }

    fn handlers_behind(&self) -> bool {
        self.behind
    }

    fn halted(&self) -> Option<String> {
        self.halted.clone()
    }

    fn readiness_pending(&self) -> bool {
        self.informer_synced && !self.has_synced()
    }

    fn gone(&self) -> Option<String> {
        self.gone.clone()
    }

    fn resource_version(&self) -> Rev {
        self.rv
    }

    fn has_synced(&self) -> bool {
        !self.ready.is_empty() && self.ready.iter().all(|r| *r)
    }

    fn handlers(&self) -> u8 {
        self.config.handlers
    }

    fn not_judged(&self) -> &'static [(&'static str, &'static str)] {
        self.config.lists.not_judged(self.config.watch_error_handler)
    }

    fn cache(&self) -> &Cache {
        &self.cache
    }
}

impl Drop for ClientGoClient {
    fn drop(&mut self) {
        if let Some(p) = self.process.take() {
            if self.gone.is_none() {
                p.release();
            }
        }
    }
}
