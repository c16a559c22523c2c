//! A sequence run on a real etcd through `etcd-client`. Every call has a timeout; a watch message the
//! model expects but etcd never sends is waited for up to [`MESSAGE_WAIT`], then the step is compared as
//! it stands.
//!
//! Each sequence runs in a namespace of its own (`/listwatch/<run>/<n>/w/` for the watched prefix,
//! `/o/` for another resource type), and its revisions are counted from the revision etcd had when it
//! began, so one etcd serves a whole campaign and every shrinking attempt.

use std::collections::{BTreeMap, VecDeque};
use std::future::Future;
use std::time::Duration;

use etcd_client::{
    Client, CompactionOptions, ConnectOptions, GetOptions, KeyValue, Txn, TxnOp, TxnOpResponse, WatchOptions,
    WatchResponse, WatchStream,
};
use listwatch_model::store::TombstonePolicy;
use listwatch_model::EtcdRelease;

use crate::conformance::sequence::{Op, Sequence};
use crate::conformance::transcript::{Answer, Kv, Refusal, Step, Transcript, WatchMsg};
use crate::conformance::{SideError, StoreUnderTest};

/// How long one etcd call may take.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a fresh etcd may take to serve its first call.
pub const CONNECT_WITHIN: Duration = Duration::from_secs(10);

/// How long to wait for a watch message the model expects. Waited out only when a message is missing (a
/// difference), so a generous wait costs a run that matches nothing. It was 1 s, and once under CI's load
/// (three etcds side by side and Go builds) an event etcd 3.6.16 sends a watch from its current revision
/// took longer: such a watch starts unsynced (`watchableStore.watch` in `storage/mvcc/watchable_store.go`:
/// `startRev > currentRev` alone is synced) and gets its events from `syncWatchersLoop`, every 100 ms at
/// best, whose `rangeEvents` waits on the read transaction's lock, which a backend commit holds through
/// its fsync (`batchTxBuffered.commit` in `storage/backend/batch_tx.go`). The same sequence replayed 50
/// times gave no difference. The API server's wait is 5 s too.
pub const MESSAGE_WAIT: Duration = Duration::from_secs(5);
/// How often a progress request is sent again while its answer does not come (E7).
pub const PROGRESS_RESEND: Duration = Duration::from_millis(250);
/// How long a progress notification the model says never comes is waited for (E7, etcd 3.6).
pub const NO_PROGRESS_WAIT: Duration = Duration::from_millis(600);

/// A connected etcd.
pub struct EtcdStore {
    runtime: tokio::runtime::Runtime,
    client: Client,
    endpoint: String,
    version: String,
    /// The revision etcd had when we connected: it names this run's namespace.
    run: i64,
    sequences: u64,
}

impl std::fmt::Debug for EtcdStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "EtcdStore({})", self.describe())
    }
}

struct OpenWatch {
    stream: WatchStream,
    watch_id: i64,
    queue: VecDeque<WatchMsg>,
    /// Cancelled by etcd (compaction): nothing more comes.
    closed: bool,
}

/// One sequence's run: its namespace and base revision.
struct Run<'a> {
    store: &'a mut EtcdStore,
    ns: String,
    base: i64,
    watches: BTreeMap<u8, OpenWatch>,
    /// The model says the current step's progress request gets no answer (E7).
    expect_none: bool,
}

fn call<T, E: std::fmt::Display>(
    runtime: &tokio::runtime::Runtime,
    what: &str,
    fut: impl Future<Output = Result<T, E>>,
) -> Result<Result<T, E>, SideError> {
    runtime
        .block_on(async { tokio::time::timeout(CALL_TIMEOUT, fut).await })
        .map_err(|_| SideError(format!("etcd did not answer {what} within {CALL_TIMEOUT:?}")))
}

/// The etcd key of a model key: the watched prefix `w`, another resource type's `o`.
fn etcd_key(ns: &str, other: bool, key: u8) -> String {
    format!("{ns}/{}/{key:03}", if other { "o" } else { "w" })
}

fn failed(what: &str, e: impl std::fmt::Display) -> SideError {
    SideError(format!("etcd failed at {what}: {e}"))
}

/// etcd's two read and compaction refusals (E4), by their messages.
fn refusal(e: &etcd_client::Error) -> Option<Refusal> {
    let text = e.to_string();
    if text.contains("required revision has been compacted") {
        Some(Refusal::Compacted)
    } else if text.contains("required revision is a future revision") {
        Some(Refusal::FutureRevision)
    } else {
        None
    }
}

