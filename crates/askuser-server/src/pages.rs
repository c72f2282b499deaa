//! The pages a person answers on: server-rendered (askama escapes everything by default), usable
//! without JavaScript (a small script only reloads the page when the server says something
//! changed), no external assets.
//!
//! | path | what | access |
//! | --- | --- | --- |
//! | `/q/{id}/{token}` | one batch of questions as a form | the link's batch token |
//! | `/q/{id}` | the same | login cookie |
//! | `/` | every pending question | login cookie |
//! | `/s/{session}` | a session's pending questions | login cookie |
//! | `/s/{session}/history` | a session's answered questions | login cookie |
//! | `/login`, `/logout` | the login cookie | the API token |
//!
//! Every form carries a CSRF token bound to the question and the credential that opened it.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use askama::Template;
use askuser_core::Timestamp;
use askuser_core::{AskUserAnswer, AskUserResponse, MAX_CUSTOM_CHARS, Question, QuestionKind, SecretValue};
use askuser_store::{ListQuery, PendingRecord, State as RecordState};
use axum::Router;
use axum::extract::{Form, Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::get;

use crate::AppState;
use crate::auth::LOGIN_SECS;
use crate::claims;
use crate::error::{ApiError, RETRY_AFTER_SECS, bounded};
use crate::events::{self, ServerEvent};
use crate::markup::{Piece, pieces};
use crate::secrets::{MAX_SECRET_BYTES, Secret};
use askuser_client::encode_segment;

const LOGIN_COOKIE: &str = "askuser_login";

pub(crate) fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/", get(home))
        .route("/login", get(login_form).post(login))
        .route("/logout", axum::routing::post(logout))
        .route("/s/{session}", get(session_page))
        .route("/history", get(all_history_page))
        .route("/s/{session}/history", get(history_page))
        .route("/s/{session}/events", get(session_events))
        .route("/events", get(all_events))
        .route("/q/{id}", get(batch_by_cookie).post(submit_by_cookie))
        .route("/q/{id}/events", get(batch_events_by_cookie))
        .route("/q/{id}/{token}", get(batch_by_link).post(submit_by_link))
        .route("/q/{id}/{token}/events", get(batch_events_by_link))
        .route("/assets/app.css", get(css))
        .route("/assets/live.js", get(script))
}

// ---------------------------------------------------------------------------------------------
// Access

/// What opened a page: the batch token of a link, or a login cookie. Its text binds CSRF tokens.
struct Access {
    credential: String,
    /// Whether it is a login (which may see other questions), not a single link.
    logged_in: bool,
}

fn now_secs() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

fn login_cookie(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|pair| pair.trim().strip_prefix(LOGIN_COOKIE)?.strip_prefix('='))
}

/// The login a request's cookie holds, if the cookie is this server's, unexpired, and its session
/// was not logged out on any replica (the store keeps logouts). When the store cannot say, nobody
/// is logged in: a logout is never overlooked.
async fn logged_in(state: &AppState, headers: &HeaderMap) -> Option<Access> {
    let cookie = login_cookie(headers)?;
    let (session, _) = state.keys.check_login_cookie(cookie, now_secs())?;
    match bounded(state.store.value(claims::REVOKED_LOGINS, session)).await {
        Ok(None) => Some(Access { credential: cookie.to_owned(), logged_in: true }),
        Ok(Some(_)) => None,
        Err(error) => {
            tracing::warn!(%error, "a login was refused: the store could not say whether it was logged out");
            None
        }
    }
}

fn by_link(state: &AppState, id: &str, token: &str) -> Option<Access> {
    state.keys.check_batch_token(id, token).then(|| Access { credential: token.to_owned(), logged_in: false })
}

/// Where to go without a login: the login page.
fn to_login() -> Response {
    Redirect::to("/login").into_response()
}

// ---------------------------------------------------------------------------------------------
// Rendering

fn render(template: &impl Template, status: StatusCode) -> Response {
    match template.render() {
        Ok(html) => (status, Html(html)).into_response(),
        Err(error) => {
            tracing::error!(%error, "rendering a page failed");
            (StatusCode::INTERNAL_SERVER_ERROR, "internal error").into_response()
        }
    }
}

/// A time on a page: the UTC text a page shows without JavaScript, and the instant (`datetime`)
/// that `live.js` shows in the person's own time zone.
struct Moment {
    iso: String,
    text: String,
    /// Whether the seconds are shown: two times a few minutes apart would read the same without.
    seconds: bool,
}

/// `at` as `18:30 UTC` on the day of `now`, else `2026-11-30 18:30 UTC`; `18:30:05 UTC` with seconds.
fn moment(at: Timestamp, now: Timestamp, seconds: bool) -> Moment {
    let iso = at.to_string();
    let today = now.to_string();
    let clock = iso.get(11..if seconds { 19 } else { 16 }).unwrap_or_default();
    let text = match iso.get(..10) {
        Some(day) if Some(day) != today.get(..10) => format!("{day} {clock} UTC"),
        _ => format!("{clock} UTC"),
    };
    Moment { iso, text, seconds }
}

/// Below this long between asking and expiry, times show their seconds.
const SHORT_SPAN: Duration = Duration::from_mins(5);

