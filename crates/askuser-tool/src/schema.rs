//! The parameters schema, generated with schemars from Rust mirror types, and its provider dialects.
//!
//! The mirror types exist only to describe the arguments: validation is `askuser-core`'s job and
//! stays authoritative, because several dialects are lossy (they drop limits a provider cannot
//! express).

use std::fmt;
use std::str::FromStr;

use askuser_core::{
    MAX_DESCRIPTION_CHARS, MAX_HEADER_CHARS, MAX_ID_CHARS, MAX_LABEL_CHARS, MAX_OPTIONS, MAX_PURPOSE_CHARS,
    MAX_QUESTION_CHARS, MAX_QUESTIONS, MIN_OPTIONS, Profile, Validator,
};
use schemars::JsonSchema;
use serde_json::{Map, Value, json};

// The limits are askuser-core's own constants, so the schema cannot drift from what validation
// enforces.

// The arguments of one call. No doc comment on purpose: the reference schema's root has no
// description, and schemars turns a type's doc comment into one.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
#[expect(dead_code, reason = "a mirror that only describes the arguments; never built")]
struct Arguments {
    /// One to ten related questions to put to the person in one go, each with a unique `header`.
    #[schemars(length(min = 1, max = MAX_QUESTIONS))]
    questions: Vec<Question>,
}

/// One multiple-choice question.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
#[expect(dead_code, reason = "a mirror that only describes the arguments; never built")]
#[expect(clippy::struct_field_names, reason = "the field names are the wire names")]
struct Question {
    /// A short tag naming the question, on one line; the answer comes back keyed by it.
    #[schemars(length(min = 1, max = MAX_HEADER_CHARS))]
    header: String,
    /// The question itself, in full; may span several lines.
    #[schemars(length(min = 1, max = MAX_QUESTION_CHARS))]
    question: String,
    /// Two to six concrete choices, the most likely first.
    #[schemars(length(min = MIN_OPTIONS, max = MAX_OPTIONS))]
    options: Vec<QuestionOption>,
    /// True when the person may pick several options; false (the default) for exactly one.
    #[serde(default)]
    multi_select: bool,
}

/// One choice the person can pick.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
#[expect(dead_code, reason = "a mirror that only describes the arguments; never built")]
struct QuestionOption {
    /// What the person picks: a short name of one to five words, on one line.
    #[schemars(length(min = 1, max = MAX_LABEL_CHARS))]
    label: String,
    /// Optional: what picking this option means or costs.
    #[serde(default)]
    #[schemars(length(max = MAX_DESCRIPTION_CHARS))]
    description: Option<String>,
}

// The extended profile's arguments (docs/contract.md §10). Validation in askuser-core is authoritative: a
// schema cannot say that options belong to choice questions only, that a secret question is alone,
// or that a single-select question has at most one default.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
#[expect(dead_code, reason = "a mirror that only describes the arguments; never built")]
struct ExtendedArguments {
    /// One to ten related questions to put to the person in one go, each with a unique `header`
    /// (and a unique `id`, when given). A secret question must be alone.
    #[schemars(length(min = 1, max = MAX_QUESTIONS))]
    questions: Vec<ExtendedQuestion>,
    /// Optional: how many seconds to wait for the answers, at most the host's maximum; leave it out
    /// for the host's default. It can shorten the wait, never extend it.
    #[schemars(range(min = 1, max = Validator::DEFAULT_MAX_TIMEOUT_SECONDS))]
    timeout_seconds: Option<u32>,
}

/// What a question asks for.
#[derive(JsonSchema)]
#[serde(rename_all = "lowercase")]
#[expect(dead_code, reason = "a mirror that only describes the arguments; never built")]
enum Kind {
    Choice,
    Text,
    Secret,
}

fn choice() -> Kind {
    Kind::Choice
}

fn yes() -> bool {
    true
}