impl EtcdStore {
    /// Connect to `endpoint`. An etcd that has just started may accept connections before it serves
    /// them: the first status call is retried for up to [`CONNECT_WITHIN`].
    pub fn connect(endpoint: &str) -> Result<Self, SideError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| SideError(format!("no async runtime: {e}")))?;
        let started = std::time::Instant::now();
        let (client, version, run) = loop {
            match Self::status(&runtime, endpoint) {
                Ok(answer) => break answer,
                Err(e) if started.elapsed() >= CONNECT_WITHIN => return Err(e),
                Err(_) => std::thread::sleep(Duration::from_millis(200)),
            }
        };
        Ok(EtcdStore { runtime, client, endpoint: endpoint.to_string(), version, run, sequences: 0 })
    }

    /// A client, etcd's version and its current revision.
    fn status(runtime: &tokio::runtime::Runtime, endpoint: &str) -> Result<(Client, String, i64), SideError> {
        let options = ConnectOptions::new().with_connect_timeout(CALL_TIMEOUT).with_timeout(CALL_TIMEOUT);
        let what = format!("connect to {endpoint}");
        let mut client = call(runtime, &what, Client::connect([endpoint], Some(options)))?
            .map_err(|e| failed(&what, e))?;
        let status = call(runtime, "status", client.status())?.map_err(|e| failed("status", e))?;
        let run = status.header().map_or(0, |h| h.revision());
        Ok((client, status.version().to_string(), run))
    }

    pub fn version(&self) -> &str {
        &self.version
    }

    /// The keys under `prefix` (what a run left behind in a server's etcd).
    pub fn keys_under(&mut self, prefix: &str) -> Result<Vec<String>, SideError> {
        let options = etcd_client::GetOptions::new().with_prefix().with_keys_only();
        let what = format!("range {prefix}");
        let got = call(&self.runtime, &what, self.client.get(prefix, Some(options)))?
            .map_err(|e| failed(&what, e))?;
        Ok(got.kvs().iter().map(|kv| String::from_utf8_lossy(kv.key()).into_owned()).collect())
    }

    /// The tombstone policy this etcd follows (E4, `EtcdRelease::tombstones`); a version that is not
    /// three numbers is taken as 3.4's.
    pub fn tombstones(&self) -> TombstonePolicy {
        EtcdRelease::parse(&self.version).map_or(TombstonePolicy::DropAtCompaction, EtcdRelease::tombstones)
    }
}

impl StoreUnderTest for EtcdStore {
    fn describe(&self) -> String {
        format!("etcd {} at {}", self.version, self.endpoint)
    }

    /// E7: whether this etcd withholds a requested progress notification from a watch whose start
    /// revision is still ahead (`EtcdRelease::progress_after_start`: etcd#20229).
    fn progress_after_start(&self) -> bool {
        EtcdRelease::parse(&self.version).is_some_and(EtcdRelease::progress_after_start)
    }

    fn run(&mut self, sequence: &Sequence, expected: &Transcript) -> Result<Transcript, SideError> {
        self.sequences += 1;
        let ns = format!("/listwatch/{}/{}", self.run, self.sequences);
        let base = {
            let got = call(&self.runtime, "the current revision", self.client.get(format!("{ns}/"), None))?;
            got.map_err(|e| failed("the current revision", e))?.header().map_or(0, |h| h.revision())
        };
        let mut run = Run { store: self, ns, base, watches: BTreeMap::new(), expect_none: false };
        let transcript = run.transcript(sequence, expected);
        // Close every watch before the next sequence, whatever happened.
        run.watches.clear();
        transcript
    }
}

