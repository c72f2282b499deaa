//! `ElicitationHandler` as the client of askuser's own server, for each revision: the server's
//! form becomes askuser questions for an `Answerer`, and the answers go back into the form.

use std::sync::{Arc, Mutex};

use askuser_core::{
    AnswerError, AskContext, AskUserAnswer, AskUserRequest, AskUserResponse, DECLINED, Profile, Question,
    QuestionKind,
};
use askuser_mcp::testing::{FormAsker, connect_to, serve_client};
use askuser_mcp::{AskUserServer, ElicitationHandler, LEAVE_EMPTY};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, ElicitRequestParams, ElicitationAction, ProtocolVersion};
use serde_json::{Value, json};

use crate::harness::{call, text_of};

const REVISIONS: [ProtocolVersion; 3] =
    [ProtocolVersion::V_2025_06_18, ProtocolVersion::V_2025_11_25, ProtocolVersion::V_2026_07_28];

type Seen = Arc<Mutex<Vec<(AskUserRequest, AskContext)>>>;

/// A person who types "Zig" for the language and takes the first option everywhere else.
fn person(seen: Seen) -> impl askuser_core::Answerer {
    answering(seen, |q| match q.header() {
        "Lang" => AskUserAnswer::custom("Lang", "Zig"),
        header => AskUserAnswer::picked(header, [q.options()[0].label()]),
    })
}

/// A person who answers each question with `answer`, recording what was asked in `seen`.
fn answering(seen: Seen, answer: fn(&Question) -> AskUserAnswer) -> impl askuser_core::Answerer {
    move |request: AskUserRequest, context: AskContext| {
        seen.lock().unwrap().push((request.clone(), context));
        async move {
            let answers = request.questions().iter().map(answer).collect();
            Ok::<_, AnswerError>(AskUserResponse::answered(answers))
        }
    }
}

async fn ask_through(handler: ElicitationHandler, version: &ProtocolVersion) -> String {
    let (server_end, client_end) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        if let Ok(running) = AskUserServer::default().serve(server_end).await {
            let _ = running.waiting().await;
        }
    });
    let handler =
        if version.has_initialize() { handler.with_protocol_version(version.clone()) } else { handler };
    let running = serve_client(handler, version.clone(), client_end).await;
    let arguments = json!({"questions": [
        {"header": "Lang", "question": "Which language?", "options": [{"label": "Rust", "description": "fast"}, {"label": "Go"}]},
        {"header": "Parts", "question": "Which parts?", "multi_select": true,
         "options": [{"label": "A"}, {"label": "B"}, {"label": "C"}]}]});
    let result = running.call_tool(call(&arguments)).await.unwrap();
    running.cancel().await.unwrap();
    text_of(&result).0
}

