//! The pages a person answers on.

use std::sync::Arc;

use axum::Router;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use crate::AppState;
use crate::paths::encode_segment;

/// The page link of question `id`: the public URL, the path and the batch token.
pub(crate) fn page_url(state: &AppState, id: &str) -> String {
    format!("{}/q/{}/{}", state.config.public_url, encode_segment(id), state.keys.batch_token(id))
}

pub(crate) fn routes() -> Router<Arc<AppState>> {
    Router::new()
}

pub(crate) async fn not_found() -> Response {
    (StatusCode::NOT_FOUND, "not found").into_response()
}
