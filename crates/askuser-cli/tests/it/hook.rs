//! `askuser hook claude-code|codex` against a real `askuser serve` (this binary, a SQLite store
//! in a temporary directory), answered through the JSON API; and `askuser hook install`.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub(crate) const BIN: &str = env!("CARGO_BIN_EXE_askuser");

pub(crate) use askuser_testkit::TempDir;

/// `askuser serve` on loopback, with its store and token in a directory of its own.
pub(crate) struct Served {
    child: Child,
    pub(crate) url: String,
    token: String,
    dir: TempDir,
}

impl Served {
    pub(crate) fn start(name: &str) -> Self {
        Self::start_with(name, &[])
    }

    pub(crate) fn start_with(name: &str, extra: &[&str]) -> Self {
        let dir = TempDir::new(name);
        let mut child = Command::new(BIN)
            .args(["serve", "--bind", "127.0.0.1:0"])
            .args(extra)
            .arg("--token-file")
            .arg(dir.0.join("token"))
            .arg("--store")
            .arg(format!("sqlite:{}", dir.0.join("pending.db").display()))
            .env_remove("ASKUSER_TOKEN")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        let url = loop {
            line.clear();
            assert!(stderr.read_line(&mut line).unwrap() > 0, "askuser serve ended before it listened");
            if let Some(url) = line.trim_end().strip_prefix("askuser serve: listening on ") {
                break url.to_owned();
            }
        };
        // Drained, so that a full pipe never holds the server up.
        std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
        let token = std::fs::read_to_string(dir.0.join("token")).unwrap().trim().to_owned();
        Self { child, url, token, dir }
    }

    pub(crate) fn token_file(&self) -> PathBuf {
        self.dir.0.join("token")
    }

    /// The store's URL.
    pub(crate) fn store_url(&self) -> String {
        format!("sqlite:{}", self.dir.0.join("pending.db").display())
    }

