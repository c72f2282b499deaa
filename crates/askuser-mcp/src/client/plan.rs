//! The client's plan: a form turned into an askuser request (one question per field, titles fitted
//! and made unique, defaults marked), and the person's answers back into the form's content.

use std::collections::BTreeMap;

use askuser_core::{
    AskUserRequest, AskUserResponse, MAX_DESCRIPTION_CHARS, MAX_HEADER_CHARS, MAX_LABEL_CHARS, MAX_OPTIONS,
    MAX_QUESTION_CHARS, MIN_OPTIONS, Profile, QuestionOption, Validator, is_forbidden_char,
};
use rmcp::model::{
    ElicitationSchema, EnumSchema, LegacyEnumSchema, MultiSelectEnumSchema, PrimitiveSchemaDefinition,
    SingleSelectEnumSchema, StringFormat,
};
use serde_json::{Map, Value, json};

use super::formats::TextKind;

/// The extra option of an optional field: picking it leaves the field empty.
pub const LEAVE_EMPTY: &str = "(leave empty)";

/// What ends the label of an option the form's `default` picks, in the reference profile (the
/// reference tool's own mark of a recommended option).
const RECOMMENDED: &str = " (Recommended)";

/// How the answer to one question goes back into the form.
#[derive(Debug)]
enum Slot {
    /// A choice field: the value of each option, in order (a trailing [`LEAVE_EMPTY`] option has
    /// none).
    Choice {
        key: String,
        values: Vec<String>,
        multi: bool,
        min: Option<u64>,
        max: Option<u64>,
    },
    Boolean {
        key: String,
    },
    /// A string, number or integer field asked as a text question (extended profile).
    Text {
        key: String,
        kind: TextKind,
        default: Option<Value>,
        required: bool,
    },
}

/// The answer to a text question that leaves its field empty, or takes its default.
pub const KEEP_DEFAULT: &str = "-";

/// A form turned into an askuser request, and the way back.
#[derive(Debug)]
pub(super) struct Plan {
    pub(super) request: AskUserRequest,
    slots: Vec<Slot>,
    /// The string fields a choice field's own words may go to (`KEY_other`), with their rules.
    text_fields: BTreeMap<String, TextKind>,
    /// Optional fields not asked (text or numbers in the reference profile) that have a
    /// `default`: sent with it on accept (SEP-1034), and named in the first question.
    unasked: Vec<(String, Value)>,
}

/// `text` made fit for a one-line (or, with `allow_lf`, a multi-line) field of at most `max`
/// characters: forbidden characters dropped, line breaks made spaces, cut with an ellipsis.
fn fit(text: &str, max: usize, allow_lf: bool) -> String {
    let cleaned: String = text
        .chars()
        .map(|c| if matches!(c, '\n' | '\r' | '\t') && !(allow_lf && c == '\n') { ' ' } else { c })
        .filter(|c| !is_forbidden_char(*c, allow_lf))
        .collect();
    let trimmed = cleaned.trim();
    if trimmed.chars().count() <= max {
        return trimmed.to_owned();
    }
    let mut cut: String = trimmed.chars().take(max - 1).collect();
    cut.truncate(cut.trim_end().len());
    cut.push('…');
    cut
}

/// "1 to 2", "at least 1", "at most 2": how many picks a multi-select field takes.
fn picks(min: Option<u64>, max: Option<u64>) -> Option<String> {
    match (min, max) {
        (Some(min), Some(max)) => Some(format!("{min} to {max}")),
        (Some(min), None) => Some(format!("at least {min}")),
        (None, Some(max)) => Some(format!("at most {max}")),
        (None, None) => None,
    }
}

struct Field<'a> {
    key: &'a str,
    title: Option<&'a str>,
    description: Option<&'a str>,
    /// `(value, label)` per option.
    options: Vec<(String, String)>,
    multi: bool,
    min: Option<u64>,
    max: Option<u64>,
    boolean: bool,
    /// The values the schema's `default` picks.
    defaults: Vec<String>,
}

