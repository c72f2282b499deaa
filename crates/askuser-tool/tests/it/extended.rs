//! The extended profile through the capability: its definition, `timeout_seconds` up to the host's
//! maximum, deadline stamps, the nudge, pending questions of version 2, and answering unattended.

use std::sync::Arc;
use std::time::Duration;

use askuser_core::{
    AnswerError, AskContext, AskUserAnswer, AskUserRequest, AskUserResponse, DefaultsResponder, Profile,
    Timestamp,
};
use askuser_tool::{
    AskUser, CallOutcome, CombineError, Dialect, EXTENDED_DESCRIPTION, EXTENDED_INSTRUCTIONS,
    PendingQuestion, ToolCall, ToolSet,
};

use crate::support::{Log, Slow};

const MIXED: &str = r#"{"questions":[
  {"header":"Deploy","question":"Where to?","options":[{"label":"Staging","default":true},{"label":"Production"}]},
  {"kind":"text","id":"branch","header":"Branch","question":"Which branch?"}]}"#;

const CHOICES: &str = r#"{"questions":[
  {"header":"Deploy","question":"Where to?","options":[{"label":"Staging"},{"label":"Production","default":true}]}],
  "timeout_seconds":100}"#;

fn call(args: &str) -> ToolCall<'_> {
    ToolCall::new("call_1", args)
}

#[track_caller]
fn text(outcome: &CallOutcome) -> &str {
    outcome.model_text().unwrap_or_else(|| panic!("no model text in {outcome:?}"))
}

fn slow(log: &Log) -> askuser_tool::AskUserBuilder {
    AskUser::builder().profile(Profile::Extended).answerer(Slow { log: log.clone() }).listener(log.listener())
}

#[test]
fn the_definition_follows_the_profile() {
    let reference = AskUser::builder().build().expect("valid");
    let extended = AskUser::builder().profile(Profile::Extended).build().expect("valid");
    assert_eq!(extended.profile(), Profile::Extended);
    let definition = extended.definition(Dialect::Generic);
    assert_eq!(definition.description, EXTENDED_DESCRIPTION);
    assert_eq!(definition.parameters["properties"]["timeout_seconds"]["anyOf"][0]["maximum"], 300);
    assert!(definition.parameters["properties"]["questions"]["items"]["properties"]["kind"].is_object());
    assert_eq!(extended.instructions(), EXTENDED_INSTRUCTIONS);
    assert!(reference.definition(Dialect::Generic).parameters["properties"].get("timeout_seconds").is_none());
    for needed in ["secret", "alone", "session:NAME", "consent", "do not ask it again", "text"] {
        assert!(EXTENDED_DESCRIPTION.contains(needed), "{needed}");
    }
    // The host's maximum is what the model reads.
    let longer = AskUser::builder()
        .profile(Profile::Extended)
        .max_timeout(Duration::from_mins(15))
        .build()
        .expect("valid");
    assert_eq!(
        longer.definition(Dialect::OpenAiStrict).parameters["properties"]["timeout_seconds"]["maximum"],
        900
    );
    assert!(
        longer.definition(Dialect::Anthropic).parameters["properties"]["timeout_seconds"]["description"]
            .as_str()
            .is_some_and(|d| d.ends_with("From 1 to 900."))
    );
    let set = ToolSet::builder().include(extended.clone()).build().expect("one tool");
    assert_eq!(set.instructions(), Some(EXTENDED_INSTRUCTIONS));
    let err = ToolSet::builder()
        .include(reference.clone())
        .include(AskUser::builder().profile(Profile::Extended).build().expect("valid"))
        .build()
        .unwrap_err();
    assert!(matches!(&err, CombineError::Conflict { fields, .. } if fields == &["profile"]), "{err}");
}

