//! `askuser hook` against the real Claude Code CLI (npm `@anthropic-ai/claude-code` 2.1.332, its
//! native binary, installed by `.ci/run` in `tests/claude-code`), driven in tmux, its model a
//! scripted Messages API double. Installed with `askuser hook install claude-code --server URL
//! --token-file PATH` under a fresh `HOME`, answered through `askuser serve`'s JSON API, and
//! compared with what Claude Code's own menu gives.
//!
//! Skipped, saying so, where Claude Code or tmux is missing; under `CI=true` that is a failure.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::hook::{BIN, Served, TempDir, two_questions};

/// The API key Claude Code is given: the double takes any.
const KEY: &str = "sk-ant-api03-askuser-hook-test-key-0123456789abcdefghij";

fn claude_binary() -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/claude-code/node_modules/@anthropic-ai/claude-code-linux-x64/claude");
    let tmux = Command::new("tmux").arg("-V").output().is_ok_and(|o| o.status.success());
    if path.is_file() && tmux {
        return Some(path);
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "CI must install Claude Code (.ci/run: npm ci in crates/askuser-cli/tests/claude-code) and tmux"
    );
    eprintln!(
        "SKIPPED claude_code: needs tmux and Claude Code 2.1.332 (cd crates/askuser-cli/tests/claude-code && npm ci)"
    );
    None
}

/// What the model says next, and what it was told.
#[derive(Default)]
struct Script {
    /// The tool call the model makes when a turn starts: name and input.
    tool: Option<(String, Value)>,
    /// The tool results Claude Code sent back, in order: what the model receives.
    results: Vec<Value>,
    /// When the last tool call was sent.
    sent_at: Option<Instant>,
}

/// A scripted Anthropic Messages API (`POST /v1/messages`, streamed as server-sent events, and
/// `POST /v1/messages/count_tokens`), written from the public reference:
/// <https://docs.anthropic.com/en/api/messages> and
/// <https://docs.anthropic.com/en/docs/build-with-claude/streaming> (event order `message_start`,
/// `content_block_start`, `content_block_delta` — `text_delta` or `input_json_delta` —,
/// `content_block_stop`, `message_delta` with the `stop_reason`, `message_stop`).
/// A request whose last message holds no tool result gets the scripted tool call (when the tool
/// is on offer); any other gets the text "Done.".
struct MessagesApi {
    url: String,
    script: Arc<(Mutex<Script>, Condvar)>,
}

impl MessagesApi {
    fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let script: Arc<(Mutex<Script>, Condvar)> = Arc::default();
        let shared = Arc::clone(&script);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let script = Arc::clone(&shared);
                std::thread::spawn(move || {
                    let _ = serve_one(stream, &script);
                });
            }
        });
        Self { url, script }
    }

    fn set_tool(&self, name: &str, input: Value) {
        let mut script = self.script.0.lock().unwrap();
        script.tool = Some((name.to_owned(), input));
        script.results.clear();
        script.sent_at = None;
    }

    /// Waits for the next tool result the model receives.
    fn result(&self) -> Value {
        let (lock, changed) = &*self.script;
        let script = lock.lock().unwrap();
        let (mut script, timeout) =
            changed.wait_timeout_while(script, Duration::from_mins(1), |s| s.results.is_empty()).unwrap();
        assert!(!timeout.timed_out(), "no tool result reached the model");
        script.results.remove(0)
    }

    fn sent_at(&self) -> Instant {
        let deadline = Instant::now() + Duration::from_mins(1);
        loop {
            if let Some(at) = self.script.0.lock().unwrap().sent_at {
                return at;
            }
            assert!(Instant::now() < deadline, "the model never called its tool");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Reads one HTTP/1.1 request (a `Content-Length` body): its path and body.
pub(super) fn read_request(stream: &TcpStream) -> std::io::Result<(String, Vec<u8>)> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let path = line.split(' ').nth(1).unwrap_or_default().to_owned();
    let mut length = 0;
    loop {
        line.clear();
        reader.read_line(&mut line)?;
        if line.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    Ok((path, body))
}

fn serve_one(stream: TcpStream, script: &(Mutex<Script>, Condvar)) -> std::io::Result<()> {
    let (path, body) = read_request(&stream)?;
    let mut out = stream;
    if path.starts_with("/v1/messages/count_tokens") {
        let reply = r#"{"input_tokens":10}"#;
        return write!(
            out,
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{reply}",
            reply.len()
        );
    }
    if !path.starts_with("/v1/messages") {
        return write!(out, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    }
    let request: Value = serde_json::from_slice(&body).unwrap_or_default();
    let tools: Vec<&str> = request["tools"]
        .as_array()
        .map(|t| t.iter().filter_map(|t| t["name"].as_str()).collect())
        .unwrap_or_default();
    let last = request["messages"].as_array().and_then(|m| m.last()).cloned().unwrap_or_default();
    let result =
        last["content"].as_array().and_then(|c| c.iter().find(|b| b["type"] == "tool_result")).cloned();
    let (lock, changed) = script;
    let mut state = lock.lock().unwrap();
    let mut events = vec![json!({"type": "message_start", "message": {"id": "msg_01", "type": "message",
        "role": "assistant", "model": "claude-sonnet-4-5", "content": [], "stop_reason": null,
        "stop_sequence": null, "usage": {"input_tokens": 10, "output_tokens": 1}}})];
    let stop = match (&result, &state.tool) {
        (None, Some((name, input))) if tools.contains(&name.as_str()) => {
            events.push(json!({"type": "content_block_start", "index": 0,
                "content_block": {"type": "tool_use", "id": "toolu_01", "name": name, "input": {}}}));
            events.push(json!({"type": "content_block_delta", "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": input.to_string()}}));
            state.sent_at = Some(Instant::now());
            "tool_use"
        }
        _ => {
            if let Some(result) = result
                && tools.contains(&"AskUserQuestion")
            {
                state.results.push(result);
                changed.notify_all();
            }
            events.push(json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}));
            events.push(json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Done."}}));
            "end_turn"
        }
    };
    drop(state);
    events.push(json!({"type": "content_block_stop", "index": 0}));
    events.push(json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
        "usage": {"output_tokens": 5}}));
    events.push(json!({"type": "message_stop"}));
    write!(
        out,
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n"
    )?;
    for event in events {
        write!(out, "event: {}\ndata: {event}\n\n", event["type"].as_str().unwrap_or_default())?;
    }
    out.flush()
}

