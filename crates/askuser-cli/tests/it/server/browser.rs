//! A real browser (headless Chromium over the `WebDriver` protocol) answers the page a real
//! `askuser ask --server` printed; the ask process prints the exact tool result.
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

use crate::server::support::{ARGS, TempDir, line_after, serve};

/// A batch that reads well on a phone, for the screenshot.
const PHONE_ARGS: &str = r#"{"questions":[
  {"header":"Database","question":"Which database should the `billing` service use? It keeps invoices and payment events for about 2,000 customers.","options":[
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
    start_driver_with(chromium, driver, (width, height), Look::default()).await
}

/// How the browser is set up: a dark colour scheme, the person's time zone and language.
#[derive(Default, Clone, Copy)]
struct Look {
    dark: bool,
    time_zone: Option<&'static str>,
}

async fn start_driver_with(
    chromium: &Path,
    driver: &Path,
    (width, height): (u32, u32),
    look: Look,
) -> Driver {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut command = Command::new(driver);
    // Chromium takes its time zone from the environment it inherits.
    if let Some(zone) = look.time_zone {
        command.env("TZ", zone);
    }
    let mut args = vec![
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--hide-scrollbars",
    ];
    if look.dark {
        args.extend(["--force-dark-mode", "--blink-settings=preferredColorScheme=0"]);
    }
    let process = command
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
            "args": args,
            // The person's languages, which live.js formats times in: en-GB's 24-hour clock.
            "prefs": {"intl.accept_languages": "en-GB"},
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
    let mut ask = crate::server::support::ask(url)
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

/// The text of what `locator` finds once the page a click sent has loaded. Until it has, a
/// command may fail ("aborted by navigation") or find nothing, so each is tried again for 10 s.
/// A heading the next page must show is found by its text: until the navigation lands (a click
/// may return before it starts, on a loaded machine), the old page's heading is still there.
async fn text_after_navigation(client: &Client, locator: Locator<'_>) -> String {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let found = match client.find(locator).await {
            Ok(element) => element.text().await,
            Err(e) => Err(e),
        };
        match found {
            Ok(text) => return text,
            Err(e) if std::time::Instant::now() >= deadline => panic!("{locator:?} after 10 s: {e}"),
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
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
    let other = client.find(Locator::Css(r#"input[name="q1_other"]"#)).await.unwrap();
    // The cap of every surface (askuser_core::MAX_CUSTOM_CHARS).
    assert_eq!(other.attr("maxlength").await.unwrap().as_deref(), Some("2000"));
    other.send_keys("Nightly \"snapshots\" & <logs>").await.unwrap();
    click(&client, r#"button[value="answer"]"#).await;
    text_after_navigation(&client, Locator::XPath("//h1[text()='Thank you']")).await;

    let (status, stdout) = result_of(asked.ask).await;
    assert_eq!(stdout, "{\"Plan\":[\"Large\"],\"Extras\":[\"Nightly \\\"snapshots\\\" & <logs>\"]}\n");
    assert_eq!(status, Some(0));
    client.close().await.unwrap();
}

/// What a phone shows of the page in one colour scheme: nothing overflows sideways, field
/// borders stand out (WCAG 1.4.11: 3:1 against the page), each question (its legend) sits inside
/// its box; the screenshot, kept as `name`.
async fn check_the_phone_page(client: &Client, dark: bool, name: &str) {
    let seen = client
        .execute(
            "const rgb = c => c.match(/[\\d.]+/g).slice(0, 3).map(Number);
             const lum = c => { const [r, g, b] = rgb(c).map(v => { v /= 255;
                 return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
                 return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
             const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
             const page = getComputedStyle(document.body).backgroundColor;
             const field = getComputedStyle(document.querySelector('input.other')).borderTopColor;
             const inside = [...document.querySelectorAll('fieldset')].every(f =>
                 f.querySelector('legend').getBoundingClientRect().top >= f.getBoundingClientRect().top + 4);
             return [matchMedia('(prefers-color-scheme: dark)').matches, ratio(field, page),
                     document.documentElement.scrollWidth <= window.innerWidth, window.innerWidth, inside,
                     document.querySelector('.left').textContent,
                     document.querySelector('.left').classList.contains('urgent')];",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(seen[0], json!(dark), "the colour scheme: {seen}");
    assert!(seen[1].as_f64().unwrap() >= 3.0, "field border contrast below 3:1: {seen}");
    assert_eq!(seen[2], json!(true), "nothing overflows sideways: {seen}");
    assert_eq!(seen[3], json!(390));
    assert_eq!(seen[4], json!(true), "a question's legend cuts through its box's border: {seen}");
    assert!(seen[5].as_str().unwrap().ends_with(" min left"), "{seen}");
    assert_eq!(seen[6], json!(false), "minutes left are not urgent: {seen}");
    let png = client.screenshot().await.unwrap();
    assert!(png.starts_with(b"\x89PNG"));
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR")).join("screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    std::fs::write(shots.join(name), &png).unwrap();
    // `ASKUSER_UPDATE_SCREENSHOT=1` refreshes the ones the README and docs/server.md show.
    if std::env::var("ASKUSER_UPDATE_SCREENSHOT").as_deref() == Ok("1") {
        let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/img").join(name);
        std::fs::write(docs, &png).unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_phone_sized_window_answers_and_the_screenshot_is_kept() {
    let Some((chromium, driver)) = browser() else { return };
    let dir = TempDir::new("phone");
    let asked = serve_and_ask(&dir.0, PHONE_ARGS).await;
    for (dark, name) in [(false, "answer-phone.png"), (true, "answer-phone-dark.png")] {
        let Driver { process: _driver, client } =
            start_driver_with(&chromium, &driver, (390, 844), Look { dark, time_zone: None }).await;
        client.goto(&asked.link).await.unwrap();
        click(&client, r#"input[name="q0"][value="0"]"#).await;
        click(&client, r#"input[name="q1"][value="0"]"#).await;
        click(&client, r#"input[name="q1"][value="1"]"#).await;
        check_the_phone_page(&client, dark, name).await;
        if dark {
            click(&client, r#"button[value="answer"]"#).await;
            text_after_navigation(&client, Locator::Css("h1")).await;
        }
        client.close().await.unwrap();
    }
    let (status, stdout) = result_of(asked.ask).await;
    assert_eq!(
        stdout,
        "{\"Database\":[\"PostgreSQL (Recommended)\"],\"Launch\":[\"Invoices\",\"Subscriptions\"]}\n"
    );
    assert_eq!(status, Some(0));
}

/// In the person's time zone (Chromium's, from `TZ`), a question that expires in 50 s reads
/// with seconds and counts down; declining takes a second, confirming step.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn times_are_local_the_countdown_runs_and_declining_is_confirmed() {
    let Some((chromium, driver)) = browser() else { return };
    let dir = TempDir::new("countdown");
    let mut server = serve(&dir.0, &[]);
    let mut server_err = BufReader::new(server.stderr.take().unwrap());
    let url = line_after(&mut server_err, "askuser serve: listening on ").await;
    let (ask, ask_err, link) = ask_through(&dir.0, &url, ARGS, &["--timeout", "50"]).await;
    let look = Look { dark: false, time_zone: Some("Asia/Kolkata") };
    let Driver { process: _driver, client } = start_driver_with(&chromium, &driver, (390, 844), look).await;
    client.goto(&link).await.unwrap();
    let times = client
        .execute(
            "return [...document.querySelectorAll('time')].map(t => [t.getAttribute('datetime'), t.textContent]);",
            vec![],
        )
        .await
        .unwrap();
    let times = times.as_array().unwrap();
    assert_eq!(times.len(), 2, "asked and expiry: {times:?}");
    for time in times {
        let (utc, shown) = (time[0].as_str().unwrap(), time[1].as_str().unwrap());
        // India is UTC+05:30 all year.
        let minutes = utc[11..13].parse::<u32>().unwrap() * 60 + utc[14..16].parse::<u32>().unwrap() + 330;
        let local = format!("{}:{:02}:{}", minutes / 60 % 24, minutes % 60, &utc[17..19]);
        assert!(
            shown.split([' ', ',']).any(|word| word == local) && !shown.contains("UTC"),
            "{utc} shown as {shown:?}, not {local}"
        );
    }
    assert_ne!(times[0][1], times[1][1]);
    let left = || async {
        let text = client.find(Locator::Css(".left")).await.unwrap().text().await.unwrap();
        let secs = text.strip_suffix(" s left").unwrap_or_else(|| panic!("{text:?}"));
        secs.parse::<u32>().unwrap()
    };
    let first = left().await;
    tokio::time::sleep(Duration::from_millis(2100)).await;
    let second = left().await;
    assert!(first <= 50 && second < first, "the countdown runs: {first} s, then {second} s");
    // Under a minute left: the countdown stands out, as the terminal's does; the decline control
    // is a touch target of at least 44 px.
    let look = client
        .execute(
            "const left = document.querySelector('.left');
             return [left.classList.contains('urgent'), getComputedStyle(left).fontWeight,
                     document.querySelector('details.decline summary').getBoundingClientRect().height];",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(look[0], json!(true), "{look}");
    assert!(look[1].as_str().unwrap().parse::<u32>().unwrap() >= 600, "{look}");
    assert!(look[2].as_f64().unwrap() >= 44.0, "the decline control: {look}");

    let decline = client.find(Locator::Css(r#"button[value="decline"]"#)).await.unwrap();
    assert!(!decline.is_displayed().await.unwrap(), "declining takes a second step");
    click(&client, "details.decline summary").await;
    assert!(decline.is_displayed().await.unwrap());
    decline.click().await.unwrap();
    text_after_navigation(&client, Locator::XPath("//h1[text()='Declined']")).await;
    let (status, _, stderr) = finish(ask, ask_err).await;
    assert_eq!(status, Some(1), "{stderr}");
    client.close().await.unwrap();
}

/// A batch with three wrong answers: every problem at once, beside its field and in a summary
/// linking to it, nothing typed lost; then a multi-line answer (sent by the browser with CRLF)
/// arrives with its lines.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_problem_at_once_then_a_multi_line_answer_arrives_whole() {
    let Some((chromium, driver)) = browser() else { return };
    let dir = TempDir::new("problems");
    let mut server = serve(&dir.0, &["--profile", "extended"]);
    let mut server_err = BufReader::new(server.stderr.take().unwrap());
    let url = line_after(&mut server_err, "askuser serve: listening on ").await;
    let args = r#"{"questions":[
        {"kind":"text","id":"why","header":"Reason","question":"Why do you need the deploy?"},
        {"header":"Plan","question":"Which plan?","options":[{"label":"Small"},{"label":"Large"}]},
        {"header":"Extras","question":"Which extras?","multi_select":true,
         "options":[{"label":"Backups"},{"label":"Support"}]}]}"#;
    let (ask, ask_err, link) = ask_through(&dir.0, &url, args, &["--profile", "extended"]).await;
    let Driver { process: _driver, client } = start_driver(&chromium, &driver, 390, 844).await;
    client.goto(&link).await.unwrap();
    client.find(Locator::Css("textarea")).await.unwrap().send_keys("   ").await.unwrap();
    click(&client, r#"input[name="q2"][value="0"]"#).await;
    client.find(Locator::Css(r#"input[name="q2_other"]"#)).await.unwrap().send_keys("a cake").await.unwrap();
    click(&client, r#"button[value="answer"]"#).await;
    text_after_navigation(&client, Locator::Css(".error a")).await;
    let seen = client
        .execute(
            "const links = [...document.querySelectorAll('.error a')];
             const fields = links.map(a => {
                 const box = document.querySelector(a.getAttribute('href'));
                 const inputs = [...box.querySelectorAll('input, textarea')];
                 return [a.getAttribute('href'), a.textContent,
                         inputs.every(i => i.getAttribute('aria-invalid') === 'true'),
                         inputs.map(i => document.getElementById(i.getAttribute('aria-describedby')).textContent)
                               .filter((t, n, all) => all.indexOf(t) === n)];
             });
             return [fields, document.querySelector('input[name=q2_other]').value,
                     document.querySelector('input[name=q2][value=\"0\"]').checked];",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(
        seen,
        json!([
            [
                ["#q0", "“Reason”: Write an answer.", true, ["Write an answer."]],
                ["#q1", "“Plan”: Pick an answer.", true, ["Pick an answer."]],
                [
                    "#q2",
                    "“Extras”: You wrote your own answer but did not choose “Other…”: choose it, or clear the text.",
                    true,
                    ["You wrote your own answer but did not choose “Other…”: choose it, or clear the text."]
                ]
            ],
            "a cake",
            true
        ])
    );
    let area = client.find(Locator::Css("textarea")).await.unwrap();
    area.clear().await.unwrap();
    area.send_keys("Release on Friday\nafter the freeze").await.unwrap();
    click(&client, r#"input[name="q1"][value="1"]"#).await;
    client.find(Locator::Css(r#"input[name="q2_other"]"#)).await.unwrap().clear().await.unwrap();
    click(&client, r#"button[value="answer"]"#).await;
    text_after_navigation(&client, Locator::XPath("//h1[text()='Thank you']")).await;
    let (status, stdout, stderr) = finish(ask, ask_err).await;
    assert_eq!(status, Some(0), "{stderr}");
    assert_eq!(
        stdout,
        "{\"status\":\"answered\",\"answered_by\":\"user\",\"answers\":[\
         {\"id\":\"why\",\"header\":\"Reason\",\"selected\":[],\"other_text\":\"Release on Friday\\nafter the freeze\"},\
         {\"id\":\"q1\",\"header\":\"Plan\",\"selected\":[\"Large\"],\"other_text\":null},\
         {\"id\":\"q2\",\"header\":\"Extras\",\"selected\":[\"Backups\"],\"other_text\":null}]}\n"
    );
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_question_text_is_shown_as_text_and_nothing_runs() {
    let Some((chromium, driver)) = browser() else { return };
    let dir = TempDir::new("hostile");
    let hostile = json!({"questions":[{
        "header": "<script>",
        "question": "<script>window.pwned = 1</script> \"><img src=x onerror=\"window.pwned = 2\"> \
                     `<img src=x onerror=\"window.pwned = 5\">`\n```html\n<script>window.pwned = 6</script>\n```",
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
                     document.querySelector('legend').textContent,
                     [...document.querySelectorAll('legend code')].map(c => c.textContent)];",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(checked[0], "undefined", "a script ran: {checked}");
    assert_eq!(checked[1], 0, "markup from the question reached the DOM: {checked}");
    let legend = checked[2].as_str().unwrap();
    assert!(legend.contains("<script>window.pwned = 1</script>") && legend.contains("onerror="), "{legend}");
    // Code spans and blocks are code, their content text.
    assert_eq!(
        checked[3],
        json!(["<img src=x onerror=\"window.pwned = 5\">", "<script>window.pwned = 6</script>"]),
        "{checked}"
    );
    click(&client, r#"input[name="q0"][value="1"]"#).await;
    click(&client, r#"button[value="answer"]"#).await;
    text_after_navigation(&client, Locator::Css("h1")).await;
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
    let error = text_after_navigation(client, Locator::Css(".error")).await;
    assert!(error.contains("Write an answer"), "{error}");
    let kept = client
        .execute("return document.querySelector('input[name=q1][value=\"0\"]').checked;", vec![])
        .await
        .unwrap();
    assert_eq!(kept, json!(true));
    let area = client.find(Locator::Css("textarea")).await.unwrap();
    area.clear().await.unwrap();
    area.send_keys("Release on Friday").await.unwrap();
    click(client, r#"button[value="answer"]"#).await;
    text_after_navigation(client, Locator::XPath("//h1[text()='Thank you']")).await;
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
    text_after_navigation(&client, Locator::Css("h1")).await;
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

/// An expired question's page still shows what was asked (read-only, late answers off); a login
/// leads from `/` to the answered questions and out again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_page_shows_what_was_asked_and_the_home_page_leads_on() {
    let Some((chromium, driver)) = browser() else { return };
    let dir = TempDir::new("expired");
    let mut server = serve(&dir.0, &["--late-days", "0"]);
    let mut server_err = BufReader::new(server.stderr.take().unwrap());
    let url = line_after(&mut server_err, "askuser serve: listening on ").await;
    let (ask, ask_err, link) = ask_through(&dir.0, &url, ARGS, &["--timeout", "1"]).await;
    let (status, _, stderr) = finish(ask, ask_err).await;
    assert_eq!(status, Some(124), "{stderr}");
    let Driver { process: _driver, client } = start_driver(&chromium, &driver, 390, 844).await;
    client.goto(&link).await.unwrap();
    // The page may reload itself once as it hears the question expired: read it again then.
    let mut main = String::new();
    for _ in 0..20 {
        if let Ok(element) = client.find(Locator::Css("main")).await
            && let Ok(text) = element.text().await
            && text.contains("Expired")
        {
            main = text;
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    for shown in ["Expired", "What was asked", "Which plan?", "Small", "Which extras?", "Support"] {
        assert!(main.contains(shown), "{shown} not in {main}");
    }
    assert!(client.find(Locator::Css("form")).await.is_err(), "nothing to send any more");

    client.goto(&format!("{url}/login")).await.unwrap();
    let token = std::fs::read_to_string(dir.0.join("token")).unwrap();
    client.find(Locator::Css("#token")).await.unwrap().send_keys(token.trim()).await.unwrap();
    click(&client, r#"button[type="submit"]"#).await;
    // Each step waits for the next page's heading: the one before may still be there.
    text_after_navigation(&client, Locator::XPath("//h1[text()='Waiting for your answer']")).await;
    client.find(Locator::LinkText("Answered questions")).await.unwrap().click().await.unwrap();
    text_after_navigation(&client, Locator::XPath("//h1[text()='Answered']")).await;
    assert_eq!(client.current_url().await.unwrap().path(), "/history");
    let main = client.find(Locator::Css("main")).await.unwrap().text().await.unwrap();
    assert!(main.contains("Nothing was answered yet"), "{main}");
    client.find(Locator::LinkText("Waiting questions")).await.unwrap().click().await.unwrap();
    text_after_navigation(&client, Locator::XPath("//h1[text()='Waiting for your answer']")).await;
    click(&client, "form button.secondary").await;
    text_after_navigation(&client, Locator::XPath("//h1[text()='Log in']")).await;
    client.goto(&format!("{url}/")).await.unwrap();
    text_after_navigation(&client, Locator::XPath("//h1[text()='Log in']")).await;
    assert_eq!(client.current_url().await.unwrap().path(), "/login", "logged out");
    client.close().await.unwrap();
}
