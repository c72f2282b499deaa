//! `ask --server` at a terminal: `askuser ask --server` in a session of its own with a
//! pseudo-terminal as its controlling terminal and stderr, racing its terminal menu against the
//! server's page. Answered at the terminal, the server has the answer too; answered on the page,
//! the menu is retracted and the page's answer is the result.

#![cfg(unix)]

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use askuser_testkit::Pty;
use tokio::io::BufReader;

use crate::server::support::{BIN, TempDir, field, line_after, serve};

const PATIENCE: Duration = Duration::from_secs(30);

const CALL: &str = r#"{"questions":[{"header":"Plan","question":"Which plan fits?",
    "options":[{"label":"Small"},{"label":"Large"}]}]}"#;

/// The page link `ask` printed on the terminal.
fn link_on(terminal: &Pty) -> String {
    let text = terminal.text();
    let at = text.find("askuser: answer at ").expect("a link") + "askuser: answer at ".len();
    text[at..].split(|c: char| c.is_whitespace()).next().unwrap().to_owned()
}

/// `askuser ask --server URL --token-file TOKEN CALL` with the pty as its controlling
/// terminal, stdin and stderr; stdout piped.
fn ask_at_terminal(
    terminal: &Pty,
    url: &str,
    token: &std::path::Path,
    call: &std::path::Path,
) -> std::process::Child {
    Command::new("setsid")
        .args(["--ctty", BIN, "ask", "--server", url, "--token-file"])
        .arg(token)
        .arg(call)
        .stdin(terminal.stdio())
        .stderr(terminal.stdio())
        .stdout(Stdio::piped())
        .env("TERM", "xterm-256color")
        .env_remove("ASKUSER_TOKEN")
        .env_remove("ACCESSIBLE")
        .env_remove("ASKUSER_ACCESSIBLE")
        .spawn()
        .unwrap()
}