/// `8 s left`, `4 min 12 s left`, `25 min left`, `2 h 5 min left`, or `time is up` (what
/// `live.js` shows too, every second).
fn time_left(left: Duration) -> String {
    let secs = left.as_secs();
    match secs {
        0 => "time is up".to_owned(),
        1..60 => format!("{secs} s left"),
        60..600 => format!("{} min {} s left", secs / 60, secs % 60),
        600..3600 => format!("{} min left", secs / 60),
        _ => format!("{} h {} min left", secs / 3600, secs / 60 % 60),
    }
}

struct AnswerLine {
    header: String,
    text: String,
}

fn answer_lines(response: Option<&AskUserResponse>) -> Vec<AnswerLine> {
    let Some(response) = response else { return Vec::new() };
    response
        .answers
        .iter()
        .map(|a| AnswerLine {
            header: askuser_core::show_blank(&a.header).into_owned(),
            // A secret shows as its reference: the value is never stored, never shown.
            text: match (&a.secret_ref, &a.custom_answer) {
                (Some(reference), _) => format!("secret given (the assistant sees {reference})"),
                (None, Some(text)) => askuser_core::show_blank(text).into_owned(),
                (None, None) => askuser_core::show_blank(&a.selected.join(", ")).into_owned(),
            },
        })
        .collect()
}

/// A question as it was asked, read-only: on the page of a question nobody answered.
struct AskedView {
    header: String,
    question: Vec<Piece>,
    options: Vec<String>,
}

fn asked_views(record: &PendingRecord) -> Vec<AskedView> {
    record
        .request()
        .questions()
        .iter()
        .map(|q| AskedView {
            header: askuser_core::show_blank(q.header()).into_owned(),
            question: pieces(&askuser_core::show_blank(q.question())),
            options: q.options().iter().map(|o| askuser_core::show_label(o.label()).into_owned()).collect(),
        })
        .collect()
}

#[derive(Template)]
#[template(path = "message.html")]
struct MessagePage {
    title: String,
    text: String,
    /// A time in the text, shown in the person's own zone as open pages show theirs, and the text
    /// after it.
    at: Option<(Moment, String)>,
    answers: Vec<AnswerLine>,
    asked: Vec<AskedView>,
    back: Option<String>,
    live: Option<String>,
}

fn message(status: StatusCode, title: &str, text: &str) -> Response {
    let page = MessagePage {
        title: title.to_owned(),
        text: text.to_owned(),
        at: None,
        answers: Vec::new(),
        asked: Vec::new(),
        back: None,
        live: None,
    };
    render(&page, status)
}

pub(crate) async fn not_found() -> Response {
    message(StatusCode::NOT_FOUND, "Not found", "There is nothing at this address.")
}

fn failure(error: &ApiError) -> Response {
    match error {
        ApiError::NotFound { .. } => message(
            StatusCode::NOT_FOUND,
            "Not found",
            "There is no such question (it may have been removed).",
        ),
        ApiError::ShuttingDown => retry_later(message(
            StatusCode::SERVICE_UNAVAILABLE,
            "Restarting",
            "The server is restarting: try again in a moment.",
        )),
        ApiError::StoreUnavailable => retry_later(message(
            StatusCode::SERVICE_UNAVAILABLE,
            "Temporarily unavailable",
            "The server cannot reach its database just now. Try again in a moment.",
        )),
        _ => message(
            StatusCode::INTERNAL_SERVER_ERROR,
            "Something went wrong",
            "The server could not do that. Try again in a moment.",
        ),
    }
}

/// `response` with the `Retry-After` of a 503.
fn retry_later(mut response: Response) -> Response {
    response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECS));
    response
}

/// What the form says when an answer could not be stored: plainly not sent, and what to do.
const NOT_SENT: &str = "Your answers were NOT sent: the server could not store them just now. \
    Everything you entered is still here: send it again in a moment.";

/// The page for a question that is no longer pending.
fn settled_page(record: &PendingRecord, access: &Access, status: StatusCode) -> Response {
    let closed =
        |after: &str| record.closed_at().map(|at| (moment(at, Timestamp::now(), false), after.to_owned()));
    let (title, text, at) = match record.state() {
        RecordState::Answered => (
            "Already answered",
            format!(
                "These questions were answered{}",
                if record.closed_at().is_some() { " at " } else { "." }
            ),
            closed(". The first answer stands."),
        ),
        RecordState::Declined => (
            "Declined",
            format!(
                "These questions were declined{}",
                if record.closed_at().is_some() { " at " } else { "." }
            ),
            closed("."),
        ),
        RecordState::Late => (
            "Answered late",
            format!(
                "Nobody answered in time, so the assistant was told so; these answers came late{}",
                if record.closed_at().is_some() { ", at " } else { "." }
            ),
            closed(", and are kept for it."),
        ),
        RecordState::TimedOut => (
            "Expired",
            "Nobody answered in time, so the assistant was told so. Nothing can be sent any more.".to_owned(),
            None,
        ),
        _ => ("Withdrawn", "The assistant stopped waiting for these answers.".to_owned(), None),
    };
    let answers = answer_lines(record.response());
    let page = MessagePage {
        title: title.to_owned(),
        text,
        at,
        // Nobody answered: what was asked is still worth seeing.
        asked: if answers.is_empty() { asked_views(record) } else { Vec::new() },
        answers,
        back: access.logged_in.then(|| back_link(record)),
        live: None,
    };
    render(&page, status)
}

