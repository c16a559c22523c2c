//! Bad command lines get one clear line and exit 2; good ones parse as written.

use listwatch_harness::cli::{parse_check, run};
use listwatch_harness::scope::Scope;
use listwatch_model::{Flaw, Flaws};

fn args(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| w.to_string()).collect()
}

#[test]
fn check_arguments_parse() {
    let parsed =
        parse_check(&args(&["--scope", "small", "--flaw", "stop-on-close", "--flaw", "spin-on-close"]))
            .expect("valid");
    assert_eq!(parsed.scope, Scope::Small);
    assert_eq!(parsed.flaws, Flaws::only(Flaw::StopOnClose).with(Flaw::SpinOnClose));
}

#[test]
fn bad_arguments_name_the_argument_and_the_problem() {
    let cases = [
        (&["--scope"][..], "--scope: missing value"),
        (&["--scope", "huge"][..], "--scope: unknown scope 'huge'"),
        (&["--flaw", "x"][..], "--flaw: unknown flaw 'x'"),
        (&["--max-states", "-3"][..], "--max-states: '-3' is not a positive whole number"),
        (&["--frobnicate"][..], "check: unknown argument '--frobnicate'"),
    ];
    for (words, expected) in cases {
        let err = parse_check(&args(words)).expect_err(expected);
        assert!(err.0.starts_with(expected), "{:?} gave '{}'", words, err.0);
        assert!(!err.0.contains('\n'), "one line");
    }
    assert_eq!(run(&args(&["explode"])), 2);
    assert_eq!(run(&args(&["bugs", "--json-please"])), 2);
}

#[test]
fn a_small_check_walks_the_whole_scope() {
    assert_eq!(run(&args(&["check", "--scope", "small"])), 0);
    assert_eq!(run(&args(&["check", "--scope", "small", "--max-states", "10"])), 2, "a limit hit is exit 2");
}
