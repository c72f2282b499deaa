//! What a person does with a batch in a chat, surface by surface alike: the buttons, what a tap
//! means (encoded in the button's data: a short key for the question, never a label), the
//! answers gathered so far, and the response they make.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use askuser_core::{AskUserAnswer, AskUserResponse, Question, QuestionKind};
use askuser_store::{PendingRecord, State};
use serde::{Deserialize, Serialize};
use sha2::Digest as _;

/// The longest message text sent (Telegram takes 4096 characters, a Slack section 3000).
const MAX_TEXT_CHARS: usize = 2900;

/// The longest button text (Slack takes 75 characters).
const MAX_BUTTON_CHARS: usize = 60;

/// The short key of question `id` in button data: 12 hex digits of its SHA-256 (48 bits, so that
/// the data of every button stays far within Telegram's 64 bytes whatever the id).
pub(crate) fn key_of(id: &str) -> String {
    sha2::Sha256::digest(id.as_bytes()).iter().take(6).fold(String::new(), |mut out, b| {
        let _ = write!(out, "{b:02x}");
        out
    })
}

/// What a button does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Action {
    /// Picks option `o` of (single-select) question `q`.
    Pick { q: usize, o: usize },
    /// Ticks or unticks option `o` of (multi-select) question `q`.
    Toggle { q: usize, o: usize },
    /// Asks to type the answer to question `q` (Other…, or a text question).
    Type { q: usize },
    /// Sends the answers gathered.
    Done,
    /// Declines the batch.
    Decline,
}

impl Action {
    /// `KEY:p.Q.O`, `KEY:t.Q.O`, `KEY:o.Q`, `KEY:d`, `KEY:x`: at most 12 + 1 + 7 bytes.
    pub(crate) fn encode(self, key: &str) -> String {
        match self {
            Self::Pick { q, o } => format!("{key}:p.{q}.{o}"),
            Self::Toggle { q, o } => format!("{key}:t.{q}.{o}"),
            Self::Type { q } => format!("{key}:o.{q}"),
            Self::Done => format!("{key}:d"),
            Self::Decline => format!("{key}:x"),
        }
    }

    /// The key and action of button data, `None` for data this crate did not make (the data
    /// comes from the person's app: untrusted).
    pub(crate) fn decode(data: &str) -> Option<(&str, Self)> {
        let (key, action) = data.split_once(':')?;
        if key.len() != 12 || !key.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let number = |s: &str| -> Option<usize> {
            (s.len() <= 2 && s.bytes().all(|b| b.is_ascii_digit())).then(|| s.parse().ok()).flatten()
        };
        let pair = |rest: &str| -> Option<(usize, usize)> {
            let (q, o) = rest.split_once('.')?;
            Some((number(q)?, number(o)?))
        };
        let action = match action.split_once('.') {
            None if action == "d" => Self::Done,
            None if action == "x" => Self::Decline,
            Some(("p", rest)) => pair(rest).map(|(q, o)| Self::Pick { q, o })?,
            Some(("t", rest)) => pair(rest).map(|(q, o)| Self::Toggle { q, o })?,
            Some(("o", rest)) => Self::Type { q: number(rest)? },
            _ => return None,
        };
        Some((key, action))
    }
}

/// The answers a person gave so far to a batch, kept with its message (in the store).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Tally {
    /// Picked option indexes, by question index, in the order picked.
    #[serde(default)]
    pub(crate) picks: BTreeMap<usize, Vec<usize>>,
    /// Typed answers, by question index.
    #[serde(default)]
    pub(crate) typed: BTreeMap<usize, String>,
}

/// What an action leads to.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Step {
    /// The batch is answered: commit this.
    Submit(AskUserResponse),
    /// The tally changed: show it.
    Changed,
    /// Ask the person to type the answer to question `q`.
    Type(usize),
    /// The action does not fit the batch (untrusted data, or not answerable here): say this.
    Refused(&'static str),
    /// Not every question is answered yet: say which.
    Incomplete(String),
}

/// Whether the batch can be answered in a chat at all: no secret question (secrets never go
/// through a chat), and no text question on a surface that cannot take typed text.
pub(crate) fn answerable(record: &PendingRecord, types_text: bool) -> bool {
    record.request().questions().iter().all(|q| match q.kind() {
        QuestionKind::Secret => false,
        QuestionKind::Text => types_text,
        _ => true,
    })
}

/// Whether one tap (or one typed reply) answers the whole batch: a batch of one single-select or
/// text question.
fn one_step(record: &PendingRecord) -> bool {
    let questions = record.request().questions().as_slice();
    questions.len() == 1 && !questions[0].multi_select()
}

