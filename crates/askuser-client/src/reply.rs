//! How every askuser HTTP client reads a reply (the answer server's API, the hook, the chat
//! channels' Bot and Web APIs): the body read at most [`MAX_REPLY_BYTES`], never whole whatever
//! its size, and the server's `Retry-After` (delay-seconds) read one way.

use std::time::Duration;

/// The largest reply body any askuser client reads (8 MiB): far above any reply it expects (a
/// page of 1,000 records, 100 Telegram updates), far below what would hurt a small machine.
pub const MAX_REPLY_BYTES: usize = 8 * 1024 * 1024;

/// Why a reply's body could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReplyError {
    /// The body was longer than the limit (or said so in its `Content-Length`): not read further.
    #[error("the reply is larger than {limit} bytes: not read")]
    TooLarge {
        /// The limit, in bytes.
        limit: usize,
    },
    /// The connection failed while the body was read.
    #[error("reading the reply failed: {0}")]
    Transport(#[from] reqwest::Error),
}

/// Reads `response`'s body, at most `limit` bytes, chunk by chunk.
///
/// # Errors
///
/// [`ReplyError::TooLarge`] once the body (or its announced length) passes `limit`;
/// [`ReplyError::Transport`] when the connection fails.
pub async fn read_body(mut response: reqwest::Response, limit: usize) -> Result<Vec<u8>, ReplyError> {
    if response.content_length().is_some_and(|n| n > limit as u64) {
        return Err(ReplyError::TooLarge { limit });
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        if body.len() + chunk.len() > limit {
            return Err(ReplyError::TooLarge { limit });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// [`read_body`] as text (invalid UTF-8 replaced, as `reqwest::Response::text` does).
///
/// # Errors
///
/// As [`read_body`].
pub async fn read_text(response: reqwest::Response, limit: usize) -> Result<String, ReplyError> {
    read_body(response, limit).await.map(|body| String::from_utf8_lossy(&body).into_owned())
}

/// The reply's `Retry-After` when it gives a number of seconds (RFC 9110 §10.2.3; an HTTP date,
/// which no service askuser talks to sends, is not read).
#[must_use]
pub fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let value = headers.get(reqwest::header::RETRY_AFTER)?.to_str().ok()?;
    value.trim().parse::<u64>().ok().map(Duration::from_secs)
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    use super::*;

    /// A server that answers one request with `reply` (the raw HTTP response); its URL.
    async fn answering(reply: String) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("http://{}/", listener.local_addr().expect("addr"));
        tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.expect("accept");
            let mut request = [0_u8; 4096];
            let _ = socket.read(&mut request).await;
            let _ = socket.write_all(reply.as_bytes()).await;
        });
        url
    }

    async fn read(reply: String, limit: usize) -> Result<String, ReplyError> {
        let response = reqwest::get(answering(reply).await).await.expect("a response");
        read_text(response, limit).await
    }

    /// A body within the limit is read whole; one announced larger, or streamed past the limit
    /// without a length, is refused without being read further.
    #[tokio::test]
    async fn a_reply_is_read_up_to_the_limit_and_no_further() {
        let small = "HTTP/1.1 200 OK\r\ncontent-length: 5\r\nconnection: close\r\n\r\nhello".to_owned();
        assert_eq!(read(small, 5).await.expect("read"), "hello");
        let announced = "HTTP/1.1 200 OK\r\ncontent-length: 6\r\nconnection: close\r\n\r\nhello!".to_owned();
        assert!(matches!(read(announced, 5).await, Err(ReplyError::TooLarge { limit: 5 })));
        let chunk = "x".repeat(1000);
        let streamed = format!(
            "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n{}0\r\n\r\n",
            format!("{:x}\r\n{chunk}\r\n", chunk.len()).repeat(3)
        );
        assert!(matches!(read(streamed.clone(), 2500).await, Err(ReplyError::TooLarge { limit: 2500 })));
        assert_eq!(read(streamed, 3000).await.expect("read").len(), 3000);
    }

    #[test]
    fn retry_after_reads_seconds_only() {
        let mut headers = reqwest::header::HeaderMap::new();
        assert_eq!(retry_after(&headers), None);
        headers.insert(reqwest::header::RETRY_AFTER, " 7 ".parse().expect("a header"));
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(7)));
        headers
            .insert(reqwest::header::RETRY_AFTER, "Wed, 21 Oct 2026 07:28:00 GMT".parse().expect("a header"));
        assert_eq!(retry_after(&headers), None);
    }
}
