//! Runs the agent-loop example's logic and checks what the model receives; resumes a deferred
//! call in a child process.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use askuser_core::{AnswerError, AskContext, AskUserRequest, AskUserResponse};
use askuser_tool::{AskUser, CallOutcome, ToolCall};

#[tokio::test(start_paused = true)]
async fn transcript() {
    let lines = agent_loop::run(Duration::from_millis(200)).await.expect("valid configuration");
    // When the deferred question was asked is the wall clock's: the one line that differs per run.
    let transcript = match lines.join("\n").split_once(r#""asked_at":""#) {
        Some((before, after)) => {
            let (_, rest) = after.split_once('"').expect("a closed string");
            format!(r#"{before}"asked_at":"[asked_at]"{rest}"#)
        }
        None => panic!("the stored question carries asked_at"),
    };
    insta::assert_snapshot!("transcript", transcript);
    for expected in [
        r#"tool -> model (answered): {"Target":["Staging (Recommended)"]}"#,
        r#"tool -> model (retry): {"error":"invalid_arguments""#,
        r#"tool -> model (answered): {"Changelog":["Yes"]}"#,
        "tool -> model (declined): The user declined",
        "tool -> model (timed_out): Nobody answered",
        r#"tool -> model (defaulted): {"answered_by":"unattended","answers":{"Format":["Reformat (Recommended)"]}}"#,
        r#"tool -> model (resumed result): {"Release":["Next week"]}"#,
    ] {
        assert!(transcript.contains(expected), "missing {expected:?} in\n{transcript}");
    }
}

#[tokio::test(start_paused = true)]
async fn deferred_call_resumes_in_another_process_byte_identical() {
    let deferred = AskUser::builder().build().expect("valid");
    let call = ToolCall::new("call_7", agent_loop::DEFERRED_ARGS);
    let CallOutcome::Deferred(pending) = deferred.call(call, AskContext::new()).await else {
        panic!("expected a deferred call")
    };
    let stored = serde_json::to_string(&pending).expect("serialises");
    let response_json =
        r#"{"answers":[{"header":"Release","custom_answer":"After the freeze — «ask me» again"}]}"#;

    let mut child = Command::new(env!("CARGO_BIN_EXE_agent-loop"))
        .arg("resume")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the example binary runs");
    let mut stdin = child.stdin.take().expect("stdin");
    writeln!(stdin, "{stored}\n{response_json}").expect("write stdin");
    drop(stdin);
    let output = child.wait_with_output().expect("the child finishes");
    assert!(output.status.success(), "{output:?}");
    let resumed = output.stdout.strip_suffix(b"\n").expect("a line").to_vec();

    let response: AskUserResponse = serde_json::from_str(response_json).expect("response JSON");
    let inline = AskUser::builder()
        .answerer(move |_: AskUserRequest, _: AskContext| {
            let response = response.clone();
            async move { Ok::<_, AnswerError>(response) }
        })
        .build()
        .expect("valid");
    let outcome = inline.call(call, AskContext::new()).await;
    let inline_text = outcome.model_text().expect("a result");
    assert_eq!(resumed, inline_text.as_bytes());
    assert_eq!(inline_text, r#"{"Release":["After the freeze — «ask me» again"]}"#);
}

#[test]
fn resume_reports_a_misfit_on_stderr_and_fails() {
    let pending = r#"{"version":1,"tool_call_id":"call_7","tool_name":"ask_user_question","arguments":{"questions":[{"header":"Release","question":"Cut the release now?","options":[{"label":"Now"},{"label":"Next week"}]}]}}"#;
    let mut child = Command::new(env!("CARGO_BIN_EXE_agent-loop"))
        .arg("resume")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the example binary runs");
    let mut stdin = child.stdin.take().expect("stdin");
    let misfit = r#"{"answers":[{"header":"Release","selected":["Tomorrow"]}]}"#;
    writeln!(stdin, "{pending}\n{misfit}").expect("write stdin");
    drop(stdin);
    let output = child.wait_with_output().expect("the child finishes");
    assert!(!output.status.success());
    assert!(output.stdout.is_empty(), "nothing for the model on stdout: {output:?}");
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "agent-loop resume: the response does not fit: answer for \"Release\" picked options it does not offer: [\"Tomorrow\"]\n"
    );
}
