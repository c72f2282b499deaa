//! The per-string rules of docs/contract.md §2.1 and the uniqueness fold of §2.3.

use std::borrow::Cow;
use std::ops::Range;

use unicode_general_category::{GeneralCategory, get_general_category};
use unicode_normalization::UnicodeNormalization;

/// A trimmed string: where it stands in the text of one call (all of a call's strings live in one
/// shared string, see `raw.rs`).
pub(crate) type Span = Range<usize>;

/// Whether `c` is rejected in model-authored text and in custom answers: general category Cc, Cf,
/// Cs, Co, Cn, Zl or Zp (controls, invisible formatting such as zero-width and bidi characters,
/// private use, unassigned), except LF where the text may span lines (`allow_lf`: a question, a
/// description, a custom answer). An answerer can use it to filter what a person types before
/// [`check_response`](crate::check_response) sees it.
///
/// ```
/// use askuser_core::is_forbidden_char;
///
/// assert!(is_forbidden_char('\u{200b}', true));
/// assert!(!is_forbidden_char('\n', true));
/// assert!(is_forbidden_char('\n', false));
/// assert!(!is_forbidden_char('é', false));
/// ```
#[must_use]
pub fn is_forbidden_char(c: char, allow_lf: bool) -> bool {
    if c.is_ascii() {
        // Exact for ASCII: the only ASCII code points of a rejected category are the Cc ones.
        return (c < ' ' && !(allow_lf && c == '\n')) || c == '\x7f';
    }
    matches!(
        get_general_category(c),
        GeneralCategory::Control
            | GeneralCategory::Format
            | GeneralCategory::Surrogate
            | GeneralCategory::PrivateUse
            | GeneralCategory::Unassigned
            | GeneralCategory::LineSeparator
            | GeneralCategory::ParagraphSeparator
    )
}

/// Whether `c` draws nothing although it is no space, control or formatting character: the
/// Hangul fillers (U+115F, U+1160, U+3164, U+FFA0), the blank Braille pattern U+2800, the
/// combining grapheme joiner U+034F, the Khmer inherent vowels U+17B4 and U+17B5, and the
/// Mongolian variation selectors U+180B–U+180D and U+180F. Validation accepts them (as the
/// reference does), so `Yes` and `Yes\u{3164}` are two labels that look the same: every surface
/// shows them with [`show_blank`].
///
/// ```
/// assert!(askuser_core::renders_blank('\u{3164}'));
/// assert!(!askuser_core::renders_blank(' ') && !askuser_core::renders_blank('a'));
/// ```
#[must_use]
pub fn renders_blank(c: char) -> bool {
    matches!(
        c,
        '\u{115f}'
            | '\u{1160}'
            | '\u{3164}'
            | '\u{ffa0}'
            | '\u{2800}'
            | '\u{034f}'
            | '\u{17b4}'
            | '\u{17b5}'
            | '\u{180b}'..='\u{180d}' | '\u{180f}'
    )
}

/// `s` with every character that [`renders_blank`] made visible as `⟨U+XXXX⟩`. Borrows when there
/// is none, which is the common case. For display only: what is answered stays the text itself.
///
/// ```
/// assert_eq!(askuser_core::show_blank("Yes\u{3164}"), "Yes⟨U+3164⟩");
/// assert_eq!(askuser_core::show_blank("Oui, très"), "Oui, très");
/// ```
#[must_use]
pub fn show_blank(s: &str) -> Cow<'_, str> {
    if s.is_ascii() || !s.chars().any(renders_blank) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if renders_blank(c) {
            use std::fmt::Write as _;
            let _ = write!(out, "⟨U+{:04X}⟩", u32::from(c));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// The scripts whose letters are confused with one another: Latin, Greek, Cyrillic.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Script {
    Latin,
    Greek,
    Cyrillic,
}

