//! The rig agent example end to end: a real rig-agent run over the scripted model, answered by
//! the line protocol, by defaults, after a timeout, and across two processes.

use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use askuser_core::{
    AnswerError, AskContext, AskUserAnswer, AskUserRequest, AskUserResponse, DefaultsResponder, TIMED_OUT,
};
use askuser_terminal::TerminalAnswerer;
use askuser_tool::{AskUser, AskUserEvent};
use rig_agent_example::model::{Script, Step, last_tool_result};
use rig_agent_example::{CALL_ID, Paused, pause, question, resume, run, run_with};
use rig_core::message::{AssistantContent, Message};

const LRU: &str = r#"The person's answer (the tool result) was {"Cache":["In-process LRU"]}; I will build the cache accordingly."#;

fn picks_lru() -> AskUserResponse {
    AskUserResponse::answered(vec![AskUserAnswer::picked("Cache", ["In-process LRU"])])
}

#[tokio::test]
async fn the_line_protocol_answers_and_the_model_reads_the_answer() {
    let (lines, input) = tokio::sync::mpsc::unbounded_channel();
    lines.send("2".to_owned()).expect("send");
    let answerer = TerminalAnswerer::builder().lines(input).output(Vec::new()).build();
    assert_eq!(run(answerer, "s").await.expect("run"), LRU);
}

#[tokio::test]
async fn defaults_take_the_recommended_option_and_say_so() {
    assert_eq!(
        run(DefaultsResponder::new(), "s").await.expect("run"),
        r#"The person's answer (the tool result) was {"answered_by":"unattended","answers":{"Cache":["Redis (Recommended)"]}}; I will build the cache accordingly."#
    );
}

#[tokio::test]
async fn the_answerer_gets_the_models_call_id_the_session_and_the_turn() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&seen);
    let answerer = move |_: AskUserRequest, context: AskContext| {
        record.lock().expect("lock").push(context);
        async { Ok::<_, AnswerError>(picks_lru()) }
    };
    assert_eq!(run(answerer, "chat-1").await.expect("run"), LRU);
    let seen = seen.lock().expect("lock");
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].tool_call_id.as_deref(), Some(CALL_ID));
    assert_eq!(seen[0].session_id.as_deref(), Some("chat-1"));
    let turn = seen[0].turn_id.as_deref().expect("a turn id");
    assert!(turn.ends_with("/1"), "the first model turn: {turn}");
}

#[tokio::test]
async fn a_streamed_run_asks_the_same_way() {
    use rig_agent::agent::MultiTurnStreamItem;

    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&seen);
    let answerer = move |_: AskUserRequest, context: AskContext| {
        record.lock().expect("lock").push(context.tool_call_id);
        async { Ok::<_, AnswerError>(picks_lru()) }
    };
    let tool = askuser_rig::AskUserTool::new(AskUser::builder().answerer(answerer).build().expect("valid"));
    let mut stream =
        rig_agent_example::agent(&tool, &rig_agent_example::script()).prompt("go").max_turns(4).stream();
    let mut output = None;
    while let Some(item) = std::future::poll_fn(|cx| stream.as_mut().poll_next(cx)).await {
        if let MultiTurnStreamItem::FinalResponse(response) = item.expect("no stream error") {
            output = Some(response.output());
        }
    }
    assert_eq!(output.as_deref(), Some(LRU));
    assert_eq!(*seen.lock().expect("lock"), [Some(CALL_ID.to_owned())]);
}

