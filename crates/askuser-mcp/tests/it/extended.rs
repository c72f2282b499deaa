//! The server in the extended profile (docs/contract.md §10, §13), against a real rmcp client, for each of
//! the three revisions: text questions as string fields, declared defaults, `allow_other: false`,
//! ids in the result, and secrets that never reach a form.

use std::sync::Arc;

use askuser_core::{
    AnswerError, AskContext, AskUserAnswer, AskUserRequest, AskUserResponse, InMemorySecretSink, Profile,
    QuestionKind, SecretSink, SecretValue,
};
use askuser_mcp::{AskUserServer, Fallback};
use rmcp::model::ProtocolVersion;
use serde_json::{Value, json};

use crate::harness::{Reply, TestClient, ask, connect};

const REVISIONS: [ProtocolVersion; 3] =
    [ProtocolVersion::V_2025_06_18, ProtocolVersion::V_2025_11_25, ProtocolVersion::V_2026_07_28];

fn extended() -> AskUserServer {
    AskUserServer::builder().profile(Profile::Extended).build()
}

/// A choice with a declared default and no "Other", a multi-select with two defaults, and a text
/// question with no id (it gets `q1`, the first generated id not taken).
fn batch() -> Value {
    json!({"questions": [
        {"id": "lang", "header": "Lang", "question": "Which language?", "allow_other": false,
         "options": [{"label": "Rust"}, {"label": "Go", "default": true}]},
        {"id": "parts", "header": "Parts", "question": "Which parts?", "multi_select": true,
         "options": [{"label": "A", "default": true}, {"label": "B"}, {"label": "C", "default": true}]},
        {"kind": "text", "header": "Branch", "question": "Which branch name?"}]})
}

fn answer(version: &ProtocolVersion, branch: &str) -> Value {
    if *version == ProtocolVersion::V_2025_06_18 {
        json!({"q01": "Rust", "q02_1": false, "q02_2": true, "q02_3": false, "q03": branch})
    } else {
        json!({"q01": "Rust", "q02": ["B"], "q03": branch})
    }
}

const ANSWERED: &str = r#"{"status":"answered","answered_by":"user","answers":[{"id":"lang","header":"Lang","selected":["Rust"],"other_text":null},{"id":"parts","header":"Parts","selected":["B"],"other_text":null},{"id":"q1","header":"Branch","selected":[],"other_text":"feature/forms"}]}"#;

#[tokio::test]
async fn text_defaults_and_no_other_in_every_revision() {
    for version in &REVISIONS {
        let replies = vec![Reply::Accept(answer(version, "feature/forms"))];
        let (text, is_error, shown) = ask(extended(), version, true, replies, &batch()).await;
        assert_eq!((text.as_str(), is_error), (ANSWERED, false), "{version}");
        assert_eq!(shown.len(), 1);
        let schema = &shown[0].schema;
        let properties = schema["properties"].as_object().unwrap();
        let keys: Vec<&str> = properties.keys().map(String::as_str).collect();
        // `allow_other: false` and the text question: no "other" field for either.
        let branch = &schema["properties"]["q03"];
        assert_eq!(
            (&branch["type"], &branch["title"], &branch["minLength"], &branch["maxLength"]),
            (&json!("string"), &json!("Branch"), &json!(1), &json!(2000)),
            "{version}"
        );
        assert_eq!(branch["description"], "Which branch name?");
        if *version == ProtocolVersion::V_2025_06_18 {
            assert_eq!(keys, ["q01", "q02_1", "q02_2", "q02_3", "q02_other", "q03"]);
            // 2025-06-18 has no `default` on an enum; its booleans carry the defaults.
            assert!(schema["properties"]["q01"].get("default").is_none());
            let defaults: Vec<&Value> =
                (1..=3).map(|n| &schema["properties"][format!("q02_{n}")]["default"]).collect();
            assert_eq!(defaults, [&json!(true), &json!(false), &json!(true)]);
        } else {
            assert_eq!(keys, ["q01", "q02", "q02_other", "q03"]);
            assert_eq!(schema["properties"]["q01"]["default"], "Go");
            assert_eq!(schema["properties"]["q02"]["default"], json!(["A", "C"]));
        }
        assert_eq!(schema["required"], json!(["q01", "q03"]), "{version}");
    }
}

#[tokio::test]
async fn a_blank_or_overlong_text_answer_is_asked_again() {
    for version in &REVISIONS {
        let replies =
            vec![Reply::Accept(answer(version, "  ")), Reply::Accept(answer(version, "feature/forms"))];
        let (text, _, shown) = ask(extended(), version, true, replies, &batch()).await;
        assert_eq!(text, ANSWERED, "{version}");
        assert!(shown[1].message.contains("\"Branch\" was not answered"), "{}", shown[1].message);

        // The text field declares `maxLength` 2000: a longer answer is refused, never passed on.
        let long = "b".repeat(2001);
        let replies =
            vec![Reply::Accept(answer(version, &long)), Reply::Accept(answer(version, "feature/forms"))];
        let (text, _, shown) = ask(extended(), version, true, replies, &batch()).await;
        assert_eq!((text.as_str(), shown.len()), (ANSWERED, 2), "{version}");
        assert!(
            shown[1].message.contains("the answer to \"Branch\" takes at most 2000 characters, not 2001"),
            "{}",
            shown[1].message
        );
    }
}

