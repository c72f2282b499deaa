//! What `askuser` says when a command was left out of its build (the `mcp` or `server` feature
//! off, as in the README's quick demo): a command that gets it, from where the person is.

use std::path::{Path, PathBuf};

/// Where this binary came from, as far as it can tell.
#[derive(Debug)]
pub(crate) struct Origin {
    /// The workspace it was built from, when its sources are still there (a clone, not a
    /// downloaded crate).
    pub(crate) workspace: Option<PathBuf>,
    /// Whether it runs from a Cargo build directory (`cargo run`), wherever that is: `target/` in
    /// the clone, or a `CARGO_TARGET_DIR` elsewhere.
    pub(crate) from_target: bool,
    /// Whether the current directory is inside that workspace.
    pub(crate) inside: bool,
}

impl Origin {
    fn here() -> Self {
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
        let workspace = manifest
            .ends_with("crates/askuser-cli")
            .then(|| manifest.join("../..").canonicalize().ok())
            .flatten()
            .filter(|root| root.join("Cargo.toml").is_file());
        let exe = std::env::current_exe().and_then(std::fs::canonicalize).ok();
        let cwd = std::env::current_dir().and_then(std::fs::canonicalize).ok();
        Self::of(workspace, exe.as_deref(), cwd.as_deref())
    }

    fn of(workspace: Option<PathBuf>, exe: Option<&Path>, cwd: Option<&Path>) -> Self {
        Self {
            // Cargo keeps its fingerprints in the profile directory it builds into
            // (`target/debug/.fingerprint`, tests one level down in `deps/`), wherever that is:
            // `target/` in the clone or a `CARGO_TARGET_DIR` elsewhere. An installed copy
            // (`~/.cargo/bin`, a package) has none beside it.
            from_target: workspace.is_some()
                && exe
                    .is_some_and(|e| e.ancestors().skip(1).take(2).any(|d| d.join(".fingerprint").is_dir())),
            inside: workspace.as_ref().is_some_and(|w| cwd.is_some_and(|c| c.starts_with(w))),
            workspace,
        }
    }
}

/// Says that `askuser COMMAND` needs `feature`, and how to get it; exit status 2.
#[cfg(not(all(feature = "mcp", feature = "server")))]
pub(crate) fn report(command: &str, feature: &str, args: &[String]) -> std::process::ExitCode {
    eprintln!("{}", message(command, feature, args, &Origin::here()));
    std::process::ExitCode::from(2)
}

/// The message for `askuser COMMAND ARGS` run from `origin`.
pub(crate) fn message(command: &str, feature: &str, args: &[String], origin: &Origin) -> String {
    let shown = std::iter::once(command.to_owned())
        .chain(args.iter().map(|a| shell_word(a)))
        .collect::<Vec<_>>()
        .join(" ");
    let head = format!(
        "askuser: `askuser {command}` is not in this build of askuser: it was built without the \
         `{feature}` feature (as `--no-default-features` does, to keep the demo's build quick)."
    );
    let install = |lead: &str, root: &Path| {
        format!(
            "{lead} the askuser with every command, then run `askuser {shown}`:\n  \
             cargo install --locked --path {}",
            shell_word(&root.join("crates/askuser-cli").to_string_lossy())
        )
    };
    let how = match origin {
        Origin { workspace: Some(root), from_target: true, inside, .. } => {
            let manifest = if *inside {
                String::new()
            } else {
                format!(" --manifest-path {}", shell_word(&root.join("Cargo.toml").to_string_lossy()))
            };
            // Without `--no-default-features` the same `cargo run` builds every command.
            format!(
                "Run it with every command built (the first build takes a few minutes):\n  \
                 cargo run --quiet{manifest} --bin askuser -- {shown}\n{}",
                install("Or install", root)
            )
        }
        Origin { workspace: Some(root), .. } => install("Install", root),
        Origin { workspace: None, .. } => format!(
            "Install the askuser with every command, then run `askuser {shown}`:\n  \
             cargo install --locked askuser\n\
             (or without Rust: `uvx --from askuser-cli askuser {shown}`, `npx askuser {shown}`)"
        ),
    };
    format!("{head}\n{how}")
}

