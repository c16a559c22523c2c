//! listwatch's breadth-first search against stateright's, the reference: on every world of the small
//! scope, correct and with each catalogue flaw, the same states, depth, verdicts, witnesses and
//! shortest counterexamples; and the same result, step for step, on one thread and on several.
//! The long comparisons over flaws take this run's share of them (`support/share.rs`).

#[path = "support/share.rs"]
mod share;

use listwatch_harness::checker::{run, Limits, Outcome, Search};
use listwatch_harness::scope::{worlds, Scope};
use listwatch_model::{Flaw, Flaws};

fn limits(threads: usize) -> Limits {
    Limits { threads, ..Limits::states(5_000_000, false) }
}

/// Per property: its name, its counterexample's length, whether its witness was reached (stateright's
/// path to a witness is one it found, not the shortest, so only ours are compared step for step).
type PropertySummary = (String, Option<usize>, bool);

/// What must agree: states, depth, and per property its verdict, witness and counterexample length.
fn summary(o: &Outcome) -> (usize, usize, Vec<PropertySummary>) {
    let verdicts = o
        .verdicts
        .iter()
        .map(|v| {
            (v.property.to_string(), v.counterexample.as_ref().map(|(steps, _)| steps.len()), v.witnessed())
        })
        .collect();
    (o.states, o.depth, verdicts)
}

/// Everything, counterexamples step for step and their violations word for word.
fn exact(o: &Outcome) -> String {
    let generated = o.fingerprints.map(|f| f.generated);
    let mut text = format!(
        "{} states ({generated:?} generated), depth {}, complete {}\n",
        o.states, o.depth, o.complete
    );
    for v in &o.verdicts {
        text += &format!("{} witnessed at {:?}", v.property, v.witnessed_at);
        if let Some((steps, violation)) = &v.counterexample {
            let steps: Vec<String> = steps.iter().map(ToString::to_string).collect();
            text += &format!(": {} | {violation}", steps.join(", "));
        }
        text += "\n";
    }
    text
}

fn compare(flaws: Flaws) {
    for w in worlds(Scope::Small, flaws) {
        let reference = run(w.config, Search::StaterightBfs, limits(1));
        let one = run(w.config, Search::Bfs, limits(1));
        let two = run(w.config, Search::Bfs, limits(2));
        assert!(reference.complete && one.complete && two.complete, "{}: every run explores it all", w.name);
        assert_eq!(summary(&one), summary(&reference), "{} with {flaws:?}: as stateright's BFS", w.name);
        assert_eq!(exact(&one), exact(&two), "{} with {flaws:?}: the same on 1 and 2 threads", w.name);
        // The counterexample is the same path, not only one as short.
        for (ours, theirs) in one.verdicts.iter().zip(&reference.verdicts) {
            if let (Some((a, _)), Some((b, _))) = (&ours.counterexample, &theirs.counterexample) {
                assert_eq!(a.len(), b.len(), "{} {}: shortest", w.name, ours.property);
            }
        }
    }
}

/// Levels kept as steps and made again when judged (the frontier of a search short of memory) give
/// the same states, verdicts, witnesses and counterexamples, step for step, as levels made: with every
/// level kept from the initial state on (in the worlds of at most 20,000 states), and with levels wider
/// than a few hundred kept, so that the search goes from made levels to kept ones and back; correct and
/// with a flaw, on 1 and 2 threads. About a minute in release: `.ci/run` runs it there.
#[test]
#[ignore = "a minute in release: .ci/run runs it there"]
fn levels_kept_as_steps_give_the_same_search() {
    let mut kept_and_made_again = 0;
    let cases = [Flaws::NONE, Flaws::NONE.with(Flaw::StaleDeleteRv)]
        .into_iter()
        .flat_map(|flaws| worlds(Scope::Small, flaws).into_iter().map(move |w| (flaws, w)));
    for (flaws, w) in share::share(cases) {
        let made = run(w.config, Search::Bfs, limits(1));
        for (made_states, threads) in [(1, 1), (300, 2)] {
            if made_states == 1 && made.states > 20_000 {
                // Every level made again from the initial state: quadratic in the depth.
                continue;
            }
            let kept = run(w.config, Search::Bfs, Limits { made_states, ..limits(threads) });
            let name = format!("{} with {flaws:?}, made_states {made_states}", w.name);
            assert_eq!(exact(&kept), exact(&made), "{name}");
            let f = kept.fingerprints.expect("our search reports them");
            if made_states == 1 {
                // Every level wider than one state is kept; a world of one state a level has none.
                assert!(f.kept_from.is_some() || made.states == made.depth, "{name}: kept");
            } else if f.kept_from.is_some_and(|from| f.kept_levels < made.depth - from) {
                kept_and_made_again += 1;
            }
        }
    }
    assert!(kept_and_made_again > 0, "some search went from kept levels back to made ones");
}

