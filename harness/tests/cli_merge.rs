//! `simulate --shard K/N` as N local processes, each through the script a Kubernetes Indexed Job's pods
//! run (harness/cluster/shard), then `listwatch merge`: the single run's summary, byte for byte. And
//! `check --shard K/N` the same way: the single check's verdict.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

fn output(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_listwatch"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the binary runs")
}

fn tmp(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli_merge").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("tmp dir");
    dir
}

/// The campaign: `listwatch simulate` with these arguments.
const CAMPAIGN: [&str; 6] = ["--seeds", "120", "--flaw", "stop-on-close", "--fault-kinds", "disconnect,500"];

#[test]
fn four_shards_run_as_the_job_runs_them_merge_into_the_single_run() {
    let results = tmp("four");
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("cluster/shard");
    // The shards run at once, as the Job's pods would, each through the pods' own script.
    let shards: Vec<std::process::Child> = (0..4)
        .map(|index| {
            Command::new("sh")
                .arg(&script)
                .args(CAMPAIGN)
                .env("JOB_COMPLETION_INDEX", index.to_string())
                .env("SHARDS", "4")
                .env("RESULTS", &results)
                .env("LISTWATCH", env!("CARGO_BIN_EXE_listwatch"))
                .stderr(Stdio::null())
                .spawn()
                .expect("a shard starts")
        })
        .collect();
    for mut child in shards {
        let status = child.wait().expect("a shard ends");
        assert!(status.success(), "a shard did not run: {status}");
    }
    let files: Vec<String> =
        (1..=4).map(|k| results.join(format!("shard-{k}.json")).display().to_string()).collect();
    let out = results.join("traces").display().to_string();
    let single_args: Vec<&str> =
        ["simulate"].iter().chain(&CAMPAIGN).chain(&["--out", out.as_str()]).copied().collect();
    let single = output(&single_args);
    assert_eq!(single.status.code(), Some(1), "the planted flaw fails a seed");
    let mut merge_args = vec!["merge"];
    merge_args.extend(files.iter().rev().map(String::as_str));
    let merged = output(&merge_args);
    assert_eq!(merged.status.code(), Some(1), "{}", String::from_utf8_lossy(&merged.stderr));
    assert_eq!(String::from_utf8_lossy(&merged.stdout), String::from_utf8_lossy(&single.stdout));

    let single_json = output(&[single_args.as_slice(), &["--json"]].concat());
    merge_args.push("--json");
    assert_eq!(output(&merge_args).stdout, single_json.stdout);
}

#[test]
fn a_shard_that_cannot_run_leaves_no_summary() {
    let results = tmp("refused");
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("cluster/shard");
    let status = Command::new("sh")
        .arg(&script)
        .args(["--steps", "0"])
        .env("JOB_COMPLETION_INDEX", "0")
        .env("SHARDS", "2")
        .env("RESULTS", &results)
        .env("LISTWATCH", env!("CARGO_BIN_EXE_listwatch"))
        .stderr(Stdio::null())
        .status()
        .expect("the script runs");
    assert_eq!(status.code(), Some(2), "bad arguments fail the pod");
    let left: Vec<_> = std::fs::read_dir(&results).expect("results").collect();
    assert!(left.is_empty(), "a refused shard leaves nothing for merge to read: {left:?}");
}

#[test]
fn a_shard_that_cannot_be_read_or_is_missing_is_one_line_and_exit_2() {
    let dir = tmp("bad");
    let gone = dir.join("gone.json").display().to_string();
    let o = output(&["merge", &gone]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.starts_with(&format!("listwatch: {gone}: cannot read")) && err.lines().count() == 1, "{err}");

    let one = dir.join("one.json");
    let out = dir.join("traces").display().to_string();
    let o = output(&["simulate", "--seeds", "4", "--shard", "1/2", "--json", "--out", &out]);
    std::fs::write(&one, o.stdout).expect("write shard");
    let o = output(&["merge", &one.display().to_string()]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "listwatch: shards missing: 2/2 (every shard of 2 is needed)\n"
    );
    assert!(o.stdout.is_empty(), "nothing printed for a refused merge");
}

/// `check --shard K/N` as N local processes (each every Nth world of the scope), then `listwatch
/// merge` of their JSON: the single check's worlds in its order and its verdicts, a planted flaw's
/// violation found in the same world with the same steps, and `check`'s exit status. The runs stop
/// at a bound of states (one thread: the same states each time), so the worlds end incomplete.
#[test]
fn the_shards_of_a_check_merge_into_the_single_check() {
    let results = tmp("check");
    let check = ["--flaw", "sync-under-lock", "--max-states", "3000", "--threads", "1"];
    let single_args: Vec<&str> = ["check"].into_iter().chain(check).chain(["--json"]).collect();
    let single = output(&single_args);
    assert_eq!(single.status.code(), Some(1), "{}", String::from_utf8_lossy(&single.stderr));
    // Each shard through the pods' own script, one after the other.
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("cluster/shard");
    for index in 0..3 {
        let status = Command::new("sh")
            .arg(&script)
            .arg("check")
            .args(check)
            .env("JOB_COMPLETION_INDEX", index.to_string())
            .env("SHARDS", "3")
            .env("RESULTS", &results)
            .env("LISTWATCH", env!("CARGO_BIN_EXE_listwatch"))
            .stderr(Stdio::null())
            .status()
            .expect("a shard runs");
        assert!(status.success(), "shard {} did not run: {status}", index + 1);
    }
    let files: Vec<String> =
        (1..=3).map(|k| results.join(format!("shard-{k}.json")).display().to_string()).collect();
    assert!(results.join("traces/no-lock-across-unbounded-wait.client-manager.json").is_file());
    let mut merge_args = vec!["merge", "--json"];
    merge_args.extend(files.iter().rev().map(String::as_str));
    let merged = output(&merge_args);
    assert_eq!(merged.status.code(), Some(1), "{}", String::from_utf8_lossy(&merged.stderr));
    let comparable = |bytes: &[u8]| {
        let mut v: serde_json::Value = serde_json::from_slice(bytes).expect("JSON");
        for w in v["worlds"].as_array_mut().expect("worlds") {
            let w = w.as_object_mut().expect("a world");
            w.remove("seconds");
            w.remove("collision_probability"); // a float read back: its last digit may move
        }
        v
    };
    let (single, merged_json) = (comparable(&single.stdout), comparable(&merged.stdout));
    assert_eq!(merged_json, single);
    let broken = single["properties"].as_array().expect("properties").iter().find(|p| p["holds"] == false);
    assert_eq!(broken.map(|p| &p["violation"]["world"]), Some(&serde_json::json!("client-manager")));

    let mut text_args = vec!["merge"];
    text_args.extend(files.iter().map(String::as_str));
    let text = String::from_utf8_lossy(&output(&text_args).stdout).into_owned();
    assert!(
        text.contains("from 3 shards") && text.contains("no-lock-across-unbounded-wait in client-manager"),
        "{text}"
    );

    let missing = output(&["merge", files[0].as_str(), files[1].as_str()]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("shard 3/3 is missing"));
}