fn choice_field<'a>(
    key: &'a str,
    definition: &'a PrimitiveSchemaDefinition,
) -> Result<Option<Field<'a>>, String> {
    let same = |values: &[String]| values.iter().map(|v| (v.clone(), v.clone())).collect::<Vec<_>>();
    let titled = |items: &[rmcp::model::ConstTitle]| {
        items.iter().map(|c| (c.const_.clone(), c.title.clone())).collect::<Vec<_>>()
    };
    let field = |title: &'a Option<std::borrow::Cow<'static, str>>,
                 description: &'a Option<std::borrow::Cow<'static, str>>,
                 options,
                 multi,
                 (min, max),
                 defaults| Field {
        key,
        title: title.as_deref(),
        description: description.as_deref(),
        options,
        multi,
        min,
        max,
        boolean: false,
        defaults,
    };
    let one = |default: &Option<String>| default.iter().cloned().collect::<Vec<_>>();
    let many = |default: &Option<Vec<String>>| default.clone().unwrap_or_default();
    Ok(Some(match definition {
        PrimitiveSchemaDefinition::Enum(EnumSchema::Single(SingleSelectEnumSchema::Untitled(s))) => {
            field(&s.title, &s.description, same(&s.enum_), false, (None, None), one(&s.default))
        }
        PrimitiveSchemaDefinition::Enum(EnumSchema::Single(SingleSelectEnumSchema::Titled(s))) => {
            field(&s.title, &s.description, titled(&s.one_of), false, (None, None), one(&s.default))
        }
        PrimitiveSchemaDefinition::Enum(EnumSchema::Legacy(LegacyEnumSchema {
            title,
            description,
            enum_,
            enum_names,
            default,
            ..
        })) => {
            let options = match enum_names {
                Some(names) if names.len() == enum_.len() => {
                    enum_.iter().cloned().zip(names.iter().cloned()).collect()
                }
                _ => same(enum_),
            };
            field(title, description, options, false, (None, None), one(default))
        }
        PrimitiveSchemaDefinition::Enum(EnumSchema::Multi(MultiSelectEnumSchema::Untitled(s))) => field(
            &s.title,
            &s.description,
            same(&s.items.enum_),
            true,
            (s.min_items, s.max_items),
            many(&s.default),
        ),
        PrimitiveSchemaDefinition::Enum(EnumSchema::Multi(MultiSelectEnumSchema::Titled(s))) => field(
            &s.title,
            &s.description,
            titled(&s.items.any_of),
            true,
            (s.min_items, s.max_items),
            many(&s.default),
        ),
        PrimitiveSchemaDefinition::Boolean(b) => Field {
            key,
            title: b.title.as_deref(),
            description: b.description.as_deref(),
            options: vec![("true".to_owned(), "Yes".to_owned()), ("false".to_owned(), "No".to_owned())],
            multi: false,
            min: None,
            max: None,
            boolean: true,
            defaults: b.default.map(|d| d.to_string()).into_iter().collect(),
        },
        PrimitiveSchemaDefinition::String(_)
        | PrimitiveSchemaDefinition::Number(_)
        | PrimitiveSchemaDefinition::Integer(_) => return Ok(None),
        _ => return Err(format!("field {key:?} has a kind of schema askuser does not know")),
    }))
}

/// A header unique (by a simple fold) among `headers`, from `title`.
fn unique_header(title: &str, headers: &mut Vec<String>) -> String {
    let mut header = fit(title, MAX_HEADER_CHARS, false);
    let mut n = 2;
    while headers.iter().any(|h| h.to_lowercase() == header.to_lowercase()) {
        let suffix = format!(" #{n}");
        header = format!("{}{suffix}", fit(&header, MAX_HEADER_CHARS - suffix.chars().count(), false));
        n += 1;
    }
    headers.push(header.clone());
    header
}

/// The optional string, number and integer fields with a `default` that the reference profile
/// does not ask, in the form's order, with their defaults.
fn unasked_defaults(
    schema: &ElicitationSchema,
    order: &[&String],
    required: &[String],
    text_fields: &BTreeMap<String, TextKind>,
) -> Vec<(String, Value)> {
    order
        .iter()
        .filter(|key| !required.contains(**key) && !text_fields.contains_key(key.as_str()))
        .filter_map(|key| match TextKind::of(schema.properties.get(key.as_str())?) {
            Some((_, Some(default))) => Some(((*key).clone(), default)),
            _ => None,
        })
        .collect()
}

