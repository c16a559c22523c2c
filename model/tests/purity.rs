//! The model is a value: no IO, clock, threads, randomness or async anywhere in `model/src`.

use std::path::Path;

const FORBIDDEN: [&str; 9] = [
    "std::time",
    "std::thread",
    "std::net",
    "std::fs",
    "std::process",
    "rand::",
    "tokio",
    "SystemTime",
    "Instant::now",
];

fn sources(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("model/src is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn model_sources_use_no_io_clock_threads_randomness_or_async() {
    let mut files = Vec::new();
    sources(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut files);
    assert!(files.len() > 5, "found the sources");
    let mut hits = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("a source file is text");
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for word in FORBIDDEN {
                if code.contains(word) {
                    hits.push(format!("{}:{}: {word}", file.display(), n + 1));
                }
            }
        }
    }
    assert!(hits.is_empty(), "forbidden in model/src:\n{}", hits.join("\n"));
}