/// A webhook that answers `200` and tells when each notice arrived.
fn webhook() -> (String, std::sync::mpsc::Receiver<Instant>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/notices", listener.local_addr().unwrap());
    let (tell, told) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            if read_request(&stream).is_ok() {
                let _ = tell.send(Instant::now());
                let mut stream = stream;
                let _ =
                    stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
            }
        }
    });
    (url, told)
}

/// A home directory Claude Code has been onboarded in, with a project folder it trusts.
struct Home {
    dir: TempDir,
}

impl Home {
    fn new(name: &str) -> Self {
        let dir = TempDir::new(&format!("claude-{name}"));
        std::fs::create_dir_all(dir.0.join("project")).unwrap();
        let project = dir.0.join("project").to_string_lossy().into_owned();
        let config = json!({"hasCompletedOnboarding": true,
            "customApiKeyResponses": {"approved": [&KEY[KEY.len() - 20..]], "rejected": []},
            "projects": {project: {"hasTrustDialogAccepted": true}}});
        std::fs::write(dir.0.join(".claude.json"), config.to_string()).unwrap();
        Self { dir }
    }

    fn project(&self) -> PathBuf {
        self.dir.0.join("project")
    }

    fn install_hook(&self, served: &Served) {
        let output = Command::new(BIN)
            .args(["hook", "install", "claude-code", "--server", &served.url, "--token-file"])
            .arg(served.token_file())
            .args(["--command", BIN])
            .env("HOME", &self.dir.0)
            .current_dir(self.project())
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    }
}

/// A tmux server of one test's own (`-S`, a socket in the temporary directory), which a placeholder session keeps up between the
/// CLI's sessions (a server that exits with its last session while the next one starts fails
/// that start: "server exited unexpectedly"); killed when dropped.
pub(super) struct TmuxServer {
    socket: PathBuf,
    /// One real agent CLI at a time: the Claude Code and Codex tests each start a CLI, a model
    /// double, an answer server and hooks, and both at once on two cores, beside the other
    /// tests, lost a key press to Codex once.
    _alone: std::sync::MutexGuard<'static, ()>,
}

impl TmuxServer {
    pub(super) fn start(name: &str) -> Self {
        static ONE_CLI: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let alone = ONE_CLI.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let socket = std::env::temp_dir().join(format!("askuser-tmux-{name}-{}", std::process::id()));
        let server = Self { socket, _alone: alone };
        let status = server.tmux().args(["new-session", "-d", "-s", "keep", "sleep 3600"]).status().unwrap();
        assert!(status.success());
        server
    }

    /// `tmux` on this server.
    pub(super) fn tmux(&self) -> Command {
        let mut command = Command::new("tmux");
        command.arg("-S").arg(&self.socket);
        command
    }
}

