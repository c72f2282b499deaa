//! One line per rule of docs/contract.md §2–§3 beyond the corpora. Verdicts were confirmed with the oracle
//! (`tests/oracle/oracle.py`) where the spec leaves room.

use askuser_core::{
    AnsweredBy, AskUserAnswer, AskUserRequest, AskUserResponse, AskUserResult, DECLINED, Outcome, Question,
    QuestionOption, Questions, ResponseError, TIMED_OUT, Validator, ask_user_result, check_response,
};
use serde_json::{Value, json};

/// A one-question call with the given header, question text and labels.
fn call(header: &str, question: &str, labels: &[&str]) -> Value {
    let options: Vec<Value> = labels.iter().map(|l| json!({ "label": l })).collect();
    json!({ "questions": [{ "header": header, "question": question, "options": options }] })
}

/// Validates through both input paths and checks they agree.
fn validate(args: &Value) -> Result<Questions, askuser_core::ValidationError> {
    let text = Questions::from_json(&args.to_string());
    assert_eq!(text, Questions::from_value(args), "text and value paths disagree on {args}");
    text
}

#[track_caller]
#[expect(clippy::needless_pass_by_value, reason = "callers build the value in place")]
fn accepts(args: Value) -> Questions {
    match validate(&args) {
        Ok(q) => q,
        Err(e) => panic!("rejected {args}: {e}"),
    }
}

#[track_caller]
#[expect(clippy::needless_pass_by_value, reason = "callers build the value in place")]
fn rejects(args: Value, code: &str, loc: &str) {
    match validate(&args) {
        Ok(_) => panic!("accepted {args}"),
        Err(e) => {
            let first = e.first();
            assert_eq!((first.kind().code(), first.location().to_string().as_str()), (code, loc), "{e}");
        }
    }
}

#[track_caller]
fn rejects_text(text: &str, code: &str) {
    let err = Questions::from_json(text).expect_err(text);
    assert_eq!(err.first().kind().code(), code, "{err}");
}

#[track_caller]
fn header_ok(header: &str, normalized: &str) {
    let q = accepts(call(header, "Q?", &["A", "B"]));
    assert_eq!(q.as_slice()[0].header(), normalized, "{header:?}");
}

#[track_caller]
fn header_bad(header: &str, code: &str) {
    rejects(call(header, "Q?", &["A", "B"]), code, "questions[0].header");
}

#[track_caller]
fn question_ok(text: &str) {
    accepts(call("H", text, &["A", "B"]));
}

#[track_caller]
fn question_bad(text: &str) {
    rejects(call("H", text, &["A", "B"]), "forbidden_character", "questions[0].question");
}

#[test]
fn edges_are_trimmed_with_white_space_only() {
    for edge in [
        "\n", "\t", "\r\n", "\u{85}", "\u{2028}", "\u{2029}", "\u{a0}", "\u{3000}", "\u{1680}", "\u{b}",
        "\u{c}",
    ] {
        header_ok(&format!("{edge}Name{edge}"), "Name");
    }
    // Not White_Space, so not trimmed, so rejected even at the ends.
    for edge in [
        "\0", "\x1b", "\x7f", "\x1c", "\x1d", "\x1e", "\x1f", "\u{200b}", "\u{feff}", "\u{ad}", "\u{202e}",
        "\u{2066}", "\u{180e}",
    ] {
        header_bad(&format!("Name{edge}"), "forbidden_character");
        header_bad(&format!("{edge}Name"), "forbidden_character");
    }
}

#[test]
fn inside_a_string_only_spaces_and_lf_where_multiline() {
    for inner in ["\t", "\r", "\r\n", "\u{85}", "\u{2028}", "\u{2029}", "\n", "\x1b[31m", "\u{200d}"] {
        header_bad(&format!("A{inner}B"), "forbidden_character");
    }
    for space in ["\u{a0}", "\u{3000}", "\u{2009}", "\u{202f}", "\u{205f}", "\u{1680}"] {
        header_ok(&format!("A{space}B"), &format!("A{space}B"));
    }
    question_ok("Line one\nLine two");
    question_ok("Line one\n\n\nLine two");
    question_bad("Line one\r\nLine two");
    question_bad("Tab\there");
    question_bad("bell\x07");
}

#[test]
fn character_classes() {
    // Combining marks, variation selectors, skin tones, Hangul filler, braille blank, RTL letters.
    for ok in [
        "e\u{301}",
        "\u{2764}\u{fe0f}",
        "\u{1f44d}\u{1f3fb}",
        "\u{3164}",
        "\u{2800}",
        "שלום",
        "مرحبا",
        "中文",
    ] {
        header_ok(ok, ok);
    }
    // ZWJ sequences and tag sequences (Cf), private use (Co), noncharacters and unassigned (Cn).
    let family = "\u{1f468}\u{200d}\u{1f469}\u{200d}\u{1f467}";
    let england = "\u{1f3f4}\u{e0067}\u{e0062}\u{e0065}\u{e006e}\u{e0067}\u{e007f}";
    for bad in [family, england, "\u{e000}", "\u{f0000}", "\u{fffe}", "\u{fdd0}", "\u{10ffff}", "\u{378}"] {
        header_bad(bad, "forbidden_character");
    }
}

