//! `askuser mcp install HOST`: writes askuser into an MCP host's configuration file, merged with
//! what is there (other servers, comments and layout untouched), idempotent, with a backup of
//! the file it changes and the command that undoes it. `--print` shows the result instead.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::cli::{self, Args, Command};
use serde_json::Value;

const USAGE: &str = "\
usage: askuser mcp install HOST [options]
       askuser mcp install --check HOST [--name NAME] [--file PATH]

Adds askuser (`askuser mcp`) to an MCP host's configuration. Other servers, comments and the
file's layout are kept; a changed file is backed up first (FILE.askuser-bak-SECONDS-RANDOM) and
the command that undoes the change is printed. Running it again changes nothing. Each host gets
the setup its limits call for (docs/mcp.md's host table): a timeout under the host's own cut, the
background tools where calls are cut short, and a warning when the host shows no forms and no
answer server is given (every question would be declined).

hosts (file written; forms; what the host lets a call run):
  claude-code      .mcp.json in this directory (project scope; Claude Code asks to approve it at
                   its next start), key mcpServers; forms; long calls
  claude-desktop   Claude Desktop's claude_desktop_config.json, key mcpServers; no forms; ~60 s
  vscode           .vscode/mcp.json in this directory, key servers; forms; 5 minutes
  vscode-user      VS Code's user mcp.json (Code/User/mcp.json in the configuration directory)
  cursor           ~/.cursor/mcp.json, key mcpServers; forms; 5 minutes
  windsurf         ~/.codeium/windsurf/mcp_config.json, key mcpServers; forms not documented
  codex            ~/.codex/config.toml (CODEX_HOME), table [mcp_servers.NAME]; no form fields

options:
  --server URL     where the person answers from anywhere: a running `askuser serve` at URL.
                   A host without forms puts its questions there (--fallback server URL); a
                   host with forms shows them in its form and on the server at once (--also)
  --token-file PATH  with --server: the answer server's API token file
  --fallback SPEC  written as askuser mcp's --fallback (decline, defaults, terminal,
                   server URL, or a chain: askuser mcp --help)
  --background     also offer ask_user_question_later and get_user_answers (the default for
                   claude-desktop and codex, whose calls are cut short); --no-background: not
  --timeout DURATION  how long askuser waits for an answer (seconds, or 90s, 5m, 2h); the
                   default stays under the host's own cut: 50 s for claude-desktop, 290 s for
                   vscode and cursor, else 600 s. Codex's tool_timeout_sec is set 60 s longer
  --print          print the file as it would be written; write nothing
  --name NAME      the server's name in the file (default: askuser)
  --command CMD    the command the host runs (default: askuser when that is this program on
                   PATH, else this program's full path)
  --file PATH      write this file instead of the host's usual one. A host's file that is a
                   symbolic link is refused unless named here (then the file it points to is
                   written)
  --check          write nothing: say what the host will get from the entry it has (whether it
                   can ask at all, where its questions go, whether the answer server answers
                   now); exit 0 when it can ask, 1 when it cannot
";

/// The file format of a host's configuration, and where askuser's entry goes in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    /// JSON (comments allowed), the entry at `servers_key.NAME`, with `"type": "stdio"` when
    /// `typed`.
    Json { servers_key: &'static str, typed: bool },
    /// Codex's TOML: `[mcp_servers.NAME]`.
    CodexToml,
}

/// Whether a host shows askuser's questions as a form (MCP elicitation), per docs/mcp.md's table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Forms {
    Yes,
    No,
    /// Not in the host's documentation.
    Unknown,
}

/// An MCP host askuser can be added to, with what its documentation says of it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Host {
    pub(crate) id: &'static str,
    title: &'static str,
    format: Format,
    forms: Forms,
    /// How long the host lets a tool call run before it cuts it, when it cuts calls short.
    call_limit_secs: Option<u64>,
}

impl Host {
    /// The default `--timeout`: 10 s under the host's cut (so the model hears "nobody answered in
    /// time" instead of a cancelled call), else 600 s.
    fn default_timeout_secs(&self) -> u64 {
        self.call_limit_secs.map_or(600, |limit| limit.saturating_sub(10).max(1))
    }

    /// Whether the background tools are written by default: where calls are cut short or no form
    /// can ask, a ticket the person answers later is the way to get an answer at all.
    fn background_by_default(&self) -> bool {
        self.forms == Forms::No
    }

    /// Whether the file lives in the current directory (a project's configuration).
    fn in_project(&self) -> bool {
        matches!(self.id, "claude-code" | "vscode")
    }
}

pub(crate) const HOSTS: [Host; 7] = [
    Host {
        id: "claude-code",
        title: "Claude Code",
        format: Format::Json { servers_key: "mcpServers", typed: true },
        forms: Forms::Yes,
        call_limit_secs: None,
    },
    Host {
        id: "claude-desktop",
        title: "Claude Desktop",
        format: Format::Json { servers_key: "mcpServers", typed: false },
        forms: Forms::No,
        call_limit_secs: Some(60),
    },
    Host {
        id: "vscode",
        title: "VS Code",
        format: Format::Json { servers_key: "servers", typed: true },
        forms: Forms::Yes,
        call_limit_secs: Some(300),
    },
    Host {
        id: "vscode-user",
        title: "VS Code",
        format: Format::Json { servers_key: "servers", typed: true },
        forms: Forms::Yes,
        call_limit_secs: Some(300),
    },
    Host {
        id: "cursor",
        title: "Cursor",
        format: Format::Json { servers_key: "mcpServers", typed: false },
        forms: Forms::Yes,
        call_limit_secs: Some(300),
    },
    Host {
        id: "windsurf",
        title: "Windsurf",
        format: Format::Json { servers_key: "mcpServers", typed: false },
        forms: Forms::Unknown,
        call_limit_secs: None,
    },
    // Codex shows an elicitation's message with accept/decline only, no fields; `tool_timeout_sec`
    // is written 60 s above the timeout, so its cut never comes first.
    Host { id: "codex", title: "Codex", format: Format::CodexToml, forms: Forms::No, call_limit_secs: None },
];

/// The directories a host's file is found from.
#[derive(Debug)]
pub(crate) struct Places {
    pub(crate) home: PathBuf,
    pub(crate) cwd: PathBuf,
    /// The per-user configuration directory: `~/Library/Application Support` on macOS,
    /// `%APPDATA%` on Windows, `$XDG_CONFIG_HOME` or `~/.config` elsewhere.
    pub(crate) config: PathBuf,
    /// `CODEX_HOME`, when set.
    pub(crate) codex_home: Option<PathBuf>,
}

