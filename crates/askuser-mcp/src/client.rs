//! The client side: any MCP server's form elicitation answered through an askuser [`Answerer`]
//! (the terminal menu in a command-line host, a web page, a script).

use std::fmt;
use std::sync::Arc;

use askuser_core::{
    AnswerError, Answerer, AskContext, AskUserRequest, AskUserResponse, MAX_DESCRIPTION_CHARS,
    MAX_HEADER_CHARS, MAX_LABEL_CHARS, MAX_OPTIONS, MAX_QUESTION_CHARS, MIN_OPTIONS, Question,
    QuestionOption, Questions, is_forbidden_char,
};
use rmcp::model::{
    ClientCapabilities, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationCapability,
    ElicitationSchema, EnumSchema, ErrorData, FormElicitationCapability, Implementation,
    InitializeRequestParams, LegacyEnumSchema, MultiSelectEnumSchema, PrimitiveSchemaDefinition,
    ProtocolVersion, SingleSelectEnumSchema,
};
use rmcp::service::{RequestContext, RoleClient};
use serde_json::{Map, Value};

/// The extra option of an optional field: picking it leaves the field empty.
pub const LEAVE_EMPTY: &str = "(leave empty)";

/// Answers any server's form elicitation through an askuser [`Answerer`]: an rmcp
/// [`ClientHandler`](rmcp::ClientHandler) that declares form elicitation, or a piece your own
/// handler calls from its `create_elicitation` ([`answer`](Self::answer)).
///
/// | form field | asked as |
/// | --- | --- |
/// | string enum (`enum`, `oneOf`, `enumNames`) | a single-select question; option labels are the titles |
/// | array of enum (`items.enum` / `items.anyOf`) | a multi-select question; `minItems`/`maxItems` checked on the way back |
/// | boolean | a Yes/No question |
/// | optional string, number or integer | not asked (left empty); a string field named `KEY_other` receives the person's own words for choice field `KEY` |
/// | required string, number or integer | the form is refused: text questions need the extended profile |
///
/// An optional choice field gets a [`LEAVE_EMPTY`] option when there is room. Every question
/// names the server that asks; the first carries the server's message. An answer that breaks the
/// schema (too few or too many picks, own words where none fit) is asked again once with the
/// problem named, then declined. URL mode is always declined: this handler never opens a link.
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// use askuser_core::DefaultsResponder;
/// use askuser_mcp::ElicitationHandler;
/// use rmcp::ServiceExt;
///
/// // In a terminal host: `askuser_terminal::TerminalAnswerer::new()` instead of the defaults.
/// let transport = rmcp::transport::TokioChildProcess::new(tokio::process::Command::new("some-mcp-server"))?;
/// let client = ElicitationHandler::new(DefaultsResponder::new()).serve(transport).await?;
/// let tools = client.list_all_tools().await?;
/// # let _ = tools;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct ElicitationHandler {
    answerer: Arc<dyn Answerer>,
    client: Implementation,
    version: Option<ProtocolVersion>,
}

impl fmt::Debug for ElicitationHandler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ElicitationHandler").field("client", &self.client).finish_non_exhaustive()
    }
}

impl ElicitationHandler {
    /// A handler that asks through `answerer`, introducing itself as `askuser`.
    pub fn new(answerer: impl Answerer + 'static) -> Self {
        Self::shared(Arc::new(answerer))
    }

    /// A handler that asks through a shared answerer.
    #[must_use]
    pub fn shared(answerer: Arc<dyn Answerer>) -> Self {
        Self { answerer, client: Implementation::new("askuser", env!("CARGO_PKG_VERSION")), version: None }
    }

    /// The client name and version sent to servers. Default: `askuser` and this crate's version.
    #[must_use]
    pub fn with_client_info(mut self, client: Implementation) -> Self {
        self.client = client;
        self
    }

    /// The protocol revision to ask for at `initialize`. Default: rmcp's newest with an
    /// `initialize` handshake (2025-11-25); 2026-07-28 is chosen by connecting with
    /// [`ClientLifecycleMode::Discover`](rmcp::ClientLifecycleMode::Discover) instead.
    #[must_use]
    pub fn with_protocol_version(mut self, version: ProtocolVersion) -> Self {
        self.version = Some(version);
        self
    }

