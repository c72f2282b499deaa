//! Replicas on one PostgreSQL database hand each other secret values, over a `LISTEN`/`NOTIFY`
//! channel of their own (named after a key derived from the API token): a secret answer's values
//! sealed for the replica its asker waits on ([`crate::secrets`]), and word that the asker took
//! them, sealed too, so that a forged notification can neither plant nor destroy a secret.
//! Notifications are not stored by PostgreSQL: values sent while a replica is not listening do
//! not reach it (its asker's wait then reports them missing). What changed (new questions,
//! answers, expiries) is not told here: every replica reads it from the store's change feed.

use std::sync::Arc;
use std::time::Duration;

use askuser_store::PostgresStore;
use serde::{Deserialize, Serialize};
use sqlx::PgPool;
use sqlx::postgres::PgListener;
use tokio::sync::mpsc;

use crate::AppState;

/// What a "taken" envelope is sealed for: not the question's id alone, so that a secret's own
/// envelope (sealed for the id) replayed as a "taken" message does not open (ids hold no NUL).
pub(crate) fn taken_aad(id: &str) -> String {
    format!("taken\0{id}")
}

/// How many messages may wait to be sent before new ones are dropped (with a warning).
const QUEUE: usize = 4096;

/// A replica's link to the others.
#[derive(Debug)]
pub(crate) struct Fleet {
    origin: String,
    outbox: mpsc::Sender<String>,
    /// What the sender and the listener need; taken when they start.
    parts: std::sync::Mutex<Option<(PgPool, mpsc::Receiver<String>)>>,
    channel: String,
}

/// One message between replicas.
#[derive(Debug, Serialize, Deserialize)]
struct Message {
    /// The replica that sent it (it ignores its own).
    o: String,
    #[serde(flatten)]
    body: Body,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "k", rename_all = "snake_case")]
enum Body {
    /// A secret answer's values, sealed, for whichever replica the asker waits on.
    Secret { id: String, sealed: String },
    /// The asker took the values of question `id`: forget them. `sealed` is an empty envelope
    /// sealed for `id`, so that only a replica holding the API token can make the others forget.
    Taken { id: String, sealed: String },
}

impl Fleet {
    pub(crate) fn new(store: &PostgresStore, channel: String) -> Self {
        let (outbox, inbox) = mpsc::channel(QUEUE);
        let mut origin = [0u8; 16];
        // Without randomness the origin is still distinct enough per process for ignoring echoes.
        if getrandom::fill(&mut origin).is_err() {
            origin[..4].copy_from_slice(&std::process::id().to_be_bytes());
        }
        Self {
            origin: origin.iter().fold(String::with_capacity(32), |mut text, b| {
                use std::fmt::Write as _;
                let _ = write!(text, "{b:02x}");
                text
            }),
            outbox,
            parts: std::sync::Mutex::new(Some((store.pool().clone(), inbox))),
            channel,
        }
    }

    fn send(&self, body: Body) {
        let message = Message { o: self.origin.clone(), body };
        let Ok(text) = serde_json::to_string(&message) else { return };
        if self.outbox.try_send(text).is_err() {
            tracing::warn!(
                "the fleet's message queue is full or closed; a change was not told to the other replicas"
            );
        }
    }

    pub(crate) fn secret(&self, id: &str, sealed: String) {
        self.send(Body::Secret { id: id.to_owned(), sealed });
    }

    pub(crate) fn taken(&self, id: &str, sealed: String) {
        self.send(Body::Taken { id: id.to_owned(), sealed });
    }

    /// Starts listening and sending; both stop when the server closes. Resolves once listening.
    pub(crate) async fn start(state: &Arc<AppState>) -> Vec<tokio::task::JoinHandle<()>> {
        let Some(fleet) = &state.fleet else { return Vec::new() };
        let Some((pool, inbox)) =
            fleet.parts.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take()
        else {
            return Vec::new();
        };
        let listener = listen_on(&pool, &fleet.channel).await;
        vec![
            tokio::spawn(send_loop(Arc::clone(state), pool.clone(), inbox)),
            tokio::spawn(listen_loop(Arc::clone(state), pool, listener)),
        ]
    }
}

async fn listen_on(pool: &PgPool, channel: &str) -> Option<PgListener> {
    let connect = async {
        let mut listener = PgListener::connect_with(pool).await?;
        listener.listen(channel).await?;
        Ok::<_, sqlx::Error>(listener)
    };
    match connect.await {
        Ok(listener) => Some(listener),
        Err(error) => {
            tracing::warn!(error = %crate::error::with_causes(&error), "cannot listen to the other replicas yet; retrying");
            None
        }
    }
}

/// Sends queued messages in order, one `pg_notify` each.
async fn send_loop(state: Arc<AppState>, pool: PgPool, mut inbox: mpsc::Receiver<String>) {
    let Some(fleet) = &state.fleet else { return };
    loop {
        let text = tokio::select! {
            () = state.closed() => return,
            next = inbox.recv() => match next { Some(text) => text, None => return },
        };
        let sent =
            sqlx::query("SELECT pg_notify($1, $2)").bind(&fleet.channel).bind(&text).execute(&pool).await;
        if let Err(error) = sent {
            tracing::warn!(error = %crate::error::with_causes(&error), "a change was not told to the other replicas");
        }
    }
}

/// Hands what the other replicas say to this one; reconnects when the connection drops (the
/// event streams are then told they lagged).
async fn listen_loop(state: Arc<AppState>, pool: PgPool, mut listener: Option<PgListener>) {
    let Some(fleet) = &state.fleet else { return };
    loop {
        let Some(active) = listener.as_mut() else {
            tokio::select! {
                () = state.closed() => return,
                () = tokio::time::sleep(Duration::from_millis(500)) => {}
            }
            listener = listen_on(&pool, &fleet.channel).await;
            continue;
        };
        let next = tokio::select! {
            () = state.closed() => return,
            next = active.try_recv() => next,
        };
        match next {
            Ok(Some(notification)) => receive(&state, &fleet.origin, notification.payload()),
            Ok(None) | Err(_) => listener = None,
        }
    }
}

fn receive(state: &AppState, origin: &str, payload: &str) {
    let Ok(message) = serde_json::from_str::<Message>(payload) else {
        tracing::warn!("a message from another replica could not be read (a different version?)");
        return;
    };
    if message.o == origin {
        return;
    }
    match message.body {
        Body::Secret { id, sealed } => {
            if let Some(secrets) = state.sealer.open(&id, &sealed) {
                state.secrets.put(&id, secrets);
            } else {
                tracing::warn!("a sealed secret from another replica did not open (another API token?)");
            }
        }
        Body::Taken { id, sealed } => {
            if state.sealer.open(&taken_aad(&id), &sealed).is_some() {
                state.secrets.forget(&id);
            } else {
                tracing::warn!(
                    "a message to forget a secret did not open (another API token, or forged); ignored"
                );
            }
        }
    }
}