impl Places {
    pub(crate) fn here() -> Result<Self, String> {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        let home = var("HOME").or_else(|| var("USERPROFILE")).ok_or("neither HOME nor USERPROFILE is set")?;
        let config = if cfg!(target_os = "macos") {
            home.join("Library/Application Support")
        } else if cfg!(windows) {
            var("APPDATA").unwrap_or_else(|| home.join("AppData/Roaming"))
        } else {
            var("XDG_CONFIG_HOME").unwrap_or_else(|| home.join(".config"))
        };
        let cwd = std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?;
        Ok(Self { home, cwd, config, codex_home: var("CODEX_HOME") })
    }
}

impl Host {
    pub(crate) fn file(&self, places: &Places) -> PathBuf {
        match self.id {
            "claude-code" => places.cwd.join(".mcp.json"),
            "claude-desktop" => places.config.join("Claude/claude_desktop_config.json"),
            "vscode" => places.cwd.join(".vscode/mcp.json"),
            "vscode-user" => places.config.join("Code/User/mcp.json"),
            "cursor" => places.home.join(".cursor/mcp.json"),
            "windsurf" => places.home.join(".codeium/windsurf/mcp_config.json"),
            _ => places.codex_home.clone().unwrap_or_else(|| places.home.join(".codex")).join("config.toml"),
        }
    }
}

/// What to write: the server's name, the command, and `askuser mcp`'s options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub(crate) name: String,
    pub(crate) command: String,
    pub(crate) timeout_secs: u64,
    /// `--background`.
    pub(crate) background: bool,
    /// `--fallback SPEC`, when not the default.
    pub(crate) fallback: Option<String>,
    /// `--also server URL`.
    pub(crate) also: Option<String>,
    /// `--token-file PATH`.
    pub(crate) token_file: Option<String>,
}

impl Entry {
    /// The plain entry: `askuser mcp --timeout SECS`.
    #[cfg(test)]
    pub(crate) fn plain(name: &str, command: &str, timeout_secs: u64) -> Self {
        Self {
            name: name.to_owned(),
            command: command.to_owned(),
            timeout_secs,
            background: false,
            fallback: None,
            also: None,
            token_file: None,
        }
    }

    fn args(&self) -> Vec<String> {
        let mut args = vec!["mcp".to_owned(), "--timeout".to_owned(), self.timeout_secs.to_string()];
        if self.background {
            args.push("--background".to_owned());
        }
        for (flag, value) in
            [("--fallback", &self.fallback), ("--also", &self.also), ("--token-file", &self.token_file)]
        {
            if let Some(value) = value {
                args.extend([flag.to_owned(), value.clone()]);
            }
        }
        args
    }

    /// The entry's JSON members, in the order they are written.
    fn json_members(&self, typed: bool) -> Vec<(&'static str, Value)> {
        let mut members = Vec::new();
        if typed {
            members.push(("type", Value::from("stdio")));
        }
        members.push(("command", Value::from(self.command.as_str())));
        members.push(("args", Value::from(self.args())));
        members
    }
}

/// The outcome of merging the entry into a file's text.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Merge {
    /// The entry is there already, exactly.
    Unchanged,
    /// The new text; `replaced` when an entry of that name was there and differed.
    Changed { text: String, replaced: bool },
}

/// Merges `entry` into `text` (a host's file; empty when it does not exist yet).
pub(crate) fn merge(host: &Host, text: &str, entry: &Entry) -> Result<Merge, String> {
    match host.format {
        Format::Json { servers_key, typed } => {
            jsonc::upsert(text, servers_key, &entry.name, &entry.json_members(typed))
        }
        Format::CodexToml => codex(text, entry),
    }
}

fn codex(text: &str, entry: &Entry) -> Result<Merge, String> {
    use toml_edit::{Array, DocumentMut, Item, Table, value};
    let mut doc: DocumentMut = text.parse().map_err(|e| format!("not valid TOML: {e}"))?;
    let servers = doc.entry("mcp_servers").or_insert_with(|| {
        let mut table = Table::new();
        table.set_implicit(true);
        Item::Table(table)
    });
    let servers = servers.as_table_mut().ok_or("mcp_servers is not a table")?;
    let tool_timeout = i64::try_from(entry.timeout_secs + 60).map_err(|_| "--timeout is too large")?;
    let args: Array = entry.args().iter().map(String::as_str).collect();
    let replaced = servers.contains_key(&entry.name);
    let server = servers.entry(&entry.name).or_insert_with(|| Item::Table(Table::new()));
    let server =
        server.as_table_like_mut().ok_or_else(|| format!("mcp_servers.{} is not a table", entry.name))?;
    let same = server.get("command").and_then(Item::as_str) == Some(entry.command.as_str())
        && server
            .get("args")
            .and_then(Item::as_array)
            .is_some_and(|a| a.iter().map(|v| v.as_str()).eq(entry.args().iter().map(|s| Some(s.as_str()))))
        && server.get("tool_timeout_sec").and_then(Item::as_integer) == Some(tool_timeout);
    if same {
        return Ok(Merge::Unchanged);
    }
    server.insert("command", value(entry.command.as_str()));
    server.insert("args", value(args));
    server.insert("tool_timeout_sec", value(tool_timeout));
    Ok(Merge::Changed { text: doc.to_string(), replaced })
}

/// A minimal JSON-with-comments reader that keeps every byte's position, so that an edit splices
/// text in and leaves the rest of the file (comments, layout, trailing commas) as it was.
pub(crate) mod jsonc {
    use serde_json::Value;

    use super::Merge;

    /// A parsed value's span, and its members when it is an object.
    #[derive(Debug)]
    struct Node {
        start: usize,
        end: usize,
        object: Option<Object>,
    }

    #[derive(Debug)]
    struct Object {
        /// The position of the closing `}`.
        close: usize,
        members: Vec<(String, usize, Node)>,
    }

