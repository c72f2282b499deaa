//! `cargo xtask ci`: the checks CI runs, cheapest first, tests last so the run ends with their summary.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use crate::workspace_root as root;

fn cargo(args: &[&str], env: &[(&str, &str)]) -> Result<(), String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    eprintln!("xtask: cargo {}", args.join(" "));
    let status = Command::new(&cargo)
        .args(args)
        .envs(env.iter().copied())
        .current_dir(root())
        .status()
        .map_err(|e| format!("could not run {cargo}: {e}"))?;
    if status.success() { Ok(()) } else { Err(format!("`cargo {}` failed ({status})", args.join(" "))) }
}

pub(crate) fn run() -> Result<(), String> {
    cargo(&["fmt", "--all", "--check"], &[])?;
    tidy()?;
    crate::cycles::check(&root())?;
    demo_builds_without_heavy_crates()?;
    cargo(&["clippy", "--workspace", "--all-targets", "--locked", "--", "-D", "warnings"], &[])?;
    // The quick demo's build (`askuser` without its `mcp` and `server` features).
    cargo(
        &[
            "clippy",
            "-p",
            "askuser",
            "--no-default-features",
            "--all-targets",
            "--locked",
            "--",
            "-D",
            "warnings",
        ],
        &[],
    )?;
    // Optional features (`inquire`, `tracing`) and the plain build of askuser-tool, whose own tests
    // switch `tracing` on through a dev-dependency.
    cargo(
        &["clippy", "--workspace", "--all-targets", "--all-features", "--locked", "--", "-D", "warnings"],
        &[],
    )?;
    cargo(&["clippy", "-p", "askuser-tool", "--lib", "--locked", "--", "-D", "warnings"], &[])?;
    // The client alone (no `http`), over a store without a backend.
    cargo(
        &[
            "clippy",
            "-p",
            "askuser-client",
            "--no-default-features",
            "--lib",
            "--locked",
            "--",
            "-D",
            "warnings",
        ],
        &[],
    )?;
    cargo(&["doc", "--workspace", "--no-deps", "--locked"], &[("RUSTDOCFLAGS", "-D warnings")])?;
    eprintln!("xtask: schema --check");
    crate::schema::run(&["--check".to_owned()])?;
    postgres_notice()?;
    browser_notice()?;
    agent_cli_notice()?;
    cargo(&["test", "--workspace", "--locked"], &[])?;
    // The commands a build without them leaves out say how to get them (tests/it/{mcp,server}.rs).
    cargo(&["test", "-p", "askuser", "--no-default-features", "--locked"], &[])?;
    // The Python wheel, from the built artifact alone (reusing the test build's dev profile).
    crate::packages::run_all()
}

/// The README's first command (`cargo run --no-default-features --bin askuser -- demo`)
/// must stay quick to build: none of rmcp, axum, sqlx, reqwest in that build's graph (they come
/// with the `mcp` and `server` features). And `askuser mcp` reaches an answer server through
/// askuser-client alone: none of the server's axum and askama in a build with `mcp` only (its
/// sqlx is `--background`'s SQLite).
fn demo_builds_without_heavy_crates() -> Result<(), String> {
    builds_without(
        &["-p", "askuser", "--no-default-features"],
        &["rmcp", "axum", "sqlx", "reqwest"],
        "`askuser demo`",
    )?;
    builds_without(
        &["-p", "askuser", "--no-default-features", "--features", "mcp"],
        &["axum", "askama"],
        "`askuser mcp` without `server`",
    )
}

/// Fails when any of `heavy` is in the normal or build graph of the build `package_args` selects.
fn builds_without(package_args: &[&str], heavy: &[&str], what: &str) -> Result<(), String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    for heavy in heavy {
        eprintln!("xtask: cargo tree {} -i {heavy} (must find nothing)", package_args.join(" "));
        let output = Command::new(&cargo)
            .args(["tree", "--locked"])
            .args(package_args)
            .args(["-e", "normal,build", "-i", heavy])
            .current_dir(root())
            .output()
            .map_err(|e| format!("could not run {cargo}: {e}"))?;
        let stderr = String::from_utf8_lossy(&output.stderr);
        let stdout = String::from_utf8_lossy(&output.stdout);
        // The package's tests depend on every heavy crate (MCP clients, the answer server's
        // tests), so `-i` finds it in the dev graph and prints nothing of the normal and build
        // edges ("nothing to print", status 0); a crate in no graph at all does not match.
        if output.status.success() && !stdout.trim().is_empty() {
            return Err(format!("{heavy} is on the build path of {what}:\n{stdout}"));
        } else if !output.status.success() && !stderr.contains("did not match any packages") {
            return Err(format!("`cargo tree -i {heavy}` failed: {stderr}"));
        }
    }
    Ok(())
}

