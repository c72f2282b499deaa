//! MCP at `/mcp` on `askuser serve`: askuser-mcp's server over Streamable HTTP, its questions in
//! the answer server's store (the inbox), mounted behind the API token.

use std::sync::Arc;
use std::time::Duration;

use askuser_core::Profile;
use askuser_mcp::{AskUserServer, HttpOptions};
use askuser_store::PendingStore;
use askuser_tool::OnTimeout;
use tokio_util::sync::CancellationToken;

/// The scope of the background tools' tickets on the HTTP endpoint (each MCP session's own).
const SCOPE: &str = "askuser serve mcp";

/// What the MCP endpoint is built from.
pub(crate) struct Settings<'a> {
    pub(crate) store: Arc<dyn PendingStore>,
    pub(crate) profile: Profile,
    /// How long its questions wait.
    pub(crate) timeout: Duration,
    /// Whether the background tools are offered.
    pub(crate) background: bool,
    /// The URL people and clients reach the server at.
    pub(crate) public_url: &'a str,
    pub(crate) body_limit: usize,
    /// Ends the sessions when the server stops.
    pub(crate) stop: CancellationToken,
}

/// The router to mount at `/mcp`.
pub(crate) fn router(settings: Settings<'_>) -> axum::Router {
    let mut server = AskUserServer::builder()
        .profile(settings.profile)
        .timeout(settings.timeout)
        // docs/contract.md §16: the MCP server's timeout policy is `stop`.
        .on_timeout(OnTimeout::Stop)
        .inbox(Arc::clone(&settings.store));
    if settings.background {
        server = server.background(settings.store, SCOPE);
    }
    let mut options = HttpOptions::new().cancel_on(settings.stop).body_limit(settings.body_limit);
    if let Some((origin, host)) = origin_and_host(settings.public_url) {
        options = options.origin(origin).host(host);
    }
    let limit = settings.body_limit;
    axum::Router::new()
        .fallback_service(askuser_mcp::http_service(server.build(), options))
        .layer(axum::middleware::from_fn(session_ended))
        .layer(axum::middleware::from_fn(move |request, next| too_large_in_protocol(limit, request, next)))
}

/// A `POST` past the body limit, refused inside the protocol (issue 36.19: an answer past 256 KiB
/// got `413`, which no SDK reports, and the call hung or the session died). The message is read
/// as far as the limit: a client's *answer* to the server's form (a response) goes on to the
/// server as an error response of the same id, so the form is asked again; a client's request gets
/// a JSON-RPC error of its id. One whose id cannot be read in time gets `413` as before.
async fn too_large_in_protocol(
    limit: usize,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse as _;
    use http_body_util::BodyExt as _;
    if request.method() != axum::http::Method::POST {
        return next.run(request).await;
    }
    let (mut parts, mut body) = request.into_parts();
    let mut kept: Vec<u8> = Vec::new();
    let mut over = false;
    while let Some(frame) = body.frame().await {
        let Ok(frame) = frame else {
            return (axum::http::StatusCode::BAD_REQUEST, "the request body could not be read")
                .into_response();
        };
        if let Ok(data) = frame.into_data() {
            if kept.len() + data.len() > limit {
                kept.extend_from_slice(&data[..limit - kept.len()]);
                over = true;
                break;
            }
            kept.extend_from_slice(&data);
        }
    }
    if !over {
        return next.run(axum::extract::Request::from_parts(parts, axum::body::Body::from(kept))).await;
    }
    let error = |id: &serde_json::Value, what: &str| {
        serde_json::json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32600,
            "message": format!("{what} is larger than {limit} bytes, the most this server takes")}})
    };
    match top_level(&kept) {
        Some((id, true)) => {
            let refused = error(&id, "the answer").to_string();
            parts.headers.insert(axum::http::header::CONTENT_LENGTH, refused.len().into());
            tracing::warn!(
                limit,
                "an MCP client's answer past the body limit was refused; the form is asked again"
            );
            next.run(axum::extract::Request::from_parts(parts, axum::body::Body::from(refused))).await
        }
        Some((id, false)) => {
            ([(axum::http::header::CONTENT_TYPE, "application/json")], error(&id, "the request").to_string())
                .into_response()
        }
        None => (axum::http::StatusCode::PAYLOAD_TOO_LARGE, "the request body is too large").into_response(),
    }
}