/// Applies `action` to `tally` for `record`; `types_text`: whether the surface can take typed
/// text.
pub(crate) fn apply(record: &PendingRecord, tally: &mut Tally, action: Action, types_text: bool) -> Step {
    if !answerable(record, types_text) && action != Action::Decline {
        return Step::Refused("This question cannot be answered here: open its page.");
    }
    let questions = record.request().questions().as_slice();
    let question = |q: usize| questions.get(q);
    match action {
        Action::Decline => Step::Submit(AskUserResponse::declined()),
        Action::Pick { q, o } => match question(q) {
            Some(question) if !question.multi_select() && o < question.options().len() => {
                tally.typed.remove(&q);
                tally.picks.insert(q, vec![o]);
                if one_step(record) { submit(record, tally) } else { Step::Changed }
            }
            _ => Step::Refused("That button does not belong to this question."),
        },
        Action::Toggle { q, o } => match question(q) {
            Some(question) if question.multi_select() && o < question.options().len() => {
                tally.typed.remove(&q);
                let picks = tally.picks.entry(q).or_default();
                if let Some(at) = picks.iter().position(|p| *p == o) {
                    picks.remove(at);
                } else {
                    picks.push(o);
                }
                Step::Changed
            }
            _ => Step::Refused("That button does not belong to this question."),
        },
        Action::Type { q } => match question(q) {
            Some(question)
                if types_text && (question.allow_other() || question.kind() == QuestionKind::Text) =>
            {
                Step::Type(q)
            }
            _ => Step::Refused("That button does not belong to this question."),
        },
        Action::Done => submit(record, tally),
    }
}

/// Records `text` as the typed answer to question `q`.
pub(crate) fn typed(record: &PendingRecord, tally: &mut Tally, q: usize, text: &str) -> Step {
    if record.request().questions().as_slice().get(q).is_none() {
        return Step::Refused("That question is not in this batch.");
    }
    tally.picks.remove(&q);
    tally.typed.insert(q, text.trim().to_owned());
    if one_step(record) { submit(record, tally) } else { Step::Changed }
}

/// The response the tally makes, when every question has an answer (a multi-select question may
/// be left with nothing ticked).
fn submit(record: &PendingRecord, tally: &Tally) -> Step {
    let mut answers = Vec::new();
    for (q, question) in record.request().questions().iter().enumerate() {
        let answer = if let Some(text) = tally.typed.get(&q) {
            AskUserAnswer::custom(question.header(), text.as_str())
        } else if let Some(picks) = tally.picks.get(&q) {
            let labels =
                picks.iter().filter_map(|o| question.options().get(*o)).map(|o| o.label().to_owned());
            AskUserAnswer::picked(question.header(), labels.collect::<Vec<_>>())
        } else if question.multi_select() {
            AskUserAnswer::picked(question.header(), Vec::<String>::new())
        } else {
            return Step::Incomplete(format!("Answer “{}” first.", shown(question.header())));
        };
        answers.push(answer);
    }
    Step::Submit(AskUserResponse::answered(answers))
}

/// A button: its text, and either what it does (data) or where it leads (a URL).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Button {
    pub(crate) text: String,
    pub(crate) data: Option<String>,
    pub(crate) url: Option<String>,
    /// How a surface that can style buttons shows it (Slack; Telegram has no styles).
    pub(crate) look: Look,
}

/// A button's emphasis, as the page gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Look {
    #[default]
    Plain,
    /// The option the model recommends (`default`, or a label ending in "(Recommended)").
    Recommended,
    /// Decline: asks for a confirmation first where the surface can.
    Decline,
}

impl Button {
    fn act(text: &str, key: &str, action: Action) -> Self {
        let look = if action == Action::Decline { Look::Decline } else { Look::Plain };
        Self { text: cut(text, MAX_BUTTON_CHARS), data: Some(action.encode(key)), url: None, look }
    }
}

/// Whether `option` of `question` is the one recommended: declared `default` (extended profile),
/// else a label ending in "(Recommended)", ignoring ASCII case (what the page preselects).
fn recommended(question: &Question, option: &askuser_core::QuestionOption) -> bool {
    const MARK: &str = "(recommended)";
    if question.declared_defaults().next().is_some() {
        return option.is_default();
    }
    let label = option.label();
    label.len() >= MARK.len()
        && label.is_char_boundary(label.len() - MARK.len())
        && label[label.len() - MARK.len()..].eq_ignore_ascii_case(MARK)
}

/// What a message shows: its text and rows of buttons.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct View {
    pub(crate) text: String,
    pub(crate) rows: Vec<Vec<Button>>,
}