/// One question: a choice among options, a free-text answer, or a secret.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields, title = "Question")]
#[expect(dead_code, reason = "a mirror that only describes the arguments; never built")]
struct ExtendedQuestion {
    /// `choice` (the default): pick among options; `text`: a short free-text answer, no options;
    /// `secret`: a credential the task needs, alone in its call, answered by a reference only.
    #[serde(default = "choice")]
    kind: Kind,
    /// Optional: a stable id for the answer to carry; `q1`, `q2`, … by position when left out.
    #[schemars(length(min = 1, max = MAX_ID_CHARS), regex(pattern = r"^[A-Za-z0-9_.-]+$"))]
    id: Option<String>,
    /// A short tag naming the question, on one line; unique in the call.
    #[schemars(length(min = 1, max = MAX_HEADER_CHARS))]
    header: String,
    /// The question itself, in full; may span several lines.
    #[schemars(length(min = 1, max = MAX_QUESTION_CHARS))]
    question: String,
    /// A choice question: two to six concrete choices, the most likely first. A text or secret
    /// question: none (leave it out or send an empty list).
    #[serde(default)]
    #[schemars(length(max = MAX_OPTIONS))]
    options: Vec<ExtendedOption>,
    /// A choice question: true when the person may pick several options. False on other kinds.
    #[serde(default)]
    multi_select: bool,
    /// A choice question: whether the person may type their own answer instead of picking
    /// (default true). Only true on other kinds.
    #[serde(default = "yes")]
    allow_other: bool,
    /// A secret question only (required there): the name a tool reads the secret under, like an
    /// environment variable.
    #[schemars(length(min = 1, max = MAX_ID_CHARS), regex(pattern = r"^[A-Za-z_][A-Za-z0-9_]*$"))]
    secret_name: Option<String>,
    /// A secret question only (required there): why the task needs this credential.
    #[schemars(length(min = 1, max = MAX_PURPOSE_CHARS))]
    purpose: Option<String>,
}

/// One choice the person can pick.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields, title = "QuestionOption")]
#[expect(dead_code, reason = "a mirror that only describes the arguments; never built")]
struct ExtendedOption {
    /// What the person picks: a short name of one to five words, on one line.
    #[schemars(length(min = 1, max = MAX_LABEL_CHARS))]
    label: String,
    /// Optional: what picking this option means or costs.
    #[serde(default)]
    #[schemars(length(max = MAX_DESCRIPTION_CHARS))]
    description: Option<String>,
    /// True for the option you would pick yourself: taken when nobody answers, and where the
    /// person's cursor starts. At most one on a single-select question.
    #[serde(default)]
    default: bool,
}

// What a client sends back as the answer to a call, in either profile (`AskUserResponse`).
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
#[expect(dead_code, reason = "a mirror that only describes the response; never built")]
struct Response {
    /// One answer per question, in any order; none when `cancelled`.
    #[serde(default)]
    answers: Vec<Answer>,
    /// True when the person declined: then there are no answers.
    #[serde(default)]
    cancelled: bool,
    /// Who produced the response: `user` (the default) only when a person really answered.
    #[serde(default = "user")]
    answered_by: By,
}

#[derive(JsonSchema)]
#[serde(rename_all = "lowercase")]
#[expect(dead_code, reason = "a mirror that only describes the response; never built")]
enum By {
    User,
    Timeout,
    Unattended,
}

fn user() -> By {
    By::User
}

/// The answer to one question.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
#[expect(dead_code, reason = "a mirror that only describes the response; never built")]
#[expect(clippy::struct_field_names, reason = "the field names are the wire names")]
struct Answer {
    /// The header of the question answered, exactly as the request has it.
    header: String,
    /// The labels picked, in the order picked; empty with `custom_answer` or `secret_ref`.
    #[serde(default)]
    selected: Vec<String>,
    /// The person's own words: instead of picking (when the question allows it), or the answer to a
    /// text question.
    #[serde(default)]
    custom_answer: Option<String>,
    /// Extended profile, optional: the question's id; must match the header's question.
    id: Option<String>,
    /// Extended profile, a secret question only: `session:NAME`, never the value.
    #[schemars(regex(pattern = r"^session:[A-Za-z_][A-Za-z0-9_]*$"))]
    secret_ref: Option<String>,
}

