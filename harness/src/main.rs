//! The `listwatch` binary.

/// The checker makes and frees millions of small states a second; mimalloc keeps that cheap where
/// glibc's allocator spends most of a run in `malloc`, `free` and fresh pages (BENCHMARKS.md). Freed
/// pages go back to the kernel a second after they are freed (mimalloc's own `MIMALLOC_PURGE_DELAY`,
/// which a user may set): kept for good instead, the levels a search made early held their memory for
/// the rest of a run that is watched against `--memory-limit`, and the default scope ran no faster
/// (BENCHMARKS.md, "Freed pages given back").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    std::process::exit(listwatch_harness::cli::run(&args));
}