fn back_link(record: &PendingRecord) -> String {
    record.session_id().map_or_else(|| "/".to_owned(), |s| format!("/s/{}", encode_segment(s)))
}

// ---------------------------------------------------------------------------------------------
// Lists

struct Item {
    link: String,
    headers: String,
    asked_by: Option<String>,
    session: Option<String>,
    asked: Moment,
    /// A pending question's expiry and the time left.
    until: Option<(Moment, String)>,
    /// A settled question's outcome: its state, when, and by whom.
    closed: Option<(RecordState, Moment, &'static str)>,
    answers: Vec<AnswerLine>,
}

#[derive(Template)]
#[template(path = "list.html")]
struct ListPage {
    title: String,
    items: Vec<Item>,
    links: Vec<(String, String)>,
    live: Option<String>,
}

fn headers_of(record: &PendingRecord) -> String {
    let headers = record.request().questions().iter().map(Question::header).collect::<Vec<_>>().join(" · ");
    askuser_core::show_blank(&headers).into_owned()
}

/// When `record` was asked, when it expires and the time left at `now`, to the second for a
/// question open only a short while.
fn times(record: &PendingRecord, now: Timestamp) -> (Moment, Moment, String) {
    let seconds = record.asked_at().until(record.expires_at()) < SHORT_SPAN;
    (
        moment(record.asked_at(), now, seconds),
        moment(record.expires_at(), now, seconds),
        time_left(now.until(record.expires_at())),
    )
}

fn item(record: &PendingRecord, session: Option<&str>, now: Timestamp) -> Item {
    let (asked, expires, left) = times(record, now);
    Item {
        link: format!("/q/{}", encode_segment(record.id())),
        headers: headers_of(record),
        asked_by: crate::links::asked_by_of(record),
        session: session.is_none().then(|| record.session_id().map(str::to_owned)).flatten(),
        asked,
        until: (record.state() == RecordState::Pending).then_some((expires, left)),
        closed: record.closed_at().filter(|_| record.state().has_response()).map(|at| {
            (record.state(), moment(at, now, false), record.answered_by().map_or("?", |by| by.as_str()))
        }),
        answers: answer_lines(record.response()),
    }
}

async fn home(State(state): State<Arc<AppState>>, headers: HeaderMap) -> Response {
    pending_page(&state, &headers, None).await
}

async fn session_page(
    State(state): State<Arc<AppState>>,
    Path(session): Path<String>,
    headers: HeaderMap,
) -> Response {
    pending_page(&state, &headers, Some(&session)).await
}

/// The questions waiting for an answer: all of them, with links to the answered ones and to each
/// waiting session; or one session's, with a link to its history.
async fn pending_page(state: &AppState, headers: &HeaderMap, session: Option<&str>) -> Response {
    if logged_in(state, headers).await.is_none() {
        return to_login();
    }
    let mut query = ListQuery::new().state(RecordState::Pending).limit(ListQuery::MAX_LIMIT);
    if let Some(session) = session {
        query = query.session_id(session);
    }
    let records = match bounded(state.store.list(&query)).await {
        Ok(page) => page.records,
        Err(error) => return failure(&error),
    };
    let now = Timestamp::now();
    let items = records.iter().map(|r| item(r, session, now)).collect();
    let page = match session {
        None => {
            let mut links = vec![("/history".to_owned(), "Answered questions".to_owned())];
            // Each session with a question waiting: its page has that session's history.
            let mut sessions: Vec<&str> = Vec::new();
            for s in records.iter().filter_map(PendingRecord::session_id) {
                if !sessions.contains(&s) {
                    sessions.push(s);
                }
            }
            links.extend(
                sessions.into_iter().map(|s| (format!("/s/{}", encode_segment(s)), format!("Session {s}"))),
            );
            ListPage {
                title: "Waiting for your answer".to_owned(),
                items,
                links,
                live: Some("/events".to_owned()),
            }
        }
        Some(session) => {
            let base = format!("/s/{}", encode_segment(session));
            ListPage {
                title: format!("Waiting for your answer · {session}"),
                items,
                links: vec![
                    (format!("{base}/history"), "Answered questions of this session".to_owned()),
                    ("/".to_owned(), "All sessions".to_owned()),
                ],
                live: Some(format!("{base}/events")),
            }
        }
    };
    render(&page, StatusCode::OK)
}

/// A history page's position: the cursor of the last question the previous page listed.
#[derive(Debug, serde::Deserialize)]
struct HistoryParams {
    #[serde(default)]
    after: Option<String>,
}

/// The questions a history page reads at a time (those still pending are left out of it).
const HISTORY_PAGE: usize = 100;

async fn history_page(
    State(state): State<Arc<AppState>>,
    Path(session): Path<String>,
    Query(params): Query<HistoryParams>,
    headers: HeaderMap,
) -> Response {
    answered_page(&state, &headers, Some(&session), params.after.as_deref()).await
}

async fn all_history_page(
    State(state): State<Arc<AppState>>,
    Query(params): Query<HistoryParams>,
    headers: HeaderMap,
) -> Response {
    answered_page(&state, &headers, None, params.after.as_deref()).await
}

/// The questions answered or declined, newest first, a page at a time (so the latest answers are
/// always on the first page), with a link to the older ones: all of them, or one session's.
async fn answered_page(
    state: &AppState,
    headers: &HeaderMap,
    session: Option<&str>,
    after: Option<&str>,
) -> Response {
    if logged_in(state, headers).await.is_none() {
        return to_login();
    }
    let mut query = ListQuery::new().newest_first().limit(HISTORY_PAGE);
    if let Some(session) = session {
        query = query.session_id(session);
    }
    if let Some(after) = after {
        match after.parse() {
            Ok(cursor) => query = query.after(cursor),
            Err(askuser_store::InvalidCursor(_)) => {
                return message(
                    StatusCode::BAD_REQUEST,
                    "No such page",
                    "This link to older questions is not one this server made.",
                );
            }
        }
    }
    let page = match bounded(state.store.list(&query)).await {
        Ok(page) => page,
        Err(error) => return failure(&error),
    };
    let now = Timestamp::now();
    let items =
        page.records.iter().filter(|r| r.state().has_response()).map(|r| item(r, session, now)).collect();
    let (title, mut links, here) = match session {
        Some(session) => {
            let base = format!("/s/{}", encode_segment(session));
            (
                format!("Answered · {session}"),
                vec![
                    (base.clone(), "Waiting questions of this session".to_owned()),
                    ("/".to_owned(), "All sessions".to_owned()),
                ],
                format!("{base}/history"),
            )
        }
        None => (
            "Answered".to_owned(),
            vec![("/".to_owned(), "Waiting questions".to_owned())],
            "/history".to_owned(),
        ),
    };
    if let Some(next) = &page.next {
        links.push((
            format!("{here}?after={}", encode_segment(&next.to_string())),
            "Older questions".to_owned(),
        ));
    }
    render(&ListPage { title, items, links, live: None }, StatusCode::OK)
}

// ---------------------------------------------------------------------------------------------
// Login

#[derive(Template)]
#[template(path = "login.html")]
struct LoginPage {
    error: Option<&'static str>,
    live: Option<String>,
}

async fn login_form() -> Response {
    render(&LoginPage { error: None, live: None }, StatusCode::OK)
}

#[derive(serde::Deserialize)]
struct LoginForm {
    token: String,
}

async fn login(
    State(state): State<Arc<AppState>>,
    peer: Option<axum::Extension<crate::throttle::Peer>>,
    form: Result<Form<LoginForm>, axum::extract::rejection::FormRejection>,
) -> Response {
    if let Err(wait) = state.logins.attempt(peer.map(|axum::Extension(peer)| peer)) {
        return too_many_logins(wait);
    }
    let Ok(Form(form)) = form else {
        return render(
            &LoginPage { error: Some("Paste the API token."), live: None },
            StatusCode::BAD_REQUEST,
        );
    };
    if !state.keys.token().matches(form.token.trim()) {
        return render(
            &LoginPage { error: Some("That is not this server's API token."), live: None },
            StatusCode::UNAUTHORIZED,
        );
    }
    let Ok(session) = crate::auth::new_login_session() else {
        return message(
            StatusCode::INTERNAL_SERVER_ERROR,
            "Something went wrong",
            "No randomness for a login: try again.",
        );
    };
    let value = state.keys.login_cookie(now_secs() + LOGIN_SECS, &session);
    let secure = if state.config.public_url.starts_with("https://") { "; Secure" } else { "" };
    let cookie =
        format!("{LOGIN_COOKIE}={value}; Path=/; HttpOnly; SameSite=Strict; Max-Age={LOGIN_SECS}{secure}");
    let mut response = Redirect::to("/").into_response();
    if let Ok(cookie) = HeaderValue::from_str(&cookie) {
        response.headers_mut().insert(header::SET_COOKIE, cookie);
    }
    response
}

/// `429` with `Retry-After`: this client tried too many logins.
fn too_many_logins(wait: Duration) -> Response {
    let page = LoginPage {
        error: Some("Too many login attempts from here: wait a minute, then try again."),
        live: None,
    };
    let mut response = render(&page, StatusCode::TOO_MANY_REQUESTS);
    let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    if let Ok(value) = HeaderValue::from_str(&secs.to_string()) {
        response.headers_mut().insert(header::RETRY_AFTER, value);
    }
    response
}

async fn logout(State(state): State<Arc<AppState>>, headers: HeaderMap) -> Response {
    // The cookie opens nothing after this, even where the browser keeps it.
    // Kept in the store, so every replica sharing it and every later start refuses the cookie.
    if let Some(cookie) = login_cookie(&headers)
        && let Some((session, expires)) = state.keys.check_login_cookie(cookie, now_secs())
    {
        let until = Timestamp::from_unix_millis(expires.saturating_mul(1000));
        if let Err(error) = bounded(state.store.set_value(&claims::revoked_login(session, until), "")).await {
            return failure(&error);
        }
    }
    let mut response = Redirect::to("/login").into_response();
    response.headers_mut().insert(
        header::SET_COOKIE,
        HeaderValue::from_static("askuser_login=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0"),
    );
    response
}

// ---------------------------------------------------------------------------------------------
// One batch

struct OptionView {
    index: usize,
    label: String,
    description: Vec<Piece>,
    checked: bool,
}

/// One question of the form. `kind` is `choice`, `text` or `secret`.
struct QuestionView {
    index: usize,
    header: String,
    question: Vec<Piece>,
    kind: &'static str,
    multi: bool,
    /// `radio` or `checkbox`, for a choice.
    input: &'static str,
    options: Vec<OptionView>,
    /// Whether a choice offers "Other…" (`allow_other`).
    other: bool,
    /// Its label and its field's placeholder: on an approval (docs/contract.md §17) a typed answer denies,
    /// with the text as the reason the agent reads.
    other_label: &'static str,
    other_placeholder: &'static str,
    other_aria: &'static str,
    other_checked: bool,
    /// What the person typed: the "Other…" answer, or a text question's answer.
    other_text: String,
    /// A secret question's purpose and name.
    purpose: Option<String>,
    secret_name: Option<String>,
    /// The most characters the field takes.
    max_chars: usize,
    /// What is wrong with the answer sent, shown next to the field.
    problem: Option<String>,
}

/// What is wrong with one question's answer.
struct Problem {
    index: usize,
    header: String,
    text: String,
}

#[derive(Template)]
#[template(path = "batch.html")]
struct BatchPage {
    title: String,
    session: Option<String>,
    asked_by: Option<String>,
    asked: Moment,
    expires: Moment,
    left: String,
    /// What went wrong with the whole form (not one field's problem).
    error: Option<String>,
    problems: Vec<Problem>,
    action: String,
    csrf: String,
    questions: Vec<QuestionView>,
    live: Option<String>,
    /// It timed out, and takes a late answer.
    late: bool,
}

/// What the person sent, kept so that a form shown again keeps every choice and every word (but
/// a secret's value, which is never sent back). Zeroed when dropped: it may hold a secret.
#[derive(Default)]
struct Filled {
    fields: Vec<(String, String)>,
}

impl Drop for Filled {
    fn drop(&mut self) {
        for (_, value) in &mut self.fields {
            zeroize::Zeroize::zeroize(value);
        }
    }
}

impl Filled {
    /// The fields as sent, with every line break as `\n`: a browser sends a text area's lines
    /// with CRLF, and a carriage return is no character of an answer.
    fn new(mut fields: Vec<(String, String)>) -> Self {
        for (_, value) in &mut fields {
            if value.contains('\r') {
                let mut sent = std::mem::replace(value, value.replace("\r\n", "\n").replace('\r', "\n"));
                zeroize::Zeroize::zeroize(&mut sent);
            }
        }
        Self { fields }
    }