    struct Parser<'a> {
        text: &'a str,
        at: usize,
    }

    impl Parser<'_> {
        fn error(&self, what: &str) -> String {
            let before = &self.text[..self.at.min(self.text.len())];
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            format!("not valid JSON at line {line}, column {column}: {what}")
        }

        fn peek(&self) -> Option<u8> {
            self.text.as_bytes().get(self.at).copied()
        }

        /// Skips whitespace and comments.
        fn skip(&mut self) -> Result<(), String> {
            loop {
                let rest = &self.text[self.at..];
                if let Some(c) = rest.chars().next().filter(|c| c.is_whitespace()) {
                    self.at += c.len_utf8();
                } else if rest.starts_with("//") {
                    self.at += rest.find('\n').unwrap_or(rest.len());
                } else if let Some(comment) = rest.strip_prefix("/*") {
                    let end = comment.find("*/").ok_or_else(|| self.error("unclosed comment"))?;
                    self.at += end + 4;
                } else {
                    return Ok(());
                }
            }
        }

        fn string(&mut self) -> Result<String, String> {
            let start = self.at;
            let bytes = self.text.as_bytes();
            self.at += 1;
            while let Some(&b) = bytes.get(self.at) {
                match b {
                    b'\\' => self.at += 2,
                    b'"' => {
                        self.at += 1;
                        return serde_json::from_str(&self.text[start..self.at])
                            .map_err(|e| self.error(&e.to_string()));
                    }
                    _ => self.at += 1,
                }
            }
            Err(self.error("unclosed string"))
        }

        fn value(&mut self, depth: usize) -> Result<Node, String> {
            if depth > 64 {
                return Err(self.error("nested too deeply"));
            }
            self.skip()?;
            let start = self.at;
            let object = match self.peek() {
                Some(b'{') => Some(self.object(depth)?),
                Some(b'[') => {
                    self.at += 1;
                    loop {
                        self.skip()?;
                        if self.peek() == Some(b']') {
                            self.at += 1;
                            break;
                        }
                        self.value(depth + 1)?;
                        self.skip()?;
                        match self.peek() {
                            Some(b',') => self.at += 1,
                            Some(b']') => {}
                            _ => return Err(self.error("expected , or ]")),
                        }
                    }
                    None
                }
                Some(b'"') => {
                    self.string()?;
                    None
                }
                Some(b) if b.is_ascii_alphanumeric() || b == b'-' => {
                    let rest = &self.text[self.at..];
                    self.at += rest
                        .find(|c: char| !(c.is_ascii_alphanumeric() || "+-.".contains(c)))
                        .unwrap_or(rest.len());
                    None
                }
                _ => return Err(self.error("expected a value")),
            };
            Ok(Node { start, end: self.at, object })
        }

        fn object(&mut self, depth: usize) -> Result<Object, String> {
            self.at += 1;
            let mut members = Vec::new();
            loop {
                self.skip()?;
                match self.peek() {
                    Some(b'}') => break,
                    Some(b'"') => {}
                    _ => return Err(self.error("expected a key or }")),
                }
                let key_at = self.at;
                let key = self.string()?;
                self.skip()?;
                if self.peek() != Some(b':') {
                    return Err(self.error("expected :"));
                }
                self.at += 1;
                let node = self.value(depth + 1)?;
                members.push((key, key_at, node));
                self.skip()?;
                match self.peek() {
                    Some(b',') => self.at += 1,
                    Some(b'}') => {}
                    _ => return Err(self.error("expected , or }")),
                }
            }
            let close = self.at;
            self.at += 1;
            Ok(Object { close, members })
        }
    }

    /// The whitespace that starts the line holding `at`, when only whitespace precedes `at` there.
    fn line_indent(text: &str, at: usize) -> Option<&str> {
        let line_start = text[..at].rfind('\n').map_or(0, |n| n + 1);
        let lead = &text[line_start..at];
        lead.chars().all(|c| c == ' ' || c == '\t').then_some(lead)
    }

    /// The file's indentation step: the first indented line's lead, else two spaces.
    fn unit(text: &str) -> String {
        text.lines()
            .map(|l| &l[..l.len() - l.trim_start_matches([' ', '\t']).len()])
            .find(|lead| !lead.is_empty())
            .unwrap_or("  ")
            .to_owned()
    }

    /// `value` on one line, an array's items separated by `, ` as people write them.
    fn spaced(value: &Value) -> String {
        match value {
            Value::Array(items) => {
                format!("[{}]", items.iter().map(Value::to_string).collect::<Vec<_>>().join(", "))
            }
            other => other.to_string(),
        }
    }

    /// `members` as a JSON object, its inner lines indented by `indent` + `unit`.
    fn render(members: &[(&str, Value)], indent: &str, unit: &str) -> String {
        let lines: Vec<String> = members
            .iter()
            .map(|(key, value)| format!("{indent}{unit}{}: {}", Value::from(*key), spaced(value)))
            .collect();
        format!("{{\n{}\n{indent}}}", lines.join(",\n"))
    }

    /// Adds `"key": value` (already rendered) as the last member of `object`.
    fn insert(
        text: &str,
        object: &Object,
        object_indent: &str,
        unit: &str,
        key: &str,
        value: &str,
    ) -> String {
        let indent = object
            .members
            .last()
            .and_then(|(_, key_at, _)| line_indent(text, *key_at))
            .map_or_else(|| format!("{object_indent}{unit}"), str::to_owned);
        let member = format!("{indent}{}: {value}", Value::from(key));
        let mut out = String::with_capacity(text.len() + member.len() + 4);
        let mut from = 0;
        if let Some((_, _, last)) = object.members.last() {
            let after = text[last.end..object.close].trim_start();
            if !after.starts_with(',') {
                out.push_str(&text[..last.end]);
                out.push(',');
                from = last.end;
            }
        }
        if let Some(lead) = line_indent(text, object.close) {
            // `}` on a line of its own: the member goes on the line before it.
            let line_start = object.close - lead.len();
            out.push_str(&text[from..line_start]);
            out.push_str(&member);
            out.push('\n');
            out.push_str(&text[line_start..]);
        } else {
            out.push_str(text[from..object.close].trim_end());
            out.push('\n');
            out.push_str(&member);
            out.push('\n');
            out.push_str(object_indent);
            out.push_str(&text[object.close..]);
        }
        out
    }

    /// `text` (JSON with comments and trailing commas) as a plain JSON value.
    pub(super) fn to_value(text: &str) -> Result<Value, String> {
        let mut parser = Parser { text, at: 0 };
        parser.value(0)?;
        parser.skip()?;
        if parser.at != text.len() {
            return Err(parser.error("text after the top-level value"));
        }
        // Valid now: drop comments and trailing commas, keeping strings as they are.
        let mut plain = String::with_capacity(text.len());
        let mut parser = Parser { text, at: 0 };
        while parser.at < text.len() {
            let before = parser.at;
            parser.skip()?;
            if parser.at > before {
                plain.push(' ');
                continue;
            }
            match parser.peek() {
                Some(b'"') => {
                    let start = parser.at;
                    parser.string()?;
                    plain.push_str(&text[start..parser.at]);
                }
                Some(b',') => {
                    parser.at += 1;
                    parser.skip()?;
                    if !matches!(parser.peek(), Some(b'}' | b']')) {
                        plain.push(',');
                    }
                }
                _ => {
                    let c = text[parser.at..].chars().next().unwrap_or(' ');
                    plain.push(c);
                    parser.at += c.len_utf8();
                }
            }
        }
        serde_json::from_str(&plain).map_err(|e| format!("not valid JSON: {e}"))
    }

    /// Sets `servers_key.name` to the object `members` in the JSON-with-comments `text`.
    pub(super) fn upsert(
        text: &str,
        servers_key: &str,
        name: &str,
        members: &[(&str, Value)],
    ) -> Result<Merge, String> {
        let text = if text.trim().is_empty() { "{\n}\n" } else { text };
        let mut parser = Parser { text, at: 0 };
        let root = parser.value(0)?;
        parser.skip()?;
        if parser.at != text.len() {
            return Err(parser.error("text after the top-level value"));
        }
        let root_object = root.object.as_ref().ok_or("the top-level value is not an object")?;
        let unit = unit(text);
        let root_indent = line_indent(text, root.start).unwrap_or("");
        let wanted: Value = members
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect::<serde_json::Map<_, _>>()
            .into();
        let Some((_, servers_at, servers)) = root_object.members.iter().rfind(|(k, _, _)| k == servers_key)
        else {
            let indent = format!("{root_indent}{unit}");
            let inner = render(members, &format!("{indent}{unit}"), &unit);
            let value = format!("{{\n{indent}{unit}{}: {inner}\n{indent}}}", Value::from(name));
            return Ok(Merge::Changed {
                text: insert(text, root_object, root_indent, &unit, servers_key, &value),
                replaced: false,
            });
        };
        let servers_object =
            servers.object.as_ref().ok_or_else(|| format!("\"{servers_key}\" is not an object"))?;
        let servers_indent = line_indent(text, *servers_at).unwrap_or("").to_owned();
        if let Some((_, key_at, existing)) = servers_object.members.iter().rfind(|(k, _, _)| k == name) {
            if serde_json::from_str::<Value>(&text[existing.start..existing.end]).is_ok_and(|v| v == wanted) {
                return Ok(Merge::Unchanged);
            }
            let indent = line_indent(text, *key_at).unwrap_or(&servers_indent);
            let value = render(members, indent, &unit);
            let new = format!("{}{value}{}", &text[..existing.start], &text[existing.end..]);
            return Ok(Merge::Changed { text: new, replaced: true });
        }
        let indent = servers_object
            .members
            .last()
            .and_then(|(_, key_at, _)| line_indent(text, *key_at))
            .map_or_else(|| format!("{servers_indent}{unit}"), str::to_owned);
        let value = render(members, &indent, &unit);
        Ok(Merge::Changed {
            text: insert(text, servers_object, &servers_indent, &unit, name, &value),
            replaced: false,
        })
    }

    /// The root object of `text`, checked to be the whole text.
    fn root(text: &str) -> Result<Node, String> {
        let mut parser = Parser { text, at: 0 };
        let root = parser.value(0)?;
        parser.skip()?;
        if parser.at != text.len() {
            return Err(parser.error("text after the top-level value"));
        }
        if root.object.is_none() {
            return Err("the top-level value is not an object".to_owned());
        }
        Ok(root)
    }

    /// The value at `outer.key` in the JSON-with-comments `text` (`None` when absent), for
    /// `askuser hook install`, which merges its entries into arrays that hold others' too.
    ///
    /// # Errors
    ///
    /// The text is not JSON with comments, `outer` is not an object, or the value holds comments.
    pub(crate) fn get(text: &str, outer: &str, key: &str) -> Result<Option<Value>, String> {
        if text.trim().is_empty() {
            return Ok(None);
        }
        let root = root(text)?;
        let Some(object) = root.object.as_ref() else { return Ok(None) };
        let Some((_, _, outer_node)) = object.members.iter().rfind(|(k, _, _)| k == outer) else {
            return Ok(None);
        };
        let outer_object =
            outer_node.object.as_ref().ok_or_else(|| format!("\"{outer}\" is not an object"))?;
        let Some((_, _, node)) = outer_object.members.iter().rfind(|(k, _, _)| k == key) else {
            return Ok(None);
        };
        serde_json::from_str(&text[node.start..node.end]).map(Some).map_err(|e| {
            format!("\"{outer}\".\"{key}\" cannot be read without its comments ({e}): edit it by hand")
        })
    }

    /// Sets `outer.key` to `value` in the JSON-with-comments `text`, the rest left as it was.
    ///
    /// # Errors
    ///
    /// The text is not JSON with comments, or `outer` is not an object.
    pub(crate) fn set(text: &str, outer: &str, key: &str, value: &Value) -> Result<String, String> {
        let text = if text.trim().is_empty() { "{\n}\n" } else { text };
        let root = root(text)?;
        let root_object = root.object.as_ref().ok_or("the top-level value is not an object")?;
        let unit = unit(text);
        let root_indent = line_indent(text, root.start).unwrap_or("");
        let pretty = |indent: &str| {
            let mut out = Vec::new();
            let formatter = serde_json::ser::PrettyFormatter::with_indent(unit.as_bytes());
            let mut serializer = serde_json::Serializer::with_formatter(&mut out, formatter);
            serde::Serialize::serialize(value, &mut serializer).map_err(|e| e.to_string())?;
            let out = String::from_utf8(out).map_err(|e| e.to_string())?;
            Ok::<_, String>(out.replace('\n', &format!("\n{indent}")))
        };
        let Some((_, outer_at, outer_node)) = root_object.members.iter().rfind(|(k, _, _)| k == outer) else {
            let indent = format!("{root_indent}{unit}");
            let inner = pretty(&format!("{indent}{unit}"))?;
            let value = format!("{{\n{indent}{unit}{}: {inner}\n{indent}}}", Value::from(key));
            return Ok(insert(text, root_object, root_indent, &unit, outer, &value));
        };
        let outer_object =
            outer_node.object.as_ref().ok_or_else(|| format!("\"{outer}\" is not an object"))?;
        let outer_indent = line_indent(text, *outer_at).unwrap_or("").to_owned();
        if let Some((_, key_at, existing)) = outer_object.members.iter().rfind(|(k, _, _)| k == key) {
            let indent = line_indent(text, *key_at).unwrap_or(&outer_indent).to_owned();
            return Ok(format!("{}{}{}", &text[..existing.start], pretty(&indent)?, &text[existing.end..]));
        }
        let indent = outer_object
            .members
            .last()
            .and_then(|(_, key_at, _)| line_indent(text, *key_at))
            .map_or_else(|| format!("{outer_indent}{unit}"), str::to_owned);
        Ok(insert(text, outer_object, &outer_indent, &unit, key, &pretty(&indent)?))
    }
}

