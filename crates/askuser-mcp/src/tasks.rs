//! MCP Tasks (SEP-2663) on the store: for a client that declares the tasks extension,
//! `ask_user_question` returns a task whose state is the question's record, so a task outlives
//! this process and any server sharing the store serves it.
//!
//! - `tools/call` puts the question in the store (no lease: nobody waits by design; it keeps its
//!   deadline) under a fresh unguessable task id, and returns the task, `working`.
//! - `tasks/get` reads the store: a question that waits is `input_required` with the form for a
//!   client that shows forms (`working` otherwise, while the page, a notice or a chat answers
//!   it); one that settled is `completed` with what `ask_user_question` would have returned
//!   (`cancelled` when it was withdrawn). An overdue one is expired first.
//! - `tasks/update` commits the form's answer through the store: the first answer wins, against
//!   the page and the chats alike. A dismissed form leaves the question to the other surfaces.
//! - `tasks/cancel` withdraws the question everywhere.
//!
//! Tasks are served where the server has a store: its [background](crate::AskUserServerBuilder::background)
//! store, else its [inbox](crate::AskUserServerBuilder::inbox). A task is found by its id within
//! the server's scope (never another scope's), from any MCP session: the id is the capability.

use std::sync::Arc;
use std::time::Duration;

use askuser_core::{AskUserRequest, AskUserResponse, Deadline, QuestionKind, Timestamp};
use askuser_store::{AskedBy, NewQuestion, PendingRecord, PendingStore, State, StoreError};
use rmcp::ErrorData;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, CreateTaskResult, DetailedTask, ElicitResult,
    ElicitationAction, GetTaskParams, GetTaskResult, Task, TaskPayload, UpdateTaskParams,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::Value;

use crate::eliciting::supports_form;
use crate::form::{self, FormStyle, INPUT_KEY};
use crate::render::{store_failed, text_result};
use crate::sealed::random_nonce;
use crate::server::AskUserServer;

/// How often a client is asked to poll a task.
const POLL_INTERVAL: Duration = Duration::from_secs(1);

/// The store and scope tasks live in.
struct TaskStore<'a> {
    store: &'a Arc<dyn PendingStore>,
    scope: String,
}

impl AskUserServer {
    /// Whether this server serves tasks: it has a store.
    pub(crate) fn serves_tasks(&self) -> bool {
        self.inner.later.is_some() || self.inner.inbox.is_some()
    }