/// A provider's flavour of the parameters schema.
///
/// All dialects accept exactly the calls the canonical schema accepts, or more (when a provider
/// cannot express a limit): validation in `askuser-core` is what enforces the rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Dialect {
    /// Inlined JSON Schema (draft 2020-12) with no `$ref`/`$defs`, `title` or `format`: for MCP,
    /// non-strict Anthropic tools, Gemini's `parametersJsonSchema`, rig and most frameworks.
    Generic,
    /// `OpenAI` function calling with `strict: true` (also the Responses API default): every object
    /// has `additionalProperties: false`, every key is required, an optional `description` is
    /// nullable (`["string","null"]`), no `oneOf`, no `default`. `multi_select` becomes a required
    /// boolean rather than a nullable one, because `null` is not an accepted value for it.
    OpenAiStrict,
    /// Anthropic tool use, compatible with `strict: true`: every object has
    /// `additionalProperties: false`; string lengths, `maxItems`, `minItems` above 1 and defaults,
    /// which strict mode does not support, are stated in the descriptions instead.
    Anthropic,
    /// Gemini's `parameters` field (a subset of `OpenAPI` 3.0): no `additionalProperties`, `$ref`,
    /// `oneOf`, `const` or type arrays; optional `description` is `nullable: true`.
    Gemini,
}

impl Dialect {
    /// Every dialect, in a stable order.
    pub const ALL: [Dialect; 4] = [Self::Generic, Self::OpenAiStrict, Self::Anthropic, Self::Gemini];

    /// The name used on the command line and in file names: `generic`, `openai-strict`,
    /// `anthropic`, `gemini`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Generic => "generic",
            Self::OpenAiStrict => "openai-strict",
            Self::Anthropic => "anthropic",
            Self::Gemini => "gemini",
        }
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A dialect name that is not one of `generic`, `openai-strict`, `anthropic`, `gemini`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown schema dialect {name:?} (expected generic, openai-strict, anthropic or gemini)")]
pub struct UnknownDialect {
    name: String,
}

impl FromStr for Dialect {
    type Err = UnknownDialect;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL.into_iter().find(|d| d.name() == s).ok_or_else(|| UnknownDialect { name: s.to_owned() })
    }
}

/// The canonical parameters schema: draft 2020-12 with `$defs`, shaped like the reference
/// schema (`Question` and `QuestionOption` definitions with titles, a nullable `description`
/// expressed as `anyOf`). This is what `schema/ask_user_question.json` holds.
#[must_use]
pub fn parameters_schema() -> Value {
    canonical::<Arguments>()
}

/// The canonical parameters schema of `profile` (see [`parameters_schema`]); for the extended
/// profile, what `schema/ask_user_question.extended.json` holds.
#[must_use]
pub fn parameters_schema_for(profile: Profile) -> Value {
    match profile {
        Profile::Extended => canonical::<ExtendedArguments>(),
        _ => canonical::<Arguments>(),
    }
}

/// The JSON schema of what a client sends back as an answer (`AskUserResponse`), for both
/// profiles: what `schema/ask_user_response.json` holds.
#[must_use]
pub fn response_schema() -> Value {
    canonical::<Response>()
}

