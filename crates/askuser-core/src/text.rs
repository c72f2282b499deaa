//! The per-string rules of SPEC §2.1 and the uniqueness fold of §2.3.

use std::borrow::Cow;

use unicode_general_category::{GeneralCategory, get_general_category};

/// Whether `c` may not appear in a model-authored string: general category Cc, Cf, Cs, Co, Cn, Zl or
/// Zp, except LF where the field may span lines.
pub(crate) fn is_forbidden(c: char, allow_lf: bool) -> bool {
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

/// The first forbidden character of `s` with its position in code points.
pub(crate) fn first_forbidden(s: &str, allow_lf: bool) -> Option<(usize, char)> {
    s.chars().enumerate().find(|&(_, c)| is_forbidden(c, allow_lf))
}

/// Length in Unicode scalar values.
pub(crate) fn char_len(s: &str) -> usize {
    if s.is_ascii() { s.len() } else { s.chars().count() }
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
    use unicode_normalization::UnicodeNormalization;
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

/// Indexes `(first, second)` of the first pair of `items` whose folds are equal.
pub(crate) fn first_duplicate<'a>(items: impl Iterator<Item = &'a str>) -> Option<(usize, usize)> {
    let items: Vec<&str> = items.collect();
    if items.iter().all(|s| s.is_ascii()) {
        // Pairwise is cheaper than allocating keys for the at most ten strings compared here.
        for (j, b) in items.iter().enumerate() {
            if let Some(i) = items[..j].iter().position(|a| a.eq_ignore_ascii_case(b)) {
                return Some((i, j));
            }
        }
        return None;
    }
    let keys: Vec<Cow<'_, str>> = items.iter().map(|s| fold(s)).collect();
    for (j, b) in keys.iter().enumerate() {
        if let Some(i) = keys[..j].iter().position(|a| a == b) {
            return Some((i, j));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn dup(a: &str, b: &str, expected: bool) {
        assert_eq!(fold(a) == fold(b), expected, "{a:?} vs {b:?}: {:?} / {:?}", fold(a), fold(b));
        assert_eq!(first_duplicate([a, b].into_iter()).is_some(), expected, "{a:?} vs {b:?}");
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
            assert!(is_forbidden(c, true), "{c:?}");
        }
        for c in ['\u{2028}', '\u{2029}', '\u{e000}', '\u{fffe}', '\u{10ffff}', '\u{85}', '\t', '\r'] {
            assert!(is_forbidden(c, true), "{c:?}");
        }
        for c in ['a', ' ', '\u{a0}', '\u{3000}', '\u{301}', '\u{fe0f}', '\u{3164}', '\u{2800}', 'א'] {
            assert!(!is_forbidden(c, false), "{c:?}");
        }
        assert!(is_forbidden('\n', false));
        assert!(!is_forbidden('\n', true));
    }
}
