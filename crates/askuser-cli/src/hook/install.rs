//! `askuser hook install claude-code|codex`: writes the hook into the CLI's settings, merged with
//! what is there (other hooks, comments and layout kept), idempotent, backed up, with the undo
//! command printed. The file handling is `askuser mcp install`'s (`crate::install`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::cli::{self, Args, Command};
use serde_json::{Value, json};

use super::{Cli, DEFAULT_WAIT_SECS};
use crate::install::{Places, default_command, jsonc, quoted, replace, target};

const USAGE: &str = "\
usage: askuser hook install claude-code|codex [options]

Writes askuser's hook into the CLI's settings, so that its questions and permission prompts reach
the answer server (askuser serve). Other hooks, comments and the file's layout are kept; a
changed file is backed up first (FILE.askuser-bak-SECONDS) and the command that undoes the change
is printed. Running it again changes nothing.

  claude-code   ~/.claude/settings.json (--project: .claude/settings.json here): PreToolUse
                for AskUserQuestion, and PermissionRequest for every tool
  codex         $CODEX_HOME/config.toml (default ~/.codex; --project: .codex/config.toml here):
                PermissionRequest. Codex asks you to trust a new or changed hook at its next
                start; askuser does not do that for you

options:
  --server URL       the answer server the hook asks (default http://127.0.0.1:8765)
  --token-file PATH  the API token file the hook reads (default: ASKUSER_TOKEN, else the file
                     askuser serve makes)
  --wait SECS        how long a question waits for an answer before the CLI asks at its
                     terminal (default 600); the hook's timeout in the settings is 60 s longer
  --project          write the project's settings in this directory instead of the user's
  --print            print the file as it would be written; write nothing
  --command CMD      the askuser command the CLI runs (default: askuser when that is this
                     program on PATH, else this program's full path)
";

#[derive(Debug)]
struct Options {
    cli: Cli,
    server: Option<String>,
    token_file: Option<PathBuf>,
    wait_secs: u64,
    project: bool,
    print: bool,
    command: Option<String>,
}

fn parse(mut args: Args) -> Result<Options, String> {
    let mut options = Options {
        cli: Cli::ClaudeCode,
        server: None,
        token_file: None,
        wait_secs: DEFAULT_WAIT_SECS,
        project: false,
        print: false,
        command: None,
    };
    let mut cli = None;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--server" => {
                let url = args.value(&arg, "a URL")?;
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    return Err(format!("--server takes an http:// or https:// URL, got {url:?}"));
                }
                options.server = Some(url);
            }
            "--token-file" => {
                let path = PathBuf::from(args.value(&arg, "a path")?);
                // The CLI runs the hook from the project's directory: the path must not depend on it.
                options.token_file =
                    Some(std::path::absolute(&path).map_err(|e| format!("--token-file: {e}"))?);
            }
            "--wait" => {
                let text = args.value(&arg, "a number of seconds")?;
                options.wait_secs = text
                    .parse::<u64>()
                    .ok()
                    .filter(|s| (1..=86_400).contains(s))
                    .ok_or(format!("--wait takes whole seconds from 1 to 86400, got {text:?}"))?;
            }
            "--project" => options.project = true,
            "--print" => options.print = true,
            "--command" => options.command = Some(args.value(&arg, "a command")?),
            other if other.starts_with('-') => return Err(cli::unknown(other)),
            other if cli.is_none() => {
                cli = Some(
                    Cli::of(other)
                        .ok_or_else(|| format!("unknown CLI {other:?}; one of claude-code, codex"))?,
                );
            }
            other => return Err(cli::unknown(other)),
        }
    }
    options.cli = cli.ok_or("which CLI? claude-code or codex")?;
    Ok(options)
}

/// A word for a POSIX shell: both CLIs run a hook's command through one.
fn shell_word(word: &str) -> String {
    quoted(Path::new(word))
}

