//! The menu's state machine: pure, no I/O. [`Menu::handle`] takes one key and says what changed.

use std::time::Duration;

use askuser_core::{AskUserAnswer, AskUserRequest, Question, QuestionKind, SecretValue, Timestamp};
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use unicode_segmentation::UnicodeSegmentation;

use crate::text::clean_answer_text;

/// How a menu ended.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub(crate) enum MenuOutcome {
    /// Every question answered; the labels are the request's own, unchanged.
    Answered(Vec<AskUserAnswer>),
    /// The person declined (Esc or Ctrl-D).
    Declined,
    /// The person interrupted (Ctrl-C).
    Interrupted,
    /// The input ended before the first answer line: nobody was there to ask (the line protocol
    /// only).
    NoInput,
    /// Declined without asking anyone: a secret question with no terminal to type it on (the
    /// line protocol only). The model is told nobody was asked (`answered_by: unattended`).
    Unasked,
    /// A secret question (alone in its call, docs/contract.md §10) answered: the answer carries only
    /// `session:NAME`; the value goes to the host's secret sink before the call returns.
    Secret(AskUserAnswer, SecretValue),
}

/// What one key did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub(crate) enum Effect {
    /// Nothing changed: no redraw needed.
    Ignored,
    /// The state changed: draw again.
    Redraw,
    /// The menu is over.
    Done(MenuOutcome),
}

/// A one-off message under the options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Notice {
    ConfirmDecline,
    PickOne,
    TypeSomething,
    Unanswered,
    TooLong,
    /// A paste into a secret that would have had to change to fit (a line break inside, a
    /// control character): refused whole, nothing inserted.
    SecretPasteRefused,
}

impl Notice {
    pub(crate) fn text(self) -> &'static str {
        match self {
            Self::ConfirmDecline => "press esc again to decline, any other key to go on",
            Self::PickOne => "pick at least one (space toggles), or choose Other",
            Self::TypeSomething => "type an answer, or esc to go back",
            Self::Unanswered => "answer every question before submitting",
            Self::TooLong => "the answer is at its maximum length",
            Self::SecretPasteRefused => {
                "paste refused: it has a line break or a control character inside; paste the secret as one line"
            }
        }
    }
}

/// The answer being built for one question.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Pick {
    /// Option indices, in the order picked.
    pub(crate) picked: Vec<usize>,
    /// A committed custom answer, or a text question's answer (excludes `picked`).
    pub(crate) custom: Option<String>,
    /// A secret question's value: never drawn, never in an answer (redacted, zeroed on drop).
    pub(crate) secret: Option<SecretValue>,
}

impl Pick {
    pub(crate) fn is_answered(&self) -> bool {
        !self.picked.is_empty() || self.custom.is_some() || self.secret.is_some()
    }

    /// The answer to `question`, with the question's own labels (and id, extended profile). A
    /// secret's answer is its reference `session:NAME`, never the value.
    pub(crate) fn answer(&self, question: &Question) -> AskUserAnswer {
        if self.secret.is_some() {
            return secret_answer(question);
        }
        let answer = match &self.custom {
            Some(text) => AskUserAnswer::custom(question.header(), text.clone()),
            None => AskUserAnswer::picked(
                question.header(),
                self.picked.iter().map(|&i| question.options()[i].label()),
            ),
        };
        match question.id() {
            Some(id) => answer.with_id(id),
            None => answer,
        }
    }
}

/// The answer to secret `question`: `session:NAME` (and its id), never a value.
pub(crate) fn secret_answer(question: &Question) -> AskUserAnswer {
    let answer = AskUserAnswer::secret(question.header(), question.secret_name().unwrap_or_default());
    match question.id() {
        Some(id) => answer.with_id(id),
        None => answer,
    }
}

/// Whether `question` is answered by typing (a text or secret question) rather than by picking.
pub(crate) fn is_typed(question: &Question) -> bool {
    question.kind() != QuestionKind::Choice
}

/// The row the cursor starts on: the first option the model marked `default`, else the first.
pub(crate) fn first_default(question: &Question) -> usize {
    question.options().iter().position(askuser_core::QuestionOption::is_default).unwrap_or(0)
}