#[tokio::test]
async fn the_handler_answers_askusers_own_form() {
    for version in &REVISIONS {
        let seen = Seen::default();
        let text = ask_through(ElicitationHandler::new(person(Arc::clone(&seen))), version).await;
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 1, "{version}");
        let (request, context) = &seen[0];
        let questions = request.questions().as_slice();
        assert_eq!(context.session_id.as_deref(), Some("mcp:askuser-mcp"));
        assert!(
            questions[0].question().starts_with("[askuser-mcp] askuser-mcp asks: The AI model"),
            "{version}"
        );
        // The optional choice can be left empty; the titles carry the descriptions.
        let labels: Vec<&str> =
            questions[0].options().iter().map(askuser_core::QuestionOption::label).collect();
        assert_eq!(labels, ["Rust — fast", "Go", LEAVE_EMPTY]);
        if *version == ProtocolVersion::V_2025_06_18 {
            // One yes/no question per option of the multi-select.
            assert_eq!(questions.len(), 4);
            assert_eq!(text, r#"{"Lang":["Zig"],"Parts":["A","B","C"]}"#);
        } else {
            assert_eq!(questions.len(), 2);
            assert!(questions[1].multi_select());
            assert_eq!(text, r#"{"Lang":["Zig"],"Parts":["A"]}"#, "{version}");
        }
    }
}

#[tokio::test]
async fn a_person_who_declines_declines_the_form() {
    let decline =
        |_: AskUserRequest, _: AskContext| async { Ok::<_, AnswerError>(AskUserResponse::declined()) };
    for version in &REVISIONS {
        assert_eq!(ask_through(ElicitationHandler::new(decline), version).await, DECLINED, "{version}");
    }
}

#[tokio::test]
async fn url_mode_is_declined_without_asking() {
    let asked = Seen::default();
    let handler = ElicitationHandler::new(person(Arc::clone(&asked)));
    let request: ElicitRequestParams = serde_json::from_value(json!({
        "mode": "url", "message": "Sign in", "url": "https://example.invalid/login", "elicitationId": "e1"}))
    .unwrap();
    let result = handler.answer(request, "some-server").await.unwrap();
    assert_eq!(result.action, ElicitationAction::Decline);
    assert!(asked.lock().unwrap().is_empty());
}

// The extended profile: string, number and integer fields as text questions, against a plain
// rmcp server (not askuser's) whose tool asks such a form and returns what it received.

fn signup_form() -> FormAsker {
    let form = json!({"type": "object", "properties": {
        "email": {"type": "string", "title": "Email", "format": "email"},
        "age": {"type": "integer", "title": "Age", "minimum": 18, "maximum": 130},
        "ratio": {"type": "number", "title": "Share", "description": "Share of traffic", "minimum": 0, "maximum": 1},
        "name": {"type": "string", "title": "Name", "minLength": 2, "maxLength": 10},
        "site": {"type": "string", "title": "Site", "format": "uri"},
        "call": {"type": "string", "title": "Call", "format": "date-time"},
        "nick": {"type": "string", "title": "Nick", "default": "anon"},
        "note": {"type": "string", "title": "Note"},
        "plan": {"type": "string", "title": "Plan", "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}], "default": "l"},
        "news": {"type": "boolean", "title": "News", "default": true}},
        "required": ["email", "age", "ratio", "name", "site", "call", "plan", "news"]});
    FormAsker {
        form: serde_json::from_value(form).unwrap(),
        message: "Sign up for the beta".to_owned(),
        name: "signup-server".to_owned(),
    }
}

/// A person who types `typed[header]` into each text question (attempt by attempt) and takes the
/// default of each choice question; records the requests.
fn typist(attempts: Vec<Vec<(&'static str, &'static str)>>, seen: Seen) -> impl askuser_core::Answerer {
    let attempts = Arc::new(Mutex::new(std::collections::VecDeque::from(attempts)));
    move |request: AskUserRequest, context: AskContext| {
        seen.lock().unwrap().push((request.clone(), context));
        let typed = attempts.lock().unwrap().pop_front().unwrap_or_default();
        async move {
            let answers = request
                .questions()
                .iter()
                .map(|q| match q.kind() {
                    QuestionKind::Text => {
                        let text = typed.iter().find(|(h, _)| *h == q.header()).map_or("?", |(_, t)| *t);
                        AskUserAnswer::custom(q.header(), text)
                    }
                    _ => {
                        AskUserAnswer::picked(q.header(), q.declared_defaults().map(|o| o.label().to_owned()))
                    }
                })
                .collect();
            Ok::<_, AnswerError>(AskUserResponse::answered(answers))
        }
    }
}

const GOOD: [(&str, &str); 8] = [
    ("Email", "ada@example.org"),
    ("Age", "36"),
    ("Share", "0.25"),
    ("Name", "Ada"),
    ("Site", "https://ada.example.org/"),
    ("Call", "2026-12-01T09:30:00+01:00"),
    ("Nick", "-"),
    ("Note", "-"),
];

async fn signup(handler: ElicitationHandler) -> Result<Value, rmcp::service::ServiceError> {
    let running = connect_to(signup_form(), handler, ProtocolVersion::V_2025_11_25).await;
    let result = running.call_tool(CallToolRequestParams::new("signup")).await;
    running.cancel().await.unwrap();
    Ok(serde_json::from_str(&text_of(&result?).0).unwrap())
}

#[tokio::test]
async fn text_and_number_fields_are_checked_before_they_are_sent() {
    let seen = Seen::default();
    let mut bad = GOOD.to_vec();
    bad[0] = ("Email", "ada at example.org");
    bad[1] = ("Age", "12");
    let handler = ElicitationHandler::new(typist(vec![bad, GOOD.to_vec()], Arc::clone(&seen)))
        .with_profile(Profile::Extended);
    let received = signup(handler).await.unwrap();
    // The server saw only the second, fitting answer; numbers are JSON numbers of their type.
    assert_eq!(
        received,
        json!({"action": "accept", "content": {
            "email": "ada@example.org", "age": 36, "ratio": 0.25, "name": "Ada",
            "site": "https://ada.example.org/", "call": "2026-12-01T09:30:00+01:00",
            "nick": "anon", "plan": "l", "news": true}})
    );
    assert!(received["content"]["age"].is_i64() && received["content"]["ratio"].is_f64());
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 2);
    let first = seen[0].0.questions().as_slice();
    let kinds: Vec<QuestionKind> = first.iter().map(askuser_core::Question::kind).collect();
    assert_eq!(kinds.iter().filter(|k| **k == QuestionKind::Text).count(), 8);
    let age = first.iter().find(|q| q.header() == "Age").unwrap();
    assert!(age.question().contains("Answer with a whole number, 18 to 130."), "{}", age.question());
    let nick = first.iter().find(|q| q.header() == "Nick").unwrap();
    assert!(nick.question().contains("Default: anon; answer - to take it."), "{}", nick.question());
    // The schema's defaults mark the choice and yes/no options.
    let plan = first.iter().find(|q| q.header() == "Plan").unwrap();
    assert_eq!(
        plan.declared_defaults().map(askuser_core::QuestionOption::label).collect::<Vec<_>>(),
        ["Large"]
    );
    let news = first.iter().find(|q| q.header() == "News").unwrap();
    assert_eq!(
        news.declared_defaults().map(askuser_core::QuestionOption::label).collect::<Vec<_>>(),
        ["Yes"]
    );
    // The second round names every problem, in the order the questions were asked: the form's
    // own field order when rmcp kept it (`property_order`, filled when serde_json's
    // `preserve_order` is on, as in a workspace build with rig-core), else the keys' order.
    let again = seen[1].0.questions().as_slice()[0].question();
    let age = "\"Age\" takes a whole number of at least 18, not 12";
    let email = "\"Email\" takes an email address (name@example.com), not \"ada at example.org\"";
    let position = |header: &str| first.iter().position(|q| q.header() == header).unwrap();
    let problems = if position("Age") < position("Email") { [age, email] } else { [email, age] };
    assert!(
        again.contains(&format!("Your last answer could not be sent: {}; {}.", problems[0], problems[1])),
        "{again}"
    );
}

#[tokio::test]
async fn a_misfit_twice_declines_and_nothing_unchecked_is_sent() {
    for (header, wrong) in [
        ("Share", "1.5"),
        ("Age", "36.5"),
        ("Name", "A"),
        ("Name", "Adalovelace"),
        ("Site", "not a uri"),
        ("Call", "2023-02-29T10:00:00Z"),
        ("Call", "2026-12-01 09:30"),
        ("Call", "2026-12-01T25:30:00Z"),
        ("Email", "ada@localhost"),
    ] {
        let mut bad = GOOD.to_vec();
        bad.iter_mut().find(|(h, _)| *h == header).unwrap().1 = wrong;
        let handler = ElicitationHandler::new(typist(vec![bad.clone(), bad], Seen::default()))
            .with_profile(Profile::Extended);
        assert_eq!(
            signup(handler).await.unwrap(),
            json!({"action": "decline", "content": null}),
            "{header}: {wrong}"
        );
    }
}

#[tokio::test]
async fn the_reference_profile_refuses_required_text_fields() {
    let handler = ElicitationHandler::new(typist(vec![], Seen::default()));
    let error = signup(handler).await.unwrap_err();
    assert!(error.to_string().contains("only in the extended profile"), "{error}");
}

/// Both ends extended: askuser's own extended form (a choice with "Other", one without, a text
/// question) answered through the extended handler, for each revision.
#[tokio::test]
async fn the_extended_handler_answers_askusers_extended_form() {
    let arguments = json!({"questions": [
        {"id": "lang", "header": "Lang", "question": "Which language?",
         "options": [{"label": "Rust"}, {"label": "Go", "default": true}]},
        {"header": "Size", "question": "Which size?", "allow_other": false,
         "options": [{"label": "S"}, {"label": "L"}]},
        {"kind": "text", "header": "Branch", "question": "Which branch?"}]});
    for version in &REVISIONS {
        let seen = Seen::default();
        let person = answering(Arc::clone(&seen), |q| match q.header() {
            "Lang" => AskUserAnswer::custom("Lang", "Zig"),
            "Size" => AskUserAnswer::picked("Size", ["L"]),
            header => AskUserAnswer::custom(header, "feature/x"),
        });
        let handler = ElicitationHandler::new(person).with_profile(Profile::Extended);
        let handler =
            if version.has_initialize() { handler.with_protocol_version(version.clone()) } else { handler };
        let server = AskUserServer::builder().profile(Profile::Extended).build();
        let running = connect_to(server, handler, version.clone()).await;
        let result = running.call_tool(call(&arguments)).await.unwrap();
        running.cancel().await.unwrap();
        assert_eq!(
            text_of(&result).0,
            r#"{"status":"answered","answered_by":"user","answers":[{"id":"lang","header":"Lang","selected":[],"other_text":"Zig"},{"id":"q1","header":"Size","selected":["L"],"other_text":null},{"id":"q2","header":"Branch","selected":[],"other_text":"feature/x"}]}"#,
            "{version}"
        );
        let seen = seen.lock().unwrap();
        let questions = seen[0].0.questions().as_slice();
        // "Other" where the form has a field for it, none where it does not; the text question.
        assert!(questions[0].allow_other() && !questions[1].allow_other(), "{version}");
        assert_eq!(questions[2].kind(), QuestionKind::Text);
        if *version != ProtocolVersion::V_2025_06_18 {
            let defaults: Vec<&str> =
                questions[0].declared_defaults().map(askuser_core::QuestionOption::label).collect();
            assert_eq!(defaults, ["Go"], "{version}");
        }
    }
}

/// A plain rmcp server's destructive confirmation, as a server would ask it.
fn delete_form() -> FormAsker {
    let form = json!({"type": "object", "properties": {
        "confirm": {"type": "boolean", "title": "Confirm", "description": "Delete all 214 files? This cannot be undone."}},
        "required": ["confirm"]});
    FormAsker {
        form: serde_json::from_value(form).unwrap(),
        message: "Delete all 214 files? This cannot be undone.".to_owned(),
        name: "files-server".to_owned(),
    }
}

async fn delete_with(handler: ElicitationHandler) -> Value {
    let running = connect_to(delete_form(), handler, ProtocolVersion::V_2025_11_25).await;
    let result = running.call_tool(CallToolRequestParams::new("delete")).await.unwrap();
    running.cancel().await.unwrap();
    serde_json::from_str(&text_of(&result).0).unwrap()
}

/// Guards consent: an answer nobody gave (the defaults) never accepts a server's form, unless the
/// host opted in for that very server.
#[tokio::test]
async fn only_a_person_accepts_a_form() {
    let declined = json!({"action": "decline", "content": null});
    let accepted = json!({"action": "accept", "content": {"confirm": true}});
    assert_eq!(delete_with(ElicitationHandler::new(askuser_core::DefaultsResponder::new())).await, declined);
    // Defaults applied on a timeout are no person either.
    let timed_out = |request: AskUserRequest, _: AskContext| async move {
        Ok::<_, AnswerError>(askuser_core::DefaultsResponder::respond(
            &request,
            askuser_core::AnsweredBy::Timeout,
        ))
    };
    assert_eq!(delete_with(ElicitationHandler::new(timed_out)).await, declined);
    // An opt-in for another server changes nothing; one for this server lets the defaults through.
    let elsewhere =
        ElicitationHandler::new(askuser_core::DefaultsResponder::new()).allow_unattended_from("other-server");
    assert_eq!(delete_with(elsewhere).await, declined);
    let here =
        ElicitationHandler::new(askuser_core::DefaultsResponder::new()).allow_unattended_from("files-server");
    assert_eq!(delete_with(here).await, accepted);
    // A person's "Yes" is sent as ever.
    let seen = Seen::default();
    let person = answering(Arc::clone(&seen), |q| AskUserAnswer::picked(q.header(), ["Yes"]));
    assert_eq!(delete_with(ElicitationHandler::new(person)).await, accepted);
    assert_eq!(seen.lock().unwrap().len(), 1);
}
