//! `askuser hook claude-code|codex`: an agent CLI's hook (the event on stdin, the decision on
//! stdout) that carries the CLI's own prompts to the answer server (`askuser serve`), so a person
//! answers them on the page, from a notice, in Telegram or Slack, or through the JSON API.
//!
//! - Claude Code's `AskUserQuestion` (`PreToolUse`) becomes a question; the answer goes back as
//!   the tool's `updatedInput` with `answers`, which gives the model exactly the bytes a local
//!   answer in Claude Code's menu gives.
//! - A permission prompt (`PermissionRequest`, Claude Code and Codex) becomes an approval: one
//!   question with the options `Allow once` and `Deny` (and `Always allow` where Claude Code
//!   offers a rule), stored under askuser-store's `APPROVAL_TOOL_NAME`, which the server never lets a one-tap
//!   link or anything but a person answer.
//!
//! Whenever askuser cannot or does not answer (no server, a refused token, nobody answered within
//! `--wait`, the CLI stopped waiting), the hook steps aside: it exits 0 and prints nothing, and
//! the CLI asks at its terminal. It never answers for the person. `askuser hook install` (in
//! [`install`]) writes the hook into the CLIs' settings.

pub(crate) mod install;
#[cfg(feature = "server")]
mod prompt;
#[cfg(feature = "server")]
mod run;

use std::process::ExitCode;

const USAGE: &str = "\
usage: askuser hook claude-code|codex [options]     (run by the CLI: the event on stdin)
       askuser hook install claude-code|codex [options]

Carries Claude Code's own questions (AskUserQuestion) and permission prompts, and Codex's
approvals, to the answer server (askuser serve): its page, notices, Telegram, Slack, the JSON
API. When askuser cannot or does not answer (no server, nobody answered within --wait, Esc in
the CLI) the hook steps aside and the CLI asks at its terminal. See docs/hooks.md.

options:
  --server URL       the answer server (default http://127.0.0.1:8765)
  --token-file PATH  the API token (default: ASKUSER_TOKEN, else the file askuser serve makes)
  --wait SECS        how long a question waits on the server before the terminal asks
                     (default 600)

askuser hook install --help: writing the hook into the CLI's settings.
";

/// The hook's default wait for an answer: ten minutes, then the terminal asks.
pub(crate) const DEFAULT_WAIT_SECS: u64 = 600;

/// The default answer server.
#[cfg(feature = "server")]
pub(crate) const DEFAULT_SERVER: &str = "http://127.0.0.1:8765";

/// The agent CLI a hook runs for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cli {
    ClaudeCode,
    Codex,
}

impl Cli {
    pub(crate) fn id(self) -> &'static str {
        match self {
            Self::ClaudeCode => "claude-code",
            Self::Codex => "codex",
        }
    }

    pub(crate) fn title(self) -> &'static str {
        match self {
            Self::ClaudeCode => "Claude Code",
            Self::Codex => "Codex",
        }
    }

    fn of(word: &str) -> Option<Self> {
        [Self::ClaudeCode, Self::Codex].into_iter().find(|cli| cli.id() == word)
    }
}

/// `askuser hook ARGS`.
pub(crate) fn main(args: &[String]) -> ExitCode {
    let command = crate::cli::Command::new("askuser hook", USAGE);
    let first = args.first().map(String::as_str);
    match (first, first.and_then(Cli::of)) {
        (Some("install"), _) => install::main(&args[1..]),
        (_, Some(_)) if crate::cli::wants_help(&args[1..]) => command.help(),
        (_, Some(cli)) => hook(cli, &args[1..]),
        (Some("-h" | "--help") | None, _) => command.help(),
        (Some(other), None) => {
            command.usage_error(&format!("unknown CLI {other:?}; one of claude-code, codex, or install"))
        }
    }
}

#[cfg(feature = "server")]
fn hook(cli: Cli, args: &[String]) -> ExitCode {
    run::main(cli, args)
}

#[cfg(not(feature = "server"))]
fn hook(cli: Cli, args: &[String]) -> ExitCode {
    let mut all = vec![cli.id().to_owned()];
    all.extend_from_slice(args);
    crate::missing::report("hook", "server", &all)
}