/// The top-level `id` of a JSON-RPC message cut short, and whether it is a response (a `result`
/// or `error` key) rather than a request (a `method` key), as far as `prefix` tells.
fn top_level(prefix: &[u8]) -> Option<(serde_json::Value, bool)> {
    let (mut depth, mut at) = (0usize, 0usize);
    let (mut id, mut response) = (None, None);
    let mut expect_key = false;
    let string_end = |from: usize| -> Option<usize> {
        let mut i = from + 1;
        while i < prefix.len() {
            match prefix[i] {
                b'\\' => i += 2,
                b'"' => return Some(i),
                _ => i += 1,
            }
        }
        None
    };
    while at < prefix.len() {
        match prefix[at] {
            b'"' => {
                let end = string_end(at)?;
                if depth == 1 && expect_key {
                    let key = &prefix[at + 1..end];
                    expect_key = false;
                    let mut value = end + 1;
                    while value < prefix.len()
                        && (prefix[value] == b':' || prefix[value].is_ascii_whitespace())
                    {
                        value += 1;
                    }
                    match key {
                        b"id" => {
                            let stop = if prefix.get(value) == Some(&b'"') {
                                string_end(value)? + 1
                            } else {
                                value
                                    + prefix[value..].iter().position(|b| matches!(b, b',' | b'}' | b' '))?
                            };
                            id = serde_json::from_slice::<serde_json::Value>(&prefix[value..stop]).ok();
                        }
                        b"result" | b"error" => response = Some(true),
                        b"method" => response = Some(false),
                        _ => {}
                    }
                    at = value;
                    continue;
                }
                at = end + 1;
                continue;
            }
            b'{' | b'[' => {
                depth += 1;
                expect_key = depth == 1 && prefix[at] == b'{';
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            b',' => expect_key = depth == 1,
            _ => {}
        }
        at += 1;
        if let (Some(id), Some(response)) = (&id, response) {
            return Some((id.clone(), response));
        }
    }
    Some((id?, response?))
}

/// `DELETE` (the client ends its session) answers `204 No Content`: rmcp answers `202`, which the
/// SDKs do not take for a success (they accept 200 and 204; issue 36.21).
async fn session_ended(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let delete = request.method() == axum::http::Method::DELETE;
    let mut response = next.run(request).await;
    if delete && response.status() == axum::http::StatusCode::ACCEPTED {
        *response.status_mut() = axum::http::StatusCode::NO_CONTENT;
        *response.body_mut() = axum::body::Body::empty();
    }
    response
}

/// The origin (`scheme://host:port`, the port always written) and the `Host` authority of a
/// public URL. rmcp takes an allowed origin without a port for any port of its host (issue
/// 36.12: a page on `https://ask.example.com:8443` passed for `https://ask.example.com`), so the
/// scheme's default port is written out.
fn origin_and_host(url: &str) -> Option<(String, String)> {
    let (scheme, rest) = url.split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next().filter(|a| !a.is_empty())?;
    // Credentials in a public URL are nobody's business here.
    let authority = authority.rsplit('@').next().unwrap_or(authority);
    let has_port = authority.rsplit(']').next().is_some_and(|tail| tail.contains(':'));
    let origin = match (has_port, scheme) {
        (true, _) => format!("{scheme}://{authority}"),
        (false, "https") => format!("{scheme}://{authority}:443"),
        (false, _) => format!("{scheme}://{authority}:80"),
    };
    Some((origin, authority.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::origin_and_host;

    #[track_caller]
    fn check(url: &str, expected: Option<(&str, &str)>) {
        let got = origin_and_host(url);
        assert_eq!(got.as_ref().map(|(o, h)| (o.as_str(), h.as_str())), expected, "{url}");
    }

    #[test]
    fn reads_the_id_and_kind_of_a_message_cut_short() {
        use serde_json::json;
        let cut = |text: &str| super::top_level(text.as_bytes());
        assert_eq!(
            cut(r#"{"jsonrpc":"2.0","id":3,"result":{"action":"accept","content":{"q01":"xxxx"#),
            Some((json!(3), true))
        );
        assert_eq!(
            cut(r#"{ "id" : "a\"b", "jsonrpc":"2.0", "method":"tools/call","params":{"id":9,"#),
            Some((json!("a\"b"), false))
        );
        // A nested "id" is no message id; an unknown kind is nothing.
        assert_eq!(cut(r#"{"jsonrpc":"2.0","result":{"id":5,"content":"xx"#), None);
        assert_eq!(cut(r#"{"jsonrpc":"2.0","id":4,"params":"xx"#), None);
        assert_eq!(cut(r#"{"jsonrpc":"2.0","error":{"code":1},"id":7}"#), Some((json!(7), true)));
        assert_eq!(cut("not json"), None);
    }

    #[test]
    fn reads_the_public_urls_origin_and_host() {
        check("http://127.0.0.1:8765", Some(("http://127.0.0.1:8765", "127.0.0.1:8765")));
        // The default port written out: rmcp would take a portless origin for any port.
        check("https://ask.example.com/askuser/", Some(("https://ask.example.com:443", "ask.example.com")));
        check("http://ask.example.com", Some(("http://ask.example.com:80", "ask.example.com")));
        check("http://[::1]/", Some(("http://[::1]:80", "[::1]")));
        check(
            "https://me@ask.example.com:8443?x",
            Some(("https://ask.example.com:8443", "ask.example.com:8443")),
        );
        check("http://[::1]:9/", Some(("http://[::1]:9", "[::1]:9")));
        check("ask.example.com", None);
        check("http://", None);
    }
}
