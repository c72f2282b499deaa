//! Connections on a real listener: the header, body and idle timeouts, and the cap under a flood
//! of idle and slow connections from a client without the token.

use std::net::SocketAddr;
use std::time::Duration;

use askuser_server::ConnectionLimits;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

use crate::support::{self, TOKEN};

/// Serves a fresh harness on loopback under `limits`; returns its address and the harness.
async fn serve(limits: ConnectionLimits) -> (SocketAddr, support::Harness) {
    let harness = support::harness_with(|b| b.connection_limits(limits));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = harness.server.clone();
    tokio::spawn(async move { server.serve(listener, std::future::pending()).await });
    (addr, harness)
}

/// Sends `request` on a fresh connection and reads the response to the end (the request says
/// `Connection: close`); returns the status and the body.
async fn exchange(addr: SocketAddr, request: String) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut bytes = Vec::new();
    tokio::time::timeout(Duration::from_mins(1), stream.read_to_end(&mut bytes))
        .await
        .expect("no response within a minute")
        .unwrap();
    let text = String::from_utf8(bytes).unwrap();
    let status =
        text.get(9..12).and_then(|s| s.parse().ok()).unwrap_or_else(|| panic!("no status: {text:?}"));
    let body = text.split_once("\r\n\r\n").map_or("", |(_, body)| body).to_owned();
    (status, body)
}

fn get(path: &str, token: Option<&str>) -> String {
    let auth = token.map_or_else(String::new, |t| format!("Authorization: Bearer {t}\r\n"));
    format!("GET {path} HTTP/1.1\r\nHost: t\r\n{auth}Connection: close\r\n\r\n")
}

