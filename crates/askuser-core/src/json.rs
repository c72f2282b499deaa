//! A strict JSON reader for argument text: RFC 8259 with no trailing commas, no raw control
//! characters in strings, no lone surrogate escapes, no trailing characters. Where `serde_json` and
//! the reference's parser (jiter) differ, it follows the reference, whose verdicts we match: `NaN`,
//! `Infinity` and `-Infinity` are numbers, a float out of range is infinite rather than an error,
//! an integer part over 4,300 digits is out of range (the whole text is invalid), and nesting goes 200 non-empty containers deep (an empty `[]` or `{}` does not count) rather
//! than 128 containers of any kind.
//!
//! It exists for speed. It reads the arguments straight into the lenient mirror (`raw.rs`) by
//! recursive descent, with no visitor in between: the mirror says which shape it wants next
//! (`Source`) and finds each key in the tables of `keys.rs`, so this file knows no key. It scans
//! strings eight bytes at a time. `serde_json`'s general deserializer costs about as much as all of
//! validation's own checks on the typical call (CHANGELOG.md, performance history). The
//! `serde_json::Value` path reads the same mirror through `serde` visitors; a property test holds
//! this reader to `serde_json`'s accept/reject verdict on mutated text, and to the same values.

use std::fmt;

use crate::error::JsonType;
use crate::keys::Key;
use crate::raw::{Arena, Fields, Raw, RawArgs, Slot, Source, slot};

/// Deepest nesting accepted, as measured on the reference (jiter): 200 non-empty objects and
/// arrays inside one another. An empty container is never entered, so it does not count: 200
/// arrays around a `[]` parse, 200 arrays around `{"a":1}` do not.
const MAX_DEPTH: u32 = 200;

/// The longest integer part of a number the reference reads (Python's default limit on integer
/// digits): a longer one, even with a fraction or an exponent, makes the whole text invalid.
const MAX_INT_DIGITS: usize = 4300;

/// Why the text is not JSON, with where.
#[derive(Debug)]
pub(crate) struct JsonError(String);

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Reads argument text into the lenient mirror, appending every trimmed string to the arena. The
/// extended profile's keys are read only when the arena says so; otherwise they are unknown keys.
pub(crate) fn read_args(text: &str, arena: &mut Arena<'_>) -> Result<Slot<RawArgs>, JsonError> {
    let mut reader = Reader::new(text);
    let args = RawArgs::read(&mut reader, arena)?;
    reader.skip_ws();
    if reader.pos < text.len() {
        return Err(reader.error("trailing characters"));
    }
    Ok(args)
}

struct Reader<'s> {
    text: &'s str,
    pos: usize,
    depth: u32,
    /// Decoded strings that contain escapes.
    scratch: String,
}

/// The bytes that end the plain run of a string: `"`, `\` and the controls below U+0020.
static SPECIAL: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = true;
        b += 1;
    }
    table[b'"' as usize] = true;
    table[b'\\' as usize] = true;
    table
};

/// The high bit of each of the eight bytes (little-endian) that is `"`, `\` or below U+0020;
/// zero when none is. The lowest set bit is exact (a borrow can flag a byte above a true match,
/// never below it), so `trailing_zeros() / 8` is the first special byte's index.
fn special_mask(chunk: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero_byte = |v: u64| v.wrapping_sub(ONES) & !v & HIGH;
    let quote = zero_byte(chunk ^ (ONES * u64::from(b'"')));
    let backslash = zero_byte(chunk ^ (ONES * u64::from(b'\\')));
    let control = chunk.wrapping_sub(ONES * 0x20) & !chunk & HIGH;
    quote | backslash | control
}

enum Str<'s> {
    Borrowed(&'s str),
    Scratch,
}

/// A number's literal, and whether it is an integer (no fraction, no exponent).
struct Number<'s> {
    literal: &'s str,
    integer: bool,
}

impl<'s> Reader<'s> {
    fn new(text: &'s str) -> Self {
        Self { text, pos: 0, depth: 0, scratch: String::new() }
    }

