//! Stamps the commit `askuser` is built from into `ASKUSER_COMMIT` for `askuser --version`.
//!
//! In order: `ASKUSER_COMMIT` from the environment (a packager's own stamp), then the
//! `.cargo_vcs_info.json` that `cargo package` writes into a published crate, then `git` on the
//! askuser clone this package is in (with `-dirty` when tracked files changed; never another
//! repository the sources happen to sit in); without any of them, nothing: the version alone.

use std::path::Path;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let output = Command::new("git").args(args).output().ok()?;
    let text = String::from_utf8(output.stdout).ok()?;
    (output.status.success() && !text.trim().is_empty()).then(|| text.trim().to_owned())
}

/// The commit in a published crate's `.cargo_vcs_info.json` (`{"git":{"sha1":"…"}, …}`).
fn vcs_info(manifest_dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(manifest_dir.join(".cargo_vcs_info.json")).ok()?;
    let at = text.find("\"sha1\"")?;
    let rest = &text[at + "\"sha1\"".len()..];
    let start = rest.find('"')? + 1;
    let sha = &rest[start..];
    let sha = &sha[..sha.find('"')?];
    (sha.len() >= 12 && sha.bytes().all(|b| b.is_ascii_hexdigit())).then(|| sha[..12].to_owned())
}

fn main() {
    println!("cargo::rerun-if-env-changed=ASKUSER_COMMIT");
    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    let manifest_dir = Path::new(&manifest_dir);
    let commit = std::env::var("ASKUSER_COMMIT").ok().filter(|c| !c.is_empty());
    let commit = commit.or_else(|| vcs_info(manifest_dir)).or_else(|| {
        let top = git(&["-C", manifest_dir.to_str()?, "rev-parse", "--show-toplevel"])?;
        if !Path::new(&top).join("crates/askuser-cli/build.rs").is_file() {
            return None;
        }
        let commit = git(&["-C", manifest_dir.to_str()?, "rev-parse", "--short=12", "HEAD"])?;
        // Rebuilt when HEAD moves (a commit, a checkout) and when the index changes.
        for file in ["HEAD", "logs/HEAD", "index"] {
            if let Some(path) = git(&["-C", manifest_dir.to_str()?, "rev-parse", "--git-path", file]) {
                let path = manifest_dir.join(path);
                if path.exists() {
                    println!("cargo::rerun-if-changed={}", path.display());
                }
            }
        }
        let dirty =
            git(&["-C", manifest_dir.to_str()?, "status", "--porcelain", "--untracked-files=no"]).is_some();
        Some(if dirty { format!("{commit}-dirty") } else { commit })
    });
    if let Some(commit) = commit {
        println!("cargo::rustc-env=ASKUSER_COMMIT={commit}");
    }
}
