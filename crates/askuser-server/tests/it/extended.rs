//! The extended profile (docs/contract.md §10) in process: text and secret questions on the pages and in the
//! API, `allow_other: false`, declared defaults, and secrets that reach the asker once and are
//! stored nowhere.

use std::time::Duration;

use askuser_core::Profile;
use axum::http::{Method, StatusCode};
use serde_json::{Value, json};

use crate::pages::{csrf_of, get, link_of, post_form, record_state};
use crate::support::{Harness, api, harness, harness_with, send};

const SECRET: &str = "s3cr3t-VALUE-9f8e7d";

const MIXED: &str = r#"{"questions":[
    {"kind":"text","id":"why","header":"Reason","question":"Why do you want this?"},
    {"header":"Plan","question":"Which plan?","allow_other":false,
     "options":[{"label":"Small"},{"label":"Large","default":true}]},
    {"header":"Extras","question":"Which extras?","multi_select":true,
     "options":[{"label":"Backups","default":true},{"label":"Support","default":true},{"label":"None"}]}]}"#;

const SECRET_ARGS: &str = r#"{"questions":[{"kind":"secret","header":"Token","question":"Paste your deploy token.",
    "secret_name":"DEPLOY_TOKEN","purpose":"To deploy the site for you"}]}"#;

fn extended() -> Harness {
    harness_with(|b| b.profile(Profile::Extended))
}

async fn ask_args(h: &Harness, args: &str) -> String {
    let reply =
        api(&h.app, Method::POST, "/v1/questions", Some(json!({"arguments": args, "session_id": "s1"})))
            .await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text);
    reply.json()["id"].as_str().unwrap().to_owned()
}

async fn wait(h: &Harness, id: &str) -> Value {
    api(&h.app, Method::GET, &format!("/v1/questions/{id}/wait?timeout_secs=5"), None).await.json()
}

/// Every place a secret could leak to in this process: the store's record (as the API shows it
/// and as serialised), the list and history pages.
async fn assert_stored_nowhere(h: &Harness, id: &str) {
    let record = h.store.get(id).await.unwrap().unwrap();
    let stored = serde_json::to_string(&record).unwrap();
    assert!(!stored.contains(SECRET), "{stored}");
    assert!(stored.contains("session:DEPLOY_TOKEN"), "{stored}");
    let got = api(&h.app, Method::GET, &format!("/v1/questions/{id}"), None).await;
    assert!(!got.text.contains(SECRET));
    let listed = api(&h.app, Method::GET, "/v1/questions?session_id=s1", None).await;
    assert!(!listed.text.contains(SECRET));
}

#[tokio::test]
async fn a_reference_server_refuses_extended_asks() {
    let h = harness();
    let reply = api(&h.app, Method::POST, "/v1/questions", Some(json!({"arguments": SECRET_ARGS}))).await;
    reply.error(StatusCode::UNPROCESSABLE_ENTITY, "invalid_arguments");
    let reply = api(
        &h.app,
        Method::POST,
        "/v1/questions",
        Some(json!({"arguments": crate::support::ARGS, "profile": "extended"})),
    )
    .await;
    let body = reply.error(StatusCode::UNPROCESSABLE_ENTITY, "invalid_field");
    assert!(body["message"].as_str().unwrap().contains("--profile extended"), "{body}");
    // An extended server takes reference asks when told so, and extended ones by default.
    let h = extended();
    let reply = api(
        &h.app,
        Method::POST,
        "/v1/questions",
        Some(json!({"arguments": crate::support::ARGS, "profile": "reference"})),
    )
    .await;
    assert_eq!(reply.json()["record"]["profile"], "reference", "{}", reply.text);
    let id = ask_args(&h, MIXED).await;
    assert_eq!(h.store.get(&id).await.unwrap().unwrap().request().profile(), Profile::Extended);
}