    fn bytes(&self) -> &'s [u8] {
        self.text.as_bytes()
    }

    fn peek(&self) -> Option<u8> {
        self.bytes().get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    /// Skips white space and returns the next byte, which starts a value.
    fn start_value(&mut self) -> Result<u8, JsonError> {
        self.skip_ws();
        self.peek().ok_or_else(|| self.error("EOF while parsing a value"))
    }

    fn error(&self, what: &str) -> JsonError {
        let before = &self.text[..floor_char_boundary(self.text, self.pos)];
        let line = before.bytes().filter(|&b| b == b'\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        JsonError(format!("{what} at line {line} column {column}"))
    }

    fn literal(&mut self, word: &str) -> Result<(), JsonError> {
        if self.bytes().get(self.pos..self.pos + word.len()) == Some(word.as_bytes()) {
            self.pos += word.len();
            Ok(())
        } else {
            Err(self.error("expected value"))
        }
    }

    /// A value that is not a string, handed to `T` as `serde_json` would hand it over: an integer
    /// within u64, else within i64, exactly; any other number (`-0` too) as a float. A list or an
    /// object is skipped as the wrong type.
    fn non_string<T: Raw>(&mut self) -> Result<Slot<T>, JsonError> {
        Ok(match self.start_value()? {
            b't' => {
                self.literal("true")?;
                slot(T::from_bool(true), JsonType::Boolean)
            }
            b'f' => {
                self.literal("false")?;
                slot(T::from_bool(false), JsonType::Boolean)
            }
            b'N' | b'I' => slot(T::from_f64(self.special_float()?), JsonType::Number),
            b'-' if self.bytes().get(self.pos + 1) == Some(&b'I') => {
                slot(T::from_f64(self.special_float()?), JsonType::Number)
            }
            b'-' | b'0'..=b'9' => {
                let n = self.number()?;
                let value = match n.integer.then(|| n.literal.parse::<u64>()) {
                    Some(Ok(u)) => T::from_u64(u),
                    Some(Err(_)) => match n.literal.parse::<i64>() {
                        Ok(0) => T::from_f64(-0.0),
                        Ok(i) => T::from_i64(i),
                        Err(_) => T::from_f64(self.float(&n)?),
                    },
                    None => T::from_f64(self.float(&n)?),
                };
                slot(value, JsonType::Number)
            }
            _ => Slot::Wrong(self.skip_value()?),
        })
    }

    /// An object key and the colon after it.
    #[inline]
    fn key(&mut self) -> Result<Str<'s>, JsonError> {
        self.skip_ws();
        if self.peek() != Some(b'"') {
            return Err(self.error("key must be a string"));
        }
        self.pos += 1;
        let key = self.string()?;
        self.skip_ws();
        if self.peek() != Some(b':') {
            return Err(self.error("expected `:`"));
        }
        self.pos += 1;
        Ok(key)
    }

    /// Right after an opening bracket: consumes `close` if the container is empty.
    fn close(&mut self, close: u8) -> Result<bool, JsonError> {
        match self.start_value() {
            Ok(b) if b == close => {
                self.pos += 1;
                Ok(true)
            }
            Ok(_) => Ok(false),
            Err(_) => Err(self.error("EOF while parsing")),
        }
    }

    /// After an entry: true at a comma (another entry follows), false at the closing bracket.
    fn comma(&mut self, close: u8) -> Result<bool, JsonError> {
        self.skip_ws();
        match self.peek() {
            Some(b',') => {
                self.pos += 1;
                self.skip_ws();
                if self.peek() == Some(close) {
                    return Err(self.error("trailing comma"));
                }
                Ok(true)
            }
            Some(b) if b == close => {
                self.pos += 1;
                Ok(false)
            }
            None => Err(self.error("EOF while parsing")),
            Some(_) => {
                Err(self.error(if close == b'}' { "expected `,` or `}`" } else { "expected `,` or `]`" }))
            }
        }
    }

    /// At an opening bracket: consumes it, and if the container is not empty (`close` does not
    /// follow) enters one level deeper and returns true; the caller leaves the level again.
    fn open(&mut self, close: u8) -> Result<bool, JsonError> {
        self.pos += 1;
        if self.close(close)? {
            return Ok(false);
        }
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error("recursion limit exceeded"));
        }
        Ok(true)
    }

    /// Checks and skips any value; returns its type.
    fn skip_value(&mut self) -> Result<JsonType, JsonError> {
        Ok(match self.start_value()? {
            b'"' => {
                self.pos += 1;
                self.string()?;
                JsonType::String
            }
            b'{' => {
                if self.open(b'}')? {
                    loop {
                        self.key()?;
                        self.skip_value()?;
                        if !self.comma(b'}')? {
                            break;
                        }
                    }
                    self.depth -= 1;
                }
                JsonType::Object
            }
            b'[' => {
                if self.open(b']')? {
                    loop {
                        self.skip_value()?;
                        if !self.comma(b']')? {
                            break;
                        }
                    }
                    self.depth -= 1;
                }
                JsonType::Array
            }
            b't' => {
                self.literal("true")?;
                JsonType::Boolean
            }
            b'f' => {
                self.literal("false")?;
                JsonType::Boolean
            }
            b'n' => {
                self.literal("null")?;
                JsonType::Null
            }
            b'N' | b'I' => {
                self.special_float()?;
                JsonType::Number
            }
            b'-' if self.bytes().get(self.pos + 1) == Some(&b'I') => {
                self.special_float()?;
                JsonType::Number
            }
            b'-' | b'0'..=b'9' => {
                self.number()?;
                JsonType::Number
            }
            _ => return Err(self.error("expected value")),
        })
    }

    /// A float literal's value; out of range is infinite, as in the reference.
    fn float(&self, n: &Number<'_>) -> Result<f64, JsonError> {
        n.literal.parse::<f64>().map_err(|_| self.error("invalid number"))
    }

    /// `NaN`, `Infinity` or `-Infinity`, which the reference reads as numbers.
    fn special_float(&mut self) -> Result<f64, JsonError> {
        for (word, value) in
            [("NaN", f64::NAN), ("Infinity", f64::INFINITY), ("-Infinity", f64::NEG_INFINITY)]
        {
            if self.text[self.pos..].starts_with(word) {
                self.pos += word.len();
                return Ok(value);
            }
        }
        Err(self.error("expected value"))
    }

    fn number(&mut self) -> Result<Number<'s>, JsonError> {
        let bytes = self.bytes();
        let start = self.pos;
        let mut i = start;
        let digits = |i: &mut usize| {
            let from = *i;
            while bytes.get(*i).is_some_and(u8::is_ascii_digit) {
                *i += 1;
            }
            *i - from
        };
        if bytes.get(i) == Some(&b'-') {
            i += 1;
        }
        let leading_zero = bytes.get(i) == Some(&b'0');
        let int_digits = digits(&mut i);
        let mut valid = int_digits > 0 && !(leading_zero && int_digits > 1);
        if valid && int_digits > MAX_INT_DIGITS {
            // Where the reference stops: after the integer part, or on its last digit at the end.
            self.pos = i.min(self.text.len().saturating_sub(1));
            return Err(self.error("number out of range"));
        }
        let mut integer = true;
        if valid && bytes.get(i) == Some(&b'.') {
            i += 1;
            integer = false;
            valid = digits(&mut i) > 0;
        }
        if valid && matches!(bytes.get(i), Some(b'e' | b'E')) {
            i += 1;
            integer = false;
            if let Some(b'+' | b'-') = bytes.get(i) {
                i += 1;
            }
            valid = digits(&mut i) > 0;
        }
        self.pos = i;
        if !valid {
            return Err(self.error("invalid number"));
        }
        Ok(Number { literal: &self.text[start..i], integer })
    }

    /// A string whose opening quote has been consumed.
    fn string(&mut self) -> Result<Str<'s>, JsonError> {
        let bytes = self.bytes();
        let start = self.pos;
        let mut i = start;
        // Most strings here are a few words: eight bytes at a time while they last, then a table.
        while let Some(chunk) = bytes.get(i..i + 8) {
            let mut word = [0_u8; 8];
            word.copy_from_slice(chunk);
            let mask = special_mask(u64::from_le_bytes(word));
            if mask != 0 {
                // Straight to the special byte: no byte-by-byte walk to it.
                i += (mask.trailing_zeros() / 8) as usize;
                break;
            }
            i += 8;
        }
        while let Some(&b) = bytes.get(i) {
            if SPECIAL[usize::from(b)] {
                break;
            }
            i += 1;
        }
        match bytes.get(i) {
            Some(b'"') => {
                self.pos = i + 1;
                Ok(Str::Borrowed(&self.text[start..i]))
            }
            Some(b'\\') => {
                self.scratch.clear();
                self.scratch.push_str(&self.text[start..i]);
                self.pos = i;
                self.escaped_rest()?;
                Ok(Str::Scratch)
            }
            Some(_) => {
                self.pos = i;
                Err(self.error("control character (\\u0000-\\u001F) found while parsing a string"))
            }
            None => {
                self.pos = i;
                Err(self.error("EOF while parsing a string"))
            }
        }
    }

    /// The rest of a string that has escapes, decoded into `scratch`.
    fn escaped_rest(&mut self) -> Result<(), JsonError> {
        loop {
            let start = self.pos;
            let run = self.bytes()[start..].iter().position(|&b| SPECIAL[usize::from(b)]);
            let Some(run) = run else {
                self.pos = self.text.len();
                return Err(self.error("EOF while parsing a string"));
            };
            self.scratch.push_str(&self.text[start..start + run]);
            self.pos = start + run;
            match self.bytes()[self.pos] {
                b'"' => {
                    self.pos += 1;
                    return Ok(());
                }
                b'\\' => {
                    self.pos += 1;
                    self.escape()?;
                }
                _ => {
                    return Err(
                        self.error("control character (\\u0000-\\u001F) found while parsing a string")
                    );
                }
            }
        }
    }

    /// One escape, after its backslash.
    fn escape(&mut self) -> Result<(), JsonError> {
        let Some(b) = self.peek() else {
            return Err(self.error("EOF while parsing a string"));
        };
        self.pos += 1;
        let c = match b {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => self.unicode_escape()?,
            _ => {
                self.pos -= 1;
                return Err(self.error("invalid escape"));
            }
        };
        self.scratch.push(c);
        Ok(())
    }

    fn hex4(&mut self) -> Result<u32, JsonError> {
        let digits = self.bytes().get(self.pos..self.pos + 4);
        let value = digits.and_then(|d| {
            d.iter().try_fold(0_u32, |acc, &b| char::from(b).to_digit(16).map(|v| acc * 16 + v))
        });
        match value {
            Some(v) => {
                self.pos += 4;
                Ok(v)
            }
            None => Err(self.error("invalid \\u escape (expected four hex digits)")),
        }
    }

    fn unicode_escape(&mut self) -> Result<char, JsonError> {
        let first = self.hex4()?;
        let code = match first {
            0xD800..=0xDBFF => {
                if !self.text[self.pos..].starts_with("\\u") {
                    return Err(self.error("lone leading surrogate in hex escape"));
                }
                self.pos += 2;
                let second = self.hex4()?;
                if !(0xDC00..=0xDFFF).contains(&second) {
                    return Err(self.error("lone leading surrogate in hex escape"));
                }
                0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
            }
            0xDC00..=0xDFFF => return Err(self.error("lone trailing surrogate in hex escape")),
            _ => first,
        };
        char::from_u32(code).ok_or_else(|| self.error("invalid \\u escape"))
    }
}

