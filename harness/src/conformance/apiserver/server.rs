//! The real watch cache as the server under test: `harness/apiserver`'s Go program started on a real etcd,
//! spoken to over JSON lines on its stdin and stdout. Every call has a real-time limit; a server that
//! dies or stops answering is an error naming the step, never a hang. The child dies with us (it exits
//! on stdin EOF and has PR_SET_PDEATHSIG), and dropping this kills it and removes its log directory.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use listwatch_model::ApiServerRelease;
use serde::Deserialize;

use super::sequence::{ApiOp, ApiSequence, Rv, WATCH_LIST_TIMEOUT_SECS};
use super::transcript::{ApiAnswer, ApiMsg, ApiStep, ApiTranscript, Obj, Token};
use super::{Draws, ServerUnderTest};
use crate::conformance::built;
use crate::conformance::SideError;

/// The script that builds the server.
pub const BUILD_HINT: &str = "run scripts/build-apiserver";
/// How long one call may take: a NotOlderThan LIST waits up to 3 s (A2), the server's own limit is 10 s.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(15);
/// How long to wait for a watch message the model expects once the cache has caught up: more than a
/// streaming list's bounded wait for the cache (3 s, A12) before its ERROR.
pub const MESSAGE_WAIT: Duration = Duration::from_secs(5);
/// How long a watch with `timeoutSeconds=1` (or a streaming list with 2) may take to end: its
/// seconds and the server's slack.
pub const TIMEOUT_WAIT: Duration = Duration::from_secs(6);

/// The feature gates a release runs with: the API server's defaults, but for `ListFromCacheSnapshot`
/// (alpha in 1.33, beta and on since 1.34). With it the cacher serves Exact LISTs and continue pages
/// from snapshots of its own history, at revisions etcd has compacted, until its compactor polls etcd
/// (every 15 s): when a 410 becomes a 200 is up to a timer. The model has no snapshots (README, known
/// differences). A release before v0.33 knows no such gate, and would refuse to set it.
pub fn gates(release: &str) -> &'static str {
    let minor = release.split('.').nth(1).and_then(|m| m.parse::<u32>().ok()).unwrap_or(u32::MAX);
    if minor >= 33 {
        "ListFromCacheSnapshot=false"
    } else {
        ""
    }
}

/// One line of the server's stdout.
#[derive(Debug, Default, Deserialize)]
struct Line {
    #[serde(default)]
    id: u64,
    watch: Option<u64>,
    error: Option<GoError>,
    #[serde(default)]
    rev: i64,
    #[serde(default)]
    keys: Vec<u8>,
    #[serde(default)]
    items: Vec<GoObj>,
    #[serde(default, rename = "continue")]
    cont: String,
    #[serde(default)]
    refused: String,
    #[serde(default)]
    event: String,
    object: Option<GoObj>,
    #[serde(default)]
    initial_events_end: bool,
    #[serde(default)]
    closed: bool,
    #[serde(default)]
    version: String,
    #[serde(default)]
    cache_rev: i64,
    /// The server's own version (`/version`'s gitVersion), from a server over HTTP.
    #[serde(default)]
    server: String,
}

#[derive(Debug, Deserialize)]
struct GoError {
    code: u16,
    #[serde(default)]
    message: String,
}

#[derive(Clone, Debug, Deserialize)]
struct GoObj {
    key: i64,
    uid: String,
    rv: i64,
    version: u32,
}

/// The k8s.io/apiserver release to run: `wanted`, or the newest built.
pub fn binary(wanted: Option<&str>) -> Result<(String, PathBuf), SideError> {
    built::release("apiserver", wanted).ok_or_else(|| {
        let which = wanted.map_or(String::new(), |v| format!(" {v}"));
        SideError(format!("the API server{which} is not built: {BUILD_HINT}{which}"))
    })
}

/// What the process in front of the run is.
#[derive(Clone, Debug)]
pub enum Side {
    /// `harness/apiserver`: the watch cache in-process, over an etcd listwatch started.
    WatchCache,
    /// `harness/rest`: a server reached through the Kubernetes REST API.
    Rest(RestSide),
}

/// A server over HTTP, as far as the run knows it.
#[derive(Clone, Debug)]
pub struct RestSide {
    /// Its URL, or what names it in the report.
    pub name: String,
    /// The release whose rules the model follows: given, or read from the server's `/version`.
    pub rules: Option<ApiServerRelease>,
    /// The driver may write a second resource, and reaches the server's etcd.
    pub other: bool,
    pub etcd: bool,
    /// The status with which the server refused a streaming list when the run began (A12), if it did.
    pub watch_list_refused: Option<u16>,
    /// The server answered a LIST with `limit=1` with every object and no continue token (A13).
    pub ignores_limit: bool,
}