/// The one-line editor of the "Other…" row, of a text question, and of a secret question.
///
/// The cursor moves and deletes by grapheme, never inside one: Backspace after `é` written as
/// `e` + U+0301, or after a flag, removes what the person sees as one character.
///
/// A secret's editor is `masked`: it is drawn as a mask, its buffer is reserved whole up front
/// (no reallocation leaves a copy behind) and zeroed when the editor goes.
#[derive(Clone, Default, PartialEq, Eq)]
pub(crate) struct Editor {
    pub(crate) text: String,
    /// Insertion point: a byte offset on a grapheme boundary.
    pub(crate) cursor: usize,
    pub(crate) masked: bool,
}

impl std::fmt::Debug for Editor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.masked {
            f.debug_struct("Editor").field("text", &"<redacted>").finish_non_exhaustive()
        } else {
            f.debug_struct("Editor").field("text", &self.text).field("cursor", &self.cursor).finish()
        }
    }
}

impl Drop for Editor {
    fn drop(&mut self) {
        if self.masked {
            zeroize::Zeroize::zeroize(&mut self.text);
        }
    }
}

impl Editor {
    /// An editor holding `text`, the cursor at its end.
    fn new(text: String, masked: bool) -> Self {
        let cursor = text.len();
        Self { text, cursor, masked }
    }

    fn prev(&self) -> usize {
        self.text[..self.cursor].grapheme_indices(true).next_back().map_or(0, |(i, _)| i)
    }

    fn next(&self) -> usize {
        self.text[self.cursor..].graphemes(true).next().map_or(self.cursor, |g| self.cursor + g.len())
    }

    /// Moves the cursor forward to a grapheme boundary, after an insertion merged with what follows.
    fn snap(&mut self) {
        let at = self.cursor;
        self.cursor =
            self.text.grapheme_indices(true).map(|(i, _)| i).find(|&i| i >= at).unwrap_or(self.text.len());
    }
}

/// The time left to answer, shown while the menu is open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Countdown {
    pub(crate) left: Duration,
    /// Past the request's nudge time: shown as a warning.
    pub(crate) late: bool,
}

/// The state of one menu over a request: which question, which row, what is picked.
#[derive(Debug, Clone)]
pub(crate) struct Menu {
    request: AskUserRequest,
    tab: usize,
    rows: Vec<usize>,
    picks: Vec<Pick>,
    pub(crate) editor: Option<Editor>,
    pub(crate) notice: Option<Notice>,
    pub(crate) help: bool,
    /// The time left before the request's deadline, as last measured (`None` without one).
    pub(crate) countdown: Option<Countdown>,
    max_custom_chars: usize,
    /// Who asks, when the host said (`AskContext::asked_by`): shown in the title.
    asked_by: Option<String>,
}

impl Menu {
    /// A fresh menu on the first question, first option. Custom answers are capped at
    /// `max_custom_chars` characters.
    #[must_use]
    pub(crate) fn new(request: AskUserRequest, max_custom_chars: usize) -> Self {
        let n = request.questions().len();
        let rows = request.questions().iter().map(first_default).collect();
        let mut menu = Self {
            request,
            tab: 0,
            rows,
            picks: vec![Pick::default(); n],
            editor: None,
            notice: None,
            help: false,
            countdown: None,
            max_custom_chars: max_custom_chars.max(1),
            asked_by: None,
        };
        menu.enter_tab();
        menu
    }

    /// With who asks, shown in the title instead of "Assistant".
    #[must_use]
    pub(crate) fn asked_by(mut self, asked_by: Option<&str>) -> Self {
        self.asked_by = asked_by.map(str::to_owned);
        self
    }

    /// Who asks, when the host said.
    pub(crate) fn asker(&self) -> Option<&str> {
        self.asked_by.as_deref()
    }

