//! `cargo xtask ci`: the checks CI runs, cheapest first, tests last so the run ends with their summary.

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

/// The README's first command (`cargo run --quiet --no-default-features --bin askuser -- demo`)
/// must stay quick to build: none of rmcp, axum, sqlx, reqwest in that build's graph (they come
/// with the `mcp` and `server` features). And `askuser mcp` reaches an answer server through
/// askuser-client alone: none of the server's axum, askama and sqlx in askuser-mcp-cli's graph.
fn demo_builds_without_heavy_crates() -> Result<(), String> {
    builds_without(
        &["-p", "askuser", "--no-default-features"],
        &["rmcp", "axum", "sqlx", "reqwest"],
        "`askuser demo`",
    )?;
    builds_without(&["-p", "askuser-mcp-cli"], &["axum", "askama", "sqlx"], "askuser-mcp-cli")
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
        if output.status.success() {
            return Err(format!(
                "{heavy} is on the build path of {what}:\n{}",
                String::from_utf8_lossy(&output.stdout)
            ));
        } else if !stderr.contains("did not match any packages") {
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
                (postgres::conformance, postgres::a_lost_listener_is_replaced, processes::postgres_processes, \
                race::postgres_races, model::postgres_follows_the_model) and askuser-server's fleet test \
                will skip; set it to a server's URL, e.g. postgres://root@127.0.0.1:5432/test";
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
    let what = "chromium and chromedriver are not on PATH, so askuser-server-cli's real-browser tests \
                (browser::*) will skip; install them (Debian: apt-get install chromium chromium-driver)";
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

/// Fails on placeholders that must never land: `todo!`, `unimplemented!`, ignored tests, bare `allow`s.
fn tidy() -> Result<(), String> {
    let forbidden = [
        concat!("todo", "!("),
        concat!("unimplemented", "!("),
        concat!("#[", "ignore"),
        concat!("#[", "allow("),
        concat!("#![", "allow("),
    ];
    let mut found = Vec::new();
    let mut stack = vec![root()];
    while let Some(dir) = stack.pop() {
        let entries = std::fs::read_dir(&dir).map_err(|e| format!("reading {}: {e}", dir.display()))?;
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            if path.is_dir() {
                if !matches!(name.to_str(), Some("target" | ".git")) {
                    stack.push(path);
                }
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text =
                    std::fs::read_to_string(&path).map_err(|e| format!("reading {}: {e}", path.display()))?;
                for (n, line) in text.lines().enumerate() {
                    if forbidden.iter().any(|f| line.contains(f)) {
                        found.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
                    }
                }
            }
        }
    }
    if found.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "tidy: placeholders or bare allows (use #[expect(lint, reason = \"...\")]):\n{}",
            found.join("\n")
        ))
    }
}