impl RestSide {
    /// A server the run reaches only over HTTP: one resource to write, its etcd out of reach. What
    /// it refuses or ignores is probed when the run connects.
    pub fn reached(name: String, rules: Option<ApiServerRelease>) -> RestSide {
        RestSide { name, rules, other: false, etcd: false, watch_list_refused: None, ignores_limit: false }
    }

    /// A server the run started: a second resource to write, and its etcd to compact.
    pub fn started(name: String, rules: Option<ApiServerRelease>) -> RestSide {
        RestSide { other: true, etcd: true, ..RestSide::reached(name, rules) }
    }
}

/// A running server under test.
pub struct ApiServerProcess {
    side: Side,
    /// The server's own version, as it reports it (a server over HTTP).
    server_version: String,
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Result<Line, String>>,
    dir: PathBuf,
    release: String,
    etcd_version: String,
    next_id: u64,
    /// Watch messages that came before anyone asked, by the server's watch number.
    queued: BTreeMap<u64, Vec<Line>>,
}

impl std::fmt::Debug for ApiServerProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ApiServerProcess({})", self.describe())
    }
}

impl ApiServerProcess {
    /// Start `binary` (k8s.io/apiserver `release`) on the etcd at `endpoint`.
    pub fn start(binary: &Path, release: &str, endpoint: &str) -> Result<Self, SideError> {
        let mut command = Command::new(binary);
        command.arg(format!("--endpoint={endpoint}")).arg(format!("--feature-gates={}", gates(release)));
        let tag = endpoint.rsplit(':').next().unwrap_or("").to_string();
        Self::spawn(command, &tag, release, Side::WatchCache, BUILD_HINT)
    }

    /// Start the REST driver `binary` with `args` (where the server is, how to reach it, what to
    /// write) in front of the server `side` names.
    pub fn rest(binary: &Path, args: &[String], side: RestSide) -> Result<Self, SideError> {
        let mut command = Command::new(binary);
        command.args(args);
        Self::spawn(command, "rest", "", Side::Rest(side), "run scripts/build-rest")
    }

    fn spawn(
        mut command: Command,
        tag: &str,
        release: &str,
        side: Side,
        hint: &str,
    ) -> Result<Self, SideError> {
        let binary = PathBuf::from(command.get_program());
        let dir = crate::conformance::scratch_dir("apiserver", tag)?;
        let log = std::fs::File::create(dir.join("apiserver.log"))
            .map_err(|e| SideError(format!("{}: {e}", dir.display())))?;
        let spawned = command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(log).spawn();
        let mut child = match spawned {
            Ok(c) => c,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                return Err(SideError(format!("{}: cannot start: {e} ({hint})", binary.display())));
            }
        };
        let stdout = child.stdout.take().expect("piped");
        let stdin = child.stdin.take();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let parsed = match line {
                    Ok(text) => {
                        serde_json::from_str::<Line>(&text).map_err(|e| format!("bad line {text:?}: {e}"))
                    }
                    Err(e) => Err(e.to_string()),
                };
                if tx.send(parsed).is_err() {
                    return;
                }
            }
        });
        let process = ApiServerProcess {
            side,
            server_version: String::new(),
            child,
            stdin,
            lines,
            dir,
            release: release.to_string(),
            etcd_version: String::new(),
            next_id: 0,
            queued: BTreeMap::new(),
        };
        Ok(process)
    }

    pub fn release(&self) -> &str {
        &self.release
    }

    /// Kill the server now (what a crash looks like to the run).
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// The last line the server logged, for an error message.
    fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(self.dir.join("apiserver.log")).unwrap_or_default();
        let last = text.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("no log");
        last.chars().take(300).collect()
    }

    fn died(&mut self, what: &str) -> SideError {
        let status = match self.child.try_wait() {
            Ok(Some(status)) => format!("exited ({status})"),
            _ => "stopped answering".to_string(),
        };
        let who = match self.side {
            Side::WatchCache => "the API server",
            Side::Rest(_) => "the REST driver",
        };
        SideError(format!("{who} {status} at {what}: {}", self.log_tail()))
    }

    /// Send one request and wait for its answer; watch messages that come meanwhile are queued.
    fn call(&mut self, what: &str, mut request: serde_json::Value) -> Result<Line, SideError> {
        self.next_id += 1;
        let id = self.next_id;
        request["id"] = serde_json::json!(id);
        let mut text = request.to_string();
        text.push('\n');
        let written = self.stdin.as_mut().map(|s| s.write_all(text.as_bytes()).and_then(|()| s.flush()));
        if !matches!(written, Some(Ok(()))) {
            return Err(self.died(what));
        }
        let deadline = Instant::now() + CALL_TIMEOUT;
        loop {
            let line = self.next_line(deadline, what)?.ok_or_else(|| {
                SideError(format!("the API server did not answer {what} within {CALL_TIMEOUT:?}"))
            })?;
            if line.id == id {
                return Ok(line);
            }
        }
    }

    /// The next line before `deadline` (`None` when none came), watch messages queued on the way.
    fn next_line(&mut self, deadline: Instant, what: &str) -> Result<Option<Line>, SideError> {
        let wait = deadline.saturating_duration_since(Instant::now());
        match self.lines.recv_timeout(wait) {
            Ok(Ok(line)) => {
                if let Some(w) = line.watch {
                    self.queued.entry(w).or_default().push(line);
                    return Ok(Some(Line::default()));
                }
                Ok(Some(line))
            }
            Ok(Err(e)) => Err(SideError(format!("the API server at {what}: {e}"))),
            Err(RecvTimeoutError::Timeout) => Ok(None),
            Err(RecvTimeoutError::Disconnected) => Err(self.died(what)),
        }
    }
}

