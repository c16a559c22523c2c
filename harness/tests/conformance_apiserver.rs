//! The API server model against the real Kubernetes watch cache over a real etcd (SEMANTICS A1–A14).
//! These tests need etcd, the Go server and a build with the `apiserver` feature: `scripts/install-etcd`,
//! `scripts/build-apiserver`, then `cargo test -p listwatch-harness --features apiserver --test
//! conformance_apiserver` (which `.ci/run` does). The plain `cargo test` reports them as ignored.

#[cfg(not(feature = "apiserver"))]
#[test]
#[ignore = "needs etcd and the Go server: scripts/install-etcd, scripts/build-apiserver, then cargo test -p listwatch-harness --features apiserver --test conformance_apiserver"]
fn the_api_server_model_matches_the_real_watch_cache() {}

#[cfg(feature = "apiserver")]
mod with_apiserver {
    use std::process::{Command, Stdio};
    use std::sync::atomic::AtomicBool;
    use std::time::{Duration, Instant};

    use listwatch_harness::conformance::apiserver::server::{binary, ApiServerProcess};
    use listwatch_harness::conformance::apiserver::{
        first_difference, model_transcript, ApiAnswer, ApiMsg, ApiOp, ApiSequence, ApiSuite, Rv,
        ServerUnderTest,
    };
    use listwatch_harness::conformance::etcd::{EtcdProcess, EtcdStore};
    use listwatch_harness::conformance::{Campaign, EtcdToStart, Plant};

    fn listwatch() -> Command {
        Command::new(env!("CARGO_BIN_EXE_listwatch"))
    }

    fn components() -> (EtcdProcess, ApiServerProcess) {
        let etcd = EtcdProcess::start(Duration::from_secs(20)).expect("etcd starts (scripts/install-etcd)");
        over(etcd)
    }

    /// etcd 3.6, whose progress requests streaming lists need (3.4.23 has none: the cacher refuses
    /// them all, A12), and the server over it.
    fn components_36() -> (EtcdProcess, ApiServerProcess) {
        let version = EtcdToStart::parse("3.6").expect("3.6");
        let etcd = EtcdProcess::start_version(&version, Duration::from_secs(20))
            .expect("etcd starts (scripts/install-etcd v3.6.16)");
        over(etcd)
    }

    fn over(etcd: EtcdProcess) -> (EtcdProcess, ApiServerProcess) {
        let (release, path) = binary(None).expect("the server is built (scripts/build-apiserver)");
        let server = ApiServerProcess::start(&path, &release, &etcd.endpoint)
            .and_then(ApiServerProcess::connect)
            .expect("the server starts");
        (etcd, server)
    }

    #[test]
    fn a_planted_consistent_list_bug_is_found_against_the_real_cache_and_shrunk() {
        let (etcd, mut server) = components();
        let tombstones = EtcdStore::connect(&etcd.endpoint).expect("etcd answers").tombstones();
        let campaign =
            Campaign { seed: 1, sequences: 50, max_ops: 30, plant: Plant::ConsistentListOneRevisionBehind };
        let summary = campaign
            .run_suite(&mut ApiSuite(&mut server), tombstones, &AtomicBool::new(false), |_| {})
            .expect("the server stays up");
        let (shortest, diff) = summary.difference.expect("the planted bug is found");
        assert!(shortest.ops.len() <= 3, "shrunk: {shortest:?}: {diff}");
        assert!(
            shortest.ops.iter().any(|o| matches!(o, ApiOp::List { rv: Rv::Consistent, .. })),
            "{shortest:?}: {diff}"
        );
    }

    /// A5 on the real cacher: its etcd watch ended as compacted, it closes the watch it serves (no
    /// ERROR), a watch from before the relist gets 410 (A4) and one from the relist's revision opens
    /// and gets the next write; the model agrees step by step.
    #[test]
    fn a_relist_closes_the_real_caches_watches_and_starts_its_window_anew() {
        let (etcd, mut server) = components();
        let tombstones = EtcdStore::connect(&etcd.endpoint).expect("etcd answers").tombstones();
        let seq = ApiSequence::relist_case();
        let model = model_transcript(&seq, ApiSuite(&mut server).setup(tombstones, Plant::None));
        let real = server.run(&seq, &model).expect("the server stays up");
        let msgs = |step: usize, id: u8| real.steps[step].messages.get(&id).cloned().unwrap_or_default();
        assert_eq!(msgs(3, 0), vec![ApiMsg::Closed], "{real:?}");
        assert_eq!(msgs(4, 1), vec![ApiMsg::Error { code: 410 }, ApiMsg::Closed], "{real:?}");
        assert_eq!(msgs(6, 2).len(), 1, "{real:?}");
        assert_eq!(first_difference(&seq, &model, &real).map(|d| d.to_string()), None);
    }

