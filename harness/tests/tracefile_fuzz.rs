//! The trace parser never panics: random text, and corpus files with bytes cut, replaced or inserted,
//! either load or give one line naming the file.

use listwatch_harness::tracefile::Trace;
use proptest::prelude::*;

fn sample() -> String {
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../corpus/stale-delete-rv.kubernetes-58545.json");
    std::fs::read_to_string(file).expect("the corpus file is readable")
}

fn check(text: &str) {
    if let Err(e) = Trace::parse("fuzz.json", text) {
        let line = e.to_string();
        assert!(line.starts_with("fuzz.json: "), "{line}");
        assert!(!line.contains('\n'), "not one line: {line}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn random_text_never_panics(text in "\\PC{0,200}") {
        check(&text);
    }

    #[test]
    fn mutated_corpus_files_never_panic(
        edits in proptest::collection::vec((any::<prop::sample::Index>(), 0u8..3, any::<u8>()), 1..6)
    ) {
        let mut bytes = sample().into_bytes();
        for (at, kind, byte) in edits {
            let i = at.index(bytes.len().max(1));
            match kind {
                0 if !bytes.is_empty() => { bytes.remove(i.min(bytes.len() - 1)); }
                1 if !bytes.is_empty() => { let j = i.min(bytes.len() - 1); bytes[j] = byte; }
                _ => bytes.insert(i.min(bytes.len()), byte),
            }
        }
        check(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn numbers_in_the_config_never_panic(field in 0usize..9, value in 0u32..300) {
        let names = ["keys", "writes", "foreign_writes", "compactions", "faults", "servers", "reflectors",
                     "cache_window", "etcd_watch_buffer"];
        let text = sample();
        let key = format!("\"{}\": ", names[field]);
        let start = text.find(&key).expect("field present") + key.len();
        let end = start + text[start..].find(',').expect("a comma after the value");
        let edited = format!("{}{}{}", &text[..start], value, &text[end..]);
        check(&edited);
    }
}
