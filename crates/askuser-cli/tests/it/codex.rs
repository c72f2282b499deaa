//! `askuser hook codex` against the real Codex CLI (npm `@openai/codex` 0.171.0, its native
//! binary, installed by `.ci/run` in `tests/codex`), driven in tmux, its model a scripted
//! Responses API double. Installed with `askuser hook install codex --server URL --token-file
//! PATH` (`CODEX_HOME` set), the hook trusted at Codex's own prompt, an escalated command denied
//! and allowed through `askuser serve`'s JSON API.
//!
//! Skipped, saying so, where Codex or tmux is missing; under `CI=true` that is a failure.

use std::io::Write as _;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::claude_code::{TmuxServer, read_request};
use super::hook::{BIN, Served, TempDir};

fn codex_binary() -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/codex/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex");
    let tmux = Command::new("tmux").arg("-V").output().is_ok_and(|o| o.status.success());
    if path.is_file() && tmux {
        return Some(path);
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "CI must install Codex (.ci/run: npm ci in crates/askuser-cli/tests/codex) and tmux"
    );
    eprintln!("SKIPPED codex: needs tmux and Codex 0.171.0 (cd crates/askuser-cli/tests/codex && npm ci)");
    None
}

/// A scripted `OpenAI` Responses API (`POST /v1/responses`, streamed as server-sent events),
/// written from the public reference: <https://platform.openai.com/docs/api-reference/responses>
/// and its streaming events (<https://platform.openai.com/docs/api-reference/responses-streaming>:
/// `response.created`, `response.output_item.added`, `response.function_call_arguments.delta`
/// and `.done`, `response.output_text.delta`, `response.output_item.done`,
/// `response.completed`). A request whose input holds no `function_call_output` gets a call of
/// the shell tool `exec_command` that asks to leave the sandbox (`sandbox_permissions:
/// "require_escalated"`); any other gets the text "Done.".
fn start_responses_api() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let _ = serve_one(stream);
            });
        }
    });
    url
}

