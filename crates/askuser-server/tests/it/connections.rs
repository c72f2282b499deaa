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

/// A shutdown signal that panics (one that wrote "shutting down" with `eprintln!` on a closed
/// stderr, issue 35.1) stops the server all the same: before, it served on and could no longer be
/// stopped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shutdown_signal_that_panics_still_stops_the_server() {
    let harness = support::harness();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let serving = harness.server.serve(listener, async { panic!("failed printing to stderr: Broken pipe") });
    let stopped = tokio::time::timeout(Duration::from_secs(10), serving).await;
    assert!(matches!(stopped, Ok(Ok(()))), "{stopped:?}");
}

/// Issue 36.1: a page's event stream holds its connection until its question settles and is never
/// closed for room, so one page link (what every notice and chat message carries) could hold
/// every connection: streams are budgeted (8 per question, 32 per client, half the cap in all),
/// and `/healthz`, an ask and an answer still get through a flood of more streams than the cap.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn more_event_streams_than_the_cap_on_one_link_leave_room_for_health_checks_asks_and_answers() {
    const CAP: usize = 40;
    let limits = ConnectionLimits::default()
        .with_header_timeout(Duration::from_mins(10))
        .with_body_timeout(Duration::from_mins(10))
        .with_max_connections(CAP);
    let (addr, harness) = serve(limits).await;
    let id = support::ask(&harness.app, serde_json::json!({})).await;
    let link = harness.server.page_url(&id);
    let path = &link[link.find("/q/").unwrap()..];
    let events = format!("GET {path}/events HTTP/1.1\r\nHost: t\r\n\r\n");

    let (mut streams, mut refused) = (Vec::new(), Vec::new());
    let mut statuses = std::collections::BTreeMap::<String, usize>::new();
    for _ in 0..CAP + 20 {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream.write_all(events.as_bytes()).await.unwrap();
        let mut head = [0; 12];
        let read = tokio::time::timeout(Duration::from_secs(10), stream.read_exact(&mut head))
            .await
            .expect("an answer to an event stream within 10 s");
        // Closed without an answer: the cap was full of streams.
        let status =
            read.map_or_else(|_| "closed".to_owned(), |_| String::from_utf8_lossy(&head[9..12]).into_owned());
        if status == "200" {
            streams.push(stream);
        } else {
            refused.push(stream);
        }
        *statuses.entry(status).or_default() += 1;
    }
    assert_eq!(statuses.get("200"), Some(&8), "eight streams on one question: {statuses:?}");
    assert_eq!(statuses.get("429"), Some(&(CAP + 20 - 8)), "the rest refused: {statuses:?}");

    let mut client = TcpStream::connect(addr).await.unwrap();
    client.write_all(b"GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n").await.unwrap();
    let (status, body) = read_response(&mut client).await;
    assert_eq!(status, 200, "{body}");
    let ask = serde_json::json!({ "arguments": support::ARGS }).to_string();
    client.write_all(post_json("/v1/questions", &ask).as_bytes()).await.unwrap();
    let (status, body) = read_response(&mut client).await;
    assert_eq!(status, 201, "{body}");
    let answer = support::answer_body().to_string();
    client.write_all(post_json(&format!("/v1/questions/{id}/answer"), &answer).as_bytes()).await.unwrap();
    let (status, body) = read_response(&mut client).await;
    assert_eq!(status, 200, "{body}");

    // The streams that were served hear the answer and end, freeing their slots in the budget.
    let mut heard = 0;
    for stream in &mut streams {
        let mut bytes = Vec::new();
        let mut buffer = [0; 4096];
        let _ = tokio::time::timeout(Duration::from_secs(5), async {
            while let Ok(n @ 1..) = stream.read(&mut buffer).await {
                bytes.extend_from_slice(&buffer[..n]);
                if bytes.windows(15).any(|w| w == b"event: answered") {
                    return;
                }
            }
        })
        .await;
        heard += usize::from(bytes.windows(15).any(|w| w == b"event: answered"));
    }
    assert_eq!(heard, 8);
    drop(refused);
}

/// The state of question `id`, read from the store.
async fn state_of(harness: &support::Harness, id: &str) -> String {
    harness.store.get(id).await.unwrap().unwrap().state().as_str().to_owned()
}

