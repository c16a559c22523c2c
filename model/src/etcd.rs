//! What of etcd's behaviour depends on its release, as `conformance etcd` and `conformance apiserver`
//! found it against real releases (3.4.23, 3.5.15, 3.5.21, 3.5.35, 3.6.1, 3.6.16, 3.7.3) and as the
//! upstream change that explains each difference says. A world over "etcd X.Y.Z" (`--etcd` on `check`,
//! `simulate` and the conformance commands) takes its store's and servers' settings from here.

use crate::store::TombstonePolicy;

/// An etcd release: `major.minor.patch`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EtcdRelease {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
}

impl EtcdRelease {
    pub const fn new(major: u32, minor: u32, patch: u32) -> Self {
        EtcdRelease { major, minor, patch }
    }

    /// `"3.5.35"` (a leading `v` allowed); `None` for anything else.
    pub fn parse(text: &str) -> Option<Self> {
        let [major, minor, patch] = crate::types::release_numbers(text)?;
        Some(EtcdRelease::new(major, minor, patch))
    }

    /// E4: a tombstone at exactly the compaction revision is kept from 3.5.16 on (etcd#18274).
    pub fn tombstones(self) -> TombstonePolicy {
        if self >= EtcdRelease::new(3, 5, 16) {
            TombstonePolicy::KeepAtCompactRev
        } else {
            TombstonePolicy::DropAtCompaction
        }
    }

    /// E7: whether it answers progress requests at all (a `RequestProgress` on the watch stream),
    /// which the API server checks before it serves consistent reads and streaming lists from its
    /// cache (A12): 3.4.31, 3.5.13 and later, as the API server's own version check requires.
    pub fn progress_requests(self) -> bool {
        match (self.major, self.minor) {
            (3, 4) => self.patch >= 31,
            (3, 5) => self.patch >= 13,
            (3, minor) => minor >= 6,
            (major, _) => major > 3,
        }
    }

    /// E7: whether it withholds a requested progress notification from a watch whose start revision
    /// is still ahead of the current one: `progressIfSync` returns early on `rev < w.startRev` from
    /// etcd#20229 (issue etcd#20221), in 3.7, 3.6.2 and 3.5.22 on (read in the server module at
    /// v3.5.21/v3.5.22, v3.6.1/v3.6.2 and v3.7.3). Its 3.4 backport (etcd#20250) is in no 3.4 release
    /// compared here; Debian's 3.4.23 answers.
    pub fn progress_after_start(self) -> bool {
        match (self.major, self.minor) {
            (3, 5) => self.patch >= 22,
            (3, 6) => self.patch >= 2,
            (3, minor) => minor >= 7,
            (major, _) => major > 3,
        }
    }
}

impl std::fmt::Display for EtcdRelease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(text: &str) -> EtcdRelease {
        EtcdRelease::parse(text).unwrap()
    }

    #[test]
    fn parses_three_numbers_only() {
        assert_eq!(EtcdRelease::parse("3.5.35"), Some(EtcdRelease::new(3, 5, 35)));
        assert_eq!(EtcdRelease::parse("v3.7.3"), Some(EtcdRelease::new(3, 7, 3)));
        for bad in ["", "3.5", "3.5.x", "3.5.35.1", "3..5", "-3.5.1"] {
            assert_eq!(EtcdRelease::parse(bad), None, "{bad}");
        }
        assert_eq!(of("3.6.16").to_string(), "3.6.16");
    }

    /// Each boundary as conformance and the upstream source put it.
    #[test]
    fn rules_change_where_the_releases_changed() {
        let keeps = |v| of(v).tombstones() == TombstonePolicy::KeepAtCompactRev;
        assert!(!keeps("3.4.23") && !keeps("3.5.15") && keeps("3.5.16") && keeps("3.5.21") && keeps("3.6.0"));
        let answers = |v| of(v).progress_requests();
        assert!(!answers("3.4.23") && answers("3.4.31") && !answers("3.5.12") && answers("3.5.13"));
        assert!(answers("3.6.0") && answers("3.7.3") && answers("4.0.0"));
        let withholds = |v| of(v).progress_after_start();
        assert!(!withholds("3.4.23") && !withholds("3.5.21") && withholds("3.5.22") && withholds("3.5.35"));
        assert!(!withholds("3.6.1") && withholds("3.6.2") && withholds("3.7.0") && withholds("4.0.0"));
    }
}