#[test]
fn lengths_count_code_points_after_trimming() {
    header_ok(&"x".repeat(25), &"x".repeat(25));
    header_bad(&"x".repeat(26), "string_too_long");
    header_ok(&format!("  {}  ", "x".repeat(25)), &"x".repeat(25));
    header_ok(&"😀".repeat(25), &"😀".repeat(25));
    header_bad(&"😀".repeat(26), "string_too_long");
    // e + combining acute counts two; a flag (two regional indicators) counts two.
    header_bad(&"e\u{301}".repeat(13), "string_too_long");
    header_ok(&"\u{1f1eb}\u{1f1f7}".repeat(12), &"\u{1f1eb}\u{1f1f7}".repeat(12));
    header_bad(&"\u{1f1eb}\u{1f1f7}".repeat(13), "string_too_long");
    header_bad("", "string_too_short");
    header_bad(" \t\n ", "string_too_short");
    // One problem per string: too long wins over a control character.
    header_bad(&format!("{}\x1b", "x".repeat(30)), "string_too_long");
    accepts(call("H", &"q".repeat(500), &["A", "B"]));
    rejects(call("H", &"q".repeat(501), &["A", "B"]), "string_too_long", "questions[0].question");
    accepts(call("H", "Q", &[&"l".repeat(50), "B"]));
    rejects(call("H", "Q", &[&"l".repeat(51), "B"]), "string_too_long", "questions[0].options[0].label");
}

#[test]
fn descriptions() {
    let with = |d: Value| json!({ "questions": [{ "header": "H", "question": "Q", "options": [{ "label": "A", "description": d }, { "label": "B" }] }] });
    let description = |args: Value| {
        let q = accepts(args);
        q.as_slice()[0].options()[0].description().map(str::to_owned)
    };
    assert_eq!(description(with(Value::Null)), None);
    assert_eq!(description(call("H", "Q", &["A", "B"])), None);
    assert_eq!(description(with(json!("   \t\n "))), Some(String::new()));
    assert_eq!(description(with(json!(" two\nlines "))), Some("two\nlines".to_owned()));
    assert_eq!(description(with(json!("d".repeat(200)))), Some("d".repeat(200)));
    rejects(with(json!("d".repeat(201))), "string_too_long", "questions[0].options[0].description");
    rejects(with(json!(1)), "wrong_type", "questions[0].options[0].description");
    rejects(with(json!("a\tb")), "forbidden_character", "questions[0].options[0].description");
}

#[test]
fn multi_select_coercion() {
    let with = |v: Value| json!({ "questions": [{ "header": "H", "question": "Q", "options": [{ "label": "A" }, { "label": "B" }], "multi_select": v }] });
    let truthy = [
        json!(true),
        json!(1),
        json!(1.0),
        json!("true"),
        json!("YES"),
        json!("On"),
        json!("1"),
        json!("t"),
        json!("Y"),
    ];
    for v in truthy {
        assert!(accepts(with(v.clone())).as_slice()[0].multi_select(), "{v}");
    }
    let falsy = [
        json!(false),
        json!(0),
        json!(0.0),
        json!(-0.0),
        json!("False"),
        json!("no"),
        json!("OFF"),
        json!("0"),
        json!("f"),
        json!("n"),
    ];
    for v in falsy {
        assert!(!accepts(with(v.clone())).as_slice()[0].multi_select(), "{v}");
    }
    for v in [json!(2), json!(-1), json!(1.5), json!(" true"), json!(""), json!("1.0"), json!("maybe")] {
        rejects(with(v), "bool_parsing", "questions[0].multi_select");
    }
    for v in [Value::Null, json!([]), json!({})] {
        rejects(with(v), "wrong_type", "questions[0].multi_select");
    }
    assert!(!accepts(call("H", "Q", &["A", "B"])).as_slice()[0].multi_select());
    for text in ["1E0", "10e-1", "1.00"] {
        let args = format!(
            r#"{{"questions":[{{"header":"H","question":"Q","options":[{{"label":"A"}},{{"label":"B"}}],"multi_select":{text}}}]}}"#
        );
        assert!(Questions::from_json(&args).unwrap().as_slice()[0].multi_select(), "{text}");
    }
}

