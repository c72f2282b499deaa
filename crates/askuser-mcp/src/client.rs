//! The client side: any MCP server's form elicitation answered through an askuser [`Answerer`]
//! (the terminal menu in a command-line host, a web page, a script).

use std::fmt;
use std::sync::Arc;

use askuser_core::{AnswerError, AnsweredBy, Answerer, AskContext, Profile};
use rmcp::model::{
    ClientCapabilities, ConstString, CustomRequest, CustomResult, ElicitRequestParams, ElicitResult,
    ElicitationAction, ElicitationCapability, ElicitationCreateRequestMethod, ErrorCode, ErrorData,
    FormElicitationCapability, Implementation, InitializeRequestParams, ProtocolVersion,
};
use rmcp::service::{RequestContext, RoleClient};

mod formats;
mod plan;
mod sdk;

use plan::Plan;
pub use plan::{KEEP_DEFAULT, LEAVE_EMPTY};
use sdk::readable_params;

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
