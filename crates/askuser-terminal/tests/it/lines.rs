use askuser_core::{AnswerErrorKind, AskUserAnswer, AskUserResponse, ask_user_result};
use askuser_terminal::TerminalAnswerer;
use tokio::sync::mpsc;

use crate::{Shared, batch};

/// Answers `lines` on the line protocol; returns the response and what was printed.
async fn run(lines: &[&str]) -> (AskUserResponse, String) {
    let out = Shared::default();
    let (tx, rx) = mpsc::unbounded_channel();
    for line in lines {
        tx.send((*line).to_owned()).unwrap();
    }
    drop(tx);
    let answerer = TerminalAnswerer::builder().lines(rx).output(out.clone()).build();
    (answerer.ask(&batch()).await.unwrap(), out.text())
}

#[tokio::test]
async fn numbers_lists_labels_and_custom() {
    let (response, text) = run(&["2", "1,3"]).await;
    assert_eq!(
        ask_user_result(&batch(), &response).unwrap().text(),
        r#"{"Db":["SQLite"],"Extras":["Cache","Tracing"]}"#
    );
    insta::assert_snapshot!("line_protocol", text);
    let (response, _) = run(&["mysql", "0 Feature flags"]).await;
    assert_eq!(
        response.answers,
        [AskUserAnswer::picked("Db", ["MySQL"]), AskUserAnswer::custom("Extras", "Feature flags")]
    );
}

#[tokio::test]
async fn end_of_input_declines() {
    let (response, text) = run(&["1"]).await;
    assert_eq!(response, AskUserResponse::declined());
    assert!(text.contains("end of input"));
}

/// Guards "nobody was asked" against "declined": input that ends before its first line fails the
/// call instead of telling the model the user declined.
#[tokio::test]
async fn end_of_input_before_any_line_is_nobody_to_ask() {
    let (_, rx) = mpsc::unbounded_channel::<String>();
    let answerer = TerminalAnswerer::builder().lines(rx).output(Vec::new()).build();
    let err = answerer.ask(&batch()).await.unwrap_err();
    assert_eq!(err.kind(), AnswerErrorKind::Failed);
    assert_eq!(err.to_string(), "nobody could be asked: the input ended before the first answer");
}

#[tokio::test]
async fn bad_answers_reprompt_then_decline() {
    let (response, text) = run(&["7", "", "2", "1"]).await;
    assert_eq!(response.answers[0].selected, ["SQLite"], "two bad answers, then a good one");
    assert_eq!(text.matches("Try again").count(), 2);
    let (response, text) = run(&["7", "x", "1,2", "1"]).await;
    assert_eq!(response, AskUserResponse::declined(), "three bad answers in a row give up");
    assert!(text.contains("No valid answer after 3 tries"));
}

#[tokio::test]
async fn bang_decline() {
    assert_eq!(run(&["!decline"]).await.0, AskUserResponse::declined());
}

#[tokio::test]
async fn accessible_mode_uses_the_line_protocol() {
    let out = Shared::default();
    let (tx, rx) = mpsc::unbounded_channel();
    tx.send("1".to_owned()).unwrap();
    tx.send("2".to_owned()).unwrap();
    let answerer = TerminalAnswerer::builder().accessible(true).lines(rx).output(out.clone()).build();
    let response = answerer.ask(&batch()).await.unwrap();
    assert_eq!(response.answers[1].selected, ["Metrics"]);
    assert!(out.text().contains("[1/2] Db — Which database?"));
}

/// Guards the extended line protocol's text, and its answers: the declared default marked and
/// taken by an empty line, no "Other" line without `allow_other`, a text question read whole.
#[tokio::test]
async fn extended_batch_on_the_line_protocol() {
    let request = askuser_core::AskUserRequest::new(
        askuser_core::Validator::new()
            .with_profile(askuser_core::Profile::Extended)
            .validate_json(
                r#"{"questions":[
                {"id":"db","header":"Db","question":"Which database?","allow_other":false,"options":[
                    {"label":"Postgres","description":"mature"},{"label":"SQLite","default":true}]},
                {"id":"extras","header":"Extras","question":"Which extras?","multi_select":true,"options":[
                    {"label":"Cache","default":true},{"label":"Metrics"},{"label":"Tracing","default":true}]},
                {"kind":"text","header":"Name","question":"What is it called?"}]}"#,
            )
            .unwrap(),
    );
    let out = Shared::default();
    let (tx, rx) = mpsc::unbounded_channel();
    for line in ["", "", "", "billing api"] {
        tx.send(line.to_owned()).unwrap();
    }
    let answerer = TerminalAnswerer::builder().lines(rx).output(out.clone()).build();
    let response = answerer.ask(&request).await.unwrap();
    assert_eq!(
        ask_user_result(&request, &response).unwrap().text(),
        r#"{"status":"answered","answered_by":"user","answers":[{"id":"db","header":"Db","selected":["SQLite"],"other_text":null},{"id":"extras","header":"Extras","selected":["Cache","Tracing"],"other_text":null},{"id":"q1","header":"Name","selected":[],"other_text":"billing api"}]}"#
    );
    insta::assert_snapshot!("line_protocol_extended", out.text());
}