    /// Answers one elicitation from the server called `server`.
    ///
    /// # Errors
    ///
    /// `invalid_params` when the form cannot be asked here (a required text or number field, a
    /// choice with more than six options, titles that collide); `internal_error` when the answerer
    /// fails or is interrupted. Declining is not an error.
    pub async fn answer(
        &self,
        request: ElicitRequestParams,
        server: &str,
    ) -> Result<ElicitResult, ErrorData> {
        let ElicitRequestParams::FormElicitationParams { message, requested_schema, .. } = request else {
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        let mut problem: Option<String> = None;
        for _attempt in 0..2 {
            let plan = Plan::new(server, &message, &requested_schema, problem.as_deref())
                .map_err(|e| ErrorData::invalid_params(e, None))?;
            let asking = AskContext::new().with_session_id(format!("mcp:{server}"));
            let response =
                self.answerer.answer(plan.request.clone(), asking).await.map_err(|e| answer_error(&e))?;
            if response.cancelled {
                return Ok(ElicitResult::new(ElicitationAction::Decline));
            }
            match plan.content(&response) {
                Ok(content) => return Ok(ElicitResult::new(ElicitationAction::Accept).with_content(content)),
                Err(text) => problem = Some(text),
            }
        }
        Ok(ElicitResult::new(ElicitationAction::Decline))
    }
}

fn answer_error(error: &AnswerError) -> ErrorData {
    ErrorData::internal_error(format!("the person could not be asked: {error}"), None)
}

impl rmcp::ClientHandler for ElicitationHandler {
    fn get_info(&self) -> InitializeRequestParams {
        let capabilities = ClientCapabilities::builder()
            .enable_elicitation_with(ElicitationCapability::new().with_form(FormElicitationCapability::new()))
            .build();
        let info = InitializeRequestParams::new(capabilities, self.client.clone());
        match &self.version {
            Some(version) => info.with_protocol_version(version.clone()),
            None => info,
        }
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let server = context
            .peer
            .peer_info()
            .and_then(|info| info.server_info.clone())
            .map(|server| server.title.unwrap_or(server.name))
            .filter(|name| !name.trim().is_empty())
            .unwrap_or_else(|| "an MCP server".to_owned());
        self.answer(request, &server).await
    }
}

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
}

/// A form turned into an askuser request, and the way back.
#[derive(Debug)]
struct Plan {
    request: AskUserRequest,
    slots: Vec<Slot>,
    /// The string fields a choice field's own words may go to (`KEY_other`).
    text_fields: Vec<String>,
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
                 min,
                 max| Field {
        key,
        title: title.as_deref(),
        description: description.as_deref(),
        options,
        multi,
        min,
        max,
        boolean: false,
    };
    Ok(Some(match definition {
        PrimitiveSchemaDefinition::Enum(EnumSchema::Single(SingleSelectEnumSchema::Untitled(s))) => {
            field(&s.title, &s.description, same(&s.enum_), false, None, None)
        }
        PrimitiveSchemaDefinition::Enum(EnumSchema::Single(SingleSelectEnumSchema::Titled(s))) => {
            field(&s.title, &s.description, titled(&s.one_of), false, None, None)
        }
        PrimitiveSchemaDefinition::Enum(EnumSchema::Legacy(LegacyEnumSchema {
            title,
            description,
            enum_,
            enum_names,
            ..
        })) => {
            let options = match enum_names {
                Some(names) if names.len() == enum_.len() => {
                    enum_.iter().cloned().zip(names.iter().cloned()).collect()
                }
                _ => same(enum_),
            };
            field(title, description, options, false, None, None)
        }
        PrimitiveSchemaDefinition::Enum(EnumSchema::Multi(MultiSelectEnumSchema::Untitled(s))) => {
            field(&s.title, &s.description, same(&s.items.enum_), true, s.min_items, s.max_items)
        }
        PrimitiveSchemaDefinition::Enum(EnumSchema::Multi(MultiSelectEnumSchema::Titled(s))) => {
            field(&s.title, &s.description, titled(&s.items.any_of), true, s.min_items, s.max_items)
        }
        PrimitiveSchemaDefinition::Boolean(b) => Field {
            key,
            title: b.title.as_deref(),
            description: b.description.as_deref(),
            options: vec![("true".to_owned(), "Yes".to_owned()), ("false".to_owned(), "No".to_owned())],
            multi: false,
            min: None,
            max: None,
            boolean: true,
        },
        PrimitiveSchemaDefinition::String(_)
        | PrimitiveSchemaDefinition::Number(_)
        | PrimitiveSchemaDefinition::Integer(_) => return Ok(None),
        _ => return Err(format!("field {key:?} has a kind of schema askuser does not know")),
    }))
}

