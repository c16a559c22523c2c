//! The binary's simulate, show and replay: exit statuses, byte-identical output, one-line errors.

use std::path::PathBuf;
use std::process::{Command, Output};

fn listwatch(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_listwatch"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the binary runs")
}

fn corpus_files() -> Vec<String> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../corpus");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .expect("corpus/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| p.display().to_string())
        .collect();
    files.sort();
    files
}

/// The corpus file of seed 001 (its property: no-resurrected-delete).
fn nil_prevkv_file() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../corpus/nil-prevkv-dropped.kubernetes-76624.json")
        .display()
        .to_string()
}

fn tmp(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli_traces");
    std::fs::create_dir_all(&dir).expect("tmp dir");
    dir.join(name)
}

#[test]
fn simulate_json_is_byte_identical_run_to_run() {
    let out = tmp("sim-out").display().to_string();
    let args = ["simulate", "--seeds", "200", "--flaw", "stop-on-close", "--json", "--out", &out];
    let (a, b) = (listwatch(&args), listwatch(&args));
    assert_eq!(a.status.code(), Some(1), "a flaw was found");
    assert_eq!(a.stdout, b.stdout);
    let summary: serde_json::Value = serde_json::from_slice(&a.stdout).expect("JSON");
    assert_eq!(summary["seeds_run"], 200);
    assert!(String::from_utf8_lossy(&a.stderr).contains("steps/s"), "timing goes to stderr");
}

#[test]
fn replay_of_the_corpus_exits_0() {
    let files = corpus_files();
    let mut args = vec!["replay"];
    args.extend(files.iter().map(String::as_str));
    let out = listwatch(&args);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(&format!("{0} of {0} traces reproduce", files.len()))
    );
}

#[test]
fn a_bad_trace_file_is_one_line_naming_it_and_exit_2() {
    let good = std::fs::read_to_string(nil_prevkv_file()).expect("readable");
    let cut = tmp("cut.json");
    std::fs::write(&cut, &good[..good.len() - 40]).expect("written");
    let changed = tmp("changed.json");
    let flipped = good.replacen("\"property\": \"no-resurrected-delete\"", "\"property\": \"converges\"", 1);
    assert_ne!(flipped, good, "seed 001's corpus file records no-resurrected-delete");
    std::fs::write(&changed, flipped).expect("written");
    for (args, needle) in [
        (vec!["replay", cut.to_str().expect("utf-8")], "cut.json: not a trace"),
        (vec!["show", cut.to_str().expect("utf-8")], "cut.json: not a trace"),
        (vec!["replay", "no-such-file.json"], "no-such-file.json: cannot read"),
        (vec!["show", nil_prevkv_file().as_str(), "--format", "svg"], "--format: unknown format 'svg'"),
        (vec!["simulate", "--shard", "0/2"], "--shard: '0/2' is not K/N"),
        (vec!["simulate", "--steps", "0"], "--steps: '0' is not a number"),
        (vec!["replay"], "replay: missing FILE"),
    ] {
        let out = listwatch(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle) && err.lines().count() == 1, "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}: nothing half-written");
    }
    // A recorded verdict the trace no longer gives reads fine but replays as changed: exit 1.
    let out = listwatch(&["replay", changed.to_str().expect("utf-8")]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("CHANGED"));
}

#[test]
fn show_renders_text_mermaid_and_json() {
    let file = &nil_prevkv_file();
    let text = listwatch(&["show", file]);
    assert_eq!(text.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&text.stdout).contains("step  actor"));
    let mermaid = listwatch(&["show", file, "--format", "mermaid"]);
    assert!(String::from_utf8_lossy(&mermaid.stdout).starts_with("sequenceDiagram\n"));
    let json = listwatch(&["show", file, "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).expect("JSON");
    assert!(v["steps"].as_array().is_some_and(|s| !s.is_empty()));
}

/// `check --out DIR` writes each counterexample as a trace file that `replay` accepts and `show` renders.
#[test]
fn check_out_writes_counterexamples_that_replay() {
    let dir = tmp("check-out");
    let _ = std::fs::remove_dir_all(&dir);
    let check = listwatch(&[
        "check",
        "--scope",
        "small",
        "--flaw",
        "stop-on-close",
        "--out",
        dir.to_str().expect("utf-8"),
    ]);
    assert_eq!(check.status.code(), Some(1), "a violation");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .expect("--out made the folder")
        .map(|e| e.expect("an entry").path().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert!(files.iter().any(|f| f.ends_with("converges.list-watch.json")), "{files:?}");
    let mut replay = vec!["replay"];
    replay.extend(files.iter().map(String::as_str));
    let out = listwatch(&replay);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
}
