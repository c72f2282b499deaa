//! `askuser ask` and `askuser demo` without a terminal: the line protocol, defaults, timeouts and
//! exit statuses.

use std::io::Write;
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

const ARGS: &str = r#"{"questions":[{"header":"Fix","question":"How should I fix it?","options":[
    {"label":"Patch"},{"label":"Refactor (Recommended)"}]}]}"#;

/// Runs `askuser` with `args`, writing `input` to its stdin and then closing it, unless `input`
/// is `None`, in which case stdin stays open (and unused) until the process exits.
fn askuser(args: &[&str], input: Option<&str>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_askuser"));
    command.args(args).stdout(Stdio::piped());
    run(&mut command, input.map(str::as_bytes))
}

/// Runs `command` as `askuser` above (stdout is the caller's to set); kills it, and fails, when
/// it takes over 20 seconds.
fn run(command: &mut Command, input: Option<&[u8]>) -> Output {
    let mut child = command
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .env_remove("ACCESSIBLE")
        .env_remove("ASKUSER_ACCESSIBLE")
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    let pid = child.id().to_string();
    let done = Arc::new(AtomicBool::new(false));
    let watchdog = {
        let done = Arc::clone(&done);
        std::thread::spawn(move || {
            let start = Instant::now();
            while !done.load(Ordering::SeqCst) {
                if start.elapsed() > Duration::from_secs(20) {
                    let _ = Command::new("kill").args(["-KILL", &pid]).status();
                    return true;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            false
        })
    };
    // Written from a thread: a big input must not block the test while askuser is not reading.
    let (writer, keep_open) = match input {
        Some(bytes) => {
            let bytes = bytes.to_vec();
            let mut stdin = stdin;
            (Some(std::thread::spawn(move || drop(stdin.write_all(&bytes)))), None)
        }
        None => (None, Some(stdin)),
    };
    let output = child.wait_with_output().unwrap();
    done.store(true, Ordering::SeqCst);
    assert!(!watchdog.join().unwrap(), "askuser hung: {}", String::from_utf8_lossy(&output.stderr));
    drop((writer, keep_open));
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
fn demo_declined_on_stdin_lines() {
    check(&askuser(&["demo"], Some("1\n!decline\n")), 1, askuser_core::DECLINED);
    check(&askuser(&["demo"], Some("1\n")), 1, askuser_core::DECLINED);
}

/// Guards "1 means declined and only that": input that ends before any answer asked nobody.
#[test]
fn demo_at_end_of_input_could_not_ask() {
    let output = askuser(&["demo"], Some(""));
    check(&output, 3, "");
    assert!(String::from_utf8_lossy(&output.stderr).contains("nobody could be asked"));
}

/// Guards `ask -` without a terminal: the arguments use up stdin, so nobody can answer. It used
/// to tell the model "the user declined".
#[test]
fn ask_from_stdin_without_a_terminal_could_not_ask() {
    // `setsid` leaves the controlling terminal behind, so `/dev/tty` cannot be opened.
    let output = run(
        Command::new("setsid").args([env!("CARGO_BIN_EXE_askuser"), "ask", "-"]).stdout(Stdio::piped()),
        Some(ARGS.as_bytes()),
    );
    check(&output, 3, "");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("stdin carried the arguments and there is no terminal"), "{stderr}");
    // Invalid arguments are still the model's to fix.
    let output = run(
        Command::new("setsid").args([env!("CARGO_BIN_EXE_askuser"), "ask", "-"]).stdout(Stdio::piped()),
        Some(b"{}"),
    );
    assert_eq!(output.status.code(), Some(2));
}

/// Guards the memory bound on an answer line: 256 MiB without a newline, under a 200 MB address
/// space limit, is skipped as a bad line and the next line answers. Read whole, it aborted.
#[test]
fn an_endless_answer_line_is_skipped_in_bounded_memory() {
    let file = args_file();
    let mut input = vec![b'x'; 256 << 20];
    input.extend_from_slice(b"\n1\n");
    let output = run(
        Command::new("sh")
            .args(["-c", "ulimit -v 200000 && exec \"$0\" \"$@\"", env!("CARGO_BIN_EXE_askuser"), "ask"])
            .arg(&file.0)
            .stdout(Stdio::piped()),
        Some(&input),
    );
    check(&output, 0, r#"{"Fix":["Patch"]}"#);
    assert!(String::from_utf8_lossy(&output.stderr).contains("the line is longer than 65536 bytes"));
}

/// Guards the cap on reading the arguments: an endless file is refused after 1 MiB and a byte,
/// under a 200 MB address space limit. It used to be read whole (and `/dev/zero` never ends).
#[test]
fn arguments_are_read_up_to_the_cap() {
    let output = run(
        Command::new("sh")
            .args([
                "-c",
                "ulimit -v 200000 && exec \"$0\" \"$@\"",
                env!("CARGO_BIN_EXE_askuser"),
                "ask",
                "/dev/zero",
            ])
            .stdout(Stdio::piped()),
        Some(b""),
    );
    check(&output, 2, "");
    assert!(String::from_utf8_lossy(&output.stderr).contains("more than 1048576 bytes"));
    let output = askuser(&["ask", "-"], Some("{\"questions\": \"\u{ff}\u{fe}"));
    assert_eq!(output.status.code(), Some(2));
}

/// Guards `--timeout` bounding the wait for the arguments: stdin stays open and silent.
#[test]
fn timeout_bounds_the_wait_for_the_arguments() {
    let output = askuser(&["ask", "-", "--timeout", "0.3"], None);
    check(&output, 124, "");
    assert!(String::from_utf8_lossy(&output.stderr).contains("no arguments arrived within the timeout"));
}

/// Guards write failures: a full disk on stdout is reported with status 4; it used to panic (101).
#[test]
fn a_failed_write_to_stdout_is_reported_without_a_panic() {
    let file = args_file();
    for args in [
        &["schema"][..],
        &["demo", "--unattended"],
        &["ask", file.0.to_str().unwrap(), "--unattended"],
        &["--help"],
    ] {
        let output = run(
            Command::new(env!("CARGO_BIN_EXE_askuser"))
                .args(args)
                .stdout(std::fs::File::create("/dev/full").unwrap()),
            Some(b""),
        );
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(4), "{args:?}: {stderr}");
        assert!(
            stderr.contains("cannot write the result to stdout") && !stderr.contains("panicked"),
            "{stderr}"
        );
    }
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

const EXTENDED: &str = r#"{"questions":[
    {"id":"db","header":"Db","question":"Which?","allow_other":false,"options":[{"label":"a"},{"label":"b","default":true}]},
    {"kind":"text","header":"Name","question":"Called?"}]}"#;

const SECRET: &str = r#"{"questions":[{"kind":"secret","header":"Token","question":"Token?",
    "secret_name":"API_TOKEN","purpose":"To deploy."}]}"#;

