//! `askuser serve` and `askuser ask --server` as real processes on loopback; the
//! person answers on the page the ask printed, with a plain HTTP client posting the form.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt as _, BufReader};

use crate::server::support::{self, ARGS, TempDir, field, line_after, serve};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_then_ask_then_answer_on_the_page() {
    let dir = TempDir::new("e2e");
    let mut server = serve(&dir.0, &[]);
    let mut server_err = BufReader::new(server.stderr.take().unwrap());
    let url = line_after(&mut server_err, "askuser serve: listening on ").await;
    let token_line = line_after(&mut server_err, "askuser serve: API token in ").await;
    let token_file = dir.0.join("token");
    assert_eq!(token_line, format!("{} (created)", token_file.display()));
    // Not the file `ask` reads by default: the suggested command names it.
    let ask_line = line_after(&mut server_err, "askuser serve: ask with ").await;
    assert!(
        ask_line
            .starts_with(&format!("`askuser ask --server {url} --token-file {} FILE`", token_file.display())),
        "{ask_line}"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        assert_eq!(std::fs::metadata(&token_file).unwrap().permissions().mode() & 0o777, 0o600);
    }
    std::fs::write(dir.0.join("call.json"), ARGS).unwrap();

    let mut ask =
        support::ask(&url).arg("--token-file").arg(&token_file).arg(dir.0.join("call.json")).spawn().unwrap();
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
async fn ask_exits_as_the_terminal_path_does_bad_arguments_token_server_sigterm_timeout() {
    let dir = TempDir::new("statuses");
    let mut server = serve(&dir.0, &[]);
    let mut server_err = BufReader::new(server.stderr.take().unwrap());
    let url = line_after(&mut server_err, "askuser serve: listening on ").await;
    let token_file = dir.0.join("token");
    let ask = |args: &'static str, extra: &[&str]| {
        let mut child = support::ask(&url).args(extra).stdin(Stdio::piped()).spawn().unwrap();
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

    support::write_private(&dir.0.join("wrong"), "wrong-token-0123456789abcdef");
    let wrong = ask(ARGS, &["--token-file", dir.0.join("wrong").to_str().unwrap()]).await;
    assert_eq!(wrong.status.code(), Some(3), "a refused token: nobody could be asked");
    // One line naming the file the token came from and how to pass another.
    let said = String::from_utf8_lossy(&wrong.stderr);
    let expected = format!(
        "askuser: the answer server at {url} refused the API token from the token file {} (401): pass \
         the token file `askuser serve` printed (`API token in …`) with --token-file PATH, or set ASKUSER_TOKEN\n",
        dir.0.join("wrong").display()
    );
    assert_eq!(said, expected);

    // SIGTERM while waiting: 143 (128 + 15), as at the terminal, and the question is withdrawn.
    #[cfg(unix)]
    {
        let mut waiting =
            support::ask(&url).args(["--token-file", token, "-"]).stdin(Stdio::piped()).spawn().unwrap();
        tokio::io::AsyncWriteExt::write_all(&mut waiting.stdin.take().unwrap(), ARGS.as_bytes())
            .await
            .unwrap();
        let mut waiting_err = BufReader::new(waiting.stderr.take().unwrap());
        line_after(&mut waiting_err, "askuser: answer at ").await;
        let pid = waiting.id().unwrap().to_string();
        std::process::Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        let status = tokio::time::timeout(Duration::from_secs(30), waiting.wait()).await.unwrap().unwrap();
        assert_eq!(status.code(), Some(143));
        let token_text = std::fs::read_to_string(&token_file).unwrap();
        let pending = reqwest::Client::new()
            .get(format!("{url}/v1/questions?state=pending"))
            .bearer_auth(token_text.trim())
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let pending: serde_json::Value = serde_json::from_str(&pending).unwrap();
        assert_eq!(pending["records"], serde_json::json!([]), "the question was withdrawn: {pending}");
    }
    let timed_out = ask(ARGS, &["--token-file", token, "--timeout", "0.5"]).await;
    assert_eq!(timed_out.status.code(), Some(124), "{timed_out:?}");
    assert_eq!(String::from_utf8(timed_out.stdout).unwrap().trim_end(), askuser_core::TIMED_OUT);

    // An unreachable server is tried again until the timeout (it may be restarting), saying so
    // once, in one line that suggests starting one.
    let mut unreachable = support::ask("http://127.0.0.1:9")
        .args(["--token-file", token, "--timeout", "1.5", "-"])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    tokio::io::AsyncWriteExt::write_all(&mut unreachable.stdin.take().unwrap(), ARGS.as_bytes())
        .await
        .unwrap();
    let unreachable =
        tokio::time::timeout(Duration::from_secs(30), unreachable.wait_with_output()).await.unwrap().unwrap();
    assert_eq!(unreachable.status.code(), Some(124), "{unreachable:?}");
    let said = String::from_utf8_lossy(&unreachable.stderr);
    assert_eq!(said.matches("trying again until the timeout").count(), 1, "once per outage: {said}");
    assert!(
        said.contains("askuser: no answer server at http://127.0.0.1:9 (Connection refused")
            && said.contains("start one with `askuser serve`"),
        "{said}"
    );
    assert!(!said.contains("error sending request"), "{said}");

    server.start_kill().unwrap();
}

/// Two `serve` processes on one PostgreSQL database (`ASKUSER_TEST_POSTGRES_URL`): `ask --server A
/// --secret-file` gets the value of a secret answered on B, and A's event stream hears the answer
/// taken by B. Skipped with a message without PostgreSQL (a failure under `CI=true`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_serve_processes_act_as_one_with_a_secret_and_the_events() {
    let Some(postgres) = support::PostgresSchema::open("fleet", "two serve processes").await else { return };
    let dir = TempDir::new("fleet");
    let store = postgres.url.clone();
    let token = "fleet-token-0123456789abcdef";
    support::write_private(&dir.0.join("token"), token);
    let (_a, a_url) = serve_extended(&store, &dir.0).await;
    let (_b, b_url) = serve_extended(&store, &dir.0).await;

    let http = reqwest::Client::new();
    let mut events = http.get(format!("{a_url}/v1/events")).bearer_auth(token).send().await.unwrap();
    assert_eq!(events.status(), 200);
    let secret_args = r#"{"questions":[{"kind":"secret","header":"Token","question":"Deploy token?",
        "secret_name":"DEPLOY_TOKEN","purpose":"To deploy"}]}"#;
    std::fs::write(dir.0.join("call.json"), secret_args).unwrap();
    let secret_file = dir.0.join("secrets.env");
    let mut ask = support::ask(&a_url)
        .args(["--profile", "extended", "--token-file"])
        .arg(dir.0.join("token"))
        .arg("--secret-file")
        .arg(&secret_file)
        .arg(dir.0.join("call.json"))
        .spawn()
        .unwrap();
    let mut ask_err = BufReader::new(ask.stderr.take().unwrap());
    let link = line_after(&mut ask_err, "askuser: answer at ").await;
    let id = link.split('/').nth(4).unwrap().to_owned();
    // Answered on B, through the API.
    let value = "fleet-proc-s3cret";
    let body = serde_json::json!({"answers":[{"header":"Token","secret_ref":"session:DEPLOY_TOKEN"}],
        "secret_values":{"DEPLOY_TOKEN": value}});
    let reply = http
        .post(format!("{b_url}/v1/questions/{id}/answer"))
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 200);
    let output =
        tokio::time::timeout(Duration::from_secs(30), ask.wait_with_output()).await.unwrap().unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains(r#""secret_ref":"session:DEPLOY_TOKEN""#) && !stdout.contains(value), "{stdout}");
    assert_eq!(std::fs::read_to_string(&secret_file).unwrap(), format!("DEPLOY_TOKEN={value}\n"));
    // A's event stream: the question asked through A, then answered through B.
    let mut seen = String::new();
    while !seen.contains("event: answered") {
        let chunk =
            tokio::time::timeout(Duration::from_secs(10), events.chunk()).await.unwrap().unwrap().unwrap();
        seen.push_str(std::str::from_utf8(&chunk).unwrap());
    }
    assert!(seen.contains("event: pending") && seen.contains(&id) && !seen.contains(value), "{seen}");
    drop(events);
    postgres.drop_schema().await;
}