impl Source for Reader<'_> {
    type Error = JsonError;

    fn scalar<T: Raw>(&mut self, arena: &mut Arena<'_>) -> Result<Slot<T>, JsonError> {
        // Strings first and apart: nearly every value of the arguments is one.
        if self.start_value()? != b'"' {
            return self.non_string();
        }
        self.pos += 1;
        let s = self.string()?;
        let s = match &s {
            Str::Borrowed(s) => s,
            Str::Scratch => self.scratch.as_str(),
        };
        Ok(slot(T::from_str(s, arena.text), JsonType::String))
    }

    fn list<T: Raw>(&mut self, arena: &mut Arena<'_>) -> Result<Slot<Vec<Slot<T>>>, JsonError> {
        if self.start_value()? != b'[' {
            return self.skip_value().map(Slot::Wrong);
        }
        let mut items = Vec::with_capacity(4);
        if self.open(b']')? {
            loop {
                items.push(T::read(self, arena)?);
                if !self.comma(b']')? {
                    break;
                }
            }
            self.depth -= 1;
        }
        Ok(Slot::Present(items))
    }

    /// Each key is looked up in the object's table; an unknown key is kept in order and its
    /// value skipped.
    fn object<F: Fields>(&mut self, arena: &mut Arena<'_>) -> Result<Slot<F>, JsonError> {
        if self.start_value()? != b'{' {
            return self.skip_value().map(Slot::Wrong);
        }
        let mut raw = F::default();
        if self.open(b'}')? {
            loop {
                let key = self.key()?;
                // A key with escapes lives in `scratch`, which reading its value may reuse.
                let owned;
                let key: &str = match key {
                    Str::Borrowed(k) => k,
                    Str::Scratch => {
                        owned = std::mem::take(&mut self.scratch);
                        &owned
                    }
                };
                if let Some(field) = F::Field::find(key, arena.extended) {
                    raw.set(field, &mut *self, arena)?;
                } else {
                    raw.unknown().push(key.to_owned());
                    self.skip_value()?;
                }
                if !self.comma(b'}')? {
                    break;
                }
            }
            self.depth -= 1;
        }
        raw.finish(arena);
        Ok(Slot::Present(raw))
    }
}