use askuser_testkit::TempDir;

/// Writes `text` to `name` in `dir`; its path.
fn file(dir: &TempDir, name: &str, text: &str) -> String {
    let path = dir.0.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

#[cfg(unix)]
/// Runs `askuser` in a session of its own without a controlling terminal (`setsid`), as CI does:
/// a secret then has no terminal to be typed on, whatever terminal runs the tests.
fn askuser_detached(args: &[&str], input: Option<&str>) -> Output {
    let mut command = Command::new("setsid");
    command.arg(env!("CARGO_BIN_EXE_askuser")).args(args).stdout(Stdio::piped());
    run(&mut command, input.map(str::as_bytes))
}

/// Guards `ask --profile extended` on the line protocol: an empty line takes the declared default,
/// a text question reads its line, and the result is the extended one, with ids.
#[test]
fn ask_with_the_extended_profile() {
    let dir = TempDir::new("extended");
    let path = file(&dir, "call.json", EXTENDED);
    check(
        &askuser(&["ask", &path, "--profile", "extended"], Some("\nbilling api\n")),
        0,
        r#"{"status":"answered","answered_by":"user","answers":[{"id":"db","header":"Db","selected":["b"],"other_text":null},{"id":"q1","header":"Name","selected":[],"other_text":"billing api"}]}"#,
    );
    // The reference profile refuses the same call, and says so.
    assert_eq!(askuser(&["ask", &path], Some("")).status.code(), Some(2));
    // --profile=extended is accepted too; a batch with a text question has no unattended value.
    check(
        &askuser(&["ask", &path, "--profile=extended", "--unattended"], None),
        1,
        r#"{"status":"declined","answered_by":"unattended","answers":[]}"#,
    );
}

/// Guards docs/contract.md §10's rule for `askuser ask`: without `--secret-file` a secret question is
/// declined, with a message on stderr, before anything is read; with it but no terminal, it is
/// declined too (a secret is never read from piped stdin), and the piped line goes nowhere.
#[cfg(unix)]
#[test]
fn a_secret_without_a_secret_file_or_a_terminal_is_declined() {
    let dir = TempDir::new("secret");
    let path = file(&dir, "call.json", SECRET);
    // Nobody was asked in either case: `unattended`, as over MCP, never `user`.
    let declined = r#"{"status":"declined","answered_by":"unattended","answers":[]}"#;
    let output = askuser_detached(&["ask", &path, "--profile", "extended"], Some("piped-LEAKCANARY\n"));
    check(&output, 1, declined);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("asked for the secret API_TOKEN") && stderr.contains("--secret-file"),
        "{stderr}"
    );

    let secrets = dir.0.join("secrets.env");
    let file = secrets.to_str().unwrap();
    let output = askuser_detached(
        &["ask", &path, "--profile", "extended", "--secret-file", file],
        Some("piped-LEAKCANARY\n"),
    );
    check(&output, 1, declined);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("no terminal to type a secret on"), "{stderr}");
    assert!(!stderr.contains("LEAKCANARY"));
    assert!(!secrets.exists(), "nothing was collected, nothing written");
}