/// Says which tests will skip for want of PostgreSQL; under `CI=true` a missing server is an error.
fn postgres_notice() -> Result<(), String> {
    if std::env::var("ASKUSER_TEST_POSTGRES_URL").is_ok_and(|url| !url.is_empty()) {
        return Ok(());
    }
    let what = "ASKUSER_TEST_POSTGRES_URL is not set, so askuser-store's PostgreSQL tests \
                (postgres::conformance, postgres::a_lost_listener_is_replaced, race::postgres_races, \
                model::postgres_follows_the_model), askuser's (pending::postgres_processes and the \
                server's on PostgreSQL) and askuser-server's fleet test will skip; set it to a server's URL, e.g. postgres://root@127.0.0.1:5432/test";
    if std::env::var("CI").as_deref() == Ok("true") {
        return Err(format!("{what} (CI=true: CI must provide PostgreSQL)"));
    }
    eprintln!("xtask: SKIPPING: {what}");
    Ok(())
}

/// Says that the real-browser tests will skip for want of Chromium; under `CI=true` it is an error.
fn browser_notice() -> Result<(), String> {
    let on_path = |name: &str| {
        std::env::var_os("PATH")
            .is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join(name).is_file()))
    };
    let chromium = ["chromium", "chromium-browser", "google-chrome"].iter().any(|n| on_path(n));
    if chromium && on_path("chromedriver") {
        return Ok(());
    }
    let what = "chromium and chromedriver are not on PATH, so askuser's real-browser tests \
                (server::browser::*) will skip; install them (Debian: apt-get install chromium chromium-driver)";
    if std::env::var("CI").as_deref() == Ok("true") {
        return Err(format!("{what} (CI=true: CI must provide them)"));
    }
    eprintln!("xtask: SKIPPING: {what}");
    Ok(())
}

/// Says that the tests against the real Claude Code and Codex CLIs will skip for want of them or
/// of tmux; under `CI=true` it is an error (`.ci/run` installs both CLIs).
fn agent_cli_notice() -> Result<(), String> {
    let tests = root().join("crates/askuser-cli/tests");
    let claude = tests.join("claude-code/node_modules/@anthropic-ai/claude-code-linux-x64/claude");
    let codex =
        tests.join("codex/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex");
    let tmux = Command::new("tmux").arg("-V").output().is_ok_and(|o| o.status.success());
    if claude.is_file() && codex.is_file() && tmux {
        return Ok(());
    }
    let what = "Claude Code, Codex or tmux is missing, so askuser's tests against the real CLIs \
                (claude_code::*, codex::*) will skip; run `npm ci` in crates/askuser-cli/tests/claude-code \
                and crates/askuser-cli/tests/codex, and install tmux";
    if std::env::var("CI").as_deref() == Ok("true") {
        return Err(format!("{what} (CI=true: .ci/run installs the CLIs)"));
    }
    eprintln!("xtask: SKIPPING: {what}");
    Ok(())
}

/// Fails on placeholders that must never land (`todo!`, `unimplemented!`, ignored tests, bare
/// `allow`s), on a citation of the contract that does not resolve inside the repository (the old
/// file outside it, or a path above the clone), and on a `contract §N` that docs/contract.md has
/// no section for: every citation must be one a reader of a clone, or of docs.rs, can follow.
fn tidy() -> Result<(), String> {
    tidy_tree(&root())
}

