//! Limits that hold: a check stopped by its time limit or by SIGINT prints the partial report (states,
//! depth, what it found so far, "incomplete") and exits 2.

use std::process::{Command, Stdio};
use std::time::Duration;

fn listwatch() -> Command {
    Command::new(env!("CARGO_BIN_EXE_listwatch"))
}

#[test]
fn a_time_limit_stops_the_check_with_a_partial_report() {
    let out = listwatch().args(["check", "--scope", "large", "--time-limit", "1"]).output().expect("runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{stdout}");
    assert!(stdout.contains("INCOMPLETE (stopped by the --time-limit)"), "{stdout}");
    assert!(stdout.contains("NOT RUN"), "the worlds after the deadline are not run: {stdout}");
    assert!(stdout.contains("undecided"), "no verdict is claimed: {stdout}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("partial"));
}

#[test]
fn a_world_too_large_for_the_time_limit_leaves_the_others_their_share() {
    // The large scope's first world takes hours; before the time was shared, it took all of it and the
    // nine worlds after it were not run.
    let out = listwatch().args(["check", "--scope", "large", "--time-limit", "10"]).output().expect("runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{stdout}");
    let line = |world: &str| {
        let line = stdout.lines().find(|l| l.trim_start().starts_with(world));
        line.unwrap_or_else(|| panic!("no line for {world}: {stdout}"))
    };
    let cut = line("list-watch ");
    assert!(cut.contains("INCOMPLETE (stopped by the --time-limit)"), "{stdout}");
    // The next line says how far into its last level it got and what it left.
    let depth = cut.split("depth ").nth(1).and_then(|d| d.split(',').next()).expect("a depth");
    let left = stdout.lines().skip_while(|l| *l != cut).nth(1).unwrap_or_default().trim_start();
    assert!(
        left.starts_with(&format!("stopped in depth {depth}: ")) && left.contains(" states judged, ")
            || left.starts_with(&format!("stopped after depth {depth}, all ")),
        "{stdout}"
    );
    assert!(left.ends_with("the deeper levels not reached"), "{left}");
    for small in ["client-manager ", "lease-revoke ", "slow-consumer ", "failing-server "] {
        let line = line(small);
        assert!(
            line.contains("states, depth") && !line.contains("INCOMPLETE") && !line.contains("NOT RUN"),
            "{line}"
        );
    }
}

/// A world the time limit leaves cut had all the time the others left: the search taken up again round
/// after round until the deadline, not once each, where a world that ends early would leave its share
/// unused.
#[test]
fn a_world_left_cut_had_all_the_time_the_others_left() {
    // The large scope's list-watch, which takes hours, with three worlds of a second or two (the first of
    // every three worlds), which the first round may cut and a later one end.
    let limit = Duration::from_secs(4);
    let started = std::time::Instant::now();
    let out = listwatch()
        .args(["check", "--scope", "large", "--time-limit", "4", "--shard", "1/3"])
        .output()
        .expect("runs");
    let took = started.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{stdout}");
    let cut = stdout.lines().find(|l| l.trim_start().starts_with("list-watch ")).unwrap_or_default();
    assert!(cut.contains("INCOMPLETE (stopped by the --time-limit)"), "{stdout}");
    assert!(took >= limit, "ended after {took:?}, before the --time-limit: {stdout}");
}

#[test]
fn sigint_stops_a_running_check_and_prints_the_partial_report() {
    let child = listwatch()
        .args(["check", "--scope", "large"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starts");
    std::thread::sleep(Duration::from_millis(1500));
    let killed = Command::new("kill").args(["-INT", &child.id().to_string()]).status().expect("kill runs");
    assert!(killed.success());
    let out = child.wait_with_output().expect("ends");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{stdout}");
    assert!(stdout.contains("INCOMPLETE (stopped by a signal (SIGINT or SIGTERM))"), "{stdout}");
    assert!(stdout.lines().any(|l| l.contains("list-watch") && l.contains("states, depth")), "{stdout}");
}

#[test]
fn a_memory_limit_below_what_the_process_holds_stops_the_check() {
    let out = listwatch().args(["check", "--scope", "small", "--memory-limit", "1"]).output().expect("runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{stdout}");
    assert!(stdout.contains("stopped by the --memory-limit"), "{stdout}");
}
