//! [`Notifier`]: a webhook called (POST) when a question is asked (feature `client`), so the person
//! hears about it on their phone: JSON, or the form ntfy takes.

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use tokio::sync::mpsc;

use crate::AskedNotice;

/// How many notices may wait to be sent; past that, new ones are dropped (and logged), so that
/// a dead webhook never holds memory or an ask.
const QUEUE: usize = 256;

/// What a notification looks like on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum NotifyFormat {
    /// `application/json`: `{"event":"asked","id","session_id","headers","url","expires_at"}`
    /// (and `"questions"` when asked to include them).
    Json,
    /// ntfy's publish form: the text as the body; `Title`, `Click` (the page link) and `Tags`
    /// headers. Point `--notify-url` at `https://ntfy.example/TOPIC`.
    Ntfy,
}

/// POSTs a notice for every new question to a webhook, from a background task: retried with
/// backoff (1, 2, 4, 8 s; five tries), never blocking an ask. Notices carry the id, the session,
/// the questions' headers and the page link; the questions' text only with
/// [`include_questions`](Self::include_questions).
///
/// ```no_run
/// use std::sync::Arc;
/// use askuser_server::{AnswerServer, ApiToken, Notifier, NotifyFormat};
/// use askuser_store::MemoryStore;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let notifier = Notifier::new("https://ntfy.example/my-topic", NotifyFormat::Ntfy).unwrap().spawn();
/// let server = AnswerServer::builder(Arc::new(MemoryStore::new()), ApiToken::generate().unwrap())
///     .on_asked(move |notice| notifier.notify(notice))
///     .build();
/// # drop(server);
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct Notifier {
    client: reqwest::Client,
    url: String,
    format: NotifyFormat,
    include_questions: bool,
    retry_base: Duration,
}

/// The running notifier: hand it notices; it sends them in the background.
#[derive(Debug, Clone)]
pub struct NotifierHandle {
    queue: mpsc::Sender<AskedNotice>,
    include_questions: bool,
}

impl Notifier {
    /// A notifier that POSTs to `url` in `format`.
    ///
    /// # Errors
    ///
    /// The HTTP client cannot be built.
    pub fn new(url: &str, format: NotifyFormat) -> Result<Self, crate::ClientError> {
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(5))
            .timeout(Duration::from_secs(10))
            // A redirect would re-post the notice (its answer link included) to wherever the
            // webhook's host points: the URL comes only from the operator's configuration.
            .redirect(reqwest::redirect::Policy::none())
            .build()?;
        Ok(Self {
            client,
            url: url.to_owned(),
            format,
            include_questions: false,
            retry_base: Duration::from_secs(1),
        })
    }

    /// Whether notices carry the questions' text (not only their headers). Default: no.
    #[must_use]
    pub fn include_questions(mut self, include: bool) -> Self {
        self.include_questions = include;
        self
    }

    /// The first retry's delay; each next one doubles. Default: one second.
    #[must_use]
    pub fn retry_base(mut self, delay: Duration) -> Self {
        self.retry_base = delay;
        self
    }

    /// Starts the sending task on the current Tokio runtime.
    #[must_use]
    pub fn spawn(self) -> NotifierHandle {
        let (queue, mut notices) = mpsc::channel::<AskedNotice>(QUEUE);
        let include_questions = self.include_questions;
        let this = Arc::new(self);
        tokio::spawn(async move {
            while let Some(notice) = notices.recv().await {
                // Each notice is sent by a task of its own, so that one slow retry does not hold
                // the others back.
                tokio::spawn(Arc::clone(&this).deliver(notice));
            }
        });
        NotifierHandle { queue, include_questions }
    }

    async fn deliver(self: Arc<Self>, notice: AskedNotice) {
        let mut delay = self.retry_base;
        for attempt in 1..=5 {
            match self.send(&notice).await {
                Ok(()) => return,
                Err(error) if attempt < 5 => {
                    tracing::warn!(attempt, error = %error, "notification failed; retrying");
                    tokio::time::sleep(delay).await;
                    delay *= 2;
                }
                Err(error) => tracing::error!(error = %error, "notification failed five times; giving up"),
            }
        }
    }

    async fn send(&self, notice: &AskedNotice) -> Result<(), String> {
        let request = match self.format {
            NotifyFormat::Json => {
                self.client.post(&self.url).json(&JsonNotice::of(notice, self.include_questions))
            }
            NotifyFormat::Ntfy => {
                let count = notice.headers.len();
                let title = if count == 1 {
                    "Your assistant asks a question".to_owned()
                } else {
                    format!("Your assistant asks {count} questions")
                };
                let body = if self.include_questions {
                    notice.questions.join("\n")
                } else {
                    notice.headers.join(" · ")
                };
                self.client
                    .post(&self.url)
                    .header("Title", title)
                    .header("Click", notice.url.as_str())
                    .header("Tags", "question")
                    .header("Content-Type", "text/plain; charset=utf-8")
                    .body(body)
            }
        };
        let response = request.send().await.map_err(|e| crate::error::with_causes(&e))?;
        if response.status().is_success() {
            Ok(())
        } else if response.status().is_redirection() {
            Err(format!(
                "the webhook answered {} (a redirect, not followed: give the final address as the webhook URL)",
                response.status()
            ))
        } else {
            Err(format!("the webhook answered {}", response.status()))
        }
    }
}

impl NotifierHandle {
    /// Queues a notice; drops it (with a warning) when the queue is full. Never waits.
    pub fn notify(&self, notice: &AskedNotice) {
        let mut notice = notice.clone();
        if !self.include_questions {
            notice.questions.clear();
        }
        if self.queue.try_send(notice).is_err() {
            tracing::warn!("notification queue full or closed; a notice was dropped");
        }
    }
}

#[derive(Serialize)]
struct JsonNotice<'a> {
    event: &'static str,
    id: &'a str,
    session_id: Option<&'a str>,
    headers: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    questions: Option<&'a [String]>,
    url: &'a str,
    expires_at: &'a str,
}

impl<'a> JsonNotice<'a> {
    fn of(notice: &'a AskedNotice, include_questions: bool) -> Self {
        Self {
            event: "asked",
            id: &notice.id,
            session_id: notice.session_id.as_deref(),
            headers: &notice.headers,
            questions: include_questions.then_some(notice.questions.as_slice()),
            url: &notice.url,
            expires_at: &notice.expires_at,
        }
    }
}