#[test]
fn structure() {
    rejects(json!([]), "wrong_type", "arguments");
    rejects(Value::Null, "wrong_type", "arguments");
    rejects(json!({}), "missing", "questions");
    rejects(json!({ "questions": [] }), "too_short", "questions");
    let one = call("H", "Q", &["A", "B"])["questions"][0].clone();
    // A single object is not wrapped; a string holding a list is not parsed.
    rejects(json!({ "questions": one }), "wrong_type", "questions");
    rejects(json!({ "questions": json!([one]).to_string() }), "wrong_type", "questions");
    rejects(json!({ "questions": [one, "x"] }), "wrong_type", "questions[1]");
    rejects(json!({ "questions": [null] }), "wrong_type", "questions[0]");
    rejects(
        json!({ "questions": [{ "header": "H", "question": "Q", "options": "A, B" }] }),
        "wrong_type",
        "questions[0].options",
    );
    rejects(
        json!({ "questions": [{ "header": "H", "question": "Q", "options": ["A", "B"] }] }),
        "wrong_type",
        "questions[0].options[0]",
    );
    rejects(
        json!({ "questions": [{ "header": 1, "question": "Q", "options": [{ "label": "A" }, { "label": "B" }] }] }),
        "wrong_type",
        "questions[0].header",
    );
    rejects(
        json!({ "questions": [{ "question": "Q", "options": [{ "label": "A" }, { "label": "B" }] }] }),
        "missing",
        "questions[0].header",
    );
    rejects(
        json!({ "questions": [{ "header": "H", "question": "Q", "options": [{ "label": "A" }] }] }),
        "too_short",
        "questions[0].options",
    );
    let seven: Vec<String> = (0..7).map(|i| format!("L{i}")).collect();
    let seven: Vec<&str> = seven.iter().map(String::as_str).collect();
    rejects(call("H", "Q", &seven), "too_long", "questions[0].options");
    let eleven: Vec<Value> = (0..11).map(|i| json!({ "header": format!("H{i}"), "question": "Q", "options": [{ "label": "A" }, { "label": "B" }] })).collect();
    rejects(json!({ "questions": eleven }), "too_long", "questions");
    let ten: Vec<Value> = eleven[..10].to_vec();
    assert_eq!(accepts(json!({ "questions": ten })).len(), 10);
}