/// The Cursor install link for `entry` (`cursor://anysphere.cursor-deeplink/mcp/install`, the
/// server's `mcp.json` entry as base64 JSON).
pub(crate) fn cursor_link(entry: &Entry) -> String {
    // Written out, not through a `Map`: its key order depends on serde_json's features.
    let config = format!(
        r#"{{"command":{},"args":{}}}"#,
        Value::from(entry.command.as_str()),
        Value::from(entry.args())
    );
    format!(
        "cursor://anysphere.cursor-deeplink/mcp/install?name={}&config={}",
        entry.name,
        base64(config.as_bytes())
    )
}

fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[derive(Debug)]
struct Options {
    host: Host,
    print: bool,
    check: bool,
    /// `--file PATH`: the file named explicitly.
    file: Option<PathBuf>,
    entry: Entry,
    /// Whether the person chose the timeout, the background tools or the fallback themselves.
    chosen_timeout: bool,
}

fn parse(mut args: Args) -> Result<Options, String> {
    let mut host = None;
    let (mut print, mut check) = (false, false);
    let mut name = "askuser".to_owned();
    let mut command = None;
    let mut timeout_secs = None;
    let mut background = None;
    let (mut server, mut fallback, mut token_file, mut file) = (None, None, None, None);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--print" => print = true,
            "--check" => check = true,
            "--name" => {
                name = args.value(&arg, "a name")?;
                if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || "-_".contains(c)) {
                    return Err(format!("--name takes letters, digits, - and _, got {name:?}"));
                }
            }
            "--command" => command = Some(args.value(&arg, "a command")?),
            "--timeout" => {
                let text = args.value(&arg, "a duration")?;
                let secs = cli::seconds(&arg, &text)?.as_secs_f64().ceil();
                if secs > 31_536_000.0 {
                    return Err(format!("--timeout takes at most a year (31536000 s), got {text:?}"));
                }
                #[expect(clippy::cast_possible_truncation, clippy::cast_sign_loss, reason = "1..=31536000")]
                let secs = secs as u64;
                timeout_secs = Some(secs);
            }
            "--background" => background = Some(true),
            "--no-background" => background = Some(false),
            "--server" => {
                let url = args.value(&arg, "the answer server's URL")?;
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    return Err(format!(
                        "--server takes a URL starting with http:// or https://, got {url:?}"
                    ));
                }
                server = Some(url);
            }
            "--fallback" => {
                let mut spec = args.value(&arg, "decline, defaults, terminal or server URL")?;
                // `--fallback server URL` as two words, as askuser mcp takes it.
                if spec.rsplit(',').next().is_some_and(|last| last.trim() == "server") {
                    let url = args.next().ok_or("--fallback server needs the answer server's URL")?;
                    spec = format!("{spec} {url}");
                }
                fallback = Some(spec);
            }
            "--token-file" => token_file = Some(args.value(&arg, "a path")?),
            "--file" => file = Some(PathBuf::from(args.value(&arg, "a path")?)),
            other if other.starts_with('-') => return Err(cli::unknown(other)),
            other if host.is_none() => {
                host = Some(*HOSTS.iter().find(|h| h.id == other).ok_or_else(|| {
                    let ids: Vec<&str> = HOSTS.iter().map(|h| h.id).collect();
                    format!("unknown host {other:?}; one of {}", ids.join(", "))
                })?);
            }
            other => return Err(cli::unknown(other)),
        }
    }
    let host: Host = host.ok_or("which host? (askuser mcp install --help lists them)")?;
    if server.is_some() && fallback.as_deref().is_some_and(|f| f.contains("server")) {
        return Err("--server and --fallback server name the answer server twice; give one".to_owned());
    }
    let (mut also, mut fallback) = (None, fallback);
    if let Some(url) = server {
        if host.forms == Forms::Yes {
            also = Some(format!("server {url}"));
        } else if let Some(chain) = fallback {
            fallback = Some(format!("{chain},server {url}"));
        } else {
            fallback = Some(format!("server {url}"));
        }
    }
    let reaches_server = also.is_some() || fallback.as_deref().is_some_and(|f| f.contains("server"));
    if token_file.is_some() && !reaches_server {
        return Err("--token-file goes with --server URL (or --fallback server URL)".to_owned());
    }
    let command = match command {
        Some(command) => command,
        None if check => String::new(),
        None => default_command()?,
    };
    let entry = Entry {
        name,
        command,
        timeout_secs: timeout_secs.unwrap_or_else(|| host.default_timeout_secs()),
        background: background.unwrap_or_else(|| host.background_by_default()),
        fallback,
        also,
        token_file,
    };
    Ok(Options { host, print, check, file, entry, chosen_timeout: timeout_secs.is_some() })
}