/// Issue 36.14: a killed asker's question stayed answerable for one lease (30 s), and an answer
/// given then was acknowledged as sent and reached nobody. A wait whose connection closes
/// withdraws its question within a couple of seconds, unless another wait holds it; the lease
/// (30 s here) is left for silent deaths.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wait_whose_connection_closes_withdraws_its_question_unless_another_wait_holds_it() {
    let (addr, harness) = serve(ConnectionLimits::default()).await;
    let id = support::ask(&harness.app, serde_json::json!({"live": true})).await;
    let wait = get(&format!("/v1/questions/{id}/wait"), Some(TOKEN));
    let mut first = TcpStream::connect(addr).await.unwrap();
    first.write_all(wait.as_bytes()).await.unwrap();
    let mut second = TcpStream::connect(addr).await.unwrap();
    second.write_all(wait.as_bytes()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;

    drop(first);
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert_eq!(state_of(&harness, &id).await, "pending", "the second wait holds the question");

    drop(second);
    let dropped = std::time::Instant::now();
    while state_of(&harness, &id).await == "pending" {
        assert!(dropped.elapsed() < Duration::from_secs(5), "still pending 5 s after its last wait went");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(state_of(&harness, &id).await, "cancelled");
    eprintln!("withdrawn {:?} after its last wait went", dropped.elapsed());
}

/// Issue 36.14: an answer given on the page between the last wait going and the withdrawal is
/// kept, and the page says that nobody was waiting, never that it was sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_nobody_waits_for_is_never_called_sent() {
    let (addr, harness) = serve(ConnectionLimits::default()).await;
    let id = support::ask(&harness.app, serde_json::json!({"live": true})).await;
    let link = crate::pages::link_of(&harness, &id);
    let page = support::send(&harness.app, crate::pages::get(&link, None)).await;
    let csrf = crate::pages::csrf_of(&page);
    let mut wait = TcpStream::connect(addr).await.unwrap();
    wait.write_all(get(&format!("/v1/questions/{id}/wait"), Some(TOKEN)).as_bytes()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    drop(wait);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let fields = [("csrf", csrf.as_str()), ("q0", "1"), ("q1", "0"), ("action", "answer")];
    let done = support::send(&harness.app, crate::pages::post_form(&link, None, &fields)).await;
    assert_eq!(done.status, 200, "{}", done.text);
    assert!(!done.text.contains("sent to the assistant"), "{}", done.text);
    assert!(done.text.contains("The assistant stopped waiting for these answers just before you sent them"));
    assert_eq!(state_of(&harness, &id).await, "answered", "kept with the question");
}

/// Issue 36.8: failed bearer-token checks on `/v1` and `/mcp` (what is mounted behind the token)
/// were not throttled (300 wrong tokens in 0.38 s). They take from `/login`'s bucket: ten wrong
/// tokens, then `429 too_many_attempts` with `Retry-After` whatever the client presents, the
/// right token included; a client with the right token is never held back by its own requests.
#[tokio::test]
async fn wrong_api_tokens_are_limited_per_client_on_v1_and_mcp() {
    let mcp = axum::Router::new().route("/", axum::routing::get(|| async { "mcp" }));
    let harness = support::harness_with(|b| b.mount_with_token("/mcp", mcp));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = harness.server.clone();
    tokio::spawn(async move { server.serve(listener, std::future::pending()).await });

    for _ in 0..50 {
        assert_eq!(exchange(addr, get("/v1/questions", Some(TOKEN))).await.0, 200, "the right token");
    }
    let mut statuses = Vec::new();
    for n in 0..10 {
        let path = if n % 2 == 0 { "/v1/questions" } else { "/mcp/" };
        statuses.push(exchange(addr, get(path, Some("not-the-token-0123456789"))).await.0);
    }
    assert_eq!(statuses, vec![401; 10]);
    for path in ["/v1/questions", "/mcp/"] {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream.write_all(get(path, Some(TOKEN)).as_bytes()).await.unwrap();
        let mut reply = Vec::new();
        stream.read_to_end(&mut reply).await.unwrap();
        let reply = String::from_utf8(reply).unwrap();
        assert!(reply.starts_with("HTTP/1.1 429"), "{path}: {reply}");
        assert!(reply.to_ascii_lowercase().contains("\r\nretry-after: "), "{reply}");
        assert!(reply.contains(r#""error":"too_many_attempts""#), "{reply}");
    }
}
