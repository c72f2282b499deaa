//! `askuser ask` on a real pseudo-terminal: signals while the menu is open.

use std::fs::File;
use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rustix::termios::{LocalModes, Winsize, tcgetattr};

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
        let size = Winsize { ws_row: 24, ws_col: 80, ws_xpixel: 0, ws_ypixel: 0 };
        let pty = rustix_openpty::openpty(None, Some(&size)).unwrap();
        let controller = File::from(pty.controller);
        let seen = Arc::new(Mutex::new(Vec::new()));
        let mut reader = controller.try_clone().unwrap();
        let sink = Arc::clone(&seen);
        std::thread::spawn(move || {
            let mut buf = [0; 4096];
            while let Ok(n @ 1..) = reader.read(&mut buf) {
                sink.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        let text = || String::from_utf8_lossy(&seen.lock().unwrap()).into_owned();
        // setsid does not fork here (the child is no group leader): its pid is askuser's.
        let mut child = Command::new("setsid")
            .args(["--ctty", env!("CARGO_BIN_EXE_askuser"), "ask"])
            .arg(&args)
            .stdin(Stdio::from(pty.user.try_clone().unwrap()))
            .stderr(Stdio::from(pty.user.try_clone().unwrap()))
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
        let cooked =
            || tcgetattr(&pty.user).unwrap().local_modes.contains(LocalModes::ICANON | LocalModes::ECHO);
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
