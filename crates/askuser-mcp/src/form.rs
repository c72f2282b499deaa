//! A batch of questions as an MCP elicitation form, and the form's answer back as an
//! [`AskUserResponse`].
//!
//! Property keys are zero-padded (`q01`, `q01_other`, …, `q10`) because rmcp and most clients
//! keep the keys of `requestedSchema.properties` in sorted order: `q10` must not come before
//! `q2`. A choice question with an "Other" field has both fields optional, because it is answered
//! either by its choice or by its own words; [`read_answer`] enforces exactly one of the two, and
//! `check_response` the rest. A text question (extended profile) is one required string field; a
//! choice question without "Other" (`allow_other: false`) has its choice field required.
//! Secret questions never enter a form (docs/contract.md §13).

use askuser_core::{
    AskUserAnswer, AskUserRequest, AskUserResponse, MAX_OPTIONS, MAX_QUESTIONS, Question, QuestionKind,
    check_response, show_blank, show_label,
};
use std::collections::BTreeMap;

use rmcp::model::{
    BooleanSchema, ConstTitle, ElicitRequest, ElicitRequestParams, ElicitationSchema, EnumSchema,
    InputRequest, InputRequests, LegacyEnumSchema, MultiSelectEnumSchema, PrimitiveSchemaDefinition,
    ProtocolVersion, SingleSelectEnumSchema, StringSchema, TitledItems, TitledMultiSelectEnumSchema,
    TitledSingleSelectEnumSchema,
};
use serde_json::{Map, Value};

/// How long an "Other" answer or a text answer may be, in characters (the cap of every surface,
/// [`askuser_core::MAX_CUSTOM_CHARS`], contract §6 and §10).
#[expect(
    clippy::cast_possible_truncation,
    reason = "2,000 fits in a u32, which the form schema's maxLength takes"
)]
pub const MAX_OTHER_CHARS: u32 = askuser_core::MAX_CUSTOM_CHARS as u32;

/// The two shapes a choice question takes in a form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FormStyle {
    /// MCP 2025-06-18: a single-select question is a string `enum` with `enumNames` (display
    /// names); a multi-select question is one boolean field per option, since that revision has
    /// no arrays.
    Enums2025,
    /// MCP 2025-11-25 and later: a titled single-select (`oneOf` of `const`/`title`), and a
    /// multi-select array (`items.anyOf`) with `minItems`/`maxItems`.
    Titled2025,
}

impl FormStyle {
    /// The style a client that negotiated `version` understands: [`Enums2025`](Self::Enums2025)
    /// before 2025-11-25, [`Titled2025`](Self::Titled2025) from it on.
    #[must_use]
    pub fn for_version(version: &ProtocolVersion) -> Self {
        // Revisions are dates, so their text orders as they do.
        if version.as_str() >= ProtocolVersion::V_2025_11_25.as_str() {
            Self::Titled2025
        } else {
            Self::Enums2025
        }
    }
}

/// The key of the one input request of a 2026-07-28 `InputRequiredResult` and of a task's form.
pub const INPUT_KEY: &str = "ask_user_question";

/// The form for `request` as the one input request (under [`INPUT_KEY`]) of an
/// `InputRequiredResult` or a task: titled choices (2025-11-25 and later), with `problem` when the
/// first answer did not fit.
pub(crate) fn input_requests(server: &str, request: &AskUserRequest, problem: Option<&str>) -> InputRequests {
    let params = ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: message(server, problem),
        requested_schema: schema(request, FormStyle::Titled2025),
    };
    let mut requests = InputRequests::new();
    requests.insert(INPUT_KEY.to_owned(), InputRequest::Elicitation(ElicitRequest::new(params)));
    requests
}

