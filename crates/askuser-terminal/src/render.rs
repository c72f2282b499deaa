//! Layout (menu state → lines that fit the terminal) and painting (lines → bytes for any `Write`).
//!
//! The block is drawn inline, below whatever the terminal already shows, with relative cursor
//! moves only: the cursor position is never queried, because that query races the event reader.

use std::fmt::Write as _;
use std::io::{self, Write};

use askuser_core::{Question, QuestionKind};

use crate::menu::{Menu, MenuOutcome, Pick, is_typed};
use unicode_segmentation::UnicodeSegmentation;

use crate::text::{Block, blocks, code_delimiters, sanitize, truncate, width, wrap, wrap_code};

/// How the menu looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Look {
    /// Colour codes allowed (off under `NO_COLOR`).
    pub(crate) color: bool,
    /// Unicode symbols allowed (off on the Linux console or a non-UTF-8 locale).
    pub(crate) unicode: bool,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Style {
    bold: bool,
    dim: bool,
    reverse: bool,
    /// An ANSI foreground colour number (30–37), dropped without colour.
    fg: Option<u8>,
}

const PLAIN: Style = Style { bold: false, dim: false, reverse: false, fg: None };
const BOLD: Style = Style { bold: true, ..PLAIN };
const DIM: Style = Style { dim: true, ..PLAIN };
const ACCENT: u8 = 36;
const WARN: u8 = 33;
const GOOD: u8 = 32;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Line(Vec<(String, Style)>);

impl Line {
    fn new() -> Self {
        Self(Vec::new())
    }

    fn of(text: impl Into<String>, style: Style) -> Self {
        Self(vec![(text.into(), style)])
    }

    fn push(&mut self, text: impl Into<String>, style: Style) -> &mut Self {
        self.0.push((text.into(), style));
        self
    }

    fn width(&self) -> usize {
        self.0.iter().map(|(t, _)| width(t)).sum()
    }

    /// The line cut to at most `max` columns (the last piece kept ends in `…`).
    fn cut(self, max: usize) -> Self {
        if self.width() <= max {
            return self;
        }
        let mut out = Self::new();
        for (text, style) in self.0 {
            let room = max.saturating_sub(out.width());
            if room == 0 {
                break;
            }
            let piece = truncate(&text, room).into_owned();
            let cut = piece.len() < text.len();
            out.push(piece, style);
            if cut {
                break;
            }
        }
        out
    }

    fn encode(&self, look: Look) -> String {
        let mut out = String::new();
        for (text, style) in &self.0 {
            let mut codes = Vec::new();
            if style.bold {
                codes.push(1);
            }
            if style.dim {
                codes.push(2);
            }
            if style.reverse {
                codes.push(7);
            }
            if let (true, Some(fg)) = (look.color, style.fg) {
                codes.push(fg);
            }
            if codes.is_empty() {
                out.push_str(text);
            } else {
                out.push_str("\x1b[");
                for (i, code) in codes.iter().enumerate() {
                    if i > 0 {
                        out.push(';');
                    }
                    let _ = write!(out, "{code}");
                }
                out.push('m');
                out.push_str(text);
                out.push_str("\x1b[0m");
            }
        }
        out
    }
}

/// One laid-out frame: lines that each fit the width, and where the hardware cursor goes (on the
/// highlighted row, so screen readers follow it).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Frame {
    lines: Vec<Line>,
    cursor: (usize, usize),
}

impl Frame {
    #[cfg(test)]
    pub(crate) fn height(&self) -> usize {
        self.lines.len()
    }

    #[cfg(test)]
    pub(crate) fn text(&self) -> Vec<String> {
        self.lines.iter().map(|l| l.0.iter().map(|(t, _)| t.as_str()).collect()).collect()
    }
}

struct Symbols {
    pointer: &'static str,
    done: &'static str,
    todo: &'static str,
    up: &'static str,
    down: &'static str,
    cross: &'static str,
    arrow: &'static str,
    dot: &'static str,
}

const UNICODE: Symbols =
    Symbols {
        pointer: "❯", done: "✔", todo: "◻", up: "↑", down: "↓", cross: "✖", arrow: "→", dot: "·"
    };
const ASCII: Symbols =
    Symbols { pointer: ">", done: "*", todo: "-", up: "^", down: "v", cross: "x", arrow: "->", dot: "-" };