/// `serve --profile extended` on `store` with the token file in `dir`; returns it and its URL, and
/// keeps reading its log so that it never blocks on a full pipe.
async fn serve_extended(store: &str, dir: &std::path::Path) -> (tokio::process::Child, String) {
    let token_file = dir.join("token");
    let token_file = token_file.to_str().expect("a UTF-8 temporary path");
    let mut server = support::serve_on(store, &["--profile", "extended", "--token-file", token_file]);
    let mut stderr = BufReader::new(server.stderr.take().unwrap());
    let url = line_after(&mut stderr, "askuser serve: listening on ").await;
    tokio::spawn(async move {
        let mut line = String::new();
        while tokio::io::AsyncBufReadExt::read_line(&mut stderr, &mut line).await.is_ok_and(|n| n > 0) {
            line.clear();
        }
    });
    (server, url)
}

/// Guards store-open errors that said only "database error": the message names what failed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_names_why_the_store_did_not_open() {
    let dir = TempDir::new("open-errors");
    let token = dir.0.join("token");
    let token = token.to_str().unwrap();
    let failed = |store: String| async move {
        let child = support::serve_on(&store, &["--token-file", token]);
        let output =
            tokio::time::timeout(Duration::from_secs(30), child.wait_with_output()).await.unwrap().unwrap();
        assert_eq!(output.status.code(), Some(1), "{output:?}");
        String::from_utf8(output.stderr).unwrap()
    };
    std::fs::write(dir.0.join("a-file"), "").unwrap();
    let said = failed(format!("sqlite:{}", dir.0.join("a-file/sub/pending.db").display())).await;
    assert!(said.contains("cannot create the directory") && said.contains("a-file/sub"), "{said}");
    std::fs::create_dir(dir.0.join("a-dir")).unwrap();
    let said = failed(format!("sqlite:{}", dir.0.join("a-dir").display())).await;
    // Refused before SQLite tries (issue 36.7: a store file must be this user's regular file).
    assert!(
        said.contains("a-dir is not a regular file: refused") && said.contains("Is a directory"),
        "{said}"
    );
    // A missing directory is created.
    let mut created = support::serve_on(
        &format!("sqlite:{}", dir.0.join("new/pending.db").display()),
        &["--token-file", token],
    );
    let mut created_err = BufReader::new(created.stderr.take().unwrap());
    line_after(&mut created_err, "askuser serve: listening on ").await;
    assert!(dir.0.join("new/pending.db").exists());
    created.start_kill().unwrap();

    let Some(url) = askuser_testkit::postgres_url("the PostgreSQL store-open error") else { return };
    let (base, _db) = url.rsplit_once('/').unwrap();
    let said = failed(format!("{base}/askuser_no_such_database")).await;
    assert!(said.contains(r#"database "askuser_no_such_database" does not exist"#), "{said}");
}

/// The data directory is made 0700, the store's files are 0600, and a token file other users
/// could read is refused with its path and the fix.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_data_directory_and_store_are_private_and_an_open_token_file_is_refused() {
    use std::os::unix::fs::PermissionsExt as _;
    let mode = |path: &std::path::Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    let dir = TempDir::new("private");
    let data = dir.0.join("askuser");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut server = serve_with_data_home(&dir.0);
    let mut server_err = BufReader::new(server.stderr.take().unwrap());
    let fixed = line_after(&mut server_err, &format!("askuser serve: {} was open", data.display())).await;
    assert_eq!(fixed, " to other users (mode 0755): made 0700");
    line_after(&mut server_err, "askuser serve: listening on ").await;
    assert_eq!(mode(&data), 0o700);
    assert_eq!(mode(&data.join("pending.db")), 0o600);
    assert_eq!(mode(&data.join("token")), 0o600);
    drop(server);

    // A data directory askuser makes itself is private from the start: nothing to report.
    let fresh = TempDir::new("private-fresh");
    let mut server = serve_with_data_home(&fresh.0);
    let mut server_err = BufReader::new(server.stderr.take().unwrap());
    let mut said = String::new();
    loop {
        let mut line = String::new();
        let read = tokio::time::timeout(Duration::from_secs(30), server_err.read_line(&mut line)).await;
        assert!(matches!(read, Ok(Ok(1..))), "serve ended or hung: {said}");
        said.push_str(&line);
        if line.starts_with("askuser serve: listening on ") {
            break;
        }
    }
    drop(server);
    assert_eq!(mode(&fresh.0.join("askuser")), 0o700, "{said}");
    assert!(!said.contains("was open to other users"), "{said}");

    let token = dir.0.join("open-token");
    std::fs::write(&token, "an-open-token-0123456789\n").unwrap();
    std::fs::set_permissions(&token, std::fs::Permissions::from_mode(0o644)).unwrap();
    let output = tokio::process::Command::new(support::BIN)
        .args(["serve", "--bind", "127.0.0.1:0", "--token-file"])
        .arg(&token)
        .arg("--store")
        .arg(format!("sqlite:{}", dir.0.join("other.db").display()))
        .env_remove("ASKUSER_TOKEN")
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.contains(&format!("token file {}: its mode is 0644", token.display()))
            && stderr.contains(&format!("chmod 600 {}", token.display())),
        "{stderr}"
    );
}

