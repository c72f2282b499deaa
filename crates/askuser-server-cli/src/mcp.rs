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
        // SPEC §16: the MCP server's timeout policy is `stop`.
        .on_timeout(OnTimeout::Stop)
        .inbox(Arc::clone(&settings.store));
    if settings.background {
        server = server.background(settings.store, SCOPE);
    }
    let mut options = HttpOptions::new().cancel_on(settings.stop).body_limit(settings.body_limit);
    if let Some((origin, host)) = origin_and_host(settings.public_url) {
        options = options.origin(origin).host(host);
    }
    axum::Router::new()
        .fallback_service(askuser_mcp::http_service(server.build(), options))
        .layer(axum::middleware::from_fn(session_ended))
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
