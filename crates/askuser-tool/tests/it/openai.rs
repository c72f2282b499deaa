//! The async-openai conversions, checked against JSON that async-openai's own types produce and
//! read: the registered tool, tool calls out of an assistant message, and tool messages back.

use askuser_core::AskContext;
use askuser_tool::{AskUser, CallOutcome, Dialect, PendingQuestion, ToolCall, openai, parameters};
use async_openai::types::chat::{
    ChatCompletionMessageToolCall, ChatCompletionRequestMessage, ChatCompletionResponseMessage,
    ChatCompletionTools, CreateChatCompletionRequest, CreateChatCompletionRequestArgs, FunctionCall,
};
use serde_json::{Value, json};

use crate::support::{ARGS, BAD_ARGS, Log, Scripted, person_response};

fn answered(log: &Log) -> AskUser {
    AskUser::builder()
        .answerer(Scripted { log: log.clone(), result: || Ok(person_response()) })
        .build()
        .expect("valid capability")
}

/// An assistant message with two tool calls, as the Chat Completions API sends it: ours and a
/// custom tool's.
fn assistant_message(arguments: &str) -> ChatCompletionResponseMessage {
    let body = json!({
        "role": "assistant",
        "content": null,
        "tool_calls": [
            {"id": "call_ask", "type": "function",
             "function": {"name": "ask_user_question", "arguments": arguments}},
            {"id": "call_grep", "type": "custom", "custom_tool": {"name": "grep", "input": "TODO"}},
        ],
    });
    serde_json::from_value(body).expect("async-openai reads an assistant message with tool calls")
}

#[test]
fn the_tool_serialises_as_a_strict_function_with_the_strict_dialect() {
    let ask_user = AskUser::builder().build().expect("valid capability");
    let tool = openai::chat_completion_tool(&ask_user);
    let wire = serde_json::to_value(&tool).expect("serialises");
    assert_eq!(wire["type"], "function");
    assert_eq!(wire["function"]["name"], "ask_user_question");
    assert_eq!(wire["function"]["strict"], true, "strict must be sent explicitly");
    assert_eq!(wire["function"]["parameters"], parameters(Dialect::OpenAiStrict));
    assert_eq!(wire["function"]["description"], ask_user.definition(Dialect::OpenAiStrict).description);
    // And async-openai reads the same JSON back into the same value.
    let back: ChatCompletionTools = serde_json::from_value(wire.clone()).expect("reads back");
    assert_eq!(back, tool);

    // The envelope async-openai sends (the parameters are the `openai-strict` snapshot).
    let mut envelope = wire;
    envelope["function"]["parameters"] = json!("<Dialect::OpenAiStrict>");
    envelope["function"]["description"] = json!("<DESCRIPTION>");
    // The same key order whether or not a build switched on serde_json's `preserve_order`.
    envelope.sort_all_objects();
    insta::assert_json_snapshot!("chat_completion_tool", envelope);
}

#[test]
fn the_tool_fits_into_a_request_and_keeps_a_prefixed_name() {
    let home = AskUser::builder().build().expect("valid capability");
    let work = AskUser::builder().id("work").build().expect("valid capability");
    let set = askuser_tool::ToolSet::builder()
        .include(home)
        .include_prefixed("work_", work)
        .build()
        .expect("valid set");
    let tools: Vec<ChatCompletionTools> = set.tools().iter().map(openai::chat_completion_tool).collect();
    let request: CreateChatCompletionRequest = CreateChatCompletionRequestArgs::default()
        .model("gpt-test")
        .messages(Vec::<ChatCompletionRequestMessage>::new())
        .tools(tools)
        .build()
        .expect("a valid request");
    let wire = serde_json::to_value(&request).expect("serialises");
    let names: Vec<&Value> =
        wire["tools"].as_array().expect("tools").iter().map(|t| &t["function"]["name"]).collect();
    assert_eq!(names, [&json!("ask_user_question"), &json!("work_ask_user_question")]);
}

