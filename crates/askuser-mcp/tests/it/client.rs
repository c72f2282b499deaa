//! `ElicitationHandler` as the client of askuser's own server, for each revision: the server's
//! form becomes askuser questions for an `Answerer`, and the answers go back into the form.

use std::sync::{Arc, Mutex};

use askuser_core::{AnswerError, AskContext, AskUserAnswer, AskUserRequest, AskUserResponse, DECLINED};
use askuser_mcp::{AskUserServer, ElicitationHandler, LEAVE_EMPTY};
use rmcp::model::{ElicitRequestParams, ElicitationAction, ProtocolVersion};
use rmcp::{ClientLifecycleMode, ClientServiceExt, ServiceExt};
use serde_json::json;

use crate::harness::{call, text_of};

const REVISIONS: [ProtocolVersion; 3] =
    [ProtocolVersion::V_2025_06_18, ProtocolVersion::V_2025_11_25, ProtocolVersion::V_2026_07_28];

type Seen = Arc<Mutex<Vec<(AskUserRequest, AskContext)>>>;

/// A person who types "Zig" for the language and takes the first option everywhere else.
fn person(seen: Seen) -> impl askuser_core::Answerer {
    move |request: AskUserRequest, context: AskContext| {
        seen.lock().unwrap().push((request.clone(), context));
        async move {
            let answers = request
                .questions()
                .iter()
                .map(|q| match q.header() {
                    "Lang" => AskUserAnswer::custom("Lang", "Zig"),
                    header => AskUserAnswer::picked(header, [q.options()[0].label()]),
                })
                .collect();
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
    let running = if version.has_initialize() {
        let handler = handler.with_protocol_version(version.clone());
        handler.serve(client_end).await.unwrap()
    } else {
        handler
            .serve_with_lifecycle(
                client_end,
                ClientLifecycleMode::Discover { preferred_versions: vec![version.clone()] },
            )
            .await
            .unwrap()
    };
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