/// [`tidy`] over the tree at `root`.
fn tidy_tree(root: &Path) -> Result<(), String> {
    let contract_path = root.join(CONTRACT);
    let contract = std::fs::read_to_string(&contract_path)
        .map_err(|e| format!("tidy: reading {}: {e}", contract_path.display()))?;
    let sections = contract_sections(&contract);
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = std::fs::read_dir(&dir).map_err(|e| format!("reading {}: {e}", dir.display()))?;
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            if path.is_dir() {
                if !matches!(name.to_str(), Some("target" | ".git" | "node_modules")) {
                    stack.push(path);
                }
                continue;
            }
            let Some(ext) = path.extension().and_then(|e| e.to_str()).filter(|e| SCANNED.contains(e)) else {
                continue;
            };
            let text =
                std::fs::read_to_string(&path).map_err(|e| format!("reading {}: {e}", path.display()))?;
            let whole_file = path == contract_path;
            for (n, line) in text.lines().enumerate() {
                for problem in line_problems(ext, line, &sections, whole_file) {
                    found.push(format!("{}:{}: {problem}: {}", path.display(), n + 1, line.trim()));
                }
            }
        }
    }
    if found.is_empty() {
        Ok(())
    } else {
        found.sort();
        Err(format!("tidy:\n{}", found.join("\n")))
    }
}

/// The contract, from the workspace root.
const CONTRACT: &str = "docs/contract.md";

/// The kinds of file tidy reads: the code, and every text that may cite the contract.
const SCANNED: &[&str] = &["rs", "md", "toml", "py", "sh", "yml", "yaml", "txt"];

/// What is wrong with one line of a file whose extension is `ext`. `whole_line` checks every
/// section number on the line, as in the contract itself, whose own cross-references carry no
/// `contract` before them.
fn line_problems(ext: &str, line: &str, sections: &BTreeSet<String>, whole_line: bool) -> Vec<String> {
    let placeholders = [
        concat!("todo", "!("),
        concat!("unimplemented", "!("),
        concat!("#[", "ignore"),
        concat!("#[", "allow("),
        concat!("#![", "allow("),
    ];
    // Built from pieces, so that this file does not hold what it looks for.
    let outside = [concat!("SP", "EC §"), concat!("../", "shared/"), concat!("SP", "EC.md")];
    let mut problems = Vec::new();
    if ext == "rs" && placeholders.iter().any(|p| line.contains(p)) {
        problems.push("a placeholder or a bare allow (use #[expect(lint, reason = \"...\")])".to_owned());
    }
    if outside.iter().any(|p| line.contains(p)) {
        problems.push(format!("a citation outside the repository (cite {CONTRACT} as `contract §N`)"));
    }
    // `contract §6 and §10`, `docs/contract.md §2–§3`: every number on a line that cites the
    // contract is one of its sections.
    if whole_line || line.contains("contract §") || line.contains("contract.md §") {
        for section in section_numbers(line).filter(|s| !sections.contains(*s)) {
            problems.push(format!("§{section} is no section of {CONTRACT}"));
        }
    }
    problems
}

/// The section numbers the contract defines: its headings `## §3. …`, `### §3.1 …`.
fn contract_sections(contract: &str) -> BTreeSet<String> {
    contract
        .lines()
        .filter(|line| line.starts_with('#'))
        .filter_map(|line| line.trim_start_matches('#').trim_start().strip_prefix('§'))
        .filter_map(leading_number)
        .map(str::to_owned)
        .collect()
}

/// The section numbers `text` names: each `§` followed by a number such as `3` or `3.1`.
fn section_numbers(text: &str) -> impl Iterator<Item = &str> {
    text.split('§').skip(1).filter_map(leading_number)
}