fn serve_one(stream: TcpStream) -> std::io::Result<()> {
    let (path, body) = read_request(&stream)?;
    let mut out = stream;
    if !path.starts_with("/v1/responses") {
        let reply = r#"{"models":[]}"#;
        return write!(
            out,
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{reply}",
            reply.len()
        );
    }
    let request: Value = serde_json::from_slice(&body).unwrap_or_default();
    let answered = request["input"]
        .as_array()
        .is_some_and(|items| items.iter().any(|i| i["type"] == "function_call_output"));
    let offers_shell =
        request["tools"].as_array().is_some_and(|tools| tools.iter().any(|t| t["name"] == "exec_command"));
    let response = json!({"id": "resp_1", "object": "response", "status": "in_progress", "model": "gpt-5", "output": []});
    let mut events = vec![json!({"type": "response.created", "response": response})];
    let item = if offers_shell && !answered {
        let arguments = json!({"cmd": "rm -rf build", "sandbox_permissions": "require_escalated",
                               "justification": "Remove the build folder"})
        .to_string();
        let call = json!({"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "exec_command",
                          "arguments": arguments, "status": "completed"});
        let mut added = call.clone();
        added["arguments"] = "".into();
        added["status"] = "in_progress".into();
        events.push(json!({"type": "response.output_item.added", "output_index": 0, "item": added}));
        events.push(json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 0, "delta": arguments}));
        events.push(json!({"type": "response.function_call_arguments.done", "item_id": "fc_1", "output_index": 0, "arguments": arguments}));
        call
    } else {
        let message = json!({"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                             "content": [{"type": "output_text", "text": "Done.", "annotations": []}]});
        let mut added = message.clone();
        added["content"] = json!([]);
        added["status"] = "in_progress".into();
        events.push(json!({"type": "response.output_item.added", "output_index": 0, "item": added}));
        events.push(json!({"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": "Done."}));
        message
    };
    events.push(json!({"type": "response.output_item.done", "output_index": 0, "item": item}));
    let mut completed = response;
    completed["status"] = "completed".into();
    completed["output"] = json!([item]);
    completed["usage"] = json!({"input_tokens": 10, "output_tokens": 5, "total_tokens": 15,
        "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}});
    events.push(json!({"type": "response.completed", "response": completed}));
    write!(out, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n")?;
    for event in events {
        write!(out, "event: {}\ndata: {event}\n\n", event["type"].as_str().unwrap_or_default())?;
    }
    out.flush()
}

/// Codex in a tmux session of its own, killed when dropped.
struct Codex<'a> {
    tmux: &'a TmuxServer,
    session: String,
    /// `CODEX_HOME`, where Codex 0.171 installs the app-server daemon it leaves running.
    home: PathBuf,
}

impl<'a> Codex<'a> {
    fn start(tmux: &'a TmuxServer, codex: &Path, home: &Path, run: usize) -> Self {
        let session = format!("askuser-codex-{}-{run}", std::process::id());
        let command = format!(
            "env -i PATH=/usr/bin:/bin HOME='{}' CODEX_HOME='{}' TERM=xterm-256color DOUBLE_API_KEY=k '{}' 'Clean the build'; sleep 600",
            home.display(),
            home.join("codex-home").display(),
            codex.display()
        );
        let status = tmux
            .tmux()
            .args(["new-session", "-d", "-s", &session, "-x", "160", "-y", "50", "-c"])
            .arg(home.join("project"))
            .arg(command)
            .status()
            .unwrap();
        assert!(status.success());
        Self { tmux, session, home: home.join("codex-home") }
    }

    fn screen(&self) -> String {
        let output = self.tmux.tmux().args(["capture-pane", "-p", "-t", &self.session]).output().unwrap();
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// Chooses the option `number` on a list prompt showing `prompt`: its number moves the
    /// selection, Enter confirms. Each key is pressed again until the screen shows it taken: a
    /// prompt may drop keys while it starts (seen twice under load in CI: once the trust prompt
    /// stayed; once the number was lost and Enter opened "Review hooks" instead, and no hook ran).
    fn choose(&self, prompt: &str, number: u8, option: &str) {
        self.wait_for(prompt);
        let selected = format!("› {number}. {option}");
        self.press_until(&number.to_string(), || self.screen().contains(&selected));
        self.press_until("Enter", || !self.screen().contains(prompt));
    }

    /// Presses `key` until `taken` holds, waiting 5 s after each press; fails after a minute.
    fn press_until(&self, key: &str, taken: impl Fn() -> bool) {
        let deadline = Instant::now() + Duration::from_mins(1);
        loop {
            self.keys(&[key]);
            let wait = Instant::now() + Duration::from_secs(5);
            while Instant::now() < wait {
                if taken() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            assert!(Instant::now() < deadline, "{key:?} was never taken:\n{}", self.screen());
        }
    }

    /// The question that waits on `served`, once one does; on a timeout, what Codex shows.
    fn pending_on(&self, served: &Served) -> Value {
        let deadline = Instant::now() + Duration::from_mins(1);
        loop {
            let (_, list) = served.http("GET", "/v1/questions?state=pending", None);
            if let Some(record) = list["records"].as_array().and_then(|r| r.first()) {
                return record.clone();
            }
            if Instant::now() >= deadline {
                let (_, all) = served.http("GET", "/v1/questions", None);
                panic!("no question waits; every question: {all}\nCodex shows:\n{}", self.screen());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn wait_for(&self, text: &str) {
        self.wait_until(&format!("{text:?} shown"), || self.screen().contains(text));
    }

    fn wait_until(&self, what: &str, done: impl Fn() -> bool) {
        let deadline = Instant::now() + Duration::from_mins(1);
        while !done() {
            assert!(Instant::now() < deadline, "never {what}:\n{}", self.screen());
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn keys(&self, keys: &[&str]) {
        for key in keys {
            assert!(
                self.tmux.tmux().args(["send-keys", "-t", &self.session, key]).status().unwrap().success()
            );
            std::thread::sleep(Duration::from_millis(300));
        }
    }
}

impl Drop for Codex<'_> {
    fn drop(&mut self) {
        let _ = self.tmux.tmux().args(["kill-session", "-t", &self.session]).status();
        // Codex starts a managed app-server daemon from CODEX_HOME (measured: `codex app-server
        // --managed-daemon` and its pid-update loop) that outlives the session: end it with the test.
        for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            let Ok(exe) = std::fs::read_link(entry.path().join("exe")) else { continue };
            if exe.starts_with(&self.home) {
                let _ = std::process::Command::new("kill").arg("-KILL").arg(entry.file_name()).status();
            }
        }
    }
}

#[test]
fn codex_approvals_are_denied_and_allowed_through_the_answer_server() {
    let Some(codex) = codex_binary() else { return };
    let tmux = TmuxServer::start("codex");
    let api = start_responses_api();
    let served = Served::start("codex");
    let home = TempDir::new("codex-home");
    let project = home.0.join("project");
    std::fs::create_dir_all(project.join("build")).unwrap();
    std::fs::create_dir_all(home.0.join("codex-home")).unwrap();
    let config = format!(
        "model = \"gpt-5\"\nmodel_provider = \"double\"\napproval_policy = \"on-request\"\nsandbox_mode = \"read-only\"\n\n\
         [model_providers.double]\nname = \"double\"\nbase_url = \"{api}\"\nenv_key = \"DOUBLE_API_KEY\"\n\
         wire_api = \"responses\"\nsupports_websockets = false\nrequires_openai_auth = false\n\n\
         [projects.\"{}\"]\ntrust_level = \"trusted\"\n",
        project.display()
    );
    std::fs::write(home.0.join("codex-home/config.toml"), config).unwrap();
    let installed = Command::new(BIN)
        .args(["hook", "install", "codex", "--server", &served.url, "--token-file"])
        .arg(served.token_file())
        .args(["--command", BIN])
        .env("HOME", &home.0)
        .env("CODEX_HOME", home.0.join("codex-home"))
        .output()
        .unwrap();
    assert!(installed.status.success(), "{}", String::from_utf8_lossy(&installed.stderr));

    // Codex asks the person to trust the new hook; the person does.
    let session = Codex::start(&tmux, &codex, &home.0, 1);
    session.choose("Hooks need review", 2, "Trust all and continue");
    let trusted =
        || std::fs::read_to_string(home.0.join("codex-home/config.toml")).unwrap().contains("trusted_hash");
    session.wait_until("the hook trusted in config.toml", trusted);
    let record = session.pending_on(&served);
    assert_eq!(record["tool_name"], "askuser_approval");
    assert_eq!(record["asked_by"], "Codex in ~/project");
    let id = record["id"].as_str().unwrap().to_owned();
    served.answer(&id, &json!({"answers": [{"header": "Allow Bash?", "selected": ["Deny"]}]}));
    session.wait_for("Blocked by hook");
    session.wait_for("Done.");
    assert!(project.join("build").exists(), "denied, yet run:\n{}", session.screen());
    drop(session);

    // Trusted once: the next start asks nothing, and an allowed command runs.
    let session = Codex::start(&tmux, &codex, &home.0, 2);
    let id = session.pending_on(&served)["id"].as_str().unwrap().to_owned();
    served.answer(&id, &json!({"answers": [{"header": "Allow Bash?", "selected": ["Allow once"]}]}));
    session.wait_for("Done.");
    assert!(!project.join("build").exists(), "allowed, yet not run:\n{}", session.screen());
    drop(session);

    // Esc while the hook waits: Codex kills the hook's process group; the hook's watchdog
    // withdraws the approval at once (not after the server's 30 s lease).
    let session = Codex::start(&tmux, &codex, &home.0, 3);
    let id = session.pending_on(&served)["id"].as_str().unwrap().to_owned();
    session.keys(&["Escape"]);
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let (_, record) = served.http("GET", &format!("/v1/questions/{id}"), None);
        if record["state"] == "cancelled" {
            break;
        }
        assert!(Instant::now() < deadline, "not withdrawn after Esc: {record}\n{}", session.screen());
        std::thread::sleep(Duration::from_millis(50));
    }
}
