//! A8's heartbeat: the bookmark the watch cache sends, about once a minute, to each watch that asked
//! for bookmarks. The model's server sends a bookmark whenever the checker picks one
//! ([`ApiServer::bookmark`], never twice at one RV, so that the state space stays finite); this is
//! what the cacher's own timer sends when a minute has passed, for `conformance apiserver` to compare.
//!
//! Read in k8s.io/apiserver v0.22.17 to v0.37.2, `pkg/storage/cacher/cacher.go` and
//! `cache_watcher.go`:
//! - `Cacher.dispatchEvents` keeps `lastProcessedResourceVersion`: the RV of the last event, or of the
//!   last progress notification, the cache took from its etcd watch (`watchCache.UpdateResourceVersion`
//!   hands the cacher a bookmark it does not dispatch). A relist (`watchCache.Replace`) does not move
//!   it. Each jittered second the cacher sends a bookmark at that RV to every watch whose minute is up
//!   (`watcherBookmarkTimeBuckets`, `defaultBookmarkFrequency`), then schedules it a minute on.
//! - Until v0.30 a cacher that took nothing yet (`lastProcessedResourceVersion == 0`) sends none. The
//!   watches it found due are dropped from the schedule for good until v0.27 (`popExpiredWatchers`,
//!   then `continue`), and scheduled a minute on from v0.28
//!   ([`ApiServerRelease::reschedules_heartbeats_before_first_event`]). From v0.31 it starts from the
//!   RV of the cache's first list ([`ApiServerRelease::heartbeat_before_first_event`]).
//! - A watch sends on only what is above the RV it started at (`cacheWatcher.process`): the RV it
//!   asked for or the highest of its initial events. A watch from "0" gets its initial ADDEDs at the
//!   cache's RV (`newCacheIntervalFromStore`), so it starts there, but for an empty cache, where it
//!   started at 0 until v0.32 ([`ApiServerRelease::watch_from_now_starts_at_cache_rv`]). A heartbeat at
//!   that RV or below is dropped; one above it is sent again each minute, also at an RV already sent.
//! - A watch with a deadline gets its last bookmark 2 s before it (`nextBookmarkTime`); the
//!   comparison's timed watches last a second, so they get none.

use litemap::LiteMap;

use crate::api::{Message, WatchEvent};
use crate::server::{ApiServer, Outbox};
use crate::{ApiServerRelease, ClientId, Rev};

/// The cacher's heartbeat schedule for the watches that asked for bookmarks.
#[derive(Debug, PartialEq, Eq)]
pub struct Heartbeats {
    release: ApiServerRelease,
    /// The RV the next heartbeat carries: `None` while the cacher has taken nothing (before v0.31).
    last_processed: Option<Rev>,
    /// Each scheduled watch and the RV it started at: `None` below every RV (a watch asked from "0"
    /// that started there).
    scheduled: LiteMap<ClientId, Option<Rev>>,
}
crate::clone_by_field!(Heartbeats { release, last_processed, scheduled: map });

impl Heartbeats {
    /// A cacher whose cache listed at `listed`.
    pub fn new(release: ApiServerRelease, listed: Rev) -> Self {
        let last_processed = release.heartbeat_before_first_event().then_some(listed);
        Heartbeats { release, last_processed, scheduled: LiteMap::new() }
    }

    /// The cache took an event, or a progress notification, at `rv` from its etcd watch.
    pub fn took(&mut self, rv: Rev) {
        self.last_processed = Some(rv);
    }

    /// `client`'s watch opened on `server`, from `from` (`None`: from "0"), with bookmarks or not.
    /// Call it right after [`ApiServer::watch`], before the cache takes anything more.
    pub fn opened(&mut self, client: ClientId, from: Option<Rev>, bookmarks: bool, server: &ApiServer) {
        self.scheduled.remove(&client);
        let Some(w) = server.watches().get(&client).filter(|_| bookmarks) else { return };
        let start = match from {
            // The RV asked for, or the last of the events after it that the watch opened with.
            Some(_) => Some(w.sent),
            None if self.release.watch_from_now_starts_at_cache_rv() => Some(server.cache().rv()),
            None if server.cache().objects().next().is_some() => Some(server.cache().rv()),
            None => None,
        };
        self.scheduled.insert(client, start);
    }

    /// `client`'s watch ended.
    pub fn closed(&mut self, client: ClientId) {
        self.scheduled.remove(&client);
    }

