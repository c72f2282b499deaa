//! Feature `tracing`: one span per call; questions and answers recorded only with `include_content`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use askuser_core::AskContext;
use askuser_tool::ToolCall;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

use crate::support::{ARGS, BAD_ARGS, secret_answerer};

/// A subscriber that keeps every span name and every field recorded on a span or an event.
#[derive(Clone, Default)]
pub(crate) struct Capture {
    pub(crate) spans: Arc<Mutex<Vec<String>>>,
    pub(crate) fields: Arc<Mutex<Vec<(String, String)>>>,
    next: Arc<AtomicU64>,
}

impl Visit for Capture {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.fields.lock().expect("lock").push((field.name().to_owned(), format!("{value:?}")));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.fields.lock().expect("lock").push((field.name().to_owned(), value.to_owned()));
    }
}

impl Subscriber for Capture {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, span: &Attributes<'_>) -> Id {
        self.spans.lock().expect("lock").push(span.metadata().name().to_owned());
        span.record(&mut self.clone());
        Id::from_u64(self.next.fetch_add(1, Ordering::Relaxed) + 1)
    }

    fn record(&self, _: &Id, values: &Record<'_>) {
        values.record(&mut self.clone());
    }

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        event.record(&mut self.clone());
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}

async fn traced_call(include_content: bool) -> (Vec<String>, Vec<(String, String)>) {
    let capture = Capture::default();
    let _default = tracing::subscriber::set_default(capture.clone());
    let ask_user = secret_answerer(include_content).build().expect("valid");
    ask_user.call(ToolCall::new("call_9", ARGS), AskContext::new()).await;
    let spans = capture.spans.lock().expect("lock").clone();
    let fields = capture.fields.lock().expect("lock").clone();
    (spans, fields)
}

fn field<'a>(fields: &'a [(String, String)], name: &str) -> Option<&'a str> {
    fields.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
}

#[tokio::test(start_paused = true)]
async fn one_span_per_call_with_content_only_when_included() {
    let (spans, fields) = traced_call(true).await;
    assert_eq!(spans, ["ask_user_question"]);
    assert_eq!(field(&fields, "tool_call_id"), Some("call_9"));
    assert_eq!(field(&fields, "outcome"), Some("answered"));
    assert!(field(&fields, "questions").is_some_and(|q| q.contains("How should I fix the failing test?")));
    assert_eq!(field(&fields, "result"), Some(r#"{"Approach":["my secret plan"],"Targets":["db.py"]}"#));

    let (spans, fields) = traced_call(false).await;
    assert_eq!(spans, ["ask_user_question"]);
    assert_eq!(field(&fields, "outcome"), Some("answered"));
    assert!(field(&fields, "request_id").is_some());
    let all = format!("{fields:?}");
    for content in ["my secret plan", "failing test", "db.py"] {
        assert!(!all.contains(content), "{content:?} recorded in {all}");
    }
}

#[tokio::test(start_paused = true)]
async fn the_span_names_the_outcome_of_every_path() {
    #[track_caller]
    fn outcome(capture: &Capture) -> String {
        let fields = capture.fields.lock().expect("lock").clone();
        let found = field(&fields, "outcome").map(str::to_owned);
        capture.fields.lock().expect("lock").clear();
        found.unwrap_or_else(|| panic!("no outcome in {fields:?}"))
    }
    let capture = Capture::default();
    let _default = tracing::subscriber::set_default(capture.clone());
    let inline = secret_answerer(false).build().expect("valid");
    let deferred = askuser_tool::AskUser::builder().include_content(false).build().expect("valid");

    inline.call(ToolCall::new("c1", BAD_ARGS), AskContext::new()).await;
    assert_eq!(outcome(&capture), "retry");
    inline.call(ToolCall::new("c2", ARGS).with_tool_name("read_file"), AskContext::new()).await;
    assert_eq!(outcome(&capture), "failed");
    deferred.call(ToolCall::new("c3", ARGS), AskContext::new()).await;
    assert_eq!(outcome(&capture), "deferred");
    assert_eq!(capture.spans.lock().expect("lock").len(), 3);
}