/// `ask --server http://` to another machine warns that everything crosses in the clear (here
/// before the missing token file stops it: nothing is sent anywhere); loopback does not.
#[tokio::test]
async fn ask_warns_about_plain_http_beyond_loopback() {
    let dir = TempDir::new("cleartext");
    let missing = dir.0.join("no-token");
    for (url, warned) in [("http://ask.example.com:8765", true), ("http://127.0.0.1:9", false)] {
        let output = support::ask(url).arg("--token-file").arg(&missing).arg("-").output().await.unwrap();
        assert_eq!(output.status.code(), Some(2));
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert_eq!(
            stderr.contains(&format!("askuser: warning: {url} is plain HTTP beyond this machine")),
            warned,
            "{stderr}"
        );
        assert!(stderr.contains("no-token"), "{stderr}");
    }
}

/// `askuser serve --version` answers as `askuser --version` does (the version and the commit), as
/// the separate binary it replaces answered.
#[test]
fn names_its_version() {
    let whole = std::process::Command::new(support::BIN).arg("--version").output().unwrap();
    for flag in ["--version", "-V", "version"] {
        let output = std::process::Command::new(support::BIN).args(["serve", flag]).output().unwrap();
        assert_eq!(output.status.code(), Some(0));
        assert_eq!(
            String::from_utf8(output.stdout).unwrap(),
            String::from_utf8(whole.stdout.clone()).unwrap()
        );
    }
}