#[tokio::test(start_paused = true)]
async fn the_models_timeout_replaces_the_hosts_within_its_maximum() {
    let log = Log::default();
    let ask_user = slow(&log).timeout(Duration::from_mins(5)).build().expect("valid");
    let started = tokio::time::Instant::now();
    let outcome = ask_user.call(call(CHOICES), AskContext::new()).await;
    assert_eq!(started.elapsed(), Duration::from_secs(100));
    assert_eq!(text(&outcome), r#"{"status":"timed_out","answered_by":"timeout","answers":[]}"#);
    // 100 s − ⌈100 s / 5⌉ = 80 s.
    assert_eq!(log.entries()[2], "nudge after 80000 ms");

    let too_long = CHOICES.replace("100", "301");
    let outcome = ask_user.call(call(&too_long), AskContext::new()).await;
    let CallOutcome::Retry(retry) = &outcome else { panic!("expected a retry, got {outcome:?}") };
    assert!(retry.text().contains(r#""type":"out_of_range","loc":["timeout_seconds"]"#), "{}", retry.text());
    let longer = slow(&Log::default()).max_timeout(Duration::from_mins(10)).build().expect("valid");
    let started = tokio::time::Instant::now();
    longer.call(call(&too_long), AskContext::new()).await;
    assert_eq!(started.elapsed(), Duration::from_secs(301));
}

#[tokio::test(start_paused = true)]
async fn a_timeout_applies_declared_defaults_but_never_to_a_text_batch() {
    let ask_user = slow(&Log::default())
        .timeout(Duration::from_secs(30))
        .on_timeout(askuser_tool::OnTimeout::ApplyDefaults)
        .build()
        .expect("valid");
    let outcome = ask_user.call(call(CHOICES), AskContext::new()).await;
    assert_eq!(
        text(&outcome),
        r#"{"status":"timed_out","answered_by":"timeout","answers":[{"id":"q1","header":"Deploy","selected":["Production"],"other_text":null}]}"#
    );
    let outcome = ask_user.call(call(MIXED), AskContext::new()).await;
    assert_eq!(text(&outcome), r#"{"status":"timed_out","answered_by":"timeout","answers":[]}"#);
}

/// Guards the `stop` policy in the extended profile: the result is data, never a sentence.
#[tokio::test(start_paused = true)]
async fn stop_on_timeout_stays_data_in_the_extended_profile() {
    let ask_user = slow(&Log::default())
        .timeout(Duration::from_secs(30))
        .on_timeout(askuser_tool::OnTimeout::Stop)
        .build()
        .expect("valid");
    let outcome = ask_user.call(call(CHOICES), AskContext::new()).await;
    assert_eq!(text(&outcome), r#"{"status":"timed_out","answered_by":"timeout","answers":[]}"#);
}

#[tokio::test(start_paused = true)]
async fn requests_carry_their_deadline_stamps() {
    let seen: Arc<std::sync::Mutex<Vec<AskUserRequest>>> = Arc::default();
    let record = Arc::clone(&seen);
    let ask_user = AskUser::builder()
        .profile(Profile::Extended)
        .timeout(Duration::from_mins(1))
        .answerer(move |request: AskUserRequest, _: AskContext| {
            record.lock().expect("lock").push(request.clone());
            async move {
                let answers = vec![
                    AskUserAnswer::picked("Deploy", ["Staging"]),
                    AskUserAnswer::custom("Branch", "main").with_id("branch"),
                ];
                Ok::<_, AnswerError>(AskUserResponse::answered(answers))
            }
        })
        .build()
        .expect("valid");
    let outcome = ask_user.call(call(MIXED), AskContext::new()).await;
    assert_eq!(
        text(&outcome),
        r#"{"status":"answered","answered_by":"user","answers":[{"id":"q1","header":"Deploy","selected":["Staging"],"other_text":null},{"id":"branch","header":"Branch","selected":[],"other_text":"main"}]}"#
    );
    let request = seen.lock().expect("lock")[0].clone();
    let (asked, nudge, expires) =
        (request.asked_at().unwrap(), request.nudge_at().unwrap(), request.expires_at().unwrap());
    assert_eq!(
        (asked.until(expires), nudge.until(expires)),
        (Duration::from_mins(1), Duration::from_secs(12))
    );
    assert!(asked.until(Timestamp::now()) < Duration::from_mins(1));
}

#[tokio::test(start_paused = true)]
async fn deferred_extended_questions_are_pending_version_2_and_expire() {
    let ask_user = AskUser::builder().profile(Profile::Extended).build().expect("valid");
    let CallOutcome::Deferred(pending) = ask_user.call(call(CHOICES), AskContext::new()).await else {
        panic!("expected a deferred call")
    };
    assert_eq!(pending.profile(), Profile::Extended);
    assert_eq!(pending.asked_at().unwrap().until(pending.expires_at().unwrap()), Duration::from_secs(100));
    let text = serde_json::to_string(&pending).expect("serialises");
    assert!(text.starts_with(r#"{"version":2,"tool_call_id":"call_1","tool_name":"ask_user_question","profile":"extended","asked_at":"#), "{text}");
    assert!(text.contains(r#""timeout_seconds":100"#), "{text}");
    let back: PendingQuestion = serde_json::from_str(&text).expect("reads back");
    assert_eq!(back, pending);
    assert_eq!(
        (back.asked_at(), back.nudge_at(), back.expires_at()),
        (pending.asked_at(), pending.nudge_at(), pending.expires_at())
    );
    let answer = AskUserResponse::answered(vec![AskUserAnswer::picked("Deploy", ["Staging"])]);
    assert!(back.result(&answer).expect("fits").text().starts_with(r#"{"status":"answered""#));

    // Past `expires_at` it is never answerable: the result is the timeout's, whatever the answer.
    let mut value: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    value["asked_at"] = "2020-01-01T00:00:00Z".into();
    value["nudge_at"] = "2020-01-01T00:01:20Z".into();
    value["expires_at"] = "2020-01-01T00:01:40Z".into();
    let expired: PendingQuestion = serde_json::from_value(value).expect("reads");
    assert!(expired.is_expired(Timestamp::now()));
    assert_eq!(
        expired.result(&answer).expect("a result").text(),
        r#"{"status":"timed_out","answered_by":"timeout","answers":[]}"#
    );
    // A reference rebuild of an extended call is refused: the profile is the capability's.
    assert!(PendingQuestion::from_tool_call(call(CHOICES)).is_err());
    assert_eq!(
        ask_user.rebuild(call(CHOICES)).expect("rebuilds").request().questions(),
        pending.request().questions()
    );
}

#[tokio::test(start_paused = true)]
async fn without_an_answerer_it_can_answer_unattended_instead_of_deferring() {
    let ask_user = AskUser::builder().profile(Profile::Extended).unattended(true).build().expect("valid");
    assert!(!ask_user.is_deferred());
    let outcome = ask_user.call(call(CHOICES), AskContext::new()).await;
    assert_eq!(
        text(&outcome),
        r#"{"status":"answered","answered_by":"unattended","answers":[{"id":"q1","header":"Deploy","selected":["Production"],"other_text":null}]}"#
    );
    let outcome = ask_user.call(call(MIXED), AskContext::new()).await;
    assert_eq!(text(&outcome), r#"{"status":"declined","answered_by":"unattended","answers":[]}"#);
    // Two capabilities told the same thing are the same configuration.
    let again = AskUser::builder().profile(Profile::Extended).unattended(true).build().expect("valid");
    assert!(ToolSet::builder().include(ask_user.clone()).include(again).build().is_ok());
    // The reference profile's unattended answers are its own provenance form.
    let reference = AskUser::builder().unattended(true).build().expect("valid");
    let args = r#"{"questions":[{"header":"H","question":"Q","options":[{"label":"A"},{"label":"B (Recommended)"}]}]}"#;
    assert_eq!(
        text(&reference.call(call(args), AskContext::new()).await),
        r#"{"answered_by":"unattended","answers":{"H":["B (Recommended)"]}}"#
    );
}

#[tokio::test(start_paused = true)]
async fn a_shared_answerer_is_an_answerer() {
    let shared = Arc::new(DefaultsResponder);
    let ask_user =
        AskUser::builder().profile(Profile::Extended).answerer(Arc::clone(&shared)).build().expect("valid");
    assert!(
        text(&ask_user.call(call(CHOICES), AskContext::new()).await)
            .contains(r#""answered_by":"unattended""#)
    );
}

#[tokio::test(start_paused = true)]
async fn the_hosts_sentences_never_replace_an_extended_result() {
    let ask_user = slow(&Log::default())
        .timeout(Duration::from_secs(10))
        .declined_text("Nobody here.")
        .timed_out_text("Too late.")
        .build()
        .expect("valid");
    let outcome = ask_user.call(call(CHOICES), AskContext::new()).await;
    assert_eq!(text(&outcome), r#"{"status":"timed_out","answered_by":"timeout","answers":[]}"#);
    // The reference profile's sentences are the host's to word.
    let reference = AskUser::builder()
        .answerer(Slow { log: Log::default() })
        .timeout(Duration::from_secs(10))
        .timed_out_text("Too late.")
        .build()
        .expect("valid");
    let args = r#"{"questions":[{"header":"H","question":"Q","options":[{"label":"A"},{"label":"B"}]}]}"#;
    assert_eq!(text(&reference.call(call(args), AskContext::new()).await), "Too late.");
}