    fn task_store(&self) -> Result<TaskStore<'_>, ErrorData> {
        if let Some(later) = &self.inner.later {
            return Ok(TaskStore { store: &later.store, scope: format!("{} tasks", later.scope()) });
        }
        match &self.inner.inbox {
            Some(inbox) => Ok(TaskStore { store: &inbox.store, scope: format!("{} tasks", self.inner.name) }),
            None => Err(ErrorData::invalid_params("this server keeps no tasks (it has no store)", None)),
        }
    }

    /// `tools/call` of `ask_user_question` as a task: the question stored, the task returned.
    pub(crate) async fn ask_as_task(
        &self,
        params: CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let tasks = self.task_store()?;
        let arguments = Value::Object(params.arguments.unwrap_or_default());
        let questions = match self.inner.validator.validate_value(&arguments) {
            Ok(questions) => questions,
            Err(error) => return Ok(text_result(&error.retry_payload(), true).into()),
        };
        if questions.iter().any(|q| q.kind() == QuestionKind::Secret) {
            return Ok(text_result(
                "A task does not take secret questions: ask them without the tasks extension, so that the value goes to this server's secret sink and never through the client.",
                true,
            )
            .into());
        }
        let timeout = questions
            .timeout_seconds()
            .map_or_else(|| self.inbox_timeout(), |s| Duration::from_secs(u64::from(s)));
        let id = format!("task-{}", random_nonce());
        let request = AskUserRequest::with_id(id.as_str(), questions)
            .with_deadline(Deadline::new(Timestamp::now(), Some(timeout)));
        let mut question = NewQuestion::new(request, timeout).session_id(tasks.scope);
        if let Some(asked_by) = self.asked_by(context).as_deref().and_then(AskedBy::lossy) {
            question = question.asked_by(asked_by);
        }
        let record = tasks.store.put(question).await.map_err(|e| store_failed(&e))?;
        Ok(CallToolResponse::Task(CreateTaskResult::new(task_of(&record, State::Pending))))
    }

    /// The task's question, when it is one of this server's tasks.
    async fn task_record(&self, tasks: &TaskStore<'_>, id: &str) -> Result<PendingRecord, ErrorData> {
        match tasks.store.get(id).await.map_err(|e| store_failed(&e))? {
            Some(record) if record.session_id() == Some(tasks.scope.as_str()) => Ok(record),
            _ => Err(ErrorData::invalid_params(format!("no task {id:?} on this server"), None)),
        }
    }

    /// `tasks/get`: the task as its question stands in the store.
    pub(crate) async fn get_task_from_store(
        &self,
        params: GetTaskParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let tasks = self.task_store()?;
        let mut record = self.task_record(&tasks, &params.task_id).await?;
        if record.is_overdue(Timestamp::now()) {
            record = match tasks.store.expire(record.id()).await {
                Ok(record) => record,
                Err(StoreError::Closed { record } | StoreError::Conflict { first: record }) => *record,
                Err(e) => return Err(store_failed(&e)),
            };
        }
        let task = task_of(&record, record.state());
        let payload = match record.state() {
            State::Pending => {
                let can_form = context.client_capabilities().as_ref().is_some_and(supports_form);
                if can_form {
                    let input_requests = form::input_requests(&self.inner.name, record.request(), None);
                    TaskPayload::InputRequired { input_requests }
                } else {
                    TaskPayload::Working
                }
            }
            State::Cancelled => TaskPayload::Cancelled,
            _ => {
                let result = serde_json::to_value(self.settled_result(&record))
                    .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
                let Value::Object(result) = result else {
                    return Err(ErrorData::internal_error("a tool result is an object", None));
                };
                TaskPayload::Completed { result }
            }
        };
        Ok(GetTaskResult::new(DetailedTask::new(task, payload)))
    }

    /// `tasks/update`: the form's answer, committed through the store (the first answer wins).
    pub(crate) async fn update_task_in_store(&self, params: UpdateTaskParams) -> Result<(), ErrorData> {
        let tasks = self.task_store()?;
        let record = self.task_record(&tasks, &params.task_id).await?;
        let Some(answer) = params.input_responses.get(INPUT_KEY) else {
            return Err(ErrorData::invalid_params(format!("inputResponses has no {INPUT_KEY:?}"), None));
        };
        let result: ElicitResult = serde_json::from_value(answer.clone()).map_err(|e| {
            ErrorData::invalid_params(
                format!("inputResponses[{INPUT_KEY:?}] is not an elicitation result: {e}"),
                None,
            )
        })?;
        let response = match result.action {
            ElicitationAction::Accept => {
                form::read_answer(record.request(), FormStyle::Titled2025, result.content.as_ref())
                    .map_err(|misfit| ErrorData::invalid_params(misfit.0, None))?
            }
            ElicitationAction::Decline => AskUserResponse::declined(),
            // Dismissed: the question waits for the other surfaces, and the form shows again.
            _ => return Ok(()),
        };
        let via = askuser_store::Via::surface("mcp");
        match tasks.store.commit_answer_via(record.id(), &response, &via).await {
            // Answered first here, or first elsewhere (that answer stands): the task reads it.
            Ok(_) | Err(StoreError::Conflict { .. } | StoreError::Closed { .. }) => Ok(()),
            Err(StoreError::InvalidResponse { source, .. }) => {
                Err(ErrorData::invalid_params(source.to_string(), None))
            }
            Err(e) => Err(store_failed(&e)),
        }
    }

    /// `tasks/cancel`: the question withdrawn everywhere (a settled one stays as it is).
    pub(crate) async fn cancel_task_in_store(&self, params: CancelTaskParams) -> Result<(), ErrorData> {
        let tasks = self.task_store()?;
        let record = self.task_record(&tasks, &params.task_id).await?;
        tasks.store.cancel(record.id()).await.map_err(|e| store_failed(&e))?;
        Ok(())
    }
}

/// The task of `record`, in `state`'s status.
fn task_of(record: &PendingRecord, state: State) -> Task {
    let status = match state {
        State::Pending => rmcp::model::TaskStatus::Working,
        State::Cancelled => rmcp::model::TaskStatus::Cancelled,
        _ => rmcp::model::TaskStatus::Completed,
    };
    let updated = record.closed_at().unwrap_or_else(|| record.asked_at());
    let ttl = record.asked_at().until(record.expires_at());
    Task::new(record.id(), status, record.asked_at().to_string(), updated.to_string())
        .with_ttl_ms(u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX))
        .with_poll_interval_ms(u64::try_from(POLL_INTERVAL.as_millis()).unwrap_or(1000))
}