/// The form's message: says plainly that the model wrote the questions (contract §4, §13), and, on a
/// second attempt, why the first answer could not be used.
#[must_use]
pub fn message(server: &str, problem: Option<&str>) -> String {
    const RETRY: [&str; 2] = ["Your last answer could not be used: ", ". Please answer again.\n\n"];
    const BODY: [&str; 2] = [
        "The AI model you are working with asks these questions (through ",
        "). Pick an answer for each question, or type your own where the question has a field for it. \
         They are the model's words, not a sign-in or system prompt: never enter a password or key here. \
         Decline if you would rather not answer.",
    ];
    match problem {
        Some(problem) => joined(&[RETRY[0], problem, RETRY[1], BODY[0], server, BODY[1]]),
        None => joined(&[BODY[0], server, BODY[1]]),
    }
}

/// The key of question `index`'s choice or text field: `q01` … `q10`.
const KEYS: [&str; MAX_QUESTIONS] = ["q01", "q02", "q03", "q04", "q05", "q06", "q07", "q08", "q09", "q10"];

/// The key of question `index`'s "Other" field.
const OTHER_KEYS: [&str; MAX_QUESTIONS] = [
    "q01_other",
    "q02_other",
    "q03_other",
    "q04_other",
    "q05_other",
    "q06_other",
    "q07_other",
    "q08_other",
    "q09_other",
    "q10_other",
];

/// The key of option `n` of question `index`'s multi-select in the 2025-06-18 form (a boolean).
const OPTION_KEYS: [[&str; MAX_OPTIONS]; MAX_QUESTIONS] = [
    ["q01_1", "q01_2", "q01_3", "q01_4", "q01_5", "q01_6"],
    ["q02_1", "q02_2", "q02_3", "q02_4", "q02_5", "q02_6"],
    ["q03_1", "q03_2", "q03_3", "q03_4", "q03_5", "q03_6"],
    ["q04_1", "q04_2", "q04_3", "q04_4", "q04_5", "q04_6"],
    ["q05_1", "q05_2", "q05_3", "q05_4", "q05_5", "q05_6"],
    ["q06_1", "q06_2", "q06_3", "q06_4", "q06_5", "q06_6"],
    ["q07_1", "q07_2", "q07_3", "q07_4", "q07_5", "q07_6"],
    ["q08_1", "q08_2", "q08_3", "q08_4", "q08_5", "q08_6"],
    ["q09_1", "q09_2", "q09_3", "q09_4", "q09_5", "q09_6"],
    ["q10_1", "q10_2", "q10_3", "q10_4", "q10_5", "q10_6"],
];

/// The key of question `index`'s field: no allocation, the form is built and read on every call.
fn key(index: usize) -> &'static str {
    KEYS[index]
}

/// An option's title in the form: its label, then its description after a dash. Joined by hand,
/// not with `format!`: it runs for every option of every form, and the formatting machinery cost
/// several times the copying (callgrind, the typical 4 × 4 form).
fn option_title(option: &askuser_core::QuestionOption) -> String {
    let label = show_label(option.label());
    match option.description() {
        Some(description) if !description.is_empty() => joined(&[&label, " — ", &show_blank(description)]),
        _ => label.into_owned(),
    }
}

/// `parts` end to end, in one allocation of the right size.
fn joined(parts: &[&str]) -> String {
    let mut text = String::with_capacity(parts.iter().map(|p| p.len()).sum());
    for part in parts {
        text.push_str(part);
    }
    text
}

/// A 2025-06-18 multi-select: one boolean field per option (that revision has no multi-select
/// enum); the first carries the header and the question.
fn boolean_fields(
    properties: &mut BTreeMap<String, PrimitiveSchemaDefinition>,
    index: usize,
    question: &Question,
    header: &str,
    text: &str,
) {
    for (n, option) in question.options().iter().enumerate() {
        let mut field = BooleanSchema::new().with_default(option.is_default());
        field = if n == 0 {
            let description = match option.description() {
                Some(d) if !d.is_empty() => format!("{text}\n\n{}", show_blank(d)),
                _ => text.to_owned(),
            };
            field.title(format!("{header}: {}", show_label(option.label()))).description(description)
        } else {
            let field = field.title(show_label(option.label()).into_owned());
            match option.description() {
                Some(d) if !d.is_empty() => field.description(show_blank(d).into_owned()),
                _ => field,
            }
        };
        properties.insert(OPTION_KEYS[index][n].to_owned(), PrimitiveSchemaDefinition::Boolean(field));
    }
}

