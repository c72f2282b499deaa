//! The client side: any MCP server's form elicitation answered through an askuser [`Answerer`]
//! (the terminal menu in a command-line host, a web page, a script).

use std::fmt;
use std::sync::Arc;

use std::collections::BTreeMap;

use askuser_core::{
    AnswerError, AnsweredBy, Answerer, AskContext, AskUserRequest, AskUserResponse, MAX_DESCRIPTION_CHARS,
    MAX_HEADER_CHARS, MAX_LABEL_CHARS, MAX_OPTIONS, MAX_QUESTION_CHARS, MIN_OPTIONS, Profile, QuestionOption,
    Validator, is_forbidden_char,
};
use rmcp::model::{
    ClientCapabilities, ConstString, CustomRequest, CustomResult, ElicitRequestParams, ElicitResult,
    ElicitationAction, ElicitationCapability, ElicitationCreateRequestMethod, ElicitationSchema, EnumSchema,
    ErrorCode, ErrorData, FormElicitationCapability, Implementation, InitializeRequestParams,
    LegacyEnumSchema, MultiSelectEnumSchema, PrimitiveSchemaDefinition, ProtocolVersion,
    SingleSelectEnumSchema, StringFormat,
};
use rmcp::service::{RequestContext, RoleClient};
use serde_json::{Map, Value, json};

/// The extra option of an optional field: picking it leaves the field empty.
pub const LEAVE_EMPTY: &str = "(leave empty)";

/// What ends the label of an option the form's `default` picks, in the reference profile (the
/// reference tool's own mark of a recommended option).
const RECOMMENDED: &str = " (Recommended)";

