//! `askuser --version`: the package version and the commit of the clone it was built from.

use std::process::Command;

#[test]
fn names_the_version_and_the_commit() {
    let head = Command::new("git").args(["rev-parse", "--short=12", "HEAD"]).output().unwrap();
    let head = String::from_utf8(head.stdout).unwrap();
    for flag in ["--version", "-V", "version"] {
        let output = Command::new(env!("CARGO_BIN_EXE_askuser")).arg(flag).output().unwrap();
        assert_eq!(output.status.code(), Some(0));
        let text = String::from_utf8(output.stdout).unwrap();
        let expected = format!("askuser {} (commit {}", env!("CARGO_PKG_VERSION"), head.trim());
        assert!(text.starts_with(&expected), "{text:?} does not start with {expected:?}");
        if cfg!(all(feature = "mcp", feature = "server")) {
            assert!(!text.contains("without"), "{text}");
        } else {
            assert!(text.contains("without "), "{text}");
        }
    }
}