/// The option `title` of a choice field's `value`, which is a default when `defaults` holds it:
/// marked `default` in the extended profile, and with [`RECOMMENDED`] in the reference profile
/// (the reference tool's own mark, which `DefaultsResponder` takes too).
fn option(value: &str, title: &str, defaults: &[String], extended: bool) -> Value {
    let is_default = !value.is_empty() && defaults.iter().any(|d| d == value);
    let label = fit(title, MAX_LABEL_CHARS, false);
    let full = fit(title, MAX_DESCRIPTION_CHARS, true);
    let mut option = json!({ "label": label });
    if full != label {
        option["description"] = Value::String(full);
    }
    if is_default && extended {
        option["default"] = Value::Bool(true);
    } else if is_default && !label.to_ascii_lowercase().ends_with(&RECOMMENDED.to_ascii_lowercase()) {
        let room = MAX_LABEL_CHARS - RECOMMENDED.chars().count();
        option["label"] = Value::String(format!("{}{RECOMMENDED}", fit(title, room, false)));
    }
    option
}

/// What the first question says of the fields sent unasked with their defaults, or nothing.
fn also_sent(server: &str, schema: &ElicitationSchema, unasked: &[(String, Value)]) -> String {
    if unasked.is_empty() {
        return String::new();
    }
    let named: Vec<String> = unasked
        .iter()
        .map(|(key, value)| {
            let title = schema.properties.get(key).and_then(field_title).unwrap_or(key.as_str());
            format!("{title} {value}")
        })
        .collect();
    format!("Sent with your answers, as {server} proposes: {}.\n\n", named.join(", "))
}

/// A string, number or integer field's `title`, when it has one.
fn field_title(definition: &PrimitiveSchemaDefinition) -> Option<&str> {
    match definition {
        PrimitiveSchemaDefinition::String(s) => s.title.as_deref(),
        PrimitiveSchemaDefinition::Number(n) => n.title.as_deref(),
        PrimitiveSchemaDefinition::Integer(i) => i.title.as_deref(),
        _ => None,
    }
}

/// The string fields that take a choice field's own words (`KEY_other`), with their rules: not
/// asked on their own.
fn other_fields(schema: &ElicitationSchema, required: &[String]) -> BTreeMap<String, TextKind> {
    let mut text_fields = BTreeMap::new();
    for (key, definition) in &schema.properties {
        if let (Some(choice), PrimitiveSchemaDefinition::String(_)) = (key.strip_suffix("_other"), definition)
            && !required.contains(key)
            && schema.properties.get(choice).is_some_and(|d| matches!(choice_field(choice, d), Ok(Some(_))))
            && let Some((kind, _)) = TextKind::of(definition)
        {
            text_fields.insert(key.clone(), kind);
        }
    }
    text_fields
}

/// `questions` validated in `profile`; an error names the field whose question fails alone.
fn validated(
    questions: &[Value],
    slots: &[Slot],
    profile: Profile,
) -> Result<askuser_core::Questions, String> {
    let validator = Validator::new().with_profile(profile);
    let questions = validator.validate_value(&json!({ "questions": questions })).map_err(|error| {
        // Name the field whose question failed, when one alone does.
        let alone = questions.iter().zip(slots).find_map(|(question, slot)| {
            validator
                .validate_value(&json!({ "questions": [question] }))
                .err()
                .map(|e| format!("field {:?}: {e}", slot.key()))
        });
        alone.unwrap_or_else(|| format!("the form cannot be asked: {error}"))
    })?;
    Ok(questions)
}

