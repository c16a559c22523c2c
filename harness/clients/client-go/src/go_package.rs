//! A Go user's own client: `go:DIR,test=NAME[,waiters=N][,timeout=Ns][,resync=Ns][,handlers=N][,slow-handler][,watch-error-handler]` names a test in the Go package
//! at DIR that registers its code with the `listwatchtest` package (`harness/listwatchtest`);
//! `go:DIR,test=NAME,manager` one that registers a client manager (`listwatchtest.RunManager`). The
//! package's test binary serves listwatch's protocol for that test, as the client-go shim does for
//! its modes: the same processes, bubbles and replies. The binary is the one `LISTWATCH_GO_TEST_BINARY`
//! names (a `go test` run of `listwatchtest.Run` sets it to itself), or `go test -c` of DIR.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::config::{handlers_option, seconds_option, waiters_option, ClientGo, GoTest, Lists, WAITERS};

/// The `go:` specs, each with what it runs (`listwatch clients`).
pub const SPECS: [(&str, &str); 2] = [
    (
        "go:DIR,test=NAME[,options]",
        "the code a test of the Go package at DIR registers with listwatchtest.Run (its test binary built with go test -c); options as above but @vX.Y.Z, transform, panic-handler, rv and match",
    ),
    (
        "go:DIR,test=NAME,manager",
        "the client manager a test of the package at DIR registers with listwatchtest.RunManager: worlds of 2-3 clusters and their requests, no reflectors",
    ),
];

/// The spec [`parse`] reads.
const USAGE: &str =
    "go:DIR,test=NAME[,waiters=N][,timeout=Ns][,resync=Ns][,handlers=N][,slow-handler][,watch-error-handler] or go:DIR,test=NAME,manager";

/// The configuration a `go:` spec names, its test binary built.
pub fn parse(spec: &str) -> Result<ClientGo, String> {
    let rest = spec.strip_prefix("go:").unwrap_or(spec);
    let mut parts = rest.split(',');
    let dir = parts.next().unwrap_or("").to_string();
    if dir.is_empty() {
        return Err(format!("{spec:?}: no package directory (expected {USAGE})"));
    }
    let mut config = ClientGo {
        name: "go",
        lists: Lists::Go,
        about: "a Go package's own client, registered by a test with listwatchtest.Run",
        version: "go".to_string(),
        waiters: WAITERS,
        page_size: None,
        binary: PathBuf::new(),
        timeout_secs: None,
        resync_secs: None,
        handlers: 1,
        transform: false,
        panic_handler: false,
        slow_handler: false,
        watch_error_handler: false,
        pager_rv: None,
        pager_match: None,
        go: None,
        manager: false,
    };
    let mut test = None;
    for option in parts {
        match option.split_once('=') {
            Some(("test", name)) if !name.is_empty() && !name.contains(char::is_whitespace) => {
                test = Some(name.to_string());
            }
            Some(("waiters", n)) => config.waiters = waiters_option(spec, n)?,
            Some(("timeout", t)) => config.timeout_secs = Some(seconds_option(spec, "timeout", t)?),
            Some(("resync", t)) => config.resync_secs = Some(seconds_option(spec, "resync", t)?),
            Some(("handlers", n)) => config.handlers = handlers_option(spec, n)?,
            None if option == "slow-handler" => config.slow_handler = true,
            None if option == "watch-error-handler" => config.watch_error_handler = true,
            None if option == "manager" => config.manager = true,
            _ => {
                return Err(format!(
                    "{spec:?}: unknown option {option:?} (expected {USAGE}; test names the Go test that calls listwatchtest.Run)"
                ))
            }
        }
    }
    let test = test.ok_or_else(|| format!("{spec:?}: which test? (expected {USAGE})"))?;
    let reflector_options = config.waiters != WAITERS
        || config.timeout_secs.is_some()
        || config.resync_secs.is_some()
        || config.handlers != 1
        || config.slow_handler
        || config.watch_error_handler;
    if config.manager && reflector_options {
        return Err(format!(
            "{spec:?}: a manager takes no client options (expected go:DIR,test=NAME,manager)"
        ));
    }
    if !Path::new(&dir).is_dir() {
        return Err(format!("{spec:?}: {dir} is not a directory (expected the Go package's directory)"));
    }
    config.binary = test_binary(spec, &dir)?;
    config.go = Some(GoTest { dir, test });
    Ok(config)
}