fn symbols(look: Look) -> &'static Symbols {
    if look.unicode { &UNICODE } else { &ASCII }
}

/// Text of one laid-out block: a group of lines that windowing keeps or drops whole.
struct Entry {
    lines: Vec<Line>,
    /// Which line of the entry holds the cursor, and its column.
    cursor: Option<(usize, usize)>,
}

/// Lays `menu` out for a terminal of `cols` × `rows`: at most `cols − 1` columns (no deferred
/// wrap in the last column) and `rows − 1` lines (relative moves cannot reach scrolled-off lines).
pub(crate) fn layout(menu: &Menu, cols: u16, rows: u16, look: Look) -> Frame {
    let w = usize::from(cols).saturating_sub(1).max(4);
    let h = usize::from(rows).saturating_sub(1).max(3);
    if menu.in_review() { layout_review(menu, w, h, look) } else { layout_question(menu, w, h, look) }
}

/// The title line, ending in the time left when the request has a deadline: the countdown is
/// kept whole, the rest cut to make room for it.
fn title(menu: &Menu, w: usize, look: Look) -> Line {
    let line = title_text(menu, w, look);
    let Some(countdown) = menu.countdown else { return line };
    let tail = format!(" {} {} left", symbols(look).dot, time_left(countdown.left));
    let style = if countdown.late { Style { bold: true, fg: Some(WARN), ..PLAIN } } else { DIM };
    let room = w.saturating_sub(width(&tail));
    let mut line = line.cut(room);
    line.push(tail, style);
    line
}

/// `left` as a countdown shows it: `1 h 05 min`, `4:05`, `42 s`.
pub(crate) fn time_left(left: std::time::Duration) -> String {
    let s = left.as_secs();
    match s {
        3600.. => format!("{} h {:02} min", s / 3600, s % 3600 / 60),
        60.. => format!("{}:{:02}", s / 60, s % 60),
        _ => format!("{s} s"),
    }
}

fn title_text(menu: &Menu, w: usize, look: Look) -> Line {
    let sym = symbols(look);
    let questions = menu.questions();
    // Who asks, cut short: the question's own header matters more.
    let mut line = match menu.asker() {
        Some(asker) => Line::of(format!(" {} asks", truncate(&sanitize(asker, false), (w / 3).max(8))), DIM),
        None => Line::of(" Assistant asks", DIM),
    };
    if questions.len() == 1 {
        if w < 39 {
            return Line::of(format!(" {}", truncate(&sanitize(questions[0].header(), false), w - 1)), BOLD);
        }
        line.push(format!(" {} ", sym.dot), DIM);
        line.push(truncate(&sanitize(questions[0].header(), false), w.saturating_sub(18)), BOLD);
        return line;
    }
    let mut full = line.clone();
    full.push("  ", PLAIN);
    for (i, q) in questions.iter().enumerate() {
        let mark = if menu.picks()[i].is_answered() { sym.done } else { sym.todo };
        let style = if i == menu.tab() { Style { reverse: true, bold: true, ..PLAIN } } else { PLAIN };
        full.push(format!("{mark} {}", sanitize(q.header(), false)), style);
        full.push(" ", PLAIN);
    }
    let style = if menu.in_review() { Style { reverse: true, bold: true, ..PLAIN } } else { PLAIN };
    full.push(format!("{} Submit", sym.done), style);
    if full.width() <= w {
        return full;
    }
    // Narrow: the tab's own name matters more than who asks.
    if w < 39 {
        line = Line::new();
    } else {
        line.push(format!(" {}", sym.dot), DIM);
    }
    let current = if menu.in_review() {
        " Submit".to_owned()
    } else {
        format!(
            " Q{}/{} {}",
            menu.tab() + 1,
            questions.len(),
            sanitize(questions[menu.tab()].header(), false)
        )
    };
    let room = w.saturating_sub(line.width());
    line.push(truncate(&current, room), BOLD);
    line
}

/// How code is set apart from the question's text: not bold, in the accent colour.
const CODE: Style = Style { fg: Some(ACCENT), ..PLAIN };