    fn values(&self, name: &str) -> impl Iterator<Item = &str> {
        self.fields.iter().filter(move |(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    fn value(&self, name: &str) -> Option<&str> {
        self.values(name).next()
    }
}

fn kind_name(kind: QuestionKind) -> &'static str {
    match kind {
        QuestionKind::Text => "text",
        QuestionKind::Secret => "secret",
        _ => "choice",
    }
}

fn question_view(
    index: usize,
    q: &Question,
    approval: bool,
    filled: &Filled,
    problem: Option<String>,
) -> QuestionView {
    let name = format!("q{index}");
    let picked: Vec<&str> = filled.values(&name).collect();
    // A fresh form starts on the options the question declares as defaults.
    let fresh = filled.fields.is_empty();
    let kind = q.kind();
    let typed = match kind {
        QuestionKind::Text => filled.value(&format!("{name}_text")),
        QuestionKind::Secret => None,
        _ => filled.value(&format!("{name}_other")),
    };
    QuestionView {
        index,
        // Characters that draw nothing are shown (`⟨U+3164⟩`), so two labels never look the same.
        header: askuser_core::show_blank(q.header()).into_owned(),
        question: pieces(&askuser_core::show_blank(q.question())),
        kind: kind_name(kind),
        multi: q.multi_select(),
        input: if q.multi_select() { "checkbox" } else { "radio" },
        options: q
            .options()
            .iter()
            .enumerate()
            .map(|(i, o)| OptionView {
                index: i,
                label: askuser_core::show_label(o.label()).into_owned(),
                description: o.description().map_or_else(Vec::new, |d| pieces(&askuser_core::show_blank(d))),
                checked: if fresh { o.is_default() } else { picked.contains(&i.to_string().as_str()) },
            })
            .collect(),
        other: q.allow_other(),
        other_label: if approval { "Deny, with a reason…" } else { "Other…" },
        other_placeholder: if approval { "Why (the agent reads it)" } else { "Your own answer" },
        other_aria: if approval { "Your reason to deny" } else { "Your own answer for" },
        other_checked: picked.contains(&"other"),
        other_text: typed.unwrap_or_default().to_owned(),
        purpose: q.purpose().map(str::to_owned),
        secret_name: q.secret_name().map(str::to_owned),
        max_chars: if kind == QuestionKind::Secret { MAX_SECRET_BYTES } else { MAX_CUSTOM_CHARS },
        problem,
    }
}

/// The form of `record`, filled with what was sent, with the problems found in it.
fn batch_page(
    state: &AppState,
    record: &PendingRecord,
    access: &Access,
    path: &str,
    filled: &Filled,
    (error, problems): (Option<String>, Vec<Problem>),
) -> BatchPage {
    let questions = record
        .request()
        .questions()
        .iter()
        .enumerate()
        .map(|(index, q)| {
            let problem = problems.iter().find(|p| p.index == index).map(|p| p.text.clone());
            question_view(index, q, record.is_approval(), filled, problem)
        })
        .collect();
    let count = record.request().questions().len();
    let (asked, expires, left) = times(record, Timestamp::now());
    let late = record.state() == RecordState::TimedOut;
    BatchPage {
        title: if count == 1 { "1 question".to_owned() } else { format!("{count} questions") },
        session: record.session_id().map(str::to_owned),
        asked_by: crate::links::asked_by_of(record),
        asked,
        expires,
        left,
        error,
        problems,
        action: path.to_owned(),
        csrf: state.keys.csrf(record.id(), &access.credential),
        questions,
        // A late form has nothing to follow: its question already left `pending`.
        live: (!late).then(|| format!("{path}/events")),
        late,
    }
}

/// Whether `record` timed out less than the server's late window ago and takes a late answer on
/// its page (never an approval).
fn takes_late(state: &AppState, record: &PendingRecord) -> bool {
    record.state() == RecordState::TimedOut
        && !record.is_approval()
        && record.closed_at().is_some_and(|at| Timestamp::now() < at.plus(state.config.late))
}

async fn show_batch(state: &AppState, id: &str, access: &Access, path: &str) -> Response {
    match bounded(state.store.get(id)).await {
        Ok(Some(record)) if record.state() == RecordState::Pending || takes_late(state, &record) => {
            let page = batch_page(state, &record, access, path, &Filled::default(), (None, Vec::new()));
            render(&page, StatusCode::OK)
        }
        Ok(Some(record)) => settled_page(&record, access, StatusCode::OK),
        Ok(None) => failure(&ApiError::NotFound { id: id.to_owned() }),
        Err(error) => failure(&error),
    }
}

async fn batch_by_link(
    State(state): State<Arc<AppState>>,
    Path((id, token)): Path<(String, String)>,
) -> Response {
    match by_link(&state, &id, &token) {
        Some(access) => show_batch(&state, &id, &access, &crate::links::link_path(&state, &id)).await,
        None => bad_link(),
    }
}

async fn batch_by_cookie(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    match logged_in(&state, &headers).await {
        Some(access) => show_batch(&state, &id, &access, &format!("/q/{}", encode_segment(&id))).await,
        None => to_login(),
    }
}

fn bad_link() -> Response {
    message(
        StatusCode::NOT_FOUND,
        "Link not valid",
        "This link is not valid for this server. Open the link exactly as it was printed, or log in.",
    )
}

/// The person's answers from the form's fields (and the values of secret answers), or every
/// problem found, question by question.
fn read_answers(
    record: &PendingRecord,
    filled: &Filled,
) -> Result<(AskUserResponse, Vec<Secret>), Vec<Problem>> {
    let mut answers = Vec::new();
    let mut secrets = Vec::new();
    let mut problems = Vec::new();
    for (index, q) in record.request().questions().iter().enumerate() {
        let name = format!("q{index}");
        let read = match q.kind() {
            QuestionKind::Text => {
                read_custom(q, filled.value(&format!("{name}_text")).unwrap_or_default(), "Write an answer.")
            }
            QuestionKind::Secret => {
                read_secret(q, filled.value(&format!("{name}_secret"))).map(|(answer, secret)| {
                    secrets.push(secret);
                    answer
                })
            }
            _ => read_choice(q, filled, &name),
        };
        match read {
            Ok(answer) => answers.push(answer),
            Err(text) => problems.push(Problem {
                index,
                header: askuser_core::show_blank(q.header()).into_owned(),
                text,
            }),
        }
    }
    if problems.is_empty() { Ok((AskUserResponse::answered(answers), secrets)) } else { Err(problems) }
}

/// A custom answer (a text question's, or "Other…"), or what is wrong with it: `blank` when
/// there is none.
fn read_custom(q: &Question, text: &str, blank: &str) -> Result<AskUserAnswer, String> {
    if text.trim().is_empty() {
        return Err(blank.to_owned());
    }
    if text.chars().count() > MAX_CUSTOM_CHARS {
        return Err(format!("Your answer is longer than {MAX_CUSTOM_CHARS} characters: shorten it."));
    }
    Ok(AskUserAnswer::custom(q.header(), text))
}

fn read_secret(q: &Question, value: Option<&str>) -> Result<(AskUserAnswer, Secret), String> {
    let value = value.unwrap_or_default();
    let name = q.secret_name().unwrap_or_default();
    if value.trim().is_empty() {
        return Err("Enter the secret, or decline.".to_owned());
    }
    if value.len() > MAX_SECRET_BYTES {
        return Err(format!("The secret is longer than {MAX_SECRET_BYTES} bytes."));
    }
    if value.chars().any(char::is_control) {
        return Err("The secret must be one line, without control characters.".to_owned());
    }
    Ok((AskUserAnswer::secret(q.header(), name), (name.to_owned(), SecretValue::new(value.to_owned()))))
}

fn read_choice(q: &Question, filled: &Filled, name: &str) -> Result<AskUserAnswer, String> {
    let picked: Vec<&str> = filled.values(name).collect();
    let other = if q.allow_other() { filled.value(&format!("{name}_other")).unwrap_or_default() } else { "" };
    let wants_other = picked.contains(&"other") || (picked.is_empty() && !other.trim().is_empty());
    let labels: Vec<String> = picked
        .iter()
        .filter(|p| **p != "other" || !q.allow_other())
        .map(|p| p.parse::<usize>().ok().and_then(|i| q.options().get(i)).map(|o| o.label().to_owned()))
        .collect::<Option<_>>()
        .ok_or_else(|| "That choice is not one of the options.".to_owned())?;
    if wants_other && q.allow_other() {
        if !labels.is_empty() {
            return Err("Pick options or write your own answer, not both.".to_owned());
        }
        return read_custom(q, other, "Write your own answer, or pick an option.");
    }
    if labels.is_empty() {
        return Err("Pick an answer.".to_owned());
    }
    if !q.multi_select() && labels.len() > 1 {
        return Err("This question is single-select: pick one option.".to_owned());
    }
    if !other.trim().is_empty() {
        return Err(
            "You wrote your own answer but did not choose “Other…”: choose it, or clear the text.".to_owned()
        );
    }
    Ok(AskUserAnswer::picked(q.header(), labels))
}

async fn submit(
    state: &AppState,
    id: &str,
    access: &Access,
    path: &str,
    fields: Vec<(String, String)>,
) -> Response {
    let filled = Filled::new(fields);
    let record = match bounded(state.store.get(id)).await {
        Ok(Some(record)) => record,
        Ok(None) => return failure(&ApiError::NotFound { id: id.to_owned() }),
        // Without the record the form cannot be shown again: the browser's Back keeps it.
        Err(error @ (ApiError::StoreUnavailable | ApiError::Internal)) => {
            return retry_later(message(
                error.status(),
                "Not sent",
                "Your answers were NOT sent: the server cannot reach its database just now. \
                 Go back (your browser keeps what you entered) and send them again in a moment.",
            ));
        }
        Err(error) => return failure(&error),
    };
    let csrf = filled.value("csrf").unwrap_or_default();
    if !state.keys.check_csrf(id, &access.credential, csrf) {
        return message(
            StatusCode::FORBIDDEN,
            "Form not accepted",
            "This form did not come from this page. Open the question again and send it from there.",
        );
    }
    if record.state() != RecordState::Pending && !takes_late(state, &record) {
        return settled_page(&record, access, StatusCode::CONFLICT);
    }
    let (response, secrets) = if filled.value("action") == Some("decline") {
        (AskUserResponse::declined(), Vec::new())
    } else {
        match read_answers(&record, &filled) {
            Ok(read) => read,
            Err(problems) => {
                let page = batch_page(state, &record, access, path, &filled, (None, problems));
                return render(&page, StatusCode::UNPROCESSABLE_ENTITY);
            }
        }
    };
    match crate::actions::answer(state, id, &response, secrets, &askuser_store::Via::surface("page")).await {
        Ok(record) => {
            // Its asker's wait ended a moment ago and none came back: "sent" would be untrue.
            let nobody_waits = state.waits.abandoned(id);
            let (title, text) = match (record.state() == RecordState::Declined, nobody_waits) {
                _ if record.state() == RecordState::Late => (
                    "Kept as a late answer",
                    "The assistant was told at the deadline that nobody answered. Your answers are kept \
                     with the question, marked late: it gets them when it looks again.",
                ),
                (true, false) => ("Declined", "The assistant was told that you declined to answer."),
                (true, true) => (
                    "Declined, but nobody is waiting",
                    "The assistant stopped waiting for these answers just before you declined. \
                     Your choice is kept with the question: it gets it if it asks again.",
                ),
                (false, false) => ("Thank you", "Your answers were sent to the assistant."),
                (false, true) => (
                    "Kept, but nobody is waiting",
                    "The assistant stopped waiting for these answers just before you sent them. \
                     They are kept with the question: it gets them if it asks again.",
                ),
            };
            let page = MessagePage {
                title: title.to_owned(),
                text: text.to_owned(),
                at: None,
                answers: answer_lines(record.response()),
                asked: Vec::new(),
                back: access.logged_in.then(|| back_link(&record)),
                live: None,
            };
            render(&page, StatusCode::OK)
        }
        Err(ApiError::AlreadyAnswered { first: record } | ApiError::Closed { record }) => {
            settled_page(&record, access, StatusCode::CONFLICT)
        }
        Err(ApiError::InvalidResponse { message }) => {
            let page = batch_page(state, &record, access, path, &filled, (Some(message), Vec::new()));
            render(&page, StatusCode::UNPROCESSABLE_ENTITY)
        }
        // Nothing was stored: the form again, with everything the person entered (the store
        // error was logged where it became an `ApiError`).
        Err(error @ (ApiError::StoreUnavailable | ApiError::Internal | ApiError::ShuttingDown)) => {
            let page =
                batch_page(state, &record, access, path, &filled, (Some(NOT_SENT.to_owned()), Vec::new()));
            retry_later(render(&page, error.status()))
        }
        Err(error) => failure(&error),
    }
}

/// A form's fields, read by [`SecretForm`](crate::zeroed::SecretForm): its raw body zeroed once
/// parsed (it may hold a typed secret).
type Fields = crate::zeroed::SecretForm;

/// The status, title and text of a page that says why a form was not read.
type Unread = (StatusCode, &'static str, &'static str);

/// The form's fields, or why not.
fn form_fields(form: Fields) -> Result<Vec<(String, String)>, Unread> {
    form.0.map_err(|refused| {
        if refused == crate::zeroed::FormRefused::TooLarge {
            (StatusCode::PAYLOAD_TOO_LARGE, "Too long", "What you sent is longer than this server accepts.")
        } else {
            (
                StatusCode::BAD_REQUEST,
                "Form not accepted",
                "The form could not be read. Open the question again.",
            )
        }
    })
}

async fn submit_by_link(
    State(state): State<Arc<AppState>>,
    Path((id, token)): Path<(String, String)>,
    form: Fields,
) -> Response {
    let Some(access) = by_link(&state, &id, &token) else { return bad_link() };
    match form_fields(form) {
        Ok(fields) => submit(&state, &id, &access, &crate::links::link_path(&state, &id), fields).await,
        Err((status, title, text)) => message(status, title, text),
    }
}

async fn submit_by_cookie(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    form: Fields,
) -> Response {
    let Some(access) = logged_in(&state, &headers).await else { return to_login() };
    match form_fields(form) {
        Ok(fields) => submit(&state, &id, &access, &format!("/q/{}", encode_segment(&id)), fields).await,
        Err((status, title, text)) => message(status, title, text),
    }
}

// ---------------------------------------------------------------------------------------------
// Live updates

/// The client's address, put on each request by the accept loop (absent in process).
type PeerOf = Option<axum::Extension<crate::throttle::Peer>>;

/// One event when the question leaves `pending`, on any replica (the store's watch), then the end;
/// within the streams' budget (`streams.rs`).
fn batch_events(state: &Arc<AppState>, id: String, peer: PeerOf) -> Response {
    let permit = match state.streams.open(Some(&id), peer.map(|axum::Extension(peer)| peer)) {
        Ok(permit) => permit,
        Err(refused) => return refused.into_response(),
    };
    let state = Arc::clone(state);
    let stream = futures_util::stream::once(async move {
        let _counted = permit;
        tokio::select! {
            settled = state.store.watch(&id) => settled.ok().map(|r| events::sse_event(&ServerEvent::of(&r))),
            () = state.closed() => None,
        }
    });
    let stream = futures_util::StreamExt::filter_map(stream, |event| async move {
        event.map(Ok::<Event, std::convert::Infallible>)
    });
    Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(15))).into_response()
}

async fn batch_events_by_link(
    State(state): State<Arc<AppState>>,
    Path((id, token)): Path<(String, String)>,
    peer: PeerOf,
) -> Response {
    if by_link(&state, &id, &token).is_none() {
        return StatusCode::NOT_FOUND.into_response();
    }
    batch_events(&state, id, peer)
}

async fn batch_events_by_cookie(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    peer: PeerOf,
) -> Response {
    if logged_in(&state, &headers).await.is_none() {
        return StatusCode::UNAUTHORIZED.into_response();
    }
    batch_events(&state, id, peer)
}

async fn session_events(
    State(state): State<Arc<AppState>>,
    Path(session): Path<String>,
    headers: HeaderMap,
    peer: PeerOf,
) -> Response {
    if logged_in(&state, &headers).await.is_none() {
        return StatusCode::UNAUTHORIZED.into_response();
    }
    let permit = match state.streams.open(None, peer.map(|axum::Extension(peer)| peer)) {
        Ok(permit) => permit,
        Err(refused) => return refused.into_response(),
    };
    let session = Some(session);
    events::stream(&state, move |event| {
        let _counted = &permit;
        event.session_id == session
    })
    .into_response()
}

async fn all_events(State(state): State<Arc<AppState>>, headers: HeaderMap, peer: PeerOf) -> Response {
    if logged_in(&state, &headers).await.is_none() {
        return StatusCode::UNAUTHORIZED.into_response();
    }
    let permit = match state.streams.open(None, peer.map(|axum::Extension(peer)| peer)) {
        Ok(permit) => permit,
        Err(refused) => return refused.into_response(),
    };
    events::stream(&state, move |_| {
        let _counted = &permit;
        true
    })
    .into_response()
}

// ---------------------------------------------------------------------------------------------
// Assets

async fn css() -> Response {
    asset("text/css; charset=utf-8", include_str!("../assets/app.css"))
}

async fn script() -> Response {
    asset("text/javascript; charset=utf-8", include_str!("../assets/live.js"))
}

fn asset(content_type: &'static str, body: &'static str) -> Response {
    ([(header::CONTENT_TYPE, content_type), (header::CACHE_CONTROL, "public, max-age=3600")], body)
        .into_response()
}