/// A string, number or integer field as a text question (extended profile): the question's JSON
/// and its slot. `intro` starts the question's text.
fn text_question(
    key: &str,
    definition: &PrimitiveSchemaDefinition,
    required: bool,
    intro: &str,
    headers: &mut Vec<String>,
) -> Result<(Value, Slot), String> {
    let Some((kind, default)) = TextKind::of(definition) else {
        return Err(format!("field {key:?} is not text or a number"));
    };
    if let PrimitiveSchemaDefinition::String(s) = definition
        && s.format.is_some_and(|f| {
            !matches!(
                f,
                StringFormat::Email | StringFormat::Uri | StringFormat::Date | StringFormat::DateTime
            )
        })
    {
        return Err(format!("field {key:?} has a format askuser cannot check"));
    }
    let (title, description) = match definition {
        PrimitiveSchemaDefinition::String(s) => (s.title.as_deref(), s.description.as_deref()),
        PrimitiveSchemaDefinition::Number(n) => (n.title.as_deref(), n.description.as_deref()),
        PrimitiveSchemaDefinition::Integer(i) => (i.title.as_deref(), i.description.as_deref()),
        _ => (None, None),
    };
    let header = unique_header(title.unwrap_or(key), headers);
    let mut notes = Vec::new();
    if let Some(hint) = kind.hint() {
        notes.push(format!("Answer with {hint}."));
    }
    match (&default, required) {
        (Some(default), _) => notes.push(format!(
            "Default: {}; answer {KEEP_DEFAULT} to take it.",
            default.as_str().map_or_else(|| default.to_string(), str::to_owned)
        )),
        (None, false) => notes.push(format!("Optional: answer {KEEP_DEFAULT} to leave it empty.")),
        (None, true) => {}
    }
    let text = format!("{intro}{} {}", description.or(title).unwrap_or(key), notes.join(" "));
    let question = json!({
        "kind": "text",
        "header": header,
        "question": fit(&text, MAX_QUESTION_CHARS, true),
    });
    Ok((question, Slot::Text { key: key.to_owned(), kind, default, required }))
}

impl Plan {
    pub(super) fn new(
        server: &str,
        message: &str,
        schema: &ElicitationSchema,
        problem: Option<&str>,
        profile: Profile,
    ) -> Result<Self, String> {
        let extended = profile == Profile::Extended;
        let required = schema.required.clone().unwrap_or_default();
        let order: Vec<&String> = match &schema.property_order {
            Some(order) => order.iter().collect(),
            None => schema.properties.keys().collect(),
        };
        let text_fields = other_fields(schema, &required);
        let unasked =
            if extended { Vec::new() } else { unasked_defaults(schema, &order, &required, &text_fields) };
        let also_sent = also_sent(server, schema, &unasked);
        let mut questions = Vec::new();
        let mut slots = Vec::new();
        let mut headers: Vec<String> = Vec::new();
        let intro = |first: bool| match (first, problem) {
            (false, _) => String::new(),
            (true, None) => format!("{server} asks: {message}\n\n{also_sent}"),
            (true, Some(problem)) => format!(
                "Your last answer could not be sent: {problem}.\n{server} asks: {message}\n\n{also_sent}"
            ),
        };
        for key in order {
            let Some(definition) = schema.properties.get(key) else { continue };
            let is_required = required.contains(key);
            let Some(field) = choice_field(key, definition)? else {
                if text_fields.contains_key(key) {
                    continue;
                }
                if !extended || TextKind::of(definition).is_none() {
                    if is_required {
                        return Err(format!(
                            "field {key:?} asks for free text or a number, which askuser asks only in the extended profile (ElicitationHandler::with_profile)"
                        ));
                    }
                    continue;
                }
                let intro = format!("[{server}] {}", intro(questions.is_empty()));
                let (question, slot) = text_question(key, definition, is_required, &intro, &mut headers)?;
                questions.push(question);
                slots.push(slot);
                continue;
            };
            let mut options = field.options;
            let values: Vec<String> = options.iter().map(|(value, _)| value.clone()).collect();
            if !is_required && options.len() < MAX_OPTIONS {
                options.push((String::new(), LEAVE_EMPTY.to_owned()));
            }
            if !(MIN_OPTIONS..=MAX_OPTIONS).contains(&options.len()) {
                return Err(format!(
                    "field {key:?} has {} choices; askuser can show {MIN_OPTIONS} to {MAX_OPTIONS}",
                    options.len()
                ));
            }
            let built: Vec<Value> = options
                .iter()
                .map(|(value, title)| option(value, title, &field.defaults, extended))
                .collect();
            let header = unique_header(field.title.unwrap_or(field.key), &mut headers);
            let limits = if field.multi {
                picks(field.min, field.max).map(|p| format!(" (pick {p})")).unwrap_or_default()
            } else {
                String::new()
            };
            let text = format!(
                "[{server}] {}{}{limits}",
                intro(questions.is_empty()),
                field.description.or(field.title).unwrap_or(field.key)
            );
            let mut question = json!({
                "header": header,
                "question": fit(&text, MAX_QUESTION_CHARS, true),
                "options": built,
                "multi_select": field.multi,
            });
            if extended {
                question["allow_other"] = Value::Bool(text_fields.contains_key(&format!("{key}_other")));
            }
            questions.push(question);
            slots.push(if field.boolean {
                Slot::Boolean { key: key.clone() }
            } else {
                Slot::Choice { key: key.clone(), values, multi: field.multi, min: field.min, max: field.max }
            });
        }
        if questions.is_empty() {
            return Err(if extended {
                "the form has no field askuser can ask".to_owned()
            } else {
                "the form has no field askuser can ask (choices or yes/no)".to_owned()
            });
        }
        let questions = validated(&questions, &slots, profile)?;
        Ok(Self { request: AskUserRequest::new(questions), slots, text_fields, unasked })
    }