fn canonical<T: JsonSchema>() -> Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .with(|settings| settings.meta_schema = None)
        .into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    if let Some(root) = schema.as_object_mut() {
        root.remove("title");
        if let Some(Value::Object(defs)) = root.get_mut("$defs") {
            for (name, def) in defs.iter_mut() {
                if let Some(def) = def.as_object_mut() {
                    def.insert("title".to_owned(), Value::String(name.clone()));
                }
            }
        }
    }
    walk(&mut schema, &mut nullable_as_any_of);
    // Sorted keys whatever serde_json's features: with `preserve_order` (which any crate in a
    // build can switch on through feature unification) the order would otherwise follow schemars'
    // insertion order, and the checked-in files would depend on which packages were built.
    schema.sort_all_objects();
    schema
}

/// The parameters schema in `dialect`.
#[must_use]
pub fn parameters(dialect: Dialect) -> Value {
    in_dialect(parameters_schema(), dialect)
}

/// The parameters schema of `profile` in `dialect`.
#[must_use]
pub fn parameters_for(profile: Profile, dialect: Dialect) -> Value {
    in_dialect(parameters_schema_for(profile), dialect)
}

fn in_dialect(schema: Value, dialect: Dialect) -> Value {
    let mut schema = inline_refs(schema);
    walk(&mut schema, &mut |object| {
        object.remove("title");
        object.remove("format");
        object.remove("$schema");
    });
    match dialect {
        Dialect::Generic => {}
        Dialect::OpenAiStrict => walk(&mut schema, &mut openai_strict),
        Dialect::Anthropic => walk(&mut schema, &mut anthropic),
        Dialect::Gemini => walk(&mut schema, &mut gemini),
    }
    schema.sort_all_objects();
    schema
}

/// Puts the host's maximum into `timeout_seconds` (extended profile) wherever the generated schema
/// states the default maximum: the `maximum`, or the Anthropic dialect's description note.
pub(crate) fn set_timeout_maximum(parameters: &mut Value, max: u32) {
    if max == Validator::DEFAULT_MAX_TIMEOUT_SECONDS {
        return;
    }
    let Some(timeout) = parameters.pointer_mut("/properties/timeout_seconds") else { return };
    let default_max = Validator::DEFAULT_MAX_TIMEOUT_SECONDS;
    walk(timeout, &mut |object| {
        if object.get("maximum").and_then(Value::as_u64) == Some(u64::from(default_max)) {
            object.insert("maximum".to_owned(), json!(max));
        }
        if let Some(Value::String(text)) = object.get_mut("description") {
            *text = text.replace(&format!("From 1 to {default_max}."), &format!("From 1 to {max}."));
        }
    });
}