/// `text` with characters that render blank made visible.
fn shown(text: &str) -> String {
    askuser_core::show_blank(text).into_owned()
}

/// At most `max` characters of `text`, `…` marking a cut.
pub(crate) fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// The question text of a batch: who asks, each question with its header, options and their
/// descriptions. Plain text (no parse mode, nothing to escape).
fn body(record: &PendingRecord) -> String {
    let who = record.asked_by().map_or_else(|| "Your assistant".to_owned(), |by| by.shown().into_owned());
    let questions = record.request().questions().as_slice();
    let mut text = if questions.len() == 1 {
        format!("❓ {who} asks:")
    } else {
        format!("❓ {who} asks {} questions:", questions.len())
    };
    if let Some(session) = record.session_id() {
        let _ = write!(text, "\n(session {})", shown(session));
    }
    for question in questions {
        let _ = write!(text, "\n\n[{}] {}", shown(question.header()), shown(question.question()));
        for option in question.options() {
            let _ = write!(text, "\n• {}", askuser_core::show_label(option.label()));
            if let Some(description) = option.description() {
                let _ = write!(text, " — {}", shown(description));
            }
        }
        text.push_str(match question.kind() {
            QuestionKind::Secret => "\n(a secret: never typed into a chat)",
            QuestionKind::Text => "\n(type your answer)",
            _ if question.multi_select() => "\n(pick any, then Send)",
            _ => "",
        });
    }
    text
}

/// When the batch stops waiting, as a chat shows it (the message is not updated as time passes,
/// so an instant, in UTC, and the whole span): "⏳ Answer within 10 min, by 18:30 UTC".
pub(crate) fn deadline(record: &PendingRecord) -> String {
    let (asked, expires) = (record.asked_at(), record.expires_at());
    let span = expires.unix_millis().saturating_sub(asked.unix_millis()) / 1000;
    let within = match span {
        s if s < 120 => format!("{s} s"),
        s if s < 2 * 3600 => format!("{} min", (s + 30) / 60),
        s if s < 2 * 86_400 => format!("{} h", (s + 1800) / 3600),
        s => format!("{} days", (s + 43_200) / 86_400),
    };
    let at = expires.to_string();
    let by = if span < 86_400 {
        format!("{} UTC", at.get(11..16).unwrap_or_default())
    } else {
        format!("{} {} UTC", at.get(..10).unwrap_or_default(), at.get(11..16).unwrap_or_default())
    };
    format!("⏳ Answer within {within}, by {by}")
}

/// Where a channel posts, as far as page links go (issue 36.2). A page link opens the batch to
/// whoever has it, so where people outside the allowed list read the messages (a Slack channel,
/// a Telegram group) it would let any of them answer, past the `user_ids` check that holds for
/// taps only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Chat {
    /// People outside the allowed list can read what is posted.
    pub(crate) shared: bool,
    /// The operator opted in to page links there all the same.
    pub(crate) links_when_shared: bool,
}

impl Chat {
    /// Whether `record`'s message may carry its page link: always in a private chat; in a shared
    /// one only when the operator opted in, and never for a batch with a secret question.
    pub(crate) fn may_link(self, record: &PendingRecord) -> bool {
        !self.shared
            || (self.links_when_shared
                && !record.request().questions().iter().any(|q| q.kind() == QuestionKind::Secret))
    }
}

/// The view of a waiting batch: the question text and its buttons, the answers so far ticked.
/// `link`: the batch's page, when the server has a public URL and `chat` may carry it.
pub(crate) fn pending_view(
    record: &PendingRecord,
    tally: &Tally,
    link: Option<&str>,
    chat: Chat,
    types_text: bool,
) -> View {
    let key = key_of(record.id());
    let mut text = body(record);
    let _ = write!(text, "\n\n{}", deadline(record));
    let mut rows = Vec::new();
    if answerable(record, types_text) {
        let questions = record.request().questions().as_slice();
        for (q, question) in questions.iter().enumerate() {
            rows.extend(question_rows(&key, q, question, questions.len() > 1, tally, types_text));
        }
        let mut last = Vec::new();
        if !one_step(record) {
            last.push(Button::act("Send ✅", &key, Action::Done));
        }
        last.push(Button::act("Decline", &key, Action::Decline));
        rows.push(last);
    } else {
        match link {
            Some(_) => {
                text.push_str("\n\nThis one is answered on its page (a secret never goes through a chat).");
            }
            None if chat.shared => text.push_str(
                "\n\nThis one cannot be answered in this chat (a secret never goes through a chat, and \
                 its page link is not posted where others can read it): open it from the server's \
                 pages.",
            ),
            None => text.push_str(
                "\n\nThis one cannot be answered in this chat (a secret never goes through a chat, and \
                 the server has no public address for its page).",
            ),
        }
        rows.push(vec![Button::act("Decline", &key, Action::Decline)]);
    }
    if let Some(link) = link {
        rows.push(vec![Button {
            text: "Open the page".to_owned(),
            data: None,
            url: Some(link.to_owned()),
            look: Look::Plain,
        }]);
    }
    View { text: cut(&text, MAX_TEXT_CHARS), rows }
}