/// The `requestedSchema` for `request` in `style`.
///
/// Extended-profile questions add: a text question as a string field (`minLength` 1, `maxLength`
/// [`MAX_OTHER_CHARS`]); options marked `default` as the field's `default` where the revision has
/// one (2025-11-25 on: the single-select's value, the multi-select's list; 2025-06-18: the
/// booleans of a multi-select); no "Other" field when `allow_other` is false. A secret question
/// gets no field at all: the server never puts one in a form.
#[must_use]
pub fn schema(request: &AskUserRequest, style: FormStyle) -> ElicitationSchema {
    // Built from rmcp's types directly: going through `serde_json::Value` cost ten times the
    // whole capability call (the untagged schema enums buffer and retry every field).
    let mut properties = BTreeMap::new();
    let mut required = Vec::new();
    for (index, question) in request.questions().iter().enumerate() {
        let key = key(index);
        // What the person reads shows characters that render blank (two labels that look alike
        // are told apart); the values the form returns stay the labels as they are.
        let header_shown = show_blank(question.header());
        let header: &str = &header_shown;
        let text_shown = show_blank(question.question());
        let text: &str = &text_shown;
        match question.kind() {
            QuestionKind::Choice => {}
            QuestionKind::Text => {
                properties.insert(
                    key.to_owned(),
                    PrimitiveSchemaDefinition::String(
                        StringSchema::new()
                            .title(header.to_owned())
                            .description(text.to_owned())
                            .min_length(1)
                            .max_length(MAX_OTHER_CHARS),
                    ),
                );
                required.push(key.to_owned());
                continue;
            }
            // Never through a form; the server routes such a batch elsewhere.
            _ => continue,
        }
        let titled =
            || question.options().iter().map(|o| ConstTitle::new(o.label(), option_title(o))).collect();
        let defaults = || question.declared_defaults().map(|o| o.label().to_owned()).collect::<Vec<_>>();
        let field = match (style, question.multi_select()) {
            (FormStyle::Enums2025, false) => {
                // 2025-06-18 has no `default` on an enum.
                let mut field =
                    LegacyEnumSchema::new(question.options().iter().map(|o| o.label().to_owned()).collect());
                field.title = Some(header.to_owned().into());
                field.description = Some(text.to_owned().into());
                field.enum_names = Some(question.options().iter().map(option_title).collect());
                Some(EnumSchema::Legacy(field))
            }
            (FormStyle::Enums2025, true) => {
                boolean_fields(&mut properties, index, question, header, text);
                None
            }
            (FormStyle::Titled2025, false) => {
                let mut field = TitledSingleSelectEnumSchema::new(titled());
                field.title = Some(header.to_owned().into());
                field.description = Some(text.to_owned().into());
                field.default = defaults().into_iter().next();
                Some(EnumSchema::Single(SingleSelectEnumSchema::Titled(field)))
            }
            (FormStyle::Titled2025, true) => {
                let mut field = TitledMultiSelectEnumSchema::new(TitledItems::new(titled()))
                    .with_title(header.to_owned())
                    .with_description(text.to_owned())
                    .with_min_items(1)
                    .with_max_items(question.options().len() as u64);
                let defaults = defaults();
                field.default = (!defaults.is_empty()).then_some(defaults);
                Some(EnumSchema::Multi(MultiSelectEnumSchema::Titled(field)))
            }
        };
        if let Some(field) = field {
            properties.insert(key.to_owned(), PrimitiveSchemaDefinition::Enum(field));
            if !question.allow_other() {
                required.push(key.to_owned());
            }
        }
        if question.allow_other() {
            properties.insert(
                OTHER_KEYS[index].to_owned(),
                PrimitiveSchemaDefinition::String(
                    StringSchema::new()
                        .title(joined(&[header, ": other answer"]))
                        .description(
                            "Your own answer instead of the choices above (leave empty to use them). When filled, it is the answer, whatever is picked above.",
                        )
                        .max_length(MAX_OTHER_CHARS),
                ),
            );
        }
    }
    // Sorted keys are question order, thanks to the zero padding.
    let mut schema = ElicitationSchema::new(properties);
    schema.required = (!required.is_empty()).then_some(required);
    schema
}

