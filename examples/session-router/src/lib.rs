//! A host serving several sessions at once through the session router: each `ask_user_question`
//! call is routed to the client that owns its session, and that client's reply is checked before
//! it reaches the model.
//!
//! The clients: `alice` picks the first option; `bob` first sends a reply that does not fit,
//! is told so, and corrects it; `carol` disconnects (her reply handle is dropped, which declines);
//! `dave` never answers, so the timeout reaches him and he takes the question down.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use askuser_core::{AskContext, AskUserAnswer, AskUserRequest, AskUserResponse};
use askuser_tool::{AskUser, BuildError, ReplyError, ReplyHandle, ToolCall, session_router};
use tokio::sync::mpsc;

/// The sessions the host serves, each with its client's behaviour.
pub const SESSIONS: [&str; 4] = ["alice", "bob", "carol", "dave"];

type Transcript = Arc<Mutex<BTreeMap<String, Vec<String>>>>;

fn note(transcript: &Transcript, session: &str, line: String) {
    if let Ok(mut map) = transcript.lock() {
        map.entry(session.to_owned()).or_default().push(line);
    }
}

fn args_for(session: &str) -> String {
    format!(
        r#"{{"questions":[{{"header":"Plan","question":"Which plan should I follow for {session}'s task?","options":[{{"label":"Quick fix"}},{{"label":"Full rewrite"}}]}}]}}"#
    )
}

/// One client: answers the requests of its session, in its own way.
/// `timeout` is the calls' timeout: alice thinks for a third of it and bob for two thirds, so both
/// answer in time whatever its length.
async fn client(
    name: &'static str,
    mut inbox: mpsc::Receiver<ReplyHandle>,
    transcript: Transcript,
    timeout: Duration,
) {
    while let Some(mut handle) = inbox.recv().await {
        let request: AskUserRequest = handle.request().clone();
        let question = &request.questions().as_slice()[0];
        let header = question.header().to_owned();
        note(&transcript, name, format!("client sees: {:?}", question.question()));
        match name {
            "alice" => {
                tokio::time::sleep(timeout / 3).await;
                let pick = question.options()[0].label().to_owned();
                let sent =
                    handle.reply(AskUserResponse::answered(vec![AskUserAnswer::picked(header, [pick])]));
                note(&transcript, name, format!("client replied: {}", sent.is_ok()));
            }
            "bob" => {
                tokio::time::sleep(timeout * 2 / 3).await;
                let misfit = AskUserResponse::answered(vec![AskUserAnswer::picked(header.clone(), ["Both"])]);
                let handle = match handle.reply(misfit) {
                    Err(ReplyError::Misfit { error, handle }) => {
                        note(&transcript, name, format!("reply refused: {error}"));
                        handle
                    }
                    other => {
                        note(&transcript, name, format!("unexpected: {other:?}"));
                        continue;
                    }
                };
                let fixed = AskUserResponse::answered(vec![AskUserAnswer::custom(
                    header,
                    "Quick fix now, rewrite later",
                )]);
                let sent = handle.reply(fixed);
                note(&transcript, name, format!("client replied: {}", sent.is_ok()));
            }
            "carol" => {
                note(&transcript, name, "client disconnects".to_owned());
                drop(handle);
            }
            _ => {
                handle.cancelled().await;
                note(
                    &transcript,
                    name,
                    "client takes the question down: the call stopped waiting".to_owned(),
                );
            }
        }
    }
}

/// Serves one call per session, all at once, and returns each session's transcript in session
/// order. `timeout` bounds every call.
///
/// # Errors
///
/// A capability configuration error (none with a positive timeout).
pub async fn serve(timeout: Duration) -> Result<Vec<String>, BuildError> {
    let transcript: Transcript = Arc::default();
    let (router, mut requests) = session_router(8);
    let ask_user = AskUser::builder().answerer(router).timeout(timeout).build()?;

    let mut clients = HashMap::new();
    let mut client_tasks = Vec::new();
    for name in SESSIONS {
        let (sender, inbox) = mpsc::channel(4);
        clients.insert(name.to_owned(), sender);
        client_tasks.push(tokio::spawn(client(name, inbox, Arc::clone(&transcript), timeout)));
    }

    // The host: route each request to the client that owns its session.
    let host = tokio::spawn(async move {
        while let Some(item) = requests.recv().await {
            let client = item.context.session_id.as_deref().and_then(|s| clients.get(s));
            if let Some(client) = client {
                // A client that has gone away drops the handle, which declines.
                let _ = client.send(item.reply).await;
            }
        }
    });

    let calls: Vec<_> = SESSIONS
        .iter()
        .enumerate()
        .map(|(i, session)| {
            let ask_user = ask_user.clone();
            let transcript = Arc::clone(&transcript);
            tokio::spawn(async move {
                let args = args_for(session);
                let call_id = format!("call_{}", i + 1);
                let context = AskContext::new().with_session_id(*session);
                let outcome = ask_user.call(ToolCall::new(&call_id, &args), context).await;
                let text = outcome.model_text().unwrap_or("(no text: the call failed)").to_owned();
                note(&transcript, session, format!("model receives: {text}"));
            })
        })
        .collect();
    for call in calls {
        let _ = call.await;
    }
    drop(ask_user);
    let _ = host.await;
    for task in client_tasks {
        let _ = task.await;
    }

    let map = transcript.lock().map(|map| map.clone()).unwrap_or_default();
    let mut lines = Vec::new();
    for session in SESSIONS {
        lines.push(format!("## session {session}"));
        lines.extend(map.get(session).cloned().unwrap_or_default());
    }
    Ok(lines)
}