/// The largest char boundary at or below `index`.
fn floor_char_boundary(s: &str, index: usize) -> usize {
    let mut i = index.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads any JSON value, as the reader skips unknown fields.
    fn check(text: &str) -> Result<(), JsonError> {
        let mut reader = Reader::new(text);
        reader.skip_value()?;
        reader.skip_ws();
        if reader.pos < text.len() {
            return Err(reader.error("trailing characters"));
        }
        Ok(())
    }

    #[test]
    fn agrees_with_serde_json_on_edge_cases() {
        let cases = [
            "{}",
            "[]",
            "{\"a\":1}",
            "[1,2]",
            "[1,]",
            "{\"a\":1,}",
            "[,1]",
            "{,}",
            "[1 2]",
            "{\"a\" 1}",
            "{1:2}",
            "\"\\ud83d\\ude00\"",
            "\"\\ud800\"",
            "\"\\ude00\"",
            "\"\\ud800\\u0041\"",
            "\"\\u00e9\"",
            "\"\\x\"",
            "\"a\u{1}\"",
            "\"a\tb\"",
            "\"\\t\"",
            "01",
            "-0",
            "-",
            "1.",
            ".5",
            "1e",
            "1e+5",
            "1E-5",
            "-0.0e0",
            "18446744073709551616",
            "-9223372036854775809",
            "true",
            "tru",
            "nulll",
            "null x",
            " \n\t\r{} ",
            "\u{feff}{}",
            "",
            " ",
            "\"unterminated",
            "{\"a\":",
            "[",
            "\"\\u12\"",
            "\"\\uZZZZ\"",
            "[[[[[]]]]]",
            "{\"a\":{\"b\":[true,false,null]}}",
            "\"\\/\\b\\f\\n\\r\"",
            "\"é中😀\"",
            "[1,\n2]",
            "{\"k\\u0065y\":[1,{\"x\":\"y\"}]}",
            "\"abcdefghijklmnop\\\"qrstuvwxyz\"",
            "\"0123456789abcdef\u{7}\"",
        ];
        for case in cases {
            let ours = check(case).is_ok();
            let theirs = serde_json::from_str::<serde_json::Value>(case).is_ok();
            assert_eq!(ours, theirs, "{case:?}");
        }
    }

    #[test]
    fn follows_the_reference_where_serde_json_differs() {
        // Measured on the reference (pydantic-core's jiter): these are numbers.
        for accepted in ["NaN", "Infinity", "-Infinity", "1e400", "-1e400", "[NaN,Infinity]"] {
            assert!(check(accepted).is_ok(), "{accepted}");
        }
        for rejected in ["-NaN", "+Infinity", "nan", "inf", "+1", "Infinit", "NaNa"] {
            assert!(check(rejected).is_err(), "{rejected}");
        }
        // 200 non-empty containers deep, not 128; an empty one inside does not count.
        let nest = |depth: usize, inner: &str| "[".repeat(depth) + inner + &"]".repeat(depth);
        assert!(check(&nest(201, "")).is_ok());
        assert!(check(&nest(200, "{}")).is_ok());
        assert!(check(&nest(200, "1")).is_ok());
        let err = check(&nest(202, "")).unwrap_err();
        assert!(err.to_string().starts_with("recursion limit exceeded"), "{err}");
        // Regression: 200 arrays around a non-empty object were accepted (the reference rejects).
        assert!(check(&nest(200, r#"{"a":1}"#)).is_err());
        assert!(check(&nest(200, "[1]")).is_err());
    }

    /// Guards agreement on huge integers (measured on the reference): an integer part over 4,300
    /// digits makes the whole text invalid, where the number ends; it used to be read as infinity,
    /// and as the first value of a repeated key the call was even accepted.
    #[test]
    fn integers_over_4300_digits_are_out_of_range() {
        let digits = |n: usize| "1".repeat(n);
        for accepted in [
            digits(4300),
            format!("-{}", digits(4300)),
            format!("{}.5", digits(4300)),
            format!("1.{}", digits(9000)),
            format!("1e{}", digits(4301)),
        ] {
            assert!(check(&accepted).is_ok(), "{} digits", accepted.len());
        }
        let at = |text: &str| check(text).unwrap_err().to_string();
        assert_eq!(at(&format!("[{} ]", digits(4301))), "number out of range at line 1 column 4303");
        assert_eq!(at(&format!("[-{}e5]", digits(4301))), "number out of range at line 1 column 4304");
        assert_eq!(at(&format!("[{}.5]", digits(4301))), "number out of range at line 1 column 4303");
        // At the very end the reference points at the last digit.
        assert_eq!(at(&digits(4301)), "number out of range at line 1 column 4301");
        let repeated = format!(
            r#"{{"questions":{},"questions":[{{"header":"H","question":"Q?","options":[{{"label":"a"}},{{"label":"b"}}]}}]}}"#,
            digits(4301)
        );
        assert!(crate::Questions::from_json(&repeated).is_err());
    }

    /// Guards the scanner's jump: the mask's lowest bit is the first special byte, whatever
    /// follows it (a borrow may flag bytes above a match, never below).
    #[test]
    fn special_byte_detection_is_exact() {
        let special = |b: u8| b == b'"' || b == b'\\' || b < 0x20;
        for b in 0_u8..=255 {
            for at in 0..8 {
                for tail in [b'a', b'"', b'\\', 0x00, 0x1f, 0x21, 0x7f, 0xff] {
                    let mut word = [b'a'; 8];
                    word[at] = b;
                    word[at + 1..].fill(tail);
                    let expected = word.iter().position(|&x| special(x));
                    let mask = special_mask(u64::from_le_bytes(word));
                    let found = (mask != 0).then(|| (mask.trailing_zeros() / 8) as usize);
                    assert_eq!(found, expected, "{b:#x} at {at}, then {tail:#x}");
                }
                assert_eq!(SPECIAL[usize::from(b)], special(b), "{b:#x}");
            }
        }
    }

    #[test]
    fn errors_say_where() {
        assert_eq!(check("{\"a\":1,}").unwrap_err().to_string(), "trailing comma at line 1 column 8");
        assert_eq!(check("[1,\n 2] x").unwrap_err().to_string(), "trailing characters at line 2 column 5");
    }
}
