//! `cargo xtask packages`: the Python wheel tested from the built artifact only. Builds the wheel
//! once with maturin (the `dev` profile, so it reuses the test build instead of a release build
//! with `lto = "fat"`), installs it into a fresh virtual environment with no package index, and
//! runs `askuser --version`, `askuser demo` answered by piped input, and one MCP round trip with
//! the official Python SDK as the client, both against the venv's `askuser mcp` and through
//! `uv tool run --offline --from WHEEL askuser mcp` (what `uvx` runs).
//!
//! Then the npm packages (`cargo xtask npm`) from the same binary, tested the same way in an
//! empty folder with no registry access, the TypeScript SDK as the MCP client.
//!
//! The tools (maturin, uv, the `mcp` SDK) come from the Python at `ASKUSER_CI_PYTHON` (default
//! `target/ci-python/bin/python`, which `.ci/run` makes).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::workspace_root as root;

fn run(program: &Path, args: &[&str], stdin: Option<&str>) -> Result<String, String> {
    let shown = format!("{} {}", program.display(), args.join(" "));
    eprintln!("xtask: {shown}");
    let mut child = Command::new(program)
        .args(args)
        .current_dir(root())
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("could not run {shown}: {e}"))?;
    if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
        std::io::Write::write_all(&mut pipe, text.as_bytes()).map_err(|e| format!("{shown}: stdin: {e}"))?;
    }
    let output = child.wait_with_output().map_err(|e| format!("{shown}: {e}"))?;
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    if output.status.success() {
        Ok(stdout)
    } else {
        Err(format!("`{shown}` failed ({}): {stdout}", output.status))
    }
}

fn expect(what: &str, got: &str, wanted: &str) -> Result<(), String> {
    if got.trim_end() == wanted { Ok(()) } else { Err(format!("{what}: expected {wanted:?}, got {got:?}")) }
}