#[tokio::test]
async fn a_rejected_call_reaches_the_model_as_the_retry_text_and_the_fixed_call_is_answered() {
    let bad = serde_json::json!({"questions": [{"header": "Cache", "question": "Which cache?",
        "options": [{"label": "Redis"}]}]});
    let script = Script::new([
        Step::Ask { call_id: "call_bad".to_owned(), arguments: bad },
        Step::Ask { call_id: "call_good".to_owned(), arguments: question() },
        Step::Reply(|result| format!("final: {result}")),
    ]);
    let asked = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&asked);
    let answerer = move |_: AskUserRequest, context: AskContext| {
        record.lock().expect("lock").push(context.tool_call_id);
        async { Ok::<_, AnswerError>(picks_lru()) }
    };
    let ask_user = AskUser::builder().answerer(answerer).build().expect("valid");
    let output = run_with(ask_user, &script, "s").await.expect("run");
    assert_eq!(output, r#"final: {"Cache":["In-process LRU"]}"#);

    let requests = script.requests();
    assert_eq!(requests.len(), 3);
    let retry = last_tool_result(&requests[1]).expect("the retry reached the model");
    assert!(retry.starts_with(r#"{"error":"invalid_arguments""#), "{retry}");
    assert!(retry.contains("questions[0].options"), "{retry}");
    assert_eq!(*asked.lock().expect("lock"), [Some("call_good".to_owned())], "only the fixed call was asked");
}

#[tokio::test(start_paused = true)]
async fn the_capability_timeout_and_events_apply_inside_the_run() {
    let events = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&events);
    let ask_user = AskUser::builder()
        .answerer(|_: AskUserRequest, _: AskContext| {
            std::future::pending::<Result<AskUserResponse, AnswerError>>()
        })
        .timeout(Duration::from_mins(1))
        .listener(move |event: &AskUserEvent| {
            log.lock().expect("lock").push(match event {
                AskUserEvent::Requested(_) => "requested".to_owned(),
                AskUserEvent::Answered(answered) => format!("answered timed_out={}", answered.timed_out()),
                AskUserEvent::Nudge(_) => "nudge".to_owned(),
                _ => "other".to_owned(),
            });
        })
        .build()
        .expect("valid");
    let script = Script::new([
        Step::Ask { call_id: CALL_ID.to_owned(), arguments: question() },
        Step::Reply(str::to_owned),
    ]);
    assert_eq!(run_with(ask_user, &script, "s").await.expect("run"), TIMED_OUT);
    // The nudge comes ⌈60 s / 5⌉ = 12 s before the deadline, while the answerer still waits.
    assert_eq!(*events.lock().expect("lock"), ["requested", "nudge", "answered timed_out=true"]);
}

#[tokio::test]
async fn ctrl_c_in_the_menu_stops_the_run() {
    let ask_user = AskUser::builder()
        .answerer(|_: AskUserRequest, _: AskContext| async {
            Err::<AskUserResponse, _>(AnswerError::interrupted())
        })
        .build()
        .expect("valid");
    let error = run_with(ask_user, &rig_agent_example::script(), "s").await.expect_err("stopped");
    let Ok(error) = error.downcast::<rig_agent::run::PromptError>() else { panic!("a prompt error") };
    let rig_agent::run::PromptError::Cancelled { reason, .. } = *error else {
        panic!("cancelled: {error:?}")
    };
    assert_eq!(reason, askuser_rig::INTERRUPTED);
}

#[tokio::test]
async fn a_deferred_call_stops_the_run_at_the_tool_call_with_the_pending_question() {
    let paused = pause("s").await.expect("paused");
    assert_eq!(paused.pending.len(), 1);
    assert_eq!(paused.pending[0].tool_call_id(), CALL_ID);
    let Some(Message::Assistant(last)) = paused.history.last() else {
        panic!("the history ends with the model's turn: {:?}", paused.history)
    };
    let calls: Vec<String> = last
        .content
        .iter()
        .filter_map(|c| match c {
            AssistantContent::ToolCall(call) => Some(call.id.to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(calls, [CALL_ID]);

    // Round trip through the stored form, then resumed in this process.
    let stored = serde_json::to_string(&paused).expect("serialises");
    let paused: Paused = serde_json::from_str(&stored).expect("reads back");
    assert_eq!(resume(paused, &picks_lru(), "s").await.expect("resumed"), LRU);
}

#[tokio::test]
async fn concurrent_runs_of_two_sessions_keep_their_own_call_ids_and_questions() {
    use askuser_rig::AskUserTool;
    use rig_agent::run::PromptError;
    use rig_core::tool::ToolContext;

    let tool = AskUserTool::new(AskUser::builder().build().expect("valid")); // deferred
    let hook = tool.hook();
    // One tool shared by two agents whose models ask the same question under different ids.
    let run = |call_id: &'static str, session: &'static str| {
        let script = Script::new([
            Step::Ask { call_id: call_id.to_owned(), arguments: question() },
            Step::Reply(str::to_owned),
        ]);
        let agent = rig_agent_example::agent(&tool, &script);
        async move {
            let mut context = ToolContext::new();
            context.insert(askuser_rig::Session::new(session)).expect("encodes");
            match agent.prompt("go").tool_context(context).await {
                Err(PromptError::Cancelled { chat_history, .. }) => chat_history,
                other => panic!("expected a pause, got {other:?}"),
            }
        }
    };
    let (history_a, history_b) = tokio::join!(run("call_a", "session-a"), run("call_b", "session-b"));
    let mine_b = hook.take_deferred_in(&history_b);
    let mine_a = hook.take_deferred_in(&history_a);
    let ids = |pending: &[askuser_tool::PendingQuestion]| -> Vec<String> {
        pending.iter().map(|p| p.tool_call_id().to_owned()).collect()
    };
    assert_eq!(ids(&mine_a), ["call_a"]);
    assert_eq!(ids(&mine_b), ["call_b"]);
    assert!(hook.take_deferred().is_empty());
}

fn binary(args: &[&str], stdin: &str) -> (bool, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rig-agent-example"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the example runs");
    child.stdin.take().expect("stdin").write_all(stdin.as_bytes()).expect("write stdin");
    let output = child.wait_with_output().expect("it finishes");
    (
        output.status.success(),
        String::from_utf8(output.stdout).expect("utf-8"),
        String::from_utf8(output.stderr).expect("utf-8"),
    )
}

#[test]
fn piped_the_binary_asks_on_the_line_protocol_and_prints_the_final_message() {
    let (ok, stdout, stderr) = binary(&[], "2\n");
    assert!(ok, "{stderr}");
    assert_eq!(stdout.trim_end(), LRU);
    assert!(stderr.contains("Which cache should the user service use?"), "{stderr}");
    assert!(stderr.contains("2) In-process LRU"), "{stderr}");
}

#[test]
fn end_of_input_is_a_failed_call_not_a_decline() {
    // Nobody answered, so nobody declined: the model sees the tool fail, never "the user declined".
    let (ok, stdout, stderr) = binary(&[], "");
    assert!(ok, "{stderr}");
    assert!(stderr.contains("nobody to ask"), "{stderr}");
    assert!(!stdout.contains(askuser_core::DECLINED), "{stdout}");
    assert!(stdout.contains("the tool failed"), "{stdout}");
}

#[test]
fn the_ci_run_answers_with_defaults() {
    let (ok, stdout, stderr) = binary(&["--defaults"], "");
    assert!(ok, "{stderr}");
    assert!(
        stdout.contains(r#"{"answered_by":"unattended","answers":{"Cache":["Redis (Recommended)"]}}"#),
        "{stdout}"
    );
}

#[test]
fn a_paused_run_is_resumed_by_another_process() {
    let (ok, stored, stderr) = binary(&["pause"], "");
    assert!(ok, "{stderr}");
    let response = serde_json::to_string(&picks_lru()).expect("serialises");
    let (ok, stdout, stderr) = binary(&["resume"], &format!("{}\n{response}\n", stored.trim_end()));
    assert!(ok, "{stderr}");
    assert_eq!(stdout.trim_end(), LRU);

    let (ok, _, stderr) = binary(&["resume"], &format!("{}\n{{\"answers\":[]}}\n", stored.trim_end()));
    assert!(!ok, "a response that does not fit fails");
    assert!(stderr.contains("rig-agent-example:"), "{stderr}");
}