fn script(c: char) -> Option<Script> {
    match c {
        'A'..='Z' | 'a'..='z' | '\u{00c0}'..='\u{024f}' | '\u{1e00}'..='\u{1eff}' => Some(Script::Latin),
        '\u{0370}'..='\u{03ff}' | '\u{1f00}'..='\u{1fff}' => Some(Script::Greek),
        '\u{0400}'..='\u{052f}' | '\u{2de0}'..='\u{2dff}' | '\u{a640}'..='\u{a69f}' => Some(Script::Cyrillic),
        _ => None,
    }
}

/// Whether a word of `s` mixes Latin, Greek and Cyrillic letters, the scripts whose letters look
/// alike: `Yеѕ` (a Cyrillic `е` and `ѕ`) beside `Yes` reads the same and is another label. A word
/// of one script in a text of another (`Ja, или нет`) is no mix.
///
/// ```
/// assert!(askuser_core::mixed_scripts("Y\u{0435}\u{0455}"));
/// assert!(!askuser_core::mixed_scripts("Yes") && !askuser_core::mixed_scripts("Да, yes"));
/// assert!(!askuser_core::mixed_scripts("αβγ test"));
/// ```
#[must_use]
pub fn mixed_scripts(s: &str) -> bool {
    if s.is_ascii() {
        return false;
    }
    s.split(|c: char| !c.is_alphanumeric()).any(|word| {
        let mut scripts = word.chars().filter_map(script);
        scripts.next().is_some_and(|first| scripts.any(|other| other != first))
    })
}

/// A label (or any short text a person picks by sight) as shown: [`show_blank`], then
/// ` ⟨mixed scripts⟩` when a word of it mixes look-alike scripts ([`mixed_scripts`]). For display
/// only: what is answered stays the label itself.
///
/// ```
/// assert_eq!(askuser_core::show_label("Y\u{0435}s"), "Y\u{0435}s ⟨mixed scripts⟩");
/// assert_eq!(askuser_core::show_label("Yes"), "Yes");
/// ```
#[must_use]
pub fn show_label(s: &str) -> Cow<'_, str> {
    let shown = show_blank(s);
    if mixed_scripts(s) { Cow::Owned(format!("{shown} ⟨mixed scripts⟩")) } else { shown }
}

/// The first forbidden character of `s` with its position in code points.
pub(crate) fn first_forbidden(s: &str, allow_lf: bool) -> Option<(usize, char)> {
    if printable_ascii(s, allow_lf) {
        return None;
    }
    s.chars().enumerate().find(|&(_, c)| is_forbidden_char(c, allow_lf))
}

/// Whether `s` is printable ASCII (plus LF where allowed): then it has no forbidden character and
/// its length in code points is its length in bytes. A branch-free fold, so it vectorises; this is
/// the common case and most of validation's own work.
pub(crate) fn printable_ascii(s: &str, allow_lf: bool) -> bool {
    let lf = if allow_lf { b'\n' } else { b' ' };
    #[expect(clippy::needless_bitwise_bool, reason = "branch-free on purpose, so that the loop vectorises")]
    s.bytes().fold(true, |ok, b| ok & ((b.wrapping_sub(b' ') < 0x5f) | (b == lf)))
}

/// Length in Unicode scalar values.
pub(crate) fn char_len(s: &str) -> usize {
    if s.is_ascii() { s.len() } else { s.chars().count() }
}

/// `s.trim()`, skipping the work when both ends are visibly not white space.
pub(crate) fn trim(s: &str) -> &str {
    match (s.as_bytes().first(), s.as_bytes().last()) {
        (Some(&first), Some(&last)) if first > b' ' && first < 0x7f && last > b' ' && last < 0x7f => s,
        _ => s.trim(),
    }
}

/// Python's `str.isspace`: Unicode `White_Space` plus the information separators U+001C–U+001F.
pub(crate) fn is_python_space(c: char) -> bool {
    c.is_whitespace() || ('\x1c'..='\x1f').contains(&c)
}

