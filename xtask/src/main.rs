//! Project automation, run as `cargo xtask <command>`.
//!
//! Each command lives in its own module; `main` only dispatches.

mod ci;
mod cycles;
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
/// Cargo's build directory for this workspace, wherever it is (`target/` in the clone, or a
/// `CARGO_TARGET_DIR` or `build.target-dir` elsewhere), as `cargo metadata` reports it.
fn target_dir() -> Result<PathBuf, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let output = std::process::Command::new(&cargo)
        .args(["metadata", "--no-deps", "--format-version", "1", "--locked"])
        .current_dir(workspace_root())
        .output()
        .map_err(|e| format!("could not run {cargo} metadata: {e}"))?;
    if !output.status.success() {
        return Err(format!("cargo metadata failed: {}", String::from_utf8_lossy(&output.stderr)));
    }
    let metadata: serde_json::Value =
        serde_json::from_slice(&output.stdout).map_err(|e| format!("cargo metadata's output: {e}"))?;
    metadata["target_directory"]
        .as_str()
        .map(PathBuf::from)
        .ok_or_else(|| "cargo metadata names no target_directory".to_owned())
}

fn workspace_root() -> PathBuf {
    let manifest_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest_dir.parent().map_or(manifest_dir.clone(), PathBuf::from)
}