/// A level merged one chunk at a time (its successors held until the merge a chunk's worth, not a
/// level's) gives the same states, generated successors, verdicts, witnesses and counterexamples, step
/// for step, as a level merged whole: correct, stopped at a flaw's first violation, and cut by a state
/// limit in the middle of a level, on 1 and 2 threads.
#[test]
#[ignore = "a minute in release: .ci/run runs it there"]
fn levels_merged_a_window_at_a_time_give_the_same_search() {
    let cases = [(Flaws::NONE, false), (Flaws::NONE.with(Flaw::StaleDeleteRv), true)]
        .into_iter()
        .flat_map(|(flaws, stop)| worlds(Scope::Small, flaws).into_iter().map(move |w| (flaws, stop, w)));
    let mut windows_cut = 0;
    for (flaws, stop_at_violation, w) in share::share(cases) {
        let whole = Limits { stop_at_violation, ..limits(1) };
        let merged = run(w.config, Search::Bfs, whole);
        // A cut a little past the first level wider than a chunk's worth of states.
        let max_states = merged.states / 2 + 1;
        for threads in [1, 2] {
            let name = format!("{} with {flaws:?} on {threads} threads", w.name);
            let windows = Limits { window_states: 1, threads, ..whole };
            assert_eq!(exact(&run(w.config, Search::Bfs, windows)), exact(&merged), "{name}");
            let cut = run(w.config, Search::Bfs, Limits { max_states, ..windows });
            let cut_whole = run(w.config, Search::Bfs, Limits { max_states, ..whole });
            assert_eq!(exact(&cut), exact(&cut_whole), "{name}, cut at {max_states} states");
            windows_cut += usize::from(!cut.complete);
        }
    }
    assert!(windows_cut > 0, "some search was cut by its state limit");
}

#[test]
#[ignore = "30 s in the test profile: .ci/run runs it in release"]
fn the_correct_system_searched_as_stateright_does() {
    compare(Flaws::NONE);
}

/// Each flaw, in every world that shows it, up to its first violation (a flawed world explored to the
/// end can be large): the same shortest counterexample length as stateright's, and the same result on
/// 1 and 2 threads. About two minutes in release: `.ci/run` runs it there
/// (`cargo test --release --test bfs -- --ignored`).
#[test]
#[ignore = "minutes: .ci/run runs it in release mode"]
fn every_flaw_caught_as_stateright_catches_it() {
    let first = |o: &Outcome| o.violated().map(|v| v.counterexample.as_ref().map_or(0, |c| c.0.len())).min();
    for flaw in share::share(Flaw::ALL) {
        let flaws = Flaws::NONE.with(flaw);
        let stop = |threads| Limits { stop_at_violation: true, ..limits(threads) };
        for w in worlds(Scope::Small, flaws) {
            let two = run(w.config, Search::Bfs, stop(2));
            if first(&two).is_none() {
                // Not this flaw's world: the correct system's comparison covers a world that holds.
                continue;
            }
            let reference = run(w.config, Search::StaterightBfs, stop(1));
            let one = run(w.config, Search::Bfs, stop(1));
            assert_eq!(first(&one), first(&reference), "{} with {flaw}: as stateright's BFS", w.name);
            assert_eq!(exact(&one), exact(&two), "{} with {flaw}: the same on 1 and 2 threads", w.name);
        }
    }
}

#[test]
fn a_state_limit_cuts_the_search_and_says_so() {
    let w = &worlds(Scope::Small, Flaws::NONE)[0];
    let o = run(w.config, Search::Bfs, Limits { max_states: 500, ..limits(2) });
    assert!(!o.complete);
    assert_eq!(o.states, 500, "exactly the states allowed are judged");
}

#[test]
fn the_seen_set_reports_what_tlc_reports() {
    let w = &worlds(Scope::Small, Flaws::NONE)[0];
    let o = run(w.config, Search::Bfs, limits(2));
    let f = o.fingerprints.expect("listwatch's search reports its seen set");
    // Every distinct state was generated once, and most are reached again by another path.
    assert!(f.generated > 2 * o.states as u64, "{} generated for {} states", f.generated, o.states);
    assert_eq!(f.held, o.states, "a whole search holds the fingerprints of the states it judged");
    let expected = o.states as f64 * (f.generated - o.states as u64) as f64 / 2f64.powi(64);
    assert_eq!(f.collision_probability(), expected, "TLC's optimistic estimate");
    // A fingerprint, 8 bytes in a table between half and three quarters full, and the newest parents and
    // steps not yet written out (6 bytes a state, 48 KiB at most): far less than a state.
    let bytes = f.bytes_per_state();
    let most = 16.0 + (64 << 10) as f64 / o.states as f64;
    assert!(
        o.states > 1024 && (32.0 / 3.0..most).contains(&bytes),
        "{bytes} bytes per state over {} states",
        o.states
    );
    // The others, 6 bytes each, on disk.
    assert!(
        f.trace_bytes.is_multiple_of(6) && f.trace_bytes < 6 * o.states as u64,
        "{} bytes on disk",
        f.trace_bytes
    );
    assert!(
        run(w.config, Search::StaterightBfs, limits(1)).fingerprints.is_none(),
        "stateright's does not say"
    );
}