impl Plan {
    fn new(
        server: &str,
        message: &str,
        schema: &ElicitationSchema,
        problem: Option<&str>,
    ) -> Result<Self, String> {
        let required = schema.required.clone().unwrap_or_default();
        let order: Vec<&String> = match &schema.property_order {
            Some(order) => order.iter().collect(),
            None => schema.properties.keys().collect(),
        };
        let mut questions = Vec::new();
        let mut slots = Vec::new();
        let mut text_fields = Vec::new();
        let mut headers: Vec<String> = Vec::new();
        for key in order {
            let Some(definition) = schema.properties.get(key) else { continue };
            let is_required = required.contains(key);
            let Some(field) = choice_field(key, definition)? else {
                if is_required {
                    return Err(format!(
                        "field {key:?} asks for free text or a number, which askuser cannot ask yet (text questions need the extended profile)"
                    ));
                }
                if matches!(definition, PrimitiveSchemaDefinition::String(_)) {
                    text_fields.push(key.clone());
                }
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
            let built: Vec<QuestionOption> = options
                .iter()
                .map(|(_, title)| {
                    let label = fit(title, MAX_LABEL_CHARS, false);
                    let full = fit(title, MAX_DESCRIPTION_CHARS, true);
                    QuestionOption::new(&label, (full != label).then_some(full.as_str()))
                })
                .collect::<Result<_, _>>()
                .map_err(|e| format!("field {key:?}: {e}"))?;
            let mut header = fit(field.title.unwrap_or(field.key), MAX_HEADER_CHARS, false);
            if header.is_empty() {
                header = fit(field.key, MAX_HEADER_CHARS, false);
            }
            let mut n = 2;
            while headers.iter().any(|h| h.to_lowercase() == header.to_lowercase()) {
                let suffix = format!(" #{n}");
                header =
                    format!("{}{suffix}", fit(&header, MAX_HEADER_CHARS - suffix.chars().count(), false));
                n += 1;
            }
            headers.push(header.clone());
            let intro = match (questions.is_empty(), problem) {
                (false, _) => String::new(),
                (true, None) => format!("{server} asks: {message}\n\n"),
                (true, Some(problem)) => {
                    format!("Your last answer could not be sent: {problem}.\n{server} asks: {message}\n\n")
                }
            };
            let limits = if field.multi {
                picks(field.min, field.max).map(|p| format!(" (pick {p})")).unwrap_or_default()
            } else {
                String::new()
            };
            let text = format!(
                "[{server}] {intro}{}{limits}",
                field.description.or(field.title).unwrap_or(field.key)
            );
            let question = Question::new(&header, fit(&text, MAX_QUESTION_CHARS, true), built, field.multi)
                .map_err(|e| format!("field {key:?}: {e}"))?;
            questions.push(question);
            slots.push(if field.boolean {
                Slot::Boolean { key: key.clone() }
            } else {
                Slot::Choice { key: key.clone(), values, multi: field.multi, min: field.min, max: field.max }
            });
        }
        if questions.is_empty() {
            return Err("the form has no field askuser can ask (choices or yes/no)".to_owned());
        }
        let questions = Questions::new(questions).map_err(|e| format!("the form cannot be asked: {e}"))?;
        Ok(Self { request: AskUserRequest::new(questions), slots, text_fields })
    }

    /// The form content for `response`, or what is wrong with it (for the person, when the
    /// question is asked again).
    fn content(&self, response: &AskUserResponse) -> Result<Value, String> {
        askuser_core::check_response(&self.request, response).map_err(|e| e.to_string())?;
        let questions = self.request.questions().as_slice();
        let mut content = Map::new();
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
                Slot::Choice { key, values, multi, min, max } => {
                    if let Some(text) = &answer.custom_answer {
                        let other = format!("{key}_other");
                        if !self.text_fields.contains(&other) {
                            return Err(format!(
                                "\"{}\" takes one of its options, not your own words",
                                answer.header
                            ));
                        }
                        content.insert(other, Value::String(text.clone()));
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
        Ok(Value::Object(content))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use askuser_core::AskUserAnswer;
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
        let plan = Plan::new("weather-server", "Pick, please", &form, None).unwrap();
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
        let plan = Plan::new("askuser", "m", &form, None).unwrap();
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

    #[test]
    fn forms_it_cannot_ask_are_refused_with_the_reason() {
        #[track_caller]
        fn refused(form: Value, part: &str) {
            let error = Plan::new("s", "m", &schema(form), None).unwrap_err();
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
        let plan = Plan::new("s", "m", &form, None).unwrap();
        let questions = plan.request.questions().as_slice();
        assert_eq!(questions[0].header(), "A title that is much too…");
        assert_eq!(questions[1].header(), "A title that is much… #2");
        assert_eq!(questions[0].options()[0].label().chars().count(), MAX_LABEL_CHARS);
        assert_eq!(questions[0].options()[0].description(), Some(long.as_str()));
        assert_eq!(questions[0].options()[1].label(), "bell and newline");
    }
}