impl Drop for TmuxServer {
    fn drop(&mut self) {
        let _ = self.tmux().arg("kill-server").status();
        let _ = std::fs::remove_file(&self.socket);
    }
}

/// Claude Code in a tmux session of its own, killed when dropped.
struct Claude<'a> {
    tmux: &'a TmuxServer,
    session: String,
}

impl<'a> Claude<'a> {
    fn start(tmux: &'a TmuxServer, claude: &Path, home: &Home, api: &MessagesApi, prompt: &str) -> Self {
        let session = format!(
            "askuser-hook-{}-{}",
            std::process::id(),
            home.dir.0.file_name().unwrap().to_string_lossy()
        );
        let command = format!(
            "env -i PATH=/usr/bin:/bin HOME='{}' TERM=xterm-256color ANTHROPIC_BASE_URL={} ANTHROPIC_API_KEY={KEY} \
             CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 '{}' --permission-mode default '{prompt}'; sleep 600",
            home.dir.0.display(),
            api.url,
            claude.display()
        );
        let status = tmux
            .tmux()
            .args(["new-session", "-d", "-s", &session, "-x", "160", "-y", "50", "-c"])
            .arg(home.project())
            .arg(command)
            .status()
            .unwrap();
        assert!(status.success());
        Self { tmux, session }
    }