impl Drop for ApiServerProcess {
    fn drop(&mut self) {
        end_child(&mut self.child, self.stdin.take(), &self.dir);
    }
}

/// End a Go program of the run: closing its stdin ends it cleanly, a kill 2 s later in case it does
/// not; then its directory is removed.
pub fn end_child(child: &mut Child, stdin: Option<ChildStdin>, dir: &Path) {
    drop(stdin);
    let deadline = Instant::now() + Duration::from_secs(2);
    while Instant::now() < deadline && matches!(child.try_wait(), Ok(None)) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(dir);
}

/// Whether etcd `version` answers progress requests (E7, `EtcdRelease::progress_requests`); a version
/// that is not three numbers is taken as one that does not.
pub fn answers_progress_requests(version: &str) -> bool {
    listwatch_model::EtcdRelease::parse(version).is_some_and(listwatch_model::EtcdRelease::progress_requests)
}

/// One open watch of a sequence's run.
#[derive(Debug)]
struct OpenWatch {
    /// The server's number for it (never reused, so a stopped watch's last lines cannot be mistaken).
    number: u64,
    msgs: Vec<ApiMsg>,
    closed: bool,
    /// The highest RV of an event it got, for A8's check of bookmarks.
    last_event: u32,
    /// A streaming list (A12), whose plain bookmarks are not compared.
    streaming: bool,
}

/// One sequence's run: the base revision and what the run has learnt.
struct Run<'a> {
    server: &'a mut ApiServerProcess,
    base: i64,
    /// An incarnation's creation revision, by the UID the server gave it.
    created: BTreeMap<String, u32>,
    watches: BTreeMap<u8, OpenWatch>,
    token: Option<String>,
    /// The highest revision any answer showed: a bookmark above it breaks A8.
    highest: u32,
    numbers: u64,
    /// In a minute's step ([`ApiOp::Minute`]): plain bookmarks are the heartbeats compared.
    minute: bool,
    /// Every plain bookmark is kept, as a client under test is given them ([`Session`]).
    all_bookmarks: bool,
}

impl ServerUnderTest for ApiServerProcess {
    fn describe(&self) -> String {
        match &self.side {
            Side::WatchCache => {
                format!("k8s.io/apiserver {} watch cache over etcd {}", self.release, self.etcd_version)
            }
            Side::Rest(rest) => {
                let version =
                    if self.server_version.is_empty() { "no version" } else { &self.server_version };
                let etcd = if self.etcd_version.is_empty() {
                    String::new()
                } else {
                    format!(" over etcd {}", self.etcd_version)
                };
                format!("{} ({version}){etcd}, by the rules of {}", rest.name, ServerUnderTest::release(self))
            }
        }
    }

    /// A server whose etcd the run cannot see is taken to answer them (every etcd from 3.6 does).
    fn progress_requests(&self) -> bool {
        match self.side {
            Side::Rest(_) if self.etcd_version.is_empty() => true,
            _ => answers_progress_requests(&self.etcd_version),
        }
    }

    fn release(&self) -> ApiServerRelease {
        match &self.side {
            Side::WatchCache => ApiServerRelease::parse(&self.release).unwrap_or(ApiServerRelease::NEWEST),
            Side::Rest(rest) => rest
                .rules
                .or_else(|| served_release(&self.server_version))
                .unwrap_or(ApiServerRelease::NEWEST),
        }
    }

    fn handlers(&self) -> bool {
        matches!(self.side, Side::Rest(_))
    }

    fn watch_list(&self) -> bool {
        let refused = matches!(&self.side, Side::Rest(RestSide { watch_list_refused: Some(_), .. }));
        ServerUnderTest::release(self).watch_list() && !refused
    }

    fn paginates(&self) -> bool {
        !matches!(&self.side, Side::Rest(RestSide { ignores_limit: true, .. }))
    }

