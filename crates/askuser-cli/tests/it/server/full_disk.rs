//! `serve` on a SQLite store whose disk fills up, then has room again: every write in between is
//! `503 store_unavailable` with `Retry-After`, `/healthz` says the store cannot write, and once
//! there is room the server writes again by itself, without a restart (issue 36.13, 36.15).
//!
//! The process's file-size limit (`ulimit -f`, soft only) stands in for a full disk, as in
//! askuser-store's `a_full_disk_loses_no_acknowledged_write`: writes past it fail (`EFBIG`, as
//! with `ENOSPC`), and `prlimit` lifts it from outside, as freeing space would; no root needed.

#![cfg(target_os = "linux")]

use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::BufReader;
use tokio::process::Command;

use crate::server::support::{ARGS, BIN, TempDir, line_after, write_private};

const TOKEN: &str = "full-disk-token-0123456789abcdef";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_then_room_again_serve_writes_again_without_a_restart() {
    let dir = TempDir::new("full-disk");
    let token_file = dir.0.join("token");
    write_private(&token_file, TOKEN);
    let store = format!("sqlite:{}", dir.0.join("pending.db").display());
    // SIGXFSZ ignored, so that a write past the limit fails instead of killing the process. The
    // new store's schema takes about 130 KiB; 400 KiB leave room for some questions.
    let mut server = Command::new("bash")
        .arg("-c")
        .arg(r#"trap '' XFSZ; ulimit -S -f 400; exec "$@""#)
        .arg("limited")
        .arg(BIN)
        .args(["serve", "--bind", "127.0.0.1:0", "--store", &store, "--token-file"])
        .arg(&token_file)
        .env_remove("ASKUSER_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(server.stderr.take().unwrap());
    let url = line_after(&mut stderr, "askuser serve: listening on ").await;
    // The log goes on; nobody reads it (a full pipe would hold the server).
    tokio::spawn(async move { tokio::io::copy(&mut stderr, &mut tokio::io::sink()).await });
    let http = reqwest::Client::new();
    let ask = || async {
        let body = serde_json::json!({ "arguments": ARGS });
        let reply =
            http.post(format!("{url}/v1/questions")).bearer_auth(TOKEN).json(&body).send().await.unwrap();
        let status = reply.status().as_u16();
        let retry_after = reply.headers().get("retry-after").map(|v| v.to_str().unwrap().to_owned());
        (status, retry_after, reply.json::<serde_json::Value>().await.unwrap())
    };

    let mut asked = Vec::new();
    let mut refused = Vec::new();
    for _ in 0..400 {
        let (status, retry_after, body) = ask().await;
        if status == 201 {
            asked.push(body["id"].as_str().unwrap().to_owned());
        } else {
            refused.push((status, retry_after, body["error"].as_str().unwrap_or_default().to_owned()));
            if refused.len() == 5 {
                break;
            }
        }
    }
    assert!(!asked.is_empty() && refused.len() == 5, "the disk filled up after {} asks", asked.len());
    // Every write on the full disk, not only the first: 503 store_unavailable with Retry-After.
    assert_eq!(refused, vec![(503, Some("2".to_owned()), "store_unavailable".to_owned()); 5]);
    let health = http.get(format!("{url}/healthz")).send().await.unwrap();
    assert_eq!(health.status(), 503);
    assert_eq!(health.json::<serde_json::Value>().await.unwrap()["status"], "cannot_write");

    // Room again: no restart, and within 5 s the answer, a new ask and /healthz succeed.
    let pid = server.id().unwrap().to_string();
    let lifted =
        std::process::Command::new("prlimit").args(["--pid", &pid, "--fsize=unlimited"]).status().unwrap();
    assert!(lifted.success());
    let freed = Instant::now();
    let answer = serde_json::json!({"answers":[
        {"header":"Plan","selected":["Large"]},{"header":"Extras","selected":["Backups"]}]});
    let answered = loop {
        let reply = http
            .post(format!("{url}/v1/questions/{}/answer", asked[0]))
            .bearer_auth(TOKEN)
            .json(&answer)
            .send()
            .await
            .unwrap();
        if reply.status() == 200 {
            break freed.elapsed();
        }
        assert!(
            freed.elapsed() < Duration::from_secs(5),
            "still refused 5 s after the disk had room: {} {}",
            reply.status(),
            reply.text().await.unwrap()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    eprintln!("answered {answered:?} after the disk had room");
    assert_eq!(ask().await.0, 201, "a new ask once the disk has room");
    let health = http.get(format!("{url}/healthz")).send().await.unwrap();
    assert_eq!(health.status(), 200);
    assert!(server.try_wait().unwrap().is_none(), "the same server, never restarted");
}
