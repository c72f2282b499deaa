//! Making model-authored text inert and measuring it: sanitising, display widths, wrapping.

use std::borrow::Cow;

use unicode_general_category::{GeneralCategory, get_general_category};
use unicode_segmentation::UnicodeSegmentation;
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// Makes `s` safe to draw: nothing in it can move the cursor, change the screen, reorder text or hide.
///
/// - C0 controls, DEL and C1 controls (including the 8-bit CSI U+009B) become visible symbols
///   (`␛` for ESC, `␍` for CR, U+FFFD for C1), so an escape sequence is shown, not obeyed;
/// - a tab becomes a space, and so does a line feed unless `keep_newlines`;
/// - bidi controls, zero-width and other invisible formatting characters (Unicode category Cf,
///   tag characters included) are removed, except the zero-width joiner that emoji need;
/// - line and paragraph separators become spaces;
/// - characters that draw nothing but are no space ([`askuser_core::renders_blank`]: the Hangul
///   fillers, the blank Braille pattern, …) are shown as `⟨U+XXXX⟩`.
///
/// Borrows when there is nothing to change, which is the common case.
#[must_use]
pub(crate) fn sanitize(s: &str, keep_newlines: bool) -> Cow<'_, str> {
    if s.bytes().all(|b| (b' '..0x7f).contains(&b) || (keep_newlines && b == b'\n')) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\n' if keep_newlines => out.push('\n'),
            '\t' | '\n' | '\u{2028}' | '\u{2029}' => out.push(' '),
            '\0'..='\x1f' => out.push(char::from_u32(0x2400 + u32::from(c)).unwrap_or('\u{fffd}')),
            '\x7f' => out.push('\u{2421}'),
            '\u{80}'..='\u{9f}' => out.push('\u{fffd}'),
            ' '..='~' | '\u{200d}' => out.push(c),
            // Drawn as nothing, though no control: shown, so two labels never look the same.
            _ if askuser_core::renders_blank(c) => {
                out.push_str(&askuser_core::show_blank(c.encode_utf8(&mut [0; 4])));
            }
            _ if get_general_category(c) == GeneralCategory::Format => {}
            _ => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Whether `c` may be typed into a custom answer as is (the checker rejects the rest).
pub(crate) fn allowed_in_answer(c: char) -> bool {
    !askuser_core::is_forbidden_char(c, false)
}

/// Typed or pasted text made fit for a custom answer: controls and separators become spaces,
/// invisible formatting is removed.
pub(crate) fn clean_answer_text(s: &str) -> String {
    s.chars()
        .filter_map(|c| {
            if allowed_in_answer(c) {
                Some(c)
            } else if c.is_control() || c.is_whitespace() {
                Some(' ')
            } else {
                None
            }
        })
        .collect()
}

/// The display width of already sanitised text, by the conservative rule: the larger of the
/// string's width and the sum of its characters' widths.
///
/// Terminals disagree about emoji sequences (a ZWJ family is 2 columns to `unicode-width`, 6 to
/// vt100, 8 to avt); over-estimating costs a blank column, under-estimating breaks the layout.
#[must_use]
pub(crate) fn width(s: &str) -> usize {
    if s.is_ascii() {
        return s.len();
    }
    let chars: usize = s.chars().map(|c| c.width().unwrap_or(0)).sum();
    chars.max(s.width())
}

/// Graphemes of `s` with their conservative widths.
fn graphemes(s: &str) -> impl Iterator<Item = (&str, usize)> {
    s.graphemes(true).map(|g| (g, width(g)))
}

/// `s` cut to at most `max` columns, ending in `…` when something was cut. Never splits a grapheme.
#[must_use]
pub(crate) fn truncate(s: &str, max: usize) -> Cow<'_, str> {
    if width(s) <= max {
        return Cow::Borrowed(s);
    }
    let mut out = String::new();
    let mut used = 0;
    for (g, w) in graphemes(s) {
        if used + w + 1 > max {
            break;
        }
        out.push_str(g);
        used += w;
    }
    if max > 0 {
        out.push('…');
    }
    Cow::Owned(out)
}