/// The uniqueness key: every Zs becomes U+0020, then NFKC, then full case folding (C + F).
///
/// Nothing else: no re-normalisation after folding (it would merge `ΐ` with `Ϊ́`), no removal of
/// default-ignorables, no whitespace collapsing.
pub(crate) fn fold(s: &str) -> Cow<'_, str> {
    if s.is_ascii() {
        // Exact: NFKC is the identity on ASCII and case folding is ASCII lowercase there.
        if s.bytes().any(|b| b.is_ascii_uppercase()) {
            return Cow::Owned(s.to_ascii_lowercase());
        }
        return Cow::Borrowed(s);
    }
    let spaced: String = s
        .chars()
        .map(|c| if get_general_category(c) == GeneralCategory::SpaceSeparator { ' ' } else { c })
        .nfkc()
        .collect();
    Cow::Owned(unicase::UniCase::new(spaced).to_folded_case())
}

/// FNV-1a over the ASCII-lowercased bytes.
fn ascii_fold_hash(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b.to_ascii_lowercase())).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Indexes `(first, second)` of the first pair of `items` whose folds are equal.
pub(crate) fn first_duplicate<T>(items: &[T], key: impl Fn(&T) -> &str) -> Option<(usize, usize)> {
    if items.len() <= 16 && items.iter().all(|item| key(item).is_ascii()) {
        // At most ten strings are compared here: a hash of each lowercase string on the stack, and a
        // full comparison only when two hashes meet, is cheaper than allocating folded keys.
        let mut hashes = [0_u64; 16];
        for (j, item) in items.iter().enumerate() {
            let b = key(item);
            hashes[j] = ascii_fold_hash(b);
            if let Some(i) =
                (0..j).find(|&i| hashes[i] == hashes[j] && key(&items[i]).eq_ignore_ascii_case(b))
            {
                return Some((i, j));
            }
        }
        return None;
    }
    let keys: Vec<Cow<'_, str>> = items.iter().map(|item| fold(key(item))).collect();
    for (j, b) in keys.iter().enumerate() {
        if let Some(i) = keys[..j].iter().position(|a| a == b) {
            return Some((i, j));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use super::*;

    /// One line per block of 4,096 code points: an FNV-1a digest of what the Unicode tables give
    /// each code point (forbidden or not, with and without LF allowed, and the uniqueness fold of
    /// an allowed one).
    fn unicode_table_digests() -> String {
        let mut out = String::new();
        for block in 0..=(0x10_ffff_u32 >> 12) {
            let mut hash = 0xcbf2_9ce4_8422_2325_u64;
            let mut eat = |bytes: &[u8]| {
                for &b in bytes {
                    hash = (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
                }
            };
            for c in ((block << 12)..((block + 1) << 12)).filter_map(char::from_u32) {
                let mut buf = [0; 4];
                let forbidden = is_forbidden_char(c, true);
                eat(&[u8::from(is_forbidden_char(c, false)), u8::from(forbidden)]);
                // A forbidden character is rejected before uniqueness is looked at: its fold
                // never matters (and skipping the unassigned planes keeps this test quick).
                if !forbidden {
                    eat(fold(c.encode_utf8(&mut buf)).as_bytes());
                }
                eat(&[0xff]);
            }
            let _ = writeln!(out, "{block:03x} {hash:016x}");
        }
        out
    }

    /// Keeps the Unicode tables honest now that `unicase`, `unicode-general-category` and
    /// `unicode-normalization` are caret requirements (exact pins broke downstream builds): a patch
    /// release that changes what any code point means for validation fails here, naming the block
    /// of 4,096 code points. If the change is intended (a Unicode update), check it against the
    /// reference (`docs/conformance.md`) and replace `tests/data/unicode-tables.txt` with the
    /// text printed.
    #[test]
    fn every_code_point_means_what_it_meant() {
        let expected = include_str!("../tests/data/unicode-tables.txt");
        let actual = unicode_table_digests();
        let changed: Vec<&str> = expected
            .lines()
            .zip(actual.lines())
            .filter(|(e, a)| e != a)
            .map(|(e, _)| e.split(' ').next().unwrap_or(e))
            .collect();
        assert!(
            expected == actual,
            "the Unicode tables changed in blocks {changed:?} (code point = block << 12); new file:\n{actual}"
        );
    }

    #[track_caller]
    fn dup(a: &str, b: &str, expected: bool) {
        assert_eq!(fold(a) == fold(b), expected, "{a:?} vs {b:?}: {:?} / {:?}", fold(a), fold(b));
        assert_eq!(first_duplicate(&[a, b], |s| s).is_some(), expected, "{a:?} vs {b:?}");
        assert_eq!(first_duplicate(&["x", a, "y", b], |s| s), expected.then_some((1, 3)), "{a:?} vs {b:?}");
    }

    #[test]
    fn ascii_duplicates() {
        assert_eq!(first_duplicate(&["a", "b", "c"], |s| s), None);
        assert_eq!(first_duplicate(&["Go", "Stop", "GO"], |s| s), Some((0, 2)));
        assert_eq!(first_duplicate(&["a b", "a  b"], |s| s), None);
        let many: Vec<String> = (0..20).map(|i| format!("x{}", i % 19)).collect();
        assert_eq!(first_duplicate(&many, String::as_str), Some((0, 19)));
    }

    #[test]
    fn spec_pairs() {
        dup("Straße", "STRASSE", true);
        dup("ß", "ẞ", true);
        dup("ß", "ss", true);
        dup("Ａｐｐ", "app", true);
        dup("ﬁle", "FILE", true);
        dup("\u{212A}", "k", true);
        dup("ς", "σ", true);
        dup("a\u{a0}b", "a b", true);
        dup("a\u{3000}b", "a b", true);
        dup("a\u{1680}b", "a b", true);
        dup("x²", "x2", true);
        dup("①", "1", true);
        dup("İ", "i", false);
        dup("ı", "i", false);
        dup("a  b", "a b", false);
        dup("❤", "❤\u{fe0f}", false);
        dup("-", "\u{2212}", false);
        dup("a", "\u{430}", false);
        dup("\u{390}", "\u{399}\u{308}\u{301}", false);
        dup("\u{3b0}", "\u{3a5}\u{308}\u{301}", false);
    }

    #[test]
    fn forbidden_characters() {
        for c in ['\0', '\x1b', '\x7f', '\x1c', '\x1f', '\u{200b}', '\u{feff}', '\u{ad}', '\u{202e}'] {
            assert!(is_forbidden_char(c, true), "{c:?}");
        }
        for c in ['\u{2028}', '\u{2029}', '\u{e000}', '\u{fffe}', '\u{10ffff}', '\u{85}', '\t', '\r'] {
            assert!(is_forbidden_char(c, true), "{c:?}");
        }
        for c in ['a', ' ', '\u{a0}', '\u{3000}', '\u{301}', '\u{fe0f}', '\u{3164}', '\u{2800}', 'א'] {
            assert!(!is_forbidden_char(c, false), "{c:?}");
        }
        assert!(is_forbidden_char('\n', false));
        assert!(!is_forbidden_char('\n', true));
    }

    #[test]
    fn printable_ascii_fast_path_agrees_with_the_rule() {
        for b in 0_u8..=0x7f {
            let s = char::from(b).to_string();
            for allow_lf in [false, true] {
                let slow = s.chars().any(|c| is_forbidden_char(c, allow_lf));
                assert_eq!(printable_ascii(&s, allow_lf), !slow, "{b:#x} {allow_lf}");
                assert_eq!(first_forbidden(&s, allow_lf).is_some(), slow, "{b:#x} {allow_lf}");
            }
        }
        assert!(!printable_ascii("é", true));
        assert_eq!(first_forbidden("ab\u{200b}", false), Some((2, '\u{200b}')));
    }

    #[test]
    fn trim_fast_path_agrees_with_str_trim() {
        for s in ["", " ", "a", " a", "a ", "\u{85}a", "a\u{3000}", "\x1fa", "a\x7f", "ab", "\u{a0}"] {
            assert_eq!(trim(s), s.trim(), "{s:?}");
        }
    }
}