#[tokio::test]
async fn the_model_can_shorten_the_wait_but_not_extend_it() {
    let h = extended();
    let short = r#"{"timeout_seconds":30,"questions":[{"kind":"text","header":"Reason","question":"Why?"}]}"#;
    let reply =
        api(&h.app, Method::POST, "/v1/questions", Some(json!({"arguments": short, "timeout_secs": 600})))
            .await;
    let record = &reply.json()["record"];
    let (asked, expires) = (record["asked_at"].as_str().unwrap(), record["expires_at"].as_str().unwrap());
    let secs = |t: &str| {
        let time = &t[11..19];
        time.split(':').fold(0, |acc, part| acc * 60 + part.parse::<i64>().unwrap())
    };
    assert_eq!((secs(expires) - secs(asked)).rem_euclid(86_400), 30, "{record}");
}

#[tokio::test]
async fn text_questions_defaults_and_no_other_on_the_page() {
    let h = extended();
    let id = ask_args(&h, MIXED).await;
    let link = link_of(&h, &id);
    let page = send(&h.app, get(&link, None)).await;
    let html = &page.text;
    assert!(
        html.contains(r#"<textarea class="other" name="q0_text" rows="4" maxlength="2000" required placeholder="Type your answer""#)
            && html.contains("Your answer in your own words, up to 2000 characters."),
        "{html}"
    );
    // Plan: allow_other false → no "Other…" for q1; its declared default is checked.
    assert!(!html.contains(r#"name="q1" value="other""#), "{html}");
    assert!(!html.contains(r#"name="q1_other""#), "{html}");
    assert!(html.contains(r#"name="q1" value="1" checked"#), "{html}");
    assert!(!html.contains(r#"name="q1" value="0" checked"#), "{html}");
    assert!(
        html.contains(r#"name="q2" value="0" checked"#) && html.contains(r#"name="q2" value="1" checked"#)
    );
    assert!(html.contains(r#"name="q2" value="other""#), "q2 allows other");

    let csrf = csrf_of(&page);
    // A blank text answer is refused; what was picked and typed elsewhere stays.
    let blank = send(
        &h.app,
        post_form(
            &link,
            None,
            &[
                ("csrf", &csrf),
                ("q0_text", "  \n "),
                ("q1", "0"),
                ("q2", "other"),
                ("q2_other", "a cake"),
                ("action", "answer"),
            ],
        ),
    )
    .await;
    assert_eq!(blank.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", blank.text);
    assert!(blank.text.contains("“Reason”: Write an answer."), "{}", blank.text);
    assert!(blank.text.contains(r#"name="q1" value="0" checked"#), "{}", blank.text);
    assert!(!blank.text.contains(r#"name="q1" value="1" checked"#), "the person's pick, not the default");
    assert!(blank.text.contains(r#"value="a cake""#), "{}", blank.text);
    // Too long, and Other… on a question that does not allow it.
    let long = "x".repeat(2001);
    for (fields, says) in [
        (vec![("q0_text", long.as_str()), ("q1", "0"), ("q2", "0")], "longer than 2000"),
        (vec![("q0_text", "ok"), ("q1", "other"), ("q2", "0")], "not one of the options"),
    ] {
        let mut all = vec![("csrf", csrf.as_str()), ("action", "answer")];
        all.extend(fields);
        let reply = send(&h.app, post_form(&link, None, &all)).await;
        assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY, "{says}");
        assert!(reply.text.contains(says), "{says}: {}", reply.text);
        if says.contains("longer") {
            assert!(reply.text.contains(&long), "the typed text is kept");
        }
    }
    assert_eq!(record_state(&h, &id).await, "pending");

    let done = send(
        &h.app,
        post_form(
            &link,
            None,
            &[
                ("csrf", &csrf),
                // As a browser sends a text area's lines (CRLF), and a lone CR.
                ("q0_text", "For the <launch>\r\nnext week\rat the latest"),
                ("q1", "1"),
                ("q2", "0"),
                ("action", "answer"),
            ],
        ),
    )
    .await;
    assert_eq!(done.status, StatusCode::OK, "{}", done.text);
    assert!(done.text.contains("next week"), "{}", done.text);
    let result: Value = serde_json::from_str(wait(&h, &id).await["result"].as_str().unwrap()).unwrap();
    assert_eq!(
        result,
        json!({"status":"answered","answered_by":"user","answers":[
            {"id":"why","header":"Reason","selected":[],"other_text":"For the <launch>\nnext week\nat the latest"},
            {"id":"q1","header":"Plan","selected":["Large"],"other_text":null},
            {"id":"q2","header":"Extras","selected":["Backups"],"other_text":null}]})
    );
}

#[tokio::test]
async fn a_secret_typed_on_the_page_reaches_one_wait_and_is_stored_nowhere() {
    let h = extended();
    let id = ask_args(&h, SECRET_ARGS).await;
    let link = link_of(&h, &id);
    let page = send(&h.app, get(&link, None)).await;
    assert!(
        page.text.contains(
            r#"<input type="password" name="q0_secret" maxlength="4096" autocomplete="off" required"#
        ),
        "{}",
        page.text
    );
    assert!(page.text.contains("To deploy the site for you") && page.text.contains("DEPLOY_TOKEN"));
    let csrf = csrf_of(&page);
    let blank =
        send(&h.app, post_form(&link, None, &[("csrf", &csrf), ("q0_secret", " "), ("action", "answer")]))
            .await;
    assert_eq!(blank.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(blank.text.contains("Enter the secret"), "{}", blank.text);
    let multi = send(
        &h.app,
        post_form(
            &link,
            None,
            &[("csrf", &csrf), ("q0_secret", &format!("{SECRET}\nmore")), ("action", "answer")],
        ),
    )
    .await;
    assert_eq!(multi.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(!multi.text.contains(SECRET), "a refused secret is not shown back");

    let waiting = tokio::spawn({
        let app = h.app.clone();
        let id = id.clone();
        async move { api(&app, Method::GET, &format!("/v1/questions/{id}/wait?timeout_secs=10"), None).await }
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    let done =
        send(&h.app, post_form(&link, None, &[("csrf", &csrf), ("q0_secret", SECRET), ("action", "answer")]))
            .await;
    assert_eq!(done.status, StatusCode::OK, "{}", done.text);
    assert!(!done.text.contains(SECRET), "{}", done.text);
    assert!(done.text.contains("session:DEPLOY_TOKEN"), "{}", done.text);
    let first = waiting.await.unwrap().json();
    assert_eq!(first["secret_values"], json!({"DEPLOY_TOKEN": SECRET}), "{first}");
    let result: Value = serde_json::from_str(first["result"].as_str().unwrap()).unwrap();
    assert_eq!(
        result["answers"][0],
        json!({"id":"q1","header":"Token","selected":[],"other_text":null,"secret_ref":"session:DEPLOY_TOKEN"})
    );
    // Taken once: a second wait reports the answer without the value.
    let again = api(&h.app, Method::GET, &format!("/v1/questions/{id}/wait?timeout_secs=0"), None).await;
    assert!(again.json().get("secret_values").is_none(), "{}", again.text);
    assert!(!again.text.contains(SECRET));
    assert_stored_nowhere(&h, &id).await;
}

#[tokio::test]
async fn the_api_takes_extended_answers_and_secret_values() {
    let h = extended();
    let id = ask_args(&h, SECRET_ARGS).await;
    let uri = format!("/v1/questions/{id}/answer");
    let secret_answer = json!({"header":"Token","secret_ref":"session:DEPLOY_TOKEN"});
    // Without its value, with a stray value, with a wrong reference, with a malformed map.
    for (body, code) in [
        (json!({"answers":[secret_answer]}), "invalid_response"),
        (
            json!({"answers":[secret_answer], "secret_values": {"DEPLOY_TOKEN": SECRET, "OTHER": "x"}}),
            "invalid_response",
        ),
        (json!({"answers":[secret_answer], "secret_values": {"DEPLOY_TOKEN": ""}}), "invalid_response"),
        (
            json!({"answers":[{"header":"Token","secret_ref":"session:WRONG"}], "secret_values": {"WRONG": SECRET}}),
            "invalid_response",
        ),
        (json!({"answers":[{"header":"Token","custom_answer":SECRET}]}), "invalid_response"),
    ] {
        let reply = api(&h.app, Method::POST, &uri, Some(body.clone())).await;
        reply.error(StatusCode::UNPROCESSABLE_ENTITY, code);
        assert!(!reply.text.contains(SECRET), "an error never echoes the value: {}", reply.text);
    }
    let malformed =
        api(&h.app, Method::POST, &uri, Some(json!({"answers":[secret_answer], "secret_values": ["x"]})))
            .await;
    malformed.error(StatusCode::BAD_REQUEST, "malformed_body");
    assert_eq!(record_state(&h, &id).await, "pending");

    let ok = api(
        &h.app,
        Method::POST,
        &uri,
        Some(json!({"answers":[{"id":"q1","header":"Token","secret_ref":"session:DEPLOY_TOKEN"}],
                    "secret_values": {"DEPLOY_TOKEN": SECRET}})),
    )
    .await;
    assert_eq!(ok.status, StatusCode::OK, "{}", ok.text);
    assert!(!ok.text.contains(SECRET), "{}", ok.text);
    assert_eq!(wait(&h, &id).await["secret_values"]["DEPLOY_TOKEN"], SECRET);
    assert!(wait(&h, &id).await.get("secret_values").is_none());
    assert_stored_nowhere(&h, &id).await;

    // A text question through the API, with an id.
    let id = ask_args(&h, MIXED).await;
    let reply = api(
        &h.app,
        Method::POST,
        &format!("/v1/questions/{id}/answer"),
        Some(json!({"answers":[
            {"id":"why","header":"Reason","custom_answer":"Because."},
            {"header":"Plan","selected":["Small"]},
            {"header":"Extras","custom_answer":"Nothing else"}]})),
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    let result: Value = serde_json::from_str(reply.json()["result"].as_str().unwrap()).unwrap();
    assert_eq!(result["answers"][0]["other_text"], "Because.");
    assert_eq!(result["answers"][2]["other_text"], "Nothing else");
    // Plan does not allow its own answer.
    let id = ask_args(&h, MIXED).await;
    let reply = api(
        &h.app,
        Method::POST,
        &format!("/v1/questions/{id}/answer"),
        Some(json!({"answers":[
            {"header":"Reason","custom_answer":"x"},
            {"header":"Plan","custom_answer":"Medium"},
            {"header":"Extras","selected":["None"]}]})),
    )
    .await;
    reply.error(StatusCode::UNPROCESSABLE_ENTITY, "invalid_response");
}

#[tokio::test]
async fn a_declined_secret_question_carries_nothing() {
    let h = extended();
    let id = ask_args(&h, SECRET_ARGS).await;
    let link = link_of(&h, &id);
    let csrf = csrf_of(&send(&h.app, get(&link, None)).await);
    let reply = send(
        &h.app,
        post_form(&link, None, &[("csrf", &csrf), ("q0_secret", SECRET), ("action", "decline")]),
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    let waited = wait(&h, &id).await;
    assert_eq!(waited["outcome"], "declined");
    assert!(waited.get("secret_values").is_none());
    assert_stored_nowhere_declined(&h, &id).await;
}

async fn assert_stored_nowhere_declined(h: &Harness, id: &str) {
    let stored = serde_json::to_string(&h.store.get(id).await.unwrap().unwrap()).unwrap();
    assert!(!stored.contains(SECRET), "{stored}");
}
