//! The background tickets' state: the store, this server's scope (and over HTTP the MCP session),
//! and the tickets whose person this process is asking on the side, each by a task it tracks.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};

use askuser_core::{Answerer, AskContext, Timestamp};
use askuser_store::{ListQuery, PendingRecord, PendingStore, State, StoreError};
use rmcp::service::{RequestContext, RoleServer};

use crate::inbox::commit;

/// The default of [`AskUserServerBuilder::max_open_tickets`](crate::AskUserServerBuilder::max_open_tickets):
/// the most background tickets open at once in one scope (the server's
/// [scope](crate::AskUserServerBuilder::background), and over HTTP one MCP session): a ticket is
/// open until its questions are answered, declined, withdrawn or past their deadline. Past it
/// `ask_user_question_later` asks nobody and tells the model to wait for an earlier ticket's
/// answers first, so that a looping model cannot fill the store and the person's surfaces.
pub const MAX_OPEN_TICKETS: usize = 32;

/// What [`AskUserServerBuilder::background`](crate::AskUserServerBuilder::background) was given.
pub(crate) struct LaterConfig {
    pub(crate) store: Arc<dyn PendingStore>,
    pub(crate) scope: String,
}

/// The background tools' state: the store, this server's scope, and the tickets whose person is
/// being asked by this process.
pub(crate) struct Later {
    pub(crate) store: Arc<dyn PendingStore>,
    scope: String,
    asking: Arc<Mutex<HashSet<String>>>,
    /// The most tickets of one scope open at once; `usize::MAX`: no cap, nothing counted.
    pub(crate) max_open: usize,
    /// Held from counting a scope's open tickets to putting a new one, so that calls at once in
    /// this process cannot all pass the cap on the same count.
    pub(crate) opening: tokio::sync::Mutex<()>,
}

/// How many records a page of the open-ticket count reads.
const COUNT_PAGE: usize = 64;

impl Later {
    pub(crate) fn new(config: LaterConfig, max_open: usize) -> Self {
        Self {
            store: config.store,
            scope: config.scope,
            asking: Arc::default(),
            max_open,
            opening: tokio::sync::Mutex::new(()),
        }
    }

    /// The server's scope (without any MCP session).
    pub(crate) fn scope(&self) -> &str {
        &self.scope
    }

    /// Whether [`max_open`](Self::max_open) tickets of `scope` are open (pending and not past
    /// their deadline), counted a page at a time up to the cap.
    pub(crate) async fn is_full(&self, scope: &str) -> Result<bool, StoreError> {
        if self.max_open == usize::MAX {
            return Ok(false);
        }
        let now = Timestamp::now();
        let mut query = ListQuery::new().session_id(scope).state(State::Pending).limit(COUNT_PAGE);
        let mut open = 0;
        loop {
            let page = self.store.list(&query).await?;
            open += page.records.iter().filter(|record| !record.is_overdue(now)).count();
            match page.next {
                Some(next) if open < self.max_open => query = query.after(next),
                _ => return Ok(open >= self.max_open),
            }
        }
    }

    /// This request's scope: the server's, and over HTTP its MCP session.
    pub(crate) fn scope_of(&self, context: &RequestContext<RoleServer>) -> String {
        // A stateless call (2026-07-28, no `initialize`) has no session: an `Mcp-Session-Id` it
        // carries is anyone's to send, and took another session's tickets (issue 36.12).
        let stateless = context.protocol_version().is_some_and(|version| !version.has_initialize());
        if stateless {
            return self.scope.clone();
        }
        match session_of(context) {
            Some(session) => format!("{} session {session}", self.scope),
            None => self.scope.clone(),
        }
    }

    /// Starts asking the person for `record` on the side, unless this process already is: the
    /// first answer (the form's, or the store's from any other surface) wins; at the deadline the
    /// question is expired.
    pub(crate) fn ask_on_the_side(
        &self,
        record: &PendingRecord,
        asker: Arc<dyn Answerer>,
        label: Option<String>,
    ) {
        let id = record.id().to_owned();
        if !self.asking.lock().unwrap_or_else(PoisonError::into_inner).insert(id.clone()) {
            return;
        }
        let guard = Asking { set: Arc::clone(&self.asking), id };
        let store = Arc::clone(&self.store);
        let request = record.request().clone();
        let until = Timestamp::now().until(record.expires_at());
        let mut context = AskContext::new().with_tool_call_id(guard.id.clone());
        if let Some(label) = label {
            context = context.with_asked_by(label);
        }
        tokio::spawn(async move {
            let id = guard.id.as_str();
            let settled = store.watch(id);
            let asking = asker.answer(request, context);
            let deadline = tokio::time::sleep(until);
            tokio::pin!(settled, asking, deadline);
            tokio::select! {
                // Answered elsewhere: dropping the form cancels it on the client.
                _ = &mut settled => {}
                answered = &mut asking => {
                    if let Ok(response) = answered {
                        // A failure leaves the question waiting: get_user_answers asks again.
                        let _ = commit(&*store, id, &response).await;
                    }
                }
                () = &mut deadline => {
                    let _ = store.expire(id).await;
                }
            }
        });
    }
}

/// A ticket this process is asking about; dropped when the asking ends.
struct Asking {
    set: Arc<Mutex<HashSet<String>>>,
    id: String,
}

impl Drop for Asking {
    fn drop(&mut self) {
        self.set.lock().unwrap_or_else(PoisonError::into_inner).remove(&self.id);
    }
}

/// The MCP session of a request that came over Streamable HTTP (its `Mcp-Session-Id`), if any.
pub(crate) fn session_of(context: &RequestContext<RoleServer>) -> Option<String> {
    #[cfg(feature = "http")]
    return crate::sessions::session_of(context);
    #[cfg(not(feature = "http"))]
    {
        let _ = context;
        None
    }
}