    fn notes(&self) -> Vec<String> {
        let Side::Rest(rest) = &self.side else { return Vec::new() };
        let mut notes = Vec::new();
        if let Some(code) = rest.watch_list_refused {
            notes.push(format!(
                "this server refuses streaming lists ({code} to a WATCH with sendInitialEvents): allowed \
                 (A12), a client falls back to a LIST as client-go's reflector does; none is drawn, and the \
                 model's WatchList gate is off"
            ));
        }
        if rest.ignores_limit {
            notes.push(
                "this server does not paginate (a LIST with limit=1 got every object and no continue token): \
                 allowed (A13; ListOptions.limit: \"servers may choose not to support the limit argument\"), \
                 a client reads the list whole; the model serves such LISTs whole"
                    .into(),
            );
        }
        notes
    }

    fn draws(&self) -> Draws {
        let watch_list = self.watch_list();
        match &self.side {
            Side::WatchCache => Draws { watch_list, ..Draws::ALL },
            // No cache the run can hold back or make relist, nor a clock it can move.
            Side::Rest(rest) => Draws {
                watch_list,
                lag: false,
                relist: false,
                minutes: false,
                other: rest.other,
                etcd: rest.etcd,
                // Only a server the run started (the one whose etcd it reaches) has nothing of
                // anyone else's.
                across_namespaces: rest.etcd,
                ..Draws::ALL
            },
        }
    }

    fn run(&mut self, seq: &ApiSequence, expected: &ApiTranscript) -> Result<ApiTranscript, SideError> {
        let started = self.call("start (a fresh cache)", serde_json::json!({"op": "start"}))?;
        if let Some(e) = started.error {
            return Err(self.not_started(&e.message));
        }
        self.etcd_version = started.version.clone();
        self.server_version = started.server.clone();
        let mut run = Run::new(self, started.rev, false);
        let result = run.transcript(seq, expected);
        let open: Vec<u8> = run.watches.keys().copied().collect();
        for id in open {
            let number = run.watches[&id].number;
            run.server.call("stop at the end", serde_json::json!({"op": "stop", "watch": number}))?;
        }
        result
    }
}

impl ApiServerProcess {
    /// Why a start failed: the in-process watch cache could not start, or a server over HTTP cannot
    /// take the run (its own words say why).
    fn not_started(&self, why: &str) -> SideError {
        match self.side {
            Side::Rest(_) => SideError(format!("the run could not start on the server: {why}")),
            _ => SideError(format!("the API server could not start a cache: {why}")),
        }
    }

    /// Start with the etcd version known (it comes with the first start).
    pub fn connect(mut self) -> Result<Self, SideError> {
        let started = self.call("start (the first cache)", serde_json::json!({"op": "start"}))?;
        if let Some(e) = started.error {
            return Err(self.not_started(&e.message));
        }
        self.etcd_version = started.version;
        self.server_version = started.server;
        if matches!(self.side, Side::Rest(_)) {
            // A12: does it serve streaming lists at all? A refusal before the stream opens (4xx) is
            // a feature it does not have; the run then draws none.
            let probe = serde_json::json!({"op": "watch", "watch": 0, "rv": "0", "match": "NotOlderThan",
                "bookmarks": true, "send_initial_events": true});
            let answer = self.call("a streaming list, to see whether it serves them", probe)?;
            let refused = answer.error.map(|e| e.code).filter(|c| (400..500).contains(c));
            self.call("the end of that streaming list", serde_json::json!({"op": "stop", "watch": 0}))?;
            self.queued.clear();
            // A13: does it page? Two objects, a LIST with limit=1: every object and no token is a
            // server that ignores `limit`. The first sequence's start deletes them again.
            for key in [0, 1] {
                self.call("a write, to see whether it pages", serde_json::json!({"op": "put", "key": key}))?;
            }
            let page = self.call(
                "a LIST with limit=1, to see whether it pages",
                serde_json::json!({"op": "list", "rv": "", "match": "", "limit": 1}),
            )?;
            let ignores_limit = page.error.is_none() && page.items.len() > 1 && page.cont.is_empty();
            if let Side::Rest(rest) = &mut self.side {
                rest.watch_list_refused = refused;
                rest.ignores_limit = ignores_limit;
            }
        }
        Ok(self)
    }
}

/// A run of the clients under test against this server (`simulate --server`): operations sent one at
/// a time, as the clients' requests and the world's writes come, and what the server sends on each
/// watch taken as it arrives, every bookmark among it; no barrier and no expected transcript.
pub struct Session<'a> {
    run: Run<'a>,
}

impl std::fmt::Debug for Session<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Session({:?}, from {})", self.run.server, self.run.base)
    }
}

