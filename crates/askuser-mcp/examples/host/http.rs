//! rmcp's Streamable HTTP client transport over reqwest 0.12, the reqwest the rest of askuser
//! uses (rmcp's own `transport-streamable-http-client-reqwest` needs reqwest 0.13).
//!
//! It follows the transport section of the 2025-11-25 revision
//! (<https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#streamable-http>):
//! every message goes in a POST with `Accept: application/json, text/event-stream`; a server answers
//! with one JSON message, an SSE stream, or 202 for a notification or a response; the session id
//! from `initialize` goes back in `Mcp-Session-Id`; a GET opens the server's own stream (405 when
//! it has none); DELETE ends the session; 404 on a session means it expired.

use std::collections::HashMap;
use std::sync::Arc;

use futures::StreamExt as _;
use futures::stream::BoxStream;
use http::{HeaderName, HeaderValue, StatusCode, header};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::common::http_header::{
    EVENT_STREAM_MIME_TYPE, HEADER_LAST_EVENT_ID, HEADER_SESSION_ID, JSON_MIME_TYPE,
};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
};
use sse_stream::{Sse, SseStream};

/// The most of a JSON response, or of an SSE event's bytes, read before giving up (rmcp's
/// default limits, 16 MiB).
const MAX_BODY: usize = 16 * 1024 * 1024;
/// How much of an error's body is kept for the message.
const MAX_ERROR_BODY: usize = 1024;

/// A reqwest 0.12 client as rmcp's Streamable HTTP client. It also tells when the session's own
/// stream (the `GET`) is open: a server may send a request outside any call (a form, as the
/// conformance suite's server does), and sends it nowhere while that stream is not there yet.
#[derive(Clone, Debug, Default)]
pub(crate) struct Reqwest012 {
    client: reqwest::Client,
    /// Whether a session was given, and whether its stream was opened (or refused).
    stream: Arc<tokio::sync::watch::Sender<(bool, bool)>>,
}

impl Reqwest012 {
    /// Waits (at most `limit`) until the session's stream is open, when the server gave a session.
    pub(crate) async fn stream_opened(&self, limit: std::time::Duration) {
        let mut stream = self.stream.subscribe();
        let _ = tokio::time::timeout(limit, stream.wait_for(|&(session, open)| !session || open)).await;
    }
}

type Error = StreamableHttpError<reqwest::Error>;

fn client_error(error: reqwest::Error) -> Error {
    StreamableHttpError::Client(error)
}

fn is(value: Option<&HeaderValue>, wanted: &str) -> bool {
    value
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case(wanted))
}

/// `request` with the headers every call carries.
fn with_headers(
    mut request: reqwest::RequestBuilder,
    session: Option<&str>,
    auth: Option<String>,
    custom: HashMap<HeaderName, HeaderValue>,
) -> reqwest::RequestBuilder {
    request = request.header(header::ACCEPT, format!("{EVENT_STREAM_MIME_TYPE}, {JSON_MIME_TYPE}"));
    if let Some(session) = session {
        request = request.header(HEADER_SESSION_ID, session);
    }
    if let Some(token) = auth {
        request = request.bearer_auth(token);
    }
    for (name, value) in custom {
        request = request.header(name, value);
    }
    request
}

/// A failed response's `body`, cut to [`MAX_ERROR_BODY`], in an error naming the status.
fn unexpected(status: StatusCode, body: &[u8]) -> Error {
    let cut = String::from_utf8_lossy(&body[..body.len().min(MAX_ERROR_BODY)]);
    StreamableHttpError::UnexpectedServerResponse(format!("HTTP {status}: {cut}").into())
}

/// [`unexpected`] for a failed response, read whole.
async fn status_error(response: reqwest::Response) -> Error {
    let status = response.status();
    unexpected(status, &response.bytes().await.unwrap_or_default())
}

/// A JSON body, refused past [`MAX_BODY`] bytes.
async fn json_body(response: reqwest::Response) -> Result<impl std::ops::Deref<Target = [u8]>, Error> {
    if response.content_length().is_some_and(|n| n > MAX_BODY as u64) {
        return Err(StreamableHttpError::ResponseBodyTooLarge { max_size: MAX_BODY });
    }
    let body = response.bytes().await.map_err(client_error)?;
    if body.len() > MAX_BODY {
        return Err(StreamableHttpError::ResponseBodyTooLarge { max_size: MAX_BODY });
    }
    Ok(body)
}

/// The SSE events of `response`; an event of more than [`MAX_BODY`] bytes ends the stream with
/// an error before it is held whole.
fn events(response: reqwest::Response) -> BoxStream<'static, Result<Sse, SseError>> {
    let mut size = EventSize::default();
    let bytes = response.bytes_stream().map(move |chunk| {
        let chunk = chunk.map_err(|e| SseError::Body(e.into()))?;
        size.add(&chunk)?;
        Ok::<_, SseError>(chunk)
    });
    SseStream::from_bytes_stream(bytes).boxed()
}