/// Guards the lease: a killed `ask --server` (SIGKILL: no withdrawal of its own) used to leave its
/// question answerable until its deadline (an hour), the page saying the answer was sent. With
/// `--lease 2`, the question is withdrawn a few seconds after the asker died, its page says the
/// assistant stopped waiting, and an answer is refused; on SQLite and on PostgreSQL.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_askers_question_is_withdrawn() {
    let dir = TempDir::new("killed");
    let mut stores = vec![format!("sqlite:{}", dir.0.join("pending.db").display())];
    let postgres = support::PostgresSchema::open("killed", "the PostgreSQL half").await;
    stores.extend(postgres.as_ref().map(|p| p.url.clone()));
    let token_file = dir.0.join("token");
    support::write_private(&token_file, "killed-token-0123456789abcdef");
    for store in stores {
        let mut server =
            support::serve_on(&store, &["--lease", "2", "--token-file", token_file.to_str().unwrap()]);
        let mut server_err = BufReader::new(server.stderr.take().unwrap());
        let url = line_after(&mut server_err, "askuser serve: listening on ").await;
        let mut asker = support::ask(&url)
            .args(["--token-file", token_file.to_str().unwrap(), "-"])
            .stdin(Stdio::piped())
            .spawn()
            .unwrap();
        tokio::io::AsyncWriteExt::write_all(&mut asker.stdin.take().unwrap(), ARGS.as_bytes()).await.unwrap();
        let mut asker_err = BufReader::new(asker.stderr.take().unwrap());
        let link = line_after(&mut asker_err, "askuser: answer at ").await;
        let http = reqwest::Client::new();
        let page = http.get(&link).send().await.unwrap().text().await.unwrap();
        let csrf = field(&page, "csrf").to_owned();
        // Alive and waiting, the asker keeps its question past several leases.
        tokio::time::sleep(Duration::from_secs(5)).await;
        assert!(
            http.get(&link).send().await.unwrap().text().await.unwrap().contains("Which plan?"),
            "{store}"
        );

        let pid = asker.id().unwrap().to_string();
        std::process::Command::new("kill").args(["-KILL", &pid]).status().unwrap();
        let killed = std::time::Instant::now();
        asker.wait().await.unwrap();
        let withdrawn = loop {
            let page = http.get(&link).send().await.unwrap().text().await.unwrap();
            if page.contains("The assistant stopped waiting for these answers.") {
                break killed.elapsed();
            }
            assert!(
                killed.elapsed() < Duration::from_secs(30),
                "still answerable 30 s after the kill ({store}): {page}"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        };
        eprintln!("{store}: withdrawn {withdrawn:?} after the kill");
        let answer = http
            .post(&link)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(format!("csrf={csrf}&q0=1&q1=other&q1_other=Weekly+backups&action=answer"))
            .send()
            .await
            .unwrap();
        let status = answer.status();
        let said = answer.text().await.unwrap();
        assert!(status.is_client_error(), "the answer is refused ({store}): {status} {said}");
        assert!(said.contains("The assistant stopped waiting for these answers."), "{said}");
        let token = std::fs::read_to_string(&token_file).unwrap();
        let id = link.split("/q/").nth(1).unwrap().split('/').next().unwrap();
        let record: serde_json::Value =
            crate::server::support::get_json(&format!("{url}/v1/questions/{id}"), token.trim()).await;
        assert_eq!(
            (record["state"].as_str(), &record["response"]),
            (Some("cancelled"), &serde_json::Value::Null),
            "{record}"
        );
        server.start_kill().unwrap();
        server.wait().await.unwrap();
    }
    if let Some(postgres) = postgres {
        postgres.drop_schema().await;
    }
}