    fn screen(&self) -> String {
        let output = self.tmux.tmux().args(["capture-pane", "-p", "-t", &self.session]).output().unwrap();
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// Waits until the screen shows `text`; the moment it did.
    fn wait_for(&self, text: &str) -> Instant {
        let deadline = Instant::now() + Duration::from_mins(1);
        loop {
            if self.screen().contains(text) {
                return Instant::now();
            }
            assert!(Instant::now() < deadline, "{text:?} never showed:\n{}", self.screen());
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn type_text(&self, text: &str) {
        let status = self.tmux.tmux().args(["send-keys", "-t", &self.session, "-l", text]).status().unwrap();
        assert!(status.success());
        std::thread::sleep(Duration::from_millis(300));
    }

    fn keys(&self, keys: &[&str]) {
        for key in keys {
            let status = self.tmux.tmux().args(["send-keys", "-t", &self.session, key]).status().unwrap();
            assert!(status.success());
            std::thread::sleep(Duration::from_millis(300));
        }
    }
}

impl Drop for Claude<'_> {
    fn drop(&mut self) {
        let _ = self.tmux.tmux().args(["kill-session", "-t", &self.session]).status();
    }
}

fn bash(command: &str) -> Value {
    json!({"command": command, "description": "Remove the build folder"})
}

/// Waits until the record `id` is in `state`.
fn wait_state(served: &Served, id: &str, state: &str, within: Duration) -> Value {
    let deadline = Instant::now() + within;
    loop {
        let (_, record) = served.http("GET", &format!("/v1/questions/{id}"), None);
        if record["state"] == state {
            return record;
        }
        assert!(Instant::now() < deadline, "{id} is not {state}: {record}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn claude_code_asks_and_is_answered_through_the_answer_server() {
    let Some(claude) = claude_binary() else { return };
    let tmux = TmuxServer::start("claude-code");
    let api = MessagesApi::start();

    // Claude Code's own menu, answered at the terminal: PostgreSQL; Tracing, then Backups.
    api.set_tool("AskUserQuestion", two_questions());
    let local = Home::new("local");
    let session = Claude::start(&tmux, &claude, &local, &api, "Ask me about the database");
    session.wait_for("Enter to select");
    session.keys(&[
        "Enter", "Down", "Down", "Enter", "Up", "Up", "Enter", "Down", "Down", "Down", "Down", "Enter",
    ]);
    session.wait_for("Submit answers");
    session.keys(&["Enter"]);
    let at_terminal = api.result();
    drop(session);

    // The same answers through askuser serve's JSON API, the hook installed as a person would;
    // the server's notices go to a webhook that notes when the first one came.
    let (notify_url, noticed) = webhook();
    let served = Served::start_with("claude-code", &["--notify-url", &notify_url]);
    let home = Home::new("hooked");
    home.install_hook(&served);
    api.set_tool("AskUserQuestion", two_questions());
    let session = Claude::start(&tmux, &claude, &home, &api, "Ask me about the database");
    let record = served.pending_any();
    let asked_at = api.sent_at();
    let asked_on_server = asked_at.elapsed();
    let notice = noticed.recv_timeout(Duration::from_secs(10)).expect("a notice");
    eprintln!("claude_code: the model asked, the notice went out {:?} later", notice - asked_at);
    let id = record["id"].as_str().unwrap().to_owned();
    assert_eq!(record["asked_by"], "Claude Code in ~/project");
    eprintln!("claude_code: the model asked, the question was on the server {asked_on_server:?} later");
    let (status, _) = served.answer(
        &id,
        &json!({"answers": [{"header": "Database", "selected": ["PostgreSQL"]},
                            {"header": "Extras", "selected": ["Tracing", "Backups"]}]}),
    );
    assert_eq!(status, 200);
    let answered = Instant::now();
    let through_askuser = api.result();
    eprintln!("claude_code: answered on the server, the model had the answer {:?} later", answered.elapsed());
    assert_eq!(through_askuser["content"], at_terminal["content"], "the model must read the same bytes");
    assert_eq!(
        through_askuser["content"],
        "Your questions have been answered: \"Which database should the service use?\"=\"PostgreSQL\", \
         \"Which extras do you want?\"=\"Tracing, Backups\". You can now continue with these answers in mind."
    );
    drop(session);

    // Other…: the typed text is Claude Code's typed answer ("Type something." in its menu).
    let one = json!({"questions": [two_questions()["questions"][0].clone()]});
    api.set_tool("AskUserQuestion", one.clone());
    let session = Claude::start(&tmux, &claude, &local, &api, "Ask me again");
    session.wait_for("Enter to select");
    session.keys(&["Down", "Down"]);
    session.type_text("MySQL, sadly");
    session.keys(&["Enter"]);
    let typed_at_terminal = api.result();
    drop(session);
    api.set_tool("AskUserQuestion", one.clone());
    let session = Claude::start(&tmux, &claude, &home, &api, "Ask me again");
    let id = served.pending_any()["id"].as_str().unwrap().to_owned();
    served.answer(&id, &json!({"answers": [{"header": "Database", "custom_answer": "MySQL, sadly"}]}));
    let typed_through_askuser = api.result();
    assert_eq!(typed_through_askuser["content"], typed_at_terminal["content"]);
    assert!(
        typed_through_askuser["content"]
            .as_str()
            .unwrap()
            .starts_with("The user answered: \"Which database should the service use?\"=\"MySQL, sadly\"."),
        "{typed_through_askuser}"
    );
    drop(session);

    // "Answer at the terminal" on a remote surface: Claude Code's own menu.
    api.set_tool("AskUserQuestion", one.clone());
    let session = Claude::start(&tmux, &claude, &home, &api, "Ask me at the desk");
    let id = served.pending_any()["id"].as_str().unwrap().to_owned();
    served.answer(&id, &json!({"answers": [{"header": "Database", "selected": ["Answer at the terminal"]}]}));
    session.wait_for("Enter to select");
    drop(session);

    // Esc while the hook waits: withdrawn on the server at once.
    api.set_tool("AskUserQuestion", one.clone());
    let session = Claude::start(&tmux, &claude, &home, &api, "Ask me once more");
    let id = served.pending_any()["id"].as_str().unwrap().to_owned();
    session.keys(&["Escape"]);
    wait_state(&served, &id, "cancelled", Duration::from_secs(2));
    drop(session);

    // A Bash command denied, then allowed, on the server: the folder stays, then goes.
    let build = home.project().join("build");
    std::fs::create_dir_all(&build).unwrap();
    for (answer, stays) in [("Deny", true), ("Allow once", false)] {
        api.set_tool("Bash", bash("rm -rf build"));
        let session = Claude::start(&tmux, &claude, &home, &api, "Clean the build");
        let record = served.pending_any();
        assert_eq!(record["tool_name"], "askuser_approval");
        let id = record["id"].as_str().unwrap().to_owned();
        served.answer(&id, &json!({"answers": [{"header": "Allow Bash?", "selected": [answer]}]}));
        session.wait_for("Done.");
        assert_eq!(build.exists(), stays, "{answer}:\n{}", session.screen());
        drop(session);
    }

    // The server down: Claude Code's own menu, at once.
    drop(served);
    api.set_tool("AskUserQuestion", one);
    let session = Claude::start(&tmux, &claude, &home, &api, "Ask me without a server");
    let asked = api.sent_at();
    let shown = session.wait_for("Enter to select");
    let took = shown - asked;
    eprintln!("claude_code: the server down, Claude Code's own menu {took:?} after the model asked");
    // The hook itself gives up within 2 s (hook::an_unreachable_server_hands_the_question_back_at_once);
    // Claude Code's start of the hook and its drawing come on top, on a busy machine.
    assert!(took < Duration::from_secs(5), "{took:?}");
}