/// The number `text` starts with, such as `3` or `3.1` (a dot that ends a sentence is not part of
/// it), if any.
fn leading_number(text: &str) -> Option<&str> {
    let bytes = text.as_bytes();
    let mut end = 0;
    while end < bytes.len()
        && (bytes[end].is_ascii_digit()
            || (bytes[end] == b'.' && end > 0 && bytes.get(end + 1).is_some_and(u8::is_ascii_digit)))
    {
        end += 1;
    }
    (end > 0).then(|| &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sections() -> BTreeSet<String> {
        contract_sections("# The contract\n## §2. The call\n### §2.1 Strings\n## §10. More\ntext §11\n")
    }

    #[track_caller]
    fn check(ext: &str, line: &str, expected: &[&str]) {
        let problems = line_problems(ext, line, &sections(), false);
        assert_eq!(problems.len(), expected.len(), "{line:?}: {problems:?}");
        for (problem, expected) in problems.iter().zip(expected) {
            assert!(problem.contains(expected), "{line:?}: {problem:?} should say {expected:?}");
        }
    }

    #[test]
    fn the_contract_sections_are_its_headings() {
        let expected: BTreeSet<String> = ["2", "2.1", "10"].into_iter().map(str::to_owned).collect();
        assert_eq!(sections(), expected);
    }

    #[test]
    fn a_citation_outside_the_repository_is_refused_in_every_kind_of_file() {
        // Built from pieces, so that this file does not hold what tidy looks for.
        let old = concat!("SP", "EC §2.1");
        let above = concat!("`../", "shared/oracle`");
        for ext in ["rs", "md", "toml", "py"] {
            check(ext, &format!("//! The rules of {old}."), &["outside the repository"]);
            check(ext, &format!("a copy of {above}"), &["outside the repository"]);
        }
        check("md", concat!("The contract is `../", "shared/SP", "EC.md`."), &["outside the repository"]);
        check("md", "the TypeScript SDK's `src/shared/protocol.ts`", &[]);
        check("md", "Specifications: see the spec", &[]);
    }

    #[test]
    fn a_contract_citation_names_a_section_the_contract_has() {
        check("rs", "//! The per-string rules of contract §2.1 and the fold of §10.", &[]);
        check("md", "the extended profile ([contract §10](docs/contract.md)).", &[]);
        check("rs", "/// docs/contract.md §2, then §2.1 step 3.", &[]);
        check("rs", concat!("/// contract §2.", "4: the lax coercion"), &["2.4 is no section"]);
        check("md", concat!("(contract §10, §", "13)"), &["13 is no section"]);
        check("toml", concat!("# docs/contract.md §", "99"), &["99 is no section"]);
        // A line that does not cite the contract is not read for numbers (an RFC's § is no concern).
        check("md", "RFC 9110 §15.5", &[]);
        // In the contract itself every number is read.
        assert_eq!(line_problems("md", "as in §2.1 and §3", &sections(), true).len(), 1);
    }

    #[test]
    fn placeholders_are_refused_in_code_only() {
        let placeholder = concat!("    ", "todo", "!()");
        check("rs", placeholder, &["placeholder"]);
        check("md", placeholder, &[]);
    }

    #[test]
    fn a_number_ends_before_a_full_stop() {
        let numbers: Vec<&str> = section_numbers("§3. §3.1 step 2.2, §10.").collect();
        assert_eq!(numbers, ["3", "3.1", "10"]);
    }

    #[test]
    fn a_tree_with_a_stale_citation_fails_naming_the_file_and_line() {
        let tree = std::env::temp_dir().join(format!("askuser-tidy-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tree);
        std::fs::create_dir_all(tree.join("docs")).unwrap();
        std::fs::create_dir_all(tree.join("crates/a/src")).unwrap();
        std::fs::create_dir_all(tree.join("target/doc")).unwrap();
        std::fs::write(tree.join(CONTRACT), "# The contract\n## §1. What\n### §1.1 How\n").unwrap();
        std::fs::write(tree.join("crates/a/src/lib.rs"), "//! See docs/contract.md §1.\n").unwrap();
        std::fs::write(tree.join("Cargo.toml"), "[workspace]\n").unwrap();
        // Built output is not read.
        std::fs::write(tree.join("target/doc/old.md"), concat!("SP", "EC §1\n")).unwrap();
        tidy_tree(&tree).unwrap();

        std::fs::write(
            tree.join("crates/a/src/lib.rs"),
            concat!("//! See docs/contract.md §1.\n//! And contract §1.", "2.\n"),
        )
        .unwrap();
        std::fs::write(tree.join("Cargo.toml"), concat!("# the rules of SP", "EC §1\n[workspace]\n"))
            .unwrap();
        let error = tidy_tree(&tree).unwrap_err();
        std::fs::remove_dir_all(&tree).unwrap();
        let lines: Vec<&str> = error.lines().skip(1).collect();
        assert_eq!(lines.len(), 2, "{error}");
        assert!(lines[0].contains("Cargo.toml:1: a citation outside the repository"), "{error}");
        assert!(lines[1].contains("lib.rs:2: §1.2 is no section of docs/contract.md"), "{error}");
    }

    /// Guards the tree itself: what `cargo xtask ci` runs, so that `cargo test` finds a citation
    /// that does not resolve as well.
    #[test]
    fn the_tree_is_tidy() {
        tidy().unwrap();
    }
}
