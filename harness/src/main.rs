//! The `listwatch` binary.

/// The checker makes and frees millions of small states a second; mimalloc keeps that cheap where
/// glibc's allocator spends most of a run in `malloc`, `free` and fresh pages (BENCHMARKS.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    // mimalloc returns freed pages to the kernel after 10 ms by default, and the checker frees a level
    // of states just before it makes the next one: the kernel then zeroes every page again (a fifth of
    // a run). Keeping them is what a checker wants. mimalloc reads the option on first use, after this;
    // a user's own setting wins.
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        std::env::set_var("MIMALLOC_PURGE_DELAY", "-1");
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    std::process::exit(listwatch_harness::cli::run(&args));
}
