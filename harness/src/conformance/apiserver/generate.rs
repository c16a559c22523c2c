//! Seeded API server sequences, drawn from the model's state as the sequence goes: live keys to delete,
//! revisions between the compacted and the current one for reads, watches and compactions, with a share
//! of refusals (410 below the compaction, 504 above the current revision) and of edge cases (a watch
//! from the future, a continue after the pinned revision was compacted).

use listwatch_model::Key;

use super::model_side::{ModelServer, ModelSetup};
use super::sequence::{ApiOp, ApiSequence, Rv};
use crate::sim::rng::Rng;

const KEYS: u8 = 4;
const WATCHES: u8 = 3;
/// How far ahead of etcd's revision a "far" future RV is: more than any sequence writes.
pub const FAR: u32 = 1000;

/// What a run lets the generator draw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Draws {
    /// Streaming lists with rv unset (A12), which need etcd's progress requests: the real cacher
    /// refuses them on an etcd without (3.4.23), so a run against one does not draw them.
    pub consistent_watch_list: bool,
    /// Streaming lists at all (A12): a release with the `WatchList` gate off by default
    /// (`ApiServerRelease::watch_list`) refuses them in its handler, which this storage-level run does
    /// not have (its storage layer drops `sendInitialEvents` and serves a plain watch), so a run
    /// against one draws a plain watch instead.
    pub watch_list: bool,
    /// A cache held behind on purpose in some sequences ([`ApiOp::HoldCache`]): what depends on a
    /// lagging cache (the freshness waits of A2 and A12, their 504s) is compared too.
    pub lag: bool,
    /// A cache that relists in some sequences ([`ApiOp::RelistCache`], A5): the watches it closes and
    /// the window it starts anew are compared too.
    pub relist: bool,
    /// Writes of another resource ([`ApiOp::Put`] with `other`): a run that has none to write (a server
    /// over HTTP given no second resource) draws a write of the watched resource instead.
    pub other: bool,
    /// Operations straight on etcd: compactions and multi-key deletes at one revision (E4, E8). A
    /// server over HTTP whose etcd the run cannot reach gets neither: each is drawn again.
    pub etcd: bool,
    /// Watches that last until the server ends them at their `timeoutSeconds` (A9).
    pub timeouts: bool,
    /// LISTs of one name by field selector ([`ApiOp::ListNamed`]).
    pub named: bool,
    /// Those LISTs across namespaces too: not against a server someone else runs, whose other
    /// namespaces may hold objects of the same names, or refuse a cluster-wide LIST.
    pub across_namespaces: bool,
    /// A minute on the cacher's clock ([`ApiOp::Minute`], A8's heartbeats): only where the run moves
    /// that clock.
    pub minutes: bool,
}

impl Draws {
    /// Everything: the in-process watch cache over an etcd listwatch started.
    pub const ALL: Draws = Draws {
        consistent_watch_list: true,
        watch_list: true,
        lag: true,
        relist: true,
        other: true,
        etcd: true,
        timeouts: true,
        named: true,
        across_namespaces: true,
        minutes: true,
    };
}

