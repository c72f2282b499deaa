use std::time::Duration;

use askuser_core::{AnswerErrorKind, AskUserAnswer, AskUserResponse, ask_user_result};
use askuser_terminal::TerminalAnswerer;
use askuser_terminal::crossterm::event::Event;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use tokio::sync::mpsc;

use crate::{Shared, batch, single};

fn key(code: KeyCode) -> Event {
    Event::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

fn chars(s: &str) -> Vec<Event> {
    s.chars().map(|c| key(KeyCode::Char(c))).collect()
}

/// An answerer on host events, drawing into a buffer at 80 × 24.
fn answerer(out: &Shared) -> (TerminalAnswerer, mpsc::UnboundedSender<Event>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let answerer =
        TerminalAnswerer::builder().input(rx).output(out.clone()).size(80, 24).no_color(true).build();
    (answerer, tx)
}

/// The writer ends with the terminal back to normal: wrap on, cursor shown, no update pending.
#[track_caller]
fn assert_restored(text: &str) {
    assert!(
        text.ends_with("\x1b[?7h\x1b[?25h\x1b[?2026l"),
        "not restored: {:?}",
        &text[text.len().saturating_sub(80)..]
    );
}

#[tokio::test(start_paused = true)]
async fn answers_a_batch_by_keys() {
    let out = Shared::default();
    let (answerer, tx) = answerer(&out);
    let request = batch();
    for event in chars("213").into_iter().chain([key(KeyCode::Enter), key(KeyCode::Enter)]) {
        tx.send(event).unwrap();
    }
    let response = answerer.ask(&request).await.unwrap();
    assert_eq!(
        response,
        AskUserResponse::answered(vec![
            AskUserAnswer::picked("Db", ["SQLite"]),
            AskUserAnswer::picked("Extras", ["Cache", "Tracing"]),
        ])
    );
    assert_eq!(
        ask_user_result(&request, &response).unwrap().text(),
        r#"{"Db":["SQLite"],"Extras":["Cache","Tracing"]}"#
    );
    let text = out.text();
    assert!(text.contains("✔ Db → SQLite"), "summary left in scrollback");
    assert_restored(&text);
}

#[tokio::test(start_paused = true)]
async fn custom_answer_and_paste() {
    let out = Shared::default();
    let (answerer, tx) = answerer(&out);
    tx.send(key(KeyCode::Char('3'))).unwrap();
    tx.send(Event::Paste("Maybe\nlater".to_owned())).unwrap();
    tx.send(key(KeyCode::Enter)).unwrap();
    let response = answerer.ask(&single("Go")).await.unwrap();
    assert_eq!(response.answers, [AskUserAnswer::custom("Go", "Maybe later")]);
}

#[tokio::test(start_paused = true)]
async fn esc_declines_and_ctrl_c_interrupts() {
    let out = Shared::default();
    let (answerer, tx) = answerer(&out);
    tx.send(key(KeyCode::Esc)).unwrap();
    assert_eq!(answerer.ask(&batch()).await.unwrap(), AskUserResponse::declined());
    tx.send(Event::Key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL))).unwrap();
    let err = answerer.ask(&batch()).await.unwrap_err();
    assert_eq!(err.kind(), AnswerErrorKind::Interrupted);
    let text = out.text();
    assert!(text.contains("Declined the assistant's questions") && text.contains("Interrupted"));
    assert_restored(&text);
}

#[tokio::test(start_paused = true)]
async fn end_of_input_declines() {
    let out = Shared::default();
    let (answerer, tx) = answerer(&out);
    drop(tx);
    assert_eq!(answerer.ask(&batch()).await.unwrap(), AskUserResponse::declined());
}

#[tokio::test(start_paused = true)]
async fn resize_redraws_at_the_new_size() {
    let out = Shared::default();
    let (answerer, tx) = answerer(&out);
    tx.send(Event::Resize(30, 10)).unwrap();
    tx.send(key(KeyCode::Char('1'))).unwrap();
    answerer.ask(&single("Go")).await.unwrap();
    let text = out.text();
    assert!(text.contains("Question Go?"));
    assert!(text.matches("\x1b[?2026h").count() >= 3, "a frame per resize, then the summary");
}

