//! The store model against a real etcd (SEMANTICS E1–E8). These tests need etcd and a build with the
//! `etcd` feature: `scripts/install-etcd`, then `cargo test -p listwatch-harness --features etcd --test
//! conformance_etcd` (which `.ci/run` does). The plain `cargo test` reports them as ignored, and why.

#[cfg(not(feature = "etcd"))]
#[test]
#[ignore = "needs a real etcd: run scripts/install-etcd, then cargo test -p listwatch-harness --features etcd --test conformance_etcd"]
fn the_store_model_matches_a_real_etcd() {}

#[cfg(feature = "etcd")]
mod with_etcd {
    use std::process::{Command, Stdio};
    use std::sync::atomic::AtomicBool;
    use std::time::Duration;

    use listwatch_harness::conformance::etcd::{EtcdProcess, EtcdStore};
    use listwatch_harness::conformance::{Campaign, Op, Plant};

    fn listwatch() -> Command {
        Command::new(env!("CARGO_BIN_EXE_listwatch"))
    }

    fn etcd() -> (EtcdProcess, EtcdStore) {
        let process =
            EtcdProcess::start(Duration::from_secs(20)).expect("etcd starts (scripts/install-etcd)");
        let store = EtcdStore::connect(&process.endpoint).expect("etcd answers");
        (process, store)
    }

    #[test]
    fn the_store_model_matches_a_real_etcd() {
        let (_process, mut store) = etcd();
        let tombstones = store.tombstones();
        let campaign = Campaign { seed: 11, sequences: 60, max_ops: 30, plant: Plant::None };
        let summary =
            campaign.run(&mut store, tombstones, &AtomicBool::new(false), |_| {}).expect("etcd stays up");
        assert!(summary.difference.is_none(), "{:?}", summary.difference);
        assert_eq!(summary.sequences, 60);
        assert!(summary.messages > 100, "watches delivered events: {}", summary.messages);
    }

    #[test]
    fn a_planted_compaction_bug_is_found_against_etcd_and_shrunk() {
        let (_process, mut store) = etcd();
        let tombstones = store.tombstones();
        let campaign =
            Campaign { seed: 1, sequences: 200, max_ops: 30, plant: Plant::CompactionKeepsOneRevisionTooFew };
        let summary =
            campaign.run(&mut store, tombstones, &AtomicBool::new(false), |_| {}).expect("etcd stays up");
        let (shortest, diff) = summary.difference.expect("the planted bug is found");
        assert!(shortest.ops.len() <= 6, "shrunk: {shortest:?}");
        assert!(shortest.ops.iter().any(|o| matches!(o, Op::Compact { .. })), "{shortest:?}: {diff}");
    }

    /// Run the command to its end, and give its output and process id (its etcd's data directory is
    /// named after it).
    fn run(command: &mut Command) -> (std::process::Output, u32) {
        let child = command.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("runs");
        let pid = child.id();
        (child.wait_with_output().expect("ends"), pid)
    }

    #[test]
    fn the_command_writes_a_difference_that_replays_and_leaves_nothing_behind() {
        let dir = std::env::temp_dir().join(format!("listwatch-conformance-test-{}", std::process::id()));
        let out = dir.join("difference.json");
        let (found, found_pid) = run(listwatch()
            .args(["conformance", "etcd", "--sequences", "100", "--plant", "compaction-keeps-one-too-few"])
            .arg("--out")
            .arg(&out));
        let stdout = String::from_utf8_lossy(&found.stdout);
        assert_eq!(found.status.code(), Some(1), "{stdout}");
        assert!(stdout.contains("difference, shrunk to"), "{stdout}");
        let (replay, replay_pid) = run(listwatch()
            .args(["conformance", "etcd", "--plant", "compaction-keeps-one-too-few", "--replay"])
            .arg(&out));
        assert_eq!(replay.status.code(), Some(1), "{}", String::from_utf8_lossy(&replay.stdout));
        let (clean, clean_pid) = run(listwatch().args(["conformance", "etcd", "--replay"]).arg(&out));
        assert_eq!(
            clean.status.code(),
            Some(0),
            "the correct model passes it: {}",
            String::from_utf8_lossy(&clean.stdout)
        );
        let _ = std::fs::remove_dir_all(&dir);
        // Each run's etcd kept its data under a directory named after the run's process, removed when
        // the run ends, also when it ends with a difference (exit 1).
        let ours = [found_pid, replay_pid, clean_pid].map(|pid| format!("listwatch-etcd-{pid}-"));
        let left: Vec<_> = std::fs::read_dir(std::env::temp_dir())
            .expect("temp dir")
            .filter_map(Result::ok)
            .filter(|e| {
                ours.iter().any(|prefix| e.file_name().to_string_lossy().starts_with(prefix.as_str()))
            })
            .collect();
        assert!(left.is_empty(), "data directories left behind: {left:?}");
    }

    #[test]
    fn an_etcd_that_dies_mid_run_is_an_error_naming_the_step_not_a_hang() {
        let (mut process, mut store) = etcd();
        let campaign = Campaign { seed: 2, sequences: 5, max_ops: 30, plant: Plant::None };
        let tombstones = store.tombstones();
        campaign.run(&mut store, tombstones, &AtomicBool::new(false), |_| {}).expect("etcd is up");
        process.kill();
        let started = std::time::Instant::now();
        let err =
            campaign.run(&mut store, tombstones, &AtomicBool::new(false), |_| {}).expect_err("etcd is gone");
        assert!(err.to_string().contains("etcd"), "{err}");
        assert!(started.elapsed() < Duration::from_secs(30), "bounded by the call timeouts");
    }

    #[test]
    fn json_summarises_the_run() {
        let run =
            listwatch().args(["conformance", "etcd", "--sequences", "5", "--json"]).output().expect("runs");
        assert_eq!(run.status.code(), Some(0), "{}", String::from_utf8_lossy(&run.stderr));
        let summary: serde_json::Value = serde_json::from_slice(&run.stdout).expect("one JSON document");
        assert_eq!(summary["sequences"], 5);
        assert_eq!(summary["difference"], serde_json::Value::Null);
        assert!(summary["operations"].as_u64().is_some_and(|n| n >= 20), "{summary}");
        assert!(summary["etcd"].as_str().is_some_and(|v| v.starts_with('3')), "{summary}");
    }

    #[test]
    fn an_unreachable_endpoint_is_one_line_and_exit_2() {
        let run = listwatch()
            .args(["conformance", "etcd", "--endpoint", "http://127.0.0.1:9"])
            .output()
            .expect("runs");
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains("scripts/install-etcd"), "{stderr}");
    }

    #[test]
    fn sigint_stops_the_run_between_sequences_and_stops_etcd() {
        let child = listwatch()
            .args(["conformance", "etcd", "--sequences", "100000"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("starts");
        std::thread::sleep(Duration::from_secs(3));
        let pid = child.id();
        assert!(Command::new("kill").args(["-INT", &pid.to_string()]).status().expect("kill runs").success());
        let out = child.wait_with_output().expect("ends");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(2), "{stdout}");
        assert!(stdout.contains("interrupted: incomplete"), "{stdout}");
        assert!(
            !std::path::Path::new(&std::env::temp_dir()).join(format!("listwatch-etcd-{pid}")).exists(),
            "no data directory is left"
        );
        let dirs = std::fs::read_dir(std::env::temp_dir()).expect("temp dir").filter_map(Result::ok);
        assert!(!dirs
            .into_iter()
            .any(|e| e.file_name().to_string_lossy().starts_with(&format!("listwatch-etcd-{pid}-"))));
    }
}
