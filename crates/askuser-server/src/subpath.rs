//! A public URL with a path (`https://example.com/askuser`, the server behind a reverse proxy
//! on a sub-path): every link, form action, asset, event stream, redirect and cookie of the pages
//! stays inside it, and requests are taken with or without the prefix (a proxy that strips it,
//! and one that passes it on).
//!
//! The pages are written for the root; the responses are rewritten here, so the page code knows
//! nothing of it: in HTML, `href="/`, `src="/`, `action="/` and `data-events="/` get the prefix
//! (askama escapes every `"` of model-authored text, so none of these can come from a question),
//! and so do a `Location` that is a path and a cookie's `Path=/`.

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse as _, Response};

/// The largest page rewritten; pages are a few KiB.
const MAX_PAGE: usize = 4 * 1024 * 1024;

/// The path of `public_url` without its trailing `/`: `/askuser` for
/// `https://example.com/askuser/`, empty for `http://127.0.0.1:8765`.
pub(crate) fn base_path(public_url: &str) -> String {
    let rest = public_url.split_once("://").map_or(public_url, |(_, rest)| rest);
    let path = rest.find('/').map_or("", |at| &rest[at..]);
    let path = path.split(['?', '#']).next().unwrap_or_default();
    path.trim_end_matches('/').to_owned()
}

/// `app` served under `base` too (and still at the root), its responses rewritten to stay
/// under `base`. `app` itself when `base` is empty.
pub(crate) fn mount(app: Router, base: &str) -> Router {
    if base.is_empty() {
        return app;
    }
    let base: Arc<str> = Arc::from(base);
    let app = app.layer(middleware::from_fn_with_state(Arc::clone(&base), rewrite));
    Router::new().nest_service(&base, app.clone()).fallback_service(app)
}

async fn rewrite(State(base): State<Arc<str>>, request: Request, next: Next) -> Response {
    let response = next.run(request).await;
    let (mut parts, body) = response.into_parts();
    if let Some(location) = parts.headers.get(header::LOCATION).and_then(|v| v.to_str().ok())
        && location.starts_with('/')
        && !location.starts_with("//")
        && let Ok(value) = HeaderValue::from_str(&format!("{base}{location}"))
    {
        parts.headers.insert(header::LOCATION, value);
    }
    let cookies: Vec<HeaderValue> = parts
        .headers
        .get_all(header::SET_COOKIE)
        .iter()
        .map(|v| {
            v.to_str()
                .ok()
                .and_then(|text| {
                    HeaderValue::from_str(&text.replace("; Path=/;", &format!("; Path={base}/;"))).ok()
                })
                .unwrap_or_else(|| v.clone())
        })
        .collect();
    if !cookies.is_empty() {
        parts.headers.remove(header::SET_COOKIE);
        for cookie in cookies {
            parts.headers.append(header::SET_COOKIE, cookie);
        }
    }
    let html = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("text/html"));
    if !html {
        return Response::from_parts(parts, body);
    }
    let Ok(bytes) = axum::body::to_bytes(body, MAX_PAGE).await else {
        return (axum::http::StatusCode::INTERNAL_SERVER_ERROR, "internal error").into_response();
    };
    let Ok(text) = std::str::from_utf8(&bytes) else {
        return Response::from_parts(parts, Body::from(bytes));
    };
    let mut text = text.to_owned();
    for attribute in ["href", "src", "action", "data-events"] {
        text = text.replace(&format!("{attribute}=\"/"), &format!("{attribute}=\"{base}/"));
    }
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(text))
}

#[cfg(test)]
mod tests {
    #[test]
    fn base_paths() {
        for (url, base) in [
            ("http://127.0.0.1:8765", ""),
            ("https://ask.example.com/", ""),
            ("https://example.com/askuser", "/askuser"),
            ("https://example.com/tools/askuser/", "/tools/askuser"),
        ] {
            assert_eq!(super::base_path(url), base, "{url}");
        }
    }
}
