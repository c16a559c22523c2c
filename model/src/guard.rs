//! The cache guards: whether one watch event may change what a cache holds for its key.
//!
//! client-go applies every ADDED/MODIFIED/DELETED to its store as it comes (C4). A cache that is handed
//! a replayed or reordered event (a re-watch from an older RV, bug 000; a lagging server, #59848) then
//! goes back in time for that key. listwatch's cache applies an event only when it is news:
//!
//! - **RV guard.** An ADDED/MODIFIED applies only if it is newer than the object held for the key (A1: an
//!   object's RV is the revision of its last write, so a strictly greater RV is a later write). A DELETED
//!   may carry the RV of the object's last write (A6 before PR #58547), so it needs only to be no older.
//! - **UID guard.** A DELETED removes only the incarnation it names (E2: a re-created key has a new UID);
//!   a replayed delete of an earlier incarnation leaves the new one in place.
//!
//! - **Claimed RV.** The RV a reflector claims after an event never goes backwards ([`advance`]; C4 has no
//!   such check upstream, bug 000).
//!
//! A LIST is authoritative and bypasses the guards (C7 `Replace`). The rules are generic over the UID
//! type, so the model cache (UIDs are incarnation revisions) and the live cache of real objects (UIDs are
//! strings) decide with the same code.

/// What the cache holds for a key, or what an event carries: an incarnation and its resourceVersion.
#[derive(Debug, PartialEq, Eq)]
pub struct Stamp<'a, U: ?Sized> {
    pub uid: &'a U,
    pub rv: u64,
}

impl<U: ?Sized> Clone for Stamp<'_, U> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<U: ?Sized> Copy for Stamp<'_, U> {}

/// The guards' decision on one event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Admit {
    /// The event is news: apply it.
    Apply,
    /// The event is older than what the cache holds for the key: drop it.
    Stale,
    /// A delete of an incarnation the cache no longer holds: drop it.
    OtherIncarnation,
    /// A delete of a key the cache does not hold: nothing to do.
    Absent,
}

/// An ADDED or MODIFIED event carrying `incoming`, with `held` in the cache.
pub fn upsert<U: PartialEq + ?Sized>(held: Option<Stamp<'_, U>>, incoming: Stamp<'_, U>) -> Admit {
    match held {
        Some(held) if incoming.rv <= held.rv => Admit::Stale,
        _ => Admit::Apply,
    }
}

/// A DELETED event carrying `incoming`, with `held` in the cache.
pub fn delete<U: PartialEq + ?Sized>(held: Option<Stamp<'_, U>>, incoming: Stamp<'_, U>) -> Admit {
    match held {
        None => Admit::Absent,
        Some(held) if held.uid != incoming.uid => Admit::OtherIncarnation,
        Some(held) if incoming.rv < held.rv => Admit::Stale,
        Some(_) => Admit::Apply,
    }
}

/// The RV a reflector claims after an event at `event_rv`, having claimed `claimed`.
pub fn advance<R: Ord>(claimed: R, event_rv: R) -> R {
    claimed.max(event_rv)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(uid: &u32, rv: u64) -> Stamp<'_, u32> {
        Stamp { uid, rv }
    }

    #[test]
    fn an_upsert_applies_to_an_absent_key_and_only_when_newer() {
        assert_eq!(upsert(None, s(&1, 5)), Admit::Apply);
        assert_eq!(upsert(Some(s(&1, 5)), s(&1, 6)), Admit::Apply);
        assert_eq!(upsert(Some(s(&1, 5)), s(&1, 5)), Admit::Stale);
        assert_eq!(upsert(Some(s(&1, 5)), s(&1, 4)), Admit::Stale);
        // A newer write of a new incarnation replaces the old one (its delete was missed).
        assert_eq!(upsert(Some(s(&1, 5)), s(&2, 9)), Admit::Apply);
        // An older incarnation replayed after a re-create does not come back.
        assert_eq!(upsert(Some(s(&2, 9)), s(&1, 5)), Admit::Stale);
    }

    #[test]
    fn a_delete_removes_only_the_incarnation_it_names() {
        assert_eq!(delete(None, s(&1, 5)), Admit::Absent);
        assert_eq!(delete(Some(s(&1, 5)), s(&1, 7)), Admit::Apply);
        // A6 before PR #58547: the delete carries the object's last RV.
        assert_eq!(delete(Some(s(&1, 5)), s(&1, 5)), Admit::Apply);
        assert_eq!(delete(Some(s(&1, 5)), s(&1, 4)), Admit::Stale);
        assert_eq!(delete(Some(s(&2, 9)), s(&1, 12)), Admit::OtherIncarnation);
    }
}