    /// A minute passed: the heartbeat each scheduled watch still open on `server` gets.
    pub fn minute(&mut self, server: &ApiServer) -> Outbox {
        self.scheduled.retain(|client, _| server.watches().contains_key(client));
        let Some(rv) = self.last_processed else {
            if !self.release.reschedules_heartbeats_before_first_event() {
                self.scheduled.clear();
            }
            return Vec::new();
        };
        let due = self.scheduled.iter().filter(|(_, start)| start.is_none_or(|s| rv > s));
        due.map(|(client, _)| (*client, Message::Event(WatchEvent::Bookmark(rv)))).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::WatchFrom;
    use crate::flaw::Flaws;
    use crate::store::{Prefix, Store, TombstonePolicy};
    use crate::{Key, ServerId};

    const V27: ApiServerRelease = ApiServerRelease::new(27, 16);
    const V30: ApiServerRelease = ApiServerRelease::new(30, 14);
    const V31: ApiServerRelease = ApiServerRelease::new(31, 14);
    const V32: ApiServerRelease = ApiServerRelease::new(32, 13);

    struct Cacher {
        store: Store,
        server: ApiServer,
        beats: Heartbeats,
    }

    impl Cacher {
        fn new(release: ApiServerRelease) -> Self {
            let mut store = Store::new(TombstonePolicy::DropAtCompaction, None);
            let server = ApiServer::start(ServerId(0), &mut store, 100, Flaws::NONE);
            let beats = Heartbeats::new(release, server.cache().rv());
            Cacher { store, server, beats }
        }
        fn put(&mut self, key: u8) {
            self.store.put(Prefix::Watched, Key(key));
            self.take();
        }
        fn delete(&mut self, key: u8) {
            self.store.delete(Prefix::Watched, Key(key)).expect("live");
            self.take();
        }
        fn take(&mut self) {
            while self.server.can_ingest(&self.store) {
                let (outcomes, _) = self.server.ingest(&mut self.store);
                for o in outcomes {
                    if let crate::server::IngestOutcome::Event(e) = o {
                        self.beats.took(e.rv);
                    }
                }
            }
        }
        fn watch(&mut self, client: u8, from: Option<u32>) {
            let from = from.map(Rev);
            self.server.watch(ClientId(client), from.map_or(WatchFrom::Now, WatchFrom::Rv), true);
            self.beats.opened(ClientId(client), from, true, &self.server);
        }
        fn minute(&mut self) -> Vec<(u8, u32)> {
            let out = self.beats.minute(&self.server);
            out.into_iter()
                .map(|(c, m)| match m {
                    Message::Event(WatchEvent::Bookmark(rv)) => (c.0, rv.0),
                    other => panic!("{other:?}"),
                })
                .collect()
        }
    }

    /// A watch that saw the cache move gets a heartbeat at the cache's RV each minute, at an RV it
    /// was already sent too; one that did not gets none.
    #[test]
    fn a_heartbeat_comes_each_minute_once_the_cache_moved_past_the_watch() {
        let mut c = Cacher::new(V32);
        c.put(0);
        let rv = c.server.cache().rv().0;
        c.watch(0, Some(rv));
        c.watch(1, None);
        assert_eq!(c.minute(), vec![]);
        c.put(1);
        let moved = c.server.cache().rv().0;
        assert_eq!(c.minute(), vec![(0, moved), (1, moved)]);
        assert_eq!(c.minute(), vec![(0, moved), (1, moved)], "again, at the same RV");
        c.server.forget(ClientId(1));
        assert_eq!(c.minute(), vec![(0, moved)], "a stopped watch gets none");
    }

    /// Until v0.30 a cacher that took nothing sends none, and until v0.27 never schedules those
    /// watches again; from v0.31 it sends the RV its cache listed at (to a watch that started below
    /// it).
    #[test]
    fn before_the_first_event_a_heartbeat_follows_the_release() {
        for (release, later) in [(V27, vec![]), (V30, vec![(0, 1)])] {
            let mut c = Cacher::new(release);
            c.watch(0, Some(0));
            assert_eq!(c.minute(), vec![], "{release}");
            c.put(0);
            assert_eq!(c.minute(), later, "{release}: dropped from the schedule for good, or not");
        }
        let mut store = Store::new(TombstonePolicy::DropAtCompaction, None);
        store.put(Prefix::Other, Key(1));
        let server = ApiServer::start(ServerId(0), &mut store, 100, Flaws::NONE);
        let beats = Heartbeats::new(V31, server.cache().rv());
        let mut c = Cacher { store, server, beats };
        let listed = c.server.cache().rv().0;
        // From "0" on the empty cache: before v0.32 it starts at 0.
        c.watch(0, None);
        assert_eq!(c.minute(), vec![(0, listed)]);
    }

    /// Before v0.32 a watch from "0" on an empty cache starts at 0, so any RV the cache took brings
    /// it a heartbeat at once; from v0.32 it starts at the cache's RV. With objects, both start there.
    #[test]
    fn a_watch_from_zero_on_an_empty_cache_follows_the_release() {
        for (release, beats) in [(V31, true), (V32, false)] {
            let mut c = Cacher::new(release);
            c.put(0);
            c.put(1);
            c.delete(1);
            c.watch(1, None);
            assert_eq!(c.minute(), vec![], "{release}: objects, so it starts at the cache's RV");
            c.delete(0);
            c.watch(0, None);
            let rv = c.server.cache().rv().0;
            let expected = if beats { vec![(0, rv), (1, rv)] } else { vec![(1, rv)] };
            assert_eq!(c.minute(), expected, "{release}");
        }
    }
}
