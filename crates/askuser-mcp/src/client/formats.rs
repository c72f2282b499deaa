//! The client's formats: what a typed answer must be to go into a string, number or integer field
//! (lengths, ranges, and the four string formats MCP allows: email, uri, date, date-time).

use rmcp::model::{PrimitiveSchemaDefinition, StringFormat};
use serde_json::Value;

/// What a typed answer must be to go into a string, number or integer field.
#[derive(Debug, Clone)]
pub(super) enum TextKind {
    String { min: Option<u32>, max: Option<u32>, format: Option<StringFormat> },
    Number { min: Option<f64>, max: Option<f64> },
    Integer { min: Option<i64>, max: Option<i64> },
}

impl TextKind {
    pub(super) fn of(definition: &PrimitiveSchemaDefinition) -> Option<(Self, Option<Value>)> {
        Some(match definition {
            PrimitiveSchemaDefinition::String(s) => (
                Self::String { min: s.min_length, max: s.max_length, format: s.format },
                s.default.clone().map(Value::String),
            ),
            PrimitiveSchemaDefinition::Number(n) => (
                Self::Number { min: n.minimum, max: n.maximum },
                n.default.and_then(serde_json::Number::from_f64).map(Value::Number),
            ),
            PrimitiveSchemaDefinition::Integer(i) => {
                (Self::Integer { min: i.minimum, max: i.maximum }, i.default.map(Value::from))
            }
            _ => return None,
        })
    }

    /// What the person is told the field takes, e.g. "an email address, at most 80 characters".
    pub(super) fn hint(&self) -> Option<String> {
        let range = |min: Option<String>, max: Option<String>, unit: &str| match (min, max) {
            (Some(min), Some(max)) => Some(format!("{min} to {max}{unit}")),
            (Some(min), None) => Some(format!("at least {min}{unit}")),
            (None, Some(max)) => Some(format!("at most {max}{unit}")),
            (None, None) => None,
        };
        match self {
            Self::String { min, max, format } => {
                let what = format.as_ref().map(|f| match f {
                    StringFormat::Email => "an email address",
                    StringFormat::Uri => "a URI such as https://example.com/page",
                    StringFormat::Date => "a date, YYYY-MM-DD",
                    StringFormat::DateTime => "a date and time, YYYY-MM-DDTHH:MM:SSZ",
                    _ => "text",
                });
                let length = range(min.map(|n| n.to_string()), max.map(|n| n.to_string()), " characters");
                match (what, length) {
                    (Some(what), Some(length)) => Some(format!("{what}, {length}")),
                    (Some(what), None) => Some(what.to_owned()),
                    (None, length) => length,
                }
            }
            Self::Number { min, max } => Some(
                range(min.map(|n| n.to_string()), max.map(|n| n.to_string()), "")
                    .map_or_else(|| "a number".to_owned(), |r| format!("a number, {r}")),
            ),
            Self::Integer { min, max } => Some(
                range(min.map(|n| n.to_string()), max.map(|n| n.to_string()), "")
                    .map_or_else(|| "a whole number".to_owned(), |r| format!("a whole number, {r}")),
            ),
        }
    }

