//! `askuser check` as a process: the whole public corpus through stdin and stdout.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::Value;

const CASES: &str = include_str!("../../../askuser-core/tests/data/public.jsonl");
const EXPECTED: &str = include_str!("../../../askuser-core/tests/data/public.expected.jsonl");

fn check(input: &str) -> (String, i32) {
    check_with(&[], input)
}

fn check_with(args: &[&str], input: &str) -> (String, i32) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_askuser"))
        .arg("check")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run askuser");
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let input = input.to_owned();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let output = child.wait_with_output().expect("askuser finishes");
    writer.join().expect("the writer thread").expect("write the cases");
    (String::from_utf8(output.stdout).expect("UTF-8 output"), output.status.code().unwrap_or(-1))
}

#[test]
fn public_corpus_verdicts_match_the_oracle_line_by_line() {
    let (out, status) = check(CASES);
    assert_eq!(status, 0);
    assert!(out.is_ascii());
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 365);
    let mut differences = Vec::new();
    for ((line, expected), case) in lines.iter().zip(EXPECTED.lines()).zip(CASES.lines()) {
        let ours: Value = serde_json::from_str(line).expect("a JSON verdict line");
        let expected: Value = serde_json::from_str(expected).expect("a JSON expected line");
        let case: Value = serde_json::from_str(case).expect("a JSON case line");
        assert_eq!(ours["id"], expected["id"]);
        if ours["ok"] != expected["ok"] {
            differences.push(ours["id"].clone());
            continue;
        }
        if ours["ok"] == true {
            let answered = expected["normalized"].is_object() && case["kind"] == "response";
            if case["kind"] == "request" || answered {
                assert_eq!(ours["normalized"], expected["normalized"], "{}", ours["id"]);
            }
            if answered {
                assert_eq!(ours["model_text"], expected["model_text"], "{}", ours["id"]);
                assert_eq!(ours["outcome"], "answered");
            }
        } else if let Some(first) = expected["errors"].get(0) {
            assert_eq!(ours["loc"], first["loc"], "{}", ours["id"]);
            assert!(ours["error"].is_string() && ours["model_text"].is_string(), "{line}");
        }
        assert_eq!(ours.get("stage"), expected.get("stage"), "{}", ours["id"]);
    }
    // Code points assigned after Unicode 14.0 (cases tagged unicode-version-sensitive).
    assert_eq!(differences.len(), 3, "{differences:?}");
}

#[test]
fn bad_lines_get_error_lines_and_the_stream_goes_on() {
    let input = "{\"id\":1,\"kind\":\"request\",\"args_json\":\"{}\"}\n\u{fffd}garbage\n\n{\"id\":3}\n";
    let (out, status) = check(input);
    assert_eq!(status, 0);
    let lines: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).expect("JSON")).collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert_eq!(lines[0]["loc"], serde_json::json!(["questions"]));
    assert!(lines[1]["input_error"].as_str().unwrap().starts_with("line 2:"), "{out}");
    assert_eq!(lines[2]["id"], 3);
    assert!(lines[2]["input_error"].as_str().unwrap().starts_with("line 4:"), "{out}");
}

#[test]
fn invalid_utf8_is_an_error_line() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_askuser"))
        .arg("check")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("run askuser");
    child.stdin.take().expect("stdin").write_all(b"{\"kind\":\xff}\n").expect("write");
    let output = child.wait_with_output().expect("finishes");
    let out = String::from_utf8(output.stdout).expect("UTF-8");
    assert!(out.contains("line 1: not UTF-8"), "{out}");
}

const EXTENDED: &str = include_str!("../../../askuser-core/tests/data/extended.jsonl");
const EXTENDED_EXPECTED: &str = include_str!("../../../askuser-core/tests/data/extended.expected.jsonl");

#[test]
fn extended_corpus_verdicts_follow_the_rules_line_by_line() {
    let (out, status) = check_with(&["--profile", "extended"], EXTENDED);
    assert_eq!(status, 0);
    assert!(out.is_ascii());
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), EXTENDED_EXPECTED.lines().count());
    for (line, expected) in lines.iter().zip(EXTENDED_EXPECTED.lines()) {
        let ours: Value = serde_json::from_str(line).expect("a JSON verdict line");
        let expected: Value = serde_json::from_str(expected).expect("a JSON expected line");
        let id = &expected["id"];
        assert_eq!(&ours["id"], id);
        assert_eq!(ours["ok"], expected["ok"], "{line}");
        if let Some(loc) = expected.get("loc") {
            assert_eq!(&ours["loc"], loc, "{line}");
            let retry: Value =
                serde_json::from_str(ours["model_text"].as_str().expect("retry text")).expect("JSON");
            assert_eq!(retry["problems"][0]["type"], expected["type"], "{line}");
        }
        if let Some(ids) = expected.get("ids") {
            let ours: Vec<&Value> = ours["normalized"]["questions"]
                .as_array()
                .expect("questions")
                .iter()
                .map(|q| &q["id"])
                .collect();
            assert_eq!(&Value::from(ours.into_iter().cloned().collect::<Vec<_>>()), ids, "{line}");
        }
        if let Some(text) = expected.get("model_text") {
            assert_eq!(&ours["model_text"], text, "{line}");
        }
        assert_eq!(ours.get("stage"), expected.get("stage"), "{line}");
    }
    // A value typed where a secret reference belongs is refused without being repeated.
    assert!(EXTENDED.contains("hunter2") && !out.contains("hunter2"), "a secret value in the output");
}

#[test]
fn the_profile_is_checked() {
    let (out, status) = check_with(&["--profile", "extended"], "");
    assert_eq!((out.as_str(), status), ("", 0));
    assert_eq!(check_with(&["--profile=fancy"], "").1, 2);
    assert_eq!(check_with(&["--profile"], "").1, 2);
    // The reference profile does not know the extended keys.
    let line =
        r#"{"id":1,"kind":"request","args":{"questions":[{"kind":"text","header":"H","question":"Q"}]}}"#;
    assert!(check(line).0.contains(r#""ok":false"#));
    assert!(check_with(&["--profile=extended"], line).0.contains(r#""ok":true"#));
}

/// `askuser check … | head -1`: a reader that stops early closes the pipe, which is normal for a
/// filter: exit 0 and nothing on stderr (it printed "Broken pipe" and exited 1).
#[test]
fn a_closed_stdout_ends_quietly() {
    use std::io::{BufRead as _, BufReader};
    let mut child = Command::new(env!("CARGO_BIN_EXE_askuser"))
        .arg("check")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run askuser");
    let mut stdin = child.stdin.take().expect("stdin is piped");
    // Enough verdicts to fill the pipe many times over.
    let writer = std::thread::spawn(move || {
        for _ in 0..200 {
            if stdin.write_all(CASES.as_bytes()).is_err() {
                break;
            }
        }
    });
    let mut first = String::new();
    BufReader::new(child.stdout.take().expect("stdout is piped")).read_line(&mut first).expect("a verdict");
    assert!(first.starts_with('{'), "{first}");
    // The reader is dropped here: the pipe is closed.
    let output = child.wait_with_output().expect("askuser finishes");
    writer.join().expect("the writer thread");
    assert_eq!(String::from_utf8_lossy(&output.stderr), "");
    assert_eq!(output.status.code(), Some(0));
}