/// Why a form answer could not be used. Its text goes back to the person when the question is
/// asked again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Misfit(pub String);

impl std::fmt::Display for Misfit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Misfit {}

fn misfit(text: impl Into<String>) -> Misfit {
    Misfit(text.into())
}

/// Maps an accepted form's `content` onto an answer to `request` and checks it.
///
/// # Errors
///
/// A [`Misfit`] naming the field or question when the content is not an answer to the form:
/// an unknown or mistyped field, a question not answered at all, own words longer than the
/// field's `maxLength` ([`MAX_OTHER_CHARS`]), or an answer that `check_response` rejects.
pub fn read_answer(
    request: &AskUserRequest,
    style: FormStyle,
    content: Option<&Value>,
) -> Result<AskUserResponse, Misfit> {
    let empty = Map::new();
    let fields = match content {
        Some(Value::Object(fields)) => fields,
        None | Some(Value::Null) => &empty,
        Some(_) => return Err(misfit("the form's content is not an object")),
    };
    let questions = request.questions();
    if let Some(name) = fields.keys().find(|name| !has_field(questions.as_slice(), style, name)) {
        return Err(misfit(format!("the form has no field {name:?}")));
    }
    let mut answers = Vec::with_capacity(questions.len());
    for (index, question) in questions.iter().enumerate() {
        let key = key(index);
        let answer = match question.kind() {
            QuestionKind::Choice => choice_answer(question, index, style, fields)?,
            QuestionKind::Text => match fields.get(key) {
                None | Some(Value::Null) => {
                    return Err(misfit(format!("\"{}\" was not answered", question.header())));
                }
                Some(Value::String(text)) if text.trim().is_empty() => {
                    return Err(misfit(format!("\"{}\" was not answered", question.header())));
                }
                Some(Value::String(text)) => {
                    within_cap(question.header(), "answer", text)?;
                    AskUserAnswer::custom(question.header(), text.clone())
                }
                Some(_) => return Err(misfit(format!("{key} (\"{}\") must be text", question.header()))),
            },
            _ => {
                return Err(misfit(format!(
                    "\"{}\" is a secret question, which is never answered in a form",
                    question.header()
                )));
            }
        };
        answers.push(match question.id() {
            Some(id) => answer.with_id(id),
            None => answer,
        });
    }
    let response = AskUserResponse::answered(answers);
    check_response(request, &response).map_err(|e| misfit(e.to_string()))?;
    Ok(response)
}

/// The answer to choice question `question` (field `key`): its picks, or its own words.
fn choice_answer(
    question: &Question,
    index: usize,
    style: FormStyle,
    fields: &Map<String, Value>,
) -> Result<AskUserAnswer, Misfit> {
    let key = key(index);
    let other = if question.allow_other() {
        match fields.get(OTHER_KEYS[index]) {
            None | Some(Value::Null) => None,
            Some(Value::String(text)) if text.trim().is_empty() => None,
            Some(Value::String(text)) => Some(text.clone()),
            Some(_) => return Err(misfit(format!("{key}_other (\"{}\") must be text", question.header()))),
        }
    } else {
        None
    };
    let picked = picked(question, index, style, fields)?;
    // A filled "Other" field wins over the choice: hosts that preselect the first option of a
    // radio group (fast-agent) or insist on a tick in a multi-select send a choice beside every
    // typed answer, and the person meant the words they typed.
    match (other, picked.is_empty()) {
        (Some(text), _) => {
            within_cap(question.header(), "other answer", &text)?;
            Ok(AskUserAnswer::custom(question.header(), text))
        }
        (None, false) => Ok(AskUserAnswer::picked(question.header(), picked)),
        (None, true) => Err(misfit(format!("\"{}\" was not answered", question.header()))),
    }
}