    /// On arriving at a tab: a text or secret question not yet answered opens its editor, so the
    /// person can type at once.
    fn enter_tab(&mut self) {
        let open = self
            .questions()
            .get(self.tab)
            .is_some_and(|q| is_typed(q) && !self.picks[self.tab].is_answered());
        if open && self.editor.is_none() {
            self.open_editor();
        }
    }

    /// Whether the current tab is a text or secret question.
    pub(crate) fn typed_tab(&self) -> bool {
        self.questions().get(self.tab).is_some_and(is_typed)
    }

    /// The row index of "Other…" on the current question, if it has that row.
    pub(crate) fn other_row(&self) -> Option<usize> {
        let q = self.questions().get(self.tab)?;
        (q.allow_other() && !is_typed(q)).then_some(q.options().len())
    }

    pub(crate) fn questions(&self) -> &[Question] {
        self.request.questions().as_slice()
    }

    /// Measures the time left at `now`, when the request has a deadline.
    pub(crate) fn tick(&mut self, now: Timestamp) {
        self.countdown = self.request.expires_at().map(|expires| Countdown {
            left: now.until(expires),
            // The nudge time: the last minute, or the last fifth of a shorter wait.
            late: self.request.nudge_at().is_some_and(|nudge| now >= nudge),
        });
    }

    /// The current tab: a question index, or the number of questions for the review step.
    #[must_use]
    pub(crate) fn tab(&self) -> usize {
        self.tab
    }

    /// Whether the review step is showing.
    #[must_use]
    pub(crate) fn in_review(&self) -> bool {
        self.tab >= self.questions().len()
    }

    /// The highlighted row of the current question (the option count means "Other…").
    #[must_use]
    pub(crate) fn row(&self) -> usize {
        self.rows.get(self.tab).copied().unwrap_or(0)
    }

    /// Whether the "Other…" editor is open.
    #[must_use]
    pub(crate) fn editing(&self) -> bool {
        self.editor.is_some()
    }

    /// The text in the "Other…" editor, if it is open.
    #[cfg(test)]
    pub(crate) fn editor_text(&self) -> Option<String> {
        self.editor.as_ref().map(|e| e.text.clone())
    }

    pub(crate) fn picks(&self) -> &[Pick] {
        &self.picks
    }

    /// The custom answer committed for question `index`.
    #[cfg(test)]
    pub(crate) fn custom(&self, index: usize) -> Option<&str> {
        self.picks.get(index).and_then(|p| p.custom.as_deref())
    }

    /// The option indices picked for question `index`, in the order picked.
    #[cfg(test)]
    pub(crate) fn picked(&self, index: usize) -> &[usize] {
        self.picks.get(index).map_or(&[], |p| &p.picked)
    }

    fn multi_tab(&self) -> bool {
        self.questions().len() > 1
    }

    fn any_answered(&self) -> bool {
        self.picks.iter().any(Pick::is_answered)
    }