/// A question's sanitised text laid out in `w` columns: prose bold, `code` spans in [`CODE`],
/// fenced blocks behind a gutter, unwrapped by words and their fences left out (see
/// [`crate::text::blocks`]).
fn question_text(text: &str, w: usize, look: Look) -> Vec<Line> {
    let gutter = if look.unicode { " │ " } else { " | " };
    let mut lines = Vec::new();
    for block in blocks(text) {
        match block {
            Block::Prose(prose) => {
                for source in prose {
                    let mut delimiters = code_delimiters(source).into_iter();
                    let mut in_code = false;
                    for wrapped in wrap(source, w) {
                        let mut line = Line::of(" ", PLAIN);
                        let mut piece = String::new();
                        for c in wrapped.chars() {
                            let delimiter = c == '`' && delimiters.next().unwrap_or(false);
                            if delimiter && !in_code && !piece.is_empty() {
                                line.push(std::mem::take(&mut piece), BOLD);
                            }
                            piece.push(c);
                            if delimiter && in_code {
                                line.push(std::mem::take(&mut piece), CODE);
                            }
                            in_code ^= delimiter;
                        }
                        if !piece.is_empty() {
                            line.push(piece, if in_code { CODE } else { BOLD });
                        }
                        lines.push(line);
                    }
                }
            }
            Block::Code(code) => {
                for source in code {
                    for wrapped in wrap_code(source, w.saturating_sub(width(gutter) - 1)) {
                        let mut line = Line::of(gutter, DIM);
                        line.push(wrapped, CODE);
                        lines.push(line);
                    }
                }
            }
        }
    }
    lines
}

/// Footer text in the look's symbols.
fn hint(text: &str, look: Look) -> String {
    if look.unicode { text.to_owned() } else { text.replace('·', "-") }
}

fn footer(menu: &Menu, question: &Question, w: usize, look: Look) -> Vec<Line> {
    let sym = symbols(look);
    if let Some(notice) = menu.notice {
        return wrap(notice.text(), w.saturating_sub(1))
            .into_iter()
            .map(|t| Line::of(format!(" {t}"), Style { bold: true, fg: Some(WARN), ..PLAIN }))
            .collect();
    }
    if menu.help {
        let mut help = vec![
            format!("{}{} or j/k move, g/G first/last", sym.up, sym.down),
            if question.multi_select() {
                "1-9 or space toggle, a all, n none, enter confirm".to_owned()
            } else {
                "1-9 pick, space select, enter pick and go on".to_owned()
            },
            "Other: type, enter to save, esc to go back".to_owned(),
        ];
        if menu.questions().len() > 1 {
            help.push("tab or left/right: other questions and Submit".to_owned());
        }
        help.push("esc decline · ctrl-c interrupt · ? close help".to_owned());
        return help
            .iter()
            .flat_map(|t| wrap(&hint(t, look), w.saturating_sub(1)))
            .map(|t| Line::of(format!(" {t}"), DIM))
            .collect();
    }
    if menu.editing() && is_typed(question) {
        let text = if menu.questions().len() > 1 && question.kind() == QuestionKind::Text {
            " enter save · tab next · esc decline"
        } else {
            " enter save · esc decline"
        };
        return vec![Line::of(truncate(&hint(text, look), w).into_owned(), DIM)];
    }
    if is_typed(question) {
        let line = if menu.questions().len() > 1 {
            " enter type · tab next · esc decline · ? help"
        } else {
            " enter type · esc decline · ? help"
        };
        return vec![Line::of(truncate(&hint(line, look), w).into_owned(), DIM)];
    }
    if menu.editing() {
        // The ticks are shown cleared while editing: saving replaces them, and what is on screen
        // is what is sent.
        let text = if menu.picks()[menu.tab()].picked.is_empty() {
            " enter save · esc back"
        } else {
            " enter save, replacing your picks · esc back to them"
        };
        return vec![Line::of(truncate(&hint(text, look), w).into_owned(), DIM)];
    }
    let n = question.options().len() + usize::from(question.allow_other());
    let mut line = format!(
        " {}{} move · 1-{n} {}",
        sym.up,
        sym.down,
        if question.multi_select() { "toggle" } else { "pick" }
    );
    if question.multi_select() {
        line.push_str(" · enter confirm");
    }
    if menu.questions().len() > 1 {
        line.push_str(" · tab next");
    }
    line.push_str(" · esc decline · ? help");
    if width(&line) > w {
        " ? help · esc decline".clone_into(&mut line);
    }
    vec![Line::of(truncate(&hint(&line, look), w).into_owned(), DIM)]
}

