//! One per agent: merging capabilities stated twice, refusing ones that differ, prefixes.

use std::sync::Arc;
use std::time::Duration;

use askuser_core::{Answerer, AskContext, DefaultsResponder};
use askuser_tool::{AskUser, CallError, CallOutcome, CombineError, Dialect, INSTRUCTIONS, ToolCall, ToolSet};

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
    let tools = ToolSet::builder().include(home).include_prefixed("work_", &work).build().expect("prefixed");
    let names: Vec<String> = tools.definitions(Dialect::Generic).into_iter().map(|d| d.name).collect();
    assert_eq!(names, ["ask_user_question", "work_ask_user_question"]);
}

#[test]
fn a_prefix_must_keep_the_name_valid() {
    let work = AskUser::builder().id("work").build().expect("valid");
    let err = ToolSet::builder().include_prefixed("work tools.", &work).build().unwrap_err();
    assert!(matches!(err, CombineError::InvalidToolName { .. }), "{err}");
}

#[tokio::test(start_paused = true)]
async fn calls_route_by_tool_name() {
    let home = AskUser::builder().answerer(DefaultsResponder::new()).build().expect("valid");
    let work = AskUser::builder().id("work").build().expect("valid");
    let tools = ToolSet::builder().include(home).include_prefixed("work_", &work).build().expect("valid");
    let answered = tools.call(ToolCall::new("c1", "ask_user_question", ARGS), AskContext::new()).await;
    assert!(answered.model_text().is_some_and(|t| t.starts_with(r#"{"answered_by":"unattended""#)));
    let deferred = tools.call(ToolCall::new("c2", "work_ask_user_question", ARGS), AskContext::new()).await;
    let CallOutcome::Deferred(pending) = deferred else { panic!("expected a deferred call") };
    assert_eq!(pending.tool_name(), "work_ask_user_question");
    let unknown = tools.call(ToolCall::new("c3", "other", ARGS), AskContext::new()).await;
    assert!(matches!(unknown, CallOutcome::Failed(CallError::WrongTool { .. })));
}