/// `askuser` when the `askuser` on PATH is this program, else this program's full path.
pub(crate) fn default_command() -> Result<String, String> {
    let exe = std::env::current_exe()
        .and_then(std::fs::canonicalize)
        .map_err(|e| format!("cannot find this program's path (give --command): {e}"))?;
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(format!("askuser{}", std::env::consts::EXE_SUFFIX)))
            .find(|p| p.is_file())
    });
    if on_path.and_then(|p| p.canonicalize().ok()).is_some_and(|p| p == exe) {
        Ok("askuser".to_owned())
    } else {
        Ok(exe.to_string_lossy().into_owned())
    }
}

pub(crate) fn quoted(path: &Path) -> String {
    let text = path.to_string_lossy();
    if text.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:@+".contains(c)) {
        text.into_owned()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// A random suffix for a file name nobody can guess ahead (the standard library's hasher keys come
/// from the operating system's random source).
fn random_suffix() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos()),
    );
    format!("{:016x}", hasher.finish())
}

/// Creates a new file beside `file` named `NAME.KIND-…` with `text`, never following or
/// replacing anything already there: `create_new` is `O_CREAT | O_EXCL`, which refuses an
/// existing name, a symbolic link included (dangling or not). The mode is set on the open
/// descriptor: `mode` when given (the file it stands in for), else the process's default.
pub(crate) fn create_beside(
    file: &Path,
    kind: &str,
    text: &[u8],
    mode: Option<&std::fs::Permissions>,
) -> std::io::Result<PathBuf> {
    use std::io::Write as _;
    let name = file.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let mut tries = 0;
    loop {
        let path = file.with_file_name(format!("{name}.{kind}-{}", random_suffix()));
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt as _;
            // Private until the mode is set below.
            options.mode(0o600);
        }
        match options.open(&path) {
            Ok(mut created) => {
                let written = (|| {
                    match mode {
                        Some(mode) => created.set_permissions(mode.clone())?,
                        None => set_default_mode(&created)?,
                    }
                    created.write_all(text)?;
                    created.sync_all()
                })();
                return match written {
                    Ok(()) => Ok(path),
                    Err(e) => {
                        let _ = std::fs::remove_file(&path);
                        Err(e)
                    }
                };
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && tries < 16 => tries += 1,
            Err(e) => return Err(e),
        }
    }
}