/// The entry of option `index` (or of "Other…" when `index` is the option count).
fn option_entry(
    menu: &Menu,
    question: &Question,
    index: usize,
    w: usize,
    look: Look,
    all_descriptions: bool,
) -> Entry {
    let narrow = w < 39;
    let sym = symbols(look);
    let pick = &menu.picks()[menu.tab()];
    let highlighted = menu.row() == index;
    let pointer = if highlighted { sym.pointer } else { " " };
    let mut prefix = format!(" {pointer} {}. ", index + 1);
    let other = index == question.options().len();
    // An open "Other…" editor replaces the picks when saved: they show as cleared meanwhile.
    let picked = pick.picked.contains(&index) && menu.editor.is_none();
    if question.multi_select() && !other {
        prefix.push_str(if picked { "[x] " } else { "[ ] " });
    }
    let indent = width(&prefix);
    let room = w.saturating_sub(indent).max(1);
    let label_style = if highlighted {
        Style { bold: true, reverse: !look.color, fg: Some(ACCENT), ..PLAIN }
    } else {
        PLAIN
    };
    let pointer_style = Style { fg: Some(ACCENT), bold: true, ..PLAIN };
    let mut lines = Vec::new();
    let mut cursor = Some((0, indent));
    if other {
        // The same row serves "Other…" and a text or secret question's answer.
        let (name, placeholder) = match question.kind() {
            QuestionKind::Text => ("Answer: ", "(type your answer)"),
            QuestionKind::Secret => ("Secret: ", "(type the secret; it is not shown)"),
            _ => ("Other: ", "(type your answer)"),
        };
        let name_width = width(name);
        let mut first = Line::new();
        first.push(prefix.clone(), if highlighted { pointer_style } else { PLAIN });
        if let Some(editor) = &menu.editor {
            first.push(name, label_style);
            let (shown, col) = editor_cells(editor, room.saturating_sub(name_width).max(1), look);
            first.push(shown, PLAIN);
            cursor = Some((0, indent + name_width + col));
        } else if let Some(custom) = &pick.custom {
            first.push(name, label_style);
            first.push(
                truncate(&sanitize(custom, false), room.saturating_sub(name_width + 2)).into_owned(),
                PLAIN,
            );
            first.push(format!(" {}", sym.done), Style { fg: Some(GOOD), ..PLAIN });
        } else {
            let text = if is_typed(question) {
                format!("{name}{placeholder}")
            } else if look.unicode {
                "Other… (type your answer)".to_owned()
            } else {
                "Other... (type your answer)".to_owned()
            };
            first.push(truncate(&text, room).into_owned(), if highlighted { label_style } else { DIM });
        }
        lines.push(first);
        return Entry { lines, cursor: highlighted.then_some(cursor).flatten() };
    }
    let option = &question.options()[index];
    let mut label = sanitize(option.label(), false).into_owned();
    // Look-alike letters of two scripts in one word (`Yеѕ` beside `Yes`): marked, so two options
    // that read the same are told apart.
    if askuser_core::mixed_scripts(option.label()) {
        label.push_str(" ⟨mixed scripts⟩");
    }
    if option.is_default() {
        label.push_str(" (default)");
    }
    if !question.multi_select() && picked {
        label.push(' ');
        label.push_str(sym.done);
    }
    let mut label_lines = wrap(&label, room);
    if narrow && label_lines.len() > 2 {
        label_lines.truncate(2);
        let last = label_lines.pop().unwrap_or_default();
        label_lines.push(truncate(&format!("{last} …"), room).into_owned());
    }
    for (i, text) in label_lines.into_iter().enumerate() {
        let mut line = Line::new();
        if i == 0 {
            line.push(prefix.clone(), if highlighted { pointer_style } else { PLAIN });
        } else {
            line.push(" ".repeat(indent), PLAIN);
        }
        line.push(text, label_style);
        lines.push(line);
    }
    let show_description = highlighted || all_descriptions;
    if let (true, Some(description)) =
        (show_description, option.description().filter(|d| !d.trim().is_empty()))
    {
        for text in wrap(&sanitize(description, true), room) {
            let mut line = Line::of(" ".repeat(indent), PLAIN);
            line.push(text, DIM);
            lines.push(line);
        }
    }
    if !highlighted {
        cursor = None;
    }
    Entry { lines, cursor }
}

