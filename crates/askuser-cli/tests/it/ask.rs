//! `askuser ask` and `askuser demo` without a terminal: the line protocol, defaults, timeouts and
//! exit statuses.

use std::io::Write;
use std::process::{Command, Output, Stdio};

const ARGS: &str = r#"{"questions":[{"header":"Fix","question":"How should I fix it?","options":[
    {"label":"Patch"},{"label":"Refactor (Recommended)"}]}]}"#;

/// Runs `askuser` with `args`, writing `input` to its stdin and then closing it, unless `input`
/// is `None`, in which case stdin stays open (and unused) until the process exits.
fn askuser(args: &[&str], input: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_askuser"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env_remove("ACCESSIBLE")
        .env_remove("ASKUSER_ACCESSIBLE")
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    let keep_open = match input {
        Some(text) => {
            let mut stdin = stdin;
            stdin.write_all(text.as_bytes()).unwrap();
            None
        }
        None => Some(stdin),
    };
    let output = child.wait_with_output().unwrap();
    drop(keep_open);
    output
}

fn args_file() -> tempfile_free::Path {
    tempfile_free::write(ARGS)
}

/// A scratch file without a temp-file crate.
mod tempfile_free {
    pub(crate) struct Path(pub(crate) std::path::PathBuf);

    impl Drop for Path {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    pub(crate) fn write(text: &str) -> Path {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let name = format!("askuser-it-{}-{}.json", std::process::id(), NEXT.fetch_add(1, Ordering::SeqCst));
        let path = std::env::temp_dir().join(name);
        std::fs::write(&path, text).unwrap();
        Path(path)
    }
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).trim_end().to_owned()
}

#[track_caller]
fn check(output: &Output, code: i32, expected_stdout: &str) {
    assert_eq!(
        (output.status.code(), stdout(output).as_str()),
        (Some(code), expected_stdout),
        "stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn demo_answered_on_stdin_lines() {
    let output = askuser(&["demo"], Some("1\n2,4\n0 On our own hardware\n"));
    check(
        &output,
        0,
        r#"{"Language":["Rust (Recommended)"],"Features":["Subscriptions","Audit log"],"Deploy":["On our own hardware"]}"#,
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("[2/3] Features"), "the questions go to stderr");
}

#[test]
fn demo_at_end_of_input_declines() {
    check(&askuser(&["demo"], Some("")), 1, askuser_core::DECLINED);
}

#[test]
fn demo_unattended_gives_the_defaults() {
    check(
        &askuser(&["demo", "--unattended"], None),
        0,
        r#"{"answered_by":"unattended","answers":{"Language":["Rust (Recommended)"],"Features":["Invoices"],"Deploy":["Containers (Recommended)"]}}"#,
    );
}

#[test]
fn ask_from_a_file() {
    let file = args_file();
    let path = file.0.to_str().unwrap();
    check(
        &askuser(&["ask", path], Some("refactor (recommended)\n")),
        0,
        r#"{"Fix":["Refactor (Recommended)"]}"#,
    );
    check(&askuser(&["ask", path, "--accessible"], Some("1\n")), 0, r#"{"Fix":["Patch"]}"#);
}

#[test]
fn invalid_arguments_print_the_retry_payload() {
    let output = askuser(&["ask", "-"], Some(r#"{"questions":[]}"#));
    assert_eq!(output.status.code(), Some(2));
    let payload: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert!(payload.to_string().contains(r#""loc":["questions"]"#), "{payload}");
}

#[test]
fn timeout_declines_or_applies_defaults() {
    let file = args_file();
    let path = file.0.to_str().unwrap();
    check(&askuser(&["ask", path, "--timeout", "0.2"], None), 124, askuser_core::TIMED_OUT);
    check(
        &askuser(&["ask", path, "--timeout", "0.2", "--on-timeout", "defaults"], None),
        124,
        r#"{"answered_by":"timeout","answers":{"Fix":["Refactor (Recommended)"]}}"#,
    );
}

#[test]
fn bad_options_exit_2() {
    for args in
        [&["demo", "--timeout", "x"][..], &["demo", "--nope"], &["ask", "a", "b"], &["demo", "--on-timeout"]]
    {
        assert_eq!(askuser(args, Some("")).status.code(), Some(2), "{args:?}");
    }
}