/// A search stopped at a violation mid-level has merged successors of the next level that it never
/// judged: its seen set's ratios are over the fingerprints it holds, not the states judged, which
/// would make each state look dearer than it is.
#[test]
fn a_stop_mid_level_reports_the_seen_set_over_the_fingerprints_it_holds() {
    let w = &worlds(Scope::Small, Flaws::NONE.with(Flaw::StaleDeleteRv))[0];
    let o = run(w.config, Search::Bfs, Limits { stop_at_violation: true, ..limits(2) });
    let f = o.fingerprints.expect("listwatch's search reports its seen set");
    assert!(!o.complete && o.states > 0);
    assert!(f.held > o.states, "{} held for {} judged", f.held, o.states);
    assert_eq!(f.bytes_per_state(), f.seen_bytes as f64 / f.held as f64);
    assert_eq!(f.trace_bytes_per_state(), f.trace_bytes as f64 / f.held as f64);
}

/// A search put aside by its time limit and taken up again, over and over (a tenth of a second at a
/// time, so that it stops in the middle of levels and of their making), ends in the same states,
/// generated successors, verdicts, witnesses and counterexamples, step for step, as one never stopped:
/// correct and with a flaw, with levels made, with levels kept as steps, and letting go of its states
/// at every third pause (made again from the initial state). A minute in release: `.ci/run` runs it
/// there.
#[test]
#[ignore = "a minute in release: .ci/run runs it there"]
fn a_search_put_aside_and_taken_up_again_gives_the_same_search() {
    use listwatch_harness::checker::{run_resumable, CheckModel};
    use std::time::Duration;
    let tenth = Duration::from_millis(100);
    let (mut pauses, mut counterexamples, mut cut_mid_level, mut lightened) = (0, 0, 0, 0);
    for flaws in [Flaws::NONE, Flaws::NONE.with(Flaw::StaleDeleteRv)] {
        for w in worlds(Scope::Default, flaws) {
            if !["slow-etcd-watcher", "paginated-relist"].contains(&w.name) {
                continue;
            }
            // Levels made and let go at every pause, and, without the flaw, levels kept as steps, made
            // again as they are judged.
            let kept = if flaws == Flaws::NONE { &[usize::MAX, 5_000][..] } else { &[usize::MAX] };
            let runs = kept.iter().map(|&made| (made, false)).chain([(usize::MAX, true)]);
            for (made_states, lighten) in runs {
                let whole = Limits { made_states, ..limits(2) };
                let once = run(w.config, Search::Bfs, whole);
                let name = format!("{} with {flaws:?}, made_states {made_states}, lighten {lighten}", w.name);
                let (mut outcome, mut paused) =
                    run_resumable(CheckModel::new(w.config), Limits { time_limit: tenth, ..whole }, w.name);
                let mut times = 0;
                while let Some(mut search) = paused {
                    assert!(!outcome.complete, "{name}: a search put aside is not complete");
                    // Where it stopped, in the states the seen set holds: those found through the level
                    // it stopped in, and the next level's found so far.
                    let left = outcome.left.expect("a search put aside says where it stopped");
                    let held = outcome.fingerprints.expect("ours").held;
                    assert_eq!(left.depth, outcome.depth, "{name}: {left:?}");
                    assert!(
                        left.level_judged <= left.level_states && left.level_states > 0,
                        "{name}: {left:?}"
                    );
                    assert!(left.level_states <= outcome.states, "{name}: {left:?}");
                    assert_eq!(held, outcome.states + left.next_found, "{name}: {left:?}");
                    cut_mid_level += usize::from(left.level_judged < left.level_states);
                    times += 1;
                    if lighten && times % 3 == 1 {
                        search.lighten();
                    }
                    (outcome, paused) = search.resume(tenth, w.name);
                }
                assert!(once.complete && outcome.complete, "{name}: both explore it all");
                assert_eq!((outcome.left, once.left), (None, None), "{name}: nothing left once ended");
                assert!(times > 0, "{name}: put aside at least once ({} s)", once.seconds);
                assert_eq!(exact(&outcome), exact(&once), "{name}: put aside {times} times");
                let (a, b) = (outcome.fingerprints.expect("ours"), once.fingerprints.expect("ours"));
                assert_eq!(a.held, b.held, "{name}");
                if lighten {
                    // Every level was made; the ones it stopped in were made again once let go.
                    assert_eq!(b.kept_from, None, "{name}");
                    lightened += usize::from(a.kept_from.is_some());
                } else {
                    assert_eq!((a.kept_from, a.kept_levels), (b.kept_from, b.kept_levels), "{name}");
                }
                pauses += times;
                counterexamples += outcome.violated().count();
            }
        }
    }
    assert!(pauses >= 12, "the searches were put aside {pauses} times");
    assert!(cut_mid_level > 0, "some were put aside in the middle of a level");
    assert!(counterexamples > 0, "the flaw's counterexamples are compared");
    assert!(lightened > 0, "some searches made a level again after letting its states go");
}