    /// The form content for `response`, or what is wrong with it (for the person, when the
    /// question is asked again).
    pub(super) fn content(&self, response: &AskUserResponse) -> Result<Value, String> {
        askuser_core::check_response(&self.request, response).map_err(|e| e.to_string())?;
        let questions = self.request.questions().as_slice();
        let mut content = Map::new();
        let mut problems = Vec::new();
        for answer in &response.answers {
            let index = questions.iter().position(|q| q.header() == answer.header).unwrap_or_default();
            let (slot, question) = (&self.slots[index], &questions[index]);
            let labels: Vec<&str> = question.options().iter().map(QuestionOption::label).collect();
            let picked: Vec<usize> =
                answer.selected.iter().filter_map(|l| labels.iter().position(|x| x == l)).collect();
            match slot {
                Slot::Boolean { key } => {
                    if let Some(text) = &answer.custom_answer {
                        return Err(format!("\"{}\" takes yes or no, not {text:?}", answer.header));
                    }
                    // Options: Yes, No, and (leave empty) on an optional field.
                    let value = match picked.first() {
                        Some(0) => Some(true),
                        Some(1) => Some(false),
                        _ => None,
                    };
                    if let Some(value) = value {
                        content.insert(key.clone(), Value::Bool(value));
                    }
                }
                Slot::Text { key, kind, default, required } => {
                    let text = answer.custom_answer.as_deref().map(str::trim).unwrap_or_default();
                    if text == KEEP_DEFAULT {
                        match default {
                            Some(default) => {
                                content.insert(key.clone(), default.clone());
                            }
                            None if *required => {
                                return Err(format!("\"{}\" needs an answer", answer.header));
                            }
                            None => {}
                        }
                        continue;
                    }
                    match kind.value(text) {
                        Ok(value) => {
                            content.insert(key.clone(), value);
                        }
                        // Every misfit at once, so the person mends them in one round.
                        Err(why) => problems.push(format!("\"{}\" {why}", answer.header)),
                    }
                }
                Slot::Choice { key, values, multi, min, max } => {
                    if let Some(text) = &answer.custom_answer {
                        let other = format!("{key}_other");
                        let Some(kind) = self.text_fields.get(&other) else {
                            return Err(format!(
                                "\"{}\" takes one of its options, not your own words",
                                answer.header
                            ));
                        };
                        match kind.value(text) {
                            Ok(value) => {
                                content.insert(other, value);
                            }
                            Err(why) => problems.push(format!("\"{}\" {why}", answer.header)),
                        }
                        continue;
                    }
                    let chosen: Vec<Value> = picked
                        .iter()
                        .filter_map(|&i| values.get(i))
                        .map(|v| Value::String(v.clone()))
                        .collect();
                    if *multi {
                        let count = chosen.len() as u64;
                        if min.is_some_and(|m| count < m) || max.is_some_and(|m| count > m) {
                            let wanted = picks(*min, *max).unwrap_or_default();
                            return Err(format!("\"{}\" needs {wanted} picks, not {count}", answer.header));
                        }
                        if !chosen.is_empty() {
                            content.insert(key.clone(), Value::Array(chosen));
                        }
                    } else if let Some(value) = chosen.into_iter().next() {
                        content.insert(key.clone(), value);
                    }
                }
            }
        }
        if !problems.is_empty() {
            return Err(problems.join("; "));
        }
        for (key, default) in &self.unasked {
            content.entry(key.clone()).or_insert_with(|| default.clone());
        }
        Ok(Value::Object(content))
    }
}