/// Sequence `index` of the run with `seed`: between 4 and `max_ops` operations.
pub fn sequence(seed: u64, index: u64, max_ops: usize, draws: Draws) -> ApiSequence {
    let mut rng = Rng::new(seed ^ index.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0xa9);
    // Only the state matters here, to draw from; no streaming list is drawn without `watch_list`.
    let mut model = ModelServer::new(ModelSetup::storage(draws.consistent_watch_list));
    let len = 4 + rng.below(max_ops.saturating_sub(3).max(1) as u64) as usize;
    // A cache held behind (`HoldCache` .. `ReleaseCache`) in one sequence in eight, from a write and a
    // request that waits for a fresh cache ([`probe`]) through one to four drawn operations, from a
    // stream of draws of its own: up to the hold a sequence is as without it.
    let mut lag = Rng::new(seed ^ index.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x1a9);
    let held = (draws.lag && lag.chance(1, 8)).then(|| {
        let from = lag.below(len as u64) as usize;
        (from, from + 1 + lag.below(4) as usize)
    });
    // A cache relist (`RelistCache`) in one sequence in eight of those with no hold, followed by a
    // watch from a revision the cache had before it, from a stream of draws of its own as the hold's.
    let mut relist = Rng::new(seed ^ index.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x2a9);
    let relisted =
        (draws.relist && held.is_none() && relist.chance(1, 8)).then(|| relist.below(len as u64) as usize);
    // Watches that last until the server's timeout ends them (A9): one in eight of those from a
    // revision etcd has, or from "0" or unset without bookmarks, from a stream of draws of its own, so
    // that up to the first the sequence is as without them. Each lasts a second of the run's time. Not
    // from the future, whose wait for the RV is not what is compared here, nor from "0" or unset with
    // bookmarks, which over HTTP may be a consistent streaming list waiting for a fresh cache (A12).
    let mut timeouts = Rng::new(seed ^ index.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x3a9);
    // Streaming lists that last until their timeout (`timeoutSeconds=2`, A9 with A12): one in eight,
    // from a stream of draws of its own too, but none while the cache is held, where the list would
    // wait for the cache instead (that wait is the held cache's probe, compared without a timeout).
    // Over an etcd without progress requests (3.4.23) the cacher refuses every streaming list at once
    // (ERROR 500, A12), timed or not, as the model does.
    let mut list_timeouts = Rng::new(seed ^ index.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x6a9);
    // One whole LIST in three becomes a LIST of one name by field selector, with the same RV: in the
    // namespace or across namespaces, from a stream of draws of its own (a LIST changes nothing the
    // next draws see, so the rest of the sequence stays as it was).
    let mut named = Rng::new(seed ^ index.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x4a9);
    // A minute on the cacher's clock in one sequence in eight, after a drawn operation or the first
    // one after it that leaves a watch a heartbeat is due to (A8), from a stream of draws of its own (a
    // minute changes nothing the next draws see). Each waits out two of the cacher's bookmark ticks,
    // about two seconds of the run's time.
    let mut minutes = Rng::new(seed ^ index.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x5a9);
    let mut minute = (draws.minutes && minutes.chance(1, 8)).then(|| minutes.below(len as u64) as usize);
    let mut ops = Vec::with_capacity(len + 4);
    for i in 0..len {
        let mut edge = Vec::new();
        match held {
            Some((from, _)) if i == from => edge = probe(&mut lag, &model, draws),
            Some((_, until)) if i == until => edge.push(ApiOp::ReleaseCache),
            _ => {}
        }
        if relisted == Some(i) {
            edge = relist_then_watch(&mut relist, &model);
        }
        for op in edge {
            model.step(&op);
            ops.push(op);
        }
        let mut op = draw(&mut rng, &model, draws);
        if let ApiOp::Watch { from, bookmarks, timeout, .. } = &mut op {
            let drawn = timeouts.chance(1, 8);
            *timeout = drawn && draws.timeouts && may_time_out(*from, *bookmarks, &model);
        }
        if let ApiOp::WatchList { timeout, .. } = &mut op {
            let drawn = list_timeouts.chance(1, 8);
            *timeout = drawn && draws.timeouts && !model.is_held();
        }
        if let ApiOp::List { rv, limit: None } = op {
            if named.chance(1, 3) && draws.named {
                let key = named.below(u64::from(KEYS)) as u8;
                let namespaced = !draws.across_namespaces || named.chance(1, 2);
                op = ApiOp::ListNamed { rv, key, namespaced };
            }
        }
        model.step(&op);
        ops.push(op);
        if minute.is_some_and(|at| i >= at) && model.heartbeat_due() {
            minute = None;
            model.step(&ApiOp::Minute);
            ops.push(ApiOp::Minute);
        }
    }
    ApiSequence::new(Some(seed), Some(index), ops)
}

