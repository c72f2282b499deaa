//! One per agent: merging capabilities stated twice, refusing ones that differ, prefixes.

use std::sync::Arc;
use std::time::Duration;

use askuser_core::{Answerer, AskContext, DefaultsResponder};
use askuser_tool::{
    AskUser, AskUserBuilder, AskUserEvent, CallError, CallOutcome, CombineError, Dialect, INSTRUCTIONS,
    Listener, OnTimeout, ToolCall, ToolSet,
};

use crate::support::ARGS;

fn shared() -> Arc<dyn Answerer> {
    Arc::new(DefaultsResponder::new())
}

#[test]
fn same_capability_stated_twice_merges() {
    let ask_user = AskUser::builder().answerer(DefaultsResponder::new()).build().expect("valid");
    let tools = ToolSet::builder().include(ask_user.clone()).include(ask_user).build().expect("merges");
    assert_eq!(tools.tools().len(), 1);
    assert_eq!(tools.instructions(), Some(INSTRUCTIONS));
}

#[test]
fn equal_configuration_with_the_same_answerer_merges() {
    let answerer = shared();
    let build = || {
        AskUser::builder()
            .shared_answerer(Arc::clone(&answerer))
            .timeout(Duration::from_secs(30))
            .build()
            .expect("valid")
    };
    let tools = ToolSet::builder().include(build()).include(build()).build().expect("merges");
    assert_eq!(tools.tools().len(), 1);
}

#[test]
fn different_configuration_under_one_id_names_the_fields() {
    let answerer = shared();
    let first = AskUser::builder().shared_answerer(Arc::clone(&answerer)).build().expect("valid");
    let second = AskUser::builder()
        .shared_answerer(shared())
        .timeout(Duration::from_secs(30))
        .include_content(false)
        .build()
        .expect("valid");
    let err = ToolSet::builder().include(first).include(second).build().unwrap_err();
    assert_eq!(
        err,
        CombineError::Conflict {
            id: "ask_user".to_owned(),
            fields: vec!["answerer", "timeout", "include_content"]
        }
    );
    assert_eq!(
        err.to_string(),
        "two capabilities with id \"ask_user\" differ in answerer, timeout, include_content; configure them \
         alike, or give each its own id and one a tool-name prefix"
    );
}

#[test]
fn two_ids_need_a_prefix() {
    let home = AskUser::builder().build().expect("valid");
    let work = AskUser::builder().id("work").build().expect("valid");
    let err = ToolSet::builder().include(home.clone()).include(work.clone()).build().unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"capabilities "ask_user" and "work" both register the tool "ask_user_question"; give one a tool-name prefix"#
    );
    let tools = ToolSet::builder().include(home).include_prefixed("work_", work).build().expect("prefixed");
    let names: Vec<String> = tools.definitions(Dialect::Generic).into_iter().map(|d| d.name).collect();
    assert_eq!(names, ["ask_user_question", "work_ask_user_question"]);
}

#[test]
fn each_differing_field_is_named() {
    #[track_caller]
    fn check(change: impl FnOnce(AskUserBuilder) -> AskUserBuilder, field: &'static str) {
        let answerer = shared();
        let listener: Arc<dyn Listener> = Arc::new(|_: &AskUserEvent| {});
        let base = || {
            AskUser::builder()
                .shared_answerer(Arc::clone(&answerer))
                .shared_listener(Arc::clone(&listener))
                .timeout(Duration::from_secs(30))
        };
        let first = base().build().expect("valid");
        let second = change(base()).build().expect("valid");
        let err = ToolSet::builder().include(first).include(second).build().unwrap_err();
        assert_eq!(err, CombineError::Conflict { id: "ask_user".to_owned(), fields: vec![field] });
    }
    check(|b| b.shared_answerer(shared()), "answerer");
    check(|b| b.timeout(Duration::from_secs(31)), "timeout");
    check(|b| b.on_timeout(OnTimeout::ApplyDefaults), "on_timeout");
    check(|b| b.sequential(true), "sequential");
    check(|b| b.max_argument_bytes(1024), "max_argument_bytes");
    check(|b| b.listener(|_: &AskUserEvent| {}), "listeners");
    check(|b| b.include_content(false), "include_content");
}

#[test]
fn the_same_id_under_two_tool_names_is_a_conflict() {
    let work = AskUser::builder().id("work").build().expect("valid");
    let err = ToolSet::builder().include(work.clone()).include_prefixed("w_", work).build().unwrap_err();
    assert_eq!(err, CombineError::Conflict { id: "work".to_owned(), fields: vec!["tool_name"] });
}

#[test]
fn a_prefix_must_keep_the_name_valid_for_every_provider() {
    #[track_caller]
    fn check(prefix: &str, valid: bool) {
        let work = AskUser::builder().id("work").build().expect("valid");
        let result = ToolSet::builder().include_prefixed(prefix, work.clone()).build();
        match result {
            Ok(_) => assert!(valid, "{prefix:?} accepted"),
            Err(err) => {
                assert!(!valid, "{prefix:?} rejected: {err}");
                assert!(matches!(err, CombineError::InvalidToolName { .. }), "{err}");
            }
        }
    }
    check("work_", true);
    check("_w-2_", true);
    check("Work-", true);
    check(&"w".repeat(64 - "ask_user_question".len()), true);
    check(&"w".repeat(65 - "ask_user_question".len()), false);
    check("work tools.", false);
    check("work.", false);
    // Gemini wants a letter or `_` first.
    check("2_", false);
    check("-", false);
    check("é_", false);
}

#[tokio::test(start_paused = true)]
async fn calls_route_by_tool_name() {
    let home = AskUser::builder().answerer(DefaultsResponder::new()).build().expect("valid");
    let work = AskUser::builder().id("work").build().expect("valid");
    let tools = ToolSet::builder().include(home).include_prefixed("work_", work).build().expect("valid");
    let answered = tools.call(ToolCall::new("c1", ARGS), AskContext::new()).await;
    assert!(answered.model_text().is_some_and(|t| t.starts_with(r#"{"answered_by":"unattended""#)));
    let deferred = tools
        .call(ToolCall::new("c2", ARGS).with_tool_name("work_ask_user_question"), AskContext::new())
        .await;
    let CallOutcome::Deferred(pending) = deferred else { panic!("expected a deferred call") };
    assert_eq!(pending.tool_name(), "work_ask_user_question");
    let unknown = tools.call(ToolCall::new("c3", ARGS).with_tool_name("other"), AskContext::new()).await;
    assert!(matches!(unknown, CallOutcome::Failed(CallError::WrongTool { .. })));
}