#[test]
fn unknown_keys_at_every_level() {
    let mut args = call("H", "Q", &["A", "B"]);
    args["extra"] = json!(1);
    rejects(args, "extra_forbidden", "extra");
    let mut args = call("H", "Q", &["A", "B"]);
    args["questions"][0]["multiSelect"] = json!(true);
    rejects(args, "extra_forbidden", "questions[0].multiSelect");
    let mut args = call("H", "Q", &["A", "B"]);
    args["questions"][0]["options"][1]["id"] = json!("b");
    rejects(args, "extra_forbidden", "questions[0].options[1].id");
    // Regression: an unknown key went into the message raw (a terminal escape in a host's log line).
    let mut args = call("H", "Q", &["A", "B"]);
    args["questions"][0]["\u{1b}[2J\u{202e}.x"] = json!(1);
    rejects(args, "extra_forbidden", r#"questions[0]["\u001b[2J\u202e.x"]"#);
    rejects(json!({ "": 1, "questions": [] }), "too_short", "questions");
    let err = validate(&json!({ "": 1, "questions": [] })).unwrap_err();
    assert_eq!(err.problems()[1].location().to_string(), r#"[""]"#);
}

#[test]
fn every_problem_is_reported_in_schema_order() {
    let args = json!({ "zz": 1, "questions": [{ "options": [{ "label": "" }, 3], "question": "Q\x07", "header": "x".repeat(26), "bogus": true }] });
    let err = validate(&args).unwrap_err();
    let found: Vec<(String, &str)> =
        err.problems().iter().map(|p| (p.location().to_string(), p.kind().code())).collect();
    let expected = [
        ("questions[0].header", "string_too_long"),
        ("questions[0].question", "forbidden_character"),
        ("questions[0].options[0].label", "string_too_short"),
        ("questions[0].options[1]", "wrong_type"),
        // No valid option left: under two, as the reference says after the items' problems.
        ("questions[0].options", "too_short"),
        ("questions[0].bogus", "extra_forbidden"),
        ("zz", "extra_forbidden"),
    ];
    let found: Vec<(&str, &str)> = found.iter().map(|(l, c)| (l.as_str(), *c)).collect();
    assert_eq!(found, expected);
}

#[test]
fn a_flood_of_problems_is_listed_up_to_the_cap_and_counted() {
    // Regression: 1 MiB of `""` items gave 262,000 problems, a 20 MB retry and 100 MB of memory.
    let text = format!(r#"{{"questions":[{}]}}"#, vec![r#""""#; 100_000].join(","));
    let err = Questions::from_json(&text).unwrap_err();
    assert_eq!(err.problems().len(), askuser_core::MAX_LISTED_PROBLEMS);
    assert_eq!(err.omitted(), 100_001 - askuser_core::MAX_LISTED_PROBLEMS);
    let first = (err.first().kind().code(), err.first().location().to_string());
    assert_eq!(first, ("too_long", "questions".to_owned()));
    assert!(err.retry_payload().len() < 16_000 && err.retry_payload().ends_with(r#""omitted":99937}"#));
    assert!(err.to_string().ends_with("; and 99937 more"), "{err}");
    // Under the cap nothing is omitted.
    let err = Questions::from_json(r#"{"questions":[1,2]}"#).unwrap_err();
    assert_eq!((err.problems().len(), err.omitted()), (2, 0));
    assert!(!err.retry_payload().contains("omitted"));
}

#[test]
fn strict_json_text() {
    let good = r#"{"questions":[{"header":"H","question":"Q","options":[{"label":"A"},{"label":"B"}]}]}"#;
    assert!(Questions::from_json(good).is_ok());
    rejects_text("", "missing");
    rejects_text("   ", "json_invalid");
    rejects_text(&format!("\u{feff}{good}"), "json_invalid");
    rejects_text(&format!("{good} x"), "json_invalid");
    rejects_text(&good.replace(r#"{"label":"B"}]"#, r#"{"label":"B"},]"#), "json_invalid");
    rejects_text(&good.replace(r#""H""#, "\"H\u{1}\""), "json_invalid");
    rejects_text(&good.replace(r#""H""#, r#""\ud800""#), "json_invalid");
    rejects_text(&good.replace(r#""H""#, r#""\ude00\ud83d""#), "json_invalid");
    // A valid surrogate pair is one code point.
    let emoji = Questions::from_json(&good.replace(r#""H""#, r#""\ud83d\ude00""#)).unwrap();
    assert_eq!(emoji.as_slice()[0].header(), "😀");
    // Where the reference's parser is laxer than RFC 8259, we follow it (measured on the oracle).
    let with_multi = |v: &str| good.replace("]}]}", &format!(r#"],"multi_select":{v}}}]}}"#));
    for v in ["NaN", "Infinity", "-Infinity", "1e400"] {
        rejects_text(&with_multi(v), "bool_parsing");
    }
    rejects_text(&with_multi("+1"), "json_invalid");
    // Nesting: the reference's parser allows 200 non-empty containers, the root included; an empty
    // one does not count. Regression: 200 objects under the root parsed (we counted 201 of any kind).
    let nested = |depth: usize, inner: &str| {
        good.replace("]}]}", &format!("]}}],\"x\":{}{inner}{}}}", "{\"a\":".repeat(depth), "}".repeat(depth)))
    };
    rejects_text(&nested(199, "1"), "extra_forbidden");
    rejects_text(&nested(200, "1"), "json_invalid");
    rejects_text(&nested(199, "{}"), "extra_forbidden");
    rejects_text(&nested(199, r#"{"b":1}"#), "json_invalid");
    // An escaped control character parses, then fails the character rule.
    rejects_text(&good.replace(r#""H""#, r#""H\u001b""#), "forbidden_character");
}

#[test]
fn duplicate_keys_last_one_wins() {
    let first_bad = r#"{"questions":[],"questions":[{"header":"H","question":"Q","options":[{"label":"A"},{"label":"B"}]}]}"#;
    assert!(Questions::from_json(first_bad).is_ok());
    let last_bad = r#"{"questions":[{"header":"H","question":"Q","options":[{"label":"A"},{"label":"B"}]}],"questions":[]}"#;
    rejects_text(last_bad, "too_short");
    let header_twice = r#"{"questions":[{"header":"Old","header":"New","question":"Q","options":[{"label":"A","label":"Z"},{"label":"B"}]}]}"#;
    let q = Questions::from_json(header_twice).unwrap();
    assert_eq!(q.as_slice()[0].header(), "New");
    assert_eq!(q.as_slice()[0].options()[0].label(), "Z");
}

#[test]
fn size_cap_is_checked_before_parsing() {
    let args = call("H", "Q", &["A", "B"]).to_string();
    let validator = Validator::new().with_max_argument_bytes(args.len());
    assert!(validator.validate_json(&args).is_ok());
    let err = Validator::new().with_max_argument_bytes(args.len() - 1).validate_json(&args).unwrap_err();
    assert_eq!(err.first().kind().code(), "too_large");
    assert!(
        err.retry_payload().contains(&format!("more than the limit of {} bytes", args.len() - 1)),
        "{}",
        err.retry_payload()
    );
    // Not even parsed: garbage over the cap reports the size, not the syntax.
    let err = Validator::new().with_max_argument_bytes(4).validate_json("{{{{{").unwrap_err();
    assert_eq!(err.first().kind().code(), "too_large");
    assert_eq!(Validator::new().max_argument_bytes(), 1 << 20);
}

#[track_caller]
fn labels(a: &str, b: &str, duplicate: bool) {
    let args = call("H", "Q", &[a, b]);
    if duplicate {
        rejects(args, "duplicate_label", "questions[0]");
    } else {
        accepts(args);
    }
    let two = json!({ "questions": [
        { "header": a, "question": "Q", "options": [{ "label": "A" }, { "label": "B" }] },
        { "header": b, "question": "Q", "options": [{ "label": "A" }, { "label": "B" }] },
    ] });
    if duplicate {
        rejects(two, "duplicate_header", "questions");
    } else {
        accepts(two);
    }
}

#[test]
fn uniqueness_fold() {
    for (a, b) in [
        ("Straße", "STRASSE"),
        ("ß", "ẞ"),
        ("ß", "ss"),
        ("Ａｐｐ", "app"),
        ("ﬁle", "FILE"),
        ("\u{212a}", "k"),
        ("ς", "σ"),
        ("a\u{a0}b", "a b"),
        ("a\u{3000}b", "a b"),
        ("x²", "x2"),
        ("①", "1"),
        ("Yes", "YES"),
        ("e\u{301}", "é"),
    ] {
        labels(a, b, true);
    }
    for (a, b) in [
        ("İ", "i"),
        ("ı", "i"),
        ("a  b", "a b"),
        ("❤", "❤\u{fe0f}"),
        ("-", "\u{2212}"),
        ("a", "\u{430}"),
        ("\u{390}", "\u{399}\u{308}\u{301}"),
        ("\u{3b0}", "\u{3a5}\u{308}\u{301}"),
    ] {
        labels(a, b, false);
    }
}

#[test]
fn uniqueness_scope_and_precedence() {
    // The same label in two questions, and a header equal to a label or the question text, are fine.
    let args = json!({ "questions": [
        { "header": "Yes", "question": "Yes", "options": [{ "label": "Yes" }, { "label": "No" }] },
        { "header": "Two", "question": "Q", "options": [{ "label": "Yes" }, { "label": "No" }] },
    ] });
    accepts(args);
    // Duplicate labels win over duplicate headers: the question is invalid, so headers are not compared.
    let both = json!({ "questions": [
        { "header": "H", "question": "Q", "options": [{ "label": "A" }, { "label": "a" }] },
        { "header": "h", "question": "Q", "options": [{ "label": "A" }, { "label": "B" }] },
    ] });
    let err = validate(&both).unwrap_err();
    assert_eq!(err.problems().len(), 1, "{err}");
    assert_eq!(err.first().kind().code(), "duplicate_label");
    // Labels are not compared while another field of the question is invalid.
    let invalid = json!({ "questions": [{ "header": "", "question": "Q", "options": [{ "label": "A" }, { "label": "a" }] }] });
    let err = validate(&invalid).unwrap_err();
    assert_eq!(err.problems().len(), 1, "{err}");
    assert_eq!(err.first().kind().code(), "string_too_short");
    let message = validate(&call("H", "Q", &["Go", "GO"])).unwrap_err().to_string();
    assert!(message.contains(r#"options[0].label and options[1].label are both "GO""#), "{message}");
}

#[test]
fn retry_payload_shape() {
    let err = validate(&call("x".repeat(26).as_str(), "Q", &["A", "B"])).unwrap_err();
    let payload: Value = serde_json::from_str(&err.retry_payload()).unwrap();
    assert_eq!(payload["error"], "invalid_arguments");
    assert!(payload["message"].as_str().unwrap().contains("call the tool again"));
    assert_eq!(
        payload["problems"],
        json!([{
            "type": "string_too_long",
            "loc": ["questions", 0, "header"],
            "msg": "questions[0].header: must be at most 25 characters after trimming, got 26",
        }])
    );
}

#[test]
fn constructors_validate_like_the_wire() {
    let option = QuestionOption::new(" Patch ", Some("  ")).unwrap();
    assert_eq!((option.label(), option.description()), ("Patch", Some("")));
    let err = QuestionOption::new("a\u{200b}b", None).unwrap_err();
    assert_eq!(err.first().location().to_string(), "label");
    let b = QuestionOption::new("B", None).unwrap();
    let question = Question::new(" Approach ", "How?", vec![option.clone(), b.clone()], false).unwrap();
    assert_eq!(question.header(), "Approach");
    let err = Question::new("H", "How?", vec![option.clone()], false).unwrap_err();
    assert_eq!(
        (err.first().location().to_string(), err.first().kind().code()),
        ("options".to_owned(), "too_short")
    );
    let err =
        Question::new("H", "How?", vec![option.clone(), QuestionOption::new("PATCH", None).unwrap()], true)
            .unwrap_err();
    assert_eq!(err.first().kind().code(), "duplicate_label");
    let other = Question::new("approach", "Other?", vec![option, b], true).unwrap();
    let err = Questions::new(vec![question.clone(), other]).unwrap_err();
    assert_eq!(
        (err.first().location().to_string(), err.first().kind().code()),
        ("questions".to_owned(), "duplicate_header")
    );
    assert_eq!(Questions::new(vec![]).unwrap_err().first().kind().code(), "too_short");
    assert_eq!(Questions::new(vec![question.clone(); 11]).unwrap_err().first().kind().code(), "too_long");
    let questions = Questions::new(vec![question]).unwrap();
    assert_eq!(questions.get("Approach").map(Question::header), Some("Approach"));
    assert!(questions.get("approach").is_none());
}

#[test]
fn deserialize_validates_and_round_trips() {
    let err = serde_json::from_value::<Questions>(call("H", "Q", &["A", "a"])).unwrap_err();
    assert!(err.to_string().contains("option labels must be unique"), "{err}");
    assert!(
        serde_json::from_value::<Question>(json!({ "header": "H", "question": "Q", "options": [] })).is_err()
    );
    assert!(serde_json::from_value::<QuestionOption>(json!({ "label": " A ", "description": null })).is_ok());
    let request = AskUserRequest::with_id("call_1", accepts(call(" H ", "Q", &["A", "B"])));
    let text = serde_json::to_string(&request).unwrap();
    assert_eq!(
        text,
        // Regression: the questions were nested as `"questions":{"questions":[…]}`.
        r#"{"id":"call_1","questions":[{"header":"H","question":"Q","options":[{"label":"A","description":null},{"label":"B","description":null}],"multi_select":false}]}"#
    );
    let back: AskUserRequest = serde_json::from_str(&text).unwrap();
    assert_eq!(back, request);
    // Reading validates the questions and refuses keys the arguments do not have.
    assert!(serde_json::from_str::<AskUserRequest>(&text.replace(r#""A""#, r#""B""#)).is_err());
    assert!(serde_json::from_str::<AskUserRequest>(&text.replace(r#""id""#, r#""x":1,"id""#)).is_err());
    assert!(serde_json::from_str::<AskUserRequest>(&text.replace(r#""id":"call_1","#, "")).is_err());
    let fresh = AskUserRequest::new(request.questions().clone());
    assert!(
        fresh.id().len() == 32
            && fresh.id().bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    );
    let ids: std::collections::HashSet<String> =
        (0..1000).map(|_| AskUserRequest::new(request.questions().clone()).id().to_owned()).collect();
    assert_eq!(ids.len(), 1000, "ids repeat");
}

fn two_questions() -> AskUserRequest {
    let args = json!({ "questions": [
        { "header": "Approach", "question": "How?", "options": [{ "label": "Patch" }, { "label": "Refactor" }] },
        { "header": "Targets", "question": "Which?", "options": [{ "label": "api.py" }, { "label": "ui.py" }, { "label": "db.py" }], "multi_select": true },
    ] });
    AskUserRequest::new(accepts(args))
}

#[track_caller]
fn response_err(answers: Vec<AskUserAnswer>, expected: &str) {
    let err = check_response(&two_questions(), &AskUserResponse::answered(answers)).unwrap_err();
    assert_eq!(err.to_string(), expected);
}

fn pick(header: &str, labels: &[&str]) -> AskUserAnswer {
    AskUserAnswer::picked(header, labels.iter().copied())
}

#[test]
fn check_response_rules_in_order() {
    let request = two_questions();
    let mut cancelled = AskUserResponse::answered(vec![pick("Approach", &["Patch"])]);
    cancelled.cancelled = true;
    assert_eq!(check_response(&request, &cancelled), Err(ResponseError::CancelledWithAnswers));
    assert_eq!(ResponseError::CancelledWithAnswers.to_string(), "a cancelled response carries no answers");
    assert_eq!(check_response(&request, &AskUserResponse::declined()), Ok(()));

    response_err(vec![pick("approach", &["Patch"])], r#"answer for unknown or repeated question "approach""#);
    response_err(
        vec![pick(" Approach", &["Patch"])],
        r#"answer for unknown or repeated question " Approach""#,
    );
    response_err(
        vec![pick("Approach", &["Patch"]), pick("Approach", &["Patch"])],
        r#"answer for unknown or repeated question "Approach""#,
    );
    let mut both = AskUserAnswer::custom("Approach", "Mine");
    both.selected = vec!["Patch".into()];
    response_err(vec![both], r#"answer for "Approach" has a custom answer and also selects options"#);
    for blank in ["", " ", " \n ", "\u{3000}", "\x1c", " \x1f "] {
        response_err(
            vec![AskUserAnswer::custom("Approach", blank)],
            r#"custom answer for "Approach" must not be blank"#,
        );
    }
    for bad in ["a\u{200b}b", "\ttext", "x\t", "bad\x1b[31m", "x\x1c", "abc\u{202e}def", "\u{feff}"] {
        let err = check_response(
            &request,
            &AskUserResponse::answered(vec![AskUserAnswer::custom("Approach", bad)]),
        )
        .unwrap_err();
        assert!(matches!(err, ResponseError::ForbiddenCharacter { .. }), "{bad:?}: {err}");
    }
    response_err(
        vec![AskUserAnswer::custom("Approach", "a\u{200b}b")],
        r#"custom answer for "Approach" must not contain control characters or invisible formatting: U+200B at character 1"#,
    );
    response_err(
        vec![pick("Approach", &["Patch", "Patch", "Nope", "x\u{200b}y"])],
        r#"answer for "Approach" picked options it does not offer: ["Nope","x\u200by"]"#,
    );
    response_err(vec![pick("Approach", &[])], r#"answer for "Approach" picked nothing"#);
    response_err(
        vec![pick("Targets", &["ui.py", "api.py", "ui.py"])],
        r#"answer for "Targets" picked the same option twice: "ui.py""#,
    );
    // A repeated label is reported before single-select.
    response_err(
        vec![pick("Approach", &["Patch", "Patch"])],
        r#"answer for "Approach" picked the same option twice: "Patch""#,
    );
    response_err(
        vec![pick("Approach", &["Patch", "Refactor"])],
        r#"answer for "Approach" picked 2 options but it is single-select"#,
    );
    response_err(vec![], r#"unanswered questions: ["Approach","Targets"]"#);
    // Labels are matched exactly: no trimming or folding.
    response_err(
        vec![pick("Approach", &["patch"])],
        r#"answer for "Approach" picked options it does not offer: ["patch"]"#,
    );
    // The first failure wins, in answer order.
    response_err(
        vec![pick("Approach", &["Patch", "Refactor"]), pick("Nope", &["x"])],
        r#"answer for "Approach" picked 2 options but it is single-select"#,
    );
}

#[test]
fn unanswered_headers_sort_by_code_point() {
    let args = json!({ "questions": [
        { "header": "b", "question": "Q", "options": [{ "label": "A" }, { "label": "B" }] },
        { "header": "Ä", "question": "Q", "options": [{ "label": "A" }, { "label": "B" }] },
        { "header": "Z", "question": "Q", "options": [{ "label": "A" }, { "label": "B" }] },
    ] });
    let request = AskUserRequest::new(accepts(args));
    let err = check_response(&request, &AskUserResponse::answered(vec![])).unwrap_err();
    assert_eq!(err, ResponseError::Unanswered { headers: vec!["Z".into(), "b".into(), "Ä".into()] });
}

#[test]
fn rendering() {
    let request = two_questions();
    let answers = vec![
        AskUserAnswer::custom("Approach", "Use a different approach\nKeep 中文"),
        pick("Targets", &["db.py", "api.py"]),
    ];
    let result = ask_user_result(&request, &AskUserResponse::answered(answers.clone())).unwrap();
    assert_eq!(result.outcome(), Outcome::Answered);
    assert_eq!(
        result.text(),
        "{\"Approach\":[\"Use a different approach\\nKeep 中文\"],\"Targets\":[\"db.py\",\"api.py\"]}"
    );
    // Keys in the order answered, not the order asked.
    let reversed = vec![answers[1].clone(), answers[0].clone()];
    let text = ask_user_result(&request, &AskUserResponse::answered(reversed)).unwrap().into_text();
    assert!(text.starts_with("{\"Targets\""), "{text}");

    let unattended = AskUserResponse::answered(answers.clone()).with_answered_by(AnsweredBy::Unattended);
    let result = ask_user_result(&request, &unattended).unwrap();
    assert_eq!(result.outcome(), Outcome::Defaulted(AnsweredBy::Unattended));
    assert_eq!(
        result.text(),
        "{\"answered_by\":\"unattended\",\"answers\":{\"Approach\":[\"Use a different approach\\nKeep 中文\"],\"Targets\":[\"db.py\",\"api.py\"]}}"
    );
    let timeout = AskUserResponse::answered(answers).with_answered_by(AnsweredBy::Timeout);
    assert!(ask_user_result(&request, &timeout).unwrap().text().starts_with("{\"answered_by\":\"timeout\","));

    let declined = ask_user_result(&request, &AskUserResponse::declined()).unwrap();
    assert_eq!((declined.outcome(), declined.text()), (Outcome::Declined, DECLINED));
    assert_eq!(AskUserResult::timed_out().text(), TIMED_OUT);
    assert!(DECLINED.contains("declined") && TIMED_OUT.contains("reasonable choice"));
    // Sent verbatim, not JSON-quoted.
    assert!(!DECLINED.starts_with('"'));
}

#[test]
fn defaults_responder_picks_recommended_or_first() {
    let args = json!({ "questions": [
        { "header": "One", "question": "Q", "options": [{ "label": "A" }, { "label": "B (Recommended)" }, { "label": "C (recommended)" }] },
        { "header": "Many", "question": "Q", "options": [{ "label": "A" }, { "label": "B (RECOMMENDED)" }, { "label": "C (Recommended)" }], "multi_select": true },
        { "header": "None", "question": "Q", "options": [{ "label": "First" }, { "label": "Recommended" }] },
    ] });
    let request = AskUserRequest::new(accepts(args));
    let response = askuser_core::DefaultsResponder::respond(&request, AnsweredBy::Unattended);
    let text = ask_user_result(&request, &response).unwrap().into_text();
    assert_eq!(
        text,
        r#"{"answered_by":"unattended","answers":{"One":["B (Recommended)"],"Many":["B (RECOMMENDED)","C (Recommended)"],"None":["First"]}}"#
    );
}

#[test]
fn wire_shapes_of_responses() {
    let response: AskUserResponse =
        serde_json::from_str(r#"{"answers":[{"header":"H","selected":["A"]}]}"#).unwrap();
    assert_eq!(response, AskUserResponse::answered(vec![pick("H", &["A"])]));
    assert_eq!(response.answered_by, AnsweredBy::User);
    assert!(serde_json::from_str::<AskUserResponse>(r#"{"answers":[],"extra":1}"#).is_err());
    let json =
        serde_json::to_string(&AskUserResponse::declined().with_answered_by(AnsweredBy::Timeout)).unwrap();
    assert_eq!(json, r#"{"answers":[],"cancelled":true,"answered_by":"timeout"}"#);
}

/// Guards the options' length rule as the reference applies it (measured with the oracle): the
/// valid options are counted as they come, the seventh valid one reports only the list's length
/// (the items' problems dropped), and fewer than two valid ones add a too-short problem after the
/// items'. With eight options and one bad label askuser reported the label first.
#[test]
fn option_count_is_checked_after_validation_as_the_reference_does() {
    #[track_caller]
    fn check(count: usize, bad: &[usize], expected: &[(&str, &str)]) {
        let mut options: Vec<Value> = (0..count).map(|i| json!({ "label": format!("o{i}") })).collect();
        for &i in bad {
            options[i] = json!({ "label": "" });
        }
        let err = validate(&json!({ "questions": [{ "header": "H", "question": "Q", "options": options }] }))
            .unwrap_err();
        let got: Vec<(&str, String)> =
            err.problems().iter().map(|p| (p.kind().code(), p.location().to_string())).collect();
        let expected: Vec<(&str, String)> = expected.iter().map(|&(c, l)| (c, l.to_owned())).collect();
        assert_eq!(got, expected, "{count} options, bad {bad:?}: {err}");
    }
    let label = |i: usize| ("string_too_short", format!("questions[0].options[{i}].label"));
    let (l0, l1, l7) = (label(0), label(1), label(7));
    let too_long = ("too_long", "questions[0].options");
    let too_short = ("too_short", "questions[0].options");
    check(8, &[2], &[too_long]);
    check(8, &[7], &[too_long]);
    check(20, &[0], &[too_long]);
    check(7, &[], &[too_long]);
    check(7, &[0], &[(l0.0, &l0.1)]);
    check(8, &[0, 1], &[(l0.0, &l0.1), (l1.0, &l1.1)]);
    check(9, &[7, 8], &[too_long]);
    check(9, &[0, 1, 7], &[(l0.0, &l0.1), (l1.0, &l1.1), (l7.0, &l7.1)]);
    check(3, &[0, 1], &[(l0.0, &l0.1), (l1.0, &l1.1), too_short]);
    check(1, &[0], &[(l0.0, &l0.1), too_short]);
}

/// Guards the retry text against hostile keys: C1 controls, line separators and bidi controls of
/// an unknown key reached the model's (and a terminal's) text raw through `loc`. They are JSON
/// escapes now, so the payload still means the same key.
#[test]
fn the_retry_payload_carries_no_raw_control_or_bidi_character() {
    let key = "a\u{9b}b\u{85}c\u{2028}d\u{202e}e\u{2066}f\u{200b}";
    let mut args = call("H", "Q", &["A", "B"]);
    args[key] = json!(1);
    let payload = validate(&args).unwrap_err().retry_payload();
    for c in key
        .chars()
        .filter(char::is_ascii_lowercase)
        .chain(['\u{9b}', '\u{85}', '\u{2028}', '\u{202e}', '\u{2066}', '\u{200b}'])
    {
        assert_eq!(payload.contains(c), c.is_ascii_lowercase(), "{c:?} in {payload}");
    }
    assert!(payload.contains(r#""loc":["a\u009bb\u0085c\u2028d\u202ee\u2066f\u200b"]"#), "{payload}");
    let parsed: Value = serde_json::from_str(&payload).unwrap();
    assert_eq!(parsed["problems"][0]["loc"][0], key);
}