/// Replaces every `{"$ref": "#/$defs/Name"}` by the definition it names and drops `$defs`.
///
/// Also used by tests to compare against the reference schema.
#[must_use]
pub fn inline_refs(mut schema: Value) -> Value {
    fn resolve(value: &mut Value, defs: &Value) {
        match value {
            Value::Object(object) => {
                let target = object
                    .get("$ref")
                    .and_then(Value::as_str)
                    .and_then(|r| r.strip_prefix("#/$defs/"))
                    .and_then(|name| defs.get(name))
                    .cloned();
                if let Some(mut target) = target {
                    object.remove("$ref");
                    resolve(&mut target, defs);
                    if let Value::Object(target) = target {
                        for (key, value) in target {
                            object.entry(key).or_insert(value);
                        }
                    }
                }
                for child in object.values_mut() {
                    resolve(child, defs);
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|item| resolve(item, defs)),
            _ => {}
        }
    }
    let defs = schema.as_object_mut().and_then(|root| root.remove("$defs")).unwrap_or(Value::Null);
    resolve(&mut schema, &defs);
    schema
}

/// Calls `f` on every schema object in `value`, parents before children. A `properties` map is
/// not a schema, its keys are field names (`default` is one in the extended profile): `f` sees
/// only the schemas in it.
fn walk(value: &mut Value, f: &mut dyn FnMut(&mut Map<String, Value>)) {
    match value {
        Value::Object(object) => {
            f(object);
            for (key, child) in object.iter_mut() {
                match child {
                    Value::Object(fields) if key == "properties" => {
                        fields.values_mut().for_each(|schema| walk(schema, f));
                    }
                    child => walk(child, f),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| walk(item, f)),
        _ => {}
    }
}

/// `{"type": ["string","null"], "maxLength": 200, …}` → `{"anyOf": [{"maxLength": 200, "type":
/// "string"}, {"type": "null"}], …}`, the reference's form of an optional string.
fn nullable_as_any_of(object: &mut Map<String, Value>) {
    let Some(Value::Array(types)) = object.get("type") else { return };
    let [Value::String(kind), Value::String(null)] = types.as_slice() else { return };
    if null != "null" {
        return;
    }
    let mut inner = Map::new();
    inner.insert("type".to_owned(), Value::String(kind.clone()));
    for key in ["minLength", "maxLength", "pattern", "format", "minimum", "maximum"] {
        if let Some(value) = object.remove(key) {
            inner.insert(key.to_owned(), value);
        }
    }
    object.remove("type");
    object.insert("anyOf".to_owned(), json!([inner, {"type": "null"}]));
}

/// `anyOf: [{…, "type": T}, {"type": "null"}]` → the non-null branch's keys, `type` left to the caller.
fn split_nullable(object: &mut Map<String, Value>) -> Option<(Value, Map<String, Value>)> {
    let Some(Value::Array(branches)) = object.get("anyOf") else { return None };
    let [Value::Object(branch), null] = branches.as_slice() else { return None };
    if *null != json!({"type": "null"}) {
        return None;
    }
    let mut branch = branch.clone();
    let kind = branch.remove("type")?;
    object.remove("anyOf");
    Some((kind, branch))
}

fn is_object_schema(object: &Map<String, Value>) -> bool {
    object.get("type").and_then(Value::as_str) == Some("object")
}

fn openai_strict(object: &mut Map<String, Value>) {
    object.remove("default");
    if let Some((kind, rest)) = split_nullable(object) {
        object.insert("type".to_owned(), json!([kind, "null"]));
        object.extend(rest);
    }
    if is_object_schema(object) {
        object.insert("additionalProperties".to_owned(), Value::Bool(false));
        let keys: Vec<Value> = object
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().cloned().map(Value::String).collect())
            .unwrap_or_default();
        object.insert("required".to_owned(), Value::Array(keys));
    }
}

fn anthropic(object: &mut Map<String, Value>) {
    if is_object_schema(object) {
        object.insert("additionalProperties".to_owned(), Value::Bool(false));
    }
    let mut notes = Vec::new();
    let mut target = object.clone();
    let nullable = split_nullable(&mut target);
    let limits = nullable.as_ref().map_or(&*object, |(_, branch)| branch);
    let (min_len, max_len) = (limits.get("minLength").cloned(), limits.get("maxLength").cloned());
    match (min_len.as_ref().and_then(Value::as_u64), max_len.as_ref().and_then(Value::as_u64)) {
        (Some(min), Some(max)) => notes.push(format!("{min} to {max} characters.")),
        (None, Some(max)) => notes.push(format!("At most {max} characters.")),
        (Some(min), None) => notes.push(format!("At least {min} characters.")),
        (None, None) => {}
    }
    let (min_items, max_items) =
        (object.get("minItems").and_then(Value::as_u64), object.get("maxItems").and_then(Value::as_u64));
    match (min_items, max_items) {
        (Some(min), Some(max)) => notes.push(format!("{min} to {max} items.")),
        (None, Some(max)) => notes.push(format!("At most {max} items.")),
        (Some(min), None) if min > 1 => notes.push(format!("At least {min} items.")),
        _ => {}
    }
    // Numeric limits: only the extended profile has any (`timeout_seconds`).
    match (limits.get("minimum").and_then(Value::as_u64), limits.get("maximum").and_then(Value::as_u64)) {
        (Some(min), Some(max)) => notes.push(format!("From {min} to {max}.")),
        (None, Some(max)) => notes.push(format!("At most {max}.")),
        (Some(min), None) => notes.push(format!("At least {min}.")),
        (None, None) => {}
    }
    match object.remove("default") {
        Some(Value::Null) | None => {}
        Some(default) => notes.push(format!("Default: {default}.")),
    }
    for key in ["minLength", "maxLength", "maxItems", "minimum", "maximum"] {
        object.remove(key);
    }
    if let Some(Value::Array(branches)) = object.get_mut("anyOf") {
        for branch in branches.iter_mut().filter_map(Value::as_object_mut) {
            for key in ["minLength", "maxLength", "minimum", "maximum"] {
                branch.remove(key);
            }
        }
    }
    if min_items.is_some_and(|min| min > 1) {
        object.insert("minItems".to_owned(), json!(1));
    }
    if !notes.is_empty() {
        let description = object.get("description").and_then(Value::as_str).unwrap_or_default();
        let joined = notes.join(" ");
        let text = if description.is_empty() { joined } else { format!("{description} {joined}") };
        object.insert("description".to_owned(), Value::String(text));
    }
}

fn gemini(object: &mut Map<String, Value>) {
    object.remove("additionalProperties");
    if let Some((kind, rest)) = split_nullable(object) {
        object.remove("default");
        object.insert("type".to_owned(), kind);
        object.extend(rest);
        object.insert("nullable".to_owned(), Value::Bool(true));
    }
}

/// A generated file under `schema/`: its path relative to the workspace root, and its contents.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SchemaFile {
    /// Path relative to the workspace root, such as `schema/ask_user_question.json`.
    pub path: String,
    /// The file's full text: pretty JSON with a `"$comment"` generated marker, ending in a newline.
    pub contents: String,
}

/// The marker every generated schema file carries as its `"$comment"`.
pub const GENERATED_MARKER: &str =
    "Generated by `cargo xtask schema` from askuser-tool; do not edit. Regenerate with `cargo xtask schema`.";

/// Every file `cargo xtask schema` writes: `schema/ask_user_question.json` (the canonical schema)
/// and `schema/ask_user_question.<dialect>.json` for each [`Dialect`]; the same for the extended
/// profile (`schema/ask_user_question.extended.json`, `schema/ask_user_question.extended.<dialect>.json`);
/// and `schema/ask_user_response.json`. Pure: it reads and writes nothing.
#[must_use]
pub fn schema_files() -> Vec<SchemaFile> {
    let mut files = vec![file("schema/ask_user_question.json".to_owned(), parameters_schema())];
    for dialect in Dialect::ALL {
        files.push(file(format!("schema/ask_user_question.{}.json", dialect.name()), parameters(dialect)));
    }
    let extended = Profile::Extended;
    files.push(file("schema/ask_user_question.extended.json".to_owned(), parameters_schema_for(extended)));
    for dialect in Dialect::ALL {
        files.push(file(
            format!("schema/ask_user_question.extended.{}.json", dialect.name()),
            parameters_for(extended, dialect),
        ));
    }
    files.push(file("schema/ask_user_response.json".to_owned(), response_schema()));
    files
}

fn file(path: String, mut schema: Value) -> SchemaFile {
    if let Some(root) = schema.as_object_mut() {
        root.insert("$comment".to_owned(), Value::String(GENERATED_MARKER.to_owned()));
    }
    schema.sort_all_objects();
    let mut contents = serde_json::to_string_pretty(&schema).unwrap_or_default();
    contents.push('\n');
    SchemaFile { path, contents }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dialect_names_round_trip() {
        for dialect in Dialect::ALL {
            assert_eq!(dialect.name().parse::<Dialect>(), Ok(dialect));
        }
        let err = "openai".parse::<Dialect>().unwrap_err();
        assert_eq!(
            err.to_string(),
            r#"unknown schema dialect "openai" (expected generic, openai-strict, anthropic or gemini)"#
        );
    }
}
