//! The PostgreSQL backend passes the shared suite, in a schema of its own.

use std::sync::Arc;
use std::time::Duration;

use askuser_store::{NewQuestion, PendingStore, PostgresStore, State};

use crate::support::{PATIENCE, answer_large, clock, drop_schema, postgres_url, request, unique_schema};

#[tokio::test]
async fn conformance() {
    let Some(url) = postgres_url("postgres::conformance") else { return };
    let schema = unique_schema();
    let clock = clock();
    let store = PostgresStore::builder(&url)
        .schema(&schema)
        .clock(Arc::new(clock.clone()))
        .open()
        .await
        .expect("open");
    crate::suite::conformance(store.clone(), clock).await;
    drop_schema(&store, &schema).await;
}

/// The listening connection dies (a server restart, a failover, an idle-connection killer): the
/// store listens again, and a watcher in this process still wakes for an answer committed by
/// another store (another process), whether the answer came before or after the new `LISTEN`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_listener_is_replaced() {
    let Some(url) = postgres_url("postgres::a_lost_listener_is_replaced") else { return };
    let schema = unique_schema();
    let watching =
        PostgresStore::builder(&url).schema(&schema).application_name(&schema).open().await.expect("open");
    let answering = PostgresStore::builder(&url).schema(&schema).open().await.expect("open");
    for round in 0..3 {
        let id = format!("relisten-{round}");
        watching.put(NewQuestion::new(request(&id), Duration::from_mins(1))).await.expect("put");
        // The listener of the round before may still be reconnecting (its replacement waits out a
        // backoff): look for it until it is there, then end it.
        let mut terminated: Vec<bool> = Vec::new();
        for _ in 0..100 {
            terminated = sqlx::query_scalar(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                 WHERE application_name = $1 AND (query ILIKE 'listen%' OR query LIKE '%listener heartbeat%')",
            )
            .bind(&schema)
            .fetch_all(answering.pool())
            .await
            .expect("terminate");
            if !terminated.is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert_eq!(terminated, [true], "round {round}: one listening connection");
        let watcher = tokio::spawn({
            let (watching, id) = (watching.clone(), id.clone());
            async move { watching.watch(&id).await }
        });
        // Round 0 answers at once (likely before the new LISTEN), the others after a pause.
        tokio::time::sleep(Duration::from_millis(round * 100)).await;
        answering.commit_answer(&id, &answer_large()).await.expect("answer");
        let woken = tokio::time::timeout(PATIENCE, watcher).await.expect("woken").expect("no panic");
        assert_eq!(woken.expect("watch").state(), State::Answered, "round {round}");
    }
    answering.close().await;
    drop_schema(&watching, &schema).await;
}

/// A TCP proxy to PostgreSQL that can make the connections that had sent `LISTEN` go silent (no
/// byte forwarded either way, the sockets left open): a listening connection that died without a
/// word, as behind a NAT or a firewall that forgot it. Connections that start listening after
/// that pass as usual.
struct SilencingProxy {
    port: u16,
    silent: Arc<std::sync::atomic::AtomicBool>,
    listeners_seen: Arc<std::sync::atomic::AtomicUsize>,
}

