//! Buffers that may hold a typed secret, zeroed when they are done with: the raw body of a page
//! form (read here instead of by axum's `Form`, so that no copy of it is left unzeroed), and the
//! serialized wait reply that hands a secret over.
//!
//! What this does not reach (see `docs/server.md`, "Where a secret's value goes"): hyper's own
//! read and write buffers, the kernel's socket buffers, and a TLS terminator in front.

use std::io;
use std::sync::Arc;

use axum::body::{Body, Bytes, HttpBody as _};
use axum::extract::{FromRequest, Request};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse as _, Response};
use serde::Serialize;
use zeroize::Zeroize as _;

use crate::AppState;

/// Bytes that are zeroed when the last `Bytes` sharing them is dropped.
struct Zeroed(Vec<u8>);

impl AsRef<[u8]> for Zeroed {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl Drop for Zeroed {
    fn drop(&mut self) {
        self.0.zeroize();
    }
}

/// An `io::Write` into a buffer that zeroes each allocation it outgrows.
#[derive(Default)]
struct ZeroingWriter(Vec<u8>);

impl ZeroingWriter {
    /// Makes room for `more` bytes in a new allocation when needed (never a reallocation, which
    /// could leave a copy behind); returns the outgrown buffer with its bytes zeroed, to drop.
    fn grow(&mut self, more: usize) -> Vec<u8> {
        let need = self.0.len() + more;
        if need <= self.0.capacity() {
            return Vec::new();
        }
        let mut bigger = Vec::with_capacity(need.max(self.0.capacity() * 2).max(256));
        bigger.extend_from_slice(&self.0);
        let mut old = std::mem::replace(&mut self.0, bigger);
        old.as_mut_slice().zeroize();
        old
    }
}

impl io::Write for ZeroingWriter {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        drop(self.grow(bytes.len()));
        self.0.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// `value` as a JSON response whose body is zeroed once sent (and every buffer the
/// serialization outgrew, as it went).
pub(crate) fn json(value: &impl Serialize) -> Response {
    let mut writer = ZeroingWriter::default();
    if let Err(error) = serde_json::to_writer(&mut writer, value) {
        tracing::error!(%error, "serializing a reply failed");
        writer.0.zeroize();
        return (StatusCode::INTERNAL_SERVER_ERROR, "internal error").into_response();
    }
    let mut response = Body::from(Bytes::from_owner(Zeroed(writer.0))).into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// Why a form body was not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FormRefused {
    /// Longer than the body limit.
    TooLarge,
    /// Not `application/x-www-form-urlencoded`, or the body failed (the body timeout).
    Unreadable,
}

/// A page form's fields, in order, read from a body that is zeroed once parsed: each frame's
/// bytes are copied into one buffer and wiped (when no one else holds them), the buffer is wiped
/// after parsing.
pub(crate) struct SecretForm(pub(crate) Result<Vec<(String, String)>, FormRefused>);

impl FromRequest<Arc<AppState>> for SecretForm {
    type Rejection = std::convert::Infallible;

    async fn from_request(request: Request, state: &Arc<AppState>) -> Result<Self, Self::Rejection> {
        let form = request
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.starts_with("application/x-www-form-urlencoded"));
        if !form {
            return Ok(Self(Err(FormRefused::Unreadable)));
        }
        let limit = state.config.body_limit;
        let mut body = request.into_body();
        let mut raw = ZeroingWriter::default();
        let refused = loop {
            match std::future::poll_fn(|cx| std::pin::Pin::new(&mut body).poll_frame(cx)).await {
                None => break None,
                Some(Err(_)) => break Some(FormRefused::Unreadable),
                Some(Ok(frame)) => {
                    let Ok(data) = frame.into_data() else { continue };
                    if raw.0.len() + data.len() > limit {
                        drop(wipe(data));
                        break Some(FormRefused::TooLarge);
                    }
                    drop(raw.grow(data.len()));
                    raw.0.extend_from_slice(&data);
                    drop(wipe(data));
                }
            }
        };
        if let Some(refused) = refused {
            raw.0.zeroize();
            return Ok(Self(Err(refused)));
        }
        let fields = form_urlencoded::parse(&raw.0).map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
        raw.0.zeroize();
        Ok(Self(Ok(fields)))
    }
}

/// Zeroes a body frame's bytes when this is their only holder; returns them (zeroed) to drop.
fn wipe(data: Bytes) -> Option<bytes::BytesMut> {
    let mut unique = data.try_into_mut().ok()?;
    unique.as_mut().zeroize();
    Some(unique)
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use super::*;

    #[test]
    fn an_outgrown_buffer_is_zeroed_before_it_is_dropped() {
        let mut writer = ZeroingWriter::default();
        writer.write_all(b"secret-value").unwrap();
        let room = writer.0.capacity() - writer.0.len();
        writer.write_all(&vec![b's'; room]).unwrap();
        let old = writer.grow(1);
        assert_eq!(old.len(), 12 + room);
        assert!(old.iter().all(|b| *b == 0));
        assert!(writer.0.starts_with(b"secret-value") && writer.0.len() == 12 + room);
        assert!(writer.grow(0).is_empty(), "no growth, nothing outgrown");
    }

    #[test]
    fn a_frame_only_this_holds_is_wiped() {
        let zeroed = wipe(Bytes::from(b"token=s3cr3t".to_vec())).unwrap();
        assert_eq!(&zeroed[..], &[0; 12]);
        // A frame shared with another holder cannot be changed: it is left alone.
        let shared = Bytes::from(b"shared".to_vec());
        assert!(wipe(shared.clone()).is_none());
        assert_eq!(&shared[..], b"shared");
    }
}
