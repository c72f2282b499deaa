//! The API's extractors: a JSON body and a query string that fail as [`ApiError`]s, so every
//! `/v1` rejection has a stable code.

use std::sync::Arc;

use axum::Json;
use axum::extract::{FromRequest, FromRequestParts, Request};
use serde::de::DeserializeOwned;

use crate::AppState;
use crate::error::ApiError;

/// A JSON body that fails as an [`ApiError`] (`malformed_body`, `body_too_large`,
/// `unsupported_media_type`).
pub(crate) struct ApiJson<T>(pub(crate) T);

impl<T: DeserializeOwned> FromRequest<Arc<AppState>> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &Arc<AppState>) -> Result<Self, Self::Rejection> {
        match Json::<T>::from_request(request, state).await {
            Ok(Json(value)) => Ok(Self(value)),
            Err(rejection) => Err(ApiError::from_json_rejection(&rejection, state.config.body_limit)),
        }
    }
}

/// A query string that fails as an [`ApiError`] (`invalid_query`).
pub(crate) struct ApiQuery<T>(pub(crate) T);

impl<T: DeserializeOwned> FromRequestParts<Arc<AppState>> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &Arc<AppState>,
    ) -> Result<Self, Self::Rejection> {
        match axum::extract::Query::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Query(value)) => Ok(Self(value)),
            Err(rejection) => Err(ApiError::from_query_rejection(&rejection)),
        }
    }
}