    /// `METHOD path` with the token (and a JSON body): the status and the JSON reply.
    pub(crate) fn http(&self, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
        let (status, text) = request(&self.url, method, path, Some(&self.token), body);
        (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
    }

    /// Waits until `session`'s question is on the server; its record.
    pub(crate) fn pending(&self, session: &str) -> Value {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let (_, list) =
                self.http("GET", &format!("/v1/questions?session_id={session}&state=pending"), None);
            if let Some(record) = list["records"].as_array().and_then(|r| r.first()) {
                return record.clone();
            }
            assert!(Instant::now() < deadline, "no question for {session}: {list}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits until a question waits on the server; its record.
    pub(crate) fn pending_any(&self) -> Value {
        let deadline = Instant::now() + Duration::from_mins(1);
        loop {
            let (_, list) = self.http("GET", "/v1/questions?state=pending", None);
            if let Some(record) = list["records"].as_array().and_then(|r| r.first()) {
                return record.clone();
            }
            assert!(Instant::now() < deadline, "no question waits: {list}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub(crate) fn answer(&self, id: &str, answer: &Value) -> (u16, Value) {
        self.http("POST", &format!("/v1/questions/{id}/answer"), Some(answer))
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One HTTP/1.1 request to `base` + `path`: the status and the body.
fn request(base: &str, method: &str, path: &str, token: Option<&str>, body: Option<&Value>) -> (u16, String) {
    let rest = base.strip_prefix("http://").unwrap();
    let (host, prefix) = rest.split_once('/').map_or((rest, ""), |(h, p)| (h, p));
    let path = if prefix.is_empty() { path.to_owned() } else { format!("/{prefix}{path}") };
    let mut stream = TcpStream::connect(host).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let body = body.map(Value::to_string).unwrap_or_default();
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    if let Some(token) = token {
        head = head + "Authorization: Bearer " + token + "\r\n";
    }
    if !body.is_empty() {
        head.push_str("Content-Type: application/json\r\n");
    }
    stream.write_all(format!("{head}\r\n{body}").as_bytes()).unwrap();
    let mut reply = String::new();
    stream.read_to_string(&mut reply).unwrap();
    let (head, body) = reply.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, body.to_owned())
}

/// The hook, started with `event` on stdin.
fn hook(cli: &str, args: &[&str], event: &Value) -> Child {
    let mut command = Command::new(BIN);
    // A process group of its own, as the CLIs start hooks (Codex kills it on Esc).
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child = command
        .args(["hook", cli])
        .args(args)
        .env_remove("ASKUSER_TOKEN")
        .env("HOME", "/home/tester")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let written = child.stdin.take().unwrap().write_all(event.to_string().as_bytes());
    // A hook that refuses its options exits before it reads the event: the pipe may be closed
    // already (a flake under load, seen as BrokenPipe here).
    if let Err(e) = written {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
    }
    child
}

fn served_hook(served: &Served, cli: &str, event: &Value) -> Child {
    let token = served.token_file();
    hook(cli, &["--server", &served.url, "--token-file", token.to_str().unwrap()], event)
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Claude Code's `AskUserQuestion` input, as its model sends it (a description on every option).
pub(crate) fn two_questions() -> Value {
    json!({"questions": [
        {"question": "Which database should the service use?", "header": "Database", "multiSelect": false,
         "options": [{"label": "PostgreSQL", "description": "The team knows it"},
                     {"label": "SQLite", "description": "One file, no server"}]},
        {"question": "Which extras do you want?", "header": "Extras", "multiSelect": true,
         "options": [{"label": "Backups", "description": "Nightly"},
                     {"label": "Metrics", "description": "Prometheus"},
                     {"label": "Tracing", "description": "OpenTelemetry"}]}
    ]})
}

fn pre_tool_use(session: &str, tool_input: &Value) -> Value {
    json!({"hook_event_name": "PreToolUse", "tool_name": "AskUserQuestion", "tool_input": tool_input,
           "tool_use_id": "toolu_01", "session_id": session, "cwd": "/home/tester/src/app",
           "permission_mode": "default", "transcript_path": "/tmp/t.jsonl"})
}

fn permission_request(session: &str, command: &str, suggestions: &Value) -> Value {
    json!({"hook_event_name": "PermissionRequest", "tool_name": "Bash",
           "tool_input": {"command": command, "description": "Remove the build folder"},
           "permission_suggestions": suggestions, "session_id": session, "cwd": "/home/tester/src/app",
           "permission_mode": "default", "transcript_path": "/tmp/t.jsonl"})
}

#[test]
fn questions_answered_through_the_api_reach_claude_code_as_its_own_answers() {
    let served = Served::start("answered");
    let child = served_hook(&served, "claude-code", &pre_tool_use("s-answered", &two_questions()));
    let record = served.pending("s-answered");
    assert_eq!(record["asked_by"], "Claude Code in ~/src/app");
    assert_eq!(record["tool_name"], "AskUserQuestion");
    let id = record["id"].as_str().unwrap();
    assert!(id.starts_with("toolu_01-"), "{id}");
    // Picked out of the options' order: Claude Code's own menu lists a multi-select answer in
    // the order picked.
    let (status, _) = served.answer(
        id,
        &json!({"answers": [{"header": "Database", "selected": ["PostgreSQL"]},
                            {"header": "Extras", "selected": ["Tracing", "Backups"]}]}),
    );
    assert_eq!(status, 200);
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let mut updated = two_questions();
    updated["answers"] = json!({"Which database should the service use?": "PostgreSQL",
                                "Which extras do you want?": "Tracing, Backups"});
    let expected = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow",
                                                  "updatedInput": updated}});
    assert_eq!(stdout(&output), format!("{expected}\n"));
    assert!(stderr(&output).contains(&format!("answer at {}/q/{id}/", served.url)), "{}", stderr(&output));
}

#[test]
fn other_text_becomes_the_typed_answer_and_a_decline_denies() {
    let served = Served::start("other");
    let input = json!({"questions": [two_questions()["questions"][0].clone()]});
    let child = served_hook(&served, "claude-code", &pre_tool_use("s-other", &input));
    let id = served.pending("s-other")["id"].as_str().unwrap().to_owned();
    served.answer(&id, &json!({"answers": [{"header": "Database", "custom_answer": "MySQL, sadly"}]}));
    let output = child.wait_with_output().unwrap();
    let printed: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(
        printed["hookSpecificOutput"]["updatedInput"]["answers"],
        json!({"Which database should the service use?": "MySQL, sadly"})
    );

    let child = served_hook(&served, "claude-code", &pre_tool_use("s-decline", &input));
    let id = served.pending("s-decline")["id"].as_str().unwrap().to_owned();
    served.answer(&id, &json!({"cancelled": true}));
    let output = child.wait_with_output().unwrap();
    let printed: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(printed["hookSpecificOutput"]["permissionDecision"], "deny");
    assert_eq!(output.status.code(), Some(0));
}

#[test]
fn answer_at_the_terminal_on_a_remote_surface_hands_the_question_back() {
    let served = Served::start("terminal");
    let input = json!({"questions": [two_questions()["questions"][0].clone()]});
    let child = served_hook(&served, "claude-code", &pre_tool_use("s-terminal", &input));
    let record = served.pending("s-terminal");
    let labels: Vec<&str> = record["request"]["questions"][0]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["PostgreSQL", "SQLite", "Answer at the terminal"]);
    let id = record["id"].as_str().unwrap();
    served.answer(id, &json!({"answers": [{"header": "Database", "selected": ["Answer at the terminal"]}]}));
    let output = child.wait_with_output().unwrap();
    assert_eq!((output.status.code(), stdout(&output).as_str()), (Some(0), ""), "{}", stderr(&output));
    assert!(stderr(&output).contains("the person chose to answer at the terminal"), "{}", stderr(&output));
}

#[test]
fn two_sessions_at_once_each_get_their_own_answer() {
    let served = Served::start("two");
    let input = json!({"questions": [two_questions()["questions"][0].clone()]});
    let first = served_hook(&served, "claude-code", &pre_tool_use("s-one", &input));
    let second = served_hook(&served, "claude-code", &pre_tool_use("s-two", &input));
    let one = served.pending("s-one")["id"].as_str().unwrap().to_owned();
    let two = served.pending("s-two")["id"].as_str().unwrap().to_owned();
    // Both Claude Code sessions use the tool-call id toolu_01: the questions must not meet.
    assert_ne!(one, two);
    served.answer(&two, &json!({"answers": [{"header": "Database", "selected": ["SQLite"]}]}));
    served.answer(&one, &json!({"answers": [{"header": "Database", "selected": ["PostgreSQL"]}]}));
    for (child, label) in [(first, "PostgreSQL"), (second, "SQLite")] {
        let output = child.wait_with_output().unwrap();
        let printed: Value = serde_json::from_str(&stdout(&output)).unwrap();
        assert_eq!(
            printed["hookSpecificOutput"]["updatedInput"]["answers"],
            json!({"Which database should the service use?": label})
        );
    }
}

#[test]
fn an_unreachable_server_hands_the_question_back_at_once() {
    // A listener that never answers (its backlog takes the connection) and a closed port.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_url = format!("http://{}", silent.local_addr().unwrap());
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let dir = TempDir::new("unreachable");
    let token = dir.0.join("token");
    std::fs::write(&token, "a".repeat(64)).unwrap();
    #[cfg(unix)]
    std::fs::set_permissions(&token, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    for url in [silent_url, format!("http://{closed}")] {
        let started = Instant::now();
        let child = hook(
            "claude-code",
            &["--server", &url, "--token-file", token.to_str().unwrap()],
            &pre_tool_use("s-down", &two_questions()),
        );
        let output = child.wait_with_output().unwrap();
        let took = started.elapsed();
        assert_eq!((output.status.code(), stdout(&output).as_str()), (Some(0), ""), "{}", stderr(&output));
        // docs/contract.md §17: the terminal asks within 2 s when no server answers.
        assert!(took < Duration::from_secs(2), "{url}: {took:?}");
        assert!(stderr(&output).contains("Claude Code asks at its terminal"), "{}", stderr(&output));
    }
}

#[test]
fn nobody_answering_within_the_wait_withdraws_the_question() {
    let served = Served::start("wait");
    let token = served.token_file();
    let child = hook(
        "claude-code",
        &["--server", &served.url, "--token-file", token.to_str().unwrap(), "--wait", "1"],
        &pre_tool_use("s-wait", &two_questions()),
    );
    let id = served.pending("s-wait")["id"].as_str().unwrap().to_owned();
    let output = child.wait_with_output().unwrap();
    assert_eq!((output.status.code(), stdout(&output).as_str()), (Some(0), ""));
    let (_, record) = served.http("GET", &format!("/v1/questions/{id}"), None);
    assert_eq!(record["state"], "cancelled", "{record}");
}

#[cfg(unix)]
#[test]
fn sigterm_withdraws_the_question_before_the_hook_ends() {
    let served = Served::start("sigterm");
    let child = served_hook(&served, "claude-code", &pre_tool_use("s-term", &two_questions()));
    let id = served.pending("s-term")["id"].as_str().unwrap().to_owned();
    // Claude Code sends SIGTERM when the person presses Esc while the hook waits.
    let killed = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(killed.success());
    let output = child.wait_with_output().unwrap();
    assert_eq!((output.status.code(), stdout(&output).as_str()), (Some(0), ""), "{}", stderr(&output));
    let (_, record) = served.http("GET", &format!("/v1/questions/{id}"), None);
    assert_eq!(record["state"], "cancelled", "{record}");
}

#[cfg(unix)]
#[test]
fn a_hook_killed_outright_has_its_question_withdrawn_at_once() {
    // Codex 0.171.0 ends a waiting hook on Esc by killing its process group: no signal the hook
    // can catch. Its watchdog (a process of its own group) withdraws the question, well before
    // the server's lease (30 s) would.
    let served = Served::start("killed");
    let mut child =
        served_hook(&served, "codex", &permission_request("s-killed", "rm -rf build", &json!([])));
    let id = served.pending("s-killed")["id"].as_str().unwrap().to_owned();
    let group = format!("-{}", child.id());
    let killed = Command::new("kill").args(["-KILL", "--", &group]).status().unwrap();
    assert!(killed.success());
    let _ = child.wait();
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let (_, record) = served.http("GET", &format!("/v1/questions/{id}"), None);
        if record["state"] == "cancelled" {
            break;
        }
        assert!(Instant::now() < deadline, "still {record}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn the_cli_closing_the_hooks_stdout_withdraws_the_question() {
    // Claude Code closes the hook's stdout, and sends no signal, when the person answers its own
    // permission prompt while the hook waits: the approval must not stay answerable remotely.
    let served = Served::start("gone");
    let mut child =
        served_hook(&served, "claude-code", &permission_request("s-gone", "rm -rf build", &json!([])));
    let id = served.pending("s-gone")["id"].as_str().unwrap().to_owned();
    drop(child.stdout.take());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    let (_, record) = served.http("GET", &format!("/v1/questions/{id}"), None);
    assert_eq!(record["state"], "cancelled", "{record}");
}

#[test]
fn a_permission_prompt_is_an_approval_allowed_or_denied_by_a_person_only() {
    let served = Served::start("approval");
    let rules = json!([{"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "rm -rf build"}],
                        "behavior": "allow", "destination": "localSettings"}]);
    let decide = |session: &str, answer: Value| {
        let child = served_hook(&served, "claude-code", &permission_request(session, "rm -rf build", &rules));
        let record = served.pending(session);
        let id = record["id"].as_str().unwrap().to_owned();
        assert_eq!(record["tool_name"], "askuser_approval");
        let (status, _) = served.answer(&id, &answer);
        assert_eq!(status, 200);
        let output = child.wait_with_output().unwrap();
        serde_json::from_str::<Value>(&stdout(&output)).unwrap()["hookSpecificOutput"]["decision"].clone()
    };
    assert_eq!(
        decide("s-deny", json!({"answers": [{"header": "Allow Bash?", "selected": ["Deny"]}]})),
        json!({"behavior": "deny", "message": "The user denied this request (through askuser)."})
    );
    assert_eq!(
        decide("s-allow", json!({"answers": [{"header": "Allow Bash?", "selected": ["Allow once"]}]})),
        json!({"behavior": "allow"})
    );
    assert_eq!(
        decide("s-always", json!({"answers": [{"header": "Allow Bash?", "selected": ["Always allow"]}]})),
        json!({"behavior": "allow", "updatedPermissions": rules})
    );
    assert_eq!(
        decide("s-reason", json!({"answers": [{"header": "Allow Bash?", "custom_answer": "not on main"}]})),
        json!({"behavior": "deny", "message": "The user denied this request (through askuser): not on main"})
    );
}

#[test]
fn an_approval_has_no_one_tap_link_no_default_and_no_unattended_answer() {
    // Extended: its options may be marked as defaults, which an approval refuses.
    let served = Served::start_with("guarantees", &["--profile", "extended"]);
    let child = served_hook(&served, "codex", &permission_request("s-guard", "git push --force", &json!([])));
    let record = served.pending("s-guard");
    let id = record["id"].as_str().unwrap().to_owned();
    let question = &record["request"]["questions"][0];
    assert_eq!(
        question["question"],
        "Codex in ~/src/app asks to run a command:\n```\ngit push --force\n```\nRemove the build folder"
    );
    // Codex offers no rule to add: two options only.
    let labels: Vec<&str> =
        question["options"].as_array().unwrap().iter().map(|o| o["label"].as_str().unwrap()).collect();
    assert_eq!(labels, ["Allow once", "Deny"]);
    // A one-tap answer (a notice's button) is refused while the approval waits.
    let mut child = child;
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let link = lines
        .find_map(|l| l.unwrap().strip_prefix("askuser hook codex: answer at ").map(str::to_owned))
        .unwrap();
    let tap = link.strip_prefix(&served.url).unwrap().to_owned() + "/tap/0";
    let (status, text) = request(&served.url, "POST", &tap, None, None);
    assert_eq!(status, 422, "{text}");
    assert!(text.contains("needs its page"), "{text}");
    // Nor does a default, a timeout or an unattended responder answer it.
    for by in ["unattended", "timeout"] {
        let (status, reply) = served.answer(
            &id,
            &json!({"answers": [{"header": "Allow Bash?", "selected": ["Allow once"]}], "answered_by": by}),
        );
        assert_eq!((status, reply["error"].as_str()), (422, Some("invalid_response")), "{reply}");
    }
    let (_, record) = served.http("GET", &format!("/v1/questions/{id}"), None);
    assert_eq!(record["state"], "pending");
    served.answer(&id, &json!({"answers": [{"header": "Allow Bash?", "selected": ["Deny"]}]}));
    let output = child.wait_with_output().unwrap();
    // Codex reads the same decision shape; it never gets "always allow" rules.
    let printed: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(printed["hookSpecificOutput"]["decision"]["behavior"], "deny");

    // The server refuses an approval shaped otherwise: other options, or a default.
    for options in [
        json!([{"label": "Yes"}, {"label": "No"}]),
        json!([{"label": "Allow once", "default": true}, {"label": "Deny"}]),
    ] {
        let (status, reply) = served.http(
            "POST",
            "/v1/questions",
            Some(&json!({"tool_name": "askuser_approval", "profile": "extended",
                         "arguments": {"questions": [{"header": "Allow?", "question": "Run it?", "options": options}]}})),
        );
        assert_eq!((status, reply["error"].as_str()), (422, Some("invalid_field")), "{reply}");
    }
}

#[test]
fn events_the_hook_does_not_carry_step_aside_without_asking() {
    let served = Served::start("aside");
    let events = [
        json!({"hook_event_name": "PermissionRequest", "tool_name": "AskUserQuestion",
               "tool_input": two_questions(), "session_id": "s-aside"}),
        json!({"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"},
               "session_id": "s-aside"}),
    ];
    for event in events {
        let output = served_hook(&served, "claude-code", &event).wait_with_output().unwrap();
        assert_eq!((output.status.code(), stdout(&output).as_str()), (Some(0), ""));
    }
    let (_, list) = served.http("GET", "/v1/questions?session_id=s-aside", None);
    assert_eq!(list["records"], json!([]));
    // Bad configuration is a non-blocking error (1), never 2, which both CLIs read as "block".
    let output = hook("claude-code", &["--wait", "soon"], &json!({})).wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
}

/// A home directory for `askuser hook install`.
struct Home(TempDir);

impl Home {
    fn new(name: &str) -> Self {
        let dir = TempDir::new(name);
        std::fs::create_dir_all(dir.0.join("project")).unwrap();
        Self(dir)
    }

    fn install(&self, args: &[&str]) -> Output {
        Command::new(BIN)
            .args(["hook", "install"])
            .args(args)
            .current_dir(self.0.0.join("project"))
            .env("HOME", &self.0.0)
            .env("CODEX_HOME", self.0.0.join("codex-home"))
            .output()
            .unwrap()
    }
}

#[test]
fn install_claude_code_merges_backs_up_and_runs_once() {
    let home = Home::new("install-claude");
    let settings = home.0.0.join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(&settings, "{\n  \"theme\": \"dark\"\n}\n").unwrap();
    let first = home.install(&[
        "claude-code",
        "--server",
        "http://127.0.0.1:8765",
        "--token-file",
        "/srv/token",
        "--command",
        "askuser",
    ]);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let text = std::fs::read_to_string(&settings).unwrap();
    let value: Value = serde_json::from_str(&text).unwrap();
    let hook = json!({"type": "command",
                      "command": "askuser hook claude-code --server http://127.0.0.1:8765 --token-file /srv/token",
                      "timeout": 660});
    assert_eq!(
        value,
        json!({"theme": "dark", "hooks": {
            "PreToolUse": [{"matcher": "AskUserQuestion", "hooks": [hook]}],
            "PermissionRequest": [{"matcher": "*", "hooks": [hook]}]}})
    );
    let undo =
        stderr(&first).lines().find_map(|l| l.strip_prefix("To undo: mv ").map(str::to_owned)).unwrap();
    let backup = undo.split(' ').next().unwrap();
    assert_eq!(std::fs::read_to_string(backup).unwrap(), "{\n  \"theme\": \"dark\"\n}\n");
    let again = home.install(&[
        "claude-code",
        "--server",
        "http://127.0.0.1:8765",
        "--token-file",
        "/srv/token",
        "--command",
        "askuser",
    ]);
    assert!(stderr(&again).contains("nothing changed"), "{}", stderr(&again));
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), text);
}

#[test]
fn install_codex_writes_the_hook_and_leaves_trusting_it_to_the_person() {
    let home = Home::new("install-codex");
    let output = home.install(&["codex", "--command", "askuser", "--wait", "300"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let config = std::fs::read_to_string(home.0.0.join("codex-home/config.toml")).unwrap();
    assert_eq!(
        config,
        "[[hooks.PermissionRequest]]\n\n[[hooks.PermissionRequest.hooks]]\ntype = \"command\"\ncommand = \"askuser hook codex --wait 300\"\ntimeout = 360\n"
    );
    assert!(!config.contains("[hooks.state]"));
    assert!(stderr(&output).contains("Codex asks you to review and trust the new hook at its next start"));
    assert!(stderr(&output).contains("To undo: rm "));
    let printed = home.install(&["codex", "--command", "askuser", "--print"]);
    assert!(stdout(&printed).contains("command = \"askuser hook codex\""), "{}", stdout(&printed));
    assert_eq!(std::fs::read_to_string(home.0.0.join("codex-home/config.toml")).unwrap(), config);
}
