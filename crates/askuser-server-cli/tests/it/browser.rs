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
use tokio::io::BufReader;
use tokio::process::{Child, ChildStderr, Command};

use crate::support::{ARGS, BIN, TempDir, line_after, serve};

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
    let mut server = serve(dir);
    let mut server_err = BufReader::new(server.stderr.take().unwrap());
    let url = line_after(&mut server_err, "askuser serve: listening on ").await;
    std::fs::write(dir.join("call.json"), args).unwrap();
    let mut ask = Command::new(BIN)
        .args(["ask", "--server", &url, "--session", "billing", "--token-file"])
        .arg(dir.join("token"))
        .arg(dir.join("call.json"))
        .env_remove("ASKUSER_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut ask_err = BufReader::new(ask.stderr.take().unwrap());
    let link = line_after(&mut ask_err, "askuser: answer at ").await;
    Asked { ask, link, _server: server, _server_err: server_err }
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
