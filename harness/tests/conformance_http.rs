//! The list/watch contract over HTTP (`listwatch conformance http`): k8s.io/sample-apiserver, a real
//! aggregated API server with the API server's handlers and watch cache, against the model. These tests
//! need etcd, the REST driver, the sample-apiserver and a build with the `apiserver` feature:
//! `scripts/install-etcd v3.6.16`, `scripts/build-rest`, `scripts/build-sample-apiserver`, then `cargo
//! test -p listwatch-harness --features apiserver --test conformance_http` (which `.ci/run` does). The
//! plain `cargo test` reports them as ignored.

#[cfg(not(feature = "apiserver"))]
#[test]
#[ignore = "needs etcd, the REST driver and the sample-apiserver: scripts/install-etcd v3.6.16, scripts/build-rest, scripts/build-sample-apiserver, then cargo test -p listwatch-harness --features apiserver --test conformance_http"]
fn the_sample_apiserver_matches_the_model_over_http() {}

#[cfg(feature = "apiserver")]
mod with_apiserver {
    use std::path::Path;
    use std::process::{Command, Output};
    use std::time::Duration;

    use listwatch_harness::conformance::apiserver::sample::{self, SampleApiServer};
    use listwatch_harness::conformance::apiserver::ApiSequence;
    use listwatch_harness::conformance::etcd::{EtcdProcess, EtcdStore};
    use listwatch_harness::conformance::EtcdToStart;

    fn listwatch(words: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_listwatch")).args(words).output().expect("listwatch runs")
    }