#[tokio::test(start_paused = true)]
async fn dropping_the_future_restores_the_terminal() {
    let out = Shared::default();
    let (answerer, tx) = answerer(&out);
    tx.send(key(KeyCode::Down)).unwrap();
    let timed_out = tokio::time::timeout(Duration::from_secs(30), answerer.ask(&batch())).await;
    assert!(timed_out.is_err(), "nobody answered");
    let text = out.text();
    assert!(text.contains("The assistant's question was withdrawn"), "the block says why it went");
    assert_restored(&text);
    // The same answerer asks again afterwards: nothing was left locked or half-drawn.
    tx.send(key(KeyCode::Char('2'))).unwrap();
    assert_eq!(
        answerer.ask(&single("Again")).await.unwrap().answers,
        [AskUserAnswer::picked("Again", ["No"])]
    );
    drop(tx);
}

#[tokio::test(start_paused = true)]
async fn concurrent_asks_queue_in_order_and_a_cancelled_one_never_draws() {
    let out = Shared::default();
    let (answerer, tx) = answerer(&out);
    let first = tokio::spawn({
        let answerer = answerer.clone();
        async move { answerer.ask(&single("First")).await }
    });
    tokio::task::yield_now().await;
    let second = tokio::spawn({
        let answerer = answerer.clone();
        async move { answerer.ask(&single("Second")).await }
    });
    tokio::task::yield_now().await;
    let cancelled = tokio::spawn({
        let answerer = answerer.clone();
        async move { answerer.ask(&single("Cancelled")).await }
    });
    tokio::task::yield_now().await;
    let third = tokio::spawn({
        let answerer = answerer.clone();
        async move { answerer.ask(&single("Third")).await }
    });
    tokio::task::yield_now().await;
    cancelled.abort();
    assert!(out.text().contains("First") && !out.text().contains("Second"), "one menu at a time");
    for c in "121".chars() {
        tx.send(key(KeyCode::Char(c))).unwrap();
    }
    let picked = |r: Result<AskUserResponse, _>| r.unwrap().answers[0].selected.clone();
    assert_eq!(picked(first.await.unwrap()), ["Yes"]);
    assert_eq!(picked(second.await.unwrap()), ["No"]);
    assert_eq!(picked(third.await.unwrap()), ["Yes"]);
    let text = out.text();
    assert!(!text.contains("Cancelled"), "a request cancelled in the queue never drew");
    let order: Vec<usize> = ["First", "Second", "Third"].iter().map(|h| text.find(h).unwrap()).collect();
    assert!(order.is_sorted(), "served in order: {order:?}");
}

#[tokio::test(start_paused = true)]
async fn works_as_an_answerer() {
    use askuser_core::{Answerer, AskContext};
    let out = Shared::default();
    let (answerer, tx) = answerer(&out);
    tx.send(key(KeyCode::Enter)).unwrap();
    let shared: &dyn Answerer = &answerer;
    let response = shared.answer(single("Go"), AskContext::new()).await.unwrap();
    assert_eq!(response.answers, [AskUserAnswer::picked("Go", ["Yes"])]);
}

/// A host whose event source panics, as a bug would.
struct Panicking;

#[askuser_core::async_trait]
impl askuser_terminal::InputSource for Panicking {
    async fn next_event(&mut self) -> Option<std::io::Result<Event>> {
        panic!("the host's event source failed")
    }
}

#[test]
fn a_panic_inside_the_menu_still_restores_the_terminal() {
    let out = Shared::default();
    let answerer = TerminalAnswerer::builder().input(Panicking).output(out.clone()).size(80, 24).build();
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let unwound =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| runtime.block_on(answerer.ask(&batch()))));
    assert!(unwound.is_err(), "the panic reached the caller");
    let text = out.text();
    assert!(text.contains("Which database?"), "the menu had drawn");
    assert!(text.contains("withdrawn"), "the guard replaced the block");
    assert_restored(&text);
}