/// Word-wraps sanitised text into lines of at most `max` columns; `\n` starts a new line.
///
/// Breaks at spaces, and inside a word only when the word alone is wider than a line, never
/// inside a grapheme. An empty text gives one empty line.
#[must_use]
pub(crate) fn wrap(s: &str, max: usize) -> Vec<String> {
    let max = max.max(1);
    let mut lines = Vec::new();
    for paragraph in s.split('\n') {
        let mut line = String::new();
        let mut used = 0;
        for word in paragraph.split(' ') {
            let w = width(word);
            let gap = usize::from(used > 0);
            if used + gap + w <= max {
                if gap == 1 {
                    line.push(' ');
                }
                line.push_str(word);
                used += gap + w;
                continue;
            }
            if used > 0 {
                lines.push(std::mem::take(&mut line));
                used = 0;
            }
            if w <= max {
                line.push_str(word);
                used = w;
                continue;
            }
            for (g, gw) in graphemes(word) {
                if used + gw > max && used > 0 {
                    lines.push(std::mem::take(&mut line));
                    used = 0;
                }
                line.push_str(g);
                used += gw;
            }
        }
        lines.push(line);
    }
    lines
}

/// A run of a question's lines: prose, or the inside of a fenced code block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Block<'a> {
    Prose(Vec<&'a str>),
    Code(Vec<&'a str>),
}

/// `text` split into prose and fenced code blocks, by a strict subset of Markdown: a fence opens
/// on a line starting with three backticks (then at most a language name, no backtick) and closes
/// on a line of exactly three backticks; the fences themselves are dropped. Anything else, an
/// unclosed fence included, is prose, shown as written.
pub(crate) fn blocks(text: &str) -> Vec<Block<'_>> {
    let lines: Vec<&str> = text.split('\n').collect();
    let opens = |line: &str| line.strip_prefix("```").is_some_and(|info| !info.contains('`'));
    let closes = |line: &str| line.trim_end() == "```";
    let mut blocks = Vec::new();
    let mut prose = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let close = (i + 1..lines.len()).find(|&j| closes(lines[j]));
        if let (true, Some(close)) = (opens(lines[i]), close) {
            if !prose.is_empty() {
                blocks.push(Block::Prose(std::mem::take(&mut prose)));
            }
            blocks.push(Block::Code(lines[i + 1..close].to_vec()));
            i = close + 1;
        } else {
            prose.push(lines[i]);
            i += 1;
        }
    }
    if !prose.is_empty() || blocks.is_empty() {
        blocks.push(Block::Prose(prose));
    }
    blocks
}

/// For each backtick of `line`, in order, whether it opens or closes an inline `code` span: a
/// single backtick, the next backtick a single one too, with something other than spaces
/// between. Runs of several backticks and unpaired ones are literal text.
pub(crate) fn code_delimiters(line: &str) -> Vec<bool> {
    let ticks: Vec<usize> = line.match_indices('`').map(|(i, _)| i).collect();
    let single = |k: usize| {
        let at = ticks[k];
        (k == 0 || ticks[k - 1] + 1 != at) && ticks.get(k + 1).is_none_or(|&next| next != at + 1)
    };
    let mut delimiters = vec![false; ticks.len()];
    let mut k = 0;
    while k + 1 < ticks.len() {
        if single(k) && single(k + 1) && !line[ticks[k] + 1..ticks[k + 1]].trim().is_empty() {
            delimiters[k] = true;
            delimiters[k + 1] = true;
            k += 2;
        } else {
            k += 1;
        }
    }
    delimiters
}