/// Whether a watch may be one that lasts until its timeout: from a revision etcd has, or from "0" (or
/// unset) as a plain watch, without bookmarks.
fn may_time_out(from: Option<u32>, bookmarks: bool, model: &ModelServer) -> bool {
    from.map_or(!bookmarks, |x| x <= model.store.rev().0)
}

/// The start of a held cache: the hold, a write (so that the cache is behind etcd), and a request
/// that waits for a fresh cache: a consistent LIST (A2's consistent read), a NotOlderThan LIST at
/// etcd's revision (A2) or a consistent streaming list (A12), each of which the held cache makes
/// run out its bounded wait.
fn probe(lag: &mut Rng, model: &ModelServer, draws: Draws) -> Vec<ApiOp> {
    let write = ApiOp::Put { key: lag.below(u64::from(KEYS)) as u8, other: lag.chance(1, 2) && draws.other };
    let after_write = model.store.rev().0 + 1;
    let wait = match lag.below(3) {
        1 => ApiOp::List { rv: Rv::NotOlderThan(after_write), limit: None },
        2 if draws.watch_list && draws.consistent_watch_list => {
            ApiOp::WatchList { id: lag.below(u64::from(WATCHES)) as u8, rv: Rv::Consistent, timeout: false }
        }
        _ => ApiOp::List { rv: Rv::Consistent, limit: None },
    };
    vec![ApiOp::HoldCache, write, wait]
}

/// A cache relist, then a watch from a revision between etcd's compacted one and its current one: from
/// the current one it opens on the new window; from an older one it gets 410 (A4, A5).
fn relist_then_watch(relist: &mut Rng, model: &ModelServer) -> Vec<ApiOp> {
    let (rev, compacted) = (model.store.rev().0, model.store.compacted().0);
    let id = relist.below(u64::from(WATCHES)) as u8;
    let from = if relist.chance(1, 3) { rev } else { between(relist, compacted, rev) };
    let bookmarks = relist.chance(1, 2);
    let watch = ApiOp::Watch { id, from: Some(from), unset: false, bookmarks, timeout: false };
    vec![ApiOp::RelistCache, watch]
}

fn between(rng: &mut Rng, lo: u32, hi: u32) -> u32 {
    lo + rng.below(u64::from(hi.saturating_sub(lo)) + 1) as u32
}

/// The next operation: drawn again while it is one the run cannot make (a run with every kind draws
/// each once, so its sequences stay the same).
fn draw(rng: &mut Rng, model: &ModelServer, draws: Draws) -> ApiOp {
    loop {
        let op = draw_any(rng, model, draws);
        let cannot = match op {
            ApiOp::Compact { .. } | ApiOp::DeleteAll { .. } => !draws.etcd,
            ApiOp::Put { other: true, .. } => !draws.other,
            _ => false,
        };
        if !cannot {
            return op;
        }
    }
}