/// libfaketime's preload library (Debian's `faketime` package), which moves a process's wall
/// clock (not its monotonic clock, with `FAKETIME_DONT_FAKE_MONOTONIC=1`) to what a file says:
/// `None`, saying `SKIPPED {what}`, without it (a failure under `CI=true`, whose `.ci/run`
/// installs it).
fn libfaketime(what: &str) -> Option<PathBuf> {
    let found = ["x86_64-linux-gnu", "aarch64-linux-gnu"]
        .iter()
        .map(|arch| PathBuf::from(format!("/usr/lib/{arch}/faketime/libfaketime.so.1")))
        .find(|path| path.is_file());
    if found.is_none() {
        askuser_testkit::skip(what, "libfaketime is not installed (Debian: apt-get install faketime)");
    }
    found
}

/// Guards the one clock: deadlines on PostgreSQL are decided by the database's clock, followed
/// through the monotonic clock, not by each server's wall clock. A server whose wall clock steps
/// 2 h ahead used to expire every waiting question within a second (its sweep thought them
/// overdue); one whose clock steps 2 h back kept taking answers to questions whose deadline had
/// passed. Here one `serve` runs under libfaketime, its wall clock stepped by writing to a file
/// while it runs: a question with 10 minutes left stays answerable through a +2 h step, and one
/// with 3 s left times out on time through a −2 h step and refuses a late answer.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stepped_wall_clock_moves_no_deadline() {
    let what = "a_stepped_wall_clock_moves_no_deadline";
    let Some(faketime) = libfaketime(what) else { return };
    let Some(postgres) = support::PostgresSchema::open("clock", what).await else { return };
    let dir = TempDir::new("clock");
    let token_file = dir.0.join("token");
    let token = "clock-token-0123456789abcdef";
    support::write_private(&token_file, token);
    let offset = dir.0.join("faketime");
    std::fs::write(&offset, "+0\n").unwrap();
    let mut server = support::serve_command(&postgres.url, &["--token-file", token_file.to_str().unwrap()])
        .env("LD_PRELOAD", &faketime)
        .env("FAKETIME_TIMESTAMP_FILE", &offset)
        .env("FAKETIME_NO_CACHE", "1")
        .env("FAKETIME_DONT_FAKE_MONOTONIC", "1")
        .spawn()
        .unwrap();
    let mut server_err = BufReader::new(server.stderr.take().unwrap());
    let url = line_after(&mut server_err, "askuser serve: listening on ").await;
    let http = reqwest::Client::new();
    let ask = |timeout_secs: u64| {
        let request = http
            .post(format!("{url}/v1/questions"))
            .bearer_auth(token)
            .json(&serde_json::json!({"arguments": ARGS, "timeout_secs": timeout_secs}));
        async move {
            let reply: serde_json::Value = request.send().await.unwrap().json().await.unwrap();
            reply["id"].as_str().unwrap_or_else(|| panic!("no id in {reply}")).to_owned()
        }
    };
    let state_of = |id: String| {
        let request = http.get(format!("{url}/v1/questions/{id}")).bearer_auth(token);
        async move {
            let record: serde_json::Value = request.send().await.unwrap().json().await.unwrap();
            record["state"].as_str().unwrap_or_else(|| panic!("no state in {record}")).to_owned()
        }
    };
    let answer = |id: String| {
        let request = http.post(format!("{url}/v1/questions/{id}/answer")).bearer_auth(token).json(
            &serde_json::json!({"answers": [
                {"header": "Plan", "selected": ["Large"]},
                {"header": "Extras", "selected": ["Backups"]}
            ]}),
        );
        async move { request.send().await.unwrap().status().as_u16() }
    };

    // Ten minutes to go; the wall clock steps 2 h ahead; three sweeps later it still waits.
    let ahead = ask(600).await;
    std::fs::write(&offset, "+2h\n").unwrap();
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(state_of(ahead.clone()).await, "pending", "a +2 h step expired a question with 10 min left");
    assert_eq!(answer(ahead.clone()).await, 200);
    assert_eq!(state_of(ahead).await, "answered");

    // Three seconds to go; the wall clock steps back 2 h: the question times out all the same,
    // and an answer after its deadline is never taken as in time: it is kept as late.
    std::fs::write(&offset, "+0\n").unwrap();
    let behind = ask(3).await;
    std::fs::write(&offset, "-2h\n").unwrap();
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(state_of(behind.clone()).await, "timed_out", "a −2 h step kept an overdue question open");
    assert_eq!(answer(behind.clone()).await, 200, "a late answer is kept");
    assert_eq!(state_of(behind).await, "late", "an answer past the deadline is never taken as in time");

    server.start_kill().unwrap();
    server.wait().await.unwrap();
    postgres.drop_schema().await;
}

