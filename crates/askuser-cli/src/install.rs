//! `askuser mcp install HOST`: writes askuser into an MCP host's configuration file, merged with
//! what is there (other servers, comments and layout untouched), idempotent, with a backup of
//! the file it changes and the command that undoes it. `--print` shows the result instead.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use askuser_tool::cli::{self, Args, Command};
use serde_json::Value;

const USAGE: &str = "\
usage: askuser mcp install HOST [options]

Adds askuser (`askuser mcp`) to an MCP host's configuration. Other servers, comments and the
file's layout are kept; a changed file is backed up first (FILE.askuser-bak-SECONDS) and the
command that undoes the change is printed. Running it again changes nothing.

hosts (file written):
  claude-code      .mcp.json in this directory (the project's servers), key mcpServers
  claude-desktop   Claude Desktop's claude_desktop_config.json, key mcpServers
  vscode           .vscode/mcp.json in this directory, key servers
  vscode-user      VS Code's user mcp.json (Code/User/mcp.json in the configuration directory)
  cursor           ~/.cursor/mcp.json, key mcpServers
  windsurf         ~/.codeium/windsurf/mcp_config.json, key mcpServers
  codex            ~/.codex/config.toml (CODEX_HOME), table [mcp_servers.NAME]

options:
  --print          print the file as it would be written; write nothing
  --name NAME      the server's name in the file (default: askuser)
  --command CMD    the command the host runs (default: askuser when that is this program on
                   PATH, else this program's full path)
  --timeout SECS   how long askuser waits for an answer (default 600); Codex's
                   tool_timeout_sec is set 60 s longer, so askuser answers first
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

/// An MCP host askuser can be added to.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Host {
    pub(crate) id: &'static str,
    title: &'static str,
    format: Format,
}

pub(crate) const HOSTS: [Host; 7] = [
    Host {
        id: "claude-code",
        title: "Claude Code",
        format: Format::Json { servers_key: "mcpServers", typed: true },
    },
    Host {
        id: "claude-desktop",
        title: "Claude Desktop",
        format: Format::Json { servers_key: "mcpServers", typed: false },
    },
    Host { id: "vscode", title: "VS Code", format: Format::Json { servers_key: "servers", typed: true } },
    Host {
        id: "vscode-user",
        title: "VS Code",
        format: Format::Json { servers_key: "servers", typed: true },
    },
    Host { id: "cursor", title: "Cursor", format: Format::Json { servers_key: "mcpServers", typed: false } },
    Host {
        id: "windsurf",
        title: "Windsurf",
        format: Format::Json { servers_key: "mcpServers", typed: false },
    },
    Host { id: "codex", title: "Codex", format: Format::CodexToml },
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

/// What to write: the server's name, the command, its arguments, and the answer timeout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub(crate) name: String,
    pub(crate) command: String,
    pub(crate) timeout_secs: u64,
}

impl Entry {
    fn args(&self) -> Vec<String> {
        vec!["mcp".to_owned(), "--timeout".to_owned(), self.timeout_secs.to_string()]
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
    entry: Entry,
}

fn parse(mut args: Args) -> Result<Options, String> {
    let mut host = None;
    let mut print = false;
    let mut name = "askuser".to_owned();
    let mut command = None;
    let mut timeout_secs = 600;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--print" => print = true,
            "--name" => {
                name = args.value(&arg, "a name")?;
                if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || "-_".contains(c)) {
                    return Err(format!("--name takes letters, digits, - and _, got {name:?}"));
                }
            }
            "--command" => command = Some(args.value(&arg, "a command")?),
            "--timeout" => {
                let text = args.value(&arg, "a number of seconds")?;
                timeout_secs = text
                    .parse::<u64>()
                    .ok()
                    .filter(|s| (1..=31_536_000).contains(s))
                    .ok_or(format!("--timeout takes whole seconds from 1 to 31536000, got {text:?}"))?;
            }
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
    let host = host.ok_or("which host? (askuser mcp install --help lists them)")?;
    let command = match command {
        Some(command) => command,
        None => default_command()?,
    };
    Ok(Options { host, print, entry: Entry { name, command, timeout_secs } })
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

/// A path for the backup of `file` that does not exist yet.
pub(crate) fn backup_path(file: &Path) -> PathBuf {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let name = file.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    (0..1000)
        .map(|n| {
            let suffix = if n == 0 { String::new() } else { format!("-{n}") };
            file.with_file_name(format!("{name}.askuser-bak-{secs}{suffix}"))
        })
        .find(|p| !p.exists())
        .unwrap_or_else(|| file.with_file_name(format!("{name}.askuser-bak")))
}

pub(crate) fn quoted(path: &Path) -> String {
    let text = path.to_string_lossy();
    if text.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:@+".contains(c)) {
        text.into_owned()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// Writes `text` to `file` through a temporary file beside it and a rename, so that a host
/// never reads half a file.
pub(crate) fn write(file: &Path, text: &str) -> std::io::Result<()> {
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let temporary = file.with_file_name(format!(
        "{}.askuser-tmp-{}",
        file.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
        std::process::id()
    ));
    std::fs::write(&temporary, text)?;
    if let Ok(metadata) = std::fs::metadata(file) {
        std::fs::set_permissions(&temporary, metadata.permissions())?;
    }
    std::fs::rename(&temporary, file).inspect_err(|_| {
        let _ = std::fs::remove_file(&temporary);
    })
}

/// Runs `askuser mcp install ARGS`.
const INSTALL: Command = Command::new("askuser mcp install", USAGE);

pub(crate) fn main(args: &[String]) -> ExitCode {
    let options = match INSTALL.options(args, parse) {
        Ok(options) => options,
        Err(status) => return status,
    };
    match run(options) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("askuser mcp install: {message}");
            ExitCode::from(2)
        }
    }
}

fn run(options: Options) -> Result<ExitCode, String> {
    let Options { host, print, entry } = options;
    let file = host.file(&Places::here()?);
    let shown = quoted(&file);
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
            let undo = if existing.is_some() {
                let backup = backup_path(&file);
                std::fs::copy(&file, &backup).map_err(|e| format!("cannot back up {shown}: {e}"))?;
                format!("mv {} {shown}", quoted(&backup))
            } else {
                format!("rm {shown}")
            };
            write(&file, &text).map_err(|e| format!("cannot write {shown}: {e}"))?;
            let did = if replaced { "replaced the entry" } else { "added" };
            eprintln!(
                "askuser mcp install: {did} {} in {shown} for {}; restart it or reload its MCP servers.\n\
                 To undo: {undo}",
                entry.name, host.title
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_readmes_cursor_link_is_the_default_entry() {
        let readme =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md")).unwrap();
        let entry = Entry { name: "askuser".to_owned(), command: "askuser".to_owned(), timeout_secs: 600 };
        assert!(readme.contains(&format!("[Add to Cursor]({})", cursor_link(&entry))));
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