/// What an open editor shows in `room` columns, and the cursor's column: its text, or for a
/// secret one mask symbol a character and nothing else (the value is never drawn).
fn editor_cells(editor: &crate::menu::Editor, room: usize, look: Look) -> (String, usize) {
    if !editor.masked {
        return editor_window(&editor.text, editor.cursor, room);
    }
    let room = room.saturating_sub(1).max(1);
    let before = editor.text[..editor.cursor].graphemes(true).count();
    let total = editor.text.graphemes(true).count();
    let mask = if look.unicode { "•" } else { "*" };
    (mask.repeat(total.min(room)), before.min(room))
}

/// The part of the editor text shown in `room` columns, and the cursor's column in it. `cursor` is
/// a byte offset on a grapheme boundary; the window moves by whole graphemes.
fn editor_window(text: &str, cursor: usize, room: usize) -> (String, usize) {
    let shown: Vec<(usize, _)> = text.grapheme_indices(true).map(|(i, g)| (i, sanitize(g, false))).collect();
    let cursor = shown.iter().position(|&(i, _)| i >= cursor).unwrap_or(shown.len());
    let widths: Vec<usize> = shown.iter().map(|(_, g)| width(g)).collect();
    // Keep the cursor visible: walk back from it while the text still fits, leaving a column for it.
    let mut start = cursor;
    let mut used = 1;
    while start > 0 && used + widths[start - 1] <= room {
        start -= 1;
        used += widths[start];
    }
    let mut end = cursor;
    while end < shown.len() && used + widths[end] <= room {
        used += widths[end];
        end += 1;
    }
    let col = widths[start..cursor].iter().sum();
    (shown[start..end].iter().map(|(_, g)| g.as_ref()).collect(), col)
}

fn layout_question(menu: &Menu, w: usize, h: usize, look: Look) -> Frame {
    let sym = symbols(look);
    let question = &menu.questions()[menu.tab()];
    let top = title(menu, w, look);
    let mut text = question_text(&sanitize(question.question(), true), w.saturating_sub(1), look);
    if let Some(purpose) = question.purpose() {
        text.extend(
            wrap(&sanitize(purpose, true), w.saturating_sub(1))
                .into_iter()
                .map(|t| Line::of(format!(" {t}"), DIM)),
        );
    }
    let foot = footer(menu, question, w, look);
    // The option rows, then "Other…" when allowed; a text or secret question has its answer row only.
    let rows = if is_typed(question) {
        0..=0
    } else {
        0..=question.options().len() - usize::from(!question.allow_other())
    };
    let mut entries: Vec<Entry> =
        rows.clone().map(|i| option_entry(menu, question, i, w, look, w >= 59)).collect();
    let row = menu.row();

    let total = |text: &[Line], entries: &[Entry], blanks: usize, foot: usize| {
        1 + text.len() + blanks + foot + entries.iter().map(|e| e.lines.len()).sum::<usize>()
    };
    let mut blanks = 2;
    let mut foot_len = foot.len();
    // Shrink in order: other options' descriptions, blank lines, question text, then window.
    if total(&text, &entries, blanks, foot_len) > h {
        entries = rows.map(|i| option_entry(menu, question, i, w, look, false)).collect();
    }
    if total(&text, &entries, blanks, foot_len) > h {
        blanks = 0;
    }
    let cap_text = |text: &mut Vec<Line>, cap: usize| {
        if text.len() > cap {
            text.truncate(cap);
            if let Some(last) = text.last_mut() {
                let joined: String = last.0.iter().map(|(t, _)| t.as_str()).collect();
                *last = Line::of(truncate(&format!("{joined} …"), w).into_owned(), BOLD);
            }
        }
    };
    if total(&text, &entries, blanks, foot_len) > h {
        cap_text(&mut text, 6);
    }
    if total(&text, &entries, blanks, foot_len) > h && foot_len > 1 {
        foot_len = 1;
    }
    let fixed = |text: &[Line], foot_len: usize| 1 + text.len() + blanks + foot_len;
    if fixed(&text, foot_len) + 3 > h {
        cap_text(&mut text, 2);
    }
    if fixed(&text, foot_len) + 3 > h {
        cap_text(&mut text, 1);
    }
    if fixed(&text, foot_len) + 3 > h {
        foot_len = 0;
    }
    let avail = h.saturating_sub(fixed(&text, foot_len)).max(1);
    let (start, end) = window(&entries, row, avail);
    let markers = usize::from(start > 0) + usize::from(end < entries.len());
    if let Some(entry) = entries.get_mut(row) {
        let room = avail.saturating_sub(markers).max(1);
        entry.lines.truncate(room);
    }

    let mut lines = vec![top];
    lines.extend(text);
    if blanks > 0 {
        lines.push(Line::new());
    }
    if start > 0 {
        lines.push(Line::of(format!("   {} {start} more", sym.up), DIM));
    }
    let mut cursor = (0, 0);
    for entry in entries.iter().take(end).skip(start) {
        if let Some((line, col)) = entry.cursor {
            cursor = (lines.len() + line, col);
        }
        lines.extend(entry.lines.iter().cloned());
    }
    if end < entries.len() {
        lines.push(Line::of(format!("   {} {} more", sym.down, entries.len() - end), DIM));
    }
    if blanks > 1 && foot_len > 0 {
        lines.push(Line::new());
    }
    lines.extend(foot.into_iter().take(foot_len));
    Frame { lines, cursor }
}