/// One HTTP request a webhook double received: its request line, headers (names lowercased) and
/// body.
struct Received {
    line: String,
    headers: Vec<(String, String)>,
    body: String,
}

impl Received {
    fn header(&self, name: &str) -> &str {
        self.headers.iter().find(|(n, _)| n == name).map_or("", |(_, v)| v.as_str())
    }
}

/// A webhook double on loopback that answers every request 200 and sends what it got.
async fn webhook() -> (String, tokio::sync::mpsc::UnboundedReceiver<Received>) {
    use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/topic", listener.local_addr().unwrap());
    let (sender, received) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let sender = sender.clone();
            tokio::spawn(async move {
                let mut stream = BufReader::new(stream);
                loop {
                    let mut line = String::new();
                    if stream.read_line(&mut line).await.unwrap_or(0) == 0 {
                        return;
                    }
                    let mut headers = Vec::new();
                    loop {
                        let mut header = String::new();
                        stream.read_line(&mut header).await.unwrap();
                        let Some((name, value)) = header.trim_end().split_once(':') else { break };
                        headers.push((name.to_ascii_lowercase(), value.trim().to_owned()));
                    }
                    let length = headers
                        .iter()
                        .find(|(n, _)| n == "content-length")
                        .map_or(0, |(_, v)| v.parse::<usize>().unwrap());
                    let mut body = vec![0; length];
                    stream.read_exact(&mut body).await.unwrap();
                    let body = String::from_utf8(body).unwrap();
                    let _ = sender.send(Received { line: line.trim_end().to_owned(), headers, body });
                    stream
                        .get_mut()
                        .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")
                        .await
                        .unwrap();
                }
            });
        }
    });
    (url, received)
}