/// Guards `--secret-file`'s checks, made before anything is asked: an existing file others can
/// read is refused (status 2) and left alone; the flag needs the extended profile; demo takes
/// neither flag.
#[cfg(unix)]
#[test]
fn a_secret_file_others_can_read_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = TempDir::new("secret-mode");
    let path = file(&dir, "call.json", SECRET);
    let file = file(&dir, "secrets.env", "OTHER=1\n");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let output = askuser_detached(&["ask", &path, "--profile", "extended", "--secret-file", &file], None);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("its mode is 0644") && stderr.contains("chmod 600"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "OTHER=1\n");
    for args in [
        &["ask", &path, "--secret-file", &file][..],
        &["demo", "--profile", "extended"],
        &["demo", "--secret-file", &file],
        &["ask", &path, "--profile", "maybe"],
    ] {
        assert_eq!(askuser(args, Some("")).status.code(), Some(2), "{args:?}");
    }
}

/// `examples/calls/NAME`, the sample calls the README's commands use.
fn sample(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/calls").join(name);
    assert!(path.is_file(), "{} is missing", path.display());
    path.to_str().unwrap().to_owned()
}

/// Guards the sample calls of `examples/calls` (README, docs): each is valid in its profile and
/// answers as the README says, so `askuser ask examples/calls/…` works as written.
#[cfg(unix)]
#[test]
fn the_sample_calls_are_valid_and_answer() {
    check(&askuser(&["ask", &sample("first.json")], Some("2\n")), 0, r#"{"Approach":["Fix the code"]}"#);
    check(
        &askuser(&["ask", &sample("multi-select.json")], Some("1,3\n2\n")),
        0,
        r#"{"Targets":["Linux x86_64","macOS"],"Channel":["Changelog and blog post"]}"#,
    );
    // An empty line takes the declared default; the text question reads its line.
    check(
        &askuser(&["ask", &sample("extended.json"), "--profile", "extended"], Some("\nfix/timezone\n")),
        0,
        r#"{"status":"answered","answered_by":"user","answers":[{"id":"env","header":"Deploy to","selected":["Staging"],"other_text":null},{"id":"branch","header":"Branch","selected":[],"other_text":"fix/timezone"}]}"#,
    );
    // No --secret-file: declined before anyone is asked (a valid call, not a retry).
    check(
        &askuser_detached(&["ask", &sample("secret.json"), "--profile", "extended"], None),
        1,
        r#"{"status":"declined","answered_by":"unattended","answers":[]}"#,
    );
    let ten = askuser(&["ask", &sample("ten-questions.json"), "--unattended"], None);
    check(
        &ten,
        0,
        r#"{"answered_by":"unattended","answers":{"Language":["Rust (Recommended)"],"Database":["PostgreSQL (Recommended)"],"API style":["REST"],"Auth":["API tokens"],"Hosting":["Kubernetes"],"Logging":["JSON lines"],"Metrics":["Prometheus"],"CI":["GitHub Actions"],"License":["MIT OR Apache-2.0"],"Release":["Every merge"]}}"#,
    );
    // The extended samples are extended: the reference profile refuses them (exit 2).
    for name in ["extended.json", "secret.json"] {
        assert_eq!(askuser(&["ask", &sample(name)], Some("")).status.code(), Some(2), "{name}");
    }
}
