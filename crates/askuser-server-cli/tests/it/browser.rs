//! A real browser (headless Chromium over the `WebDriver` protocol) answers the page a real
//! `askuser-server ask --server` printed; the ask process prints the exact tool result.
//!
//! Needs `chromium` and `chromedriver` on `PATH` (Debian: `chromium chromium-driver`). Without
//! them the tests say so and skip; under `CI=true` they fail instead.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::json;
use tokio::io::{AsyncReadExt as _, BufReader};
use tokio::process::{Child, ChildStderr, Command};

use crate::support::{ARGS, TempDir, line_after, serve};

/// A batch that reads well on a phone, for the screenshot.
const PHONE_ARGS: &str = r#"{"questions":[
  {"header":"Database","question":"Which database should the billing service use?","options":[
    {"label":"PostgreSQL (Recommended)","description":"The team already runs it, with backups"},
    {"label":"SQLite","description":"One file; fine for a single instance"}]},
  {"header":"Launch","question":"What should ship in the first release?","multi_select":true,"options":[
    {"label":"Invoices","description":"Create, send and track invoices"},
    {"label":"Subscriptions","description":"Recurring plans"}]}]}"#;

fn on_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")
        .and_then(|paths| std::env::split_paths(&paths).map(|dir| dir.join(name)).find(|p| p.is_file()))
}

/// Chromium and chromedriver, or `None` after saying why the test skips (a failure under CI).
fn browser() -> Option<(PathBuf, PathBuf)> {
    let chromium =
        on_path("chromium").or_else(|| on_path("chromium-browser")).or_else(|| on_path("google-chrome"));
    let driver = on_path("chromedriver");
    if let (Some(chromium), Some(driver)) = (&chromium, &driver) {
        return Some((chromium.clone(), driver.clone()));
    }
    let what = "chromium and chromedriver are not on PATH (Debian: apt-get install chromium chromium-driver)";
    assert!(std::env::var("CI").as_deref() != Ok("true"), "{what}; CI must provide them");
    eprintln!("SKIPPING the real-browser test: {what}");
    None
}

struct Driver {
    process: Child,
    client: Client,
}