/// The hook's command line.
fn hook_command(options: &Options, program: &str) -> String {
    let mut words = vec![shell_word(program), "hook".to_owned(), options.cli.id().to_owned()];
    if let Some(server) = &options.server {
        words.extend(["--server".to_owned(), shell_word(server)]);
    }
    if let Some(path) = &options.token_file {
        words.extend(["--token-file".to_owned(), quoted(path)]);
    }
    if options.wait_secs != DEFAULT_WAIT_SECS {
        words.extend(["--wait".to_owned(), options.wait_secs.to_string()]);
    }
    words.join(" ")
}

/// Whether a hook command is one of askuser's for `cli` (so installing again replaces it).
fn is_ours(command: &str, cli: Cli) -> bool {
    // The first word as `quoted` writes it: bare, or in single quotes.
    let (program, rest) = match command.strip_prefix('\'') {
        Some(quoted) => quoted.split_once('\'').unwrap_or((quoted, "")),
        None => command.split_once(' ').unwrap_or((command, "")),
    };
    let mut words = rest.split_whitespace();
    let program_name = program.rsplit(['/', '\\']).next().unwrap_or_default();
    program_name.starts_with("askuser") && words.next() == Some("hook") && words.next() == Some(cli.id())
}

/// The hook's timeout in the settings, in seconds: the wait and a minute, so that the hook, not
/// the CLI, ends a wait (and withdraws the question first).
fn timeout_secs(options: &Options) -> u64 {
    options.wait_secs + 60
}

/// `groups` (a Claude Code event's hook groups) without askuser's hooks, and with `ours` last.
fn merged_groups(groups: Option<&Value>, ours: Value, cli: Cli) -> Result<Value, String> {
    let mut kept = Vec::new();
    if let Some(groups) = groups {
        let groups = groups.as_array().ok_or("is not an array")?;
        for group in groups {
            let mut group = group.clone();
            if let Some(hooks) = group.get_mut("hooks").and_then(Value::as_array_mut) {
                let before = hooks.len();
                hooks.retain(|h| !h.get("command").and_then(Value::as_str).is_some_and(|c| is_ours(c, cli)));
                if before > 0 && hooks.is_empty() {
                    continue;
                }
            }
            kept.push(group);
        }
    }
    kept.push(ours);
    Ok(Value::Array(kept))
}

/// Claude Code's settings with askuser's hooks merged in; `None` when they are there already.
pub(crate) fn merge_claude(text: &str, command: &str, timeout: u64) -> Result<Option<String>, String> {
    let hook = json!({"type": "command", "command": command, "timeout": timeout});
    let mut text = text.to_owned();
    let mut changed = false;
    for (event, matcher) in [("PreToolUse", "AskUserQuestion"), ("PermissionRequest", "*")] {
        let existing = jsonc::get(&text, "hooks", event)?;
        let ours = json!({"matcher": matcher, "hooks": [hook.clone()]});
        let merged = merged_groups(existing.as_ref(), ours, Cli::ClaudeCode)
            .map_err(|e| format!("hooks.{event} {e}"))?;
        if existing.as_ref() != Some(&merged) {
            text = jsonc::set(&text, "hooks", event, &merged)?;
            changed = true;
        }
    }
    Ok(changed.then_some(text))
}