/// Gives a new file the mode a plain create would have (0666 less the umask), on its descriptor.
#[cfg(unix)]
fn set_default_mode(file: &std::fs::File) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    // The umask can only be read by setting it; a file made with mode 0666 in a scratch place
    // would cost a write. 0644 is what every host's own installer leaves (umask 022); a config
    // file holds no secret (the token stays in its own file).
    file.set_permissions(std::fs::Permissions::from_mode(0o644))
}

#[cfg(not(unix))]
fn set_default_mode(_: &std::fs::File) -> std::io::Result<()> {
    Ok(())
}

/// Writes `text` to `file` through a new temporary file beside it and a rename, so that a host
/// never reads half a file; the file keeps its mode. A name prepared by someone else (a link at
/// the temporary's name) cannot redirect the write: see [`create_beside`].
pub(crate) fn write(file: &Path, text: &str) -> std::io::Result<()> {
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mode =
        std::fs::symlink_metadata(file).ok().filter(std::fs::Metadata::is_file).map(|m| m.permissions());
    let temporary = create_beside(file, "askuser-tmp", text.as_bytes(), mode.as_ref())?;
    std::fs::rename(&temporary, file).inspect_err(|_| {
        let _ = std::fs::remove_file(&temporary);
    })
}

/// Backs `file` (whose text is `original`) up beside it as `FILE.askuser-bak-SECONDS-RANDOM`, a
/// new file with the original's mode; returns the backup's path.
pub(crate) fn back_up(file: &Path, original: &str) -> std::io::Result<PathBuf> {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let mode = std::fs::symlink_metadata(file)?.permissions();
    create_beside(file, &format!("askuser-bak-{secs}"), original.as_bytes(), Some(&mode))
}

/// Replaces `file` (whose text was `existing`, `None` when it did not exist) with `text`: backed up
/// first, then written; returns the command that undoes it. `shown` names the file in errors.
pub(crate) fn replace(
    file: &Path,
    existing: Option<&str>,
    text: &str,
    shown: &str,
) -> Result<String, String> {
    let undo = match existing {
        Some(original) => {
            let backup = back_up(file, original).map_err(|e| format!("cannot back up {shown}: {e}"))?;
            format!("mv {} {shown}", quoted(&backup))
        }
        None => format!("rm {shown}"),
    };
    write(file, text).map_err(|e| format!("cannot write {shown}: {e}"))?;
    Ok(undo)
}

/// The file to write for `host`: `named` (a link there is followed to the file it points to), or
/// the host's own file, refused when it, or a folder between the project and it, is a symbolic
/// link: a directory someone else prepared (a cloned repository) must not redirect the write.
pub(crate) fn target(host_file: PathBuf, base: &Path, named: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(named) = named {
        return match std::fs::canonicalize(named) {
            Ok(real) => Ok(real),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(named.to_owned()),
            Err(e) => Err(format!("cannot resolve {}: {e}", quoted(named))),
        };
    }
    // Below `base`, every step; a file elsewhere (CODEX_HOME, the configuration directory), the
    // file itself.
    let steps: Vec<PathBuf> = match host_file.strip_prefix(base) {
        Ok(below) => below
            .components()
            .scan(base.to_owned(), |at, component| {
                at.push(component);
                Some(at.clone())
            })
            .collect(),
        Err(_) => vec![host_file.clone()],
    };
    for checked in steps {
        if let Ok(metadata) = std::fs::symlink_metadata(&checked)
            && metadata.file_type().is_symlink()
        {
            let to = std::fs::read_link(&checked).map_or_else(|_| "?".to_owned(), |t| quoted(&t));
            return Err(format!(
                "{} is a symbolic link (to {to}); refusing to write through it. If that is what you \
                 want, name the file: --file {}",
                quoted(&checked),
                quoted(&host_file)
            ));
        }
    }
    Ok(host_file)
}

/// Runs `askuser mcp install ARGS`.
const INSTALL: Command = Command::new("askuser mcp install", USAGE);

pub(crate) fn main(args: &[String]) -> ExitCode {
    let options = match INSTALL.options(args, parse) {
        Ok(options) => options,
        Err(status) => return status,
    };
    let result = if options.check { check::run(&options) } else { run(options) };
    match result {
        Ok(code) => code,
        Err(message) => {
            eprintln!("askuser mcp install: {message}");
            ExitCode::from(2)
        }
    }
}

/// The host's file for `options`, and how to show it.
fn file_of(options: &Options) -> Result<(PathBuf, String), String> {
    let places = Places::here()?;
    let host_file = options.host.file(&places);
    // In a project (a directory someone else may have prepared), every folder on the way; in the
    // person's own configuration, the file itself.
    let base = if options.host.in_project() {
        places.cwd.clone()
    } else {
        host_file.parent().map_or_else(|| places.home.clone(), Path::to_owned)
    };
    let file = target(host_file, &base, options.file.as_deref())?;
    let shown = quoted(&file);
    Ok((file, shown))
}

