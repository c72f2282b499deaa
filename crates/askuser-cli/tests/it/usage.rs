//! Every command reads its command line the same way (the binary's `cli` module): `--help` prints
//! the usage on stdout with status 0; a usage error is one line naming what is wrong and one saying
//! how to get the usage, never the whole help, with status 2.

use std::process::{Command, Output, Stdio};

fn askuser(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_askuser")).args(args).stdin(Stdio::null()).output().expect("run askuser")
}

#[test]
fn every_usage_error_is_one_line_and_how_to_get_help() {
    let mut cases = vec![
        (&["frobnicate"][..], "askuser: unknown command \"frobnicate\"", "askuser"),
        (&["ask", "--frobnicate"], "askuser ask: unknown option \"--frobnicate\"", "askuser ask"),
        (&["ask", "--timeout", "1e300"], "askuser ask: --timeout must be a duration above 0", "askuser ask"),
        (&["demo", "extra"], "askuser demo: unexpected argument \"extra\"", "askuser demo"),
        (&["check", "--profile"], "askuser check: --profile needs reference or extended", "askuser check"),
        (
            &["schema", "--dialect", "openai"],
            "askuser schema: unknown schema dialect \"openai\"",
            "askuser schema",
        ),
    ];
    if cfg!(feature = "mcp") {
        cases.push((
            &["mcp", "--timeout", "0"],
            "askuser mcp: --timeout must be a duration above 0",
            "askuser mcp",
        ));
    }
    if cfg!(feature = "server") {
        cases.extend([
            (
                &["serve", "--bind", "nowhere"][..],
                "askuser serve: --bind: not an address (IP:PORT or HOST:PORT",
                "askuser serve",
            ),
            (
                &["ask", "--server", "ftp://x"],
                "askuser: --server must start with http:// or https://",
                "askuser",
            ),
            (
                &["pending", "--store", "memory:", "frob"],
                "askuser pending: unknown command \"frob\"",
                "askuser pending",
            ),
            (
                &["pending", "--store", "memory:", "put", "--timeout", "1e300"],
                "askuser pending: --timeout must be",
                "askuser pending",
            ),
        ]);
    }
    for (args, first, command) in cases {
        let output = askuser(args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(lines.len(), 2, "{args:?}: one line and the pointer to --help, got {stderr}");
        assert!(lines[0].starts_with(first), "{args:?}: {:?} does not start with {first:?}", lines[0]);
        assert_eq!(lines[1], format!("Run '{command} --help' for the options."), "{args:?}");
        assert!(output.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn every_command_has_help_with_status_zero() {
    let mut commands = vec![
        vec!["--help"],
        vec!["ask", "--help"],
        vec!["demo", "-h"],
        vec!["check", "--help"],
        vec!["schema", "--help"],
    ];
    if cfg!(feature = "mcp") {
        commands.extend([vec!["mcp", "--help"], vec!["mcp", "install", "--help"]]);
    }
    if cfg!(feature = "server") {
        commands.extend([
            vec!["serve", "--help"],
            vec!["ask", "--server", "http://127.0.0.1:1", "--help"],
            vec!["pending", "--help"],
        ]);
    }
    for args in commands {
        let output = askuser(&args);
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert_eq!(output.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&output.stderr));
        assert!(stdout.starts_with("usage: askuser"), "{args:?}: {stdout}");
    }
}

/// `askuser ask --help` shows the options of asking through an answer server too, which live
/// behind `--server` (they were hidden).
#[test]
fn ask_help_names_the_server_options() {
    let stdout = String::from_utf8(askuser(&["ask", "--help"]).stdout).unwrap();
    for flag in ["--server URL", "--token-file PATH", "--session ID", "--label TEXT"] {
        assert!(stdout.contains(flag), "{flag} missing from askuser ask --help:\n{stdout}");
    }
}

/// A file of arguments that is not there is named; a duration takes a unit.
#[test]
fn a_missing_arguments_file_is_named_and_durations_take_units() {
    let output = askuser(&["ask", "no-such-call.json"]);
    assert_eq!(output.status.code(), Some(2));
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(said.contains("cannot read the arguments: no-such-call.json: No such file"), "{said}");
    let output = askuser(&["ask", "--timeout", "5m", "no-such-call.json"]);
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(!said.contains("--timeout"), "5m is a duration: {said}");
}