#[test]
fn a_function_tool_call_converts_with_its_id_name_and_untouched_argument_text() {
    let message = assistant_message(ARGS);
    let calls = message.tool_calls.as_ref().expect("tool calls");
    let converted: Vec<Option<ToolCall<'_>>> = calls.iter().map(openai::tool_call).collect();
    assert_eq!(converted.len(), 2);
    let ours = converted[0].expect("a function call converts");
    assert_eq!(ours.call_id(), "call_ask");
    assert_eq!(ours.tool_name(), "ask_user_question");
    // Text, byte for byte: the size cap and the strict JSON reader see what the model sent.
    assert_eq!(ours.arguments(), askuser_tool::Arguments::Text(ARGS));
    assert!(converted[1].is_none(), "a custom tool call is never ask_user_question");

    let direct = ChatCompletionMessageToolCall {
        id: "call_x".to_owned(),
        function: FunctionCall { name: "other_tool".to_owned(), arguments: "{}".to_owned() },
    };
    assert_eq!(ToolCall::from(&direct), ToolCall::new("call_x", "{}").with_tool_name("other_tool"));
}

#[tokio::test(start_paused = true)]
async fn an_answered_call_comes_back_as_a_tool_message_under_the_call_id() {
    let log = Log::default();
    let ask_user = answered(&log);
    let message = assistant_message(ARGS);
    let call = &message.tool_calls.as_ref().expect("tool calls")[0];
    let tool_call = openai::tool_call(call).expect("function call");
    let outcome = ask_user.call(tool_call, AskContext::new()).await;
    let CallOutcome::Completed(result) = &outcome else { panic!("expected a result, got {outcome:?}") };
    let reply = openai::outcome_message(tool_call.call_id(), &outcome).expect("the model sees it now");
    let wire = serde_json::to_value(&reply).expect("serialises");
    assert_eq!(wire, json!({"role": "tool", "tool_call_id": "call_ask", "content": result.text()}));
    assert_eq!(log.entries(), ["answerer ran"]);
}

#[tokio::test(start_paused = true)]
async fn a_rejected_call_comes_back_as_the_retry_text() {
    let log = Log::default();
    let ask_user = answered(&log);
    let message = assistant_message(BAD_ARGS);
    let tool_call =
        openai::tool_call(&message.tool_calls.as_ref().expect("tool calls")[0]).expect("function");
    let outcome = ask_user.call(tool_call, AskContext::new()).await;
    let CallOutcome::Retry(retry) = &outcome else { panic!("expected a retry, got {outcome:?}") };
    let wire = serde_json::to_value(openai::outcome_message("call_ask", &outcome).expect("retry text"))
        .expect("serialises");
    assert_eq!(wire["content"], retry.text());
    assert!(retry.text().starts_with(r#"{"error":"invalid_arguments""#), "{}", retry.text());
    assert!(log.entries().is_empty(), "a rejected call never reaches the answerer");
}

#[tokio::test(start_paused = true)]
async fn a_deferred_call_has_no_message_until_it_is_answered_then_matches_the_inline_text() {
    let deferred = AskUser::builder().build().expect("valid capability");
    let message = assistant_message(ARGS);
    let tool_call =
        openai::tool_call(&message.tool_calls.as_ref().expect("tool calls")[0]).expect("function");
    let outcome = deferred.call(tool_call, AskContext::new()).await;
    assert!(openai::outcome_message("call_ask", &outcome).is_none());
    let CallOutcome::Deferred(pending) = outcome else { panic!("expected a deferral") };

    // Stored, read back elsewhere, answered.
    let stored = serde_json::to_string(&pending).expect("serialises");
    let pending: PendingQuestion = serde_json::from_str(&stored).expect("reads back");
    let text = pending.result(&person_response()).expect("fits").into_text();
    let reply = serde_json::to_value(openai::tool_message(pending.tool_call_id(), text.as_str()))
        .expect("serialises");

    let inline = answered(&Log::default()).call(tool_call, AskContext::new()).await;
    assert_eq!(reply, json!({"role": "tool", "tool_call_id": "call_ask", "content": inline.model_text()}));
}