async fn finished(child: std::process::Child) -> (String, Option<i32>) {
    let output =
        tokio::time::timeout(PATIENCE, tokio::task::spawn_blocking(move || child.wait_with_output()))
            .await
            .expect("ask ended in time")
            .unwrap()
            .unwrap();
    (String::from_utf8(output.stdout).unwrap(), output.status.code())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_terminal_menu_races_the_page() {
    let dir = TempDir::new("terminal-race");
    let mut server = serve(&dir.0, &[]);
    let mut server_err = BufReader::new(server.stderr.take().unwrap());
    let url = line_after(&mut server_err, "askuser serve: listening on ").await;
    line_after(&mut server_err, "askuser serve: API token in ").await;
    let token_file = dir.0.join("token");
    let token = std::fs::read_to_string(&token_file).unwrap().trim().to_owned();
    let call = dir.0.join("call.json");
    std::fs::write(&call, CALL).unwrap();
    let http = reqwest::Client::new();

    // 1. Answered at the terminal: the result, and the server has the same answer.
    let terminal = Pty::open(120, 30);
    let ask = ask_at_terminal(&terminal, &url, &token_file, &call);
    terminal.wait_for_async("askuser: answer at ", PATIENCE).await;
    terminal.wait_for_async("Which plan fits?", PATIENCE).await;
    let link = link_on(&terminal);
    let shown = terminal.text();
    assert!(
        shown.find("askuser: answer at ").unwrap() < shown.find("Which plan fits?").unwrap(),
        "the link comes before the menu: {shown:?}"
    );
    terminal.send(b"2");
    let (stdout, status) = finished(ask).await;
    assert_eq!((stdout.as_str(), status), ("{\"Plan\":[\"Large\"]}\n", Some(0)), "{}", terminal.text());
    let listed: serde_json::Value =
        crate::server::support::get_json(&format!("{url}/v1/questions?state=answered"), &token).await;
    let records = listed["records"].as_array().unwrap();
    assert_eq!(records.len(), 1, "{listed}");
    assert_eq!(records[0]["response"]["answers"][0]["selected"], serde_json::json!(["Large"]));
    let page = http.get(&link).send().await.unwrap().text().await.unwrap();
    assert!(page.contains("Large"), "the page shows the terminal's answer: {page}");
    drop(terminal);

    // 2. Answered on the page while the menu is open: the page's answer is the result, and the
    //    menu is gone (the command ended without a key).
    let terminal = Pty::open(120, 30);
    let ask = ask_at_terminal(&terminal, &url, &token_file, &call);
    terminal.wait_for_async("Which plan fits?", PATIENCE).await;
    let link = link_on(&terminal);
    let page = http.get(&link).send().await.unwrap().text().await.unwrap();
    let body = format!("csrf={}&q0=0&action=answer", field(&page, "csrf"));
    let done = http
        .post(&link)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(done.status(), 200);
    let (stdout, status) = finished(ask).await;
    assert_eq!((stdout.as_str(), status), ("{\"Plan\":[\"Small\"]}\n", Some(0)), "{}", terminal.text());
    // The menu's last line says what happened: answered there, with the answer; not "withdrawn".
    let shown = terminal.text();
    assert!(shown.contains("Answered on the answer server"), "{shown:?}");
    assert!(shown.contains("Plan") && shown.contains("Small"), "{shown:?}");
    assert!(!shown.contains("withdrawn"), "{shown:?}");
    drop(terminal);

    // 3. --no-menu: the server alone, as before.
    let terminal = Pty::open(120, 30);
    let mut ask = Command::new("setsid");
    ask.args(["--ctty", BIN, "ask", "--no-menu", "--timeout", "2", "--server", &url, "--token-file"])
        .arg(&token_file)
        .arg(&call)
        .stdin(terminal.stdio())
        .stderr(terminal.stdio())
        .stdout(Stdio::piped())
        .env("TERM", "xterm-256color");
    let (_, status) = finished(ask.spawn().unwrap()).await;
    assert_eq!(status, Some(124), "timed out: nobody answered on the page");
    assert!(!terminal.text().contains("Which plan fits?"), "no menu: {:?}", terminal.text());
}

/// The state of the only question `url`'s server has, by its list.
async fn only_state(url: &str, token: &str) -> String {
    let listed: serde_json::Value =
        crate::server::support::get_json(&format!("{url}/v1/questions"), token).await;
    let records = listed["records"].as_array().unwrap();
    assert_eq!(records.len(), 1, "{listed}");
    records[0]["state"].as_str().unwrap().to_owned()
}

/// Every way out of `ask --server`'s menu withdraws the question on the server at once (not
/// after the lease): Ctrl-C read as a key by the menu in raw mode, and SIGTERM. The time ran
/// out: the menu says nobody answered in time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_way_out_of_the_menu_withdraws_at_once() {
    for way in ["ctrl-c", "sigterm", "timeout"] {
        let dir = TempDir::new(&format!("terminal-out-{way}"));
        let mut server = serve(&dir.0, &[]);
        let mut server_err = BufReader::new(server.stderr.take().unwrap());
        let url = line_after(&mut server_err, "askuser serve: listening on ").await;
        line_after(&mut server_err, "askuser serve: API token in ").await;
        let token_file = dir.0.join("token");
        let token = std::fs::read_to_string(&token_file).unwrap().trim().to_owned();
        let call = dir.0.join("call.json");
        std::fs::write(&call, CALL).unwrap();

        let terminal = Pty::open(120, 30);
        let mut command = Command::new("setsid");
        command.args(["--ctty", BIN, "ask", "--server", &url, "--token-file"]).arg(&token_file);
        if way == "timeout" {
            command.args(["--timeout", "3s"]);
        }
        let ask = command
            .arg(&call)
            .stdin(terminal.stdio())
            .stderr(terminal.stdio())
            .stdout(Stdio::piped())
            .env("TERM", "xterm-256color")
            .env_remove("ASKUSER_TOKEN")
            .spawn()
            .unwrap();
        terminal.wait_for_async("Which plan fits?", PATIENCE).await;
        assert_eq!(only_state(&url, &token).await, "pending");
        match way {
            "ctrl-c" => {
                terminal.send(b"\x03");
            }
            "sigterm" => {
                Command::new("kill").args(["-TERM", &ask.id().to_string()]).status().unwrap();
            }
            _ => {}
        }
        let ended = Instant::now();
        let (_, status) = finished(ask).await;
        let expected = match way {
            "ctrl-c" => 130,
            "sigterm" => 143,
            _ => 124,
        };
        assert_eq!(status, Some(expected), "{way}: {}", terminal.text());
        let state = only_state(&url, &token).await;
        if way == "timeout" {
            // The server's own sweeper closes it at its deadline.
            assert!(terminal.text().contains("Nobody answered in time"), "{:?}", terminal.text());
            assert!(!terminal.text().contains("withdrawn"), "{:?}", terminal.text());
        } else {
            assert_eq!(state, "cancelled", "{way}: withdrawn when the command ended");
            assert!(ended.elapsed() < Duration::from_secs(5), "{way}: {:?}", ended.elapsed());
        }
        drop(terminal);
    }
}
