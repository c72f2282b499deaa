//! [`StoreAnswerer`]: an [`Answerer`] that puts each question in a store and waits for whoever
//! answers it there, in this process or any other.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use askuser_core::{
    AnswerError, AnsweredBy, Answerer, AskContext, AskUserRequest, AskUserResponse, DefaultsResponder,
    Timestamp,
};
use askuser_tool::OnTimeout;
use tokio::time::Instant;

use crate::error::StoreError;
use crate::record::{AskedBy, NewQuestion, PendingRecord, State};
use crate::store::PendingStore;

/// How long a question waits by default: five minutes.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_mins(5);

/// The answerer's own timer runs this much past the deadline, so that the `AskUser` capability's
/// timeout, set to the same value, fires first and its own timeout path applies; a drop this close
/// to the deadline is the deadline: the record is marked `timed_out`, not `cancelled`.
const DEADLINE_GRACE: Duration = Duration::from_millis(250);

/// Answers by putting the request in a [`PendingStore`] and waiting until someone answers it
/// there (a web form, another process, [`PendingStore::commit_answer`] anywhere), or until its deadline.
///
/// - The record's id is the request's id, its session the context's session id, its deadlines the
///   request's stamps (see [`NewQuestion`]).
/// - It waits until the request's `expires_at` when it has one (the `AskUser` capability stamps
///   one from its own timeout or the model's `timeout_seconds`), else for its own
///   [`timeout`](Self::timeout).
/// - At the deadline the record is marked `timed_out` and the `on_timeout` policy applies:
///   [`OnTimeout::Decline`] (the default) fails the call with a retry carrying
///   [`askuser_core::TIMED_OUT`], so the model reads the timed-out sentence;
///   [`OnTimeout::ApplyDefaults`] answers with the defaults, marked `answered_by: timeout`.
///   Giving the `AskUser` capability the same timeout makes its own timeout path (and its
///   `Answered { timed_out: true }` event) apply instead; the record is then marked `timed_out`
///   when the capability drops this answerer's future.
/// - When its future is dropped before the deadline (the run was cancelled), the record is marked
///   `cancelled` by a task spawned on the current Tokio runtime; without a runtime, the record
///   stays pending until a [`Sweeper`](crate::Sweeper) expires it.
/// - A record cancelled by someone else fails the call.
/// - While it waits it holds the question's [lease](NewQuestion::lease) (renewed every third of
///   it), so if this process is killed, a [`Sweeper`](crate::Sweeper) withdraws the question about
///   one [`lease`](Self::lease) later instead of leaving it answerable until its deadline.
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
/// use askuser_core::{AskContext, AskUserAnswer, AskUserResponse};
/// use askuser_store::{MemoryStore, PendingStore, StoreAnswerer};
/// use askuser_tool::{AskUser, ToolCall};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let store = MemoryStore::new();
/// let ask_user = AskUser::builder()
///     .answerer(StoreAnswerer::new(Arc::new(store.clone())).timeout(Duration::from_secs(60)))
///     .build()?;
/// let args = r#"{"questions":[{"header":"Plan","question":"Which plan?",
///     "options":[{"label":"Small"},{"label":"Large"}]}]}"#;
/// let call = ask_user.call(ToolCall::new("call_1", args), AskContext::new());
///
/// // Someone else (here: the same process) answers the pending question in the store.
/// let person = async {
///     loop {
///         let page = store.list(&Default::default()).await?;
///         if let Some(record) = page.records.first() {
///             let answer = AskUserResponse::answered(vec![AskUserAnswer::picked("Plan", ["Large"])]);
///             store.commit_answer(record.id(), &answer).await?;
///             return Ok::<_, askuser_store::StoreError>(());
///         }
///         tokio::task::yield_now().await;
///     }
/// };
/// let (outcome, answered) = tokio::join!(call, person);
/// answered?;
/// assert_eq!(outcome.model_text(), Some(r#"{"Plan":["Large"]}"#));
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct StoreAnswerer {
    store: Arc<dyn PendingStore>,
    timeout: Duration,
    on_timeout: OnTimeout,
    tool_name: String,
    lease: Duration,
    asked_by: Option<AskedBy>,
}

impl fmt::Debug for StoreAnswerer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoreAnswerer")
            .field("store", &self.store)
            .field("timeout", &self.timeout)
            .field("on_timeout", &self.on_timeout)
            .field("tool_name", &self.tool_name)
            .field("lease", &self.lease)
            .field("asked_by", &self.asked_by)
            .finish()
    }
}

impl StoreAnswerer {
    /// An answerer that waits in `store`.
    #[must_use]
    pub fn new(store: Arc<dyn PendingStore>) -> Self {
        Self {
            store,
            timeout: DEFAULT_TIMEOUT,
            on_timeout: OnTimeout::Decline,
            tool_name: askuser_tool::TOOL_NAME.to_owned(),
            lease: crate::DEFAULT_LEASE,
            asked_by: None,
        }
    }

