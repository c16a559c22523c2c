//! The `listwatch` binary.

/// The checker makes and frees millions of small states a second; mimalloc keeps that cheap where
/// glibc's allocator spends most of a run in `malloc`, `free` and fresh pages (BENCHMARKS.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    std::process::exit(listwatch_harness::cli::run(&args));
}
