//! Late answers and the audit log end to end: `askuser serve` (this binary, a SQLite store), a
//! question that times out and is answered late through the JSON API, then `askuser audit export`
//! and `askuser audit verify` on the log as exported and on copies with one byte changed, one line
//! removed and two lines swapped.

use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::hook::{BIN, Served, TempDir};

fn run(args: &[&str]) -> Output {
    Command::new(BIN).args(args).env_remove("ASKUSER_STORE").output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `askuser audit verify` on `lines` joined: its exit code and what it said.
fn verify(dir: &TempDir, name: &str, lines: &[&str]) -> (Option<i32>, String) {
    let path = dir.0.join(name);
    std::fs::write(&path, format!("{}\n", lines.join("\n"))).unwrap();
    let output = run(&["audit", "verify", path.to_str().unwrap()]);
    (output.status.code(), format!("{}{}", text(&output.stdout), text(&output.stderr)))
}

#[test]
fn a_late_answer_is_kept_and_the_audit_log_names_what_was_changed_removed_or_reordered() {
    let served = Served::start_with("audit", &["--late-days", "1"]);
    let arguments = json!({"questions": [{"header": "Database", "question": "Which database should the service use?",
        "options": [{"label": "SQLite"}, {"label": "PostgreSQL"}]}]});
    let (status, asked) = served.http(
        "POST",
        "/v1/questions",
        Some(&json!({"arguments": arguments, "timeout_secs": 1, "id": "q-late"})),
    );
    assert_eq!(status, 201, "{asked}");
    // An approval times out too: it is never answered late.
    let approval = json!({"questions": [{"header": "Allow Bash?", "question": "Run rm -rf build?",
        "options": [{"label": "Allow once"}, {"label": "Deny"}]}]});
    let (status, asked) = served.http(
        "POST",
        "/v1/questions",
        Some(&json!({"arguments": approval, "timeout_secs": 1, "id": "q-approval", "tool_name": "askuser_approval"})),
    );
    assert_eq!(status, 201, "{asked}");
    let deadline = Instant::now() + Duration::from_secs(20);
    for id in ["q-late", "q-approval"] {
        loop {
            let (_, record) = served.http("GET", &format!("/v1/questions/{id}"), None);
            if record["state"] == "timed_out" {
                break;
            }
            assert!(Instant::now() < deadline, "{id} never timed out: {record}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    // After the deadline: kept as late, read back as late, the wait says so.
    let answer = json!({"answers": [{"header": "Database", "selected": ["PostgreSQL"]}]});
    let (status, answered) = served.answer("q-late", &answer);
    assert_eq!(status, 200, "{answered}");
    assert_eq!(answered["record"]["state"], "late");
    let (_, record) = served.http("GET", "/v1/questions/q-late", None);
    assert_eq!((&record["state"], &record["answered_by"]), (&json!("late"), &json!("user")), "{record}");
    assert_eq!(record["response"]["answers"][0]["selected"], json!(["PostgreSQL"]));
    assert!(record["answered_at"].as_str().unwrap() > record["expires_at"].as_str().unwrap(), "{record}");
    let (_, waited) = served.http("GET", "/v1/questions/q-late/wait?timeout_secs=1", None);
    assert_eq!((&waited["state"], &waited["done"]), (&json!("late"), &json!(true)), "{waited}");
    assert!(waited["result"].as_str().unwrap().contains("PostgreSQL"), "{waited}");
    // Once; and never an approval.
    let (status, again) =
        served.answer("q-late", &json!({"answers": [{"header": "Database", "selected": ["SQLite"]}]}));
    assert_eq!((status, &again["error"]), (409, &json!("already_answered")), "{again}");
    let (status, refused) = served
        .answer("q-approval", &json!({"answers": [{"header": "Allow Bash?", "selected": ["Allow once"]}]}));
    assert_eq!((status, &refused["error"]), (410, &json!("closed")), "{refused}");

    // The audit log: exported whole, it verifies; every event is there, in order.
    let exported = run(&["audit", "export", "--store", &served.store_url()]);
    assert!(exported.status.success(), "{}", text(&exported.stderr));
    let log = text(&exported.stdout);
    let lines: Vec<&str> = log.lines().collect();
    let events: Vec<Value> = lines.iter().map(|l| serde_json::from_str(l).unwrap()).collect();
    let of = |id: &str| -> Vec<&str> {
        events.iter().filter(|e| e["question"] == id).map(|e| e["event"].as_str().unwrap()).collect()
    };
    assert_eq!(of("q-late"), ["asked", "expired", "late"], "{log}");
    assert_eq!(of("q-approval"), ["asked", "expired"], "{log}");
    let late = events.iter().find(|e| e["event"] == "late").unwrap();
    assert_eq!((&late["surface"], &late["answered_by"]), (&json!("api"), &json!("user")), "{late}");
    let dir = TempDir::new("audit-files");
    let (code, said) = verify(&dir, "whole.jsonl", &lines);
    assert_eq!(code, Some(0), "{said}");
    assert!(said.contains(&format!("verified {} events", lines.len())), "{said}");

    // One byte changed, one line removed, two lines swapped: each named.
    let changed_line = lines[2].replacen("\"late\"", "\"lath\"", 1).replacen("expired", "answered", 1);
    let mut changed = lines.clone();
    changed[2] = &changed_line;
    let (code, said) = verify(&dir, "changed.jsonl", &changed);
    assert_eq!(code, Some(1), "{said}");
    assert!(said.contains("line 3: was changed"), "{said}");
    let mut removed = lines.clone();
    removed.remove(1);
    let (code, said) = verify(&dir, "removed.jsonl", &removed);
    assert_eq!(code, Some(1), "{said}");
    assert!(said.contains("line 2: follows a gap") && said.contains("seq 2 was removed"), "{said}");
    let mut swapped = lines.clone();
    swapped.swap(2, 3);
    let (code, said) = verify(&dir, "swapped.jsonl", &swapped);
    assert_eq!(code, Some(1), "{said}");
    assert!(said.contains("line 3: is out of order") && said.contains("reordered"), "{said}");

    // --since: from a time on; such a log starts later, and verifies with --partial.
    let since = events[2]["at"].as_str().unwrap();
    let tail = run(&["audit", "export", "--store", &served.store_url(), "--since", since]);
    let tail_text = text(&tail.stdout);
    assert!(tail_text.lines().count() < lines.len() && tail_text.lines().count() >= 1, "{tail_text}");
    let path = dir.0.join("tail.jsonl");
    std::fs::write(&path, &tail_text).unwrap();
    let whole = run(&["audit", "verify", path.to_str().unwrap()]);
    assert_eq!(whole.status.code(), Some(1), "{}", text(&whole.stdout));
    let partial = run(&["audit", "verify", "--partial", path.to_str().unwrap()]);
    assert!(partial.status.success(), "{}", text(&partial.stderr));
    let bad = run(&["audit", "export", "--store", &served.store_url(), "--since", "yesterday"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(text(&bad.stderr).contains("--since takes a time in RFC 3339"), "{}", text(&bad.stderr));
}