#[tokio::test]
async fn decline_and_no_form_are_data_in_the_extended_profile() {
    for version in &REVISIONS {
        let (text, is_error, _) = ask(extended(), version, true, vec![Reply::Cancel], &batch()).await;
        assert_eq!(
            (text.as_str(), is_error),
            (r#"{"status":"declined","answered_by":"user","answers":[]}"#, false)
        );
        // No form and no fallback: nobody was asked.
        let (text, _, shown) = ask(extended(), version, false, vec![], &batch()).await;
        assert_eq!(
            (text.as_str(), shown.len()),
            (r#"{"status":"declined","answered_by":"unattended","answers":[]}"#, 0),
            "{version}"
        );
        // Defaults cannot answer a text question: declined, marked unattended.
        let defaults =
            AskUserServer::builder().profile(Profile::Extended).fallback(Fallback::defaults()).build();
        let (text, _, _) = ask(defaults, version, false, vec![], &batch()).await;
        assert_eq!(text, r#"{"status":"declined","answered_by":"unattended","answers":[]}"#);
    }
}

fn secret() -> Value {
    json!({"questions": [{"kind": "secret", "id": "token", "header": "Token", "question": "Your deploy token?",
        "secret_name": "DEPLOY_TOKEN", "purpose": "To push the release."}]})
}

const THE_VALUE: &str = "hunter2-very-secret";

/// A fallback that reads secrets safely (here: a script) and hands them to `sink`.
fn secret_taker(sink: Arc<InMemorySecretSink>) -> Fallback {
    let answerer = move |request: AskUserRequest, context: AskContext| {
        let sink = Arc::clone(&sink);
        async move {
            let question = &request.questions().as_slice()[0];
            assert_eq!(question.kind(), QuestionKind::Secret);
            let name = question.secret_name().unwrap();
            sink.put(&context, name, SecretValue::new(THE_VALUE.to_owned()))
                .await
                .map_err(|e| AnswerError::failed(e.to_string()))?;
            Ok::<_, AnswerError>(AskUserResponse::answered(vec![AskUserAnswer::secret(
                question.header(),
                name,
            )]))
        }
    };
    Fallback::answerer(answerer, "a safe prompt asks").takes_secrets()
}

#[tokio::test]
async fn a_secret_never_reaches_the_form() {
    for version in &REVISIONS {
        // Nowhere safe to ask: declined at once, no form shown.
        let (text, is_error, shown) = ask(extended(), version, true, vec![], &secret()).await;
        assert_eq!(
            (text.as_str(), is_error, shown.len()),
            (r#"{"status":"declined","answered_by":"unattended","answers":[]}"#, false, 0),
            "{version}"
        );
        // A fallback that takes secrets asks it, though the client could show a form.
        let sink = Arc::new(InMemorySecretSink::new());
        let server = AskUserServer::builder()
            .profile(Profile::Extended)
            .fallback(secret_taker(Arc::clone(&sink)))
            .build();
        let (text, _, shown) = ask(server, version, true, vec![], &secret()).await;
        assert_eq!(
            text,
            r#"{"status":"answered","answered_by":"user","answers":[{"id":"token","header":"Token","selected":[],"other_text":null,"secret_ref":"session:DEPLOY_TOKEN"}]}"#,
            "{version}"
        );
        assert!(shown.is_empty(), "{version}: a secret went into a form");
        assert!(!text.contains(THE_VALUE));
        assert_eq!(sink.len(), 1);
    }
}

#[tokio::test]
async fn the_extended_tool_says_where_secrets_go() {
    let client = TestClient::new(ProtocolVersion::V_2025_11_25, true, vec![]);
    let running = connect(extended(), client).await;
    let tool = running.list_all_tools().await.unwrap().remove(0);
    let description = tool.description.as_deref().unwrap();
    assert!(description.contains("kind \"secret\""), "{description}");
    assert!(description.contains("a call with a secret question is declined at once"), "{description}");
    let kinds = &tool.input_schema["properties"]["questions"]["items"]["properties"]["kind"]["enum"];
    assert_eq!(kinds, &json!(["choice", "text", "secret"]));
    let info = running.peer_info().unwrap();
    assert!(info.instructions.as_deref().unwrap().contains("session:NAME"));
    running.cancel().await.unwrap();

    let server = AskUserServer::builder()
        .profile(Profile::Extended)
        .fallback(secret_taker(Arc::new(InMemorySecretSink::new())))
        .build();
    let description = server.tool().description.unwrap();
    assert!(
        description.contains("it is asked the way a question is when there is no form (a safe prompt asks)")
    );
}