    /// A9 on the real cacher: a watch with timeoutSeconds=1 gets what it owed from its RV, then ends
    /// cleanly with no ERROR; the watch beside it goes on and gets the next write; a streaming list
    /// with timeoutSeconds=2 gets the objects, their initial-events-end bookmark, then ends cleanly;
    /// the model agrees (over etcd 3.6: over 3.4.23 the cacher refuses streaming lists).
    #[test]
    fn a_watch_ends_cleanly_at_its_timeout() {
        let (etcd, mut server) = components_36();
        let tombstones = EtcdStore::connect(&etcd.endpoint).expect("etcd answers").tombstones();
        let seq = ApiSequence::timeout_case();
        let model = model_transcript(&seq, ApiSuite(&mut server).setup(tombstones, Plant::None));
        let real = server.run(&seq, &model).expect("the server stays up");
        real.holds_timeout_case().unwrap();
        assert_eq!(first_difference(&seq, &model, &real).map(|d| d.to_string()), None);
    }

    /// A8 on the real cacher, its clock moved a minute at a time: no heartbeat before the cache moves
    /// past a watch, then one each minute at the cache's RV to each watch with bookmarks, and none to
    /// a watch from "0" that opened on the empty cache at its RV (this release is v0.32 or newer); the model
    /// agrees step by step.
    #[test]
    fn heartbeats_come_each_minute_of_the_cachers_clock() {
        let (etcd, mut server) = components();
        let tombstones = EtcdStore::connect(&etcd.endpoint).expect("etcd answers").tombstones();
        let seq = ApiSequence::heartbeat_case();
        let model = model_transcript(&seq, ApiSuite(&mut server).setup(tombstones, Plant::None));
        let real = server.run(&seq, &model).expect("the server stays up");
        let msgs = |step: usize, id: u8| real.steps[step].messages.get(&id).cloned().unwrap_or_default();
        assert!(real.steps[5].messages.is_empty(), "{real:?}");
        for step in [7, 8] {
            assert_eq!(msgs(step, 0), vec![ApiMsg::Bookmark { rv: 3 }], "{real:?}");
            assert_eq!(msgs(step, 1), vec![ApiMsg::Bookmark { rv: 3 }], "{real:?}");
            assert!(msgs(step, 2).is_empty(), "{real:?}");
        }
        assert_eq!(msgs(11, 0), vec![ApiMsg::Bookmark { rv: 4 }], "{real:?}");
        assert!(msgs(11, 1).is_empty(), "{real:?}");
        assert_eq!(first_difference(&seq, &model, &real).map(|d| d.to_string()), None);
    }

