//! The nouns every component shares: revisions, keys, object identity, actor ids.
//!
//! Kept tiny and `Copy` so that states stay cheap to clone and hash for the exhaustive checker.

use std::fmt;

/// An etcd revision, which is also a Kubernetes resourceVersion (A1). `Rev(0)` means "none yet".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Rev(pub u32);

impl Rev {
    pub const ZERO: Rev = Rev(0);

    /// The revision right after this one (E1: every write gets `current + 1`).
    pub fn next(self) -> Rev {
        Rev(self.0 + 1)
    }
}

impl fmt::Display for Rev {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// An object's name inside the one watched resource type, shown as `default/<letter>`.
///
/// Every modelled object lives in the namespace `default`; the key alone stands for namespace/name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Key(pub u8);

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let letter = (b'a' + (self.0 % 26)) as char;
        if self.0 < 26 {
            write!(f, "default/{letter}")
        } else {
            write!(f, "default/{letter}{}", self.0 / 26)
        }
    }
}

/// The identity of one incarnation of a key (E2: a re-created key is a new incarnation with a new UID).
///
/// Upstream mints a random UUID; the model uses the incarnation's `create_rev`, which is unique per
/// incarnation and deterministic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Uid(pub Rev);

impl fmt::Display for Uid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "uid-{}", self.0)
    }
}

/// An object as the API server serves it and a cache holds it.
///
/// `version` stands for the content: every update bumps it (E2), so two objects with the same key, UID and
/// version have the same content.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Object {
    pub key: Key,
    pub uid: Uid,
    /// metadata.resourceVersion as served (A1: the mod_rev, or the deletion RV on a DELETE, A6).
    pub rv: Rev,
    pub version: u32,
}

impl fmt::Display for Object {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{} v{} ({})", self.key, self.rv, self.version, self.uid)
    }
}

/// One API server of the HA set (A10).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ServerId(pub u8);

impl fmt::Display for ServerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "apiserver-{}", self.0)
    }
}

/// One reflector (a client of the API servers) with its own cache and connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ClientId(pub u8);

impl fmt::Display for ClientId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "reflector-{}", self.0)
    }
}

/// Milliseconds of a duration. Durations are data; the model never reads a clock.
pub type Millis = u64;

/// The three numbers of a release's version, `vX.Y.Z` or `X.Y.Z`: `None` unless it has exactly three
/// parts, each a number. The one reading of a version that the store's and the API server's releases
/// share.
pub fn release_numbers(text: &str) -> Option<[u32; 3]> {
    let text = text.strip_prefix('v').unwrap_or(text);
    let mut parts = text.split('.').map(|p| p.parse::<u32>().ok().filter(|_| !p.is_empty()));
    let numbers = [parts.next()??, parts.next()??, parts.next()??];
    parts.next().is_none().then_some(numbers)
}
