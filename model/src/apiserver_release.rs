//! What of the API server's behaviour depends on its release, as `conformance apiserver` found it
//! against the watch cache and etcd3 store of real k8s.io/apiserver releases (v0.22.17 to v0.37.2), and
//! as the upstream source at those tags explains each difference. A world over "API server vX.Y.Z"
//! (`--apiserver` on `check`, `simulate` and the conformance commands) takes its servers' settings from
//! here, beside [`crate::EtcdRelease`]'s.

use crate::api::ApiError;
use crate::types::{Object, Rev};

/// A k8s.io/apiserver release, `v0.minor.patch` (Kubernetes `1.minor.patch`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ApiServerRelease {
    pub minor: u32,
    pub patch: u32,
}

impl ApiServerRelease {
    /// The release the model's server follows when none is named.
    pub const NEWEST: ApiServerRelease = ApiServerRelease::new(37, 2);

    pub const fn new(minor: u32, patch: u32) -> Self {
        ApiServerRelease { minor, patch }
    }

    /// `"v0.33.13"` (the `v` optional, `1.33.13` as Kubernetes names it too); `None` for anything else.
    pub fn parse(text: &str) -> Option<Self> {
        let [major, minor, patch] = crate::types::release_numbers(text)?;
        (major <= 1).then_some(ApiServerRelease::new(minor, patch))
    }

    /// A12: whether the `WatchList` feature gate is on by default, so that a WATCH with
    /// `sendInitialEvents` is served as a streaming list. Its versioned defaults
    /// (`pkg/features/kube_features.go`, read at v0.33.13 and v0.34.13): alpha and off from 1.27, beta
    /// and on in 1.32, off again in 1.33 ("the json and proto streaming encoders appear to work
    /// better"), on from 1.34. Off, the handler's validation refuses the request with 422
    /// (`handlers/get.go` calls `ValidateListOptions` with the gate; apimachinery's
    /// `validateWatchOptions`: "sendInitialEvents is forbidden for watch unless the WatchList feature
    /// gate is enabled"); the storage layer drops the option (`CacheDelegator.Watch`, `Cacher.Watch`
    /// before v0.33).
    pub fn watch_list(self) -> bool {
        self.minor == 32 || self.minor >= 34
    }

    /// A2: how a LIST read from etcd at an Exact RV ahead of etcd's revision is answered. From v0.34 a
    /// 504 with `ResourceVersionTooLarge`, as a NotOlderThan LIST the cache cannot reach; before, etcd's
    /// own error ("mvcc: required revision is a future revision") as a 500. The etcd3 store's `GetList`
    /// maps `ErrFutureRev` from kubernetes#132374 (issue kubernetes#132358), read in
    /// `pkg/storage/etcd3/store.go` at v0.33.13 (absent) and v0.34.13.
    pub fn future_exact_list(self) -> ApiError {
        if self.minor >= 34 {
            ApiError::TooLargeResourceVersion
        } else {
            ApiError::InternalError
        }
    }

    /// A2: whether a consistent LIST (`rv` unset) is served from the cache once it has caught up with
    /// etcd's revision, which it learns from a progress request (E7); otherwise it reads etcd and the
    /// cache moves only with its own events. `ConsistentListFromCache`: alpha and off in v0.29.6 and v0.30.14,
    /// beta and on from 1.31 (`kube_features.go`; the cacher's `GetList` checks it). A client sees the
    /// same list either way while the cache takes each revision whole (the model's server serves it
    /// from a cache that holds etcd's revision, from etcd otherwise; `partial-revision-served` is where
    /// it differs); what also differs is whether the cache's RV moves to etcd's on the read, which
    /// `conformance apiserver`'s barrier relies on.
    pub fn consistent_list_from_cache(self) -> bool {
        self.minor >= 31
    }

    /// A2, E7: whether a NotOlderThan read of one key from the cache (a LIST of one name in a
    /// namespace) that must wait for the cache asks etcd for a progress notification, given whether the
    /// server `trusts` etcd's (3.4.31, 3.5.13 and later: `feature_support_checker.go`, etcd#17507).
    /// v0.31 and v0.32 ask whenever `ConsistentListFromCache` is on, without the check of etcd's
    /// support that the LIST path makes: `WaitUntilFreshAndGet` against `WaitUntilFreshAndList`
    /// (`pkg/storage/cacher/watch_cache.go` at v0.31.14 and v0.32.13); an older etcd answers, and the
    /// LIST is served at once where a whole LIST waits its 3 s for 504. From v0.33 both check
    /// `delegator.ConsistentReadSupported()` (read at v0.33.13); before v0.31 the gate is off.
    pub fn one_key_wait_asks_progress(self, trusts: bool) -> bool {
        match self.minor {
            31 | 32 => true,
            minor => minor >= 33 && trusts,
        }
    }

