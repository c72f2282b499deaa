//! The server against a real rmcp client, for each of the three revisions.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;

use askuser_core::{
    AnswerError, AskContext, AskUserAnswer, AskUserRequest, AskUserResponse, DECLINED, TIMED_OUT,
    TIMED_OUT_STOP,
};
use askuser_mcp::{AskUserServer, Fallback, NO_FORM};
use askuser_tool::OnTimeout;
use rmcp::model::{CallToolRequest, ClientRequest};
use rmcp::model::{
    CallToolResponse, InputResponses, NumberOrString, ProgressToken, ProtocolVersion, RequestMetaObject,
};
use rmcp::service::{PeerRequestOptions, ServiceError};
use serde_json::{Value, json};

use crate::harness::{Reply, TestClient, ask, call, connect, text_of};

const REVISIONS: [ProtocolVersion; 3] =
    [ProtocolVersion::V_2025_06_18, ProtocolVersion::V_2025_11_25, ProtocolVersion::V_2026_07_28];

fn one() -> Value {
    json!({"questions": [{"header": "Lang", "question": "Which language?",
        "options": [{"label": "Rust", "description": "fast"}, {"label": "Go"}]}]})
}

fn two() -> Value {
    json!({"questions": [
        {"header": "Lang", "question": "Which language?", "options": [{"label": "Rust", "description": "fast"}, {"label": "Go"}]},
        {"header": "Parts", "question": "Which parts?", "multi_select": true,
         "options": [{"label": "A"}, {"label": "B"}, {"label": "C"}]}]})
}

/// The form content a person submits for `two()`, in the shape of `version`'s form.
fn answer_two(version: &ProtocolVersion, lang: &str, parts: &[&str]) -> Value {
    if *version == ProtocolVersion::V_2025_06_18 {
        json!({"q01": lang, "q02_1": parts.contains(&"A"), "q02_2": parts.contains(&"B"), "q02_3": parts.contains(&"C")})
    } else {
        json!({"q01": lang, "q02": parts})
    }
}