    fn text(out: &Output) -> (String, String) {
        (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
    }

    /// etcd 3.6 and the sample-apiserver over it, with `gates`.
    fn sample_server(gates: &str) -> (EtcdProcess, SampleApiServer) {
        let within = Duration::from_secs(20);
        let etcd = EtcdProcess::start_version(&EtcdToStart::parse("3.6").expect("3.6"), within)
            .expect("etcd starts (scripts/install-etcd v3.6.16)");
        let (_, binary) = sample::binary(None).expect("scripts/build-sample-apiserver");
        let server = SampleApiServer::start(&binary, &etcd.endpoint, gates, None, Duration::from_secs(60))
            .expect("the sample-apiserver starts");
        (etcd, server)
    }

    /// `conformance http` of `sequences` at the server's URL, through its kubeconfig, on flunders.
    fn at_endpoint(server: &SampleApiServer, sequences: &str, extra: &[&str]) -> Output {
        let kubeconfig = server.kubeconfig.display().to_string();
        let mut words = vec![
            "conformance",
            "http",
            "--endpoint",
            &server.url,
            "--kubeconfig",
            &kubeconfig,
            "--resource",
            "wardle.example.com/v1alpha1/flunders",
            "--sequences",
            sequences,
        ];
        words.extend_from_slice(extra);
        listwatch(&words)
    }

    /// `conformance http --replay` of `seq` (written to a file of its own, `name`) against the
    /// sample-apiserver it starts over etcd 3.6, with `extra` arguments.
    fn replay(seq: &ApiSequence, name: &str, extra: &[&str]) -> Output {
        let dir = std::env::temp_dir().join(format!("listwatch-http-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        let file = dir.join(format!("{name}.json"));
        std::fs::write(&file, seq.to_json()).expect("written");
        let file = file.display().to_string();
        let mut words = vec!["conformance", "http", "--etcd", "3.6", "--replay", &file];
        words.extend_from_slice(extra);
        let out = listwatch(&words);
        let _ = std::fs::remove_dir_all(&dir);
        out
    }

    fn corpus(name: &str) -> String {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/conformance").join(name).display().to_string()
    }

    #[test]
    fn the_sample_apiserver_matches_the_model_over_http() {
        let out = listwatch(&["conformance", "http", "--etcd", "3.6", "--sequences", "60", "--json"]);
        let (stdout, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
        let summary: serde_json::Value = serde_json::from_str(stdout.trim()).expect("one JSON summary");
        assert_eq!(summary["sequences"], 60, "{summary}");
        assert!(summary["watch_messages"].as_u64().unwrap_or(0) > 300, "watches get events: {summary}");
        let server = summary["server"].as_str().unwrap_or("");
        assert!(server.contains("sample-apiserver") && server.contains("v0.37.2"), "{server}");
    }

    /// The handler's rule (A3, A12) holds against the real handler; under the rules of a release whose
    /// handler does not default the watch (v0.33), the same file differs at that watch.
    #[test]
    fn the_corpus_file_replays_and_a_release_without_the_rule_differs() {
        let file = corpus("http-v0.37.2.watch-from-0-is-a-streaming-list.json");
        let out = listwatch(&["conformance", "http", "--etcd", "3.6", "--replay", &file]);
        let (stdout, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
        assert!(stdout.contains("no difference (3 watch messages compared)"), "{stdout}");
        let out = listwatch(&[
            "conformance",
            "http",
            "--etcd",
            "3.6",
            "--apiserver",
            "v0.33.13",
            "--replay",
            &file,
        ]);
        let (stdout, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
        assert!(stdout.contains("at step 1 ") && stdout.contains("initial-events-end"), "{stdout}");
    }

    /// A WATCH with no resourceVersion and no bookmarks over etcd 3.4.23 (no progress requests), after
    /// a write to another resource: the handler's consistent streaming list waits in vain and gets
    /// ERROR 504, as the model's rule says (`ApiServer::serve_watch_without_rv`); over 3.6 it opens.
    #[test]
    fn the_unset_rv_watch_file_replays_over_etcd_3_4_and_3_6() {
        let file = corpus("http-v0.37.2.unset-rv-watch-waits-for-etcd-3.4.json");
        for (etcd, messages) in [("3.4", "2 watch messages"), ("3.6", "0 watch messages")] {
            let out = listwatch(&["conformance", "http", "--etcd", etcd, "--replay", &file]);
            let (stdout, stderr) = text(&out);
            assert_eq!(out.status.code(), Some(0), "{etcd}: {stdout}{stderr}");
            assert!(stdout.contains(&format!("no difference ({messages} compared)")), "{etcd}: {stdout}");
        }
    }

    #[test]
    fn a_planted_bug_is_found_over_http_shrunk_and_replayed() {
        let dir = std::env::temp_dir().join(format!("listwatch-http-test-{}", std::process::id()));
        let out_file = dir.join("difference.json");
        let out_arg = out_file.display().to_string();
        let plant = ["--plant", "consistent-list-one-behind"];
        let mut words = vec!["conformance", "http", "--sequences", "30", "--out", &out_arg];
        words.extend(plant);
        let out = listwatch(&words);
        let (stdout, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
        let written = std::fs::read_to_string(&out_file).expect("the shrunk sequence is written");
        let ops = serde_json::from_str::<serde_json::Value>(&written).expect("JSON")["ops"]
            .as_array()
            .map_or(0, Vec::len);
        assert!((1..=3).contains(&ops), "shrunk: {written}");
        let mut again = vec!["conformance", "http", "--replay", &out_arg];
        again.extend(plant);
        assert_eq!(listwatch(&again).status.code(), Some(1), "the file replays the difference");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A9 through the real handler: a watch with timeoutSeconds=1 gets its event and ends cleanly, as
    /// the model says; the model planted with a watch that outlives its timeout differs there, named A9.
    #[test]
    fn a_watch_ends_at_its_timeout_seconds_over_http() {
        let out = replay(&ApiSequence::timeout_case(), "timeout", &[]);
        let (stdout, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
        assert!(stdout.contains("no difference"), "{stdout}");
        let out = replay(&ApiSequence::timeout_case(), "timeout", &["--plant", "timeout-ignored"]);
        let (stdout, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
        assert!(stdout.contains("at step 2 ") && stdout.contains("breaks A9"), "{stdout}");
    }

    /// LISTs of one name by field selector through the real handler and registry, in the namespace
    /// and across namespaces, for each kind of RV: as the model says.
    #[test]
    fn a_list_of_one_name_matches_the_model_over_http() {
        let out = replay(&ApiSequence::named_case(), "named", &[]);
        let (stdout, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
        assert!(stdout.contains("no difference"), "{stdout}");
    }

    /// Two mistakes hand-written servers make, planted in the sample-apiserver
    /// (harness/sample-apiserver/mistake.go): a streaming list without its initial-events-end bookmark
    /// (every informer that streams its list waits for ever), and a 410 answered as a 500. Each is
    /// found, named by its rule and shrunk.
    #[test]
    fn a_server_with_a_mistake_is_caught_and_shrunk() {
        let dir = std::env::temp_dir().join(format!("listwatch-http-mistake-{}", std::process::id()));
        for (mistake, rule, most) in [
            ("no-initial-events-end", "breaks A12 (streaming lists)", 2),
            ("expired-as-500", "(pagination)", 10),
        ] {
            let out_file = dir.join(format!("{mistake}.json")).display().to_string();
            let words = ["conformance", "http", "--etcd", "3.6", "--sequences", "100"];
            let mut all = words.to_vec();
            all.extend(["--server-mistake", mistake, "--out", &out_file]);
            let out = listwatch(&all);
            let (stdout, stderr) = text(&out);
            assert_eq!(out.status.code(), Some(1), "{mistake}: {stdout}{stderr}");
            assert!(stdout.contains(rule), "{mistake}: {stdout}");
            let written = std::fs::read_to_string(&out_file).expect("the shrunk sequence is written");
            let ops = serde_json::from_str::<serde_json::Value>(&written).expect("JSON")["ops"]
                .as_array()
                .map_or(0, Vec::len);
            assert!((1..=most).contains(&ops), "{mistake}: shrunk to {ops}: {written}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A server someone else runs, reached through its kubeconfig: only what goes through the API is
    /// sent (no compactions, no etcd transactions), judged by the newest release's rules when its
    /// /version names none.
    #[test]
    fn a_server_at_an_endpoint_is_reached_through_its_kubeconfig() {
        let (etcd, server) = sample_server("");
        let out = at_endpoint(&server, "40", &["--json"]);
        let (stdout, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
        let summary: serde_json::Value = serde_json::from_str(stdout.trim()).expect("one JSON summary");
        let described = summary["server"].as_str().unwrap_or("");
        assert!(described.starts_with(&server.url) && described.contains("rules of v0.37.2"), "{described}");
        assert!(summary["difference"].is_null(), "{summary}");
        // Nothing is left on the server: every flunder and fischer the run wrote is deleted.
        let mut store = EtcdStore::connect(&etcd.endpoint).expect("etcd answers");
        let left = store.keys_under("/registry/wardle.example.com/").expect("a range");
        assert!(left.is_empty(), "left behind: {left:?}");
    }

    /// A server that refuses streaming lists (the sample-apiserver with WatchList off) is reported as
    /// such and passes: a client falls back to a LIST (client-go's reflector.go, ListAndWatch).
    #[test]
    fn a_server_without_streaming_lists_is_reported_as_such_and_passes() {
        let gates = "WatchList=false,ListFromCacheSnapshot=false";
        let (_etcd, server) = sample_server(gates);
        let out = at_endpoint(&server, "60", &[]);
        let (stdout, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
        assert!(stdout.contains("this server refuses streaming lists (422"), "{stdout}");
    }

    /// A server that ignores `limit` (and so never pages) is reported as such and passes (A13 allows
    /// it: ListOptions.limit).
    #[test]
    fn a_server_that_does_not_paginate_is_reported_as_such_and_passes() {
        let words = [
            "conformance",
            "http",
            "--etcd",
            "3.6",
            "--sequences",
            "60",
            "--server-mistake",
            "no-pagination",
        ];
        let out = listwatch(&words);
        let (stdout, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
        assert!(stdout.contains("this server does not paginate"), "{stdout}");
        let out = listwatch(&["conformance", "http", "--etcd", "3.6", "--sequences", "5"]);
        let (stdout, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
        assert!(!stdout.contains("does not paginate"), "the sample-apiserver pages: {stdout}");
    }

    /// Credentials the server refuses, and a URL that is not a Kubernetes API server (etcd's), are
    /// each one line naming the server and what was wrong.
    #[test]
    fn refused_credentials_and_a_server_that_is_not_kubernetes_are_one_line_each() {
        let (etcd, server) = sample_server("");
        let dir = std::env::temp_dir().join(format!("listwatch-http-token-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a directory");
        let token = dir.join("token");
        std::fs::write(&token, "not-the-token\n").expect("a token file");
        let token = token.display().to_string();
        for (words, says) in [
            (
                vec!["--endpoint", &server.url, "--token-file", &token, "--insecure-skip-tls-verify"],
                "refused the credentials",
            ),
            (vec!["--endpoint", &etcd.endpoint], "does not answer as a Kubernetes API server"),
        ] {
            let mut all = vec!["conformance", "http"];
            all.extend(&words);
            let out = listwatch(&all);
            let (stdout, stderr) = text(&out);
            assert_eq!(out.status.code(), Some(2), "{words:?}: {stdout}{stderr}");
            assert_eq!(stderr.lines().count(), 1, "{words:?}: {stderr}");
            assert!(stderr.contains(says) && stderr.contains(words[1]), "{words:?}: {stderr}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A server whose resourceVersions are not integers (the contract lets a server make its own) is
    /// one line saying why a run cannot judge it, before anything is compared.
    #[test]
    fn a_server_with_opaque_resource_versions_is_one_line_saying_why() {
        let words =
            ["conformance", "http", "--etcd", "3.6", "--sequences", "5", "--server-mistake", "opaque-rvs"];
        let out = listwatch(&words);
        let (stdout, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(2), "{stdout}{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains("its resourceVersions are not integers (\"r"), "{stderr}");
        assert!(stderr.contains("cannot judge this server"), "{stderr}");
    }

    #[test]
    fn a_server_that_does_not_answer_is_one_line_naming_the_step() {
        let out = listwatch(&[
            "conformance",
            "http",
            "--endpoint",
            "https://127.0.0.1:1",
            "--insecure-skip-tls-verify",
        ]);
        let (stdout, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(2), "{stdout}{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains("conformance http: reaching the server"), "{stderr}");
    }
}