    /// A LIST of one name by field selector through the real cacher and etcd, as the registry sends
    /// it (one key in the namespace, the whole resource filtered across namespaces), for each kind of
    /// RV: the model agrees, and the answers hold one object or none.
    #[test]
    fn a_list_of_one_name_matches_the_model() {
        let (etcd, mut server) = components();
        let tombstones = EtcdStore::connect(&etcd.endpoint).expect("etcd answers").tombstones();
        let seq = ApiSequence::named_case();
        let model = model_transcript(&seq, ApiSuite(&mut server).setup(tombstones, Plant::None));
        let real = server.run(&seq, &model).expect("the server stays up");
        assert_eq!(first_difference(&seq, &model, &real).map(|d| d.to_string()), None);
        let sizes: Vec<usize> = real.steps[3..]
            .iter()
            .map(|s| match &s.answer {
                Some(ApiAnswer::List { items, .. }) => items.len(),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(sizes, vec![1, 1, 1, 1, 1, 0, 1], "{real:?}");
    }

    #[test]
    fn the_command_writes_a_difference_that_replays() {
        let dir = std::env::temp_dir().join(format!("listwatch-apiserver-test-{}", std::process::id()));
        let out = dir.join("difference.json");
        let plant = ["--plant", "consistent-list-one-behind"];
        let run = listwatch()
            .args(["conformance", "apiserver", "--sequences", "50"])
            .args(plant)
            .arg("--out")
            .arg(&out)
            .output()
            .expect("runs");
        let stdout = String::from_utf8_lossy(&run.stdout);
        assert_eq!(run.status.code(), Some(1), "{stdout}{}", String::from_utf8_lossy(&run.stderr));
        assert!(stdout.contains("difference, shrunk to"), "{stdout}");
        let replay = listwatch()
            .args(["conformance", "apiserver"])
            .args(plant)
            .arg("--replay")
            .arg(&out)
            .output()
            .expect("runs");
        assert_eq!(replay.status.code(), Some(1), "{}", String::from_utf8_lossy(&replay.stdout));
        let clean =
            listwatch().args(["conformance", "apiserver", "--replay"]).arg(&out).output().expect("runs");
        assert_eq!(
            clean.status.code(),
            Some(0),
            "the correct model passes it: {}",
            String::from_utf8_lossy(&clean.stdout)
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_bad_replay_file_is_named_and_nothing_starts() {
        let path = std::env::temp_dir().join(format!("listwatch-apiserver-bad-{}.json", std::process::id()));
        std::fs::write(&path, "{\"format\": \"listwatch-etcd-sequence/1\", \"ops\": []}").unwrap();
        let run =
            listwatch().args(["conformance", "apiserver", "--replay"]).arg(&path).output().expect("runs");
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(&path.display().to_string()) && stderr.lines().count() == 1, "{stderr}");
        let _ = std::fs::remove_file(&path);
    }

    /// The children of `pid` (etcd, the server), by /proc.
    fn children(pid: u32) -> Vec<u32> {
        let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
        dir.flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
            .filter(|p| {
                let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
                let after = stat.rsplit(')').next().unwrap_or("");
                after.split_whitespace().nth(1).and_then(|pp| pp.parse::<u32>().ok()) == Some(pid)
            })
            .collect()
    }

    fn alive(pid: u32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|s| !s.rsplit(')').next().unwrap_or("").trim_start().starts_with('Z'))
    }

    fn leftovers(pid: u32) -> Vec<String> {
        let tmp = std::env::temp_dir();
        std::fs::read_dir(&tmp)
            .map(|d| {
                d.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| {
                        n.starts_with(&format!("listwatch-etcd-{pid}-"))
                            || n.starts_with(&format!("listwatch-apiserver-{pid}-"))
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Start a long run, wait until its etcd and server run, end it with `signal`, and check that no
    /// process and no data directory is left.
    fn ends_cleanly_on(signal: &str) {
        let mut child = listwatch()
            .args(["conformance", "apiserver", "--sequences", "100000"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("runs");
        let pid = child.id();
        let started = Instant::now();
        let mut kids = Vec::new();
        while started.elapsed() < Duration::from_secs(30) {
            kids = children(pid);
            if kids.len() >= 2 {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        assert!(kids.len() >= 2, "etcd and the server started: {kids:?}");
        std::thread::sleep(Duration::from_millis(500));
        let status = Command::new("kill").args([signal, &pid.to_string()]).status().expect("kill runs");
        assert!(status.success());
        let deadline = Instant::now() + Duration::from_secs(20);
        let exit = loop {
            if let Some(s) = child.try_wait().expect("waits") {
                break s;
            }
            assert!(Instant::now() < deadline, "listwatch ended within 20 s of {signal}");
            std::thread::sleep(Duration::from_millis(50));
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while kids.iter().any(|k| alive(*k)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        assert!(!kids.iter().any(|k| alive(*k)), "no child left after {signal}: {kids:?}");
        if signal == "-INT" {
            assert_eq!(exit.code(), Some(2), "an interrupted run is incomplete");
            assert!(leftovers(pid).is_empty(), "no directory left: {:?}", leftovers(pid));
        }
        // What a SIGKILL leaves (directories only): removed here, so that no other test finds them.
        for name in leftovers(pid) {
            let _ = std::fs::remove_dir_all(std::env::temp_dir().join(name));
        }
    }

    #[test]
    fn ctrl_c_ends_the_run_and_leaves_no_process_or_directory() {
        ends_cleanly_on("-INT");
    }

    #[test]
    fn a_killed_run_leaves_no_process_behind() {
        // SIGKILL runs no destructor: the children go with it (PR_SET_PDEATHSIG, stdin EOF). Their
        // directories stay in the temporary directory, the one thing a SIGKILL leaves.
        ends_cleanly_on("-KILL");
    }

    #[test]
    fn a_server_that_dies_mid_run_is_an_error_naming_the_step() {
        let (_etcd, mut server) = components();
        server.kill();
        let campaign = Campaign { seed: 1, sequences: 5, max_ops: 30, plant: Plant::None };
        let err = campaign
            .run_suite(&mut ApiSuite(&mut server), Default::default(), &AtomicBool::new(false), |_| {})
            .expect_err("a dead server is an error");
        assert!(err.0.contains("the API server exited"), "{err}");
    }
}
