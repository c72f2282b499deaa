//! Links to a question's page and how a record's asker is shown: what the API, the pages and the
//! notices all put in front of the person.

use askuser_client::encode_segment;
use askuser_store::PendingRecord;

use crate::AppState;

/// The page link of question `id`: the public URL, the path and the batch token.
pub(crate) fn page_url(state: &AppState, id: &str) -> String {
    format!("{}{}", state.config.public_url, link_path(state, id))
}

pub(crate) fn link_path(state: &AppState, id: &str) -> String {
    format!("/q/{}/{}", encode_segment(id), state.keys.batch_token(id))
}

/// Who asked, for display (askama escapes it; characters that render blank are made visible).
pub(crate) fn asked_by_of(record: &PendingRecord) -> Option<String> {
    record.asked_by().map(|by| by.shown().into_owned())
}