/// What the person should know about `entry` in `host` before relying on it: a host that can
/// never ask, a timeout past the host's cut, where a project's file needs approving.
fn warnings(host: &Host, entry: &Entry, chosen_timeout: bool) -> Vec<String> {
    let mut notes = Vec::new();
    let asks_elsewhere = entry.fallback.as_deref().is_some_and(|f| f != "decline") || entry.also.is_some();
    match host.forms {
        Forms::No if !asks_elsewhere => notes.push(format!(
            "warning: {} shows no forms, so with this setup every question is declined at once. \
             Run the answer server (`askuser serve`) and install again with its URL, so the person \
             answers on its page or phone:\n  askuser mcp install {} --server http://127.0.0.1:8765",
            host.title, host.id
        )),
        Forms::Unknown if !asks_elsewhere => notes.push(format!(
            "note: {}'s documentation does not say it shows forms; if it does not, every question \
             is declined. To be sure the person can answer, run `askuser serve` and install again \
             with --server URL",
            host.title
        )),
        _ => {}
    }
    if let Some(limit) = host.call_limit_secs
        && chosen_timeout
        && entry.timeout_secs >= limit
    {
        notes.push(format!(
            "warning: {} cuts a tool call at about {limit} s, before --timeout {} s runs out: the \
             model then gets a cancelled call, not \"nobody answered in time\"{}",
            host.title,
            entry.timeout_secs,
            if entry.background { "" } else { "; --background gives it tools for longer waits" }
        ));
    }
    if host.id == "claude-code" {
        notes.push(
            "note: Claude Code lists a project's .mcp.json servers as pending until you approve them \
             at its next start (/mcp shows them). For every project without approval: \
             claude mcp add --scope user askuser -- askuser mcp"
                .to_owned(),
        );
    }
    if host.id == "codex" && !entry.background {
        notes.push(
            "note: Codex cuts tool calls short; --background gives it ask_user_question_later".to_owned(),
        );
    }
    notes
}

fn run(options: Options) -> Result<ExitCode, String> {
    let (file, shown) = file_of(&options)?;
    let Options { host, print, entry, chosen_timeout, .. } = options;
    let existing = match std::fs::read_to_string(&file) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(format!("cannot read {shown}: {e}")),
    };
    let merged =
        merge(&host, existing.as_deref().unwrap_or(""), &entry).map_err(|e| format!("{shown}: {e}"))?;
    if !cfg!(feature = "mcp") && entry.command == "askuser" {
        eprintln!(
            "askuser mcp install: note: this askuser was built without `askuser mcp`; install the full one first"
        );
    }
    match merged {
        Merge::Unchanged => {
            if print {
                crate::print_result(existing.as_deref().unwrap_or("").trim_end())
                    .map_err(|_| "cannot write to stdout".to_owned())?;
            }
            eprintln!(
                "askuser mcp install: {} already has {} in {shown}; nothing changed",
                host.title, entry.name
            );
        }
        Merge::Changed { text, .. } if print => {
            crate::print_result(text.trim_end()).map_err(|_| "cannot write to stdout".to_owned())?;
            eprintln!("askuser mcp install: --print: {shown} was not written");
            if host.id == "cursor" {
                eprintln!(
                    "askuser mcp install: or open this link to add it in Cursor: {}",
                    cursor_link(&entry)
                );
            }
        }
        Merge::Changed { text, replaced } => {
            let undo = replace(&file, existing.as_deref(), &text, &shown)?;
            let did = if replaced { "replaced the entry" } else { "added" };
            eprintln!(
                "askuser mcp install: {did} {} in {shown} for {}; restart it or reload its MCP servers.\n\
                 To undo: {undo}",
                entry.name, host.title
            );
        }
    }
    for note in warnings(&host, &entry, chosen_timeout) {
        eprintln!("askuser mcp install: {note}");
    }
    Ok(ExitCode::SUCCESS)
}

/// `askuser mcp install --check HOST`: what the host will get from the entry it has.
mod check {
    use std::path::Path;
    use std::process::ExitCode;
    use std::time::Duration;

    use serde_json::Value;

    use super::{Forms, Options, file_of, jsonc};

    /// The entry's command and arguments, as the host's file has them.
    fn read_entry(options: &Options, text: &str) -> Result<Option<(String, Vec<String>)>, String> {
        let name = &options.entry.name;
        let strings = |v: Option<&Value>| -> Vec<String> {
            v.and_then(Value::as_array)
                .map(|a| a.iter().filter_map(|s| s.as_str().map(str::to_owned)).collect())
                .unwrap_or_default()
        };
        match options.host.format {
            super::Format::Json { servers_key, .. } => {
                let value = jsonc::to_value(text)?;
                Ok(value.get(servers_key).and_then(|s| s.get(name)).map(|entry| {
                    let command = entry.get("command").and_then(Value::as_str).unwrap_or("").to_owned();
                    (command, strings(entry.get("args")))
                }))
            }
            super::Format::CodexToml => {
                let doc: toml_edit::DocumentMut = text.parse().map_err(|e| format!("not valid TOML: {e}"))?;
                Ok(doc.get("mcp_servers").and_then(|s| s.get(name)).map(|entry| {
                    let command = entry.get("command").and_then(|c| c.as_str()).unwrap_or("").to_owned();
                    let args = entry
                        .get("args")
                        .and_then(|a| a.as_array())
                        .map(|a| a.iter().filter_map(|s| s.as_str().map(str::to_owned)).collect())
                        .unwrap_or_default();
                    (command, args)
                }))
            }
        }
    }

    /// Whether `command` names a program that exists (a path, or a name on PATH).
    fn program_exists(command: &str) -> bool {
        if command.contains(std::path::MAIN_SEPARATOR) || command.contains('/') {
            return Path::new(command).is_file();
        }
        std::env::var_os("PATH").is_some_and(|paths| {
            std::env::split_paths(&paths)
                .any(|dir| dir.join(format!("{command}{}", std::env::consts::EXE_SUFFIX)).is_file())
        })
    }