/// Codex's `config.toml` with askuser's `PermissionRequest` hook merged in; `None` when it is
/// there already.
pub(crate) fn merge_codex(text: &str, command: &str, timeout: u64) -> Result<Option<String>, String> {
    use toml_edit::{ArrayOfTables, DocumentMut, Item, Table, value};
    let mut doc: DocumentMut = text.parse().map_err(|e| format!("not valid TOML: {e}"))?;
    let hooks = doc.entry("hooks").or_insert_with(|| {
        let mut table = Table::new();
        table.set_implicit(true);
        Item::Table(table)
    });
    let hooks = hooks.as_table_mut().ok_or("hooks is not a table")?;
    let groups = hooks
        .entry("PermissionRequest")
        .or_insert_with(|| Item::ArrayOfTables(ArrayOfTables::new()))
        .as_array_of_tables_mut()
        .ok_or("hooks.PermissionRequest is not an array of tables ([[hooks.PermissionRequest]]); edit it by hand")?;
    let ours_in = |group: &Table| {
        group.get("hooks").and_then(Item::as_array_of_tables).is_some_and(|hooks| {
            hooks
                .iter()
                .any(|h| h.get("command").and_then(Item::as_str).is_some_and(|c| is_ours(c, Cli::Codex)))
        })
    };
    let exact = |group: &Table| {
        group.get("hooks").and_then(Item::as_array_of_tables).is_some_and(|hooks| {
            hooks.len() == 1
                && hooks.iter().all(|h| {
                    h.get("type").and_then(Item::as_str) == Some("command")
                        && h.get("command").and_then(Item::as_str) == Some(command)
                        && h.get("timeout").and_then(Item::as_integer) == i64::try_from(timeout).ok()
                })
        }) && group.len() == 1
    };
    let mine: Vec<usize> = groups.iter().enumerate().filter(|(_, g)| ours_in(g)).map(|(n, _)| n).collect();
    if let [only] = mine.as_slice()
        && groups.get(*only).is_some_and(exact)
    {
        return Ok(None);
    }
    for n in mine.into_iter().rev() {
        let group = groups.get_mut(n).ok_or("hooks.PermissionRequest changed while read")?;
        if let Some(hooks) = group.get_mut("hooks").and_then(Item::as_array_of_tables_mut) {
            hooks
                .retain(|h| !h.get("command").and_then(Item::as_str).is_some_and(|c| is_ours(c, Cli::Codex)));
            if hooks.is_empty() {
                groups.remove(n);
            }
        }
    }
    let mut hook = Table::new();
    hook.insert("type", value("command"));
    hook.insert("command", value(command));
    hook.insert("timeout", value(i64::try_from(timeout).map_err(|_| "--wait is too large")?));
    let mut inner = ArrayOfTables::new();
    inner.push(hook);
    let mut group = Table::new();
    group.insert("hooks", Item::ArrayOfTables(inner));
    groups.push(group);
    Ok(Some(doc.to_string()))
}

fn settings_file(options: &Options, places: &Places) -> PathBuf {
    match (options.cli, options.project) {
        (Cli::ClaudeCode, false) => places.home.join(".claude/settings.json"),
        (Cli::ClaudeCode, true) => places.cwd.join(".claude/settings.json"),
        (Cli::Codex, false) => {
            places.codex_home.clone().unwrap_or_else(|| places.home.join(".codex")).join("config.toml")
        }
        (Cli::Codex, true) => places.cwd.join(".codex/config.toml"),
    }
}

const INSTALL: Command = Command::new("askuser hook install", USAGE);

/// `askuser hook install ARGS`.
pub(crate) fn main(args: &[String]) -> ExitCode {
    let options = match INSTALL.options(args, parse) {
        Ok(options) => options,
        Err(status) => return status,
    };
    match run(&options) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("askuser hook install: {message}");
            ExitCode::from(2)
        }
    }
}