/// Whether `text` keeps to the `maxLength` the form declares for it ([`MAX_OTHER_CHARS`]).
fn within_cap(header: &str, what: &str, text: &str) -> Result<(), Misfit> {
    // Counting stops at the first character past the cap: a 3,000,000-character answer costs
    // no more than a fitting one.
    let cap = MAX_OTHER_CHARS as usize;
    if text.chars().nth(cap).is_none() {
        return Ok(());
    }
    let length = text.chars().count();
    Err(misfit(format!("the {what} to \"{header}\" takes at most {cap} characters, not {length}")))
}

/// Whether the form for `questions` in `style` has a field called `name` (without building the
/// list of names).
fn has_field(questions: &[Question], style: FormStyle, name: &str) -> bool {
    // `q01` … `q10` read as a number rather than looked up among the keys.
    let number = match name.as_bytes() {
        [b'q', tens @ b'0'..=b'9', ones @ b'0'..=b'9', ..] => usize::from((tens - b'0') * 10 + (ones - b'0')),
        _ => return false,
    };
    let Some(index) = number.checked_sub(1) else { return false };
    let Some(question) = questions.get(index) else { return false };
    let rest = &name[3..];
    match question.kind() {
        QuestionKind::Choice => {}
        QuestionKind::Text => return rest.is_empty(),
        _ => return false,
    }
    if rest == "_other" {
        return question.allow_other();
    }
    if style == FormStyle::Enums2025 && question.multi_select() {
        return OPTION_KEYS[index][..question.options().len()].contains(&name);
    }
    rest.is_empty()
}