    /// Whether something accepts connections at `url`'s host and port (within 2 s).
    fn answers(url: &str) -> bool {
        use std::net::ToSocketAddrs as _;
        let (rest, port) = if let Some(rest) = url.strip_prefix("https://") {
            (rest, 443)
        } else if let Some(rest) = url.strip_prefix("http://") {
            (rest, 80)
        } else {
            return false;
        };
        let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
        let authority = authority.rsplit('@').next().unwrap_or(authority);
        let address = if authority.rsplit_once(':').is_some_and(|(_, p)| p.parse::<u16>().is_ok())
            && !authority.ends_with(']')
        {
            authority.to_owned()
        } else {
            format!("{authority}:{port}")
        };
        address
            .to_socket_addrs()
            .ok()
            .into_iter()
            .flatten()
            .any(|addr| std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(2)).is_ok())
    }

    pub(super) fn run(options: &Options) -> Result<ExitCode, String> {
        let (file, shown) = file_of(options)?;
        let host = &options.host;
        let say = |line: &str| println!("{line}");
        let text = match std::fs::read_to_string(&file) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                say(&format!("{}: {shown} does not exist, so askuser is not set up there.", host.title));
                say(&format!("To set it up: askuser mcp install {}", host.id));
                return Ok(ExitCode::FAILURE);
            }
            Err(e) => return Err(format!("cannot read {shown}: {e}")),
        };
        let Some((command, args)) = read_entry(options, &text).map_err(|e| format!("{shown}: {e}"))? else {
            say(&format!("{}: {shown} has no server named {}.", host.title, options.entry.name));
            say(&format!("To set it up: askuser mcp install {}", host.id));
            return Ok(ExitCode::FAILURE);
        };
        say(&format!("{}: {shown}, server {}:", host.title, options.entry.name));
        say(&format!("  runs: {command} {}", args.join(" ")));
        let mut can_ask = true;
        if !program_exists(&command) {
            say(&format!(
                "  ✖ {command:?} is not a program this user can find (PATH or a path): the host cannot start it"
            ));
            can_ask = false;
        }
        let value = |flag: &str| args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1)).cloned();
        let fallback = value("--fallback").unwrap_or_else(|| "decline".to_owned());
        let also = value("--also");
        let server = also
            .as_deref()
            .and_then(|a| a.strip_prefix("server "))
            .or_else(|| fallback.split(',').find_map(|step| step.trim().strip_prefix("server ")))
            .map(str::trim);
        match (host.forms, &also) {
            (Forms::Yes, Some(_)) => say(
                "  forms: shown in the host's form and on the answer server at once; the first answer wins",
            ),
            (Forms::Yes, None) => say("  forms: the host shows the questions as a form"),
            (Forms::No, _) => say(&format!(
                "  forms: {} shows none; every question goes to the fallback ({fallback})",
                host.title
            )),
            (Forms::Unknown, _) => say(&format!(
                "  forms: not documented for {}; without them the fallback asks ({fallback})",
                host.title
            )),
        }
        if host.forms != Forms::Yes && fallback.split(',').all(|s| s.trim() == "decline") {
            say("  ✖ without a form every question is declined at once: nobody is asked");
            say(&format!(
                "    fix: run `askuser serve`, then: askuser mcp install {} --server http://127.0.0.1:8765",
                host.id
            ));
            if host.forms == Forms::No {
                can_ask = false;
            }
        }
        if let Some(url) = server {
            if answers(url) {
                say(&format!("  answer server {url}: answering now"));
            } else {
                say(&format!(
                    "  ✖ answer server {url}: nothing answers there now; start it with `askuser serve`"
                ));
                if host.forms != Forms::Yes {
                    can_ask = false;
                }
            }
        }
        let timeout = value("--timeout").and_then(|t| super::cli::seconds("--timeout", &t).ok());
        match (timeout, host.call_limit_secs) {
            (Some(t), Some(limit)) if t >= Duration::from_secs(limit) => say(&format!(
                "  ⚠ --timeout {} s is past {}'s cut of about {limit} s: the model gets a cancelled call",
                t.as_secs(),
                host.title
            )),
            (Some(t), _) => say(&format!("  waits up to {} s for an answer", t.as_secs())),
            (None, _) => say("  waits as long as the host lets the call run"),
        }
        if args.iter().any(|a| a == "--background") {
            say("  background tools: ask_user_question_later and get_user_answers for long waits");
        }
        say(if can_ask {
            "verdict: the host can ask the person"
        } else {
            "verdict: the host cannot ask the person"
        });
        Ok(if can_ask { ExitCode::SUCCESS } else { ExitCode::FAILURE })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_readmes_cursor_link_is_the_default_entry() {
        let readme =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md")).unwrap();
        let entry = Entry::plain("askuser", "askuser", HOSTS[4].default_timeout_secs());
        assert!(readme.contains(&format!("[Add to Cursor]({})", cursor_link(&entry))));
    }

    /// The temporary's name was `FILE.askuser-tmp-PID`, written with a plain write and chmod-ed
    /// through whatever stood there: a link prepared at that name sent the text and the mode to
    /// the file it pointed to.
    #[cfg(unix)]
    #[test]
    fn a_link_at_the_old_temporary_name_is_not_followed() {
        use std::os::unix::fs::{PermissionsExt as _, symlink};
        let dir = std::env::temp_dir().join(format!("askuser-install-unit-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let (victim, file) = (dir.join("victim"), dir.join("mcp.json"));
        std::fs::write(&victim, "private\n").unwrap();
        std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::fs::write(&file, "{}\n").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        symlink(&victim, dir.join(format!("mcp.json.askuser-tmp-{}", std::process::id()))).unwrap();
        write(&file, "{\"a\": 1}\n").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "private\n");
        assert_eq!(std::fs::metadata(&victim).unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "{\"a\": 1}\n");
        assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o644);
        let backup = back_up(&file, "{\"a\": 1}\n").unwrap();
        assert_eq!(std::fs::metadata(&backup).unwrap().permissions().mode() & 0o777, 0o644);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn jsonc_reads_as_plain_json() {
        let text = "{\n  // a comment\n  \"a\": [1, 2,], /* b */ \"b\": \"// not a comment\",\n}\n";
        assert_eq!(jsonc::to_value(text).unwrap(), serde_json::json!({"a": [1, 2], "b": "// not a comment"}));
    }

    #[test]
    fn base64_matches_rfc_4648() {
        for (plain, encoded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes()), encoded);
        }
    }
}
