//! Real pseudo-terminal tests: the fixture (`examples/pty_fixture.rs`) runs in its own session
//! with the pty as its controlling terminal, as a program in a terminal window does.

use std::io::Read as _;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const TIMEOUT: Duration = Duration::from_secs(20);

fn fixture() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().and_then(|deps| deps.parent()).unwrap().join("examples");
    let path = dir.join("pty_fixture");
    // `cargo test` builds the examples next to the test binaries; a filtered run may not.
    assert!(
        path.exists(),
        "{} is missing: run `cargo test -p askuser-terminal` (or build the example)",
        path.display()
    );
    path
}

/// The workspace's pseudo-terminal at 80 × 24, with the fixture to run on it.
struct Pty(askuser_testkit::Pty);

impl Pty {
    fn open() -> Self {
        Self(askuser_testkit::Pty::open(80, 24))
    }

    /// Starts the fixture on the pty (stdin and stderr), in a new session whose controlling
    /// terminal is the pty; stdout is `stdout`.
    fn spawn(&self, args: &[&str], stdout: Stdio) -> Child {
        self.spawn_with(Command::new("setsid").arg("--ctty").arg(fixture()).args(args), stdout)
    }

    fn spawn_with(&self, command: &mut Command, stdout: Stdio) -> Child {
        command
            .stdin(self.0.stdio())
            .stderr(self.0.stdio())
            .stdout(stdout)
            .env_remove("ACCESSIBLE")
            .env_remove("ASKUSER_ACCESSIBLE")
            .env("TERM", "xterm-256color")
            .spawn()
            .unwrap()
    }

    fn text(&self) -> String {
        self.0.text()
    }

    /// Waits until the output contains `needle`.
    #[track_caller]
    fn wait_for(&self, needle: &str) {
        self.0.wait_for(needle, TIMEOUT);
    }

    fn send(&mut self, bytes: &[u8]) {
        self.0.send(bytes);
    }

    /// Resizes the terminal; the kernel sends SIGWINCH to the fixture.
    fn resize(&self, cols: u16, rows: u16) {
        self.0.resize(cols, rows);
    }

    /// Whether the terminal is in cooked mode: canonical lines and echo.
    fn cooked(&self) -> bool {
        self.0.cooked()
    }
}

/// Waits for the fixture to succeed and returns its stdout, without the final newline.
#[track_caller]
fn succeed(child: &mut Child, pty: &Pty) -> String {
    let status = wait(child);
    let mut stdout = String::new();
    child.stdout.take().unwrap().read_to_string(&mut stdout).unwrap();
    assert!(status.success(), "{status}: {}", pty.text());
    stdout.trim_end().to_owned()
}

#[track_caller]
/// Types three lines at the fixture's `PROMPTn>` prompts and waits for each to come back whole
/// (`GOTn:word`): after a cancelled question, nothing typed is lost to a stale reader.
fn type_three_lines(pty: &mut Pty) {
    for (i, word) in ["hello", "world", "third"].iter().enumerate() {
        pty.wait_for(&format!("PROMPT{i}>"));
        pty.send(format!("{word}\n").as_bytes());
        pty.wait_for(&format!("GOT{i}:{word}"));
    }
}

