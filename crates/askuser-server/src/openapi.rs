//! The `OpenAPI` description of `/v1` and `/healthz`, generated from the handlers' annotations and
//! served at `/openapi.json`.

use axum::Json;
use axum::response::{IntoResponse, Response};
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::{Modify, OpenApi};

use crate::api;

#[derive(OpenApi)]
#[openapi(
    info(title = "askuser answer server", description = "Ask a person structured questions over HTTP; see docs/server.md."),
    paths(api::ask, api::get, api::wait, api::answer, api::cancel, api::list, api::events, api::healthz),
    modifiers(&Bearer)
)]
struct ApiDoc;

struct Bearer;

impl Modify for Bearer {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme("bearer", SecurityScheme::Http(Http::new(HttpAuthScheme::Bearer)));
    }
}

/// The description, as a JSON value.
pub(crate) fn document() -> serde_json::Value {
    serde_json::to_value(ApiDoc::openapi()).unwrap_or_default()
}

/// `GET /openapi.json` (no token: it describes the API, it holds no data).
pub(crate) async fn serve() -> Response {
    Json(document()).into_response()
}
