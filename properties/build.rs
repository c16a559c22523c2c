//! Registers the guarantees: each `pub mod name;` line of `src/guarantees/mod.rs` becomes one entry
//! `Name(name),` of the `guarantees!` list and one variant `Name` of `Property` (`src/property.rs`), in
//! the order the lines are written (the order violations are looked for). A file in that directory without its line is a build error naming it.

use std::fmt::Write as _;
use std::path::Path;
use std::{env, fs, process};

const DIR: &str = "src/guarantees";

fn main() {
    println!("cargo::rerun-if-changed={DIR}");
    let registry = format!("{DIR}/mod.rs");
    let text = fs::read_to_string(&registry).unwrap_or_else(|e| fail(&format!("{registry}: {e}")));
    let modules: Vec<&str> =
        text.lines().filter_map(|line| line.trim().strip_prefix("pub mod ")?.strip_suffix(';')).collect();
    for file in fs::read_dir(DIR).unwrap_or_else(|e| fail(&format!("{DIR}: {e}"))) {
        let path = file.unwrap_or_else(|e| fail(&format!("{DIR}: {e}"))).path();
        let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else { continue };
        if path.extension().is_some_and(|e| e == "rs") && stem != "mod" && !modules.contains(&stem) {
            fail(&format!(
                "properties/{}: not registered: add `pub mod {stem};` to properties/{registry}",
                path.display()
            ));
        }
    }
    let mut list = String::from("guarantees! {\n");
    for module in &modules {
        writeln!(list, "    {}({module}),", camel_case(module)).unwrap();
    }
    list.push_str("}\n");
    let out_dir = env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let out = Path::new(&out_dir).join("guarantees.rs");
    fs::write(&out, list).unwrap_or_else(|e| fail(&format!("{}: {e}", out.display())));
    let variants: Vec<String> = modules.iter().map(|m| camel_case(m)).collect();
    let mut property = String::from(
        "/// One guarantee a list/watch cache must keep; each is the file of the same name in `guarantees/`.\n\
         #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]\npub enum Property {\n",
    );
    for v in &variants {
        writeln!(property, "    {v},").unwrap();
    }
    let all: Vec<String> = variants.iter().map(|v| format!("Property::{v}")).collect();
    writeln!(
        property,
        "}}\n\nimpl Property {{\n    /// How many properties there are.\n    pub const COUNT: usize = {};\n\n    \
         /// Every property, in catalogue order (the order violations are looked for).\n    \
         pub const ALL: [Property; Self::COUNT] = [{}];\n}}",
        variants.len(),
        all.join(", ")
    )
    .unwrap();
    let out = Path::new(&out_dir).join("property.rs");
    fs::write(&out, property).unwrap_or_else(|e| fail(&format!("{}: {e}", out.display())));
}

/// `no_rv_regression` → `NoRvRegression`.
fn camel_case(module: &str) -> String {
    module
        .split('_')
        .flat_map(|word| {
            let mut chars = word.chars();
            chars.next().map(|c| c.to_ascii_uppercase()).into_iter().chain(chars)
        })
        .collect()
}

fn fail(message: &str) -> ! {
    eprintln!("{message}");
    process::exit(1)
}
