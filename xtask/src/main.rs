//! Project automation, run as `cargo xtask <command>`.
//!
//! Each command lives in its own module; `main` only dispatches.

mod ci;
mod dist;
mod npm;
mod packages;
mod schema;

use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "\
usage: cargo xtask <command> [options]

commands:
  ci                 fmt --check, tidy, clippy -D warnings (default and all features), doc -D warnings,
                     schema --check, then the tests
  dist [options]     the release archive askuser-VERSION-TARGET.tar.gz and its .sha256 in
                     target/dist (cargo xtask dist --help)
  npm --binary PATH  the npm launcher and platform packages (npm pack) in target/npm
  packages           build the Python wheel (maturin, dev profile) and test it from the artifact
                     alone: a fresh venv, --version, demo, an MCP round trip (Python SDK, uvx)
  schema [--check]   write schema/*.json from askuser-tool (--check: write nothing, fail if stale)
  help               print this help
";

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let command = args.next();
    let rest: Vec<String> = args.collect();
    let result = match command.as_deref() {
        Some("ci") if rest.is_empty() => ci::run(),
        Some("dist") => dist::run(&rest),
        Some("npm") => npm::run(&rest),
        Some("packages") if rest.is_empty() => packages::run_all(),
        Some("schema") => schema::run(&rest),
        Some("help" | "--help" | "-h") | None => {
            print!("{USAGE}");
            Ok(())
        }
        Some(other) => Err(format!("unknown command or arguments {other:?} {rest:?}\n\n{USAGE}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("xtask: {message}");
            ExitCode::FAILURE
        }
    }
}

/// The workspace root: the parent of this crate's directory.
fn workspace_root() -> PathBuf {
    let manifest_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest_dir.parent().map_or(manifest_dir.clone(), PathBuf::from)
}