fn draw_any(rng: &mut Rng, model: &ModelServer, draws: Draws) -> ApiOp {
    let (rev, compacted) = (model.store.rev().0, model.store.compacted().0);
    let key = rng.below(u64::from(KEYS)) as u8;
    let id = rng.below(u64::from(WATCHES)) as u8;
    let live: Vec<u8> = (0..KEYS).filter(|k| model.store.get(Key(*k)).is_some()).collect();
    let limit = |rng: &mut Rng| 1 + rng.below(3) as u8;
    match rng.below(100) {
        0..=27 => ApiOp::Put { key, other: rng.chance(1, 6) },
        28..=35 => match live.as_slice() {
            [_, ..] if rng.chance(4, 5) => ApiOp::Delete { key: live[rng.below(live.len() as u64) as usize] },
            _ => ApiOp::Delete { key },
        },
        36..=40 => {
            let mut keys: Vec<u8> = (0..KEYS).filter(|_| rng.chance(2, 3)).collect();
            if keys.is_empty() {
                keys.push(key);
            }
            ApiOp::DeleteAll { keys }
        }
        41..=47 => {
            let valid = rev > compacted && rng.chance(3, 4);
            let at = if valid { between(rng, compacted + 1, rev) } else { between(rng, 1, rev + 2) };
            ApiOp::Compact { rev: at.max(1) }
        }
        48..=65 => {
            let rv = match rng.below(100) {
                0..=29 => Rv::Consistent,
                30..=54 => Rv::Any,
                // A NotOlderThan in the future waits 3 s for nothing (504): rare.
                55..=74 if rng.chance(1, 40) => Rv::NotOlderThan(rev + 1),
                55..=74 => Rv::NotOlderThan(between(rng, 0, rev)),
                _ => Rv::Exact(between(rng, compacted.saturating_sub(1), rev + 1)),
            };
            // Half the RVs ahead of etcd's revision are far ahead instead, chosen by the key drawn
            // already, so that every other operation of a sequence stays as it was.
            let rv = match rv {
                Rv::NotOlderThan(x) if x > rev && key & 1 == 1 => Rv::NotOlderThan(rev + FAR),
                Rv::Exact(x) if x > rev && key & 1 == 1 => Rv::Exact(rev + FAR),
                _ => rv,
            };
            ApiOp::List { rv, limit: rng.chance(1, 2).then(|| limit(rng)) }
        }
        66..=71 if model.has_token() => ApiOp::Continue { limit: limit(rng) },
        66..=71 => ApiOp::List { rv: Rv::Consistent, limit: Some(1) },
        72..=85 => {
            let from = rng.chance(3, 4).then(|| between(rng, 0, rev + 2));
            let from = from.map(|x| if x > rev && key & 1 == 1 { rev + FAR } else { x });
            // Half the watches from "0" send no resourceVersion instead, chosen by what was drawn
            // already, so that every other operation of a sequence stays as it was.
            let unset = from.is_none() && (key ^ id) & 1 == 1;
            ApiOp::Watch { id, from, unset, bookmarks: rng.chance(1, 2), timeout: false }
        }
        86..=91 if !draws.watch_list => ApiOp::Watch {
            id,
            from: Some(between(rng, 0, rev)),
            unset: false,
            bookmarks: true,
            timeout: false,
        },
        86..=91 => {
            let rv = match rng.below(3) {
                0 if draws.consistent_watch_list => Rv::Consistent,
                0 | 1 => Rv::Any,
                _ => Rv::NotOlderThan(between(rng, 0, rev)),
            };
            ApiOp::WatchList { id, rv, timeout: false }
        }
        _ => {
            let open: Vec<u8> = (0..WATCHES).filter(|i| model.is_open(*i)).collect();
            ApiOp::Stop { id: if open.is_empty() { id } else { open[rng.below(open.len() as u64) as usize] } }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: Draws = Draws::ALL;

    #[test]
    fn a_seed_and_index_give_the_same_sequence_and_others_differ() {
        assert_eq!(sequence(7, 3, 30, ALL), sequence(7, 3, 30, ALL));
        assert_ne!(sequence(7, 3, 30, ALL).ops, sequence(7, 4, 30, ALL).ops);
    }

    /// The lag comes from a stream of its own: up to the hold a sequence is the one drawn without lag
    /// (after it the draws follow the model's state, which a held cache changes); the hold comes
    /// before an operation and the release, if any, after at least one.
    #[test]
    fn a_held_cache_leaves_the_operations_before_it_as_they_were() {
        let no_lag = Draws { lag: false, ..ALL };
        let mut held = 0;
        for i in 0..200 {
            let with = sequence(3, i, 30, ALL).ops;
            let without = sequence(3, i, 30, no_lag).ops;
            let hold = with.iter().position(|o| matches!(o, ApiOp::HoldCache));
            let release = with.iter().position(|o| matches!(o, ApiOp::ReleaseCache));
            let before = hold.unwrap_or(with.len());
            assert_eq!(with[..before], without[..before], "sequence {i}");
            match (hold, release) {
                (Some(h), Some(r)) => {
                    assert!(h + 3 < r, "sequence {i}: the probe and a drawn operation between")
                }
                (None, Some(_)) => panic!("sequence {i}: a release with no hold"),
                _ => {}
            }
            held += usize::from(hold.is_some());
        }
        assert!((10..=50).contains(&held), "about one sequence in eight: {held} of 200");
    }

    /// A relist comes from a stream of its own: up to it a sequence is the one drawn without it; it
    /// comes in sequences with no hold, followed by a watch from a revision etcd still has.
    #[test]
    fn a_relist_leaves_the_operations_before_it_as_they_were() {
        let no_relist = Draws { relist: false, ..ALL };
        let mut relisted = 0;
        for i in 0..200 {
            let with = sequence(5, i, 30, ALL).ops;
            let without = sequence(5, i, 30, no_relist).ops;
            let Some(at) = with.iter().position(|o| matches!(o, ApiOp::RelistCache)) else {
                assert_eq!(with, without, "sequence {i}");
                continue;
            };
            assert_eq!(with[..at], without[..at], "sequence {i}");
            assert!(matches!(with[at + 1], ApiOp::Watch { from: Some(_), .. }), "sequence {i}: {with:?}");
            assert!(!with.contains(&ApiOp::HoldCache), "sequence {i}: a relist and a hold");
            relisted += 1;
        }
        assert!((5..=45).contains(&relisted), "about one sequence in eight of seven: {relisted} of 200");
    }

    /// Timed watches and streaming lists come from streams of their own: up to the first a sequence
    /// is the one drawn without them; each watch is from a revision etcd had, or from "0" or unset
    /// without bookmarks, and about one watch in eight of those is one; some are from "0"; about one
    /// streaming list in eight is timed, none while the cache is held.
    #[test]
    fn a_timed_watch_leaves_the_operations_before_it_as_they_were() {
        let untimed = Draws { timeouts: false, ..ALL };
        let (mut timed, mut eligible, mut from_zero) = (0, 0, 0);
        let (mut timed_lists, mut lists) = (0, 0);
        for i in 0..400 {
            let with = sequence(9, i, 30, ALL);
            let without = sequence(9, i, 30, untimed).ops;
            let first = with.ops.iter().position(ApiOp::times_out);
            let before = first.unwrap_or(with.ops.len());
            assert_eq!(with.ops[..before], without[..before], "sequence {i}");
            let mut model = ModelServer::new(ModelSetup::storage(true));
            for op in &with.ops {
                if let ApiOp::Watch { from, bookmarks, timeout, .. } = op {
                    let may = may_time_out(*from, *bookmarks, &model);
                    assert!(!timeout || may, "sequence {i}: {op} is from the future or may stream a list");
                    eligible += usize::from(may);
                    timed += usize::from(*timeout);
                    from_zero += usize::from(*timeout && from.is_none());
                }
                if let ApiOp::WatchList { timeout, .. } = op {
                    assert!(!timeout || !model.is_held(), "sequence {i}: {op} waits for a held cache");
                    lists += usize::from(!model.is_held());
                    timed_lists += usize::from(*timeout);
                }
                model.step(op);
            }
        }
        assert!(timed * 12 > eligible && timed * 5 < eligible, "{timed} timed of {eligible}");
        assert!(from_zero > 0 && from_zero < timed, "{from_zero} of {timed} timed watches from \"0\"");
        assert!(timed_lists * 12 > lists && timed_lists * 5 < lists, "{timed_lists} timed of {lists}");
    }

    /// A LIST of one name takes the place of a whole LIST with the same RV, and nothing else changes;
    /// both scopes come, and about one whole LIST in three becomes one.
    #[test]
    fn a_named_list_replaces_a_whole_list_and_nothing_else() {
        let unnamed = Draws { named: false, ..ALL };
        let (mut named, mut whole, mut namespaced) = (0, 0, 0);
        for i in 0..200 {
            let with = sequence(11, i, 30, ALL).ops;
            let without = sequence(11, i, 30, unnamed).ops;
            assert_eq!(with.len(), without.len(), "sequence {i}");
            for (a, b) in with.iter().zip(&without) {
                match (a, b) {
                    (ApiOp::ListNamed { rv, namespaced: n, .. }, ApiOp::List { rv: r, limit: None }) => {
                        assert_eq!(rv, r, "sequence {i}");
                        named += 1;
                        namespaced += usize::from(*n);
                    }
                    (ApiOp::List { limit: None, .. }, _) => whole += 1,
                    _ => assert_eq!(a, b, "sequence {i}"),
                }
            }
        }
        assert!(named * 5 > whole && named < whole, "{named} named, {whole} whole");
        assert!(namespaced > 0 && namespaced < named, "{namespaced} of {named} in the namespace");
    }

    /// Every freshness wait meets a held cache in a run of 100 sequences: a consistent LIST (A2's
    /// consistent read), a NotOlderThan LIST (A2) and a streaming list (A12).
    #[test]
    fn every_freshness_wait_meets_a_held_cache() {
        let mut lagging = Vec::new();
        for i in 0..100 {
            let mut held = false;
            for op in sequence(0, i, 30, ALL).ops {
                match op {
                    ApiOp::HoldCache => held = true,
                    ApiOp::ReleaseCache => held = false,
                    op if held => lagging.push(op),
                    _ => {}
                }
            }
        }
        let has = |f: &dyn Fn(&ApiOp) -> bool| lagging.iter().any(f);
        assert!(has(&|o| matches!(o, ApiOp::List { rv: Rv::Consistent, limit: None })), "{lagging:?}");
        assert!(has(&|o| matches!(o, ApiOp::List { rv: Rv::NotOlderThan(_), .. })), "{lagging:?}");
        assert!(has(&|o| matches!(o, ApiOp::WatchList { .. })), "{lagging:?}");
    }

    /// A minute comes in about one sequence in eight, after an operation that leaves a watch a
    /// heartbeat is due to, and takes nothing away: without it the sequence is the same.
    #[test]
    fn a_minute_comes_while_a_watch_with_bookmarks_is_open_and_changes_nothing_else() {
        let without_minutes = Draws { minutes: false, ..ALL };
        let mut with_minute = 0;
        for i in 0..400 {
            let with = sequence(13, i, 30, ALL).ops;
            let without = sequence(13, i, 30, without_minutes).ops;
            let rest: Vec<ApiOp> = with.iter().filter(|o| **o != ApiOp::Minute).cloned().collect();
            assert_eq!(rest, without, "sequence {i}");
            let Some(at) = with.iter().position(|o| *o == ApiOp::Minute) else { continue };
            with_minute += 1;
            assert_eq!(with.len(), without.len() + 1, "one minute at most: sequence {i}");
            let mut model = ModelServer::new(ModelSetup::storage(true));
            for op in &with[..at] {
                model.step(op);
            }
            assert!(model.heartbeat_due(), "sequence {i}: {with:?}");
        }
        assert!((15..=75).contains(&with_minute), "about one sequence in eight: {with_minute} of 400");
    }

    #[test]
    fn sequences_reach_every_kind_of_operation() {
        let ops: Vec<ApiOp> = (0..200).flat_map(|i| sequence(1, i, 30, ALL).ops).collect();
        let has = |f: &dyn Fn(&ApiOp) -> bool| ops.iter().any(f);
        assert!(has(&|o| matches!(o, ApiOp::Put { other: true, .. })));
        assert!(has(&|o| matches!(o, ApiOp::DeleteAll { keys } if keys.len() > 1)));
        assert!(has(&|o| matches!(o, ApiOp::Compact { .. })));
        assert!(has(&|o| matches!(o, ApiOp::List { rv: Rv::Exact(_), limit: Some(_) })));
        assert!(has(&|o| matches!(o, ApiOp::Continue { .. })));
        assert!(has(&|o| matches!(o, ApiOp::Watch { from: Some(_), bookmarks: true, .. })));
        assert!(has(&|o| matches!(o, ApiOp::Watch { from: None, unset: true, .. })));
        assert!(has(&|o| matches!(o, ApiOp::Watch { from: None, unset: false, .. })));
        assert!(has(&|o| matches!(o, ApiOp::WatchList { rv: Rv::Consistent, .. })));
        assert!(has(&|o| matches!(o, ApiOp::Stop { .. })));
        // RVs far ahead of etcd's (part of the future ones): LISTs with and without a limit, watches.
        let far = |x: u32| x >= FAR;
        assert!(has(&|o| matches!(o, ApiOp::List { rv: Rv::Exact(x), limit: Some(_) } if far(*x))));
        assert!(has(&|o| matches!(o, ApiOp::List { rv: Rv::Exact(x), limit: None }
            | ApiOp::ListNamed { rv: Rv::Exact(x), .. } if far(*x))));
        for rv in [Rv::Consistent, Rv::Any] {
            assert!(has(&|o| matches!(o, ApiOp::ListNamed { rv: r, namespaced: true, .. } if *r == rv)));
            assert!(has(&|o| matches!(o, ApiOp::ListNamed { rv: r, namespaced: false, .. } if *r == rv)));
        }
        assert!(has(&|o| matches!(o, ApiOp::ListNamed { rv: Rv::NotOlderThan(_), .. })));
        assert!(has(&|o| matches!(o, ApiOp::ListNamed { rv: Rv::Exact(_), .. })));
        assert!(has(&|o| matches!(o, ApiOp::List { rv: Rv::NotOlderThan(x), .. }
            | ApiOp::ListNamed { rv: Rv::NotOlderThan(x), .. } if far(*x))));
        assert!(has(&|o| matches!(o, ApiOp::Watch { from: Some(x), .. } if far(*x))));
        assert!(has(&|o| matches!(o, ApiOp::HoldCache)) && has(&|o| matches!(o, ApiOp::ReleaseCache)));
        let no_consistent = Draws { consistent_watch_list: false, ..ALL };
        let ops: Vec<ApiOp> = (0..200).flat_map(|i| sequence(1, i, 30, no_consistent).ops).collect();
        assert!(!ops.iter().any(|o| matches!(o, ApiOp::WatchList { rv: Rv::Consistent, .. })));
        assert!(ops.iter().any(|o| matches!(o, ApiOp::WatchList { .. })));
        let no_watch_list = Draws { watch_list: false, ..ALL };
        let ops: Vec<ApiOp> = (0..200).flat_map(|i| sequence(1, i, 30, no_watch_list).ops).collect();
        assert!(!ops.iter().any(|o| matches!(o, ApiOp::WatchList { .. })));
    }

    /// A server over HTTP with no etcd and no second resource to write gets none of those, and the
    /// rest as often as before.
    #[test]
    fn a_run_over_http_draws_only_what_it_can_make() {
        let http = Draws { lag: false, relist: false, other: false, etcd: false, minutes: false, ..ALL };
        let ops: Vec<ApiOp> = (0..200).flat_map(|i| sequence(1, i, 30, http).ops).collect();
        let cannot = |o: &ApiOp| {
            matches!(
                o,
                ApiOp::Compact { .. }
                    | ApiOp::DeleteAll { .. }
                    | ApiOp::Put { other: true, .. }
                    | ApiOp::HoldCache
                    | ApiOp::ReleaseCache
                    | ApiOp::RelistCache
                    | ApiOp::Minute
            )
        };
        assert!(!ops.iter().any(cannot), "{:?}", ops.iter().find(|o| cannot(o)));
        assert!(ops.iter().any(|o| matches!(o, ApiOp::Delete { .. })));
        assert!(ops.iter().any(|o| matches!(o, ApiOp::List { rv: Rv::Exact(_), .. })));
        assert!(ops.iter().any(|o| matches!(o, ApiOp::WatchList { .. })));
        let no_lag = Draws { lag: false, relist: false, minutes: false, ..ALL };
        let all: Vec<ApiOp> = (0..200).flat_map(|i| sequence(1, i, 30, no_lag).ops).collect();
        assert_eq!(ops.len(), all.len(), "as many operations, only other kinds");
    }
}