    /// Handles one key. Only presses count; releases and repeats of Windows consoles are ignored.
    pub(crate) fn handle(&mut self, key: KeyEvent) -> Effect {
        if key.kind == KeyEventKind::Release {
            return Effect::Ignored;
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl && matches!(key.code, KeyCode::Char('c' | 'C')) {
            return Effect::Done(MenuOutcome::Interrupted);
        }
        let had_notice = self.notice.take();
        if had_notice == Some(Notice::ConfirmDecline) && key.code == KeyCode::Esc && self.editor.is_none() {
            return Effect::Done(MenuOutcome::Declined);
        }
        let effect = if self.editor.is_some() { self.edit(key, ctrl) } else { self.navigate(key, ctrl) };
        if effect == Effect::Ignored && had_notice.is_some() { Effect::Redraw } else { effect }
    }

    fn navigate(&mut self, key: KeyEvent, ctrl: bool) -> Effect {
        let multi_select = !self.in_review() && self.questions()[self.tab].multi_select();
        match key.code {
            KeyCode::Char('d' | 'D') if ctrl => Effect::Done(MenuOutcome::Declined),
            KeyCode::Esc => {
                if self.any_answered() {
                    self.notice = Some(Notice::ConfirmDecline);
                    Effect::Redraw
                } else {
                    Effect::Done(MenuOutcome::Declined)
                }
            }
            KeyCode::Char('p' | 'P') if ctrl => self.move_by(-1),
            KeyCode::Char('n' | 'N') if ctrl => self.move_by(1),
            _ if ctrl => Effect::Ignored,
            KeyCode::Up | KeyCode::Char('k') => self.move_by(-1),
            KeyCode::Down | KeyCode::Char('j') => self.move_by(1),
            KeyCode::Home | KeyCode::Char('g') => self.move_to(0),
            KeyCode::End | KeyCode::Char('G') => self.move_to(usize::MAX),
            KeyCode::Right | KeyCode::Tab | KeyCode::Char('l') => self.switch_tab(1),
            KeyCode::Left | KeyCode::BackTab | KeyCode::Char('h') => self.switch_tab(-1),
            KeyCode::Char('?') => {
                self.help = !self.help;
                Effect::Redraw
            }
            KeyCode::Enter if self.in_review() => self.submit(),
            _ if self.in_review() => Effect::Ignored,
            KeyCode::Enter | KeyCode::Char(' ' | '1') if self.typed_tab() => {
                self.open_editor();
                Effect::Redraw
            }
            _ if self.typed_tab() => Effect::Ignored,
            KeyCode::Char(c @ '1'..='9') => {
                let index = (c as usize) - ('1' as usize);
                let options = self.questions()[self.tab].options().len();
                if index > options || (index == options && self.other_row().is_none()) {
                    return Effect::Ignored;
                }
                self.rows[self.tab] = index;
                if index == options {
                    self.open_editor();
                    Effect::Redraw
                } else if multi_select {
                    self.toggle(index);
                    Effect::Redraw
                } else {
                    self.choose(index);
                    self.advance()
                }
            }
            KeyCode::Char(' ') => {
                let row = self.row();
                if Some(row) == self.other_row() {
                    self.open_editor();
                } else if multi_select {
                    self.toggle(row);
                } else {
                    self.choose(row);
                }
                Effect::Redraw
            }
            KeyCode::Enter => {
                let row = self.row();
                if Some(row) == self.other_row() {
                    self.open_editor();
                    Effect::Redraw
                } else if multi_select {
                    if self.picks[self.tab].is_answered() {
                        self.advance()
                    } else if let Some(defaults) = self.declared_defaults() {
                        // Enter on an untouched question takes what the model marked `default`.
                        self.picks[self.tab] = Pick { picked: defaults, ..Pick::default() };
                        self.advance()
                    } else {
                        self.notice = Some(Notice::PickOne);
                        Effect::Redraw
                    }
                } else {
                    self.choose(row);
                    self.advance()
                }
            }
            KeyCode::Char('a') if multi_select => {
                let pick = &mut self.picks[self.tab];
                pick.custom = None;
                for i in 0..self.request.questions().as_slice()[self.tab].options().len() {
                    if !pick.picked.contains(&i) {
                        pick.picked.push(i);
                    }
                }
                Effect::Redraw
            }
            KeyCode::Char('n') if multi_select => {
                self.picks[self.tab] = Pick::default();
                Effect::Redraw
            }
            _ => Effect::Ignored,
        }
    }

    fn row_count(&self) -> usize {
        match self.questions().get(self.tab) {
            None => 0,
            Some(q) if is_typed(q) => 1,
            Some(q) => q.options().len() + usize::from(q.allow_other()),
        }
    }

    /// The option indices the model marked `default` on the current question, if any.
    fn declared_defaults(&self) -> Option<Vec<usize>> {
        let question = self.questions().get(self.tab)?;
        let picked: Vec<usize> =
            (0..question.options().len()).filter(|&i| question.options()[i].is_default()).collect();
        (!picked.is_empty()).then_some(picked)
    }

    fn move_by(&mut self, delta: isize) -> Effect {
        let count = self.row_count();
        if count == 0 {
            return Effect::Ignored;
        }
        let row = self.row();
        let next = if delta < 0 { row.checked_sub(1).unwrap_or(count - 1) } else { (row + 1) % count };
        self.rows[self.tab] = next;
        Effect::Redraw
    }

    fn move_to(&mut self, row: usize) -> Effect {
        let count = self.row_count();
        if count == 0 {
            return Effect::Ignored;
        }
        let row = row.min(count - 1);
        if self.rows[self.tab] == row {
            return Effect::Ignored;
        }
        self.rows[self.tab] = row;
        Effect::Redraw
    }

    fn switch_tab(&mut self, delta: isize) -> Effect {
        if !self.multi_tab() {
            return Effect::Ignored;
        }
        let tabs = self.questions().len() + 1;
        self.tab =
            if delta < 0 { self.tab.checked_sub(1).unwrap_or(tabs - 1) } else { (self.tab + 1) % tabs };
        self.enter_tab();
        Effect::Redraw
    }

    fn choose(&mut self, index: usize) {
        self.picks[self.tab] = Pick { picked: vec![index], ..Pick::default() };
    }

    fn toggle(&mut self, index: usize) {
        let pick = &mut self.picks[self.tab];
        pick.custom = None;
        if let Some(at) = pick.picked.iter().position(|&i| i == index) {
            pick.picked.remove(at);
        } else {
            pick.picked.push(index);
        }
    }

    fn open_editor(&mut self) {
        let masked = self.questions().get(self.tab).is_some_and(|q| q.kind() == QuestionKind::Secret);
        self.editor = Some(if masked {
            // Room for the longest value at four bytes a character: typing never reallocates, so
            // no copy of a partial secret is left behind in freed memory. A secret is never shown
            // again: editing starts empty, and saving replaces the value.
            Editor::new(String::with_capacity(self.max_custom_chars.saturating_mul(4)), true)
        } else {
            Editor::new(self.picks[self.tab].custom.clone().unwrap_or_default(), false)
        });
    }

    /// After answering the current question: finish when it is the only one, else go to the next
    /// tab (the review step after the last question).
    fn advance(&mut self) -> Effect {
        if !self.multi_tab() {
            return self.submit();
        }
        self.tab += 1;
        self.enter_tab();
        Effect::Redraw
    }

    fn submit(&mut self) -> Effect {
        if let Some(first) = self.picks.iter().position(|p| !p.is_answered()) {
            self.tab = first;
            self.notice = Some(Notice::Unanswered);
            self.enter_tab();
            return Effect::Redraw;
        }
        // A secret question is alone in its call: its value leaves the menu with its reference.
        if let [question] = self.questions()
            && question.kind() == QuestionKind::Secret
        {
            let answer = self.picks[0].answer(question);
            if let Some(value) = self.picks[0].secret.take() {
                return Effect::Done(MenuOutcome::Secret(answer, value));
            }
        }
        let answers = self.questions().iter().zip(&self.picks).map(|(q, pick)| pick.answer(q)).collect();
        Effect::Done(MenuOutcome::Answered(answers))
    }

    /// Inserts pasted text into the editor, if it is open (paste elsewhere is ignored).
    pub(crate) fn paste(&mut self, text: &str) -> Effect {
        if self.editor.is_none() {
            return Effect::Ignored;
        }
        self.notice = None;
        if self.editor.as_ref().is_some_and(|e| e.masked) {
            // A secret keeps its exact characters or is refused: cleaning it would send a value
            // the person never typed. One line ending at the very end (a copied whole line) is
            // no part of it.
            let value = text.strip_suffix('\n').map_or(text, |t| t.strip_suffix('\r').unwrap_or(t));
            if value.chars().any(|c| !crate::text::allowed_in_answer(c)) {
                self.notice = Some(Notice::SecretPasteRefused);
                return Effect::Redraw;
            }
            self.insert(value);
            return Effect::Redraw;
        }
        self.insert(&clean_answer_text(text));
        Effect::Redraw
    }

    fn insert(&mut self, text: &str) {
        let cap = self.max_custom_chars;
        let Some(editor) = self.editor.as_mut() else { return };
        let room = cap.saturating_sub(editor.text.chars().count());
        let end = text.char_indices().nth(room).map_or(text.len(), |(i, _)| i);
        editor.text.insert_str(editor.cursor, &text[..end]);
        editor.cursor += end;
        editor.snap();
        if end < text.len() {
            self.notice = Some(Notice::TooLong);
        }
    }

    fn edit(&mut self, key: KeyEvent, ctrl: bool) -> Effect {
        let typed = self.typed_tab();
        let tabs = self.multi_tab();
        let Some(editor) = self.editor.as_mut() else { return Effect::Ignored };
        match key.code {
            // A text or secret question is its editor: Esc there is Esc on the question.
            KeyCode::Esc if typed => {
                self.editor = None;
                return self.navigate(key, ctrl);
            }
            KeyCode::Esc => self.editor = None,
            KeyCode::Enter if editor.masked => {
                if editor.text.is_empty() {
                    self.notice = Some(Notice::TypeSomething);
                    return Effect::Redraw;
                }
                // Moved, not copied, into the value; the emptied editor is dropped (and zeroed).
                let value = SecretValue::new(std::mem::take(&mut editor.text));
                self.picks[self.tab] = Pick { secret: Some(value), ..Pick::default() };
                self.editor = None;
                return self.advance();
            }
            KeyCode::Enter => {
                let text = editor.text.trim();
                if text.is_empty() {
                    self.notice = Some(Notice::TypeSomething);
                    return Effect::Redraw;
                }
                let text = text.to_owned();
                self.picks[self.tab] = Pick { custom: Some(text), ..Pick::default() };
                self.editor = None;
                return self.advance();
            }
            // Between questions from a text question's editor: a non-blank draft is kept as its
            // answer, a blank one leaves the answer as it was.
            KeyCode::Tab | KeyCode::BackTab if typed && !editor.masked && tabs => {
                let text = editor.text.trim().to_owned();
                if !text.is_empty() {
                    self.picks[self.tab] = Pick { custom: Some(text), ..Pick::default() };
                }
                self.editor = None;
                return self.switch_tab(if key.code == KeyCode::Tab { 1 } else { -1 });
            }
            KeyCode::Left => editor.cursor = editor.prev(),
            KeyCode::Right => editor.cursor = editor.next(),
            KeyCode::Char('b') if ctrl => editor.cursor = editor.prev(),
            KeyCode::Char('f') if ctrl => editor.cursor = editor.next(),
            KeyCode::Home => editor.cursor = 0,
            KeyCode::Char('a') if ctrl => editor.cursor = 0,
            KeyCode::End => editor.cursor = editor.text.len(),
            KeyCode::Char('e') if ctrl => editor.cursor = editor.text.len(),
            KeyCode::Backspace | KeyCode::Char('h') if key.code == KeyCode::Backspace || ctrl => {
                if editor.cursor == 0 {
                    return Effect::Ignored;
                }
                let start = editor.prev();
                editor.text.replace_range(start..editor.cursor, "");
                editor.cursor = start;
            }
            KeyCode::Delete => {
                if editor.cursor == editor.text.len() {
                    return Effect::Ignored;
                }
                let end = editor.next();
                editor.text.replace_range(editor.cursor..end, "");
            }
            KeyCode::Char('u') if ctrl => {
                editor.text.replace_range(..editor.cursor, "");
                editor.cursor = 0;
            }
            KeyCode::Char('k') if ctrl => editor.text.truncate(editor.cursor),
            KeyCode::Char('w') if ctrl => {
                let before = &editor.text[..editor.cursor];
                let word_end = before.trim_end_matches(' ').len();
                let start = before[..word_end].rfind(' ').map_or(0, |i| i + 1);
                editor.text.replace_range(start..editor.cursor, "");
                editor.cursor = start;
            }
            KeyCode::Char('d') if ctrl => {}
            KeyCode::Char(_) if ctrl => return Effect::Ignored,
            KeyCode::Char(c) => {
                let mut buf = [0; 4];
                self.insert(&clean_answer_text(c.encode_utf8(&mut buf)));
            }
            _ => return Effect::Ignored,
        }
        Effect::Redraw
    }
}

#[cfg(test)]
mod tests;
