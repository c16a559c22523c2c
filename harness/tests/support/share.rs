//! The share of a long release test's cases a run takes: every case, or with `LISTWATCH_SHARE=K/N` the
//! cases at positions K, K + N, K + 2N, ... of the test's own order, so that N runs with K = 0 to N - 1
//! take every case once. `.ci/run` takes K from the commit hash, as it picks the releases of its sweeps:
//! each run a third of the flaws and worlds of the exhaustive comparisons, none left out for long.
#![allow(dead_code)] // each test file that includes this uses a part of it

const VARIABLE: &str = "LISTWATCH_SHARE";

/// This run's cases of `cases`, in their order.
pub fn share<T>(cases: impl IntoIterator<Item = T>) -> Vec<T> {
    let (k, n) = this_run();
    cases.into_iter().enumerate().filter(|(i, _)| i % n == k).map(|(_, case)| case).collect()
}

/// (K, N): (0, 1) without the variable, every case.
fn this_run() -> (usize, usize) {
    let text = match std::env::var(VARIABLE) {
        Err(std::env::VarError::NotPresent) => return (0, 1),
        Err(e) => panic!("{VARIABLE}: {e}"),
        Ok(text) => text,
    };
    let parsed =
        text.split_once('/').and_then(|(k, n)| Some((k.parse::<usize>().ok()?, n.parse::<usize>().ok()?)));
    match parsed {
        Some((k, n)) if k < n => (k, n),
        _ => panic!("{VARIABLE}={text:?}: expected K/N with 0 <= K < N, such as 1/3"),
    }
}