/// The range of entries to show so that `row`'s entry is visible within `avail` lines, counting a
/// "more" marker line for each hidden side.
fn window(entries: &[Entry], row: usize, avail: usize) -> (usize, usize) {
    let n = entries.len();
    let height = |i: usize| entries[i].lines.len();
    let markers = |s: usize, e: usize| usize::from(s > 0) + usize::from(e < n);
    let all: usize = (0..n).map(height).sum();
    if all <= avail {
        return (0, n);
    }
    let (mut start, mut end) = (row, row + 1);
    let mut used = height(row);
    loop {
        let mut changed = false;
        if end < n && used + height(end) + markers(start, end + 1) <= avail {
            used += height(end);
            end += 1;
            changed = true;
        }
        if start > 0 && used + height(start - 1) + markers(start - 1, end) <= avail {
            start -= 1;
            used += height(start);
            changed = true;
        }
        if !changed {
            return (start, end);
        }
    }
}

fn answer_text(question: &Question, pick: &Pick) -> Option<String> {
    if pick.secret.is_some() {
        return Some(secret_saved(question));
    }
    if let Some(custom) = &pick.custom {
        return Some(format!("\"{}\"", sanitize(custom, false)));
    }
    if pick.picked.is_empty() {
        return None;
    }
    Some(
        pick.picked
            .iter()
            .map(|&i| sanitize(question.options()[i].label(), false).into_owned())
            .collect::<Vec<_>>()
            .join(", "),
    )
}

fn layout_review(menu: &Menu, w: usize, h: usize, look: Look) -> Frame {
    let sym = symbols(look);
    let heading = truncate(" Review your answers", w).into_owned();
    let mut lines = vec![title(menu, w, look), Line::of(heading, BOLD)];
    let mut items: Vec<Line> = menu
        .questions()
        .iter()
        .zip(menu.picks())
        .map(|(q, pick)| {
            let header = sanitize(q.header(), false);
            if let Some(answer) = answer_text(q, pick) {
                let text = format!(" {} {header} {} {answer}", sym.done, sym.arrow);
                Line::of(truncate(&text, w).into_owned(), PLAIN)
            } else {
                let text = format!(" {} {header} {} not answered", sym.todo, sym.arrow);
                Line::of(truncate(&text, w).into_owned(), Style { fg: Some(WARN), bold: true, ..PLAIN })
            }
        })
        .collect();
    let all_answered = menu.picks().iter().all(Pick::is_answered);
    let hint = if all_answered {
        " enter submit · tab change · esc decline"
    } else {
        " tab answer the rest · esc decline"
    };
    let foot = match menu.notice {
        Some(notice) => Line::of(
            truncate(&format!(" {}", notice.text()), w).into_owned(),
            Style { bold: true, fg: Some(WARN), ..PLAIN },
        ),
        None => Line::of(truncate(&self::hint(hint, look), w).into_owned(), DIM),
    };
    let mut blanks = 2;
    if lines.len() + items.len() + blanks + 1 > h {
        blanks = 0;
    }
    let room = h.saturating_sub(lines.len() + blanks + 1).max(1);
    if items.len() > room {
        let hidden = items.len() - (room - 1);
        items.truncate(room - 1);
        items.push(Line::of(format!("   {} {hidden} more", sym.down), DIM));
    }
    let cursor = (1, 1);
    if blanks > 0 {
        lines.push(Line::new());
    }
    lines.extend(items);
    if blanks > 0 {
        lines.push(Line::new());
    }
    if lines.len() < h {
        lines.push(foot);
    }
    Frame { lines, cursor }
}

