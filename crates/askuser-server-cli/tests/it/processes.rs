//! `askuser-server serve` and `askuser-server ask --server` as real processes on loopback; the
//! person answers on the page the ask printed, with a plain HTTP client posting the form.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::BufReader;
use tokio::process::Command;

use crate::support::{ARGS, BIN, TempDir, field, line_after, serve};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_then_ask_then_answer_on_the_page() {
    let dir = TempDir::new("e2e");
    let mut server = serve(&dir.0, &[]);
    let mut server_err = BufReader::new(server.stderr.take().unwrap());
    let url = line_after(&mut server_err, "askuser serve: listening on ").await;
    let token_line = line_after(&mut server_err, "askuser serve: API token in ").await;
    let token_file = dir.0.join("token");
    assert_eq!(token_line, format!("{} (created)", token_file.display()));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        assert_eq!(std::fs::metadata(&token_file).unwrap().permissions().mode() & 0o777, 0o600);
    }
    std::fs::write(dir.0.join("call.json"), ARGS).unwrap();

    let mut ask = Command::new(BIN)
        .args(["ask", "--server", &url, "--token-file"])
        .arg(&token_file)
        .arg(dir.0.join("call.json"))
        .env_remove("ASKUSER_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut ask_err = BufReader::new(ask.stderr.take().unwrap());
    let link = line_after(&mut ask_err, "askuser: answer at ").await;
    assert!(link.starts_with(&format!("{url}/q/")), "{link}");

    let http = reqwest::Client::new();
    let page = http.get(&link).send().await.unwrap().text().await.unwrap();
    assert!(page.contains("Which plan?"));
    let form = [
        ("csrf", field(&page, "csrf").to_owned()),
        ("q0", "1".to_owned()),
        ("q1", "other".to_owned()),
        ("q1_other", "Weekly backups, please".to_owned()),
        ("action", "answer".to_owned()),
    ];
    let body: Vec<String> =
        form.iter().map(|(k, v)| format!("{k}={}", v.replace(' ', "+").replace(',', "%2C"))).collect();
    let done = http
        .post(&link)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body.join("&"))
        .send()
        .await
        .unwrap();
    assert_eq!(done.status(), 200);

    let output =
        tokio::time::timeout(Duration::from_secs(30), ask.wait_with_output()).await.unwrap().unwrap();
    assert_eq!(
        String::from_utf8(output.stdout).unwrap(),
        "{\"Plan\":[\"Large\"],\"Extras\":[\"Weekly backups, please\"]}\n"
    );
    assert_eq!(output.status.code(), Some(0));

    // SIGTERM: a graceful stop, exit status 0.
    #[cfg(unix)]
    {
        let pid = server.id().unwrap().to_string();
        std::process::Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        line_after(&mut server_err, "askuser serve: stopped").await;
        let status = tokio::time::timeout(Duration::from_secs(30), server.wait()).await.unwrap().unwrap();
        assert_eq!(status.code(), Some(0));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_exit_statuses_for_invalid_arguments_a_bad_token_and_a_timeout() {
    let dir = TempDir::new("statuses");
    let mut server = serve(&dir.0, &[]);
    let mut server_err = BufReader::new(server.stderr.take().unwrap());
    let url = line_after(&mut server_err, "askuser serve: listening on ").await;
    let token_file = dir.0.join("token");
    let ask = |args: &'static str, extra: &[&str]| {
        let mut command = Command::new(BIN);
        command
            .args(["ask", "--server", &url])
            .args(extra)
            .env_remove("ASKUSER_TOKEN")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = command.spawn().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        async move {
            tokio::io::AsyncWriteExt::write_all(&mut stdin, args.as_bytes()).await.unwrap();
            drop(stdin);
            tokio::time::timeout(Duration::from_secs(30), child.wait_with_output()).await.unwrap().unwrap()
        }
    };
    let token = token_file.to_str().unwrap();
    let invalid = ask(r#"{"questions":[]}"#, &["--token-file", token]).await;
    assert_eq!(invalid.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&invalid.stdout).contains(r#""loc":["questions"]"#));

    std::fs::write(dir.0.join("wrong"), "wrong-token-0123456789abcdef").unwrap();
    let wrong = ask(ARGS, &["--token-file", dir.0.join("wrong").to_str().unwrap()]).await;
    assert_eq!(wrong.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&wrong.stderr).contains("unauthorized"), "{wrong:?}");

    let timed_out = ask(ARGS, &["--token-file", token, "--timeout", "0.5"]).await;
    assert_eq!(timed_out.status.code(), Some(124), "{timed_out:?}");
    assert_eq!(String::from_utf8(timed_out.stdout).unwrap().trim_end(), askuser_core::TIMED_OUT);
    server.start_kill().unwrap();
}