    /// Who asks: the label its questions carry (see [`AskedBy`]). Default: the call's
    /// [`AskContext::asked_by`], when the host knows it.
    #[must_use]
    pub fn asked_by(mut self, asked_by: AskedBy) -> Self {
        self.asked_by = Some(asked_by);
        self
    }

    /// The lease its questions hold while it waits: a question whose waiting process was killed
    /// is withdrawn this long after the last renewal (by a [`Sweeper`](crate::Sweeper) whose
    /// [`leases`](crate::Sweeper::leases) is at least this). Default: [`DEFAULT_LEASE`](crate::DEFAULT_LEASE)
    /// (30 s); at least 1 s.
    #[must_use]
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease.max(Duration::from_secs(1));
        self
    }

    /// How long a question waits when its request carries no `expires_at`. Default:
    /// [`DEFAULT_TIMEOUT`] (five minutes).
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// What the model gets when nobody answers in time. Default: [`OnTimeout::Decline`].
    #[must_use]
    pub fn on_timeout(mut self, policy: OnTimeout) -> Self {
        self.on_timeout = policy;
        self
    }

    /// The tool name recorded with each question. Default: `ask_user_question`.
    #[must_use]
    pub fn tool_name(mut self, name: impl Into<String>) -> Self {
        self.tool_name = name.into();
        self
    }

    fn outcome(
        &self,
        request: &AskUserRequest,
        record: &PendingRecord,
    ) -> Result<AskUserResponse, AnswerError> {
        match (record.state(), record.response()) {
            (State::Answered | State::Declined, Some(response)) => Ok(response.clone()),
            (State::TimedOut, _) => match self.on_timeout {
                OnTimeout::ApplyDefaults => Ok(DefaultsResponder::respond(request, AnsweredBy::Timeout)),
                _ => Err(AnswerError::retry(askuser_core::TIMED_OUT)),
            },
            (state, _) => Err(AnswerError::failed(format!("pending question {:?} was {state}", record.id()))),
        }
    }
}

fn store_failure(error: StoreError) -> AnswerError {
    AnswerError::failed("the pending-question store failed").with_source(error)
}

#[async_trait::async_trait]
impl Answerer for StoreAnswerer {
    async fn answer(
        &self,
        request: AskUserRequest,
        context: AskContext,
    ) -> Result<AskUserResponse, AnswerError> {
        let mut question = NewQuestion::new(request.clone(), self.timeout)
            .tool_name(self.tool_name.as_str())
            .lease(self.lease);
        if let Some(session) = context.session_id {
            question = question.session_id(session);
        }
        if let Some(asked_by) =
            self.asked_by.clone().or_else(|| context.asked_by.as_deref().and_then(AskedBy::lossy))
        {
            question = question.asked_by(asked_by);
        }
        let wait = request.expires_at().map_or(self.timeout, |at| Timestamp::now().until(at));
        let deadline = Instant::now() + wait;
        // Armed before the put: a call dropped while its put is in flight still closes the record.
        let mut guard =
            CloseOnDrop { store: Some(Arc::clone(&self.store)), id: request.id().to_owned(), deadline };
        let record = self.store.put(question).await.map_err(store_failure)?;
        let settled = tokio::select! {
            settled = self.store.watch(record.id()) => settled,
            () = tokio::time::sleep_until(deadline + DEADLINE_GRACE) => self.store.expire(record.id()).await,
            never = hold_lease(&*self.store, record.id(), self.lease) => match never {},
        };
        guard.store = None;
        self.outcome(&request, &settled.map_err(store_failure)?)
    }
}

/// Renews the lease of question `id` every third of `lease`, until the future is dropped; after a
/// renewal that finds no lease (the question settled), it renews nothing more. A failed renewal
/// is tried again at the next tick (the watch reports an outage that lasts).
async fn hold_lease(store: &dyn PendingStore, id: &str, lease: Duration) -> std::convert::Infallible {
    let mut ticks = tokio::time::interval_at(Instant::now() + lease / 3, lease / 3);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        if let Ok(false) = store.renew(id, lease).await {
            return std::future::pending().await;
        }
    }
}

/// Closes the record when the waiting future is dropped before it settled.
struct CloseOnDrop {
    store: Option<Arc<dyn PendingStore>>,
    id: String,
    deadline: Instant,
}

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        let Some(store) = self.store.take() else { return };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        let id = std::mem::take(&mut self.id);
        let at_deadline = Instant::now() + DEADLINE_GRACE >= self.deadline;
        runtime.spawn(async move {
            // A failure leaves the record pending; the sweep expires it at its deadline.
            let _closed = if at_deadline { store.expire(&id).await } else { store.cancel(&id).await };
        });
    }
}