/// What a saved secret shows: where it went, never the value nor its length.
fn secret_saved(question: &Question) -> String {
    format!("saved as session:{}", question.secret_name().unwrap_or_default())
}

/// What stays in the scrollback when the menu is gone: one line per answer, or why it ended.
pub(crate) fn summary(menu: &Menu, outcome: Option<&MenuOutcome>, cols: u16, look: Look) -> Frame {
    let sym = symbols(look);
    let w = usize::from(cols).saturating_sub(1).max(4);
    let line = |text: String, style: Style| Line::of(truncate(&text, w).into_owned(), style);
    let lines = match outcome {
        Some(MenuOutcome::Answered(_)) => menu
            .questions()
            .iter()
            .zip(menu.picks())
            .map(|(q, pick)| {
                let answer = answer_text(q, pick).unwrap_or_default();
                let header = sanitize(q.header(), false);
                line(
                    format!("{} {header} {} {answer}", sym.done, sym.arrow),
                    Style { fg: Some(GOOD), ..PLAIN },
                )
            })
            .collect(),
        Some(MenuOutcome::Secret(..)) => menu
            .questions()
            .iter()
            .map(|q| {
                let header = sanitize(q.header(), false);
                line(
                    format!("{} {header} {} {}", sym.done, sym.arrow, secret_saved(q)),
                    Style { fg: Some(GOOD), ..PLAIN },
                )
            })
            .collect(),
        Some(MenuOutcome::Declined) => {
            vec![line(format!("{} Declined the assistant's questions", sym.cross), DIM)]
        }
        Some(MenuOutcome::Interrupted) => vec![line(format!("{} Interrupted", sym.cross), DIM)],
        // The menu never ends with `NoInput` or `Unasked` (only the line protocol does).
        Some(MenuOutcome::NoInput | MenuOutcome::Unasked) | None => {
            return closed(&Closed::Withdrawn, cols, look);
        }
    };
    Frame { lines, cursor: (0, 0) }
}

/// Why a menu was closed from outside (its `ask()` dropped), as far as the answerer was told.
#[derive(Debug, Clone)]
pub(crate) enum Closed {
    /// Nothing said why: the assistant stopped waiting.
    Withdrawn,
    /// The question's deadline had passed.
    TimedOut,
    /// Settled on another surface (`place`): its answers, or `None` for a decline.
    Elsewhere { place: String, answers: Option<Vec<askuser_core::AskUserAnswer>> },
}

/// What stays in the scrollback when a menu was closed from outside: what happened, never a
/// withdrawal above an answer given elsewhere.
pub(crate) fn closed(why: &Closed, cols: u16, look: Look) -> Frame {
    let sym = symbols(look);
    let w = usize::from(cols).saturating_sub(1).max(4);
    let line = |text: String, style: Style| Line::of(truncate(&text, w).into_owned(), style);
    let lines = match why {
        Closed::Withdrawn => vec![line(format!("{} The assistant's question was withdrawn", sym.cross), DIM)],
        Closed::TimedOut => vec![line(format!("{} Nobody answered in time", sym.cross), DIM)],
        Closed::Elsewhere { place, answers: None } => {
            vec![line(format!("{} Declined {}", sym.cross, sanitize(place, false)), DIM)]
        }
        Closed::Elsewhere { place, answers: Some(answers) } => {
            let mut lines = vec![line(format!("{} Answered {}", sym.done, sanitize(place, false)), DIM)];
            lines.extend(answers.iter().map(|a| {
                let answer = a.secret_ref.clone().map_or_else(
                    || match &a.custom_answer {
                        Some(custom) => format!("\"{}\"", sanitize(custom, false)),
                        None => a
                            .selected
                            .iter()
                            .map(|l| sanitize(l, false).into_owned())
                            .collect::<Vec<_>>()
                            .join(", "),
                    },
                    |reference| format!("saved as {reference}"),
                );
                line(
                    format!("{} {} {} {answer}", sym.done, sanitize(&a.header, false), sym.arrow),
                    Style { fg: Some(GOOD), ..PLAIN },
                )
            }));
            lines
        }
    };
    Frame { lines, cursor: (0, 0) }
}

