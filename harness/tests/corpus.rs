//! The regression corpus: every file still gives its recorded verdict, the correct reflector holds on
//! the same steps, every catalogue flaw has its file, and the text rendering of each is snapshotted so
//! that a model change shows as a reviewable diff.

#[path = "support/corpus_files.rs"]
mod corpus_files;

use listwatch_harness::cli::corpus_name;
use listwatch_harness::render;
use listwatch_harness::replay::replay;
use listwatch_harness::tracefile::{Trace, Verdict};
use listwatch_model::Flaw;

use corpus_files::{corpus_dir, corpus_files};

#[test]
fn every_corpus_file_reproduces_and_the_correct_reflector_holds() {
    let files = corpus_files();
    assert!(files.len() >= Flaw::ALL.len(), "the corpus lost files: {files:?}");
    for file in files {
        let trace = Trace::load(&file).unwrap_or_else(|e| panic!("{e}"));
        let r = replay(&trace).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        assert_eq!(r.verdict, trace.expect, "{}: verdict changed", file.display());
        assert_eq!(r.correct, Verdict::Holds, "{}: the correct reflector breaks", file.display());
    }
}

#[test]
fn every_catalogue_flaw_has_a_corpus_file_that_breaks_with_it() {
    for flaw in Flaw::ALL {
        let file = corpus_dir().join(corpus_name(flaw));
        let trace = Trace::load(&file).unwrap_or_else(|e| panic!("{flaw}: {e}"));
        assert!(trace.config.flaws.has(flaw), "{}: not recorded with its flaw", file.display());
        assert!(matches!(trace.expect, Verdict::Breaks { .. }), "{}: records no failure", file.display());
    }
}

#[test]
fn text_rendering_of_each_catalogue_trace() {
    for flaw in Flaw::ALL {
        let file = corpus_dir().join(corpus_name(flaw));
        let trace = Trace::load(&file).unwrap_or_else(|e| panic!("{e}"));
        insta::assert_snapshot!(flaw.name(), render::text(&trace));
    }
}

#[test]
fn a_file_written_is_the_same_bytes_read_back() {
    for file in corpus_files() {
        let text = std::fs::read_to_string(&file).expect("readable");
        let trace = Trace::parse("corpus file", &text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(trace.to_json(), text, "{} is not in canonical form", file.display());
    }
}

#[test]
fn a_truncated_or_edited_corpus_file_is_rejected_with_its_position() {
    let file = corpus_dir().join(corpus_name(Flaw::StaleDeleteRv));
    let text = std::fs::read_to_string(file).expect("readable");
    let cut = &text[..text.len() / 2];
    let e = Trace::parse("cut.json", cut).unwrap_err().to_string();
    assert!(e.starts_with("cut.json: not a trace: EOF while parsing") && e.contains("line"), "{e}");
    // Loading does not run the trace; replaying it checks first that every step is enabled.
    let edited = text.replacen("\"deliver reflector-0\"", "\"deliver reflector-3\"", 1);
    let trace = Trace::parse("edited.json", &edited).expect("well-formed");
    let e = replay(&trace).unwrap_err();
    assert!(e.starts_with("actions[") && e.ends_with("not enabled at that point of the trace"), "{e}");
    let renamed = text.replacen("\"create default/a\"", "\"teleport default/a\"", 1);
    let e = Trace::parse("renamed.json", &renamed).unwrap_err().to_string();
    assert_eq!(e, "renamed.json: actions[0]: unknown action 'teleport'");
    let newer = text.replacen("\"version\": 1", "\"version\": 2", 1);
    let e = Trace::parse("newer.json", &newer).unwrap_err().to_string();
    assert_eq!(e, "newer.json: unknown trace version 2 (this listwatch reads version 1)");
    let other = text.replacen("\"no-rv-regression\"", "\"no-such-property\"", 1);
    let e = Trace::parse("other.json", &other).unwrap_err().to_string();
    assert_eq!(e, "other.json: expect: unknown property 'no-such-property'");
}
