//! The `listwatch` binary.

/// The checker makes and frees millions of small states a second; mimalloc keeps that cheap where
/// glibc's allocator spends most of a run in `malloc`, `free` and fresh pages (BENCHMARKS.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    keep_freed_pages();
    let args: Vec<String> = std::env::args().skip(1).collect();
    std::process::exit(listwatch_harness::cli::run(&args));
}

/// mimalloc returns freed pages to the kernel 10 ms after they are freed, and the checker frees a level
/// of states just before it makes the next one: the kernel then zeroes every page again, which costs up to
/// a seventh of a run (BENCHMARKS.md). Keeping them is what a checker wants, and `MIMALLOC_PURGE_DELAY=-1`
/// says so; but mimalloc reads its options as the process starts, before `main`. So the binary starts
/// itself again, once, with the option set. A user's own setting wins, and if the exec fails the run
/// goes on as it is.
fn keep_freed_pages() {
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        const OPTION: &str = "MIMALLOC_PURGE_DELAY";
        if std::env::var_os(OPTION).is_some() {
            return;
        }
        let Ok(exe) = std::env::current_exe() else { return };
        let mut args = std::env::args_os();
        let mut command = std::process::Command::new(exe);
        if let Some(arg0) = args.next() {
            command.arg0(arg0);
        }
        // `exec` returns only if it failed.
        let _failed = command.args(args).env(OPTION, "-1").exec();
    }
}