/// Answers any server's form elicitation through an askuser [`Answerer`]: an rmcp
/// [`ClientHandler`](rmcp::ClientHandler) that declares form elicitation, or a piece your own
/// handler calls from its `create_elicitation` ([`answer`](Self::answer)).
///
/// | form field | asked as |
/// | --- | --- |
/// | string enum (`enum`, `oneOf`, `enumNames`) | a single-select question; option labels are the titles |
/// | array of enum (`items.enum` / `items.anyOf`) | a multi-select question; `minItems`/`maxItems` checked on the way back |
/// | boolean | a Yes/No question |
/// | string `KEY_other` beside choice field `KEY` | not asked: it takes the person's own words for `KEY` ("Other…") |
/// | string, number or integer, [extended profile](Self::with_profile) | a text question; the answer must fit the field's `minLength`/`maxLength`, `format` (email, uri, date, date-time) or `minimum`/`maximum`, and goes back as a string, a JSON number or a JSON integer |
/// | optional string, number or integer, reference profile (the default) | not asked: left empty, or sent with its `default` (SEP-1034), which the first question names |
/// | required string, number or integer, reference profile | the form is refused: text questions need the extended profile |
///
/// An optional choice field gets a [`LEAVE_EMPTY`] option when there is room; an optional text
/// field is left empty, and a field with a `default` takes it, when the answer is
/// [`KEEP_DEFAULT`]. The schema's `default` marks the default options of a choice or yes/no field:
/// `default: true` in the extended profile, a label ending in ` (Recommended)` in the reference
/// profile (the reference tool's own mark, which a
/// [`DefaultsResponder`](askuser_core::DefaultsResponder) picks too). In the extended profile a
/// choice field without a `KEY_other` field takes no own words.
/// Every question names the server that asks; the first carries the server's message. An answer
/// that breaks the schema (too few or too many picks, own words where none fit, text too long, not
/// an email address, a number out of range) is never sent: it is asked again once with the
/// problem named, then the form is declined. URL mode is always declined: this handler never
/// opens a link.
///
/// **Only a person consents.** An answer the answerer marks as not given by a person
/// ([`AnsweredBy::Unattended`] from a [`DefaultsResponder`](askuser_core::DefaultsResponder),
/// [`AnsweredBy::Timeout`] from defaults applied on a timeout) is never sent: the form is
/// declined, because a server's form may be a confirmation ("Delete all 214 files?") that only a
/// person may accept. A host that wants such answers sent to one server opts in for it by name
/// with [`allow_unattended_from`](Self::allow_unattended_from).
///
/// ```no_run
/// # async fn run(person: impl askuser_core::Answerer + 'static) -> Result<(), Box<dyn std::error::Error>> {
/// use askuser_mcp::ElicitationHandler;
/// use rmcp::ServiceExt;
///
/// // `person` shows the questions to a person: `askuser_terminal::TerminalAnswerer::new()` in a
/// // terminal host, a web page, a chat window.
/// let transport = rmcp::transport::TokioChildProcess::new(tokio::process::Command::new("some-mcp-server"))?;
/// let client = ElicitationHandler::new(person).serve(transport).await?;
/// let tools = client.list_all_tools().await?;
/// # let _ = tools;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct ElicitationHandler {
    answerer: Arc<dyn Answerer>,
    client: Implementation,
    version: ProtocolVersion,
    profile: Profile,
    /// The servers (by `serverInfo.name`) whose forms may be answered without a person.
    unattended: Vec<String>,
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
        Self {
            answerer,
            client: Implementation::new("askuser", env!("CARGO_PKG_VERSION")),
            // rmcp's default is its newest revision, 2026-07-28, which has no `initialize`.
            version: ProtocolVersion::V_2025_11_25,
            profile: Profile::Reference,
            unattended: Vec::new(),
        }
    }

    /// Lets answers not given by a person (defaults, a timeout's defaults, any answer marked
    /// other than [`AnsweredBy::User`]) be sent to the server whose `serverInfo.name` is
    /// exactly `server`; call it once per server. Default: no server, and such an answer
    /// declines the form. Only for a server whose forms you know to be harmless to accept
    /// unseen: a server's form may ask to confirm something destructive.
    #[must_use]
    pub fn allow_unattended_from(mut self, server: impl Into<String>) -> Self {
        self.unattended.push(server.into());
        self
    }

    /// The profile of the questions the answerer is asked (docs/contract.md §10). Default:
    /// [`Profile::Reference`]: choice and yes/no fields only, for an answerer that knows
    /// multiple choice alone. [`Profile::Extended`] also asks string, number and integer fields
    /// as text questions, and passes the schema's defaults on; give it an answerer that answers
    /// text questions (`custom_answer`).
    #[must_use]
    pub fn with_profile(mut self, profile: Profile) -> Self {
        self.profile = profile;
        self
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
        self.version = version;
        self
    }

    /// Answers one elicitation from the server called `server`: the name shown in the questions,
    /// and the one [`allow_unattended_from`](Self::allow_unattended_from) is matched against.
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
        self.answer_for(request, server, server).await
    }

    /// [`answer`](Self::answer), with the server shown as `server` (its title, when it has one)
    /// and matched by `name` (its `serverInfo.name`).
    async fn answer_for(
        &self,
        request: ElicitRequestParams,
        server: &str,
        name: &str,
    ) -> Result<ElicitResult, ErrorData> {
        let ElicitRequestParams::FormElicitationParams { message, requested_schema, .. } = request else {
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        let mut problem: Option<String> = None;
        for _attempt in 0..2 {
            let plan = Plan::new(server, &message, &requested_schema, problem.as_deref(), self.profile)
                .map_err(|e| ErrorData::invalid_params(e, None))?;
            let asking = AskContext::new().with_session_id(format!("mcp:{server}"));
            let response =
                self.answerer.answer(plan.request.clone(), asking).await.map_err(|e| answer_error(&e))?;
            if response.cancelled {
                return Ok(ElicitResult::new(ElicitationAction::Decline));
            }
            // Consent comes from a person only, unless the host opted in for this server.
            if response.answered_by != AnsweredBy::User && !self.unattended.iter().any(|s| s == name) {
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
        InitializeRequestParams::new(capabilities, self.client.clone())
            .with_protocol_version(self.version.clone())
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let info = context.peer.peer_info().and_then(|info| info.server_info.clone());
        let name = info.as_ref().map(|server| server.name.clone()).unwrap_or_default();
        let shown = info
            .and_then(|server| server.title)
            .filter(|title| !title.trim().is_empty())
            .or_else(|| Some(name.clone()))
            .filter(|name| !name.trim().is_empty())
            .unwrap_or_else(|| "an MCP server".to_owned());
        self.answer_for(request, &shown, &name).await
    }

    /// An `elicitation/create` that rmcp's types could not read arrives here (rmcp's default
    /// answers "method not found", and the person is never asked): read in the shapes the SDKs
    /// emit (`readable_params`) and answered like any other form.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleClient>,
    ) -> Result<CustomResult, ErrorData> {
        if request.method != ElicitationCreateRequestMethod::VALUE {
            return Err(ErrorData::new(ErrorCode::METHOD_NOT_FOUND, request.method, None));
        }
        let params = readable_params(request.params.unwrap_or_default())
            .map_err(|e| ErrorData::invalid_params(e, None))?;
        let result = rmcp::ClientHandler::create_elicitation(self, params, context).await?;
        serde_json::to_value(result)
            .map(CustomResult::new)
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }
}

/// An `elicitation/create` whose params rmcp's types refused, in the shapes the SDKs emit, made
/// readable: the Python SDK's `FastMCP` (pydantic) writes an `Optional[...]` field as
/// `anyOf: [{type: T}, {type: "null"}]` with `default: null`, the TypeScript SDK's zod helper a
/// nullable one as `type: [T, "null"]`, and pydantic an `Enum` field as a `$ref` into `$defs`.
/// Each becomes the plain field (MCP's schema has no null: an empty optional field is left out of
/// the answer, which the SDKs read as `None`/absent). A list of free text (`list[str]`) cannot be
/// asked: left out when optional, refused when required.
///
/// # Errors
///
/// What cannot be read, naming the field.
fn readable_params(mut params: Value) -> Result<ElicitRequestParams, String> {
    if let Some(schema) = params.get_mut("requestedSchema").and_then(Value::as_object_mut) {
        let defs = schema.remove("$defs").or_else(|| schema.remove("definitions"));
        schema.remove("additionalProperties");
        let required: Vec<String> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).map(str::to_owned).collect())
            .unwrap_or_default();
        let mut dropped = Vec::new();
        if let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) {
            for (key, field) in properties.iter_mut() {
                plain_field(field, defs.as_ref());
                let free_list = field.get("type").and_then(Value::as_str) == Some("array")
                    && field.get("items").is_none_or(|items| {
                        ["enum", "anyOf", "oneOf"].iter().all(|k| items.get(*k).is_none())
                    });
                if free_list {
                    if required.contains(key) {
                        return Err(format!(
                            "field {key:?} asks for a list of free text, which askuser cannot ask"
                        ));
                    }
                    dropped.push(key.clone());
                }
            }
            for key in &dropped {
                properties.remove(key);
            }
        }
    }
    serde_json::from_value(params).map_err(|e| format!("the form cannot be read: {e}"))
}