/// One question's rows: its options (two a row), then Other… / the text answer.
fn question_rows(
    key: &str,
    q: usize,
    question: &Question,
    several: bool,
    tally: &Tally,
    types_text: bool,
) -> Vec<Vec<Button>> {
    let picks = tally.picks.get(&q);
    let prefix = if several { format!("{}: ", shown(question.header())) } else { String::new() };
    let mut buttons: Vec<Button> = question
        .options()
        .iter()
        .enumerate()
        .map(|(o, option)| {
            let ticked = picks.is_some_and(|p| p.contains(&o));
            let label = format!(
                "{}{prefix}{}",
                if ticked { "✓ " } else { "" },
                askuser_core::show_label(option.label())
            );
            let action =
                if question.multi_select() { Action::Toggle { q, o } } else { Action::Pick { q, o } };
            let mut button = Button::act(&label, key, action);
            if recommended(question, option) {
                button.look = Look::Recommended;
            }
            button
        })
        .collect();
    if types_text && (question.allow_other() || question.kind() == QuestionKind::Text) {
        let label = match tally.typed.get(&q) {
            Some(text) => format!("✓ {prefix}“{}” (change)", cut(text, 20)),
            None if question.kind() == QuestionKind::Text => format!("✎ {prefix}Type the answer"),
            None => format!("{prefix}Other…"),
        };
        buttons.push(Button::act(&label, key, Action::Type { q }));
    }
    buttons.chunks(2).map(<[Button]>::to_vec).collect()
}

/// What an answer was, in a line: "PostgreSQL", "Plan: Large · Region: EU".
pub(crate) fn summary(record: &PendingRecord) -> String {
    let Some(response) = record.response() else { return String::new() };
    let one = response.answers.len() == 1;
    let parts: Vec<String> = response
        .answers
        .iter()
        .map(|answer| {
            let what = if answer.secret_ref.is_some() {
                "(a secret)".to_owned()
            } else if let Some(text) = &answer.custom_answer {
                format!("“{}”", cut(text, 80))
            } else {
                answer.selected.join(", ")
            };
            if one { shown(&what) } else { format!("{}: {}", shown(&answer.header), shown(&what)) }
        })
        .collect();
    parts.join(" · ")
}

/// The view of a settled batch: the question text, what became of it, no buttons. `via`: the
/// surface it was answered on, when known ("Telegram").
pub(crate) fn settled_view(record: &PendingRecord, via: Option<&str>) -> View {
    let outcome = match record.state() {
        State::Answered => match via {
            Some(via) => format!("✅ Answered on {via}: {}", summary(record)),
            None => format!("✅ Answered: {}", summary(record)),
        },
        State::Declined => match via {
            Some(via) => format!("🚫 Declined on {via}"),
            None => "🚫 Declined".to_owned(),
        },
        State::TimedOut => "⌛ Expired: nobody answered in time".to_owned(),
        State::Cancelled => "🗑 Withdrawn: the assistant stopped waiting".to_owned(),
        State::Late => format!("⌛ Expired, then answered late: {}", summary(record)),
        _ => String::new(),
    };
    let text = cut(&body(record), MAX_TEXT_CHARS - 200);
    View { text: format!("{text}\n\n{}", cut(&outcome, 190)), rows: Vec::new() }
}

#[cfg(test)]
mod tests {
    use super::{Action, key_of};

    #[test]
    fn button_data_round_trips_and_fits() {
        let key = key_of(&"x".repeat(500));
        assert_eq!(key.len(), 12);
        for action in [
            Action::Pick { q: 3, o: 5 },
            Action::Toggle { q: 0, o: 1 },
            Action::Type { q: 2 },
            Action::Done,
            Action::Decline,
        ] {
            let data = action.encode(&key);
            assert!(data.len() <= 64, "{data}");
            assert_eq!(Action::decode(&data), Some((key.as_str(), action)));
        }
        for junk in
            ["", ":", "abc:d", "zzzzzzzzzzzz:d", "0123456789ab:p.1", "0123456789ab:p.1.999", "0123456789ab:q"]
        {
            assert_eq!(Action::decode(junk), None, "{junk}");
        }
    }
}