/// A line of code cut into lines of at most `max` columns, spaces kept (indentation matters in
/// code); an empty line stays one empty line.
pub(crate) fn wrap_code(line: &str, max: usize) -> Vec<String> {
    let max = max.max(1);
    let mut lines = vec![String::new()];
    let mut used = 0;
    for (g, gw) in graphemes(line) {
        if used + gw > max && used > 0 {
            lines.push(String::new());
            used = 0;
        }
        if let Some(last) = lines.last_mut() {
            last.push_str(g);
        }
        used += gw;
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fenced_blocks_are_a_strict_subset() {
        assert_eq!(
            blocks("Run this:\n```sh\n  cargo test\n```\nthen say."),
            [
                Block::Prose(vec!["Run this:"]),
                Block::Code(vec!["  cargo test"]),
                Block::Prose(vec!["then say."])
            ]
        );
        // Unclosed, or with a backtick in the info string: prose, as written.
        assert_eq!(blocks("```sh\nno end"), [Block::Prose(vec!["```sh", "no end"])]);
        assert_eq!(blocks("```a`b\nx\n```"), [Block::Prose(vec!["```a`b", "x", "```"])]);
        assert_eq!(blocks(""), [Block::Prose(vec![""])]);
    }

    #[test]
    fn inline_code_takes_single_paired_backticks_only() {
        assert_eq!(code_delimiters("use `foo` and `bar`"), [true, true, true, true]);
        assert_eq!(code_delimiters("a `lone tick"), [false]);
        assert_eq!(code_delimiters("``double`` and ` ` blank"), [false; 6]);
        assert_eq!(code_delimiters("`x` `"), [true, true, false]);
        assert_eq!(wrap_code("  ab  cd", 4), ["  ab", "  cd"]);
        assert_eq!(wrap_code("", 4), [""]);
    }

    #[track_caller]
    fn check_sanitize(input: &str, keep: bool, expected: &str) {
        assert_eq!(sanitize(input, keep), expected, "input {input:?}");
    }

    #[test]
    fn sanitize_table() {
        check_sanitize("plain", false, "plain");
        check_sanitize("a\x1b[2Jb", false, "a\u{241b}[2Jb");
        check_sanitize("a\rb", false, "a\u{240d}b");
        check_sanitize("a\tb", false, "a b");
        check_sanitize("a\nb", false, "a b");
        check_sanitize("a\nb", true, "a\nb");
        check_sanitize("a\u{9b}31mb", false, "a\u{fffd}31mb");
        check_sanitize("x\u{7f}", false, "x\u{2421}");
        check_sanitize("\u{202e}evil\u{2066}", false, "evil");
        check_sanitize("in\u{200b}vis\u{feff}ible\u{ad}", false, "invisible");
        check_sanitize("Yes\u{3164}", false, "Yes⟨U+3164⟩");
        check_sanitize("\u{2800}\u{115f}\u{1160}\u{ffa0}", false, "⟨U+2800⟩⟨U+115F⟩⟨U+1160⟩⟨U+FFA0⟩");
        check_sanitize("tag\u{e0041}\u{e007f}", false, "tag");
        check_sanitize("👨\u{200d}👩", false, "👨\u{200d}👩");
        check_sanitize("❤\u{fe0f}", false, "❤\u{fe0f}");
        check_sanitize("a\u{2028}b", false, "a b");
    }

    #[track_caller]
    fn check_width(input: &str, expected: usize) {
        assert_eq!(width(input), expected, "input {input:?}");
    }

    #[test]
    fn width_table() {
        check_width("abc", 3);
        check_width("日本", 4);
        check_width("e\u{301}", 1);
        check_width("🦀", 2);
        check_width("🇫🇷", 2);
        check_width("❤\u{fe0f}", 2);
        check_width("👨\u{200d}👩\u{200d}👧", 6);
    }

    #[test]
    fn wrap_breaks_at_spaces_and_long_words() {
        assert_eq!(wrap("one two three", 7), ["one two", "three"]);
        assert_eq!(wrap("abcdefghij", 4), ["abcd", "efgh", "ij"]);
        assert_eq!(wrap("a\nb", 10), ["a", "b"]);
        assert_eq!(wrap("", 10), [""]);
        assert_eq!(wrap("日本語の文", 4), ["日本", "語の", "文"]);
    }

    #[test]
    fn truncate_marks_the_cut() {
        assert_eq!(truncate("abcdef", 10), "abcdef");
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate("日本語", 4), "日…");
    }

    #[test]
    fn answer_text_is_cleaned() {
        assert_eq!(clean_answer_text("a\nb\tc\u{200b}d\x1b"), "a b cd ");
    }

    proptest::proptest! {
        #[test]
        fn sanitized_text_has_no_controls(s in "\\PC*|[\\x00-\\x1f\\x7f-\\u{9f}\\u{200b}-\\u{206f}a ]*") {
            let clean = sanitize(&s, false);
            let inert = |c: char| !c.is_control() && (c == '\u{200d}' || get_general_category(c) != GeneralCategory::Format);
            proptest::prop_assert!(clean.chars().all(inert), "{:?}", clean);
            for line in wrap(&clean, 7) {
                proptest::prop_assert!(width(&line) <= 7 || line.graphemes(true).count() == 1);
            }
        }
    }
}
