//! The `listwatch` binary.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    std::process::exit(listwatch_harness::cli::run(&args));
}