/// `word` as one shell word: as it is when nothing in it is special, else single-quoted.
fn shell_word(word: &str) -> String {
    let plain =
        !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c));
    if plain { word.to_owned() } else { format!("'{}'", word.replace('\'', r"'\''")) }
}

#[cfg(test)]
mod tests {
    use super::*;

    use askuser_testkit::args;

    #[test]
    fn from_cargo_run_inside_the_clone_it_gives_cargo_run() {
        let origin = Origin { workspace: Some("/src/askuser".into()), from_target: true, inside: true };
        let text = message("mcp", "mcp", &args(&["--fallback", "defaults"]), &origin);
        assert!(text.contains("built without the `mcp` feature"), "{text}");
        assert!(text.contains("\n  cargo run --quiet --bin askuser -- mcp --fallback defaults\n"), "{text}");
        assert!(
            text.ends_with(
                "Or install the askuser with every command, then run `askuser mcp --fallback defaults`:\n  \
                 cargo install --locked --path /src/askuser/crates/askuser-cli"
            ),
            "{text}"
        );
    }

    #[test]
    fn from_cargo_run_elsewhere_it_names_the_manifest() {
        let origin = Origin { workspace: Some("/src/my clone".into()), from_target: true, inside: false };
        let text = message("serve", "server", &[], &origin);
        assert!(
            text.contains(
                "\n  cargo run --quiet --manifest-path '/src/my clone/Cargo.toml' --bin askuser -- serve\n"
            ),
            "{text}"
        );
        assert!(text.ends_with("cargo install --locked --path '/src/my clone/crates/askuser-cli'"), "{text}");
    }

    #[test]
    fn installed_from_a_clone_it_gives_the_install_from_that_clone() {
        let origin = Origin { workspace: Some("/src/askuser".into()), from_target: false, inside: false };
        let text = message("pending", "server", &args(&["list", "it's"]), &origin);
        assert!(text.contains("then run `askuser pending list 'it'\\''s'`"), "{text}");
        assert!(
            text.ends_with("\n  cargo install --locked --path /src/askuser/crates/askuser-cli"),
            "{text}"
        );
    }

    #[test]
    fn without_sources_it_gives_the_published_install() {
        let origin = Origin { workspace: None, from_target: false, inside: false };
        let text = message("mcp", "mcp", &[], &origin);
        assert!(text.contains("\n  cargo install --locked askuser\n"), "{text}");
        assert!(text.contains("`npx askuser mcp`"), "{text}");
    }

    /// Wherever the build lands (`CARGO_TARGET_DIR` outside the clone, as a shared target directory
    /// puts it), a test binary runs from a Cargo build directory inside or outside the clone.
    #[test]
    fn a_build_directory_outside_the_clone_is_still_cargo_run() {
        let outside = std::env::temp_dir().join(format!("askuser-missing-{}", std::process::id()));
        std::fs::create_dir_all(outside.join("debug/.fingerprint")).unwrap();
        std::fs::create_dir_all(outside.join("installed")).unwrap();
        let clone = PathBuf::from("/src/askuser");
        let origin = Origin::of(Some(clone.clone()), Some(&outside.join("debug/askuser")), Some(&clone));
        assert!(origin.from_target && origin.inside, "{origin:?}");
        let origin = Origin::of(Some(clone.clone()), Some(&outside.join("debug/deps/it-0123")), None);
        assert!(origin.from_target && !origin.inside, "{origin:?}");
        let origin = Origin::of(Some(clone), Some(&outside.join("installed/askuser")), None);
        assert!(!origin.from_target, "{origin:?}");
        std::fs::remove_dir_all(&outside).unwrap();
    }

    #[test]
    fn this_build_knows_its_clone() {
        let origin = Origin::here();
        let root = origin.workspace.expect("tests run from the clone");
        assert!(root.join("crates/askuser-cli/Cargo.toml").is_file());
        assert!(origin.from_target && origin.inside);
    }
}