/// Counts the bytes of the SSE event being read: an empty line (two line ends in a row, each
/// `\n`, `\r` or `\r\n`) ends an event.
#[derive(Default)]
struct EventSize {
    bytes: usize,
    at_line_start: bool,
    after_cr: bool,
}

impl EventSize {
    fn add(&mut self, chunk: &[u8]) -> Result<(), SseError> {
        for &byte in chunk {
            let crlf = byte == b'\n' && self.after_cr;
            self.after_cr = byte == b'\r';
            if crlf {
                continue;
            }
            if matches!(byte, b'\n' | b'\r') {
                if self.at_line_start {
                    self.bytes = 0;
                }
                self.at_line_start = true;
            } else {
                self.at_line_start = false;
                self.bytes += 1;
                if self.bytes > MAX_BODY {
                    return Err(SseError::Body(format!("an SSE event of more than {MAX_BODY} bytes").into()));
                }
            }
        }
        Ok(())
    }
}

impl StreamableHttpClient for Reqwest012 {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, Error> {
        let request =
            with_headers(self.client.post(uri.as_ref()), session_id.as_deref(), auth_header, custom_headers);
        let response = request.json(&message).send().await.map_err(client_error)?;
        let status = response.status();
        if matches!(status, StatusCode::ACCEPTED | StatusCode::NO_CONTENT) {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        if status == StatusCode::NOT_FOUND && session_id.is_some() {
            return Err(StreamableHttpError::SessionExpired);
        }
        let content_type = response.headers().get(header::CONTENT_TYPE).cloned();
        if !status.is_success() {
            // A JSON-RPC error in the body is the server's answer to the request.
            if is(content_type.as_ref(), JSON_MIME_TYPE) {
                let body = json_body(response).await?;
                if let Ok(message @ ServerJsonRpcMessage::Error(_)) = serde_json::from_slice(&body) {
                    return Ok(StreamableHttpPostResponse::Json(message, None));
                }
                return Err(unexpected(status, &body));
            }
            return Err(status_error(response).await);
        }
        let session =
            response.headers().get(HEADER_SESSION_ID).and_then(|v| v.to_str().ok()).map(str::to_owned);
        if session.is_some() {
            self.stream.send_if_modified(|(given, _)| !std::mem::replace(given, true));
        }
        if is(content_type.as_ref(), EVENT_STREAM_MIME_TYPE) {
            return Ok(StreamableHttpPostResponse::Sse(events(response), session));
        }
        if is(content_type.as_ref(), JSON_MIME_TYPE) {
            let body = json_body(response).await?;
            return match serde_json::from_slice(&body) {
                Ok(reply) => Ok(StreamableHttpPostResponse::Json(reply, session)),
                // A notification or a response awaits no reply: whatever came back is moot.
                Err(_) if !matches!(message, ClientJsonRpcMessage::Request(_)) => {
                    Ok(StreamableHttpPostResponse::Accepted)
                }
                Err(e) => Err(e.into()),
            };
        }
        // A notification or a response needs nothing back; some servers answer it with 200.
        if !matches!(message, ClientJsonRpcMessage::Request(_)) {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        Err(StreamableHttpError::UnexpectedContentType(
            content_type.map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned()),
        ))
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), Error> {
        let request =
            with_headers(self.client.delete(uri.as_ref()), Some(&session_id), auth_header, custom_headers);
        let response = request.send().await.map_err(client_error)?;
        // 405: the server does not let clients end sessions, which is allowed.
        if response.status().is_success() || response.status() == StatusCode::METHOD_NOT_ALLOWED {
            return Ok(());
        }
        Err(status_error(response).await)
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, Error> {
        let mut request =
            with_headers(self.client.get(uri.as_ref()), session_id.as_deref(), auth_header, custom_headers);
        if let Some(last) = last_event_id {
            request = request.header(HEADER_LAST_EVENT_ID, last);
        }
        let response = request.send().await;
        // Open, or refused: either way nothing more is coming to wait for.
        self.stream.send_modify(|(_, open)| *open = true);
        let response = response.map_err(client_error)?;
        if response.status() == StatusCode::METHOD_NOT_ALLOWED {
            return Err(StreamableHttpError::ServerDoesNotSupportSse);
        }
        if !response.status().is_success() {
            return Err(status_error(response).await);
        }
        let content_type = response.headers().get(header::CONTENT_TYPE);
        if !is(content_type, EVENT_STREAM_MIME_TYPE) {
            let shown = content_type.map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
            return Err(StreamableHttpError::UnexpectedContentType(shown));
        }
        Ok(events(response))
    }
}