    /// The field's value for `text`, or why `text` does not fit (for the person).
    pub(super) fn value(&self, text: &str) -> Result<Value, String> {
        match self {
            Self::String { min, max, format } => {
                let length = text.chars().count();
                if let Some(min) = min.filter(|&m| length < m as usize) {
                    return Err(format!("needs at least {min} characters, not {length}"));
                }
                if let Some(max) = max.filter(|&m| length > m as usize) {
                    return Err(format!("takes at most {max} characters, not {length}"));
                }
                if let Some(format) = format {
                    check_format(*format, text)?;
                }
                Ok(Value::String(text.to_owned()))
            }
            Self::Number { min, max } => {
                let n: f64 = text
                    .parse()
                    .ok()
                    .filter(|n: &f64| n.is_finite())
                    .ok_or_else(|| format!("takes a number, not {text:?}"))?;
                if let Some(min) = min.filter(|&m| n < m) {
                    return Err(format!("takes a number of at least {min}, not {n}"));
                }
                if let Some(max) = max.filter(|&m| n > m) {
                    return Err(format!("takes a number of at most {max}, not {n}"));
                }
                serde_json::Number::from_f64(n)
                    .map(Value::Number)
                    .ok_or_else(|| format!("takes a number, not {text:?}"))
            }
            Self::Integer { min, max } => {
                let n: i64 = text.parse().map_err(|_| format!("takes a whole number, not {text:?}"))?;
                if let Some(min) = min.filter(|&m| n < m) {
                    return Err(format!("takes a whole number of at least {min}, not {n}"));
                }
                if let Some(max) = max.filter(|&m| n > m) {
                    return Err(format!("takes a whole number of at most {max}, not {n}"));
                }
                Ok(Value::from(n))
            }
        }
    }
}

/// Checks `text` against a string field's `format` (the four MCP allows).
fn check_format(format: StringFormat, text: &str) -> Result<(), String> {
    let ok = match format {
        StringFormat::Email => is_email(text),
        StringFormat::Uri => is_uri(text),
        StringFormat::Date => is_date(text),
        StringFormat::DateTime => is_date_time(text),
        // `Plan::new` refuses forms with a format it does not know.
        _ => false,
    };
    if ok {
        return Ok(());
    }
    Err(match format {
        StringFormat::Email => format!("takes an email address (name@example.com), not {text:?}"),
        StringFormat::Uri => format!("takes a URI with a scheme (https://example.com), not {text:?}"),
        StringFormat::Date => format!("takes a date as YYYY-MM-DD, not {text:?}"),
        StringFormat::DateTime => {
            format!("takes a date and time as YYYY-MM-DDTHH:MM:SS with Z or an offset, not {text:?}")
        }
        _ => "has a format askuser cannot check".to_owned(),
    })
}

/// One `@`, a local part, and a domain of dot-separated labels (RFC 5321's shape, without
/// quoted local parts).
fn is_email(text: &str) -> bool {
    let Some((local, domain)) = text.split_once('@') else { return false };
    let local_ok = !local.is_empty()
        && local.len() <= 64
        && !local.starts_with('.')
        && !local.ends_with('.')
        && !local.contains("..")
        && local.chars().all(|c| c.is_alphanumeric() || "!#$%&'*+-/=?^_`{|}~.".contains(c));
    let labels: Vec<&str> = domain.split('.').collect();
    let domain_ok = labels.len() >= 2
        && labels.iter().all(|l| {
            !l.is_empty()
                && !l.starts_with('-')
                && !l.ends_with('-')
                && l.chars().all(|c| c.is_alphanumeric() || c == '-')
        });
    local_ok && domain_ok
}

/// An absolute URI (RFC 3986): a scheme, `:`, and a rest without spaces or control characters.
fn is_uri(text: &str) -> bool {
    let Some((scheme, rest)) = text.split_once(':') else { return false };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        && !rest.is_empty()
        && !rest.chars().any(|c| c.is_whitespace() || c.is_control() || "<>\"{}|\\^`".contains(c))
}

