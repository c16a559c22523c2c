//! The live reflector: a tokio task that feeds the model's sans-IO reflector from a transport and carries
//! out what it asks (requests, timers, cache changes). Every decision is the model's: this file only
//! forwards inputs to `handle_*` and executes `poll_output`.

use std::collections::BTreeMap;

use listwatch_model::{
    Cache, CacheOp, Flaws, Key, Notification, Object, Output, Reflector, ReflectorConfig, Request, Timer,
};
use tokio::time::{Duration, Instant};

use super::shared_cache::{Change, SharedCache};
use super::sync::Arc;
use super::transport::{ListWatch, WatchItem, WatchStream};

/// The live cache of model objects.
pub type LiveCache = SharedCache<Key, Object>;

/// What the driver did, in order: for tests and for judging the live run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Record {
    Sent(Request),
    /// The RV the reflector claims after an input.
    Rv(u32),
    Notified(Notification),
    /// The reflector told its user that a round of `ListAndWatch` failed (C12).
    Told,
}

/// A reflector driven by tokio.
#[derive(Debug)]
pub struct Driver<T: ListWatch> {
    reflector: Reflector,
    /// The model's informer store: it decides what each operation changes (C7); the shared cache
    /// publishes the result.
    model_cache: Cache,
    flaws: Flaws,
    transport: T,
    cache: Arc<LiveCache>,
    stream: Option<T::Stream>,
    deadlines: BTreeMap<Timer, Instant>,
    records: Vec<Record>,
}

impl<T: ListWatch> Driver<T> {
    pub fn new(transport: T, config: ReflectorConfig, flaws: Flaws) -> Self {
        Driver {
            reflector: Reflector::new(config, flaws),
            model_cache: Cache::default(),
            flaws,
            transport,
            cache: Arc::new(LiveCache::new()),
            stream: None,
            deadlines: BTreeMap::new(),
            records: Vec::new(),
        }
    }

    /// The cache this driver writes; readers clone the `Arc`.
    pub fn cache(&self) -> Arc<LiveCache> {
        Arc::clone(&self.cache)
    }

    pub fn records(&self) -> &[Record] {
        &self.records
    }

    /// Run until the reflector has nothing left to do (a flawed reflector that stopped), or for ever.
    pub async fn run(&mut self) {
        self.reflector.start();
        loop {
            self.carry_out().await;
            let rv = self.reflector.resource_version().0;
            if self.records.last() != Some(&Record::Rv(rv)) {
                self.records.push(Record::Rv(rv));
            }
            let timer = self.next_deadline();
            if self.stream.is_none() && timer.is_none() {
                return;
            }
            let far = Instant::now() + Duration::from_secs(86_400 * 365);
            let (timer, at) = timer.map_or((None, far), |(t, at)| (Some(t), at));
            tokio::select! {
                item = next_item(&mut self.stream) => match item {
                    WatchItem::Event(e) => self.reflector.handle_watch_event(e),
                    WatchItem::End(end) => {
                        self.stream = None;
                        self.reflector.handle_watch_ended(end);
                    }
                },
                () = tokio::time::sleep_until(at) => {
                    if let Some(t) = timer {
                        self.deadlines.remove(&t);
                        self.reflector.handle_timeout(t);
                    }
                }
            }
        }
    }

    /// The earliest deadline of a timer the reflector still has armed.
    fn next_deadline(&mut self) -> Option<(Timer, Instant)> {
        let armed: Vec<Timer> = self.reflector.timers().map(|(t, _)| t).collect();
        self.deadlines.retain(|t, _| armed.contains(t));
        self.deadlines.iter().map(|(t, at)| (*t, *at)).min_by_key(|(t, at)| (*at, *t))
    }

    /// Execute every output; a request's answer is fed back at once, which may produce more.
    async fn carry_out(&mut self) {
        while let Some(output) = self.reflector.poll_output() {
            match output {
                Output::Arm(t) => {
                    let after = Duration::from_millis(self.reflector.duration(t));
                    self.deadlines.insert(t, Instant::now() + after);
                }
                Output::Cancel => self.stream = None,
                Output::Tell => self.records.push(Record::Told),
                Output::Cache(op) => self.publish(&op),
                Output::Send(request) => {
                    self.records.push(Record::Sent(request));
                    self.stream = None;
                    match request {
                        Request::List { rv } => {
                            let result = self.transport.list(rv).await;
                            self.reflector.handle_list_result(result);
                        }
                        Request::ListPage { rv, limit, cont } => {
                            let result = self.transport.list_page(rv, limit, cont).await;
                            self.reflector.handle_list_result(result);
                        }
                        Request::Watch { from, timeout_secs, bookmarks } => {
                            match self.transport.watch(from, timeout_secs, bookmarks).await {
                                Ok(stream) => self.stream = Some(stream),
                                Err(e) => self.reflector.handle_watch_refused(e),
                            }
                        }
                        Request::WatchList { rv, timeout_secs, .. } => {
                            match self.transport.watch_list(rv, timeout_secs).await {
                                Ok(stream) => self.stream = Some(stream),
                                Err(e) => self.reflector.handle_watch_refused(e),
                            }
                        }
                    }
                }
            }
        }
    }

    /// Apply a cache operation to the model's store, then publish what changed.
    fn publish(&mut self, op: &CacheOp) {
        let mut notes = Vec::new();
        self.model_cache.apply(op, self.flaws, &mut notes);
        let rv = u64::from(self.reflector.resource_version().0);
        match op {
            CacheOp::Replace { rv: list_rv, .. } => {
                let all = self.model_cache.objects().map(|o| (o.key, Arc::new(*o))).collect();
                self.cache.replace(all, u64::from(list_rv.0));
            }
            CacheOp::Apply(_) => {
                let changes = notes.iter().map(|n| match n {
                    Notification::Add(o) | Notification::Update { new: o, .. } => {
                        Change::Upsert(o.key, Arc::new(*o))
                    }
                    Notification::Delete(o) | Notification::DeletedFinalStateUnknown(o) => {
                        Change::Remove(o.key)
                    }
                });
                self.cache.apply(changes, rv);
            }
        }
        self.records.extend(notes.into_iter().map(Record::Notified));
        // C8: the model says when the cache has been informed by a full list.
        if self.reflector.has_synced() {
            self.cache.readiness().mark_synced();
        }
    }
}

async fn next_item<S: WatchStream>(stream: &mut Option<S>) -> WatchItem {
    match stream {
        Some(s) => s.next().await,
        None => std::future::pending().await,
    }
}
