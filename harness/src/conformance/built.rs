//! Where the project's scripts put the Go programs a conformance run starts (`scripts/install-etcd vX.Y.Z`,
//! `scripts/build-apiserver`): `target/go/` of this build's target directory, or of the working
//! directory.

use std::path::PathBuf;

/// The `target/go` directories to look in, in order.
pub fn roots() -> Vec<PathBuf> {
    let mut roots = Vec::new();
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        roots.push(PathBuf::from(dir).join("go"));
    }
    // The listwatch binary lives in target/<profile>/ (or target/<profile>/deps/ for a test).
    if let Ok(exe) = std::env::current_exe() {
        for up in exe.ancestors().skip(1).take(3) {
            if up.file_name().is_some_and(|n| n == "target") {
                roots.push(up.join("go"));
            }
        }
    }
    roots.push(PathBuf::from("target/go"));
    roots
}

/// `relative` under the first root that has it.
pub fn find(relative: &str) -> Option<PathBuf> {
    roots().into_iter().map(|r| r.join(relative)).find(|p| p.is_file())
}

/// The releases built under `program/` (`program/vX.Y.Z/program`), oldest first.
pub fn releases(program: &str) -> Vec<(String, PathBuf)> {
    let mut found: Vec<(Vec<u64>, String, PathBuf)> = Vec::new();
    for root in roots() {
        let Ok(dir) = std::fs::read_dir(root.join(program)) else { continue };
        for entry in dir.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let binary = entry.path().join(program);
            let key: Vec<u64> =
                name.trim_start_matches('v').split('.').filter_map(|p| p.parse().ok()).collect();
            if binary.is_file() && key.len() == 3 && !found.iter().any(|(_, n, _)| *n == name) {
                found.push((key, name, binary));
            }
        }
    }
    found.sort();
    found.into_iter().map(|(_, n, p)| (n, p)).collect()
}

/// The release of `program` to run: `wanted`, or the newest built.
pub fn release(program: &str, wanted: Option<&str>) -> Option<(String, PathBuf)> {
    let releases = releases(program);
    match wanted {
        Some(v) => releases.into_iter().find(|(name, _)| name == v),
        None => releases.into_iter().last(),
    }
}
