//! The guarantees, each with a name, the sentence a violation quotes, and a non-vacuity witness.

use std::fmt;

use listwatch_model::ClientId;

/// One guarantee a list/watch cache must keep.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Property {
    NoResurrectedDelete,
    NoRvRegression,
    CacheIsSnapshot,
    Converges,
    /// Locks taken and waits entered, as a tracer sees them: no request holds a lock while it waits
    /// with no bound.
    NoLockAcrossUnboundedWait,
    /// C5, every ending of a watch, and what must come next (judged from what the client received and
    /// did; "progress" is an event received or a second of model time on the stream):
    ///
    /// | how the watch ended                                   | progress | next request          |
    /// |-------------------------------------------------------|----------|-----------------------|
    /// | the server closed it cleanly (its timeout, a relist)  | yes      | WATCH from the RV     |
    /// | the client closed it itself (its own timeout)         | any      | WATCH from the RV     |
    /// | the connection broke                                  | yes      | WATCH from the RV     |
    /// | closed or broke within a second with no event         | no       | any, after a backoff  |
    /// | WATCH refused 429, or connection refused              | -        | WATCH, after a backoff|
    /// | ERROR event 429                                       | -        | WATCH, after a backoff|
    /// | ERROR event 410 (Expired)                             | -        | LIST, after a backoff |
    /// | ERROR event or refusal 500, other errors              | -        | any, after a backoff  |
    ///
    /// The property forbids a LIST (and a WATCH from another RV than the one claimed) where the table
    /// says WATCH; the backoffs are [`Property::Backoff`]'s.
    NoNeedlessRelist,
    NoBusyLoop,
    /// etcd's robustness names: ordered, unique, resumable. A bookmark may repeat the RV of the last
    /// event (A8).
    WatchOrdered,
    /// etcd's robustness names: reliable (no gaps), bookmarkable.
    WatchReliable,
    /// C1: failures are followed by a backoff, and requests are bounded per unit of time.
    Backoff,
    /// C7: the handlers' notifications add up to the cache.
    NotificationsMatchCache,
    /// Once the environment is quiet, a stale client catches up within a bound of model time.
    StaleBounded,
    /// C8: ready (synced) exactly once a full list has reached the cache.
    ReadyMeansListed,
}

impl Property {
    /// How many properties there are.
    pub const COUNT: usize = 13;