async fn start_driver(chromium: &Path, driver: &Path, width: u32, height: u32) -> Driver {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let process = Command::new(driver)
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut capabilities = serde_json::Map::new();
    // The window's size in CSS pixels, as a phone of that size shows it (device pixel ratio 2).
    capabilities.insert(
        "goog:chromeOptions".to_owned(),
        json!({
            "binary": chromium,
            "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars"],
            "mobileEmulation": {"deviceMetrics": {"width": width, "height": height, "pixelRatio": 2.0}},
        }),
    );
    let url = format!("http://127.0.0.1:{port}");
    let mut last_error = String::new();
    for _ in 0..100 {
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        match ClientBuilder::new(connector).capabilities(capabilities.clone()).connect(&url).await {
            Ok(client) => return Driver { process, client },
            Err(error) => last_error = error.to_string(),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("chromedriver did not start: {last_error}");
}

struct Asked {
    ask: Child,
    link: String,
    _server: Child,
    _server_err: BufReader<ChildStderr>,
}

/// Starts `serve` and `ask --server` on `args`; returns the ask process and the link it printed.
async fn serve_and_ask(dir: &Path, args: &str) -> Asked {
    let mut server = serve(dir, &[]);
    let mut server_err = BufReader::new(server.stderr.take().unwrap());
    let url = line_after(&mut server_err, "askuser serve: listening on ").await;
    let (ask, _, link) = ask_through(dir, &url, args, &[]).await;
    Asked { ask, link, _server: server, _server_err: server_err }
}

/// Starts `ask --server URL` on `args` (with `extra` options); returns it, its stderr (read up to
/// the link) and the link.
async fn ask_through(
    dir: &Path,
    url: &str,
    args: &str,
    extra: &[&str],
) -> (Child, BufReader<ChildStderr>, String) {
    std::fs::write(dir.join("call.json"), args).unwrap();
    let mut ask = crate::support::ask(url)
        .args(["--session", "billing", "--token-file"])
        .arg(dir.join("token"))
        .args(extra)
        .arg(dir.join("call.json"))
        .spawn()
        .unwrap();
    let mut ask_err = BufReader::new(ask.stderr.take().unwrap());
    let link = line_after(&mut ask_err, "askuser: answer at ").await;
    (ask, ask_err, link)
}

async fn result_of(ask: Child) -> (Option<i32>, String) {
    let output =
        tokio::time::timeout(Duration::from_secs(30), ask.wait_with_output()).await.unwrap().unwrap();
    (output.status.code(), String::from_utf8(output.stdout).unwrap())
}

async fn click(client: &Client, css: &str) {
    client.find(Locator::Css(css)).await.unwrap_or_else(|e| panic!("{css}: {e}")).click().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_browser_answers_the_page_ask_printed() {
    let Some((chromium, driver)) = browser() else { return };
    let dir = TempDir::new("browser");
    let asked = serve_and_ask(&dir.0, ARGS).await;
    let Driver { process: _driver, client } = start_driver(&chromium, &driver, 1000, 900).await;

    client.goto(&asked.link).await.unwrap();
    let legend = client.find(Locator::Css("legend")).await.unwrap().text().await.unwrap();
    assert!(legend.contains("Which plan?"), "{legend}");
    click(&client, r#"input[name="q0"][value="1"]"#).await;
    click(&client, r#"input[name="q1"][value="other"]"#).await;
    client
        .find(Locator::Css(r#"input[name="q1_other"]"#))
        .await
        .unwrap()
        .send_keys("Nightly \"snapshots\" & <logs>")
        .await
        .unwrap();
    click(&client, r#"button[value="answer"]"#).await;
    let heading = client.wait().for_element(Locator::Css("h1")).await.unwrap().text().await.unwrap();
    assert_eq!(heading, "Thank you");

    let (status, stdout) = result_of(asked.ask).await;
    assert_eq!(stdout, "{\"Plan\":[\"Large\"],\"Extras\":[\"Nightly \\\"snapshots\\\" & <logs>\"]}\n");
    assert_eq!(status, Some(0));
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_phone_sized_window_answers_and_the_screenshot_is_kept() {
    let Some((chromium, driver)) = browser() else { return };
    let dir = TempDir::new("phone");
    let asked = serve_and_ask(&dir.0, PHONE_ARGS).await;
    let Driver { process: _driver, client } = start_driver(&chromium, &driver, 390, 844).await;

    client.goto(&asked.link).await.unwrap();
    click(&client, r#"input[name="q0"][value="0"]"#).await;
    click(&client, r#"input[name="q1"][value="0"]"#).await;
    click(&client, r#"input[name="q1"][value="1"]"#).await;
    // Nothing overflows sideways on a phone.
    let fits = client
        .execute("return document.documentElement.scrollWidth <= window.innerWidth;", vec![])
        .await
        .unwrap();
    assert_eq!(fits, json!(true));
    let width = client.execute("return window.innerWidth;", vec![]).await.unwrap();
    assert_eq!(width, json!(390));
    let png = client.screenshot().await.unwrap();
    assert!(png.starts_with(b"\x89PNG"));
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR")).join("screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    std::fs::write(shots.join("answer-phone.png"), &png).unwrap();
    // `ASKUSER_UPDATE_SCREENSHOT=1` refreshes the one the README shows.
    if std::env::var("ASKUSER_UPDATE_SCREENSHOT").as_deref() == Ok("1") {
        let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/img/answer-phone.png");
        std::fs::write(docs, &png).unwrap();
    }
    click(&client, r#"button[value="answer"]"#).await;
    client.wait().for_element(Locator::Css("h1")).await.unwrap();
    let (status, stdout) = result_of(asked.ask).await;
    assert_eq!(
        stdout,
        "{\"Database\":[\"PostgreSQL (Recommended)\"],\"Launch\":[\"Invoices\",\"Subscriptions\"]}\n"
    );
    assert_eq!(status, Some(0));
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_question_text_is_shown_as_text_and_nothing_runs() {
    let Some((chromium, driver)) = browser() else { return };
    let dir = TempDir::new("hostile");
    let hostile = json!({"questions":[{
        "header": "<script>",
        "question": "<script>window.pwned = 1</script> \"><img src=x onerror=\"window.pwned = 2\">",
        "options": [
            {"label": "\"><img src=x onerror=\"window.pwned = 3\">", "description": "</label><script>window.pwned = 4</script>"},
            {"label": "fine"}]}]})
    .to_string();
    let asked = serve_and_ask(&dir.0, &hostile).await;
    let Driver { process: _driver, client } = start_driver(&chromium, &driver, 1000, 900).await;
    client.goto(&asked.link).await.unwrap();
    let checked = client
        .execute(
            "return [typeof window.pwned, document.querySelectorAll('main img, main script').length,
                     document.querySelector('legend').textContent];",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(checked[0], "undefined", "a script ran: {checked}");
    assert_eq!(checked[1], 0, "markup from the question reached the DOM: {checked}");
    let legend = checked[2].as_str().unwrap();
    assert!(legend.contains("<script>window.pwned = 1</script>") && legend.contains("onerror="), "{legend}");
    click(&client, r#"input[name="q0"][value="1"]"#).await;
    click(&client, r#"button[value="answer"]"#).await;
    client.wait().for_element(Locator::Css("h1")).await.unwrap();
    let (status, stdout) = result_of(asked.ask).await;
    assert_eq!((status, stdout.as_str()), (Some(0), "{\"<script>\":[\"fine\"]}\n"));
    client.close().await.unwrap();
}

const SECRET: &str = "brwsr-S3CRET-5b2e91";

/// Everything a process still has to say on `stderr`, and its exit status and stdout.
async fn finish(ask: Child, mut stderr: BufReader<ChildStderr>) -> (Option<i32>, String, String) {
    let mut rest = String::new();
    let output = tokio::time::timeout(Duration::from_secs(30), async {
        let (output, read) = tokio::join!(ask.wait_with_output(), stderr.read_to_string(&mut rest));
        read.unwrap();
        output.unwrap()
    })
    .await
    .unwrap();
    (output.status.code(), String::from_utf8(output.stdout).unwrap(), rest)
}

/// A text question and a choice without "Other…": the page's fields, a blank answer refused with
/// the choice kept, then the answer and the exact extended result.
async fn answer_a_text_question(client: &Client, dir: &Path, url: &str) {
    // A text question and a choice without "Other…".
    let text_args = r#"{"questions":[
        {"kind":"text","id":"why","header":"Reason","question":"Why do you need the deploy?"},
        {"header":"Plan","question":"Which plan?","allow_other":false,
         "options":[{"label":"Small"},{"label":"Large","default":true}]}]}"#;
    let (ask, ask_err, link) = ask_through(dir, url, text_args, &["--profile", "extended"]).await;
    client.goto(&link).await.unwrap();
    let shown = client
        .execute(
            "return [document.querySelector('textarea[name=q0_text]').maxLength,
                     document.querySelectorAll('input[name=q1][value=other]').length,
                     document.querySelector('input[name=q1][value=\"1\"]').checked];",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(shown, json!([2000, 0, true]), "maxlength, no Other…, the default pre-checked");
    click(client, r#"input[name="q1"][value="0"]"#).await;
    // Blank (spaces pass the browser's `required`): the server refuses, the choice stays.
    client.find(Locator::Css("textarea")).await.unwrap().send_keys("   ").await.unwrap();
    click(client, r#"button[value="answer"]"#).await;
    let error = client.wait().for_element(Locator::Css(".error")).await.unwrap().text().await.unwrap();
    assert!(error.contains("write an answer"), "{error}");
    let kept = client
        .execute("return document.querySelector('input[name=q1][value=\"0\"]').checked;", vec![])
        .await
        .unwrap();
    assert_eq!(kept, json!(true));
    let area = client.find(Locator::Css("textarea")).await.unwrap();
    area.clear().await.unwrap();
    area.send_keys("Release on Friday").await.unwrap();
    click(client, r#"button[value="answer"]"#).await;
    assert_eq!(
        client.wait().for_element(Locator::Css("h1")).await.unwrap().text().await.unwrap(),
        "Thank you"
    );
    let (status, stdout, _) = finish(ask, ask_err).await;
    assert_eq!(status, Some(0));
    assert_eq!(
        stdout,
        "{\"status\":\"answered\",\"answered_by\":\"user\",\"answers\":[\
         {\"id\":\"why\",\"header\":\"Reason\",\"selected\":[],\"other_text\":\"Release on Friday\"},\
         {\"id\":\"q1\",\"header\":\"Plan\",\"selected\":[\"Small\"],\"other_text\":null}]}\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_browser_answers_text_and_secret_questions_and_the_secret_goes_only_to_the_file() {
    let Some((chromium, driver)) = browser() else { return };
    let dir = TempDir::new("extended");
    let mut server = serve(&dir.0, &["--profile", "extended"]);
    let mut server_err = BufReader::new(server.stderr.take().unwrap());
    let url = line_after(&mut server_err, "askuser serve: listening on ").await;
    let Driver { process: _driver, client } = start_driver(&chromium, &driver, 390, 844).await;

    answer_a_text_question(&client, &dir.0, &url).await;

    // A secret question, with the server's event stream listened to meanwhile.
    let token = std::fs::read_to_string(dir.0.join("token")).unwrap();
    let http = reqwest::Client::new();
    let mut events = http.get(format!("{url}/v1/events")).bearer_auth(token.trim()).send().await.unwrap();
    assert_eq!(events.status(), 200);
    let secret_args = r#"{"questions":[{"kind":"secret","header":"Token","question":"Paste the deploy token.",
        "secret_name":"DEPLOY_TOKEN","purpose":"To deploy the release"}]}"#;
    let secret_file = dir.0.join("secrets.env");
    let secret_file_arg = secret_file.display().to_string();
    let (ask, ask_err, link) =
        ask_through(&dir.0, &url, secret_args, &["--profile", "extended", "--secret-file", &secret_file_arg])
            .await;
    client.goto(&link).await.unwrap();
    let field = client.find(Locator::Css(r#"input[name="q0_secret"]"#)).await.unwrap();
    assert_eq!(field.attr("type").await.unwrap().as_deref(), Some("password"));
    assert_eq!(field.attr("autocomplete").await.unwrap().as_deref(), Some("off"));
    field.send_keys(SECRET).await.unwrap();
    click(&client, r#"button[value="answer"]"#).await;
    client.wait().for_element(Locator::Css("h1")).await.unwrap();
    let done = client.find(Locator::Css("main")).await.unwrap().text().await.unwrap();
    assert!(done.contains("Thank you") && done.contains("session:DEPLOY_TOKEN"), "{done}");
    assert!(!done.contains(SECRET), "{done}");
    let page = client.source().await.unwrap();
    assert!(!page.contains(SECRET));
    let (status, stdout, stderr) = finish(ask, ask_err).await;
    assert_eq!(status, Some(0), "{stderr}");
    assert!(stdout.contains(r#""secret_ref":"session:DEPLOY_TOKEN""#), "{stdout}");
    assert!(!stdout.contains(SECRET) && !stderr.contains(SECRET), "{stdout}{stderr}");
    assert_eq!(std::fs::read_to_string(&secret_file).unwrap(), format!("DEPLOY_TOKEN={SECRET}\n"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        assert_eq!(std::fs::metadata(&secret_file).unwrap().permissions().mode() & 0o777, 0o600);
    }

    // The event stream saw the question asked and answered, never the value.
    let mut seen = String::new();
    while seen.matches("event: answered").count() < 1 || !seen.contains("event: pending") {
        let chunk =
            tokio::time::timeout(Duration::from_secs(10), events.chunk()).await.unwrap().unwrap().unwrap();
        seen.push_str(std::str::from_utf8(&chunk).unwrap());
    }
    assert!(!seen.contains(SECRET), "{seen}");
    // No store row holds it: the SQLite database and its write-ahead log, byte for byte.
    let mut stored = 0;
    for entry in std::fs::read_dir(&dir.0).unwrap() {
        let path = entry.unwrap().path();
        if path.file_name().unwrap().to_string_lossy().starts_with("pending.db") {
            let bytes = std::fs::read(&path).unwrap();
            assert!(
                !bytes.windows(SECRET.len()).any(|w| w == SECRET.as_bytes()),
                "{} holds it",
                path.display()
            );
            stored += bytes.len();
        }
    }
    assert!(stored > 0, "the store's files were read");
    // Nor the server's log (read whole after it stops).
    drop(events);
    server.start_kill().unwrap();
    let mut log = String::new();
    tokio::time::timeout(Duration::from_secs(10), server_err.read_to_string(&mut log))
        .await
        .unwrap()
        .unwrap();
    assert!(log.contains("/q/{id}/{token}"), "the log has the requests: {log}");
    assert!(!log.contains(SECRET), "{log}");
    client.close().await.unwrap();
}