impl Slot {
    fn key(&self) -> &str {
        match self {
            Self::Choice { key, .. } | Self::Boolean { key } | Self::Text { key, .. } => key,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use askuser_core::{AskUserAnswer, Question};
    use serde_json::json;

    fn schema(value: Value) -> ElicitationSchema {
        serde_json::from_value(value).unwrap()
    }

    fn answers(plan: &Plan, picks: &[(&str, &[&str])]) -> Result<Value, String> {
        let answers =
            picks.iter().map(|(h, labels)| AskUserAnswer::picked(*h, labels.iter().copied())).collect();
        plan.content(&AskUserResponse::answered(answers))
    }

    #[test]
    fn every_choice_shape_becomes_a_question() {
        // From text, as it comes off the wire: the fields keep the server's order.
        let form: ElicitationSchema = serde_json::from_str(
            r#"{"type": "object", "properties": {
            "color": {"type": "string", "title": "Color", "enum": ["r", "g"], "enumNames": ["Red", "Green"]},
            "size": {"type": "string", "title": "Size", "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}]},
            "tags": {"type": "array", "title": "Tags", "minItems": 1, "maxItems": 2, "items": {"anyOf": [
                {"const": "a", "title": "Alpha"}, {"const": "b", "title": "Beta"}, {"const": "c", "title": "Gamma"}]}},
            "ok": {"type": "boolean", "title": "Proceed", "description": "Go ahead?"},
            "note": {"type": "string"}},
            "required": ["color", "size", "tags", "ok"]}"#,
        )
        .unwrap();
        let plan = Plan::new("weather-server", "Pick, please", &form, None, Profile::Reference).unwrap();
        let questions = plan.request.questions().as_slice();
        let headers: Vec<&str> = questions.iter().map(Question::header).collect();
        assert_eq!(headers, ["Color", "Size", "Tags", "Proceed"]);
        assert!(questions[0].question().starts_with("[weather-server] weather-server asks: Pick, please"));
        assert_eq!(questions[2].question(), "[weather-server] Tags (pick 1 to 2)");
        assert!(questions[2].multi_select());
        assert_eq!(questions[3].options()[0].label(), "Yes");
        let content = answers(
            &plan,
            &[
                ("Color", &["Green"]),
                ("Size", &["Small"]),
                ("Tags", &["Gamma", "Alpha"]),
                ("Proceed", &["No"]),
            ],
        )
        .unwrap();
        assert_eq!(content, json!({"color": "g", "size": "s", "tags": ["c", "a"], "ok": false}));
        let too_many = answers(
            &plan,
            &[
                ("Color", &["Red"]),
                ("Size", &["Small"]),
                ("Tags", &["Alpha", "Beta", "Gamma"]),
                ("Proceed", &["Yes"]),
            ],
        );
        assert_eq!(too_many.unwrap_err(), "\"Tags\" needs 1 to 2 picks, not 3");
    }

    #[test]
    fn optional_fields_can_be_left_empty_and_other_goes_to_its_field() {
        let form = schema(json!({"type": "object", "properties": {
            "q01": {"type": "string", "title": "Plan", "oneOf": [{"const": "S", "title": "Small"}, {"const": "L", "title": "Large"}]},
            "q01_other": {"type": "string"},
            "q02": {"type": "boolean", "title": "Backups"}}}));
        let plan = Plan::new("askuser", "m", &form, None, Profile::Reference).unwrap();
        assert_eq!(plan.request.questions().as_slice()[0].options()[2].label(), LEAVE_EMPTY);
        let content = answers(&plan, &[("Plan", &[LEAVE_EMPTY]), ("Backups", &["Yes"])]).unwrap();
        assert_eq!(content, json!({"q02": true}));
        // Guards an optional yes/no left empty: it must stay empty, not become false.
        let content = answers(&plan, &[("Plan", &["Large"]), ("Backups", &[LEAVE_EMPTY])]).unwrap();
        assert_eq!(content, json!({"q01": "L"}));
        let own = AskUserResponse::answered(vec![
            AskUserAnswer::custom("Plan", "Medium"),
            AskUserAnswer::picked("Backups", ["No"]),
        ]);
        assert_eq!(plan.content(&own).unwrap(), json!({"q01_other": "Medium", "q02": false}));
        let nowhere = AskUserResponse::answered(vec![
            AskUserAnswer::picked("Plan", ["Small"]),
            AskUserAnswer::custom("Backups", "maybe"),
        ]);
        assert!(plan.content(&nowhere).unwrap_err().contains("takes yes or no"));
    }

    /// SEP-1034, as the conformance suite's `elicitation-sep1034-client-defaults` sends it.
    #[test]
    fn the_reference_profile_keeps_the_forms_defaults_and_says_so() {
        let form = schema(json!({"type": "object", "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "title": "Age", "default": 30},
            "score": {"type": "number", "default": 95.5},
            "nickname": {"type": "string"},
            "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "pending"},
            "verified": {"type": "boolean", "default": true}}}));
        let plan = Plan::new("users", "Confirm", &form, None, Profile::Reference).unwrap();
        let questions = plan.request.questions().as_slice();
        let labels = |q: &Question| q.options().iter().map(|o| o.label().to_owned()).collect::<Vec<_>>();
        assert_eq!(labels(&questions[0]), ["active", "inactive", "pending (Recommended)", LEAVE_EMPTY]);
        assert_eq!(labels(&questions[1]), ["Yes (Recommended)", "No", LEAVE_EMPTY]);
        // In the form's order, which serde_json keeps only with its `preserve_order`.
        let text = questions[0].question();
        let sent = text.split("Sent with your answers, as users proposes: ").nth(1).unwrap_or_default();
        let sent = sent.split(".\n").next().unwrap_or_default();
        let mut named: Vec<&str> = sent.split(", ").collect();
        named.sort_unstable();
        assert_eq!(named, ["Age 30", "name \"John Doe\"", "score 95.5"], "{text}");
        // What the person picked wins; the unasked fields take their defaults, `nickname` none.
        let content = answers(&plan, &[("status", &["inactive"]), ("verified", &["No"])]).unwrap();
        assert_eq!(
            content,
            json!({"name": "John Doe", "age": 30, "score": 95.5, "status": "inactive", "verified": false})
        );
        // The extended profile asks those fields instead, and marks defaults with `default`.
        let extended = Plan::new("users", "Confirm", &form, None, Profile::Extended).unwrap();
        assert!(extended.unasked.is_empty());
        let status = &extended.request.questions().as_slice()[4];
        assert_eq!(labels(status)[2], "pending");
        assert!(status.options()[2].is_default());
    }