impl ApiServerProcess {
    /// Begin a session on a fresh start (the run's objects deleted, the revision it starts from read).
    pub fn session(&mut self) -> Result<Session<'_>, SideError> {
        let started = self.call("start (a client's run)", serde_json::json!({"op": "start"}))?;
        if let Some(e) = started.error {
            return Err(self.not_started(&e.message));
        }
        Ok(Session { run: Run::new(self, started.rev, true) })
    }
}

impl Session<'_> {
    /// Carry out `op` and answer it. A watch with `timeout` waits for its end, as in a sequence.
    pub fn apply(&mut self, op: &ApiOp) -> Result<ApiAnswer, SideError> {
        self.run.apply(op, &format!("{op}"))
    }

    /// Exchange the continue token a `Continue` sends (the last LIST page's) with `token`: the run
    /// holds one, so clients that page side by side each keep their own between requests.
    pub fn swap_token(&mut self, token: &mut Option<String>) {
        std::mem::swap(&mut self.run.token, token);
    }

    /// What watch `id` got since the last call, waiting up to `wait` for a first message.
    pub fn messages(&mut self, id: u8, wait: Duration) -> Result<Vec<ApiMsg>, SideError> {
        let deadline = Instant::now() + wait;
        loop {
            self.run.absorb(id);
            let Some(w) = self.run.watches.get_mut(&id) else { return Ok(Vec::new()) };
            if !w.msgs.is_empty() {
                return Ok(std::mem::take(&mut w.msgs));
            }
            if w.closed || self.run.server.next_line(deadline, "a watch of the client's")?.is_none() {
                return Ok(Vec::new());
            }
        }
    }

    /// Wait until the server's cache holds the last write (the sequences' barrier).
    pub fn barrier(&mut self) -> Result<(), SideError> {
        let synced =
            self.run.server.call("a barrier of the client's run", serde_json::json!({"op": "sync"}))?;
        match synced.error {
            Some(e) => Err(SideError(format!("the barrier of the client's run failed: {}", e.message))),
            None => Ok(()),
        }
    }

    /// The highest revision an answer showed, the run's own.
    pub fn highest(&self) -> u32 {
        self.run.highest
    }

    /// Stop every watch still open.
    pub fn finish(mut self) -> Result<(), SideError> {
        let open: Vec<u8> = self.run.watches.keys().copied().collect();
        for id in open {
            self.run.stop(id, "the end of the client's run")?;
        }
        Ok(())
    }
}

/// The k8s.io/apiserver release of a server's `/version` gitVersion (`v1.34.2`, also with a build
/// suffix such as `+k3s1` or `-eks-1`), if it is one.
pub fn served_release(git_version: &str) -> Option<ApiServerRelease> {
    let plain = git_version.split(['+', '-']).next().unwrap_or("");
    ApiServerRelease::parse(plain).filter(|r| *r != ApiServerRelease::new(0, 0))
}

fn rv_request(rv: Rv, base: i64) -> (String, &'static str) {
    match rv {
        Rv::Consistent => (String::new(), ""),
        Rv::Any => ("0".into(), ""),
        Rv::NotOlderThan(x) => ((base + i64::from(x)).to_string(), "NotOlderThan"),
        Rv::Exact(x) => ((base + i64::from(x)).to_string(), "Exact"),
    }
}

impl<'a> Run<'a> {
    /// A run from revision `base` on a server just started, its queued lines dropped; watch numbers
    /// follow the server's request ids, so none is reused.
    fn new(server: &'a mut ApiServerProcess, base: i64, all_bookmarks: bool) -> Self {
        server.queued.clear();
        let numbers = server.next_id * 100;
        Run {
            server,
            base,
            created: BTreeMap::new(),
            watches: BTreeMap::new(),
            token: None,
            highest: 0,
            numbers,
            minute: false,
            all_bookmarks,
        }
    }

    fn local(&self, rev: i64) -> u32 {
        u32::try_from(rev - self.base).unwrap_or(0)
    }

    fn obj(&self, o: &GoObj) -> Obj {
        let rv = self.local(o.rv);
        Obj {
            key: u8::try_from(o.key).unwrap_or(u8::MAX),
            created: self.created.get(&o.uid).copied().unwrap_or(0),
            rv,
            version: o.version,
        }
    }