impl Run<'_> {
    fn transcript(&mut self, sequence: &Sequence, expected: &Transcript) -> Result<Transcript, SideError> {
        let mut transcript = Transcript::default();
        for (i, op) in sequence.ops.iter().enumerate() {
            self.expect_none =
                expected.steps.get(i).and_then(|s| s.answer.as_ref()) == Some(&Answer::NoProgress);
            let answer = self.apply(op).map_err(|e| SideError(format!("{e} (step {i}: {op})")))?;
            let mut step = Step { answer: Some(answer), messages: BTreeMap::new() };
            let want = expected.steps.get(i).map(|s| &s.messages);
            self.collect(want, &mut step.messages)?;
            transcript.steps.push(step);
        }
        let ids: Vec<u8> = self.watches.keys().copied().collect();
        for id in ids {
            let mut step = Step::default();
            if !self.watches[&id].closed {
                let none = expected.end.get(&id).and_then(|s| s.answer.as_ref()) == Some(&Answer::NoProgress);
                step.answer =
                    Some(self.progress(id, none).map_err(|e| SideError(format!("{e} (the end, w{id})")))?);
            }
            let w = self.watches.get_mut(&id).expect("listed above");
            if !w.queue.is_empty() {
                step.messages.insert(id, w.queue.drain(..).collect());
            }
            if step != Step::default() {
                transcript.end.insert(id, step);
            }
        }
        Ok(transcript)
    }

    fn local(&self, rev: i64) -> u32 {
        u32::try_from(rev - self.base).unwrap_or(0)
    }

    fn kv(&self, kv: &KeyValue) -> Kv {
        let key = kv
            .key_str()
            .ok()
            .and_then(|k| k.rsplit('/').next())
            .and_then(|k| k.parse().ok())
            .unwrap_or(u8::MAX);
        let value = kv
            .value_str()
            .ok()
            .and_then(|v| v.strip_prefix('v'))
            .and_then(|v| v.parse().ok())
            .unwrap_or(u16::MAX);
        Kv {
            key,
            create_rev: self.local(kv.create_revision()),
            mod_rev: self.local(kv.mod_revision()),
            version: u32::try_from(kv.version()).unwrap_or(u32::MAX),
            value,
        }
    }

    fn header_rev(&self, header: Option<&etcd_client::ResponseHeader>) -> u32 {
        self.local(header.map_or(0, |h| h.revision()))
    }

    fn apply(&mut self, op: &Op) -> Result<Answer, SideError> {
        let rt = &self.store.runtime;
        let client = &mut self.store.client;
        Ok(match *op {
            Op::Put { key, other, value } => {
                let resp =
                    call(rt, "put", client.put(etcd_key(&self.ns, other, key), format!("v{value}"), None))?
                        .map_err(|e| failed("put", e))?;
                Answer::Written { rev: self.header_rev(resp.header()) }
            }
            Op::Delete { key, other } => {
                let resp = call(rt, "delete", client.delete(etcd_key(&self.ns, other, key), None))?
                    .map_err(|e| failed("delete", e))?;
                let keys = if resp.deleted() > 0 { vec![key] } else { vec![] };
                Answer::Deleted { rev: self.header_rev(resp.header()), keys }
            }
            Op::DeleteAll { ref keys } => {
                let ops: Vec<TxnOp> =
                    keys.iter().map(|k| TxnOp::delete(etcd_key(&self.ns, false, *k), None)).collect();
                let resp =
                    call(rt, "txn", client.txn(Txn::new().and_then(ops)))?.map_err(|e| failed("txn", e))?;
                let deleted = resp.op_responses().into_iter().zip(keys).filter_map(|(r, k)| match r {
                    TxnOpResponse::Delete(d) if d.deleted() > 0 => Some(*k),
                    _ => None,
                });
                Answer::Deleted { rev: self.header_rev(resp.header()), keys: deleted.collect() }
            }
            Op::Compact { rev } => {
                let at = self.base + i64::from(rev);
                let options = CompactionOptions::new().with_physical();
                match call(rt, "compact", client.compact(at, Some(options)))? {
                    Ok(_) => Answer::Compacted { rev },
                    Err(e) => Answer::Refused { refusal: refusal(&e).ok_or_else(|| failed("compact", e))? },
                }
            }
            Op::Range { at } => {
                let mut options = GetOptions::new().with_prefix();
                if let Some(at) = at {
                    options = options.with_revision(self.base + i64::from(at));
                }
                match call(rt, "range", client.get(format!("{}/w/", self.ns), Some(options)))? {
                    Ok(resp) => Answer::Range {
                        rev: self.header_rev(resp.header()),
                        kvs: resp.kvs().iter().map(|kv| self.kv(kv)).collect(),
                    },
                    Err(e) => Answer::Refused { refusal: refusal(&e).ok_or_else(|| failed("range", e))? },
                }
            }
            Op::Watch { id, from } => {
                self.watches.remove(&id);
                let options = WatchOptions::new()
                    .with_prefix()
                    .with_prev_key()
                    .with_start_revision(self.base + i64::from(from));
                let mut stream = call(rt, "watch", client.watch(format!("{}/w/", self.ns), Some(options)))?
                    .map_err(|e| failed("watch", e))?;
                let created =
                    call(rt, "watch creation", stream.message())?.map_err(|e| failed("watch creation", e))?;
                let Some(created) = created.filter(WatchResponse::created) else {
                    return Err(SideError("etcd answered a watch without creating it".into()));
                };
                let mut watch =
                    OpenWatch { stream, watch_id: created.watch_id(), queue: VecDeque::new(), closed: false };
                self.absorb(&mut watch, &created);
                self.watches.insert(id, watch);
                Answer::WatchCreated
            }
            Op::Cancel { id } => match self.watches.remove(&id) {
                Some(mut w) if !w.closed => {
                    call(rt, "watch cancel", w.stream.cancel(w.watch_id))?
                        .map_err(|e| failed("watch cancel", e))?;
                    Answer::Cancelled
                }
                Some(w) => {
                    // Cancelled by etcd already; keep anything it sent before, for the comparison.
                    self.watches.insert(id, w);
                    Answer::NotOpen
                }
                None => Answer::NotOpen,
            },
            Op::Progress { id } => match self.watches.get(&id) {
                Some(w) if !w.closed => self.progress(id, self.expect_none)?,
                _ => Answer::NotOpen,
            },
        })
    }

    /// Queue what a watch response carries: events, or a cancellation for compaction (E5).
    fn absorb(&self, watch: &mut OpenWatch, resp: &WatchResponse) {
        for e in resp.events() {
            let Some(kv) = e.kv() else { continue };
            let put = matches!(e.event_type(), etcd_client::EventType::Put).then(|| self.kv(kv));
            let msg = WatchMsg::Event {
                rev: self.local(kv.mod_revision()),
                key: self.kv(kv).key,
                put,
                prev: e.prev_kv().map(|p| self.kv(p)),
            };
            watch.queue.push_back(msg);
        }
        if resp.canceled() {
            watch.closed = true;
            if resp.compact_revision() > 0 {
                watch
                    .queue
                    .push_back(WatchMsg::Cancelled { compact_rev: self.local(resp.compact_revision()) });
            }
        }
    }

    /// Read one response from watch `id` within `wait`; `false` when none came (or the stream ended).
    fn read(&mut self, id: u8, wait: Duration) -> Result<Option<WatchResponse>, SideError> {
        let rt = &self.store.runtime;
        let w = self.watches.get_mut(&id).expect("an open watch");
        match rt.block_on(async { tokio::time::timeout(wait, w.stream.message()).await }) {
            Err(_) => Ok(None),
            Ok(Ok(Some(resp))) => Ok(Some(resp)),
            Ok(Ok(None)) => {
                w.closed = true;
                Ok(None)
            }
            Ok(Err(e)) => Err(failed(&format!("watch w{id}"), e)),
        }
    }

    /// Wait for the messages the model expects on every watch, and take everything queued.
    fn collect(
        &mut self,
        want: Option<&BTreeMap<u8, Vec<WatchMsg>>>,
        out: &mut BTreeMap<u8, Vec<WatchMsg>>,
    ) -> Result<(), SideError> {
        let ids: Vec<u8> = self.watches.keys().copied().collect();
        for id in ids {
            let need = want.and_then(|m| m.get(&id)).map_or(0, Vec::len);
            while self.watches[&id].queue.len() < need && !self.watches[&id].closed {
                let Some(resp) = self.read(id, MESSAGE_WAIT)? else { break };
                let mut w = self.watches.remove(&id).expect("an open watch");
                self.absorb(&mut w, &resp);
                self.watches.insert(id, w);
            }
            let w = self.watches.get_mut(&id).expect("an open watch");
            if !w.queue.is_empty() {
                out.insert(id, w.queue.drain(..).collect());
            }
        }
        Ok(())
    }

    /// Ask watch `id` for progress (E7); events that come first are queued. etcd drops a request it
    /// cannot answer yet (a watch still catching up from history), so it is sent again every
    /// [`PROGRESS_RESEND`]. When the model says none comes (`expect_none`), [`NO_PROGRESS_WAIT`] without
    /// one is the answer.
    fn progress(&mut self, id: u8, expect_none: bool) -> Result<Answer, SideError> {
        let started = std::time::Instant::now();
        let limit = if expect_none { NO_PROGRESS_WAIT } else { CALL_TIMEOUT };
        loop {
            let rt = &self.store.runtime;
            let w = self.watches.get_mut(&id).expect("an open watch");
            call(rt, "progress request", w.stream.request_progress())?
                .map_err(|e| failed("progress request", e))?;
            let sent = std::time::Instant::now();
            loop {
                let left = limit
                    .saturating_sub(started.elapsed())
                    .min(PROGRESS_RESEND.saturating_sub(sent.elapsed()));
                if left.is_zero() {
                    break;
                }
                let Some(resp) = self.read(id, left)? else { continue };
                let is_progress = !resp.created() && !resp.canceled() && resp.events().is_empty();
                if is_progress {
                    return Ok(Answer::Progress { rev: self.header_rev(resp.header()) });
                }
                let mut w = self.watches.remove(&id).expect("an open watch");
                self.absorb(&mut w, &resp);
                let closed = w.closed;
                self.watches.insert(id, w);
                if closed {
                    return Ok(Answer::NotOpen);
                }
            }
            if started.elapsed() >= limit {
                if expect_none {
                    return Ok(Answer::NoProgress);
                }
                return Err(SideError(format!(
                    "etcd sent no progress notification on w{id} within {limit:?}"
                )));
            }
        }
    }
}