    #[test]
    fn forms_it_cannot_ask_are_refused_with_the_reason() {
        #[track_caller]
        fn refused(form: Value, part: &str) {
            let error = Plan::new("s", "m", &schema(form), None, Profile::Reference).unwrap_err();
            assert!(error.contains(part), "{error:?} lacks {part:?}");
        }
        refused(
            json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
            "extended profile",
        );
        refused(
            json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}),
            "extended profile",
        );
        refused(
            json!({"type": "object", "properties": {"name": {"type": "string"}}}),
            "no field askuser can ask",
        );
        let seven: Vec<String> = (1..=7).map(|n| n.to_string()).collect();
        refused(
            json!({"type": "object", "properties": {"n": {"type": "string", "enum": seven}}, "required": ["n"]}),
            "7 choices",
        );
        refused(
            json!({"type": "object", "properties": {"n": {"type": "string", "enum": ["same", "SAME"]}}, "required": ["n"]}),
            "field \"n\"",
        );
    }

    #[test]
    fn long_and_unsafe_titles_are_fitted() {
        let long = "x".repeat(80);
        let form = schema(json!({"type": "object", "properties": {
            "a": {"type": "string", "title": "A title that is much too long for a header", "oneOf": [
                {"const": "1", "title": long}, {"const": "2", "title": "bell\u{7} and\nnewline"}]},
            "b": {"type": "boolean", "title": "A title that is much too long for a header"}},
            "required": ["a", "b"]}));
        let plan = Plan::new("s", "m", &form, None, Profile::Reference).unwrap();
        let questions = plan.request.questions().as_slice();
        assert_eq!(questions[0].header(), "A title that is much too…");
        assert_eq!(questions[1].header(), "A title that is much… #2");
        assert_eq!(questions[0].options()[0].label().chars().count(), MAX_LABEL_CHARS);
        assert_eq!(questions[0].options()[0].description(), Some(long.as_str()));
        assert_eq!(questions[0].options()[1].label(), "bell and newline");
    }
}