impl SilencingProxy {
    async fn start(upstream: std::net::SocketAddr) -> Self {
        use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
        let socket = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = socket.local_addr().expect("addr").port();
        let silent = Arc::new(AtomicBool::new(false));
        let listeners_seen = Arc::new(AtomicUsize::new(0));
        let (s, seen) = (Arc::clone(&silent), Arc::clone(&listeners_seen));
        tokio::spawn(async move {
            while let Ok((client, _)) = socket.accept().await {
                let (silent, seen) = (Arc::clone(&s), Arc::clone(&seen));
                tokio::spawn(async move {
                    let Ok(server) = tokio::net::TcpStream::connect(upstream).await else { return };
                    let (mut client_read, mut client_write) = client.into_split();
                    let (mut server_read, mut server_write) = server.into_split();
                    let listening = Arc::new(AtomicBool::new(false));
                    let up = {
                        let (silent, listening) = (Arc::clone(&silent), Arc::clone(&listening));
                        async move {
                            use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
                            let mut buffer = vec![0u8; 16 * 1024];
                            loop {
                                let Ok(n) = client_read.read(&mut buffer).await else { return };
                                if n == 0 {
                                    return;
                                }
                                // sqlx sends `LISTEN "channel"` (a migration's comment saying LISTEN is no listener).
                                if buffer[..n].windows(8).any(|w| w == b"LISTEN \"") {
                                    seen.fetch_add(1, Ordering::SeqCst);
                                    // Only a connection listening before the silence is silenced.
                                    if !silent.load(Ordering::SeqCst) {
                                        listening.store(true, Ordering::SeqCst);
                                    }
                                }
                                if listening.load(Ordering::SeqCst) && silent.load(Ordering::SeqCst) {
                                    continue;
                                }
                                if server_write.write_all(&buffer[..n]).await.is_err() {
                                    return;
                                }
                            }
                        }
                    };
                    let down = async move {
                        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
                        let mut buffer = vec![0u8; 16 * 1024];
                        loop {
                            let Ok(n) = server_read.read(&mut buffer).await else { return };
                            if n == 0 {
                                return;
                            }
                            if listening.load(Ordering::SeqCst) && silent.load(Ordering::SeqCst) {
                                continue;
                            }
                            if client_write.write_all(&buffer[..n]).await.is_err() {
                                return;
                            }
                        }
                    };
                    tokio::join!(up, down);
                });
            }
        });
        Self { port, silent, listeners_seen }
    }
}

/// The listening connection goes silent (no error, no close): the store notices within its
/// heartbeat, listens again on a new connection, and a watcher still wakes for an answer
/// committed by another process within about a second (its once-a-second read), not never.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_listener_is_noticed_and_replaced() {
    use std::sync::atomic::Ordering;
    let Some(url) = postgres_url("postgres::a_silent_listener_is_noticed_and_replaced") else { return };
    let options: sqlx::postgres::PgConnectOptions = url.parse().expect("url");
    let upstream = tokio::net::lookup_host((options.get_host(), options.get_port()))
        .await
        .expect("resolve")
        .next()
        .expect("an address");
    let proxy = SilencingProxy::start(upstream).await;
    let user = options.get_username();
    let database = options.get_database().unwrap_or("test");
    // In the clear: the proxy reads the protocol to find the listening connection.
    let proxied = format!("postgres://{user}@127.0.0.1:{}/{database}?sslmode=disable", proxy.port);
    let schema = unique_schema();
    let watching =
        PostgresStore::builder(&proxied).schema(&schema).open().await.expect("open through the proxy");
    let answering = PostgresStore::builder(&url).schema(&schema).open().await.expect("open");
    assert_eq!(proxy.listeners_seen.load(Ordering::SeqCst), 1);
    proxy.silent.store(true, Ordering::SeqCst);
    for round in 0..2 {
        let id = format!("silent-{round}");
        answering.put(NewQuestion::new(request(&id), Duration::from_mins(1))).await.expect("put");
        let watcher = tokio::spawn({
            let (watching, id) = (watching.clone(), id.clone());
            async move { watching.watch(&id).await }
        });
        tokio::time::sleep(Duration::from_millis(200)).await;
        let answered = tokio::time::Instant::now();
        answering.commit_answer(&id, &answer_large()).await.expect("answer");
        let woken = tokio::time::timeout(PATIENCE, watcher).await.expect("woken").expect("no panic");
        let waited = answered.elapsed();
        assert_eq!(woken.expect("watch").state(), State::Answered, "round {round}");
        // Bounded by the store's once-a-second read (plus scheduling on a busy machine), where a
        // store trusting its dead connection never woke at all.
        assert!(waited < Duration::from_secs(5), "round {round}: woken {waited:?} after the answer");
    }
    // The silent listening connection was replaced by a new one.
    assert!(proxy.listeners_seen.load(Ordering::SeqCst) >= 2, "the listener was replaced");
    watching.close().await;
    drop_schema(&answering, &schema).await;
}

#[tokio::test]
async fn remembered_records_go_stale_safely() {
    let Some(url) = postgres_url("postgres::remembered_records_go_stale_safely") else { return };
    let schema = unique_schema();
    let clock = clock();
    let open = || PostgresStore::builder(&url).schema(&schema).clock(Arc::new(clock.clone())).open();
    let here = open().await.expect("open");
    let there = open().await.expect("open");
    crate::suite::remembered_records_go_stale_safely(&here, &there, &clock).await;
    drop_schema(&here, &schema).await;
}