    /// A14: whether a cache that restarts or relists answers 429 until it has listed again
    /// (`ResilientWatchCacheInitialization`, beta and on from 1.31; absent in v0.29.6 and v0.30.14's
    /// `kube_features.go`).
    pub fn resilient_cache_init(self) -> bool {
        self.minor >= 31
    }

    /// A8's heartbeat ([`crate::heartbeat`]): whether a cacher that has taken no event from its etcd
    /// watch yet sends heartbeats, at the RV its cache first listed at. From v0.31 `dispatchEvents`
    /// first polls `watchCache.getListResourceVersion`; until v0.30 it sends none while its last
    /// processed RV is 0 and drops the watches then due from its schedule (read in
    /// `pkg/storage/cacher/cacher.go` at v0.30.14 and v0.31.14).
    pub fn heartbeat_before_first_event(self) -> bool {
        self.minor >= 31
    }

    /// A8's heartbeat ([`crate::heartbeat`]): whether a cacher that has taken no event yet schedules
    /// the watches it found due a minute on. From v0.28 `dispatchEvents` adds them again
    /// (`addWatcherThreadUnsafe`, TODO #115478); until v0.27 `popExpiredWatchers` drops them, and they
    /// get no heartbeat for as long as they last (read in `pkg/storage/cacher/cacher.go` at v0.27.16
    /// and v0.28.15).
    pub fn reschedules_heartbeats_before_first_event(self) -> bool {
        self.minor >= 28
    }

    /// A8's heartbeat ([`crate::heartbeat`]): whether a watch from "0" on an empty cache counts its
    /// heartbeats from the cache's RV it was served at. From v0.32 `cacheWatcher.processInterval`
    /// starts at the interval's RV when it is above the one asked for; before, at the highest RV of
    /// the watch's initial ADDEDs (which carry the cache's RV, `newCacheIntervalFromStore`), and at 0
    /// when there are none, so that the first heartbeat goes to such a watch whatever it already knows
    /// (read in `pkg/storage/cacher/cache_watcher.go` and `watch_cache_interval.go` at v0.31.14 and
    /// v0.32.13, and `watch_cache.go` at v0.22.17).
    pub fn watch_from_now_starts_at_cache_rv(self) -> bool {
        self.minor >= 32
    }

    /// A2: whether a LIST served from the watch cache (`rv="0"`, NotOlderThan) has its items in key
    /// order, as etcd's have. PR #113730 ("fix inconsistency issues for both etcd3 and watchcache")
    /// sorts them in `WaitUntilFreshAndList`, from v0.27 (read in `pkg/storage/cacher/watch_cache.go`
    /// at v0.26.15, where they come from a `List` of the cache's store, a Go map, and v0.27.16).
    /// Before, their order changes from run to run; the model answers in key order, one of them, and
    /// conformance takes the items as a set there.
    pub fn cache_lists_in_key_order(self) -> bool {
        self.minor >= 27
    }

    /// A3: whether the synthetic ADDEDs that open a watch from "0" (and a streaming list's, A12) come
    /// in key order. The watch cache makes them from a `List` of its store, a Go map
    /// (`newCacheIntervalFromStore`); PR #120897 ("Ensure that initial events are sorted for
    /// WatchList") sorts them by key, from v0.30.0 and v0.29.4 (read in
    /// `pkg/storage/cacher/watch_cache_interval.go` at v0.28.15, v0.29.3, v0.29.4 and v0.30.0). Before,
    /// their order is the map's and changes from run to run. The model sends them in key order, one
    /// of the orders such a release may send; conformance takes them as a set there.
    pub fn initial_events_in_key_order(self) -> bool {
        self.minor >= 30 || (self.minor == 29 && self.patch >= 4)
    }

    /// A6 for a DELETE's own answer: the object the storage layer's `Delete` returns, `last` as it
    /// was before the delete at `deleted_at`. From v0.26 it carries the deletion RV, as the watch's
    /// DELETED event does; before, the object's own last RV, so that a client that took a DELETE's
    /// answer as "the current RV" went back in time. kubernetes#113368, fixed by PR #113369: the
    /// etcd3 store's `conditionalDelete` decodes with `origState.rev` at v0.25.16 and with
    /// `deleteResp.Header.Revision` at v0.26.15 (`pkg/storage/etcd3/store.go`).
    pub fn deleted_object(self, last: Object, deleted_at: Rev) -> Object {
        let rv = if self.minor >= 26 { deleted_at } else { last.rv };
        Object { rv, ..last }
    }