/// One property made plain (see [`readable_params`]).
fn plain_field(field: &mut Value, defs: Option<&Value>) {
    let Some(object) = field.as_object_mut() else { return };
    // `$ref` into the schema's definitions: the definition, under the field's own keys.
    if let Some(target) = object.remove("$ref") {
        let name = target.as_str().and_then(|r| r.rsplit('/').next()).unwrap_or_default();
        if let Some(Value::Object(def)) = defs.and_then(|d| d.get(name)) {
            for (k, v) in def {
                object.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
    }
    // `anyOf`/`oneOf` of one schema and null: that schema.
    for union in ["anyOf", "oneOf"] {
        let Some(Value::Array(members)) = object.get(union) else { continue };
        let is_null = |m: &Value| m.get("type").and_then(Value::as_str) == Some("null");
        if !members.iter().any(is_null) {
            continue;
        }
        let rest: Vec<Value> = members.iter().filter(|m| !is_null(m)).cloned().collect();
        if let [Value::Object(only)] = rest.as_slice()
            && !only.contains_key("const")
        {
            object.remove(union);
            for (k, v) in only {
                object.entry(k.clone()).or_insert_with(|| v.clone());
            }
        } else {
            object.insert(union.to_owned(), Value::Array(rest));
        }
    }
    // `type: [T, "null"]`: T.
    if let Some(Value::Array(types)) = object.get("type") {
        let rest: Vec<&Value> = types.iter().filter(|t| t.as_str() != Some("null")).collect();
        if let [only] = rest.as_slice() {
            let only = (*only).clone();
            object.insert("type".to_owned(), only);
        }
    }
    if object.get("default").is_some_and(Value::is_null) {
        object.remove("default");
    }
    // An `enum` of strings without a type (a `$ref`'d definition may lack it).
    if !object.contains_key("type")
        && object.get("enum").and_then(Value::as_array).is_some_and(|e| e.iter().all(Value::is_string))
    {
        object.insert("type".to_owned(), Value::from("string"));
    }
    if let Some(items) = object.get_mut("items") {
        plain_field(items, defs);
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
    /// A string, number or integer field asked as a text question (extended profile).
    Text {
        key: String,
        kind: TextKind,
        default: Option<Value>,
        required: bool,
    },
}

/// What a typed answer must be to go into a string, number or integer field.
#[derive(Debug, Clone)]
enum TextKind {
    String { min: Option<u32>, max: Option<u32>, format: Option<StringFormat> },
    Number { min: Option<f64>, max: Option<f64> },
    Integer { min: Option<i64>, max: Option<i64> },
}

impl TextKind {
    fn of(definition: &PrimitiveSchemaDefinition) -> Option<(Self, Option<Value>)> {
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
    fn hint(&self) -> Option<String> {
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
    fn value(&self, text: &str) -> Result<Value, String> {
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

/// The answer to a text question that leaves its field empty, or takes its default.
pub const KEEP_DEFAULT: &str = "-";

/// A form turned into an askuser request, and the way back.
#[derive(Debug)]
struct Plan {
    request: AskUserRequest,
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
    fn new(
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
    fn content(&self, response: &AskUserResponse) -> Result<Value, String> {
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
