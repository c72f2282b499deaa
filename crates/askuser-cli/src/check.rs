//! `askuser check`: the conformance driver. JSON lines in the oracle's input format on stdin, one
//! verdict line each on stdout, with the oracle's fields, streamed in constant memory.

use std::borrow::Cow;
use std::io::{self, BufRead, Read, Write};
use std::process::ExitCode;

use crate::cli::{self, Command};
use askuser_core::{
    AnsweredBy, AskUserAnswer, AskUserRequest, AskUserResponse, AskUserResult, Location, Profile, Questions,
    ValidationError, Validator, ask_user_result,
};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;
use serde_json::ser::Formatter as _;
use serde_json::value::RawValue;

pub(crate) const HELP: &str = "\
usage: askuser check [--profile reference|extended] < cases.jsonl > verdicts.jsonl

--profile  the rules the cases are judged by (default: reference, the reference implementation's;
           extended: docs/contract.md §10, where an answer may also carry \"id\" and \"secret_ref\")

Reads one JSON object per line (split on LF; blank lines, ASCII white space and VT only, skipped):
  {\"kind\":\"request\",  \"args\": {...} | \"args_json\": \"...\"}
  {\"kind\":\"response\", \"args\": {...} | \"args_json\": \"...\", \"response\": {...}}
with optional \"id\" (echoed first), \"mode\": \"json\" (default) or \"python\" (validate the
parsed value instead of the text). A response is {\"cancelled\"?, \"answers\"?, \"timed_out\"?,
\"answered_by\"?}. Writes one ASCII-only JSON line per input line:
  request   {\"id\",\"ok\":true,\"normalized\"} or {\"id\",\"ok\":false,\"error\",\"loc\",\"model_text\"}
  response  {\"id\",\"ok\":true,\"normalized\",\"model_text\",\"outcome\"} or {\"id\",\"ok\":false,\"error\",\"stage\"}
A malformed line, or one over 16 MiB, gets {\"id\"?,\"ok\":false,\"input_error\"}. Exit status 0
unless reading or writing fails.
";

const CHECK: Command = Command::new("askuser check", HELP);

pub(crate) fn main(args: &[String]) -> ExitCode {
    let profile = match CHECK.options(args, |mut args| {
        let mut profile = Profile::Reference;
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--profile" => profile = cli::profile(&arg, &args.value(&arg, "reference or extended")?)?,
                other => return Err(format!("{} (cases are read from stdin)", cli::unknown(other))),
            }
        }
        Ok(profile)
    }) {
        Ok(profile) => profile,
        Err(status) => return status,
    };
    let stdin = io::stdin().lock();
    let stdout = io::stdout().lock();
    match run_with(stdin, stdout, Validator::new().with_profile(profile)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("askuser check: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The longest input line read; a longer one is skipped with an error line, so that memory stays
/// bounded whatever the input. Arguments over the 1 MiB cap are rejected anyway, and even written
/// as `\uXXXX` escapes they fit several times over.
const MAX_LINE_BYTES: usize = 16 << 20;

/// Streams verdicts for every line of `input` into `output`.
///
/// # Errors
///
/// Reading or writing failed.
#[cfg(test)]
pub(crate) fn run(input: impl BufRead, output: impl Write) -> io::Result<()> {
    run_with(input, output, Validator::new())
}

/// Streams verdicts for every line of `input` into `output`, judged by `validator`'s profile.
///
/// # Errors
///
/// Reading or writing failed.
pub(crate) fn run_with(mut input: impl BufRead, output: impl Write, validator: Validator) -> io::Result<()> {
    let mut output = io::BufWriter::with_capacity(1 << 16, output);
    let mut line = Vec::with_capacity(4096);
    let mut number = 0_u64;
    loop {
        line.clear();
        if Read::take(&mut input, MAX_LINE_BYTES as u64 + 1).read_until(b'\n', &mut line)? == 0 {
            break;
        }
        number += 1;
        let verdict = if line.len() > MAX_LINE_BYTES && line.last() != Some(&b'\n') {
            input.skip_until(b'\n')?;
            line.clear();
            line.shrink_to(4096);
            Verdict::input_error(None, format!("longer than {MAX_LINE_BYTES} bytes"))
        } else if line.iter().all(|b| b.is_ascii_whitespace() || *b == b'\x0b') {
            // Python's `bytes.strip()`, which the oracle skips blank lines with, strips VT too.
            continue;
        } else {
            match std::str::from_utf8(&line) {
                Ok(text) => evaluate(text, validator),
                Err(e) => Verdict::input_error(None, format!("not UTF-8: {e}")),
            }
        };
        let verdict = match verdict {
            Verdict { input_error: Some(message), .. } => {
                Verdict { input_error: Some(format!("line {number}: {message}")), ..verdict }
            }
            verdict => verdict,
        };
        let mut serializer = serde_json::Serializer::with_formatter(&mut output, AsciiFormatter);
        // `From` keeps the kind of a write error (a closed pipe), which `main` treats as normal.
        verdict.serialize(&mut serializer).map_err(io::Error::from)?;
        output.write_all(b"\n")?;
    }
    output.flush()
}

#[derive(Deserialize)]
struct Case<'a> {
    #[serde(default)]
    id: Option<Value>,
    #[serde(borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    mode: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "present")]
    args: Option<&'a RawValue>,
    #[serde(borrow, default)]
    args_json: Option<Cow<'a, str>>,
    #[serde(default)]
    response: Option<ResponseCase>,
}

/// The `id` of a line that is not a valid case, to echo it beside the error, as the oracle does.
#[derive(Deserialize)]
struct IdOnly {
    #[serde(default)]
    id: Option<Value>,
}

/// A field that is present, even when it is `null` (which `Option` alone would read as absent).
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// A response as the oracle reads it, plus our `answered_by`.
///
/// Its strings may hold lone surrogate escapes (`"\ud800"`), which the oracle's JSON reader
/// accepts and its checks reject; a Rust string cannot hold one, so each becomes U+FFFF, a
/// noncharacter that no valid header or label contains and that a custom answer may not contain:
/// the same verdict.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ResponseCase {
    #[serde(default)]
    cancelled: bool,
    #[serde(default)]
    answers: Vec<AnswerCase>,
    #[serde(default)]
    timed_out: bool,
    #[serde(default)]
    answered_by: AnsweredBy,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AnswerCase {
    header: Lossy,
    #[serde(default)]
    selected: Vec<Lossy>,
    #[serde(default)]
    custom_answer: Option<Lossy>,
    /// Extended profile.
    #[serde(default)]
    id: Option<Lossy>,
    /// Extended profile.
    #[serde(default)]
    secret_ref: Option<Lossy>,
}

impl From<AnswerCase> for AskUserAnswer {
    fn from(answer: AnswerCase) -> Self {
        let mut out = AskUserAnswer::picked(answer.header.0, answer.selected.into_iter().map(|l| l.0));
        out.custom_answer = answer.custom_answer.map(|c| c.0);
        out.id = answer.id.map(|c| c.0);
        out.secret_ref = answer.secret_ref.map(|c| c.0);
        out
    }
}

/// A JSON string whose lone surrogates (WTF-8 in the bytes `serde_json` hands over) become U+FFFF.
struct Lossy(String);

impl<'de> Deserialize<'de> for Lossy {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl serde::de::Visitor<'_> for Visit {
            type Value = Lossy;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E>(self, s: &str) -> Result<Lossy, E> {
                Ok(Lossy(s.to_owned()))
            }
            fn visit_bytes<E>(self, bytes: &[u8]) -> Result<Lossy, E> {
                if let Ok(s) = std::str::from_utf8(bytes) {
                    return Ok(Lossy(s.to_owned()));
                }
                let mut out = String::with_capacity(bytes.len());
                for chunk in bytes.utf8_chunks() {
                    out.push_str(chunk.valid());
                    if !chunk.invalid().is_empty() {
                        out.push('\u{ffff}');
                    }
                }
                Ok(Lossy(out))
            }
        }
        d.deserialize_bytes(Visit)
    }
}

#[derive(Serialize, Default)]
struct Verdict {
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<Value>,
    ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    normalized: Option<Normalized>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    loc: Option<Location>,
    #[serde(skip_serializing_if = "Option::is_none")]
    model_text: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    outcome: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stage: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    input_error: Option<String>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum Normalized {
    Questions(Questions),
    Answers(Box<RawValue>),
    Sentence(String),
}

impl Verdict {
    fn input_error(id: Option<Value>, message: String) -> Self {
        Self { id, input_error: Some(message), ..Self::default() }
    }
}

fn evaluate(text: &str, validator: Validator) -> Verdict {
    let case: Case<'_> = match serde_json::from_str(text) {
        Ok(case) => case,
        Err(e) => {
            let id = serde_json::from_str::<IdOnly>(text).ok().and_then(|line| line.id);
            return Verdict::input_error(id, format!("not a valid case line: {e}"));
        }
    };
    let id = case.id.clone();
    match evaluate_case(case, validator) {
        Ok(verdict) => Verdict { id, ..verdict },
        Err(message) => Verdict::input_error(id, message),
    }
}

fn evaluate_case(case: Case<'_>, validator: Validator) -> Result<Verdict, String> {
    let python = match case.mode.as_deref() {
        None | Some("json") => false,
        Some("python") => true,
        Some(other) => return Err(format!("\"mode\" must be \"json\" or \"python\", not {other:?}")),
    };
    let is_response = match case.kind.as_deref() {
        Some("request") => false,
        Some("response") => true,
        _ => return Err("\"kind\" must be \"request\" or \"response\"".to_owned()),
    };
    // The line's own shape is checked before the arguments, as the oracle does.
    let response = match (is_response, case.response) {
        (false, _) => None,
        (true, None) => return Err("a response line needs \"response\"".to_owned()),
        (true, Some(response)) => Some(response),
    };
    let verdict = match (case.args, case.args_json.as_deref()) {
        (_, Some(text)) if python => {
            match serde_json::from_str::<Value>(if text.is_empty() { "{}" } else { text }) {
                Ok(value) => validator.validate_value(&value),
                Err(_) => validator.validate_json(text),
            }
        }
        (_, Some(text)) => validator.validate_json(text),
        (Some(raw), None) if python => match serde_json::from_str::<Value>(raw.get()) {
            Ok(value) => validator.validate_value(&value),
            // Nested deeper than `serde_json` reads into a value: the text path gives the verdict.
            Err(_) => validator.validate_json(raw.get()),
        },
        (Some(raw), None) => validator.validate_json(raw.get()),
        (None, None) => return Err("a line needs \"args\" or \"args_json\"".to_owned()),
    };
    let questions = match verdict {
        Ok(questions) => questions,
        Err(err) => {
            let stage = is_response.then_some("request");
            return Ok(Verdict { stage, ..rejected(&err) });
        }
    };
    let Some(case) = response else {
        return Ok(Verdict {
            ok: true,
            normalized: Some(Normalized::Questions(questions)),
            ..Verdict::default()
        });
    };
    let request = AskUserRequest::with_id("check", questions);
    let result = if case.timed_out {
        // The answerer's response is discarded unchecked when the timeout runs out.
        AskUserResult::timed_out_for(&request)
    } else {
        let answers = case.answers.into_iter().map(AskUserAnswer::from).collect();
        let mut response = AskUserResponse::answered(answers).with_answered_by(case.answered_by);
        response.cancelled = case.cancelled;
        match ask_user_result(&request, &response) {
            Ok(result) => result,
            Err(e) => {
                return Ok(Verdict {
                    error: Some(e.to_string()),
                    stage: Some("response"),
                    ..Verdict::default()
                });
            }
        }
    };
    let normalized = if result.text().starts_with('{') {
        // The answers in the order given: the rendered JSON itself, made ASCII like the rest of the line.
        let ascii = escape_non_ascii(result.text());
        Normalized::Answers(RawValue::from_string(ascii).map_err(|e| e.to_string())?)
    } else {
        Normalized::Sentence(result.text().to_owned())
    };
    Ok(Verdict {
        ok: true,
        normalized: Some(normalized),
        outcome: Some(result.outcome().as_str()),
        model_text: Some(result.into_text()),
        ..Verdict::default()
    })
}

fn rejected(err: &ValidationError) -> Verdict {
    Verdict {
        error: Some(err.to_string()),
        loc: Some(err.first().location().clone()),
        model_text: Some(err.retry_payload()),
        ..Verdict::default()
    }
}

/// JSON text with every non-ASCII character written as `\uXXXX`: the same value, since JSON's own
/// syntax is ASCII and such characters can only stand inside strings.
fn escape_non_ascii(json: &str) -> String {
    let mut out = Vec::with_capacity(json.len() + 16);
    // Writing into a Vec cannot fail.
    let _ = AsciiFormatter.write_string_fragment(&mut out, json);
    String::from_utf8(out).unwrap_or_default()
}

/// Escapes every non-ASCII character as `\uXXXX` (astral ones as surrogate pairs), so that no raw
/// U+2028 or U+0085 can split a line for a line-oriented reader — as the oracle's output does.
struct AsciiFormatter;

impl serde_json::ser::Formatter for AsciiFormatter {
    fn write_string_fragment<W: ?Sized + Write>(&mut self, writer: &mut W, fragment: &str) -> io::Result<()> {
        let mut start = 0;
        for (i, c) in fragment.char_indices() {
            if c.is_ascii() {
                continue;
            }
            writer.write_all(&fragment.as_bytes()[start..i])?;
            let mut units = [0_u16; 2];
            for unit in c.encode_utf16(&mut units) {
                write!(writer, "\\u{unit:04x}")?;
            }
            start = i + c.len_utf8();
        }
        writer.write_all(&fragment.as_bytes()[start..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(input: &str) -> String {
        let mut out = Vec::new();
        run(input.as_bytes(), &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn malformed_lines_get_an_error_line_each() {
        let out =
            check("not json\n{\"kind\":\"request\"}\n\n[1]\n{\"id\":7,\"kind\":\"nope\",\"args\":{}}\n");
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 4, "{out}");
        assert!(
            lines[0].starts_with(r#"{"ok":false,"input_error":"line 1: not a valid case line"#),
            "{}",
            lines[0]
        );
        assert!(
            lines[1].contains(r#""input_error":"line 2: a line needs \"args\" or \"args_json\"""#),
            "{}",
            lines[1]
        );
        assert!(lines[2].contains("line 4"), "{}", lines[2]);
        assert!(
            lines[3].starts_with(r#"{"id":7,"ok":false,"input_error":"line 5: \"kind\""#),
            "{}",
            lines[3]
        );
    }

    #[test]
    fn a_bad_line_keeps_its_id() {
        // Regression: a line whose response was malformed lost its id, unlike the oracle's error line.
        let args = r#"{"questions":[{"header":"H","question":"Q","options":[{"label":"A"},{"label":"B"}]}]}"#;
        let out = check(&format!(
            r#"{{"id":"r1","kind":"response","args":{args},"response":{{"answers":[{{"header":"H","selected":null}}]}}}}"#
        ));
        assert!(
            out.starts_with(r#"{"id":"r1","ok":false,"input_error":"line 1: not a valid case line"#),
            "{out}"
        );
    }

    #[test]
    fn a_lone_surrogate_in_an_answer_gets_a_verdict() {
        // Regression: the whole line was an input error; the oracle reads it and rejects the answer.
        let args = r#"{"questions":[{"header":"H","question":"Q","options":[{"label":"A"},{"label":"B"}]}]}"#;
        let line = |answer: &str| {
            format!(r#"{{"id":1,"kind":"response","args":{args},"response":{{"answers":[{answer}]}}}}"#)
        };
        let custom = check(&line(r#"{"header":"H","custom_answer":"a\ud800"}"#));
        assert!(
            custom.contains("must not contain control characters")
                && custom.contains(r#""stage":"response""#)
        );
        let header = check(&line(r#"{"header":"H\udc00","selected":["A"]}"#));
        assert!(header.contains("unknown or repeated question"), "{header}");
        let label = check(&line(r#"{"header":"H","selected":["\ud83dA"]}"#));
        assert!(label.contains("does not offer"), "{label}");
        let fine = check(&line(r#"{"header":"H","custom_answer":"\ud83d\ude00\n\u00e9"}"#));
        assert!(fine.contains(r#""model_text":"{\"H\":[\"\ud83d\ude00\\n\u00e9\"]}""#), "{fine}");
    }

    #[test]
    fn arguments_nested_deeper_than_serde_json_reads_still_get_a_verdict() {
        // `args` is held as raw text, which `serde_json` skips without recursing; in python mode,
        // where it is read into a value (limited to 128 levels), the text path gives the verdict.
        // Regression: in python mode such a line was an input error.
        let args = |depth: usize| {
            format!(
                r#"{{"questions":[{{"header":"H","question":"Q","options":[{{"label":"A"}},{{"label":"B"}}]}}],"x":{}1{}}}"#,
                "[".repeat(depth),
                "]".repeat(depth)
            )
        };
        for mode in ["json", "python"] {
            let line =
                |depth| format!(r#"{{"id":1,"kind":"request","mode":"{mode}","args":{}}}"#, args(depth));
            assert!(check(&line(150)).contains(r#""loc":["x"]"#), "{mode}");
            assert!(check(&line(199)).contains(r#""loc":["x"]"#), "{mode}");
            assert!(check(&line(2000)).contains("not valid JSON: recursion limit exceeded"), "{mode}");
        }
    }

    #[test]
    fn an_overlong_line_is_skipped_with_an_error_line() {
        let long =
            format!("{{\"id\":1,\"kind\":\"request\",\"args_json\":\"{}\"}}\n", "x".repeat(MAX_LINE_BYTES));
        let out = check(&format!("{long}{{\"id\":2,\"kind\":\"request\",\"args\":{{}}}}\n"));
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 2, "{out}");
        assert!(lines[0].contains("line 1: longer than"), "{}", lines[0]);
        assert!(lines[1].starts_with(r#"{"id":2,"ok":false"#), "{}", lines[1]);
    }

    #[test]
    fn output_is_ascii_with_the_oracle_fields() {
        let case = r#"{"id":"é","kind":"response","args":{"questions":[{"header":"Größe","question":"Q","options":[{"label":"中"},{"label":"😀"}]}]},"response":{"answers":[{"header":"Größe","selected":["😀"]}]}}"#;
        let out = check(case);
        assert!(out.is_ascii(), "{out}");
        let verdict: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(verdict["id"], "é");
        assert_eq!(verdict["ok"], true);
        assert_eq!(verdict["outcome"], "answered");
        assert_eq!(verdict["model_text"], "{\"Größe\":[\"😀\"]}");
        assert_eq!(verdict["normalized"]["Größe"][0], "😀");
    }

    #[test]
    fn request_errors_carry_loc_and_the_retry_payload() {
        let out =
            check(r#"{"kind":"request","args":{"questions":[{"header":"","question":"Q","options":[]}]}}"#);
        let verdict: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(verdict["ok"], false);
        assert_eq!(verdict["loc"], serde_json::json!(["questions", 0, "header"]));
        let retry: Value = serde_json::from_str(verdict["model_text"].as_str().unwrap()).unwrap();
        assert_eq!(retry["problems"].as_array().unwrap().len(), 2);
    }

    #[test]
    fn null_args_is_a_rejection_not_a_missing_field() {
        let out = check(r#"{"kind":"request","args":null}"#);
        assert!(out.contains(r#""loc":[]"#), "{out}");
        assert!(out.contains("must be an object, not null"), "{out}");
    }

    #[test]
    fn both_modes_and_stages() {
        let args = r#"{"questions":[{"header":"H","question":"Q","options":[{"label":"A"},{"label":"B"}]}]}"#;
        let python = check(&format!(r#"{{"kind":"request","mode":"python","args":{args}}}"#));
        let json = check(&format!(r#"{{"kind":"request","args":{args}}}"#));
        assert_eq!(python, json);
        let declined =
            check(&format!(r#"{{"kind":"response","args":{args},"response":{{"cancelled":true}}}}"#));
        assert!(declined.contains(r#""outcome":"declined""#), "{declined}");
        let timed_out =
            check(&format!(r#"{{"kind":"response","args":{args},"response":{{"timed_out":true}}}}"#));
        assert!(timed_out.contains(r#""outcome":"timed_out""#), "{timed_out}");
        let bad = check(&format!(r#"{{"kind":"response","args":{args},"response":{{"answers":[]}}}}"#));
        assert!(bad.contains(r#""stage":"response""#), "{bad}");
        let unattended = check(&format!(
            r#"{{"kind":"response","args":{args},"response":{{"answers":[{{"header":"H","selected":["A"]}}],"answered_by":"unattended"}}}}"#
        ));
        assert!(unattended.contains(r#""outcome":"defaulted""#), "{unattended}");
        assert!(unattended.contains(r#"\"answered_by\":\"unattended\""#), "{unattended}");
    }

    /// Guards agreement with the oracle (measured): a line of ASCII white space and VT is skipped,
    /// as Python's `bytes.strip()` skips it, and python-mode floats are read correctly rounded
    /// (this halfway literal is 1.0; `serde_json` without `float_roundtrip` read 1.0000000000000002).
    #[test]
    fn blank_lines_and_floats_as_the_oracle_reads_them() {
        let out = check(" \x0b\t\x0c\n\x0b\n{\"id\":1,\"kind\":\"request\",\"args\":{}}\n");
        assert_eq!(out.lines().count(), 1, "{out}");
        let float = check(
            r#"{"kind":"request","mode":"python","args":{"questions":[{"header":"H","question":"Q","options":[{"label":"A"},{"label":"B"}],"multi_select":1.00000000000000011102230246251565404236316680908203125}]}}"#,
        );
        assert!(float.contains(r#""ok":true"#) && float.contains(r#""multi_select":true"#), "{float}");
    }
}