/// Paints frames into a writer, remembering what is on screen to move back over it.
#[derive(Debug, Default)]
pub(crate) struct Painter {
    /// Encoded lines on screen, from the block's first line.
    shown: Vec<String>,
    /// The block line the cursor is on.
    row: usize,
    size: (u16, u16),
}

impl Painter {
    fn up(out: &mut Vec<u8>, n: usize) {
        if n > 0 {
            let _ = write!(out, "\x1b[{n}A");
        }
    }

    fn down(out: &mut Vec<u8>, n: usize) {
        if n > 0 {
            let _ = write!(out, "\x1b[{n}B");
        }
    }

    fn column(out: &mut Vec<u8>, col: usize) {
        out.push(b'\r');
        if col > 0 {
            let _ = write!(out, "\x1b[{col}C");
        }
    }

    /// Draws `frame` over the previous one: only changed lines when the size and height are the
    /// same, else the whole block. Each frame is one synchronized update with line wrap off.
    pub(crate) fn paint(
        &mut self,
        frame: &Frame,
        size: (u16, u16),
        look: Look,
        out: &mut dyn Write,
    ) -> io::Result<()> {
        let encoded: Vec<String> = frame.lines.iter().map(|l| l.encode(look)).collect();
        let mut buf = Vec::with_capacity(256);
        buf.extend_from_slice(b"\x1b[?2026h\x1b[?25l\x1b[?7l");
        let mut row = self.row;
        if !self.shown.is_empty() && self.size == size && self.shown.len() == encoded.len() {
            for (i, line) in encoded.iter().enumerate() {
                if self.shown[i] == *line {
                    continue;
                }
                if i < row {
                    Self::up(&mut buf, row - i);
                } else {
                    Self::down(&mut buf, i - row);
                }
                buf.push(b'\r');
                buf.extend_from_slice(line.as_bytes());
                buf.extend_from_slice(b"\x1b[K");
                row = i;
            }
        } else {
            Self::up(&mut buf, row);
            buf.push(b'\r');
            for (i, line) in encoded.iter().enumerate() {
                if i > 0 {
                    buf.extend_from_slice(b"\r\n");
                }
                buf.extend_from_slice(line.as_bytes());
                buf.extend_from_slice(b"\x1b[K");
            }
            buf.extend_from_slice(b"\x1b[J");
            row = encoded.len().saturating_sub(1);
        }
        let (target, col) = frame.cursor;
        if target < row {
            Self::up(&mut buf, row - target);
        } else {
            Self::down(&mut buf, target - row);
        }
        Self::column(&mut buf, col);
        buf.extend_from_slice(b"\x1b[?7h\x1b[?25h\x1b[?2026l");
        out.write_all(&buf)?;
        out.flush()?;
        self.shown = encoded;
        self.row = target;
        self.size = size;
        Ok(())
    }

    /// Whether a frame is on screen.
    pub(crate) fn is_drawn(&self) -> bool {
        !self.shown.is_empty()
    }

    /// Replaces the block with `frame` and leaves the cursor on a fresh line below it.
    pub(crate) fn finish(&mut self, frame: &Frame, look: Look, out: &mut dyn Write) -> io::Result<()> {
        let mut buf = Vec::new();
        buf.extend_from_slice(b"\x1b[?2026h");
        Self::up(&mut buf, self.row);
        buf.extend_from_slice(b"\r\x1b[J");
        for line in &frame.lines {
            buf.extend_from_slice(line.encode(look).as_bytes());
            buf.extend_from_slice(b"\x1b[K\r\n");
        }
        buf.extend_from_slice(b"\x1b[?2026l");
        out.write_all(&buf)?;
        self.shown.clear();
        self.row = 0;
        out.flush()
    }
}

#[cfg(test)]
mod tests;
