//! `askuser ask` on a real pseudo-terminal: signals while the menu is open; a secret typed there.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use askuser_testkit::Pty;

const ARGS: &str = r#"{"questions":[{"header":"Fix","question":"How should I fix it?","options":[
    {"label":"Patch"},{"label":"Refactor"}]}]}"#;

/// Guards the signal handling: SIGHUP, SIGINT and SIGTERM while the menu is open used to kill
/// `askuser` with the terminal left raw, echo off and bracketed paste on. Now the terminal is
/// restored and the status is 128 + the signal.
#[test]
fn signals_restore_the_terminal_and_exit_128_plus_the_signal() {
    let dir = std::env::temp_dir().join(format!("askuser-pty-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let args = dir.join("call.json");
    std::fs::write(&args, ARGS).unwrap();
    for (name, number) in [("HUP", 1), ("INT", 2), ("TERM", 15)] {
        let pty = Pty::open(80, 24);
        let text = || pty.text();
        // setsid does not fork here (the child is no group leader): its pid is askuser's.
        let mut child = Command::new("setsid")
            .args(["--ctty", env!("CARGO_BIN_EXE_askuser"), "ask"])
            .arg(&args)
            .stdin(pty.stdio())
            .stderr(pty.stdio())
            .stdout(Stdio::piped())
            .env_remove("ACCESSIBLE")
            .env_remove("ASKUSER_ACCESSIBLE")
            .env("TERM", "xterm-256color")
            .spawn()
            .unwrap();
        let start = Instant::now();
        while !text().contains("How should I fix it?") {
            assert!(start.elapsed() < Duration::from_secs(20), "SIG{name}: no menu; saw {:?}", text());
            std::thread::sleep(Duration::from_millis(10));
        }
        let cooked = || pty.cooked();
        assert!(!cooked(), "SIG{name}: raw mode while the menu is open");
        let sent =
            Command::new("kill").args([&format!("-{name}"), &child.id().to_string()]).status().unwrap();
        assert!(sent.success());
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if start.elapsed() > Duration::from_secs(20) {
                let _ = child.kill();
                panic!("SIG{name}: askuser did not end");
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        assert_eq!(status.code(), Some(128 + number), "SIG{name}: {}", text());
        assert!(cooked(), "SIG{name}: cooked mode and echo restored");
        let start = Instant::now();
        while !text().contains(&format!("ended by SIG{name}")) {
            assert!(start.elapsed() < Duration::from_secs(20), "SIG{name}: saw {:?}", text());
            std::thread::sleep(Duration::from_millis(10));
        }
        let output = text();
        let paste_off = output.rfind("\x1b[?2004l").expect("bracketed paste turned off");
        assert!(output.rfind("\x1b[?2004h").is_some_and(|on| on < paste_off), "SIG{name}: paste left on");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The value typed in the leak test: distinctive enough that any part of it would show.
const VALUE: &str = "sk-live-LEAKCANARY-93f1c0de";

const SECRET_CALL: &str = r#"{"questions":[{"kind":"secret","header":"Token","question":"Your deploy token?",
    "secret_name":"DEPLOY_TOKEN","purpose":"To push the release."}]}"#;

/// The leak test of `askuser ask` (docs/contract.md §10): a secret typed on a real terminal, in the menu and
/// on the accessible line protocol (read from `/dev/tty`, echo off); the arguments from a file
/// with stderr on the terminal, and from stdin with stderr piped apart (everything is then drawn
/// on `/dev/tty`). The value must reach the secret file, as `DEPLOY_TOKEN=value` in a file of
/// mode 0600, and appear nowhere else: not on stdout, not on stderr, not in any byte the
/// terminal received (its screen and scrollback).
#[test]
fn a_secret_typed_at_askuser_ask_reaches_only_the_secret_file() {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("askuser-leak-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let call = dir.join("call.json");
    std::fs::write(&call, SECRET_CALL).unwrap();
    for (how, stderr_on_tty) in [("menu", true), ("menu", false), ("lines", true), ("lines", false)] {
        let secrets = dir.join(format!("secrets-{how}-{stderr_on_tty}.env"));
        let _ = std::fs::remove_file(&secrets);
        let pty = Pty::open(80, 24);
        let text = || pty.text();
        let wait_for = |needle: &str| {
            let start = Instant::now();
            while !text().contains(needle) {
                assert!(
                    start.elapsed() < Duration::from_secs(20),
                    "{how}: waiting for {needle:?}; saw {:?}",
                    text()
                );
                std::thread::sleep(Duration::from_millis(10));
            }
        };
        let mut command = Command::new("setsid");
        if stderr_on_tty {
            command.args(["--ctty", env!("CARGO_BIN_EXE_askuser"), "ask"]).arg(&call);
        } else {
            // The pty becomes the controlling terminal (stdin), then stdin carries the arguments.
            command
                .args(["--ctty", "sh", "-c", "exec \"$0\" ask - \"$@\" <\"$ASKUSER_TEST_CALL\""])
                .arg(env!("CARGO_BIN_EXE_askuser"))
                .env("ASKUSER_TEST_CALL", &call);
        }
        command
            .args(["--profile", "extended", "--secret-file"])
            .arg(&secrets)
            .stdin(pty.stdio())
            .stdout(Stdio::piped())
            .env_remove("ACCESSIBLE")
            .env_remove("ASKUSER_ACCESSIBLE")
            .env("TERM", "xterm-256color");
        if how == "lines" {
            command.arg("--accessible");
        }
        command.stderr(if stderr_on_tty { pty.stdio() } else { Stdio::piped() });
        let child = command.spawn().unwrap();
        wait_for("Your deploy token?");
        // First a paste of several lines: refused whole, saying so, never taken cut or altered.
        if how == "lines" {
            wait_for("nothing is shown");
            pty.send(b"pasted-first\npasted-second\n");
            wait_for("the paste had several lines, so nothing was taken");
            wait_for("Try again: ");
            pty.send(format!("{VALUE}\n").as_bytes());
        } else {
            pty.send(b"\x1b[200~pasted-first\npasted-second\x1b[201~");
            wait_for("paste refused");
            pty.send(VALUE.as_bytes());
            wait_for("•••");
            pty.send(b"\r");
        }
        let output = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        assert_eq!(output.status.code(), Some(0), "{how}: {stderr} {}", text());
        assert_eq!(
            stdout.trim_end(),
            r#"{"status":"answered","answered_by":"user","answers":[{"id":"q1","header":"Token","selected":[],"other_text":null,"secret_ref":"session:DEPLOY_TOKEN"}]}"#
        );
        wait_for("as session:DEPLOY_TOKEN");
        std::thread::sleep(Duration::from_millis(100));
        for (what, bytes) in [("stdout", &stdout), ("stderr", &stderr), ("the terminal", &text())] {
            assert!(
                !bytes.contains("LEAKCANARY") && !bytes.contains("sk-live"),
                "{how}: the secret leaked into {what}: {bytes:?}"
            );
        }
        assert_eq!(std::fs::read_to_string(&secrets).unwrap(), format!("DEPLOY_TOKEN={VALUE}\n"));
        assert_eq!(std::fs::metadata(&secrets).unwrap().permissions().mode() & 0o777, 0o600);
        let cooked = pty.cooked();
        assert!(cooked, "{how}: echo restored");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `askuser mcp` started by hand at a terminal says what it is and how to add it to a host,
/// instead of waiting silently; its --help names `mcp install`.
#[cfg(feature = "mcp")]
#[test]
fn mcp_at_a_terminal_says_what_it_waits_for() {
    use std::io::Read as _;

    let pty = Pty::open(80, 24);
    let mut child = Command::new(env!("CARGO_BIN_EXE_askuser"))
        .arg("mcp")
        .stdin(pty.stdio())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let mut said = Vec::new();
    let start = Instant::now();
    let mut buf = [0; 1024];
    while !String::from_utf8_lossy(&said).contains("Ctrl-C stops it")
        && start.elapsed() < Duration::from_secs(20)
    {
        match stderr.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => said.extend_from_slice(&buf[..n]),
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let said = String::from_utf8_lossy(&said);
    assert!(said.contains("this is an MCP server: it speaks MCP on stdin and stdout"), "{said}");
    assert!(said.contains("askuser mcp install HOST"), "{said}");
    let help = Command::new(env!("CARGO_BIN_EXE_askuser")).args(["mcp", "--help"]).output().unwrap();
    assert!(String::from_utf8_lossy(&help.stdout).contains("askuser mcp install HOST"));
}