pub(crate) fn run_all() -> Result<(), String> {
    let python = std::env::var_os("ASKUSER_CI_PYTHON")
        .map_or_else(|| root().join("target/ci-python/bin/python"), PathBuf::from);
    if !python.is_file() {
        let what = format!(
            "{} is missing, so the wheel is not tested; make it with `python3 -m venv target/ci-python && \
             target/ci-python/bin/pip install maturin uv mcp` (as .ci/run does)",
            python.display()
        );
        if std::env::var("CI").as_deref() == Ok("true") {
            return Err(format!("{what} (CI=true: CI must test the wheel)"));
        }
        eprintln!("xtask: SKIPPING: {what}");
        return Ok(());
    }
    let tools = python.parent().ok_or("ASKUSER_CI_PYTHON has no directory")?;
    let wheels = crate::target_dir()?.join("wheels");
    let _ = std::fs::remove_dir_all(&wheels);
    run(
        &tools.join("maturin"),
        &[
            "build",
            "--profile",
            "dev",
            "--locked",
            "-m",
            "crates/askuser-cli/Cargo.toml",
            "--out",
            &wheels.to_string_lossy(),
        ],
        None,
    )?;
    let wheel = std::fs::read_dir(&wheels)
        .map_err(|e| format!("{}: {e}", wheels.display()))?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "whl"))
        .ok_or("maturin made no wheel")?;
    let wheel_text = wheel.to_string_lossy().into_owned();

    // A fresh virtual environment, the wheel installed with no index: nothing but the artifact.
    let venv = std::env::temp_dir().join(format!("askuser-wheel-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&venv);
    run(Path::new("python3"), &["-m", "venv", &venv.to_string_lossy()], None)?;
    let bin = venv.join(if cfg!(windows) { "Scripts" } else { "bin" });
    run(&bin.join("pip"), &["install", "--quiet", "--no-index", &wheel_text], None)?;
    let askuser = bin.join("askuser");
    let version = run(&askuser, &["--version"], None)?;
    if !version.starts_with("askuser ") || version.contains("without") {
        return Err(format!("askuser --version from the wheel: {version:?}"));
    }
    let demo = run(&askuser, &["demo"], Some("2\n1,4\n3\n"))?;
    expect(
        "askuser demo from the wheel",
        &demo,
        r#"{"Language":["Go"],"Features":["Invoices","Audit log"],"Deploy":["Serverless"]}"#,
    )?;
    let client = root().join("crates/askuser-cli/tests/python/client.py");
    let client = client.to_string_lossy();
    let answer = r#"{"Plan":["Small"],"Extras":["Backups"]}"#;
    let direct = run(&python, &[&client, &askuser.to_string_lossy(), "mcp"], None)?;
    expect("the Python SDK's round trip with the wheel's askuser mcp", &direct, answer)?;
    let cache = venv.join("uv-cache");
    let uv = tools.join("uv");
    let through_uvx = run(
        &python,
        &[
            &client,
            &uv.to_string_lossy(),
            "tool",
            "run",
            "--offline",
            "--cache-dir",
            &cache.to_string_lossy(),
            "--from",
            &wheel_text,
            "askuser",
            "mcp",
        ],
        None,
    )?;
    expect("the Python SDK's round trip through uvx --from WHEEL askuser mcp", &through_uvx, answer)?;
    std::fs::remove_dir_all(&venv).map_err(|e| format!("removing {}: {e}", venv.display()))?;
    eprintln!("xtask: the wheel {} installs and runs", wheel.display());
    npm(&crate::target_dir()?.join("debug/askuser"))
}

/// The npm packages from the binary maturin just built: packed, installed into an empty folder
/// with no registry access, then `npx askuser --version`, `demo` on piped input, and one MCP
/// round trip through the launcher with the official TypeScript SDK as the client
/// (`crates/askuser-cli/tests/node/client.mjs`).
fn npm(binary: &Path) -> Result<(), String> {
    let sdk = root().join("crates/askuser-cli/tests/node");
    if !sdk.join("node_modules/@modelcontextprotocol/sdk").is_dir() {
        let what = "crates/askuser-cli/tests/node/node_modules is missing (npm ci there), so the npm packages are not tested";
        if std::env::var("CI").as_deref() == Ok("true") {
            return Err(format!("{what} (CI=true: .ci/run installs it)"));
        }
        eprintln!("xtask: SKIPPING: {what}");
        return Ok(());
    }
    let out = root().join("target/npm");
    let [platform, launcher] =
        crate::npm::pack(binary, &crate::dist::host_target()?, &crate::dist::version()?, &out)?;
    let folder = std::env::temp_dir().join(format!("askuser-npm-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&folder);
    std::fs::create_dir_all(&folder).map_err(|e| format!("{}: {e}", folder.display()))?;
    let in_folder = |program: &str, args: &[&str], stdin: Option<&str>, env: Option<(&str, &str)>| {
        let mut command = Command::new(program);
        command.args(args).current_dir(&folder).stderr(Stdio::inherit()).stdout(Stdio::piped());
        command.stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() });
        if let Some((key, value)) = env {
            command.env(key, value);
        }
        eprintln!("xtask: (in {}) {program} {}", folder.display(), args.join(" "));
        let mut child = command.spawn().map_err(|e| format!("could not run {program}: {e}"))?;
        if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
            std::io::Write::write_all(&mut pipe, text.as_bytes()).map_err(|e| format!("{program}: {e}"))?;
        }
        let output = child.wait_with_output().map_err(|e| format!("{program}: {e}"))?;
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        if output.status.success() {
            Ok(stdout)
        } else {
            Err(format!("`{program} {}` failed: {stdout}", args.join(" ")))
        }
    };
    let (platform, launcher) = (platform.to_string_lossy(), launcher.to_string_lossy());
    in_folder(
        "npm",
        &["install", "--offline", "--no-audit", "--no-fund", "--no-package-lock", &platform, &launcher],
        None,
        None,
    )?;
    let version = in_folder("npx", &["--offline", "askuser", "--version"], None, None)?;
    if !version.starts_with("askuser ") || version.contains("without") {
        return Err(format!("npx askuser --version: {version:?}"));
    }
    let demo = in_folder("npx", &["--offline", "askuser", "demo"], Some("2\n1,4\n3\n"), None)?;
    expect(
        "npx askuser demo",
        &demo,
        r#"{"Language":["Go"],"Features":["Invoices","Audit log"],"Deploy":["Serverless"]}"#,
    )?;
    let launcher_bin = folder.join("node_modules/.bin/askuser");
    let arguments = r#"{"questions":[{"header":"Plan","question":"Which plan?","options":[{"label":"Small"},{"label":"Large"}]},{"header":"Extras","question":"Which extras?","multi_select":true,"options":[{"label":"Backups"},{"label":"Support"}]}]}"#;
    let round_trip = in_folder(
        "node",
        &[&sdk.join("client.mjs").to_string_lossy(), "pick", &launcher_bin.to_string_lossy(), "mcp"],
        None,
        Some(("ASKUSER_ARGS", arguments)),
    )?;
    let wanted = r#""text":"{\"Plan\":[\"Large\"],\"Extras\":[\"Backups\",\"Support\"]}""#;
    if !round_trip.contains(wanted) {
        return Err(format!("the TypeScript SDK's round trip through the npm launcher: {round_trip}"));
    }
    std::fs::remove_dir_all(&folder).map_err(|e| format!("removing {}: {e}", folder.display()))?;
    let _ = std::fs::remove_dir_all(&out);
    eprintln!("xtask: the npm packages install and run");
    Ok(())
}
