//! Which etcd a conformance run starts (`--etcd`): Debian's etcd-server 3.4.23 from PATH, or an etcd
//! 3.5, 3.6 or 3.7 release built from Go modules by `scripts/install-etcd vX.Y.Z` (`harness/etcd/`, a
//! small program on `go.etcd.io/etcd/server/v3/embed`) into `target/go/etcd/vX.Y.Z/etcd`.

/// The etcd releases with a pinned Go module (`harness/etcd/go.mod` and `harness/etcd/releases/`),
/// oldest first; `--etcd 3.M` names the newest of minor M here.
pub const PINNED: &[&str] = &["3.5.15", "3.5.21", "3.5.35", "3.6.1", "3.6.16", "3.7.3"];

/// An etcd a run can start.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum EtcdToStart {
    /// Debian's etcd-server 3.4.23 (bookworm), from PATH (`scripts/install-etcd`).
    #[default]
    Debian,
    /// A release built from Go modules: its version without the `v` ("3.6.16").
    Built(String),
}

impl EtcdToStart {
    /// `--etcd`'s value: `3.4` (Debian's 3.4.23), `3.5`, `3.6` or `3.7` (the newest pinned release of
    /// that minor), or a release `3.M.P` of those three minors.
    pub fn parse(v: &str) -> Result<Self, String> {
        let known = "known: 3.4 (Debian's 3.4.23); 3.5, 3.6, 3.7 (the newest pinned of each); or a \
                     release 3.5.N, 3.6.N, 3.7.N";
        let parts: Vec<&str> = v.split('.').collect();
        let numbers: Option<Vec<u32>> = parts.iter().map(|p| p.parse().ok()).collect();
        match numbers.as_deref() {
            Some([3, 4]) | Some([3, 4, 23]) => Ok(EtcdToStart::Debian),
            Some([3, minor @ 5..=7]) => {
                let prefix = format!("3.{minor}.");
                let newest =
                    PINNED.iter().rev().find(|p| p.starts_with(&prefix)).expect("one pinned per minor");
                Ok(EtcdToStart::Built((*newest).to_string()))
            }
            Some([3, 5..=7, _]) if !parts.iter().any(|p| p.len() > 1 && p.starts_with('0')) => {
                Ok(EtcdToStart::Built(v.to_string()))
            }
            Some([3, 4, _]) => {
                Err(format!("'{v}': the only etcd 3.4 this run starts is Debian's 3.4.23 ({known})"))
            }
            _ => Err(format!("'{v}' is not an etcd this run can start ({known})")),
        }
    }

    /// Whether its Go module is pinned in the repository (Debian's is a package).
    pub fn pinned(&self) -> bool {
        match self {
            EtcdToStart::Debian => true,
            EtcdToStart::Built(v) => PINNED.contains(&v.as_str()),
        }
    }

    /// Where `scripts/install-etcd` puts it, under `target/go/` (None: from PATH).
    pub fn built_path(&self) -> Option<String> {
        match self {
            EtcdToStart::Debian => None,
            EtcdToStart::Built(v) => Some(format!("etcd/v{v}/etcd")),
        }
    }

    /// The command that installs it.
    pub fn install_hint(&self) -> String {
        match self {
            EtcdToStart::Debian => "run scripts/install-etcd (Debian's etcd-server 3.4.23)".to_string(),
            EtcdToStart::Built(v) if self.pinned() => {
                format!("run scripts/install-etcd v{v} (etcd {v} built from Go modules)")
            }
            EtcdToStart::Built(v) => format!(
                "run scripts/install-etcd --pin v{v} (etcd {v} has no pinned Go module yet; --pin writes one)"
            ),
        }
    }
}

impl std::fmt::Display for EtcdToStart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EtcdToStart::Debian => f.write_str("3.4.23 (Debian)"),
            EtcdToStart::Built(v) => f.write_str(v),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_minor_names_its_newest_pinned_release() {
        assert_eq!(EtcdToStart::parse("3.4"), Ok(EtcdToStart::Debian));
        assert_eq!(EtcdToStart::parse("3.4.23"), Ok(EtcdToStart::Debian));
        assert_eq!(EtcdToStart::parse("3.5"), Ok(EtcdToStart::Built("3.5.35".into())));
        assert_eq!(EtcdToStart::parse("3.6"), Ok(EtcdToStart::Built("3.6.16".into())));
        assert_eq!(EtcdToStart::parse("3.7"), Ok(EtcdToStart::Built("3.7.3".into())));
        assert_eq!(EtcdToStart::parse("3.5.21"), Ok(EtcdToStart::Built("3.5.21".into())));
        assert!(EtcdToStart::parse("3.5.21").unwrap().pinned());
        assert!(!EtcdToStart::parse("3.5.9").unwrap().pinned());
        assert!(EtcdToStart::parse("3.5.9").unwrap().install_hint().contains("--pin v3.5.9"));
        assert_eq!(EtcdToStart::parse("3.7").unwrap().built_path().as_deref(), Some("etcd/v3.7.3/etcd"));
    }

    #[test]
    fn other_versions_are_refused_with_what_is_known() {
        for bad in ["3.3", "3.4.30", "3.8", "4.0", "3.6.x", "v3.6.16", "3.6.016", "3", ""] {
            let e = EtcdToStart::parse(bad).unwrap_err();
            assert!(e.contains(&format!("'{bad}'")) && e.contains("known: 3.4"), "{bad}: {e}");
        }
    }

    /// The table above is the repository's: harness/etcd/go.mod's release and each releases/<version>/.
    #[test]
    fn pinned_is_what_the_repository_pins() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("etcd");
        let go_mod = std::fs::read_to_string(dir.join("go.mod")).unwrap();
        let own = go_mod
            .lines()
            .find_map(|l| l.trim().strip_prefix("go.etcd.io/etcd/server/v3 v"))
            .expect("go.mod requires the server module")
            .to_string();
        let mut found = vec![own];
        for entry in std::fs::read_dir(dir.join("releases")).unwrap().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            assert!(entry.path().join("go.mod").is_file() && entry.path().join("go.sum").is_file(), "{name}");
            found.push(name.trim_start_matches('v').to_string());
        }
        let key = |v: &String| v.split('.').map(|p| p.parse::<u32>().unwrap()).collect::<Vec<_>>();
        found.sort_by_key(key);
        assert_eq!(found, PINNED.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    }
}
