//! The pages, in process: links, login, forms, CSRF, misfit and double submissions, expiry,
//! hostile content, live updates, size.

use std::time::Duration;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use http_body_util::BodyExt as _;
use serde_json::json;

use crate::support::{Harness, Reply, TOKEN, api, ask, harness, harness_with, send};

pub(crate) fn get(uri: &str, cookie: Option<&str>) -> Request<Body> {
    let mut builder = Request::get(uri);
    if let Some(cookie) = cookie {
        builder = builder.header(header::COOKIE, cookie);
    }
    builder.body(Body::empty()).unwrap()
}

pub(crate) fn post_form(uri: &str, cookie: Option<&str>, fields: &[(&str, &str)]) -> Request<Body> {
    let body: Vec<String> = fields.iter().map(|(k, v)| format!("{}={}", encode(k), encode(v))).collect();
    let mut builder = Request::post(uri).header(header::CONTENT_TYPE, "application/x-www-form-urlencoded");
    if let Some(cookie) = cookie {
        builder = builder.header(header::COOKIE, cookie);
    }
    builder.body(Body::from(body.join("&"))).unwrap()
}

fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| if b.is_ascii_alphanumeric() { char::from(b).to_string() } else { format!("%{b:02X}") })
        .collect()
}

/// The path of a page link (without the public URL).
pub(crate) fn link_of(h: &Harness, id: &str) -> String {
    h.server.page_url(id).strip_prefix("http://phone.test:8765").unwrap().to_owned()
}

pub(crate) fn csrf_of(page: &Reply) -> String {
    let start = page.text.find(r#"name="csrf" value=""#).expect("a CSRF field") + 19;
    page.text[start..start + 32].to_owned()
}

pub(crate) async fn record_state(h: &Harness, id: &str) -> String {
    h.store.get(id).await.unwrap().unwrap().state().as_str().to_owned()
}

/// An approval's page (docs/contract.md §17): the command as code, the two options, nothing checked, and
/// "Other…" read as what it does there: deny, with the reason the agent reads.
#[tokio::test]
async fn an_approval_shows_the_command_as_code_and_a_deny_with_a_reason() {
    let h = harness();
    let arguments = json!({"questions": [{"header": "Allow Bash?",
        "question": "Claude Code in ~/app asks to run a command:\n```\nrm -rf build <b>\n```",
        "options": [{"label": "Allow once"}, {"label": "Deny"}]}]});
    let id = ask(&h.app, json!({"tool_name": "askuser_approval", "arguments": arguments})).await;
    let page = send(&h.app, get(&link_of(&h, &id), None)).await;
    let html = &page.text;
    for expected in [
        r#"<code class="block">rm -rf build &#60;b&#62;</code>"#,
        r#"type="radio" name="q0" value="0"><span><span class="label">Allow once</span>"#,
        r#"type="radio" name="q0" value="1"><span><span class="label">Deny</span>"#,
        "Deny, with a reason…",
        r#"placeholder="Why (the agent reads it)" aria-label="Your reason to deny Allow Bash?""#,
    ] {
        assert!(html.contains(expected), "missing {expected:?} in\n{html}");
    }
    assert!(!html.contains("Other…") && !html.contains(" checked"), "{html}");
}

#[tokio::test]
async fn a_link_shows_the_batch_as_a_small_form_from_the_assistant() {
    let h = harness();
    let id = ask(&h.app, json!({"session_id": "s1"})).await;
    let page = send(&h.app, get(&link_of(&h, &id), None)).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.headers[header::CONTENT_TYPE].to_str().unwrap().starts_with("text/html"));
    let html = &page.text;
    for expected in [
        "Questions from your assistant",
        "Which plan?",
        r#"type="radio" name="q0" value="1""#,
        r#"type="checkbox" name="q1" value="0""#,
        "Cheap",
        "Other…",
        r#"name="q1_other""#,
        r#"aria-label="Your own answer for Extras" maxlength="2000""#,
        r#"value="decline""#,
        "Choose one or more.",
        "Session <b>s1</b>",
    ] {
        assert!(html.contains(expected), "missing {expected:?} in\n{html}");
    }
    assert!(!html.contains("http://") && !html.contains("https://"), "no external assets:\n{html}");
    let css = send(&h.app, get("/assets/app.css", None)).await;
    let js = send(&h.app, get("/assets/live.js", None)).await;
    assert_eq!((css.status, js.status), (StatusCode::OK, StatusCode::OK));
    let total = html.len() + css.text.len() + js.text.len();
    assert!(total <= 16 * 1024, "page, style and script weigh {total} bytes");
    let csp = page.headers[header::CONTENT_SECURITY_POLICY].to_str().unwrap();
    assert!(csp.contains("script-src 'self'") && !csp.contains("unsafe-inline"), "{csp}");
}