/// `serve --notify-format ntfy` with credentials from a file, and `ask --server --label`: the
/// notice says who asks and carries the credentials; its one-tap button answers the ask; the
/// answer is followed up on the same notification, which is then cleared.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ntfy_notices_with_credentials_and_a_one_tap_answer() {
    let dir = TempDir::new("ntfy");
    let (hook, mut received) = webhook().await;
    let credentials = dir.0.join("ntfy-credentials");
    support::write_private(&credentials, "phil:pw\n");
    let credentials_arg = credentials.to_str().unwrap();
    let args =
        ["--notify-url", &hook, "--notify-format", "ntfy", "--notify-credentials-file", credentials_arg];
    let mut server = serve(&dir.0, &args);
    let mut server_err = BufReader::new(server.stderr.take().unwrap());
    let url = line_after(&mut server_err, "askuser serve: listening on ").await;
    let call = r#"{"questions":[{"header":"Deploy","question":"Deploy now?",
        "options":[{"label":"Yes"},{"label":"Not yet"}]}]}"#;
    std::fs::write(dir.0.join("call.json"), call).unwrap();
    let ask = support::ask(&url)
        .args(["--label", "codex in ~/app", "--token-file"])
        .arg(dir.0.join("token"))
        .arg(dir.0.join("call.json"))
        .spawn()
        .unwrap();

    let mut next =
        async || tokio::time::timeout(Duration::from_secs(30), received.recv()).await.unwrap().unwrap();
    let asked = next().await;
    assert_eq!(asked.line, "POST /topic HTTP/1.1");
    assert_eq!(asked.header("authorization"), "Basic cGhpbDpwdw==");
    assert_eq!((asked.header("title"), asked.body.as_str()), ("codex in ~/app asks a question", "Deploy"));
    let actions: serde_json::Value = serde_json::from_str(asked.header("actions")).unwrap();
    assert_eq!(actions[2]["label"], "Not yet");
    let tap = actions[2]["url"].as_str().unwrap();
    let reply = reqwest::Client::new().post(tap).send().await.unwrap();
    assert_eq!(reply.status(), 200);

    let output =
        tokio::time::timeout(Duration::from_secs(30), ask.wait_with_output()).await.unwrap().unwrap();
    assert_eq!(String::from_utf8(output.stdout).unwrap(), "{\"Deploy\":[\"Not yet\"]}\n");
    let answered = next().await;
    assert_eq!(
        (answered.header("title"), answered.header("x-sequence-id")),
        ("Answered", asked.header("x-sequence-id"))
    );
    let cleared = next().await;
    assert_eq!(cleared.line, format!("PUT /topic/{}/clear HTTP/1.1", asked.header("x-sequence-id")));
    assert_eq!(cleared.header("authorization"), "Basic cGhpbDpwdw==");
    drop(server);
}

/// A port taken by another askuser serve is named as such.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_address_in_use_says_whether_askuser_serve_holds_it() {
    let dir = TempDir::new("in-use");
    let mut first = serve(&dir.0, &[]);
    let mut first_err = BufReader::new(first.stderr.take().unwrap());
    let url = line_after(&mut first_err, "askuser serve: listening on ").await;
    let address = url.trim_start_matches("http://").to_owned();
    let second = support::serve_command("memory:", &["--bind", &address]).output().await.unwrap();
    let said = String::from_utf8_lossy(&second.stderr);
    assert_ne!(second.status.code(), Some(0), "{said}");
    assert!(said.contains("the address is in use: an askuser serve is already running there"), "{said}");
}

/// Without `--config`, serve reads `~/.config/askuser/serve.toml` (`$XDG_CONFIG_HOME`) when it exists:
/// a mistake there stops it, naming the file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_config_is_read_when_present() {
    let dir = TempDir::new("default-config");
    std::fs::create_dir_all(dir.0.join("askuser")).unwrap();
    let config = dir.0.join("askuser/serve.toml");
    std::fs::write(&config, "[telegram\n").unwrap();
    let output =
        support::serve_command("memory:", &[]).env("XDG_CONFIG_HOME", &dir.0).output().await.unwrap();
    let said = String::from_utf8_lossy(&output.stderr);
    assert_ne!(output.status.code(), Some(0), "{said}");
    assert!(
        said.contains(&format!("askuser serve: config {} (the default place", config.display())),
        "{said}"
    );
    assert!(said.contains(&format!("{}: line 1, column", config.display())), "{said}");
}

/// `askuser serve` on a free port with its data directory (token, store) under `home`
/// (`XDG_DATA_HOME`); stderr piped, killed when dropped.
fn serve_with_data_home(home: &std::path::Path) -> tokio::process::Child {
    tokio::process::Command::new(support::BIN)
        .args(["serve", "--bind", "127.0.0.1:0"])
        .env("XDG_DATA_HOME", home)
        .env_remove("ASKUSER_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap()
}