    fn transcript(
        &mut self,
        seq: &ApiSequence,
        expected: &ApiTranscript,
    ) -> Result<ApiTranscript, SideError> {
        let mut transcript = ApiTranscript::default();
        for (i, op) in seq.ops.iter().enumerate() {
            let at = format!("step {i} ({op})");
            self.minute = matches!(op, ApiOp::Minute);
            let answer = self.apply(op, &at)?;
            let synced =
                self.server.call(&format!("the barrier after {at}"), serde_json::json!({"op": "sync"}))?;
            if let Some(e) = synced.error {
                return Err(SideError(format!("the barrier after {at} failed: {}", e.message)));
            }
            let want = expected.steps.get(i).map(|s| &s.messages);
            let mut messages = self.collect(want, &at)?;
            let opened = match op {
                ApiOp::Watch { id, from: None, .. } | ApiOp::WatchList { id, .. } => Some(id),
                _ => None,
            };
            let unordered = !ServerUnderTest::release(&*self.server).initial_events_in_key_order();
            if let Some(msgs) = opened.filter(|_| unordered).and_then(|id| messages.get_mut(id)) {
                initial_events_in_key_order(msgs);
            }
            let cache_rv = Some(self.local(synced.cache_rev));
            transcript.steps.push(ApiStep { answer: Some(answer), messages, cache_rv });
            self.minute = false;
        }
        transcript.end = self.collect(None, "the end")?;
        Ok(transcript)
    }

    fn failed(&self, e: &GoError) -> ApiAnswer {
        ApiAnswer::Failed { code: e.code }
    }

    fn apply(&mut self, op: &ApiOp, at: &str) -> Result<ApiAnswer, SideError> {
        let base = self.base;
        let json = match op {
            ApiOp::Put { key, other: false } => serde_json::json!({"op": "put", "key": key}),
            ApiOp::Put { key, other: true } => serde_json::json!({"op": "other", "key": key}),
            ApiOp::Delete { key } => serde_json::json!({"op": "delete", "key": key}),
            ApiOp::DeleteAll { keys } => serde_json::json!({"op": "delete_all", "keys": keys}),
            ApiOp::Compact { rev } => serde_json::json!({"op": "compact", "rev": base + i64::from(*rev)}),
            ApiOp::List { rv, limit } => {
                let (rv, m) = rv_request(*rv, base);
                serde_json::json!({"op": "list", "rv": rv, "match": m, "limit": limit.unwrap_or(0)})
            }
            ApiOp::ListNamed { rv, key, namespaced } => {
                let (rv, m) = rv_request(*rv, base);
                serde_json::json!({"op": "list", "rv": rv, "match": m, "limit": 0, "key": key,
                    "named": true, "namespaced": namespaced})
            }
            ApiOp::Continue { limit } => match &self.token {
                Some(token) => serde_json::json!({"op": "list", "limit": limit, "continue": token}),
                None => return Ok(ApiAnswer::Nothing),
            },
            ApiOp::Watch { id, from, unset, bookmarks, timeout } => {
                let rv = match from {
                    Some(x) => (base + i64::from(*x)).to_string(),
                    None if *unset => String::new(),
                    None => "0".to_string(),
                };
                self.stop(*id, at)?;
                serde_json::json!({"op": "watch", "watch": self.number(*id, false), "rv": rv, "bookmarks": bookmarks,
                    "timeout_seconds": u32::from(*timeout)})
            }
            ApiOp::WatchList { id, rv, timeout } => {
                let (rv, _) = rv_request(*rv, base);
                self.stop(*id, at)?;
                let timeout_seconds = if *timeout { WATCH_LIST_TIMEOUT_SECS } else { 0 };
                serde_json::json!({"op": "watch", "watch": self.number(*id, true), "rv": rv, "match": "NotOlderThan",
                    "bookmarks": true, "send_initial_events": true, "timeout_seconds": timeout_seconds})
            }
            ApiOp::Stop { id } => {
                let open = self.watches.get(id).is_some_and(|w| !w.closed);
                self.stop(*id, at)?;
                return Ok(if open { ApiAnswer::Stopped } else { ApiAnswer::Nothing });
            }
            ApiOp::HoldCache => serde_json::json!({"op": "hold"}),
            ApiOp::ReleaseCache => serde_json::json!({"op": "release"}),
            ApiOp::RelistCache => serde_json::json!({"op": "relist"}),
            ApiOp::Minute => serde_json::json!({"op": "minute"}),
        };
        let line = self.server.call(at, json)?;
        self.highest = self.highest.max(self.local(line.rev));
        Ok(match op {
            ApiOp::Put { other, .. } => {
                if let Some(e) = &line.error {
                    return Err(SideError(format!("the API server failed a write at {at}: {}", e.message)));
                }
                if let Some(o) = line.object.as_ref().filter(|o| o.version == 1 && !other) {
                    let rv = self.local(o.rv);
                    self.created.insert(o.uid.clone(), rv);
                }
                ApiAnswer::Written { rev: self.local(line.rev) }
            }
            ApiOp::Delete { .. } | ApiOp::DeleteAll { .. } => match &line.error {
                Some(e) => {
                    return Err(SideError(format!("the API server failed a delete at {at}: {}", e.message)))
                }
                None => ApiAnswer::Deleted {
                    rev: self.local(line.rev),
                    keys: line.keys.clone(),
                    object: line.object.as_ref().filter(|_| !self.server.handlers()).map(|o| self.obj(o)),
                },
            },
            ApiOp::Compact { rev } => match (&line.error, line.refused.as_str()) {
                (Some(e), _) => {
                    return Err(SideError(format!("etcd failed the compaction at {at}: {}", e.message)))
                }
                (None, "") => ApiAnswer::Compacted { rev: *rev },
                (None, why) => ApiAnswer::CompactRefused { why: why.to_string() },
            },
            ApiOp::List { .. } | ApiOp::ListNamed { .. } | ApiOp::Continue { .. } => match &line.error {
                Some(e) => {
                    self.token = None;
                    self.failed(e)
                }
                None => {
                    self.token = (!line.cont.is_empty()).then(|| line.cont.clone());
                    let mut items: Vec<Obj> = line.items.iter().map(|o| self.obj(o)).collect();
                    // A release whose cache lists in its store's map order may answer any order;
                    // etcd's (and the model's) is by key.
                    if !ServerUnderTest::release(&*self.server).cache_lists_in_key_order() {
                        items.sort_by_key(|o| o.key);
                    }
                    ApiAnswer::List {
                        rv: self.local(line.rev),
                        items,
                        cont: self.token.as_deref().map(|t| self.decode(t)),
                    }
                }
            },
            ApiOp::Watch { id, .. } | ApiOp::WatchList { id, .. } => match &line.error {
                Some(e) => {
                    self.watches.remove(id);
                    self.failed(e)
                }
                None => {
                    if op.times_out() {
                        self.await_end(*id, at)?;
                    }
                    ApiAnswer::WatchOpened
                }
            },
            ApiOp::HoldCache | ApiOp::ReleaseCache | ApiOp::RelistCache | ApiOp::Minute => {
                match &line.error {
                    Some(e) => {
                        return Err(SideError(format!("the API server failed at {at}: {}", e.message)))
                    }
                    None => ApiAnswer::Nothing,
                }
            }
            ApiOp::Stop { .. } => unreachable!("answered above"),
        })
    }

