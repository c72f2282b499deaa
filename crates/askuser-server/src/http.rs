//! The router and what every request goes through: the API token check, JSON and query
//! extractors that fail as [`ApiError`]s, security headers, the body limit and the access log.

use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::extract::{DefaultBodyLimit, MatchedPath, Request, State};
use axum::http::{HeaderValue, Method, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use tower_http::set_header::SetResponseHeaderLayer;

use crate::error::ApiError;
use crate::{AppState, api, pages};

/// The Content-Security-Policy of every response: nothing from elsewhere, no inline script or
/// style, forms post only here, no framing.
pub(crate) const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; \
    connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

pub(crate) fn router(state: Arc<AppState>) -> Router {
    let v1 = Router::new()
        .route("/questions", post(api::ask).get(api::list))
        .route("/questions/{id}", get(api::get))
        .route("/questions/{id}/wait", get(api::wait))
        .route("/questions/{id}/answer", post(api::answer))
        .route("/questions/{id}/cancel", post(api::cancel))
        .route("/events", get(api::events))
        .fallback(|| async { ApiError::NoRoute })
        .layer(middleware::from_fn_with_state(Arc::clone(&state), require_token));
    let limit = state.config.body_limit;
    let base = crate::subpath::base_path(&state.config.public_url);
    let mut app = Router::new().nest("/v1", v1);
    for (path, mounted) in &state.mounted {
        let guarded =
            mounted.clone().layer(middleware::from_fn_with_state(Arc::clone(&state), require_token));
        app = app.nest_service(path, guarded);
    }
    let app = app
        .route("/healthz", get(api::healthz))
        .route("/openapi.json", get(crate::openapi::serve))
        .merge(pages::routes())
        .merge(crate::tap::routes())
        .fallback(pages::not_found)
        .method_not_allowed_fallback(|| async { ApiError::MethodNotAllowed })
        .layer(DefaultBodyLimit::max(limit))
        .layer(SetResponseHeaderLayer::overriding(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(CSP),
        ))
        .layer(SetResponseHeaderLayer::overriding(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ))
        .layer(SetResponseHeaderLayer::overriding(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY")))
        // Page links carry their token in the path: never send it on to another site.
        .layer(SetResponseHeaderLayer::overriding(
            header::REFERRER_POLICY,
            HeaderValue::from_static("no-referrer"),
        ))
        .layer(SetResponseHeaderLayer::if_not_present(
            header::CACHE_CONTROL,
            HeaderValue::from_static("no-store"),
        ))
        .layer(SetResponseHeaderLayer::overriding(
            header::HeaderName::from_static("cross-origin-opener-policy"),
            HeaderValue::from_static("same-origin"),
        ))
        .layer(middleware::from_fn(access_log))
        .with_state(state);
    crate::subpath::mount(app, &base)
}

/// `/v1` (and what is mounted behind the token, `/mcp`) takes the API token as `Authorization:
/// Bearer TOKEN`, compared in constant time, under `/login`'s bucket (issue 36.8: 300 wrong
/// tokens went by in 0.38 s). Every check takes an attempt from the client's bucket first and a
/// right token gives it back, so that a burst sent at once is bounded too and a client with the
/// right token never runs dry; a client whose bucket is empty gets `429` whatever it presents.
async fn require_token(State(state): State<Arc<AppState>>, request: Request, next: Next) -> Response {
    let peer = request.extensions().get::<crate::throttle::Peer>().copied();
    if let Err(wait) = state.logins.attempt(peer) {
        return ApiError::TooManyAttempts { wait_secs: wait.as_secs().max(1) }.into_response();
    }
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim);
    match presented {
        Some(token) if state.keys.token().matches(token) => {
            state.logins.refund(peer);
            next.run(request).await
        }
        _ => ApiError::Unauthorized.into_response(),
    }
}

/// One line per request: method, the route's pattern (never the path itself, which may hold a
/// page token or an id), status and time. No query, no body, no question content.
async fn access_log(request: Request, next: Next) -> Response {
    let method: Method = request.method().clone();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "(unmatched)".to_owned(), |p| p.as_str().to_owned());
    let started = Instant::now();
    let response = next.run(request).await;
    tracing::info!(
        target: "askuser_server::access",
        %method,
        route,
        status = response.status().as_u16(),
        micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
        "request"
    );
    response
}