#[tokio::test]
async fn a_single_question() {
    for version in &REVISIONS {
        let replies = vec![Reply::Accept(json!({"q01": "Go"}))];
        let (text, is_error, shown) = ask(AskUserServer::default(), version, true, replies, &one()).await;
        assert_eq!((text.as_str(), is_error), (r#"{"Lang":["Go"]}"#, false), "{version}");
        assert_eq!(shown.len(), 1);
        assert!(shown[0].message.contains("The AI model you are working with asks"), "{version}");
        let field = &shown[0].schema["properties"]["q01"];
        if *version == ProtocolVersion::V_2025_06_18 {
            assert_eq!(field["enum"], json!(["Rust", "Go"]));
            assert_eq!(field["enumNames"], json!(["Rust — fast", "Go"]));
        } else {
            assert_eq!(
                field["oneOf"],
                json!([{"const": "Rust", "title": "Rust — fast"}, {"const": "Go", "title": "Go"}])
            );
        }
        assert_eq!(shown[0].schema["properties"]["q01_other"]["type"], "string");
    }
}

#[tokio::test]
async fn single_and_multi_select() {
    for version in &REVISIONS {
        let replies = vec![Reply::Accept(answer_two(version, "Rust", &["A", "C"]))];
        let (text, is_error, shown) = ask(AskUserServer::default(), version, true, replies, &two()).await;
        assert_eq!((text.as_str(), is_error), (r#"{"Lang":["Rust"],"Parts":["A","C"]}"#, false), "{version}");
        let keys: Vec<String> = shown[0].schema["properties"].as_object().unwrap().keys().cloned().collect();
        if *version == ProtocolVersion::V_2025_06_18 {
            assert_eq!(keys, ["q01", "q01_other", "q02_1", "q02_2", "q02_3", "q02_other"]);
        } else {
            assert_eq!(keys, ["q01", "q01_other", "q02", "q02_other"]);
            assert_eq!(shown[0].schema["properties"]["q02"]["maxItems"], 3);
        }
    }
}

#[tokio::test]
async fn other_answers() {
    for version in &REVISIONS {
        let mut content = answer_two(version, "Rust", &[]);
        content.as_object_mut().unwrap().remove("q01");
        content["q01_other"] = json!("Zig, if the team agrees");
        content["q02_other"] = json!("none yet");
        let (text, _, _) =
            ask(AskUserServer::default(), version, true, vec![Reply::Accept(content)], &two()).await;
        assert_eq!(text, r#"{"Lang":["Zig, if the team agrees"],"Parts":["none yet"]}"#, "{version}");
    }
}

#[tokio::test]
async fn decline_and_cancel_reach_the_model_as_declined() {
    for version in &REVISIONS {
        for reply in [Reply::Decline, Reply::Cancel] {
            let (text, is_error, shown) =
                ask(AskUserServer::default(), version, true, vec![reply], &two()).await;
            assert_eq!((text.as_str(), is_error, shown.len()), (DECLINED, false, 1), "{version}");
        }
    }
}

/// A misfit is refused and the form shown again once, naming the problem; the second answer counts.
#[tokio::test]
async fn a_misfit_is_asked_again_once() {
    for version in &REVISIONS {
        let replies =
            vec![Reply::Accept(json!({"q01": "Go"})), Reply::Accept(answer_two(version, "Go", &["B"]))];
        let (text, _, shown) = ask(AskUserServer::default(), version, true, replies, &two()).await;
        assert_eq!(text, r#"{"Lang":["Go"],"Parts":["B"]}"#, "{version}");
        assert_eq!(shown.len(), 2);
        assert!(!shown[0].message.contains("could not be used"));
        assert!(
            shown[1].message.starts_with("Your last answer could not be used: \"Parts\" was not answered."),
            "{version}: {}",
            shown[1].message
        );
    }
}

/// Guards "asked again, never declined": a person who keeps answering in a way that does not fit
/// is asked again up to `FORM_ROUNDS` times, and the model is then told no answer fitted: not
/// that the person declined.
#[tokio::test]
async fn misfits_are_asked_again_never_declined() {
    for version in &REVISIONS {
        let replies = vec![Reply::Accept(json!({"q01": "Java"})); usize::from(askuser_mcp::FORM_ROUNDS)];
        let (text, is_error, shown) = ask(AskUserServer::default(), version, true, replies, &one()).await;
        assert_eq!(shown.len(), usize::from(askuser_mcp::FORM_ROUNDS), "{version}");
        assert!(is_error, "{version}");
        assert_ne!(text, DECLINED);
        assert!(text.starts_with("The person answered the form 5 times, but no answer fitted"), "{text}");
        assert!(text.contains("Java"), "{text}");
        assert!(shown[4].message.contains("Java"), "{}", shown[4].message);
    }
}

/// Guards hosts that preselect (fast-agent: the first radio option is always picked, a
/// multi-select needs a tick): a filled "Other" field is the answer, in every revision.
#[tokio::test]
async fn a_filled_other_field_wins_over_a_preselected_choice() {
    for version in &REVISIONS {
        let mut content = answer_two(version, "Rust", &["A"]);
        content["q01_other"] = json!("Zig, if the team agrees");
        content["q02_other"] = json!("none yet");
        let (text, _, shown) =
            ask(AskUserServer::default(), version, true, vec![Reply::Accept(content)], &two()).await;
        assert_eq!(text, r#"{"Lang":["Zig, if the team agrees"],"Parts":["none yet"]}"#, "{version}");
        assert_eq!(shown.len(), 1, "{version}");
    }
}

/// Guards the caps the form declares: an "Other" answer past its `maxLength` (2,000 characters)
/// never reaches the model; the person is asked again, told why.
#[tokio::test]
async fn answers_past_the_forms_cap_are_asked_again() {
    for version in &REVISIONS {
        let huge = "x".repeat(3_000_000);
        let replies = vec![
            Reply::Accept(json!({"q01_other": huge})),
            Reply::Accept(json!({"q01_other": "y".repeat(2000)})),
        ];
        let (text, _, shown) = ask(AskUserServer::default(), version, true, replies, &one()).await;
        assert_eq!(shown[0].schema["properties"]["q01_other"]["maxLength"], 2000);
        assert_eq!(text, format!(r#"{{"Lang":["{}"]}}"#, "y".repeat(2000)), "{version}");
        assert_eq!(shown.len(), 2, "{version}");
        assert!(
            shown[1].message.contains("takes at most 2000 characters, not 3000000"),
            "{version}: {}",
            shown[1].message
        );
    }
}

/// The wait is bounded by the server's timeout, not by the person (2025 revisions: the
/// `elicitation/create` request is still open when the timeout fires).
#[tokio::test(start_paused = true)]
async fn the_timeout_bounds_the_wait() {
    for version in &REVISIONS[..2] {
        let server = AskUserServer::builder().timeout(Duration::from_secs(30)).build();
        let replies = vec![Reply::Late(Duration::from_mins(10), json!({"q01": "Go"}))];
        let (text, is_error, _) = ask(server, version, true, replies, &one()).await;
        assert_eq!((text.as_str(), is_error), (TIMED_OUT, false), "{version}");
    }
}

/// Guards the SDK request timeout: an answer given after 90 s (past the 60 s many SDKs use) but
/// within `--timeout` still counts.
#[tokio::test(start_paused = true)]
async fn a_slow_person_within_the_timeout_is_heard() {
    for version in &REVISIONS[..2] {
        let server = AskUserServer::builder().timeout(Duration::from_mins(5)).build();
        let replies = vec![Reply::Late(Duration::from_secs(90), json!({"q01": "Rust"}))];
        let (text, _, _) = ask(server, version, true, replies, &one()).await;
        assert_eq!(text, r#"{"Lang":["Rust"]}"#, "{version}");
    }
}

/// Guards the heartbeat: a client that asked for progress hears every 15 s that the call is
/// alive, so an SDK that resets its request timeout on progress keeps waiting.
#[tokio::test(start_paused = true)]
async fn a_long_wait_sends_progress() {
    for version in &REVISIONS[..2] {
        let server = AskUserServer::builder().timeout(Duration::from_mins(10)).build();
        let replies = vec![Reply::Late(Duration::from_secs(100), json!({"q01": "Rust"}))];
        let client = TestClient::new(version.clone(), true, replies);
        let running = connect(server, client.clone()).await;
        let mut params = call(&one());
        params.meta = Some(RequestMetaObject::with_progress_token(ProgressToken(NumberOrString::Number(7))));
        let result = running.call_tool(params).await.unwrap();
        assert_eq!(text_of(&result).0, r#"{"Lang":["Rust"]}"#);
        // Let the client finish handling what arrived before the result.
        tokio::task::yield_now().await;
        let progress = client.progress();
        assert!((5..=6).contains(&progress.len()), "{version}: {progress:?}");
        assert!(progress.iter().all(|m| m == "waiting for the person to answer"));
        running.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn a_client_without_elicitation_gets_the_fallback() {
    let scripted = |request: AskUserRequest, context: AskContext| async move {
        assert!(context.tool_call_id.is_some());
        let first = request.questions().as_slice()[0].options()[1].label().to_owned();
        Ok::<_, AnswerError>(AskUserResponse::answered(vec![AskUserAnswer::picked("Lang", [first])]))
    };
    for version in &REVISIONS {
        let decline = AskUserServer::default();
        let (text, is_error, _) = ask(decline, version, false, vec![], &one()).await;
        assert_eq!((text.as_str(), is_error), (NO_FORM, false), "{version}");

        let defaults = AskUserServer::builder().fallback(Fallback::defaults()).build();
        let (text, _, _) = ask(defaults, version, false, vec![], &one()).await;
        assert_eq!(text, r#"{"answered_by":"unattended","answers":{"Lang":["Rust"]}}"#, "{version}");

        let answerer =
            AskUserServer::builder().fallback(Fallback::answerer(scripted, "a script answers")).build();
        let (text, _, shown) = ask(answerer, version, false, vec![], &one()).await;
        assert_eq!((text.as_str(), shown.len()), (r#"{"Lang":["Go"]}"#, 0), "{version}");
    }
}

/// Guards cancellation: when the client cancels the call (`notifications/cancelled`), the server
/// stops waiting and drops whoever was asking, instead of holding a question open forever.
#[tokio::test]
async fn a_cancelled_call_stops_the_answerer() {
    struct Dropped(Arc<Notify>);
    impl Drop for Dropped {
        fn drop(&mut self) {
            self.0.notify_one();
        }
    }
    let dropped = Arc::new(Notify::new());
    let started = Arc::new(Notify::new());
    let (on_drop, on_start) = (Arc::clone(&dropped), Arc::clone(&started));
    let never = move |_: AskUserRequest, _: AskContext| {
        let guard = Dropped(Arc::clone(&on_drop));
        on_start.notify_one();
        async move {
            let _guard = guard;
            std::future::pending::<Result<AskUserResponse, AnswerError>>().await
        }
    };
    let server = AskUserServer::builder().fallback(Fallback::answerer(never, "nobody answers")).build();
    let running = connect(server, TestClient::new(ProtocolVersion::V_2025_11_25, false, vec![])).await;
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(call(&one())));
    let handle =
        running.peer().send_cancellable_request(request, PeerRequestOptions::no_options()).await.unwrap();
    started.notified().await;
    handle.cancel(Some("the user moved on".to_owned())).await.unwrap();
    tokio::time::timeout(Duration::from_secs(10), dropped.notified())
        .await
        .expect("the answerer was dropped");
    running.cancel().await.unwrap();
}

#[tokio::test]
async fn invalid_arguments_are_a_retry_for_the_model() {
    for version in &REVISIONS {
        for elicitation in [true, false] {
            let bad =
                json!({"questions": [{"header": "H", "question": "Q?", "options": [{"label": "only one"}]}]});
            let (text, is_error, shown) =
                ask(AskUserServer::default(), version, elicitation, vec![], &bad).await;
            assert!(is_error, "{version}");
            assert!(text.contains(r#""loc":["questions",0,"options"]"#), "{text}");
            assert!(shown.is_empty());
        }
    }
}

#[tokio::test]
async fn the_tool_says_what_happens_without_a_form() {
    let client = TestClient::new(ProtocolVersion::V_2025_11_25, true, vec![]);
    let server = AskUserServer::builder().fallback(Fallback::defaults()).build();
    let running = connect(server, client).await;
    let tools = running.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 1);
    let description = tools[0].description.as_deref().unwrap();
    assert!(description.contains("When this MCP client cannot show a form, the default options are picked"));
    assert_eq!(tools[0].input_schema["required"], json!(["questions"]));
    assert_eq!(tools[0].annotations.as_ref().unwrap().read_only_hint, Some(true));
    running.cancel().await.unwrap();
}

// 2026-07-28: the state the client echoes is untrusted.

async fn first_round(running: &crate::harness::Client, arguments: &Value) -> String {
    match running.call_tool_once(call(arguments)).await.unwrap() {
        CallToolResponse::InputRequired(result) => {
            let requests = result.input_requests.expect("an input request");
            assert_eq!(requests.keys().collect::<Vec<_>>(), ["ask_user_question"]);
            result.request_state.expect("a request state")
        }
        other => panic!("expected input_required, got {other:?}"),
    }
}

async fn retry(
    running: &crate::harness::Client,
    arguments: &Value,
    state: &str,
    content: Value,
) -> Result<CallToolResponse, ServiceError> {
    let mut responses = InputResponses::new();
    responses.insert("ask_user_question".to_owned(), json!({"action": "accept", "content": content}));
    running.call_tool_once(call(arguments).with_request_state(state).with_input_responses(responses)).await
}

#[track_caller]
fn refused(outcome: Result<CallToolResponse, ServiceError>, part: &str) {
    match outcome {
        Err(ServiceError::McpError(error)) => {
            assert!(error.message.contains(part), "{:?} lacks {part:?}", error.message);
        }
        other => panic!("expected a refusal naming {part:?}, got {other:?}"),
    }
}

#[tokio::test]
async fn a_state_completes_the_call_once() {
    let client = TestClient::new(ProtocolVersion::V_2026_07_28, true, vec![]);
    let running = connect(AskUserServer::default(), client).await;
    let state = first_round(&running, &one()).await;
    match retry(&running, &one(), &state, json!({"q01": "Go"})).await.unwrap() {
        CallToolResponse::Complete(result) => assert_eq!(text_of(&result).0, r#"{"Lang":["Go"]}"#),
        other => panic!("{other:?}"),
    }
    refused(retry(&running, &one(), &state, json!({"q01": "Rust"})).await, "already used");
    running.cancel().await.unwrap();
}

#[tokio::test]
async fn a_tampered_state_is_refused() {
    let client = TestClient::new(ProtocolVersion::V_2026_07_28, true, vec![]);
    let running = connect(AskUserServer::default(), client).await;
    let state = first_round(&running, &one()).await;
    let mut tampered = state.clone().into_bytes();
    let middle = tampered.len() / 2;
    tampered[middle] = if tampered[middle] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered).unwrap();
    refused(retry(&running, &one(), &tampered, json!({"q01": "Go"})).await, "failed verification");
    refused(retry(&running, &one(), "made-up", json!({"q01": "Go"})).await, "failed verification");
    // A retry without the form's result is refused.
    let bare = call(&one()).with_request_state(state.clone());
    refused(running.call_tool_once(bare).await, "no inputResponses");
    // The state is bound to the arguments: it does not answer other questions.
    let mut other = one();
    other["questions"][0]["header"] = json!("Language");
    refused(retry(&running, &other, &state, json!({"q01": "Go"})).await, "failed verification");
    // A state from another server process (another key) is refused too.
    let elsewhere =
        connect(AskUserServer::default(), TestClient::new(ProtocolVersion::V_2026_07_28, true, vec![])).await;
    refused(retry(&elsewhere, &one(), &state, json!({"q01": "Go"})).await, "failed verification");
    // The untouched state still works: refusals do not use it up.
    assert!(matches!(
        retry(&running, &one(), &state, json!({"q01": "Go"})).await,
        Ok(CallToolResponse::Complete(_))
    ));
    running.cancel().await.unwrap();
    elsewhere.cancel().await.unwrap();
}

/// The codec's expiry reads the wall clock, so this test waits for real (a few milliseconds).
/// A late answer is nobody answering in time, as in the 2025 revisions; never "ask again".
#[tokio::test]
async fn an_expired_state_is_a_timeout() {
    let server = AskUserServer::builder().state_ttl(Duration::from_millis(20)).build();
    let client = TestClient::new(ProtocolVersion::V_2026_07_28, true, vec![]);
    let running = connect(server, client).await;
    let state = first_round(&running, &one()).await;
    tokio::time::sleep(Duration::from_millis(60)).await;
    match retry(&running, &one(), &state, json!({"q01": "Go"})).await.unwrap() {
        CallToolResponse::Complete(result) => assert_eq!(text_of(&result), (TIMED_OUT.to_owned(), false)),
        other => panic!("{other:?}"),
    }
    running.cancel().await.unwrap();
}

/// Guards one outcome for one timeout: a person who answers after `--timeout` gets the model the
/// same result in every revision (2025: the wait ends; 2026-07-28: the state has expired by the
/// time the client retries), in both profiles, under each policy.
#[tokio::test]
async fn the_timeout_reads_the_same_in_every_revision() {
    use askuser_core::Profile::{Extended, Reference};
    let extended = r#"{"status":"timed_out","answered_by":"timeout","answers":[]}"#;
    for (policy, profile, expected) in [
        (OnTimeout::Decline, Reference, TIMED_OUT),
        (OnTimeout::Decline, Extended, extended),
        (OnTimeout::Stop, Reference, TIMED_OUT_STOP),
        (OnTimeout::Stop, Extended, extended),
        (OnTimeout::ApplyDefaults, Reference, r#"{"answered_by":"timeout","answers":{"Lang":["Rust"]}}"#),
    ] {
        for version in &REVISIONS {
            let server = AskUserServer::builder()
                .timeout(Duration::from_millis(50))
                .on_timeout(policy)
                .profile(profile)
                .build();
            let replies = vec![Reply::Late(Duration::from_millis(250), json!({"q01": "Go"}))];
            let client = TestClient::new(version.clone(), true, replies);
            let running = connect(server, client).await;
            let result = running.call_tool(call(&one())).await.unwrap_or_else(|e| panic!("{version}: {e}"));
            assert_eq!(text_of(&result), (expected.to_owned(), false), "{version} {profile:?} {policy:?}");
            running.cancel().await.unwrap();
        }
    }
}

/// Waits (a bounded while) until `client` has been sent a cancellation, then returns them all.
async fn cancellations(client: &TestClient) -> Vec<String> {
    for _ in 0..200 {
        if !client.cancelled().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    client.cancelled()
}

/// Guards forms left open: when the timeout ends the wait, the host is told to close the form
/// (`notifications/cancelled` with the `elicitation/create` request's id).
#[tokio::test(start_paused = true)]
async fn a_timeout_closes_the_hosts_form() {
    for version in &REVISIONS[..2] {
        let server = AskUserServer::builder().timeout(Duration::from_secs(30)).build();
        let client = TestClient::new(version.clone(), true, vec![Reply::Hang]);
        let running = connect(server, client.clone()).await;
        let result = running.call_tool(call(&one())).await.unwrap();
        assert_eq!(text_of(&result), (TIMED_OUT.to_owned(), false), "{version}");
        let shown = client.shown();
        assert_eq!(shown.len(), 1);
        assert_eq!(cancellations(&client).await, [shown[0].id.clone()], "{version}");
        running.cancel().await.unwrap();
    }
}

/// Guards forms left open: when the host cancels the tool call, the form it opened is cancelled too.
#[tokio::test]
async fn a_cancelled_call_closes_the_hosts_form() {
    for version in &REVISIONS[..2] {
        let client = TestClient::new(version.clone(), true, vec![Reply::Hang]);
        let running = connect(AskUserServer::default(), client.clone()).await;
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(call(&one())));
        let handle =
            running.peer().send_cancellable_request(request, PeerRequestOptions::no_options()).await.unwrap();
        for _ in 0..500 {
            if !client.shown().is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let shown = client.shown();
        assert_eq!(shown.len(), 1, "{version}: the form was never shown");
        handle.cancel(Some("the user moved on".to_owned())).await.unwrap();
        assert_eq!(cancellations(&client).await, [shown[0].id.clone()], "{version}");
        running.cancel().await.unwrap();
    }
}

/// Guards the fallback chain: a step that is not available at a call (a terminal in a process
/// started without one) passes the call on, checked at every call; at the end of the chain the
/// model is told which steps could not ask.
#[tokio::test]
async fn an_unavailable_fallback_passes_the_call_on() {
    let checks = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = Arc::clone(&checks);
    let terminal = move || {
        counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Err::<(), _>("the terminal fallback: this process has no terminal (/dev/tty: no device)".to_owned())
    };
    let never = |_: AskUserRequest, _: AskContext| async {
        panic!("the unavailable terminal was asked");
        #[expect(unreachable_code, reason = "the closure's return type")]
        Ok::<AskUserResponse, AnswerError>(AskUserResponse::declined())
    };
    let chain = |next: Fallback| {
        Fallback::answerer(never, "the questions are shown on the terminal")
            .available_when(terminal.clone())
            .or_else(next)
    };
    let server = AskUserServer::builder().fallback(chain(Fallback::defaults())).build();
    let description = server.tool().description.unwrap();
    assert!(
        description.contains("When this MCP client cannot show a form, the questions are shown on the terminal; when that is not available, the default options are picked"),
        "{description}"
    );
    for version in &REVISIONS {
        // The answer as anywhere else, then a block telling the model where it was asked and why.
        let running = connect(server.clone(), TestClient::new(version.clone(), false, vec![])).await;
        let result = running.call_tool(call(&one())).await.unwrap();
        running.cancel().await.unwrap();
        let blocks: Vec<&str> = result.content.iter().map(|b| b.as_text().unwrap().text.as_str()).collect();
        assert_eq!(
            blocks,
            [
                r#"{"answered_by":"unattended","answers":{"Lang":["Rust"]}}"#,
                "(How this was asked: the terminal fallback: this process has no terminal (/dev/tty: no device); \
                 so the default options are picked without the person and marked \"answered_by\":\"unattended\".)",
            ],
            "{version}"
        );
    }
    assert_eq!(checks.load(std::sync::atomic::Ordering::SeqCst), 3, "checked once per call");

    let server = AskUserServer::builder().fallback(chain(Fallback::decline())).build();
    let (text, is_error, _) = ask(server, &REVISIONS[1], false, vec![], &one()).await;
    assert_eq!(
        (text.as_str(), is_error),
        (
            format!("{NO_FORM} (The fallbacks could not ask either: the terminal fallback: this process has no terminal (/dev/tty: no device).)")
                .as_str(),
            false
        )
    );
    // A client that shows forms never touches the chain.
    let server = AskUserServer::builder().fallback(chain(Fallback::decline())).build();
    let (text, _, _) =
        ask(server, &REVISIONS[1], true, vec![Reply::Accept(json!({"q01": "Go"}))], &one()).await;
    assert_eq!(text, r#"{"Lang":["Go"]}"#);
    assert_eq!(checks.load(std::sync::atomic::Ordering::SeqCst), 4);
}

/// Issue 36.16: a host answered the form with an error quoting a 3,000,000-character typed
/// answer twice, and the model got all 6,000,504 characters. A host's error on a form is a misfit:
/// the form is shown again saying so in a few words, and a later answer counts; what reaches the
/// model when no answer ever fits is cut to a thousand characters of the host's words.
#[tokio::test]
async fn a_hosts_error_on_a_form_is_asked_again_and_never_relayed_at_full_length() {
    let huge = format!("validation failed for {}", "x".repeat(3_000_000));
    let version = ProtocolVersion::V_2025_11_25;
    let replies = vec![Reply::Error(huge.clone()), Reply::Accept(json!({"q01": "Go"}))];
    let (text, is_error, shown) =
        ask(AskUserServer::builder().build(), &version, true, replies, &one()).await;
    assert_eq!((text.as_str(), is_error), (r#"{"Lang":["Go"]}"#, false));
    assert_eq!(shown.len(), 2, "asked again");
    assert!(shown[1].message.contains("the form came back with an error"), "{}", shown[1].message);
    assert!(shown[1].message.len() < 5_000, "{} characters in the form's message", shown[1].message.len());

    let replies = vec![Reply::Error(huge); 5];
    let (text, is_error, shown) =
        ask(AskUserServer::builder().build(), &version, true, replies, &one()).await;
    assert!(is_error && shown.len() == 5, "{shown:?}");
    assert!(text.len() < 5_000, "{} characters relayed to the model", text.len());
    assert!(text.contains("more characters left out"), "{text}");
}

/// Issue 36.20: the description always said "make a reasonable choice" on a timeout, while the
/// `stop` policy's result says not to guess: it follows the configured policy.
#[test]
fn the_description_says_what_the_timeout_policy_does() {
    let described = |policy: OnTimeout| {
        AskUserServer::builder().on_timeout(policy).build().tool().description.unwrap().into_owned()
    };
    let stop = described(OnTimeout::Stop);
    assert!(
        stop.contains("If nobody answers in time, the result says so: do not guess the answers"),
        "{stop}"
    );
    assert!(!stop.contains("or nobody answers in time, the result is a plain sentence saying so"), "{stop}");
    assert!(askuser_core::TIMED_OUT_STOP.contains("Do not guess"));
    let decline = described(OnTimeout::Decline);
    assert!(decline.contains("If the person declines, or nobody answers in time, the result is a plain sentence saying so: carry on, make a reasonable choice"), "{decline}");
}