fn secret_request() -> askuser_core::AskUserRequest {
    let json = r#"{"questions":[{"kind":"secret","header":"Token","question":"Token?","secret_name":"API_TOKEN","purpose":"To deploy."}]}"#;
    askuser_core::AskUserRequest::new(
        askuser_core::Validator::new()
            .with_profile(askuser_core::Profile::Extended)
            .validate_json(json)
            .unwrap(),
    )
}

/// Guards the secret's flow through `Answerer::answer`: the value goes to the sink under the
/// call's session before the answer returns, the answer is `session:NAME` only, and the drawn
/// bytes hold a mask, never the value.
#[tokio::test(start_paused = true)]
async fn a_secret_goes_to_the_sink_under_the_session() {
    use askuser_core::{Answerer, AskContext, InMemorySecretSink};
    let out = Shared::default();
    let (tx, rx) = mpsc::unbounded_channel();
    let sink = std::sync::Arc::new(InMemorySecretSink::new());
    let answerer = TerminalAnswerer::builder()
        .input(rx)
        .output(out.clone())
        .size(80, 24)
        .secret_sink(std::sync::Arc::clone(&sink))
        .build();
    for event in chars("t0k3n-LEAKCANARY").into_iter().chain([key(KeyCode::Enter)]) {
        tx.send(event).unwrap();
    }
    let request = secret_request();
    let response = answerer.answer(request.clone(), AskContext::new().with_session_id("s9")).await.unwrap();
    assert_eq!(response.answers, [AskUserAnswer::secret("Token", "API_TOKEN").with_id("q1")]);
    assert_eq!(sink.resolve(Some("s9"), "session:API_TOKEN").unwrap().expose(), "t0k3n-LEAKCANARY");
    let text = out.text();
    assert!(!text.contains("LEAKCANARY") && !text.contains("t0k3n"), "{text:?}");
    assert!(text.contains("Token → saved as session:API_TOKEN"), "{text:?}");
    assert_restored(&text);
}

/// Guards the default: an answerer without a secret sink declines a secret question without
/// asking it, and says why.
#[tokio::test(start_paused = true)]
async fn without_a_sink_a_secret_question_is_declined_unasked() {
    let out = Shared::default();
    let (answerer, tx) = answerer(&out);
    tx.send(key(KeyCode::Char('x'))).unwrap();
    assert_eq!(answerer.ask(&secret_request()).await.unwrap(), AskUserResponse::declined());
    assert!(out.text().contains("nowhere to keep one: declined without asking"), "{}", out.text());
    assert!(!out.text().contains("Token?"), "not asked");
}

/// A label mixing look-alike scripts (`Yеѕ`: a Cyrillic `е` and `ѕ`) beside `Yes` is marked in
/// the menu, so the two do not read the same (issue 36.12); picking it answers with the label as
/// it is.
#[tokio::test(start_paused = true)]
async fn a_label_mixing_look_alike_scripts_is_marked() {
    let out = Shared::default();
    let (answerer, tx) = answerer(&out);
    let request = askuser_core::AskUserRequest::new(
        askuser_core::Questions::from_json(
            "{\"questions\":[{\"header\":\"Deploy\",\"question\":\"Deploy now?\",\
             \"options\":[{\"label\":\"Yes\"},{\"label\":\"Y\u{0435}\u{0455}\"}]}]}",
        )
        .unwrap(),
    );
    for event in chars("2").into_iter().chain([key(KeyCode::Enter)]) {
        tx.send(event).unwrap();
    }
    let response = answerer.ask(&request).await.unwrap();
    assert_eq!(
        response,
        AskUserResponse::answered(vec![AskUserAnswer::picked("Deploy", ["Y\u{0435}\u{0455}"])])
    );
    let text = out.text();
    assert!(text.contains("Y\u{0435}\u{0455} ⟨mixed scripts⟩"), "{text:?}");
    assert!(!text.contains("Yes ⟨mixed scripts⟩"), "{text:?}");
}