fn wait(child: &mut Child) -> std::process::ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if start.elapsed() > TIMEOUT {
            let _ = child.kill();
            panic!("the fixture hung");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn answers_a_batch_by_keys() {
    let mut pty = Pty::open();
    let mut child = pty.spawn(&["answer"], Stdio::piped());
    pty.wait_for("Which database?");
    assert!(!pty.cooked(), "raw mode while the menu is open");
    pty.send(b"2");
    pty.wait_for("Which extras?");
    pty.send(b"13\r");
    pty.wait_for("Review your answers");
    pty.send(b"\r");
    assert_eq!(succeed(&mut child, &pty), r#"{"Db":["SQLite"],"Extras":["Cache","Tracing"]}"#);
    assert!(pty.cooked(), "cooked mode again afterwards");
    assert!(pty.text().contains("Extras → Cache, Tracing"), "the summary stays on screen");
}

/// Guards the countdown and the bell: a question with a deadline shows the time left and counts
/// it down while the menu waits; opening it rings the bell and sends an OSC 9 notification
/// naming what is asked; `NO_BELL` turns both off.
#[test]
fn a_deadline_counts_down_and_the_bell_rings() {
    for no_bell in [false, true] {
        let mut pty = Pty::open();
        let mut command = Command::new("setsid");
        command.arg("--ctty").arg(fixture()).arg("deadline").env_remove("VTE_VERSION");
        if no_bell {
            command.env("NO_BELL", "1");
        } else {
            command.env_remove("NO_BELL");
        }
        let mut child = pty.spawn_with(&mut command, Stdio::piped());
        pty.wait_for("Which database?");
        // A frame later than the first: the countdown is redrawn while nobody types.
        pty.wait_for(" left");
        pty.wait_for("4:58 left");
        let notified = pty.text().contains("\x07\x1b]9;The assistant asks: 2 questions\x1b\\");
        assert_eq!(notified, !no_bell, "{:?}", pty.text());
        assert_eq!(pty.text().contains('\x07'), !no_bell);
        pty.send(b"2");
        pty.wait_for("Which extras?");
        pty.send(b"1\r");
        pty.wait_for("Review your answers");
        pty.send(b"\r");
        assert_eq!(succeed(&mut child, &pty), r#"{"Db":["SQLite"],"Extras":["Cache"]}"#);
    }
}

/// Guards the drain before the first frame: a key typed before the menu appeared (meant for the
/// host, or typed ahead) must not answer a question. Undrained, this `1` would pick Postgres.
#[test]
fn keys_typed_before_the_first_frame_are_discarded() {
    let mut pty = Pty::open();
    pty.send(b"1");
    let mut child = pty.spawn(&["answer"], Stdio::piped());
    pty.wait_for("Which database?");
    pty.send(b"2");
    pty.wait_for("Which extras?");
    pty.send(b"3\r");
    pty.wait_for("Review your answers");
    pty.send(b"\r");
    assert_eq!(succeed(&mut child, &pty), r#"{"Db":["SQLite"],"Extras":["Tracing"]}"#);
}

/// Guards "raw mode is turned off only if the menu turned it on": a host already in raw mode keeps
/// it after the menu ends.
#[test]
fn raw_mode_the_host_turned_on_stays_on() {
    let mut pty = Pty::open();
    let mut child = pty.spawn(&["host-raw"], Stdio::null());
    pty.wait_for("Which database?");
    pty.send(b"\x1b");
    pty.wait_for("ASKED:true");
    assert!(!pty.cooked(), "the host's raw mode survived the menu");
    pty.send(b"x");
    assert!(wait(&mut child).success(), "{}", pty.text());
    assert!(pty.cooked());
}

/// Guards `install_panic_hook`: with `panic = "abort"` no `Drop` runs, so only the hook can turn
/// raw mode off. The fixture exits straight after the hook, as an abort would.
#[test]
fn the_panic_hook_restores_cooked_mode_when_nothing_unwinds() {
    let pty = Pty::open();
    let mut child = pty.spawn(&["abort"], Stdio::null());
    assert_eq!(wait(&mut child).code(), Some(101), "{}", pty.text());
    pty.wait_for("a bug elsewhere in the program");
    assert!(pty.cooked(), "the hook turned raw mode off");
}

/// Guards the central promise: cancelling the menu (a timeout) must not eat the lines typed
/// next. A kept-alive `EventStream` stole one in 7 runs of 10, hence the repetition.
#[test]
fn cancelled_menu_steals_no_input() {
    for run in 0..5 {
        let mut pty = Pty::open();
        let mut child = pty.spawn(&["cancel", "300"], Stdio::null());
        pty.wait_for("Which database?");
        pty.wait_for("CANCELLED:true");
        pty.wait_for("RAW:false");
        type_three_lines(&mut pty);
        assert!(wait(&mut child).success(), "run {run}: {}", pty.text());
        assert!(pty.cooked(), "run {run}: cooked mode after the cancelled menu");
        assert!(pty.text().contains("withdrawn"), "run {run}: the cancelled block says so");
    }
}

/// Guards the stdin reader reading only while a question waits: after a cancelled accessible or
/// line-protocol question, the lines typed next reach the host. The reader used to read stdin for
/// the life of the process and took the first of them.
#[test]
fn cancelled_line_question_steals_no_input() {
    for mode in ["accessible", "lines"] {
        let mut pty = Pty::open();
        let mut child = pty.spawn(&["cancel-lines", "300", mode], Stdio::null());
        pty.wait_for("Choose 1-3");
        pty.wait_for("CANCELLED:true");
        type_three_lines(&mut pty);
        assert!(wait(&mut child).success(), "{mode}: {}", pty.text());
    }
}

/// Guards the process-wide queue: two answerers asking at once show one menu, then the other.
/// With a queue per answerer both menus drew at once and fought over raw mode.
#[test]
fn two_answerers_take_turns() {
    let mut pty = Pty::open();
    let mut child = pty.spawn(&["two"], Stdio::piped());
    pty.wait_for("Question A?");
    pty.send(b"1");
    pty.wait_for("Question B?");
    let text = pty.text();
    let (done_a, shown_b) = (text.find("A → Yes").unwrap(), text.find("Question B?").unwrap());
    assert!(done_a < shown_b, "B was drawn while A was open: {text:?}");
    pty.send(b"2");
    assert_eq!(succeed(&mut child, &pty), "{\"A\":[\"Yes\"]}\n{\"B\":[\"No\"]}");
    assert!(pty.cooked());
}

/// Guards `askuser ask - --accessible`: stdin carried the arguments (here it is at end of input),
/// so the accessible line protocol must read its lines from `/dev/tty`. It used to read stdin and
/// decline at once.
#[test]
fn accessible_mode_under_tty_reads_lines_from_the_terminal() {
    let mut pty = Pty::open();
    // setsid makes the pty (stdin) the controlling terminal; the fixture then gets /dev/null.
    let mut child = pty.spawn_with(
        Command::new("setsid")
            .args(["--ctty", "sh", "-c", "exec \"$0\" accessible-tty </dev/null"])
            .arg(fixture()),
        Stdio::piped(),
    );
    pty.wait_for("Choose 1-3");
    pty.send(b"2\n");
    pty.wait_for("Choose one or more");
    pty.send(b"1,3\n");
    assert_eq!(succeed(&mut child, &pty), r#"{"Db":["SQLite"],"Extras":["Cache","Tracing"]}"#);
}

/// Guards "nobody was asked" against "declined": stdin at end of input before any answer fails
/// the call (it used to tell the model the user declined), and never hangs.
#[test]
fn piped_stdin_at_eof_fails_without_hanging() {
    let mut child = Command::new(fixture())
        .arg("answer")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = wait(&mut child);
    let mut stderr = String::new();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    assert!(!status.success());
    assert!(stderr.contains("nobody could be asked: the input ended before the first answer"), "{stderr}");
}

#[test]
fn ctrl_c_interrupts_and_restores_cooked_mode() {
    let mut pty = Pty::open();
    let mut child = pty.spawn(&["answer"], Stdio::piped());
    pty.wait_for("Which database?");
    pty.send(b"\x03");
    let status = wait(&mut child);
    assert!(!status.success(), "an interrupt is an error for the fixture");
    pty.wait_for("Interrupted");
    assert!(pty.cooked(), "cooked mode after Ctrl-C");
}

#[test]
fn resize_redraws_for_the_new_width() {
    let mut pty = Pty::open();
    let mut child = pty.spawn(&["answer"], Stdio::piped());
    pty.wait_for("Which database?");
    assert!(!pty.text().contains("Q1/2 Db"), "the full tab bar at 80 columns");
    pty.resize(30, 10);
    pty.wait_for("Q1/2 Db");
    pty.send(b"\x1b");
    assert!(wait(&mut child).success());
    assert!(pty.cooked());
}

/// Guards the extended menu end to end: the cursor starts on the declared default (Enter takes
/// it), the text question is typed in place, the result carries ids and the typed text.
#[test]
fn extended_batch_in_the_menu_and_on_the_line_protocol() {
    let expected = r#"{"status":"answered","answered_by":"user","answers":[{"id":"db","header":"Db","selected":["SQLite"],"other_text":null},{"id":"name","header":"Name","selected":[],"other_text":"billing api"}]}"#;
    let mut pty = Pty::open();
    let mut child = pty.spawn(&["extended", "menu"], Stdio::piped());
    pty.wait_for("Which database?");
    assert!(!pty.text().contains("Other"), "allow_other false: no Other row");
    pty.send(b"\r");
    pty.wait_for("What is the service called?");
    pty.send(b"billing api\r");
    pty.wait_for("Review your answers");
    pty.send(b"\r");
    assert_eq!(succeed(&mut child, &pty), expected);
    assert!(pty.cooked());

    let mut pty = Pty::open();
    let mut child = pty.spawn(&["extended", "lines"], Stdio::piped());
    pty.wait_for("Enter for the default");
    pty.send(b"\n");
    pty.wait_for("Type your answer: ");
    pty.send(b"\n");
    pty.wait_for("Try again");
    pty.send(b"billing api\n");
    assert_eq!(succeed(&mut child, &pty), expected);
}

/// The value typed in the secret tests: distinctive enough that any part of it would show.
const SECRET: &str = "hunter2-LEAKCANARY";

/// Asserts the terminal never received the value, nor a recognisable part of it.
#[track_caller]
fn assert_never_shown(pty: &Pty) {
    let text = pty.text();
    assert!(!text.contains("hunter") && !text.contains("LEAKCANARY"), "the secret was shown: {text:?}");
}

/// Guards the secret question end to end, in the menu (a mask) and on the line protocol (read
/// from the terminal with echo off, never from stdin): the value reaches the sink, the result
/// carries `session:NAME`, and no byte of it ever reaches the screen.
#[test]
fn a_secret_reaches_the_sink_and_never_the_screen() {
    for how in ["menu", "lines"] {
        let mut pty = Pty::open();
        let mut child = pty.spawn_with(
            Command::new("setsid")
                .arg("--ctty")
                .arg(fixture())
                .args(["secret", how])
                .env("ASKUSER_TEST_EXPECT", SECRET),
            Stdio::piped(),
        );
        pty.wait_for("Your deploy token?");
        if how == "lines" {
            pty.wait_for("nothing is shown");
            assert!(!pty.0.echoes(), "echo off");
            pty.send(format!("{SECRET}\n").as_bytes());
        } else {
            pty.send(SECRET.as_bytes());
            pty.wait_for("••••");
            pty.send(b"\r");
        }
        let stdout = succeed(&mut child, &pty);
        assert_eq!(
            stdout,
            "{\"status\":\"answered\",\"answered_by\":\"user\",\"answers\":[{\"id\":\"q1\",\"header\":\"Token\",\"selected\":[],\"other_text\":null,\"secret_ref\":\"session:DEPLOY_TOKEN\"}]}\nMATCH:true",
            "{how}"
        );
        pty.wait_for("aved as session:DEPLOY_TOKEN");
        assert_never_shown(&pty);
        assert!(pty.cooked(), "{how}: echo and cooked mode restored");
    }
}

/// Guards a secret typed while a timeout cancels the question: the half-typed value reaches
/// neither the screen nor the next reader of the terminal (the host's `read_line`), nor the sink;
/// the lines typed afterwards arrive whole.
#[test]
fn a_cancelled_secret_leaks_to_no_reader() {
    for how in ["menu", "lines"] {
        let mut pty = Pty::open();
        let mut child = pty.spawn(&["cancel-secret", "1500", how], Stdio::null());
        pty.wait_for(if how == "lines" { "nothing is shown" } else { "Secret:" });
        pty.send(b"hunter2-LEAK");
        pty.wait_for("CANCELLED:true");
        pty.wait_for("STORED:0");
        type_three_lines(&mut pty);
        assert!(wait(&mut child).success(), "{how}: {}", pty.text());
        assert_never_shown(&pty);
        assert!(pty.cooked(), "{how}: cooked mode and echo after the cancelled secret");
    }
}

/// Guards the menu's flush on cancellation: part of a secret typed while the program was too
/// busy to handle keys (one key read into crossterm's queue, the rest still in the terminal) when
/// the timeout dropped the menu. Without the drain and flush the host's next `read_line` got
/// `unter2-LEAKhello` (checked by removing them).
#[test]
fn a_secret_typed_while_the_program_is_busy_leaks_to_no_reader() {
    let mut pty = Pty::open();
    let mut child = pty.spawn(&["cancel-secret", "1000", "menu", "busy"], Stdio::null());
    pty.wait_for("Secret:");
    pty.wait_for("BUSY");
    pty.send(b"h");
    std::thread::sleep(Duration::from_millis(200));
    pty.send(b"unter2-LEAK");
    pty.wait_for("CANCELLED:true");
    pty.wait_for("STORED:0");
    type_three_lines(&mut pty);
    assert!(wait(&mut child).success(), "{}", pty.text());
    assert_never_shown(&pty);
    assert!(pty.cooked());
}