/// Who asks is on the batch page and in the lists, as text: escaped, with characters that draw
/// nothing made visible.
#[tokio::test]
async fn the_page_and_the_lists_say_who_asks() {
    let h = harness();
    let id = ask(&h.app, json!({"session_id": "s1", "asked_by": "<b>codex</b>\u{3164} in ~/app"})).await;
    let shown = "&#60;b&#62;codex&#60;/b&#62;⟨U+3164⟩ in ~/app";
    let page = send(&h.app, get(&link_of(&h, &id), None)).await;
    assert!(page.text.contains(&format!("<h1 class=\"asked-by\">{shown} asks</h1>")), "{}", page.text);
    let ok = send(&h.app, post_form("/login", None, &[("token", TOKEN)])).await;
    let cookie = ok.headers[header::SET_COOKIE].to_str().unwrap().split(';').next().unwrap().to_owned();
    for list in ["/", "/s/s1"] {
        let html = send(&h.app, get(list, Some(&cookie))).await.text;
        assert!(html.contains(&format!("{shown} · ")), "{list}: {html}");
    }
}

#[tokio::test]
async fn a_wrong_link_shows_nothing() {
    let h = harness();
    let id = ask(&h.app, json!({})).await;
    let other = ask(&h.app, json!({})).await;
    let other_token = link_of(&h, &other).rsplit('/').next().unwrap().to_owned();
    for uri in
        [format!("/q/{id}/{other_token}"), format!("/q/{id}/{}", "0".repeat(32)), format!("/q/{id}/short")]
    {
        let page = send(&h.app, get(&uri, None)).await;
        assert_eq!(page.status, StatusCode::NOT_FOUND, "{uri}");
        assert!(!page.text.contains("Which plan?"));
        let post = send(&h.app, post_form(&uri, None, &[("q0", "0")])).await;
        assert_eq!(post.status, StatusCode::NOT_FOUND);
    }
    // Without a login, the cookie pages send to the login page.
    let page = send(&h.app, get(&format!("/q/{id}"), None)).await;
    assert_eq!(
        (page.status, &page.headers[header::LOCATION]),
        (StatusCode::SEE_OTHER, &"/login".parse().unwrap())
    );
    assert_eq!(record_state(&h, &id).await, "pending");
}

