//! Property tests: a call never panics on any argument text, fires events only for a valid call,
//! and a pending question survives serialisation.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use askuser_core::{AskContext, DefaultsResponder, Questions};
use askuser_tool::{AskUser, AskUserEvent, CallOutcome, PendingQuestion, ToolCall};
use proptest::prelude::*;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_time().build().expect("runtime")
}

/// Argument texts near the valid shape, so that both verdicts occur often.
fn near_valid() -> impl Strategy<Value = String> {
    let text = prop_oneof!["[a-zA-Z ]{0,30}", ".{0,30}", Just("Same".to_owned())];
    (text.clone(), text.clone(), prop::collection::vec((text.clone(), proptest::option::of(text)), 0..8), any::<bool>())
        .prop_map(|(header, question, options, multi)| {
            let options: Vec<serde_json::Value> = options
                .into_iter()
                .map(|(label, description)| serde_json::json!({"label": label, "description": description}))
                .collect();
            serde_json::json!({"questions":[{"header":header,"question":question,"options":options,"multi_select":multi}]})
                .to_string()
        })
}

/// Always-valid argument texts: Latin, Cyrillic and CJK letters and spaces, unique labels, 1–3 questions.
fn valid_args() -> impl Strategy<Value = String> {
    let question = (
        "[a-zA-Zà-öА-я中文字]{1,20}",
        "[a-zA-Zà-öА-я中文字 ?\n]{1,80}",
        prop::collection::vec(
            ("[a-zA-Zà-öА-я中文字]{1,20}", proptest::option::of("[a-zA-Zà-öА-я中文字 ]{0,40}")),
            2..=6,
        ),
        any::<bool>(),
    );
    prop::collection::vec(question, 1..=3).prop_map(|questions| {
        let questions: Vec<serde_json::Value> = questions
            .into_iter()
            .enumerate()
            .map(|(q, (header, text, options, multi))| {
                let options: Vec<serde_json::Value> = options
                    .into_iter()
                    .enumerate()
                    .map(|(i, (label, description))| serde_json::json!({"label": format!("{i} {label}"), "description": description}))
                    .collect();
                serde_json::json!({"header": format!("{q} {header}"), "question": format!("Q{text}"), "options": options, "multi_select": multi})
            })
            .collect();
        serde_json::json!({ "questions": questions }).to_string()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_text_gets_a_result_or_a_retry(args in prop_oneof![near_valid(), ".{0,200}"]) {
        let events = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&events);
        let ask_user = AskUser::builder()
            .answerer(DefaultsResponder::new())
            .listener(move |_: &AskUserEvent| { counter.fetch_add(1, Ordering::Relaxed); })
            .build()
            .expect("valid");
        let outcome = runtime().block_on(ask_user.call(ToolCall::new("c", args.as_str()), AskContext::new()));
        let valid = Questions::from_json(&args).is_ok();
        match outcome {
            CallOutcome::Completed(_) => prop_assert!(valid),
            CallOutcome::Retry(_) => prop_assert!(!valid),
            other => prop_assert!(false, "unexpected {other:?}"),
        }
        prop_assert_eq!(events.load(Ordering::Relaxed), if valid { 2 } else { 0 });
    }

    #[test]
    fn pending_questions_round_trip(args in valid_args()) {
        let pending = PendingQuestion::from_tool_call(ToolCall::new("call_1", args.as_str()))
            .expect("the generator makes valid calls");
        let text = serde_json::to_string(&pending).expect("serialises");
        let back: PendingQuestion = serde_json::from_str(&text).expect("reads back");
        prop_assert_eq!(back, pending);
    }
}