    pub const ALL: [Property; Self::COUNT] = [
        Property::NoResurrectedDelete,
        Property::NoRvRegression,
        Property::CacheIsSnapshot,
        Property::Converges,
        Property::NoLockAcrossUnboundedWait,
        Property::NoNeedlessRelist,
        Property::NoBusyLoop,
        Property::WatchOrdered,
        Property::WatchReliable,
        Property::Backoff,
        Property::NotificationsMatchCache,
        Property::StaleBounded,
        Property::ReadyMeansListed,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Property::NoResurrectedDelete => "no-resurrected-delete",
            Property::NoRvRegression => "no-rv-regression",
            Property::CacheIsSnapshot => "cache-is-snapshot",
            Property::Converges => "converges",
            Property::NoLockAcrossUnboundedWait => "no-lock-across-unbounded-wait",
            Property::NoNeedlessRelist => "no-needless-relist",
            Property::NoBusyLoop => "no-busy-loop",
            Property::WatchOrdered => "watch-ordered",
            Property::WatchReliable => "watch-reliable",
            Property::Backoff => "backoff",
            Property::NotificationsMatchCache => "notifications-match-cache",
            Property::StaleBounded => "stale-bounded",
            Property::ReadyMeansListed => "ready-means-listed",
        }
    }

    /// The guarantee, as a violation quotes it.
    pub fn guarantee(self) -> &'static str {
        match self {
            Property::NoResurrectedDelete => {
                "an object incarnation the cache has seen deleted, or that was deleted at or before the RV \
                 the reflector claims, never reappears in the cache"
            }
            Property::NoRvRegression => {
                "the RV a reflector claims never goes backwards, and no event at or below an RV it already \
                 applied is applied again"
            }
            Property::CacheIsSnapshot => {
                "between events, the cache equals the store's state at the RV the reflector claims"
            }
            Property::Converges => {
                "once the environment is quiet, the reflector reaches an open watch with a cache equal to the \
                 store within a bounded number of requests that do not move its RV, and never rests with a cache \
                 that differs"
            }
            Property::NoLockAcrossUnboundedWait => "nobody holds a lock while in a wait that has no bound",
            Property::NoNeedlessRelist => {
                "a watch that ends cleanly, times out (either side) or breaks after making progress, and a \
                 WATCH refused or failed with 429 or a refused connection, are followed by a re-watch from the \
                 claimed RV, never by a LIST or a streaming list (sendInitialEvents)"
            }
            Property::NoBusyLoop => "an actor never takes more than a bounded number of steps without progress",
            Property::WatchOrdered => {
                "a watch stream delivers events in strictly increasing RV order, each once, none at or below \
                 the RV it started from"
            }
            Property::WatchReliable => {
                "a watch stream skips no event and invents none: every write after its RV arrives as what the \
                 store did there (ADDED a new incarnation, MODIFIED a new value, DELETED the last value at the \
                 deletion RV), and a bookmark is sent only when every event up to it was"
            }
            Property::Backoff => {
                "after a failed LIST, a refused WATCH, an ERROR event or a very short watch, the next request \
                 waits at least the backoff floor (except the one consistent LIST after 410 or too large, and \
                 the one retry or LIST after a streaming list failed before its initial-events-end bookmark), and \
                 no client sends more than a bounded number of requests without its RV moving or the floor \
                 of time passing"
            }
            Property::NotificationsMatchCache => {
                "folding the handlers' notifications (add, update, delete, delete with final state unknown) \
                 gives the cache after every step, and each names the object the handlers last saw"
            }
            Property::ReadyMeansListed => {
                "a client reports ready (synced) only once a full LIST has reached its cache, and from then on"
            }
            Property::StaleBounded => {
                "once the environment is quiet, a client whose cache differs from the store catches up within \
                 two minutes of model time, and never holds a connection that nothing will ever answer with \
                 nothing scheduled"
            }
        }
    }

    /// What must be reachable for a pass to mean something.
    pub fn witness(self) -> &'static str {
        match self {
            Property::NoResurrectedDelete => "a delete is observed after a compaction",
            Property::NoRvRegression => "a relist after 410 happens",
            Property::CacheIsSnapshot => "a cache holds objects at an RV past a compaction",
            Property::Converges => "a cache converges after the faults",
            Property::NoLockAcrossUnboundedWait => "a request is served while another cluster is unreachable",
            Property::NoNeedlessRelist => "a watch resumes after a clean close",
            Property::NoBusyLoop => "a reflector waits out a backoff",
            Property::WatchOrdered => "a resumed watch delivers events",
            Property::WatchReliable => "a bookmark moves a watch past its last event",
            Property::Backoff => "a request follows a backoff waited out after a failure",
            Property::NotificationsMatchCache => {
                "a relist notifies the delete of an object it no longer lists"
            }
            Property::StaleBounded => "a client stale once the environment went quiet catches up",
            Property::ReadyMeansListed => "a client becomes ready",
        }
    }

    pub fn parse(name: &str) -> Option<Property> {
        Property::ALL.into_iter().find(|p| p.name() == name)
    }
}

impl fmt::Display for Property {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A broken guarantee: which, by whom, and what was seen.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Violation {
    pub property: Property,
    pub client: Option<ClientId>,
    pub detail: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} violated: \"{}\"", self.property, self.property.guarantee())?;
        match self.client {
            Some(c) => write!(f, " ({c}: {})", self.detail),
            None => write!(f, " ({})", self.detail),
        }
    }
}