/// `YYYY-MM-DD`, a real calendar date (RFC 3339 `full-date`).
fn is_date(text: &str) -> bool {
    let b = text.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let number = |range: std::ops::Range<usize>| -> Option<u32> {
        let part = &text[range];
        part.bytes().all(|c| c.is_ascii_digit()).then(|| part.parse().ok()).flatten()
    };
    let (Some(year), Some(month), Some(day)) = (number(0..4), number(5..7), number(8..10)) else {
        return false;
    };
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// RFC 3339 `date-time`: a date, `T`, `HH:MM:SS`, optional fraction, `Z` or `±HH:MM`.
fn is_date_time(text: &str) -> bool {
    let Some((date, time)) = text.split_once(['T', 't']) else { return false };
    if !is_date(date) {
        return false;
    }
    let (clock, offset) = if let Some(clock) = time.strip_suffix(['Z', 'z']) {
        (clock, None)
    } else if let Some(at) = time.rfind(['+', '-']) {
        (&time[..at], Some(&time[at + 1..]))
    } else {
        return false;
    };
    let two = |part: &str, max: u32| {
        part.len() == 2
            && part.bytes().all(|c| c.is_ascii_digit())
            && part.parse::<u32>().is_ok_and(|n| n <= max)
    };
    let (whole, fraction) = match clock.split_once('.') {
        Some((whole, fraction)) => (whole, Some(fraction)),
        None => (clock, None),
    };
    let parts: Vec<&str> = whole.split(':').collect();
    let clock_ok = parts.len() == 3
        && two(parts[0], 23)
        && two(parts[1], 59)
        && two(parts[2], 60)
        && fraction.is_none_or(|f| !f.is_empty() && f.bytes().all(|c| c.is_ascii_digit()));
    let offset_ok =
        offset.is_none_or(|o| matches!(o.split_once(':'), Some((h, m)) if two(h, 23) && two(m, 59)));
    clock_ok && offset_ok
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn formats_are_checked() {
        for good in ["a@b.co", "first.last+tag@mail.example.org", "ünï@exämple.de"] {
            assert!(is_email(good), "{good}");
        }
        for bad in ["", "a", "a@", "@b.co", "a@b", "a b@c.de", "a@@b.co", ".a@b.co", "a@-b.co", "a@b..co"] {
            assert!(!is_email(bad), "{bad}");
        }
        for good in ["https://x.org", "mailto:a@b.co", "urn:isbn:0451450523", "git+ssh://h/p"] {
            assert!(is_uri(good), "{good}");
        }
        for bad in ["", "x.org", "://x", "1http://x", "https://x y", "https:"] {
            assert!(!is_uri(bad), "{bad}");
        }
        for good in ["2024-02-29", "2000-02-29", "1999-12-31"] {
            assert!(is_date(good), "{good}");
        }
        for bad in
            ["1900-02-29", "2023-02-29", "2024-13-01", "2024-04-31", "2024-4-01", "24-04-01", "2024-04-0a"]
        {
            assert!(!is_date(bad), "{bad}");
        }
        for good in ["2026-12-01T09:30:00Z", "2026-12-01t09:30:00.123+01:00", "2026-12-31T23:59:60-05:30"] {
            assert!(is_date_time(good), "{good}");
        }
        for bad in [
            "2026-12-01",
            "2026-12-01T09:30Z",
            "2026-12-01T09:30:00",
            "2026-12-01T24:00:00Z",
            "2026-12-01T09:30:00+1:00",
            "2026-12-01T09:30:00.Z",
        ] {
            assert!(!is_date_time(bad), "{bad}");
        }
    }

    #[test]
    fn numbers_keep_their_type_and_range() {
        let integer = TextKind::Integer { min: Some(1), max: Some(10) };
        assert_eq!(integer.value("7"), Ok(json!(7)));
        assert!(integer.value("7.0").unwrap_err().contains("whole number"));
        assert!(integer.value("11").unwrap_err().contains("at most 10"));
        let number = TextKind::Number { min: None, max: Some(1.0) };
        assert_eq!(number.value("0.5"), Ok(json!(0.5)));
        assert!(number.value("1").unwrap().is_f64());
        assert!(number.value("NaN").unwrap_err().contains("takes a number"));
        assert!(number.value("inf").unwrap_err().contains("takes a number"));
        let text = TextKind::String { min: Some(2), max: Some(3), format: None };
        assert!(text.value("é").unwrap_err().contains("at least 2"));
        assert_eq!(text.value("éèê"), Ok(json!("éèê")));
        assert!(text.value("abcd").unwrap_err().contains("at most 3"));
    }
}