#[tokio::test]
async fn answering_through_a_link_commits_the_exact_answer() {
    let h = harness();
    let id = ask(&h.app, json!({})).await;
    let link = link_of(&h, &id);
    let page = send(&h.app, get(&link, None)).await;
    let csrf = csrf_of(&page);
    let done = send(
        &h.app,
        post_form(
            &link,
            None,
            &[
                ("csrf", &csrf),
                ("q0", "1"),
                ("q1", "other"),
                ("q1_other", "Daily <b>snapshots</b>"),
                ("action", "answer"),
            ],
        ),
    )
    .await;
    assert_eq!(done.status, StatusCode::OK, "{}", done.text);
    assert!(done.text.contains("Your answers were sent to the assistant."));
    assert!(
        done.text.contains("Daily &#60;b&#62;snapshots&#60;/b&#62;")
            || done.text.contains("Daily &lt;b&gt;snapshots&lt;/b&gt;"),
        "{}",
        done.text
    );
    let wait = api(&h.app, Method::GET, &format!("/v1/questions/{id}/wait?timeout_secs=0"), None).await;
    assert_eq!(wait.json()["result"], r#"{"Plan":["Large"],"Extras":["Daily <b>snapshots</b>"]}"#);
    assert_eq!(wait.json()["record"]["answered_by"], "user");
}

#[tokio::test]
async fn forms_without_the_right_csrf_token_are_refused() {
    let h = harness();
    let id = ask(&h.app, json!({})).await;
    let other = ask(&h.app, json!({})).await;
    let link = link_of(&h, &id);
    let other_csrf = csrf_of(&send(&h.app, get(&link_of(&h, &other), None)).await);
    for csrf in [None, Some("0".repeat(32)), Some(other_csrf)] {
        let mut fields = vec![("q0", "0"), ("q1", "0")];
        if let Some(csrf) = &csrf {
            fields.push(("csrf", csrf));
        }
        let reply = send(&h.app, post_form(&link, None, &fields)).await;
        assert_eq!(reply.status, StatusCode::FORBIDDEN, "{csrf:?}");
    }
    assert_eq!(record_state(&h, &id).await, "pending");
}

#[tokio::test]
async fn a_misfit_form_is_shown_again_with_what_was_typed() {
    let h = harness();
    let id = ask(&h.app, json!({})).await;
    let link = link_of(&h, &id);
    let csrf = csrf_of(&send(&h.app, get(&link, None)).await);
    // "Other…" has the cap of every surface (askuser_core::MAX_CUSTOM_CHARS).
    let long = "x".repeat(2001);
    for (fields, says) in [
        (vec![("q1", "0")], "“Plan”: Pick an answer."),
        (vec![("q0", "0"), ("q1", "other"), ("q1_other", long.as_str())], "longer than 2000 characters"),
        (vec![("q0", "0"), ("q0", "1"), ("q1", "0")], "single-select"),
        (vec![("q0", "7"), ("q1", "0")], "not one of the options"),
        (vec![("q0", "0"), ("q1", "0"), ("q1", "other"), ("q1_other", "my words")], "not both"),
        (vec![("q0", "0"), ("q1", "other"), ("q1_other", "   ")], "Write your own answer"),
        (vec![("q0", "0"), ("q1", "0"), ("q1_other", "my words")], "did not choose “Other…”"),
    ] {
        let mut all = vec![("csrf", csrf.as_str())];
        all.extend(fields.iter().copied());
        let reply = send(&h.app, post_form(&link, None, &all)).await;
        assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY, "{says}");
        assert!(reply.text.contains(says), "{says} not in\n{}", reply.text);
        if let Some((_, typed)) = fields.iter().find(|(k, _)| *k == "q1_other") {
            assert!(reply.text.contains(&format!(r#"value="{typed}""#)), "typed text kept");
        }
        // A choice that was made stays checked.
        if fields.contains(&("q1", "0")) {
            assert!(reply.text.contains(r#"name="q1" value="0" checked"#));
        }
    }
    assert_eq!(record_state(&h, &id).await, "pending");
}

#[tokio::test]
async fn declining_and_a_second_submission() {
    let h = harness();
    let id = ask(&h.app, json!({})).await;
    let link = link_of(&h, &id);
    let csrf = csrf_of(&send(&h.app, get(&link, None)).await);
    let declined = send(&h.app, post_form(&link, None, &[("csrf", &csrf), ("action", "decline")])).await;
    assert_eq!(declined.status, StatusCode::OK);
    assert!(declined.text.contains("declined to answer"));
    assert_eq!(record_state(&h, &id).await, "declined");

    let id = ask(&h.app, json!({})).await;
    let link = link_of(&h, &id);
    let csrf = csrf_of(&send(&h.app, get(&link, None)).await);
    let first = send(&h.app, post_form(&link, None, &[("csrf", &csrf), ("q0", "0"), ("q1", "1")])).await;
    assert_eq!(first.status, StatusCode::OK);
    let second = send(&h.app, post_form(&link, None, &[("csrf", &csrf), ("q0", "1"), ("q1", "0")])).await;
    assert_eq!(second.status, StatusCode::CONFLICT);
    assert!(second.text.contains("Already answered") && second.text.contains("The first answer stands."));
    // The time is an instant live.js shows in the person's zone, as open pages show theirs.
    assert!(second.text.contains("These questions were answered at <time datetime=\""), "{}", second.text);
    assert!(second.text.contains("<dd>Small</dd>"), "the first answer is shown:\n{}", second.text);
    let page = send(&h.app, get(&link, None)).await;
    assert!(page.text.contains("Already answered") && !page.text.contains("<form"));
}

#[tokio::test]
async fn an_expired_question_cannot_be_answered() {
    let h = harness_with(|b| b.late_window(Duration::ZERO));
    let id = ask(&h.app, json!({"timeout_secs": 0.001})).await;
    tokio::time::sleep(Duration::from_millis(5)).await;
    let link = link_of(&h, &id);
    // Opened before the sweep: the form shows, but sending it finds the question expired.
    let page = send(&h.app, get(&link, None)).await;
    let csrf = csrf_of(&page);
    let reply = send(&h.app, post_form(&link, None, &[("csrf", &csrf), ("q0", "0"), ("q1", "1")])).await;
    assert_eq!(reply.status, StatusCode::CONFLICT);
    assert!(reply.text.contains("Expired"), "{}", reply.text);
    assert_eq!(record_state(&h, &id).await, "timed_out");
    let page = send(&h.app, get(&link, None)).await;
    assert!(page.text.contains("Expired") && !page.text.contains("<form"));
    // What was asked stays readable.
    for asked in ["What was asked", "Which plan?", "<li>Small</li>", "Which extras?"] {
        assert!(page.text.contains(asked), "{asked} not in {}", page.text);
    }
}

/// Within the late window an expired question's page shows the form again, saying the deadline
/// passed; what is sent is kept as late, and the page says so.
#[tokio::test]
async fn an_expired_question_takes_a_late_answer_on_its_page() {
    let h = harness();
    let id = ask(&h.app, json!({"timeout_secs": 0.001})).await;
    tokio::time::sleep(Duration::from_millis(5)).await;
    h.store.expire_due(10).await.unwrap();
    let link = link_of(&h, &id);
    let page = send(&h.app, get(&link, None)).await;
    assert!(page.text.contains("The deadline passed") && page.text.contains("<form"), "{}", page.text);
    assert!(!page.text.contains("/events"), "a late form follows nothing:\n{}", page.text);
    let csrf = csrf_of(&page);
    let reply = send(&h.app, post_form(&link, None, &[("csrf", &csrf), ("q0", "0"), ("q1", "1")])).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    assert!(reply.text.contains("Kept as a late answer"), "{}", reply.text);
    assert_eq!(record_state(&h, &id).await, "late");
    let page = send(&h.app, get(&link, None)).await;
    assert!(page.text.contains("Answered late") && !page.text.contains("<form"), "{}", page.text);
}

/// Every problem of a form at once, each beside its field (`aria-invalid`, `aria-describedby`),
/// with a summary at the top linking to each, and everything typed kept.
#[tokio::test]
async fn every_problem_of_a_form_is_shown_at_once_beside_its_field() {
    let h = harness();
    let id = ask(&h.app, json!({})).await;
    let link = link_of(&h, &id);
    let csrf = csrf_of(&send(&h.app, get(&link, None)).await);
    let fields = [("csrf", csrf.as_str()), ("q1", "0"), ("q1_other", "my words")];
    let reply = send(&h.app, post_form(&link, None, &fields)).await;
    assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY);
    let html = &reply.text;
    for expected in [
        "2 answers need a change:",
        r##"<a href="#q0">“Plan”: Pick an answer.</a>"##,
        r##"<a href="#q1">“Extras”: You wrote your own answer but did not choose “Other…”"##,
        r#"<fieldset id="q0" class="invalid">"#,
        r#"<fieldset id="q1" class="invalid">"#,
        r#"<p class="problem" id="q0-problem">Pick an answer.</p>"#,
        r#"name="q0" value="1" aria-invalid="true" aria-describedby="q0-problem">"#,
        r#"name="q1" value="0" checked aria-invalid="true" aria-describedby="q1-problem">"#,
        r#"value="my words" placeholder="Your own answer""#,
    ] {
        assert!(html.contains(expected), "{expected} not in\n{html}");
    }
    // Two options, "Other…" and its text field, in each question.
    assert_eq!(html.matches("aria-invalid").count(), 2 * 4, "every input of the two questions");
    assert_eq!(record_state(&h, &id).await, "pending");
}

/// The times a page shows: UTC as text, the instant for the script, the time left; seconds when
/// the question is open for a few minutes only.
#[tokio::test]
async fn the_page_shows_its_times_and_the_time_left() {
    let h = harness();
    let long = send(&h.app, get(&link_of(&h, &ask(&h.app, json!({"timeout_secs": 7200})).await), None)).await;
    let html = &long.text;
    assert!(html.contains("<time datetime=\"") && html.contains(" UTC</time>"), "{html}");
    assert!(!html.contains("data-seconds"), "{html}");
    assert!(html.contains(r#"<span class="left" data-until=""#), "{html}");
    assert!(html.contains(">1 h 59 min left<") || html.contains(">2 h 0 min left<"), "{html}");

    let short = send(&h.app, get(&link_of(&h, &ask(&h.app, json!({"timeout_secs": 50})).await), None)).await;
    let html = &short.text;
    assert_eq!(html.matches("data-seconds").count(), 2, "{html}");
    let times: Vec<&str> =
        html.split("data-seconds>").skip(1).map(|rest| &rest[..rest.find('<').unwrap()]).collect();
    // `asked 16:37:02 UTC · open until 16:37:52 UTC`: never the same minute twice.
    assert!(times.iter().all(|t| t.len() == "16:37:02 UTC".len()), "{times:?}");
    assert_ne!(times[0], times[1]);
    assert!(html.contains(" s left<"), "{html}");
}

/// "Decline to answer" is a second step: a disclosure with its own confirming button.
#[tokio::test]
async fn declining_is_confirmed_on_the_page() {
    let h = harness();
    let page = send(&h.app, get(&link_of(&h, &ask(&h.app, json!({})).await), None)).await;
    let details = &page.text[page.text.find(r#"<details class="decline">"#).expect("a decline disclosure")..];
    assert!(details.contains("<summary>Decline to answer…</summary>"), "{details}");
    assert!(details.contains(r#"value="decline""#), "the decline button is inside it");
    assert_eq!(page.text.matches(r#"value="decline""#).count(), 1);
}

/// Question text as the model writes it: code spans and fenced blocks become `<code>`; everything
/// else, markup inside code included, stays escaped text.
#[tokio::test]
async fn code_in_question_text_is_shown_as_code_and_nothing_else_is_markup() {
    let h = harness();
    let question = "Run `cargo <b>test</b>`?\n```sh\n<script>alert(1)</script>\nrm -rf `x`\n```\n*not* <i>markup</i> `unclosed";
    let args = json!({"questions":[{"header":"Run","question": question,
        "options":[{"label":"Yes","description":"runs `make`"},{"label":"No"}]}]});
    let reply =
        api(&h.app, Method::POST, "/v1/questions", Some(json!({"arguments": args.to_string()}))).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text);
    let id = reply.json()["id"].as_str().unwrap().to_owned();
    let html = send(&h.app, get(&link_of(&h, &id), None)).await.text;
    let legend = &html[html.find("<legend>").unwrap()..html.find("</legend>").unwrap()];
    let escaped = |s: &str| s.replace('<', "&#60;").replace('>', "&#62;");
    for expected in [
        format!("Run <code>cargo {}</code>?", escaped("<b>test</b>")),
        format!(r#"<code class="block">{}"#, escaped("<script>alert(1)</script>\nrm -rf `x`")),
        format!("*not* {} `unclosed", escaped("<i>markup</i>")),
    ] {
        let expected_alt = expected.replace("&#60;", "&lt;").replace("&#62;", "&gt;");
        assert!(legend.contains(&expected) || legend.contains(&expected_alt), "{expected} not in {legend}");
    }
    assert!(html.contains(r#"<span class="desc">runs <code>make</code></span>"#), "{html}");
    assert!(!html.contains("<script>") && !html.contains("<b>") && !html.contains("<i>"), "{html}");
}

#[tokio::test]
async fn hostile_text_is_shown_as_text() {
    let h = harness();
    let args = json!({"questions":[{"header":"<script>","question":"<script>alert(1)</script> \"><img src=x onerror=alert(2)>",
        "options":[{"label":"\"><img src=x onerror=alert(3)>","description":"</label><script>alert(4)</script>"},{"label":"ok"}]}]});
    let reply = api(
        &h.app,
        Method::POST,
        "/v1/questions",
        Some(json!({"arguments": args, "session_id": "<b>s</b>"})),
    )
    .await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text);
    let id = reply.json()["id"].as_str().unwrap().to_owned();
    let page = send(&h.app, get(&link_of(&h, &id), None)).await;
    for raw in ["<script>", "<img", "<b>s</b>", "onerror=alert(3)>"] {
        assert!(!page.text.contains(raw), "{raw:?} reached the page unescaped:\n{}", page.text);
    }
    assert!(
        page.text.contains("&#60;script&#62;alert(1)") || page.text.contains("&lt;script&gt;alert(1)"),
        "{}",
        page.text
    );
}

#[tokio::test]
async fn login_sets_a_strict_http_only_cookie_that_opens_the_lists() {
    let h = harness();
    let a = ask(&h.app, json!({"session_id": "s1"})).await;
    let b = ask(&h.app, json!({"session_id": "s1"})).await;
    let _other = ask(&h.app, json!({"session_id": "s2"})).await;

    let home = send(&h.app, get("/", None)).await;
    assert_eq!(
        (home.status, &home.headers[header::LOCATION]),
        (StatusCode::SEE_OTHER, &"/login".parse().unwrap())
    );
    let form = send(&h.app, get("/login", None)).await;
    assert!(form.text.contains(r#"type="password""#));
    let wrong = send(&h.app, post_form("/login", None, &[("token", "not-the-token-0123456789")])).await;
    assert_eq!(wrong.status, StatusCode::UNAUTHORIZED);
    assert!(!wrong.headers.contains_key(header::SET_COOKIE));

    let ok = send(&h.app, post_form("/login", None, &[("token", TOKEN)])).await;
    assert_eq!(ok.status, StatusCode::SEE_OTHER);
    let set_cookie = ok.headers[header::SET_COOKIE].to_str().unwrap().to_owned();
    assert!(
        set_cookie.contains("HttpOnly")
            && set_cookie.contains("SameSite=Strict")
            && set_cookie.contains("Path=/")
    );
    assert!(!set_cookie.contains(TOKEN), "the cookie is not the token");
    let cookie = set_cookie.split(';').next().unwrap().to_owned();

    let home = send(&h.app, get("/", Some(&cookie))).await;
    assert_eq!(home.status, StatusCode::OK);
    assert_eq!(home.text.matches("<li>").count(), 3);
    // The home page leads on: to the answered questions, to each waiting session, to logging out.
    for link in
        [r#"href="/history""#, r#"href="/s/s1">Session s1<"#, r#"href="/s/s2""#, r#"action="/logout""#]
    {
        assert!(home.text.contains(link), "{link} not in {}", home.text);
    }
    let session = send(&h.app, get("/s/s1", Some(&cookie))).await;
    assert_eq!(session.text.matches("<li>").count(), 2);
    assert!(session.text.contains(&format!(r#"href="/q/{a}""#)));

    // Answer one by cookie; it leaves the pending list and enters the history.
    let page = send(&h.app, get(&format!("/q/{b}"), Some(&cookie))).await;
    let csrf = csrf_of(&page);
    let done = send(
        &h.app,
        post_form(&format!("/q/{b}"), Some(&cookie), &[("csrf", &csrf), ("q0", "0"), ("q1", "0")]),
    )
    .await;
    assert_eq!(done.status, StatusCode::OK, "{}", done.text);
    // The link's CSRF token does not serve the cookie's form, nor the other way round.
    let link_csrf = csrf_of(&send(&h.app, get(&link_of(&h, &a), None)).await);
    let refused = send(
        &h.app,
        post_form(&format!("/q/{a}"), Some(&cookie), &[("csrf", &link_csrf), ("q0", "0"), ("q1", "0")]),
    )
    .await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);

    let session = send(&h.app, get("/s/s1", Some(&cookie))).await;
    assert_eq!(session.text.matches("<li>").count(), 1);
    let history = send(&h.app, get("/s/s1/history", Some(&cookie))).await;
    assert_eq!(history.text.matches("<li>").count(), 1);
    assert!(history.text.contains("by user") && history.text.contains("<dd>Small</dd>"), "{}", history.text);
    let all = send(&h.app, get("/history", Some(&cookie))).await;
    assert_eq!(all.text.matches("<li>").count(), 1, "{}", all.text);
    assert!(all.text.contains("s1 · asked"), "{}", all.text);

    // A forged or stale cookie opens nothing.
    for bad in ["askuser_login=1.abc", "askuser_login=99999999999.00", "other=1"] {
        let page = send(&h.app, get("/", Some(bad))).await;
        assert_eq!(page.status, StatusCode::SEE_OTHER, "{bad}");
    }
    let out = send(&h.app, post_form("/logout", Some(&cookie), &[])).await;
    assert!(out.headers[header::SET_COOKIE].to_str().unwrap().contains("Max-Age=0"));
    // The logged-out cookie, kept by hand, opens nothing any more; a new login does.
    for path in ["/", "/s/s1", &format!("/q/{a}")] {
        let page = send(&h.app, get(path, Some(&cookie))).await;
        assert_eq!(page.status, StatusCode::SEE_OTHER, "{path}");
    }
    let again = send(&h.app, post_form("/login", None, &[("token", TOKEN)])).await;
    let fresh = again.headers[header::SET_COOKIE].to_str().unwrap().split(';').next().unwrap().to_owned();
    assert_ne!(fresh, cookie);
    assert_eq!(send(&h.app, get("/", Some(&fresh))).await.status, StatusCode::OK);
}

#[tokio::test]
async fn a_batch_page_hears_when_its_question_is_answered_elsewhere() {
    let h = harness();
    let id = ask(&h.app, json!({})).await;
    let events = format!("{}/events", link_of(&h, &id));
    let response = tower::ServiceExt::oneshot(h.app.clone(), get(&events, None)).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let mut body = response.into_body();
    api(&h.app, Method::POST, &format!("/v1/questions/{id}/answer"), Some(crate::support::answer_body()))
        .await;
    let mut text = String::new();
    while !text.contains("\n\n") || text.starts_with(':') {
        let frame =
            tokio::time::timeout(Duration::from_secs(5), body.frame()).await.unwrap().unwrap().unwrap();
        if let Ok(data) = frame.into_data() {
            text.push_str(std::str::from_utf8(&data).unwrap());
        }
    }
    assert!(text.contains("event: answered"), "{text}");
    assert!(!text.contains("Plan"), "no question content in events: {text}");
    let wrong = send(&h.app, get(&format!("/q/{id}/{}/events", "0".repeat(32)), None)).await;
    assert_eq!(wrong.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn unknown_pages_are_a_plain_not_found() {
    let h = harness();
    let page = send(&h.app, get("/nothing", None)).await;
    assert_eq!(page.status, StatusCode::NOT_FOUND);
    assert!(page.text.contains("There is nothing at this address."));
}

/// Two labels that differ only by a character that draws nothing (a Hangul filler) look
/// different on the page; validation is the reference's, and the answer is the label itself.
#[tokio::test]
async fn characters_that_draw_nothing_are_shown() {
    let h = harness();
    let args = "{\"questions\":[{\"header\":\"Go\u{3164}\",\"question\":\"Proceed\u{2800}?\",\
        \"options\":[{\"label\":\"Yes\"},{\"label\":\"Yes\u{3164}\",\"description\":\"really\u{115f}\"}]}]}";
    let reply = api(&h.app, Method::POST, "/v1/questions", Some(json!({"arguments": args}))).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text);
    let id = reply.json()["id"].as_str().unwrap().to_owned();
    let page = send(&h.app, get(&link_of(&h, &id), None)).await;
    for shown in ["Go⟨U+3164⟩", "Proceed⟨U+2800⟩?", "Yes⟨U+3164⟩", "really⟨U+115F⟩"] {
        assert!(page.text.contains(shown), "{shown} in {}", page.text);
    }
    assert!(!page.text.contains('\u{3164}') && !page.text.contains('\u{2800}'), "{}", page.text);
    let csrf = csrf_of(&page);
    let done = send(&h.app, post_form(&link_of(&h, &id), None, &[("csrf", &csrf), ("q0", "1")])).await;
    assert_eq!(done.status, StatusCode::OK, "{}", done.text);
    assert!(done.text.contains("Yes⟨U+3164⟩") && !done.text.contains('\u{3164}'), "{}", done.text);
    let record = h.store.get(&id).await.unwrap().unwrap();
    assert_eq!(record.response().unwrap().answers[0].selected, vec!["Yes\u{3164}".to_owned()]);
}

/// Every root path in `html` (links, actions, assets, event streams) is under `/askuser/`.
fn all_under_prefix(html: &str) {
    for attribute in ["href=\"/", "src=\"/", "action=\"/", "data-events=\"/"] {
        for (at, _) in html.match_indices(attribute) {
            let rest = &html[at + attribute.len()..];
            assert!(rest.starts_with("askuser/"), "{attribute}{} in {html}", &rest[..rest.len().min(40)]);
        }
    }
}

/// Behind a reverse proxy on a sub-path (`--public-url https://proxy.test/askuser`), every form
/// action, link, asset, redirect and cookie stays inside it, whether the proxy strips the
/// prefix or passes it on.
#[tokio::test]
async fn a_public_url_with_a_path_keeps_everything_inside_it() {
    let h = crate::support::harness_with(|b| b.public_url("https://proxy.test/askuser/"));
    let id = ask(&h.app, json!({"session_id": "s1"})).await;
    let link = h.server.page_url(&id);
    let path = link.strip_prefix("https://proxy.test").unwrap().to_owned();
    assert!(path.starts_with("/askuser/q/"), "{link}");
    let stripped = path.strip_prefix("/askuser").unwrap().to_owned();
    for request_path in [&path, &stripped] {
        let page = send(&h.app, get(request_path, None)).await;
        assert_eq!(page.status, StatusCode::OK, "{request_path}");
        all_under_prefix(&page.text);
        assert!(page.text.contains(&format!("action=\"{path}\"")), "{}", page.text);
        assert!(page.text.contains("href=\"/askuser/assets/app.css\""), "{}", page.text);
    }
    assert_eq!(send(&h.app, get("/askuser/assets/app.css", None)).await.status, StatusCode::OK);

    let home = send(&h.app, get("/askuser/", None)).await;
    assert_eq!(home.headers[header::LOCATION], "/askuser/login");
    let form = send(&h.app, get("/askuser/login", None)).await;
    all_under_prefix(&form.text);
    assert!(form.text.contains("action=\"/askuser/login\""), "{}", form.text);
    let ok = send(&h.app, post_form("/askuser/login", None, &[("token", TOKEN)])).await;
    assert_eq!(ok.headers[header::LOCATION], "/askuser/");
    let set_cookie = ok.headers[header::SET_COOKIE].to_str().unwrap().to_owned();
    assert!(set_cookie.contains("; Path=/askuser/;") && set_cookie.contains("Secure"), "{set_cookie}");
    let cookie = set_cookie.split(';').next().unwrap().to_owned();
    let list = send(&h.app, get("/askuser/", Some(&cookie))).await;
    assert_eq!(list.status, StatusCode::OK);
    all_under_prefix(&list.text);
    assert!(list.text.contains(&format!("href=\"/askuser/q/{id}\"")), "{}", list.text);
    assert!(list.text.contains("data-events=\"/askuser/events\""), "{}", list.text);

    let page = send(&h.app, get(&path, None)).await;
    let csrf = csrf_of(&page);
    let done = send(&h.app, post_form(&path, None, &[("csrf", &csrf), ("q0", "0"), ("q1", "0")])).await;
    assert_eq!(done.status, StatusCode::OK, "{}", done.text);
    all_under_prefix(&done.text);
    let out = send(&h.app, post_form("/askuser/logout", Some(&cookie), &[])).await;
    assert_eq!(out.headers[header::LOCATION], "/askuser/login");
    assert!(out.headers[header::SET_COOKIE].to_str().unwrap().contains("; Path=/askuser/;"));
}

/// A session's history lists the newest answers first, a hundred at a time, with a link to the
/// older ones: before, it listed the oldest thousand, so new answers stopped appearing.
#[tokio::test]
async fn the_history_shows_the_newest_answers_first() {
    let h = harness();
    let mut ids = Vec::new();
    for n in 0..105 {
        let id = ask(&h.app, json!({"session_id": "long", "id": format!("h{n:03}")})).await;
        api(&h.app, Method::POST, &format!("/v1/questions/{id}/answer"), Some(crate::support::answer_body()))
            .await;
        ids.push(id);
    }
    let ok = send(&h.app, post_form("/login", None, &[("token", TOKEN)])).await;
    let cookie = ok.headers[header::SET_COOKIE].to_str().unwrap().split(';').next().unwrap().to_owned();
    let first = send(&h.app, get("/s/long/history", Some(&cookie))).await;
    assert_eq!(first.status, StatusCode::OK);
    assert_eq!(first.text.matches("<li>").count(), 100);
    let newest = first.text.find(r#"href="/q/h104""#).expect("the newest is listed");
    let older = first.text.find(r#"href="/q/h103""#).expect("the next newest is listed");
    assert!(newest < older, "newest first");
    assert!(!first.text.contains(r#"href="/q/h004""#));
    let start = first.text.find(r#"href="/s/long/history?after="#).expect("a link to older answers") + 6;
    let link = &first.text[start..start + first.text[start..].find('"').unwrap()];
    let second = send(&h.app, get(&link.replace("&amp;", "&"), Some(&cookie))).await;
    assert_eq!(second.status, StatusCode::OK, "{link}: {}", second.text);
    assert_eq!(second.text.matches("<li>").count(), 5);
    assert!(second.text.contains(r#"href="/q/h000""#) && !second.text.contains("history?after="));
    let bad = send(&h.app, get("/s/long/history?after=nonsense", Some(&cookie))).await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
}

/// A label mixing look-alike scripts (`Yеѕ`: a Cyrillic `е` and `ѕ`) beside `Yes` is marked on
/// the page, so the two options do not read the same (issue 36.12); the plain one is not.
#[tokio::test]
async fn a_label_mixing_look_alike_scripts_is_marked() {
    let h = harness();
    let args = json!({"questions":[{"header":"Deploy","question":"Deploy now?",
        "options":[{"label":"Yes"},{"label":"Y\u{0435}\u{0455}"}]}]});
    let reply = api(&h.app, Method::POST, "/v1/questions", Some(json!({"arguments": args}))).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text);
    let id = reply.json()["id"].as_str().unwrap().to_owned();
    let page = send(&h.app, get(&link_of(&h, &id), None)).await;
    assert!(page.text.contains("Y\u{0435}\u{0455} ⟨mixed scripts⟩"), "{}", page.text);
    assert!(!page.text.contains("Yes ⟨mixed scripts⟩"), "{}", page.text);
}