    /// Wait for the server to end watch `id` at its `timeoutSeconds` (A9), up to [`TIMEOUT_WAIT`]
    /// for its seconds and the server's slack; what it sent meanwhile is kept for the step. A watch
    /// still open then is left so: the comparison finds it open where the model closed it.
    fn await_end(&mut self, id: u8, at: &str) -> Result<(), SideError> {
        let deadline = Instant::now() + TIMEOUT_WAIT;
        loop {
            self.absorb(id);
            if self.watches.get(&id).is_none_or(|w| w.closed) {
                return Ok(());
            }
            if self.server.next_line(deadline, at)?.is_none() {
                return Ok(());
            }
        }
    }

    /// A fresh server watch number for watch `id`, a streaming list or not.
    fn number(&mut self, id: u8, streaming: bool) -> u64 {
        self.numbers += 1;
        let w = OpenWatch { number: self.numbers, msgs: Vec::new(), closed: false, last_event: 0, streaming };
        self.watches.insert(id, w);
        self.numbers
    }

    /// Stop watch `id` if the run has one; what it got and did not report yet is dropped with it.
    fn stop(&mut self, id: u8, at: &str) -> Result<(), SideError> {
        if let Some(w) = self.watches.remove(&id) {
            self.server.call(at, serde_json::json!({"op": "stop", "watch": w.number}))?;
            self.server.queued.remove(&w.number);
        }
        Ok(())
    }

    /// A continue token as far as it compares (A13): the RV it pins and the key it starts after. The
    /// token is base64 of `{"v":..., "rv": N, "start": "<namespace>/<name>\u0000"}`.
    fn decode(&self, token: &str) -> Token {
        let bytes = base64_decode(token);
        let value: serde_json::Value = serde_json::from_slice(&bytes).unwrap_or_default();
        let rv = value["rv"].as_i64().map_or(u32::MAX, |r| self.local(r));
        let after = value["start"]
            .as_str()
            .and_then(|s| s.trim_end_matches('\0').rsplit('/').next().map(str::to_string))
            .and_then(|name| name.trim_start_matches('k').parse().ok())
            .unwrap_or(u8::MAX);
        Token { rv, after }
    }