/// The `-test.run` pattern that selects exactly `test` (each level of a subtest anchored and quoted).
pub fn run_pattern(test: &str) -> String {
    test.split('/')
        .map(|level| {
            let quoted: String = level
                .chars()
                .flat_map(|c| {
                    let escape = c.is_ascii_punctuation() && c != '_';
                    escape.then_some('\\').into_iter().chain(std::iter::once(c))
                })
                .collect();
            format!("^{quoted}$")
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// The package's test binary: the one a running `go test` named, or one `go test -c` builds into the
/// system's temporary directory (one per package directory, rebuilt each time: Go's build cache makes
/// that quick when nothing changed).
fn test_binary(spec: &str, dir: &str) -> Result<PathBuf, String> {
    if let Some(bin) = std::env::var_os("LISTWATCH_GO_TEST_BINARY").filter(|b| !b.is_empty()) {
        let bin = PathBuf::from(bin);
        if !bin.is_file() {
            return Err(format!("{spec:?}: LISTWATCH_GO_TEST_BINARY={} is not a file", bin.display()));
        }
        return Ok(bin);
    }
    let abs = std::fs::canonicalize(dir).map_err(|e| format!("{spec:?}: {dir}: {e}"))?;
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    std::hash::Hash::hash(&abs, &mut hasher);
    let out_dir =
        std::env::temp_dir().join(format!("listwatch-go-{:016x}", std::hash::Hasher::finish(&hasher)));
    std::fs::create_dir_all(&out_dir).map_err(|e| format!("{spec:?}: {}: {e}", out_dir.display()))?;
    let bin = out_dir.join("package.test");
    let built = Command::new("go")
        .args(["test", "-c", "-o"])
        .arg(&bin)
        .arg(".")
        .current_dir(&abs)
        .output()
        .map_err(|e| format!("{spec:?}: cannot run go ({e}): Go 1.25 or later must be on PATH"))?;
    if !built.status.success() {
        let text = String::from_utf8_lossy(&built.stderr);
        let why = text.lines().find(|l| !l.starts_with('#')).unwrap_or("no message").trim();
        return Err(format!("{spec:?}: the package does not build (go test -c): {why}"));
    }
    if !bin.is_file() {
        return Err(format!("{spec:?}: the package has no tests to build (go test -c wrote nothing)"));
    }
    Ok(bin)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_run_pattern_selects_one_test_and_quotes_it() {
        assert_eq!(run_pattern("TestReflector"), "^TestReflector$");
        assert_eq!(run_pattern("TestA/seed_3.x"), "^TestA$/^seed_3\\.x$");
    }

    #[test]
    fn a_spec_without_a_test_or_directory_is_refused() {
        assert!(parse("go:").unwrap_err().contains("no package directory"));
        assert!(parse("go:.").unwrap_err().contains("which test?"));
        assert!(parse("go:/nonexistent/pkg,test=TestX").unwrap_err().contains("is not a directory"));
        assert!(parse("go:.,test=TestX,page=3").unwrap_err().contains("unknown option"));
        assert!(parse("go:.,test=TestX,manager,waiters=2")
            .unwrap_err()
            .contains("a manager takes no client options"));
    }

    /// The options a `go:` spec takes spell themselves back in the same order.
    #[test]
    fn a_spec_spells_its_options_back() {
        let config = ClientGo {
            resync_secs: Some(10),
            handlers: 2,
            slow_handler: true,
            ..ClientGo::all_named().remove(0)
        };
        let go = GoTest { dir: "/src/myctl".to_string(), test: "TestMine".to_string() };
        let config = ClientGo { go: Some(go), ..config };
        assert_eq!(config.spec(), "go:/src/myctl,test=TestMine,resync=10s,handlers=2,slow-handler");
    }

    /// A manager's spec spells `,manager` back, and its clients make the Go manager, not the model's.
    #[test]
    fn a_manager_spec_spells_itself_back() {
        let go = GoTest { dir: "/src/mgr".to_string(), test: "TestManager".to_string() };
        let config = ClientGo { go: Some(go), manager: true, ..ClientGo::all_named().remove(0) };
        assert_eq!(config.spec(), "go:/src/mgr,test=TestManager,manager");
        assert!(listwatch_model::Clients::manager_under_test(&config));
    }
}