/// The labels picked for `question` (empty when its choice field is absent or empty).
fn picked(
    question: &Question,
    index: usize,
    style: FormStyle,
    fields: &Map<String, Value>,
) -> Result<Vec<String>, Misfit> {
    let key = key(index);
    let header = question.header();
    if style == FormStyle::Enums2025 && question.multi_select() {
        let mut picked = Vec::new();
        for (n, option) in question.options().iter().enumerate() {
            match fields.get(OPTION_KEYS[index][n]) {
                None | Some(Value::Null | Value::Bool(false)) => {}
                Some(Value::Bool(true)) => picked.push(option.label().to_owned()),
                Some(_) => {
                    return Err(misfit(format!("{key}_{} (\"{header}\") must be true or false", n + 1)));
                }
            }
        }
        return Ok(picked);
    }
    match fields.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::String(label)) if !question.multi_select() => Ok(vec![label.clone()]),
        Some(Value::Array(items)) if question.multi_select() => items
            .iter()
            .map(|item| {
                item.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| misfit(format!("{key} (\"{header}\") must list option labels")))
            })
            .collect(),
        Some(_) if question.multi_select() => {
            Err(misfit(format!("{key} (\"{header}\") must be a list of options")))
        }
        Some(_) => Err(misfit(format!("{key} (\"{header}\") must be one option"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use askuser_core::Questions;
    use serde_json::json;

    fn request() -> AskUserRequest {
        AskUserRequest::new(
            Questions::from_json(
                r#"{"questions":[
                {"header":"Lang","question":"Which language?","options":[{"label":"Rust","description":"fast"},{"label":"Go"}]},
                {"header":"Parts","question":"Which parts?","multi_select":true,"options":[{"label":"A"},{"label":"B"},{"label":"C"}]}]}"#,
            )
            .unwrap(),
        )
    }

    #[test]
    fn enums_2025_shape() {
        let schema = serde_json::to_value(schema(&request(), FormStyle::Enums2025)).unwrap();
        let keys: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
        assert_eq!(keys, ["q01", "q01_other", "q02_1", "q02_2", "q02_3", "q02_other"]);
        assert_eq!(schema["properties"]["q01"]["enum"], json!(["Rust", "Go"]));
        assert_eq!(schema["properties"]["q01"]["enumNames"], json!(["Rust — fast", "Go"]));
        assert_eq!(schema["properties"]["q02_2"]["type"], "boolean");
        assert!(schema.get("required").is_none());
    }

    /// Two labels that look alike (one ends in U+3164, which renders blank) are told apart in
    /// what the person reads, in every style; the values returned stay the labels as they are.
    #[test]
    fn characters_that_render_blank_are_shown() {
        let request = AskUserRequest::new(
            askuser_core::Questions::from_json(
                r#"{"questions":[
                {"header":"Goㅤ","question":"Delete⠀?","options":[{"label":"Yes","description":"nowㅤ"},{"label":"Yesㅤ"}]},
                {"header":"M","question":"?","multi_select":true,"options":[{"label":"a⠀"},{"label":"b","description":"ㅤ"}]}]}"#,
            )
            .unwrap(),
        );
        let titled = serde_json::to_value(schema(&request, FormStyle::Titled2025)).unwrap();
        let q01 = &titled["properties"]["q01"];
        assert_eq!(
            (q01["title"].as_str(), q01["description"].as_str()),
            (Some("Go⟨U+3164⟩"), Some("Delete⟨U+2800⟩?"))
        );
        assert_eq!(
            q01["oneOf"],
            json!([{"const": "Yes", "title": "Yes — now⟨U+3164⟩"}, {"const": "Yes\u{3164}", "title": "Yes⟨U+3164⟩"}])
        );
        let legacy = serde_json::to_value(schema(&request, FormStyle::Enums2025)).unwrap();
        assert_eq!(legacy["properties"]["q01"]["enum"], json!(["Yes", "Yes\u{3164}"]));
        assert_eq!(legacy["properties"]["q01"]["enumNames"], json!(["Yes — now⟨U+3164⟩", "Yes⟨U+3164⟩"]));
        assert_eq!(legacy["properties"]["q02_1"]["title"], "M: a⟨U+2800⟩");
        assert_eq!(legacy["properties"]["q02_2"]["description"], "⟨U+3164⟩");
    }

    #[test]
    fn titled_2025_shape() {
        let schema = serde_json::to_value(schema(&request(), FormStyle::Titled2025)).unwrap();
        let keys: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
        assert_eq!(keys, ["q01", "q01_other", "q02", "q02_other"]);
        assert_eq!(schema["properties"]["q01"]["oneOf"][0], json!({"const": "Rust", "title": "Rust — fast"}));
        assert_eq!(schema["properties"]["q02"]["items"]["anyOf"][2], json!({"const": "C", "title": "C"}));
        assert_eq!(
            (
                schema["properties"]["q02"]["minItems"].clone(),
                schema["properties"]["q02"]["maxItems"].clone()
            ),
            (json!(1), json!(3))
        );
        assert_eq!(schema["properties"]["q02_other"]["maxLength"], MAX_OTHER_CHARS);
    }

    /// Guards the zero padding: with `q10` the tenth question must still sort last.
    #[test]
    fn ten_questions_keep_their_order() {
        let questions: Vec<Value> = (1..=10)
            .map(|n| json!({"header": format!("H{n}"), "question": "?", "options": [{"label": "a"}, {"label": "b"}]}))
            .collect();
        let request = AskUserRequest::new(Questions::from_value(&json!({"questions": questions})).unwrap());
        let schema = serde_json::to_value(schema(&request, FormStyle::Titled2025)).unwrap();
        let titles: Vec<&str> = schema["properties"]
            .as_object()
            .unwrap()
            .iter()
            .filter(|(k, _)| !k.ends_with("_other"))
            .map(|(_, v)| v["title"].as_str().unwrap())
            .collect();
        assert_eq!(titles, ["H1", "H2", "H3", "H4", "H5", "H6", "H7", "H8", "H9", "H10"]);
    }

    #[track_caller]
    fn check(style: FormStyle, content: &Value, expected: Result<&str, &str>) {
        let request = request();
        let got = read_answer(&request, style, Some(content))
            .map(|r| askuser_core::ask_user_result(&request, &r).unwrap().into_text())
            .map_err(|m| m.0);
        match expected {
            Ok(text) => assert_eq!(got.as_deref(), Ok(text)),
            Err(part) => {
                let error = got.expect_err("a misfit");
                assert!(error.contains(part), "{error:?} lacks {part:?}");
            }
        }
    }

    #[test]
    fn answers_map_back() {
        use FormStyle::{Enums2025 as E, Titled2025 as T};
        check(T, &json!({"q01": "Go", "q02": ["C", "A"]}), Ok(r#"{"Lang":["Go"],"Parts":["C","A"]}"#));
        check(
            T,
            &json!({"q01_other": "Zig", "q02": ["B"], "q02_other": " "}),
            Ok(r#"{"Lang":["Zig"],"Parts":["B"]}"#),
        );
        check(
            E,
            &json!({"q01": "Rust", "q02_1": true, "q02_2": false, "q02_3": true}),
            Ok(r#"{"Lang":["Rust"],"Parts":["A","C"]}"#),
        );
        check(
            E,
            &json!({"q01": "Rust", "q02_other": "none of them"}),
            Ok(r#"{"Lang":["Rust"],"Parts":["none of them"]}"#),
        );
        check(T, &json!({"q01": "Go"}), Err("\"Parts\" was not answered"));
        // A filled Other field wins over a (preselected) choice, in both styles.
        check(
            T,
            &json!({"q01": "Go", "q01_other": "x", "q02": ["A"]}),
            Ok(r#"{"Lang":["x"],"Parts":["A"]}"#),
        );
        check(
            E,
            &json!({"q01": "Rust", "q01_other": "Zig", "q02_1": true, "q02_other": "none"}),
            Ok(r#"{"Lang":["Zig"],"Parts":["none"]}"#),
        );
        check(T, &json!({"q01": "Java", "q02": ["A"]}), Err("Java"));
        check(T, &json!({"q01": "Go", "q02": ["A", "A"]}), Err("same option"));
        check(T, &json!({"q01": "Go", "q02": []}), Err("\"Parts\" was not answered"));
        check(T, &json!({"q01": 3, "q02": ["A"]}), Err("q01 (\"Lang\") must be one option"));
        check(T, &json!({"q01": "Go", "q02": ["A"], "q03": "x"}), Err("no field \"q03\""));
        check(T, &json!({"q01": "Go", "q02_1": true}), Err("no field \"q02_1\""));
        check(E, &json!({"q01": "Go", "q02": ["A"]}), Err("no field \"q02\""));
        check(E, &json!({"q01": "Go", "q02_4": true}), Err("no field \"q02_4\""));
        check(E, &json!({"q01": "Go", "q2_1": true}), Err("no field \"q2_1\""));
        check(T, &json!({"q01": "Go", "q02": ["A"], "q01_other": "bell\u{7}"}), Err("Lang"));
        check(T, &json!({"q01_other": "bell\u{7}", "q02": ["A"]}), Err("Lang"));
        check(T, &json!("text"), Err("not an object"));
        // The cap the form declares (`maxLength` 2000) holds.
        let long = "x".repeat(MAX_OTHER_CHARS as usize + 1);
        check(T, &json!({"q01_other": long, "q02": ["A"]}), Err("takes at most 2000 characters, not 2001"));
        let fits = "x".repeat(MAX_OTHER_CHARS as usize);
        assert!(read_answer(&request(), T, Some(&json!({"q01_other": fits, "q02": ["A"]}))).is_ok());
    }

    #[test]
    fn style_follows_the_revision() {
        assert_eq!(FormStyle::for_version(&ProtocolVersion::V_2025_06_18), FormStyle::Enums2025);
        assert_eq!(FormStyle::for_version(&ProtocolVersion::V_2025_11_25), FormStyle::Titled2025);
        assert_eq!(FormStyle::for_version(&ProtocolVersion::V_2026_07_28), FormStyle::Titled2025);
    }
}