fn post_json(path: &str, body: &str) -> String {
    format!(
        "POST {path} HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// Whether the server closed `stream` within `patience` (end of stream or a reset; any bytes it
/// sent first, such as an error response, are read past).
async fn closed_within(stream: &mut TcpStream, patience: Duration) -> bool {
    let mut buffer = [0; 4096];
    tokio::time::timeout(patience, async {
        loop {
            match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    })
    .await
    .is_ok()
}

/// The three ways a client without the token holds a connection: connected and silent, a head
/// sent halfway, a body announced and sent a little.
async fn flood(addr: SocketAddr, each: usize) -> Vec<TcpStream> {
    let mut streams = Vec::new();
    for _ in 0..each {
        streams.push(TcpStream::connect(addr).await.unwrap());
        let mut half = TcpStream::connect(addr).await.unwrap();
        half.write_all(b"GET /healthz HTTP/1.1\r\nHost: t\r\nX-Slow: ").await.unwrap();
        streams.push(half);
        let mut slow = TcpStream::connect(addr).await.unwrap();
        slow.write_all(
            b"POST /login HTTP/1.1\r\nHost: t\r\nContent-Type: application/x-www-form-urlencoded\r\n\
              Content-Length: 200000\r\n\r\ntoken=abc",
        )
        .await
        .unwrap();
        streams.push(slow);
    }
    streams
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_idle_and_slow_connections_leaves_room_for_health_checks_answers_and_long_polls() {
    const CAP: usize = 8;
    // Timeouts far beyond the test: only the cap can make room.
    let limits = ConnectionLimits::default()
        .with_header_timeout(Duration::from_mins(10))
        .with_body_timeout(Duration::from_mins(10))
        .with_max_connections(CAP);
    let (addr, harness) = serve(limits).await;
    let id = support::ask(&harness.app, serde_json::json!({})).await;

    // A long-poll, waiting before the flood: a legitimate long connection, never closed for room.
    let wait =
        tokio::spawn(exchange(addr, get(&format!("/v1/questions/{id}/wait?timeout_secs=50"), Some(TOKEN))));
    // Wait until the long-poll is being served (its connection counts as serving).
    tokio::time::sleep(Duration::from_secs(1)).await;

    let mut streams = flood(addr, 10).await;
    assert_eq!(streams.len(), 30);

    // The flood is four times the cap, and a health check still gets through, then an answer
    // on the same connection, and the long-poll hears it.
    let mut client = TcpStream::connect(addr).await.unwrap();
    client.write_all(b"GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n").await.unwrap();
    let (status, body) = read_response(&mut client).await;
    assert_eq!(status, 200, "{body}");
    let answer = support::answer_body().to_string();
    client.write_all(post_json(&format!("/v1/questions/{id}/answer"), &answer).as_bytes()).await.unwrap();
    let (status, body) = read_response(&mut client).await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = wait.await.unwrap();
    assert_eq!(status, 200, "{body}");
    assert_eq!(serde_json::from_str::<serde_json::Value>(&body).unwrap()["state"], "answered", "{body}");

    // Every flooding connection but the newest CAP - 2 was closed to make room (one slot holds
    // the long-poll, one the client).
    let closed = futures_util::future::join_all(
        streams.iter_mut().map(|stream| closed_within(stream, Duration::from_secs(3))),
    )
    .await;
    let still_open = closed.iter().filter(|closed| !**closed).count();
    assert_eq!(still_open, CAP - 2, "{closed:?}");
    assert!(closed[..30 - (CAP - 2)].iter().all(|closed| *closed), "the oldest go first: {closed:?}");
}

/// Reads one response with a `Content-Length` from a kept-alive connection.
async fn read_response(stream: &mut TcpStream) -> (u16, String) {
    let mut bytes = Vec::new();
    let mut byte = [0; 1];
    while !bytes.ends_with(b"\r\n\r\n") {
        stream.read_exact(&mut byte).await.unwrap();
        bytes.push(byte[0]);
    }
    let head = String::from_utf8(bytes).unwrap();
    let length: usize = head
        .lines()
        .find_map(|line| {
            line.to_ascii_lowercase().strip_prefix("content-length:").map(|n| n.trim().parse().unwrap())
        })
        .unwrap_or_else(|| panic!("no content-length: {head}"));
    let mut body = vec![0; length];
    stream.read_exact(&mut body).await.unwrap();
    (head[9..12].parse().unwrap(), String::from_utf8(body).unwrap())
}

#[tokio::test]
async fn silent_half_sent_idle_and_slow_body_connections_are_closed_by_the_timeouts() {
    let limits = ConnectionLimits::default()
        .with_header_timeout(Duration::from_millis(300))
        .with_body_timeout(Duration::from_millis(300));
    let (addr, _harness) = serve(limits).await;
    let patience = Duration::from_secs(20);

    let mut streams = flood(addr, 1).await;
    // A kept-alive connection after one request, left idle.
    let mut idle = TcpStream::connect(addr).await.unwrap();
    idle.write_all(b"GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n").await.unwrap();
    let mut first = [0; 12];
    idle.read_exact(&mut first).await.unwrap();
    assert_eq!(&first, b"HTTP/1.1 200");
    streams.push(idle);

    for (what, stream) in
        ["silent", "half-sent head", "slow body", "idle keep-alive"].iter().zip(&mut streams)
    {
        assert!(closed_within(stream, patience).await, "the {what} connection is still open");
    }
}

/// `/login` takes ten attempts from one client, then one every six seconds: the eleventh is
/// refused with `429` and `Retry-After` whether its token is right or not.
#[tokio::test]
async fn login_attempts_are_limited_per_client() {
    let (addr, _harness) = serve(ConnectionLimits::default()).await;
    let login = |token: &str| {
        let body = format!("token={token}");
        format!(
            "POST /login HTTP/1.1\r\nHost: t\r\nContent-Type: application/x-www-form-urlencoded\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
    };
    let mut statuses = Vec::new();
    for _ in 0..10 {
        statuses.push(exchange(addr, login("not-the-token-0123456789")).await.0);
    }
    assert_eq!(statuses, vec![401; 10]);
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(login(TOKEN).as_bytes()).await.unwrap();
    let mut reply = Vec::new();
    stream.read_to_end(&mut reply).await.unwrap();
    let reply = String::from_utf8(reply).unwrap();
    assert!(reply.starts_with("HTTP/1.1 429"), "{reply}");
    assert!(reply.to_ascii_lowercase().contains("\r\nretry-after: 6\r\n"), "{reply}");
    assert!(!reply.to_ascii_lowercase().contains("set-cookie"), "{reply}");
}
