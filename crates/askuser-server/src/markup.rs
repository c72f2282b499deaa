//! Question text as a model writes it: `code` spans and fenced code blocks, and nothing else.
//!
//! A strict subset of Markdown: a run of backticks closed by a run of the same length is a code
//! span; a line opening with three or more backticks, closed by a line of as many backticks, is a
//! code block. Everything else, unclosed backticks included, stays literal text. The pieces are
//! text that askama escapes where they are written: no markup of the model's reaches the page.

/// One piece of a text: plain text, a code span, or a code block.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Piece {
    Text(String),
    Code(String),
    Block(String),
}

/// The pieces of `text`, in order; joined, their texts are `text` without the backticks.
pub(crate) fn pieces(text: &str) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut plain_from = 0;
    let mut line_start = 0;
    while line_start < text.len() {
        let line_end = text[line_start..].find('\n').map_or(text.len(), |at| line_start + at);
        if let Some((content, after)) = fenced_block(text, line_start, line_end) {
            // The line breaks around a block are the block's own edges, not text.
            let before = &text[plain_from..line_start];
            spans(before.strip_suffix('\n').unwrap_or(before), &mut out);
            out.push(Piece::Block(content.to_owned()));
            plain_from = after;
            line_start = after;
        } else {
            line_start = line_end + 1;
        }
    }
    spans(&text[plain_from.min(text.len())..], &mut out);
    out
}

/// The content of the block whose opening fence is the line `text[start..end]`, and where the
/// text after its closing fence starts; `None` when that line is no fence or nothing closes it.
fn fenced_block(text: &str, start: usize, end: usize) -> Option<(&str, usize)> {
    let line = &text[start..end];
    let fence = line.len() - line.trim_start_matches('`').len();
    // An info string (`rust`) may follow; a backtick after the fence makes it a code span.
    if fence < 3 || line[fence..].contains('`') {
        return None;
    }
    let content_start = (end + 1).min(text.len());
    let mut at = content_start;
    while at < text.len() {
        let close_end = text[at..].find('\n').map_or(text.len(), |n| at + n);
        let close = text[at..close_end].trim_end();
        if close.len() >= fence && close.bytes().all(|b| b == b'`') {
            let content = &text[content_start..at];
            return Some((content.strip_suffix('\n').unwrap_or(content), (close_end + 1).min(text.len())));
        }
        at = close_end + 1;
    }
    None
}

/// Splits `text` into plain text and code spans, appended to `out`.
fn spans(text: &str, out: &mut Vec<Piece>) {
    let mut plain_from = 0;
    let mut at = 0;
    while let Some(offset) = text[at..].find('`') {
        let open = at + offset;
        let run = backtick_run(&text[open..]);
        let content_start = open + run;
        match closing_run(&text[content_start..], run) {
            Some(length) => {
                push_text(&text[plain_from..open], out);
                out.push(Piece::Code(
                    trim_one_space(&text[content_start..content_start + length]).to_owned(),
                ));
                at = content_start + length + run;
                plain_from = at;
            }
            // An unclosed run is literal, and so is everything it would have opened.
            None => at = content_start,
        }
    }
    push_text(&text[plain_from..], out);
}

fn push_text(text: &str, out: &mut Vec<Piece>) {
    if !text.is_empty() {
        out.push(Piece::Text(text.to_owned()));
    }
}

fn backtick_run(text: &str) -> usize {
    text.len() - text.trim_start_matches('`').len()
}

/// Where in `text` the first run of exactly `run` backticks starts.
fn closing_run(text: &str, run: usize) -> Option<usize> {
    let mut at = 0;
    while let Some(offset) = text[at..].find('`') {
        let start = at + offset;
        let length = backtick_run(&text[start..]);
        if length == run {
            return Some(start);
        }
        at = start + length;
    }
    None
}

/// The rule of `CommonMark`: one space on each side is padding (so that `` ` `x` ` `` can show a
/// backtick), unless the span is nothing but spaces.
fn trim_one_space(code: &str) -> &str {
    match code.strip_prefix(' ').and_then(|c| c.strip_suffix(' ')) {
        Some(inner) if !code.bytes().all(|b| b == b' ') => inner,
        _ => code,
    }
}

#[cfg(test)]
mod tests {
    use super::Piece::{Block, Code, Text};
    use super::*;

    #[track_caller]
    fn check(input: &str, expected: &[Piece]) {
        assert_eq!(pieces(input), expected, "{input:?}");
    }

    fn t(s: &str) -> Piece {
        Text(s.to_owned())
    }
    fn c(s: &str) -> Piece {
        Code(s.to_owned())
    }
    fn b(s: &str) -> Piece {
        Block(s.to_owned())
    }

    #[test]
    fn code_spans_and_blocks_and_nothing_else() {
        check("", &[]);
        check("plain *not bold* <b>x</b>", &[t("plain *not bold* <b>x</b>")]);
        check("run `cargo test` now", &[t("run "), c("cargo test"), t(" now")]);
        check("``a ` b``", &[c("a ` b")]);
        check("` `` `", &[c("``")]);
        check("`  `", &[c("  ")]);
        check("unclosed ` stays", &[t("unclosed ` stays")]);
        check("`a`` b`", &[c("a`` b")]);
        check("``x` `y``", &[c("x` `y")]);
        check("`<script>alert(1)</script>`", &[c("<script>alert(1)</script>")]);
        check("Apply?\n```diff\n- a\n+ b\n```\nOK?", &[t("Apply?"), b("- a\n+ b"), t("OK?")]);
        check("```\n\n```", &[b("")]);
        check("```\nopen only", &[t("```\nopen only")]);
        check("````\nx\n```\n````", &[b("x\n```")]);
        check("```js\n<img onerror=x>\n```", &[b("<img onerror=x>")]);
        check("```inline``` not a fence", &[c("inline"), t(" not a fence")]);
        check("a\n```\n`x`\n```  \nb `y`", &[t("a"), b("`x`"), t("b "), c("y")]);
        check("text ```\nx\n``` mid-line", &[t("text "), c("\nx\n"), t(" mid-line")]);
    }
}
