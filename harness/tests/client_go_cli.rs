//! `listwatch` with client-go under test, as a user runs it (`--features client-go`, the Go program
//! built by scripts/build-client-go): the same seed gives the same bytes, a release that is not built
//! is one line naming the script, and Ctrl-C ends a campaign with no Go process left behind.
#![cfg(feature = "client-go")]

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn listwatch(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_listwatch")).args(args).output().expect("listwatch runs")
}

/// The Go processes running as children of `pid`.
fn shims_of(pid: u32) -> Vec<u32> {
    let out = Command::new("pgrep").args(["-P", &pid.to_string(), "-f", "client-go-shim"]).output();
    let out = out.map(|o| String::from_utf8_lossy(&o.stdout).into_owned()).unwrap_or_default();
    out.lines().filter_map(|p| p.trim().parse().ok()).collect()
}

/// Whether a process is still running (not gone, not a zombie).
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit(')').next().and_then(|r| r.split_whitespace().next()).map(str::to_string))
        .is_some_and(|state| state != "Z")
}

/// Every configuration of the pinned release: the same seeds twice, the same bytes.
#[test]
fn the_same_seeds_give_the_same_bytes() {
    for client in [
        "client-go",
        "client-go-no-watchlist",
        "client-go-watchlist",
        "client-go-paged",
        "client-go-fifo",
        "client-go-indexer-informer",
        "client-go-store-informer",
        "client-go-informer-watcher",
        "client-go-reflector",
        "client-go-retrywatcher",
        "client-go-no-watchlist,panic-handler",
        "controller-runtime",
    ] {
        let dir = std::env::temp_dir().join(format!("listwatch-cg-bytes-{}-{client}", std::process::id()));
        let out = dir.display().to_string();
        let args = ["simulate", "--client", client, "--seeds", "60", "--json", "--out", &out];
        let (a, b) = (listwatch(&args), listwatch(&args));
        let _ = std::fs::remove_dir_all(&dir);
        assert!(a.status.code().is_some_and(|c| c <= 1), "{client}: {}", String::from_utf8_lossy(&a.stderr));
        assert!(!a.stdout.is_empty(), "{client}");
        assert_eq!(a.stdout, b.stdout, "{client}");
    }
}

/// `listwatch clients` names the options the configurations take, each of which parsing knows.
#[test]
fn clients_lists_the_options() {
    let out = listwatch(&["clients"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    for option in [",waiters=N", ",timeout=Ns", ",resync=Ns", ",handlers=N", ",transform", ",panic-handler"] {
        assert!(text.lines().any(|l| l.trim_start().starts_with(option)), "{option}: {text}");
    }
    for spec in ["go:DIR,test=NAME[,options]", "go:DIR,test=NAME,manager"] {
        assert!(text.lines().any(|l| l.trim_start().starts_with(spec)), "{spec}: {text}");
    }
    let unknown = listwatch(&["simulate", "--client", "client-go,nope", "--seeds", "1"]);
    assert_eq!(unknown.status.code(), Some(2));
    let err = String::from_utf8_lossy(&unknown.stderr);
    assert!(
        err.contains("known: waiters=N, timeout=Ns, resync=Ns, handlers=N, transform, panic-handler"),
        "{err}"
    );
}

#[test]
fn a_release_that_is_not_built_is_one_line_naming_the_script() {
    let out = listwatch(&["simulate", "--client", "client-go@v0.0.1", "--seeds", "1"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("scripts/build-client-go v0.0.1"), "{err}");
}

#[test]
fn ctrl_c_ends_a_campaign_and_leaves_no_go_process() {
    let dir = std::env::temp_dir().join(format!("listwatch-cg-int-{}", std::process::id()));
    let mut child = Command::new(env!("CARGO_BIN_EXE_listwatch"))
        .args(["simulate", "--client", "client-go-no-watchlist", "--seeds", "1000000"])
        .arg("--out")
        .arg(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("listwatch starts");
    let started = Instant::now();
    while shims_of(child.id()).is_empty() && started.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
    let shims = shims_of(child.id());
    assert!(!shims.is_empty(), "client-go never started");
    Command::new("kill").args(["-INT", &child.id().to_string()]).status().expect("kill runs");
    let status = child.wait().expect("listwatch ends");
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(status.code(), Some(2), "interrupted is incomplete");
    let deadline = Instant::now() + Duration::from_secs(5);
    while shims.iter().any(|p| running(*p)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!shims.iter().any(|p| running(*p)), "a Go process outlived the campaign: {shims:?}");
}

/// The model API server's flaws serve client-go as they serve the model reflector: a watch cache that
/// lists part of a lease revoke's revision (`partial-revision-served`) leaves client-go holding an
/// object deleted in it, which the correct server never does on the same seeds. A flaw of the model's
/// reflector has nothing to switch on in client-go, and is refused naming both.
#[test]
fn server_flaws_serve_client_go_and_the_reflectors_are_refused() {
    let dir = std::env::temp_dir().join(format!("listwatch-cg-server-flaw-{}", std::process::id()));
    let out = dir.display().to_string();
    let breaking = |flaw: &[&str]| {
        let mut args = vec!["simulate", "--client", "client-go", "--seeds", "40", "--json", "--out", &out];
        args.extend(flaw);
        let run = listwatch(&args);
        assert!(run.status.code().is_some_and(|c| c <= 1), "{}", String::from_utf8_lossy(&run.stderr));
        let summary: serde_json::Value = serde_json::from_slice(&run.stdout).expect("a JSON summary");
        summary["seeds_breaking"]["no-resurrected-delete"].as_u64().unwrap_or(0)
    };
    let (correct, flawed) = (breaking(&[]), breaking(&["--flaw", "partial-revision-served"]));
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(correct, 0, "client-go keeps no deleted object from the correct server");
    assert!(flawed > 0, "the LIST of half a revision leaves client-go an object deleted in it");
    let refused =
        listwatch(&["simulate", "--client", "client-go", "--seeds", "1", "--flaw", "stop-on-close"]);
    assert_eq!(refused.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&refused.stderr).trim_end(),
        "listwatch: --flaw stop-on-close: a flaw of the model's reflector, and --client client-go brings its \
         own; only the model API server's flaws apply to another client"
    );
    assert!(refused.stdout.is_empty(), "nothing run");
}