    /// Turn what the server sent on watch `id` into messages; plain bookmarks that keep A8 are dropped.
    fn absorb(&mut self, id: u8) {
        let Some(w) = self.watches.get(&id) else { return };
        let lines = self.server.queued.remove(&w.number).unwrap_or_default();
        for line in lines {
            let highest = self.highest;
            let msg = match line.event.as_str() {
                "ADDED" | "MODIFIED" | "DELETED" => {
                    let o = line.object.as_ref().map(|o| self.obj(o)).unwrap_or(Obj {
                        key: u8::MAX,
                        created: 0,
                        rv: 0,
                        version: 0,
                    });
                    let w = self.watches.get_mut(&id).expect("present");
                    w.last_event = w.last_event.max(o.rv);
                    match line.event.as_str() {
                        "ADDED" => ApiMsg::Added(o),
                        "MODIFIED" => ApiMsg::Modified(o),
                        _ => ApiMsg::Deleted(o),
                    }
                }
                "BOOKMARK" if line.initial_events_end => {
                    ApiMsg::InitialEventsEnd { rv: self.local(line.rev) }
                }
                "BOOKMARK" => {
                    // A8: a bookmark's RV is never below an event already sent, nor above etcd's.
                    // Kept as a heartbeat in a minute's step, but for a streaming list's.
                    let rv = self.local(line.rev);
                    let w = &self.watches[&id];
                    let after = w.last_event;
                    match rv >= after && rv <= highest.max(after) {
                        true if self.all_bookmarks || (self.minute && !w.streaming) => {
                            ApiMsg::Bookmark { rv }
                        }
                        true => continue,
                        false => ApiMsg::BadBookmark { rv, after },
                    }
                }
                "ERROR" => ApiMsg::Error { code: line.error.as_ref().map_or(0, |e| e.code) },
                _ if line.closed => ApiMsg::Closed,
                _ => continue,
            };
            let w = self.watches.get_mut(&id).expect("present");
            if msg == ApiMsg::Closed {
                w.closed = true;
            }
            w.msgs.push(msg);
        }
    }

    /// Wait until every open watch has the messages the model expects of it (or is closed, or
    /// [`MESSAGE_WAIT`] passed), then take what each has.
    fn collect(
        &mut self,
        want: Option<&BTreeMap<u8, Vec<ApiMsg>>>,
        at: &str,
    ) -> Result<BTreeMap<u8, Vec<ApiMsg>>, SideError> {
        let deadline = Instant::now() + MESSAGE_WAIT;
        let ids: Vec<u8> = self.watches.keys().copied().collect();
        let mut out = BTreeMap::new();
        for id in ids {
            let need = want.and_then(|m| m.get(&id)).map_or(0, Vec::len);
            loop {
                self.absorb(id);
                let w = &self.watches[&id];
                if w.msgs.len() >= need || w.closed {
                    break;
                }
                if self.server.next_line(deadline, at)?.is_none() {
                    break;
                }
            }
            let w = self.watches.get_mut(&id).expect("present");
            if !w.msgs.is_empty() {
                out.insert(id, std::mem::take(&mut w.msgs));
            }
        }
        // A watch that ended is no longer open: a later stop sends nothing.
        Ok(out)
    }
}

/// The synthetic ADDEDs that open a watch from "0" or a streaming list, in key order: a release that
/// sends them in its store's map order ([`ApiServerRelease::initial_events_in_key_order`]) may send
/// any order, and the model sends this one.
fn initial_events_in_key_order(msgs: &mut [ApiMsg]) {
    let added = msgs.iter().take_while(|m| matches!(m, ApiMsg::Added(_))).count();
    msgs[..added].sort_by_key(|m| match m {
        ApiMsg::Added(o) => o.key,
        _ => u8::MAX,
    });
}

/// Decode base64 (standard or URL alphabet, padding optional); bad input decodes to what it can.
fn base64_decode(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' | b'-' => Some(62),
        b'/' | b'_' => Some(63),
        _ => None,
    };
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0);
    for v in text.bytes().filter_map(value) {
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_continue_token_decodes() {
        let token = "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6Niwic3RhcnQiOiJkZWZhdWx0L2swMVx1MDAwMCJ9";
        let text = String::from_utf8(base64_decode(token)).unwrap();
        assert_eq!(text, r#"{"v":"meta.k8s.io/v1","rv":6,"start":"default/k01\u0000"}"#);
    }

    #[test]
    fn a_served_version_names_its_release() {
        assert_eq!(served_release("v1.34.2"), Some(ApiServerRelease::new(34, 2)));
        assert_eq!(served_release("v1.31.4+k3s1"), Some(ApiServerRelease::new(31, 4)));
        assert_eq!(served_release("v1.30.9-eks-1"), Some(ApiServerRelease::new(30, 9)));
        assert_eq!(served_release("v0.0.0-master+$Format:%H$"), None, "a build that names no release");
        assert_eq!(served_release(""), None);
    }

    #[test]
    fn progress_requests_follow_the_etcd_version() {
        assert!(!answers_progress_requests("3.4.23"));
        assert!(answers_progress_requests("3.4.31"));
        assert!(answers_progress_requests("3.6.16"));
        assert!(!answers_progress_requests("3.5.12"));
    }
}