fn run(options: &Options) -> Result<(), String> {
    let places = Places::here()?;
    // A link at the settings file (or at a folder on the way in a project) is refused, as for
    // `mcp install`.
    let settings = settings_file(options, &places);
    let base = if options.project {
        places.cwd.clone()
    } else {
        settings.parent().map_or_else(|| places.home.clone(), std::path::Path::to_owned)
    };
    let file = target(settings, &base, None)?;
    let shown = quoted(&file);
    let program = match &options.command {
        Some(command) => command.clone(),
        None => default_command()?,
    };
    let command = hook_command(options, &program);
    let existing = match std::fs::read_to_string(&file) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(format!("cannot read {shown}: {e}")),
    };
    let text = existing.as_deref().unwrap_or("");
    let merged = match options.cli {
        Cli::ClaudeCode => merge_claude(text, &command, timeout_secs(options)),
        Cli::Codex => merge_codex(text, &command, timeout_secs(options)),
    }
    .map_err(|e| format!("{shown}: {e}"))?;
    let title = options.cli.title();
    let trust = if options.cli == Cli::Codex {
        "\nCodex asks you to review and trust the new hook at its next start (\"Hooks need review\"): \
         trust it there; until then Codex runs without it."
    } else {
        ""
    };
    match merged {
        None => {
            if options.print {
                crate::print_result(text.trim_end()).map_err(|_| "cannot write to stdout".to_owned())?;
            }
            eprintln!("askuser hook install: {title}'s hook is in {shown} already; nothing changed");
        }
        Some(text) if options.print => {
            crate::print_result(text.trim_end()).map_err(|_| "cannot write to stdout".to_owned())?;
            eprintln!("askuser hook install: --print: {shown} was not written");
        }
        Some(text) => {
            let undo = replace(&file, existing.as_deref(), &text, &shown)?;
            eprintln!(
                "askuser hook install: added askuser's hook to {shown} for {title} (it runs: {command}).\n\
                 Questions and permission prompts now go to the answer server; start it with askuser serve.{trust}\n\
                 To undo: {undo}"
            );
        }
    }
    if let Some(path) = options.token_file.as_ref().filter(|p| !p.exists()) {
        eprintln!(
            "askuser hook install: note: {} does not exist yet: askuser serve --token-file {} creates it",
            quoted(path),
            quoted(path)
        );
    }
    if !cfg!(feature = "server") && options.command.is_none() {
        eprintln!(
            "askuser hook install: note: this askuser was built without `askuser hook`; install the full one first"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const COMMAND: &str = "askuser hook claude-code --server http://127.0.0.1:8765";

    #[test]
    fn claude_settings_keep_other_hooks_and_comments_and_merge_once() {
        let before = r#"{
  // mine
  "model": "opus",
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "lint.sh"}]},
      {"matcher": "AskUserQuestion", "hooks": [{"type": "command", "command": "/old/askuser hook claude-code", "timeout": 30}]}
    ]
  }
}
"#;
        let after = merge_claude(before, COMMAND, 660).unwrap().unwrap();
        assert!(after.starts_with("{\n  // mine\n  \"model\": \"opus\",\n"), "{after}");
        let pre = jsonc::get(&after, "hooks", "PreToolUse").unwrap().unwrap();
        assert_eq!(
            pre,
            json!([
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "lint.sh"}]},
                {"matcher": "AskUserQuestion", "hooks": [{"type": "command", "command": COMMAND, "timeout": 660}]}
            ])
        );
        let permission = jsonc::get(&after, "hooks", "PermissionRequest").unwrap().unwrap();
        assert_eq!(
            permission,
            json!([{"matcher": "*", "hooks": [{"type": "command", "command": COMMAND, "timeout": 660}]}])
        );
        assert_eq!(merge_claude(&after, COMMAND, 660).unwrap(), None);
        let fresh = merge_claude("", COMMAND, 660).unwrap().unwrap();
        assert_eq!(merge_claude(&fresh, COMMAND, 660).unwrap(), None);
        serde_json::from_str::<Value>(&fresh).unwrap();
    }

    #[test]
    fn codex_config_keeps_the_rest_and_merges_once() {
        let before = "model = \"o4\"\n\n[[hooks.PermissionRequest]]\n[[hooks.PermissionRequest.hooks]]\ntype = \"command\"\ncommand = \"audit.sh\"\n\n[hooks.state]\nx = 1\n";
        let command = "askuser hook codex --token-file /t";
        let after = merge_codex(before, command, 660).unwrap().unwrap();
        assert!(after.starts_with("model = \"o4\"\n"), "{after}");
        assert!(after.contains("command = \"audit.sh\""), "{after}");
        assert!(after.contains("[hooks.state]\nx = 1"), "{after}");
        assert!(after.contains("command = \"askuser hook codex --token-file /t\"\ntimeout = 660"), "{after}");
        assert_eq!(merge_codex(&after, command, 660).unwrap(), None);
        let changed = merge_codex(&after, "askuser hook codex", 120).unwrap().unwrap();
        assert_eq!(changed.matches("hook codex").count(), 1, "{changed}");
    }

    #[test]
    fn only_askusers_own_hook_commands_are_replaced() {
        for (command, ours) in [
            ("askuser hook claude-code", true),
            ("'/opt/my dir/askuser' hook claude-code --wait 5", true),
            ("/usr/bin/askuser hook codex", false),
            ("echo askuser hook claude-code", false),
            ("my-askuser-wrapper.sh", false),
        ] {
            assert_eq!(is_ours(command, Cli::ClaudeCode), ours, "{command}");
        }
    }
}