    /// A2 for a LIST of one name in a namespace at an Exact RV (the registry reads its one key, and the
    /// cache hands an Exact read of one key to etcd): the list RV it answers, for the revision `read`
    /// while etcd is at `current`. From v0.24 the revision read, as for any Exact LIST; before, etcd's
    /// current revision, newer than what was read: the etcd3 store's `GetToList` stamps the list with
    /// `getResp.Header.Revision`, the header of a read `WithRev` (v0.22.17, v0.23.17), where `GetList`
    /// answers `returnedRV`, the revision read (v0.24.17), `pkg/storage/etcd3/store.go`. PR #106948
    /// ("Simplify storage interface", 1.24) replaced `List` and `GetToList` with `GetList`.
    pub fn exact_key_list_rv(self, read: Rev, current: Rev) -> Rev {
        if self.minor >= 24 {
            read
        } else {
            current
        }
    }
}

impl std::fmt::Display for ApiServerRelease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "v0.{}.{}", self.minor, self.patch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(text: &str) -> ApiServerRelease {
        ApiServerRelease::parse(text).unwrap()
    }

    #[test]
    fn parses_the_module_and_the_kubernetes_spelling() {
        assert_eq!(ApiServerRelease::parse("v0.33.13"), Some(ApiServerRelease::new(33, 13)));
        assert_eq!(ApiServerRelease::parse("1.31.4"), Some(ApiServerRelease::new(31, 4)));
        for bad in ["", "v0.33", "0.33.x", "v0.33.1.2", "2.33.1", "v0..1"] {
            assert_eq!(ApiServerRelease::parse(bad), None, "{bad}");
        }
        assert_eq!(of("v0.30.14").to_string(), "v0.30.14");
    }

    /// Each boundary as conformance and the upstream source put it.
    #[test]
    fn rules_change_where_the_releases_changed() {
        let streams = |v| of(v).watch_list();
        assert!(!streams("v0.29.6") && !streams("v0.30.14") && !streams("v0.31.14") && streams("v0.32.13"));
        assert!(!streams("v0.33.13") && streams("v0.34.13") && streams("v0.37.2"));
        let future = |v| of(v).future_exact_list();
        assert_eq!(future("v0.33.13"), ApiError::InternalError);
        assert_eq!(future("v0.34.0"), ApiError::TooLargeResourceVersion);
        let from_cache = |v| of(v).consistent_list_from_cache();
        assert!(!from_cache("v0.30.14") && from_cache("v0.31.0") && from_cache("v0.37.2"));
        let resilient = |v| of(v).resilient_cache_init();
        assert!(!resilient("v0.30.14") && resilient("v0.31.0") && resilient("v0.37.2"));
        let listed = |v| of(v).cache_lists_in_key_order();
        assert!(!listed("v0.26.15") && listed("v0.27.0") && listed("v0.37.2"));
        let sorted = |v| of(v).initial_events_in_key_order();
        assert!(!sorted("v0.28.15") && !sorted("v0.29.3") && sorted("v0.29.4") && sorted("v0.30.0"));
        let last = Object { key: crate::Key(1), uid: crate::Uid(Rev(2)), rv: Rev(3), version: 2 };
        let deleted = |v| of(v).deleted_object(last, Rev(7));
        assert_eq!(deleted("v0.25.16"), last, "the object's own RV");
        assert_eq!(deleted("v0.26.0"), Object { rv: Rev(7), ..last }, "the deletion RV");
        assert_eq!(deleted("v0.37.2"), Object { rv: Rev(7), ..last });
        let asks = |v, trusts| of(v).one_key_wait_asks_progress(trusts);
        assert!(!asks("v0.30.14", true) && asks("v0.31.0", false) && asks("v0.32.13", false));
        assert!(!asks("v0.33.0", false) && asks("v0.33.0", true) && asks("v0.37.2", true));
        let one_key = |v| of(v).exact_key_list_rv(Rev(1), Rev(3));
        assert_eq!((one_key("v0.23.17"), one_key("v0.24.0"), one_key("v0.37.2")), (Rev(3), Rev(1), Rev(1)));
    }

    /// What the model's server answers under each release's rules (A2, A12).
    #[test]
    fn the_server_answers_as_its_release_does() {
        use crate::api::{ListRv, Message};
        use crate::flaw::Flaws;
        use crate::server::ApiServer;
        use crate::store::{Prefix, Store, TombstonePolicy};
        use crate::types::{ClientId, Key, Rev, ServerId};

        let mut store = Store::new(TombstonePolicy::DropAtCompaction, None);
        store.put(Prefix::Watched, Key(0));
        let ahead = ListRv::Exact(Rev(store.rev().0 + 5));
        let client = ClientId(0);
        for (release, exact, stream) in [
            ("v0.33.13", ApiError::InternalError, Some(ApiError::Invalid)),
            ("v0.34.13", ApiError::TooLargeResourceVersion, None),
            ("v0.32.13", ApiError::InternalError, None),
        ] {
            let mut server =
                ApiServer::start(ServerId(0), &mut store, 4, Flaws::NONE).with_release(of(release));
            assert_eq!(
                server.list(client, ahead, &store),
                vec![(client, Message::List(Err(exact)))],
                "{release}"
            );
            assert_eq!(
                server.list_page(client, ahead, 1, None, &store),
                vec![(client, Message::List(Err(exact)))],
                "{release}: a first page reads etcd too"
            );
            let streamed = server.watch_list(client, ListRv::Any, true, &store);
            match stream {
                Some(e) => assert_eq!(streamed, vec![(client, Message::WatchRefused(e))], "{release}"),
                None => assert!(
                    !streamed.is_empty()
                        && streamed.iter().all(|(_, m)| !matches!(m, Message::WatchRefused(_))),
                    "{release}: {streamed:?}"
                ),
            }
        }
    }

    /// A2, E7: over an etcd whose progress requests it does not trust, a LIST of one name in a
    /// namespace ahead of the cache asks for progress in v0.31 and v0.32 only, and is then answered
    /// with the one object; a whole LIST, or one across namespaces, waits without asking.
    #[test]
    fn a_one_key_wait_asks_progress_as_its_release_does() {
        use crate::api::{ListRv, Message};
        use crate::flaw::Flaws;
        use crate::server::ApiServer;
        use crate::store::{Prefix, Store, TombstonePolicy};
        use crate::types::{ClientId, Key, ServerId};

        let client = ClientId(0);
        for (release, namespaced, asks) in [
            ("v0.32.13", true, true),
            ("v0.31.14", true, true),
            ("v0.32.13", false, false),
            ("v0.33.13", true, false),
            ("v0.30.14", true, false),
        ] {
            let mut store = Store::new(TombstonePolicy::DropAtCompaction, None);
            store.put(Prefix::Watched, Key(0));
            store.put(Prefix::Watched, Key(1));
            let mut server = ApiServer::start(ServerId(0), &mut store, 4, Flaws::NONE)
                .with_release(of(release))
                .with_progress_requests(false);
            store.put(Prefix::Other, Key(2));
            let ahead = ListRv::NotOlderThan(store.rev());
            let out = server.list_named(client, ahead, Key(1), namespaced, &store);
            assert!(out.is_empty(), "{release}: it waits for the cache");
            assert_eq!(server.waits_for_freshness(), asks, "{release}, namespaced {namespaced}");
            assert!(server.can_progress(&store), "{release}: etcd would answer");
            let answered = server.progress_notify(&store);
            let [(c, Message::List(Ok(list)))] = answered.as_slice() else {
                panic!("{release}: progress answers the waiting LIST: {answered:?}");
            };
            assert_eq!(
                (*c, list.rv, list.items.len()),
                (client, store.rev(), 1),
                "{release}: the one object"
            );
            assert_eq!(list.items[0].key, Key(1));
        }
        let mut store = Store::new(TombstonePolicy::DropAtCompaction, None);
        let mut server = ApiServer::start(ServerId(0), &mut store, 4, Flaws::NONE)
            .with_release(of("v0.32.13"))
            .with_progress_requests(false);
        store.put(Prefix::Other, Key(2));
        assert!(server.list(client, ListRv::NotOlderThan(store.rev()), &store).is_empty());
        assert!(!server.waits_for_freshness(), "a whole LIST checks etcd's support");
    }

    /// The model's defaults are the newest release's.
    #[test]
    fn the_newest_release_is_the_default_model() {
        let newest = ApiServerRelease::NEWEST;
        assert!(newest.watch_list() && newest.resilient_cache_init());
        assert_eq!(newest.future_exact_list(), ApiError::TooLargeResourceVersion);
        assert!(crate::Config::default().resilient_cache_init);
    }
}
