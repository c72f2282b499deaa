//! Hook events in, askuser arguments out, and answers back as the CLI's decisions: the pure
//! part of `askuser hook`, tested without a server.

use std::fmt::Write as _;

use askuser_store::{APPROVAL_OPTIONS, MAX_ASKED_BY_CHARS};
use serde_json::{Map, Value, json};

use super::Cli;

/// What the hook was asked, read from the event.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Prompt {
    /// Claude Code's `AskUserQuestion`: the tool's input as it came (its `questions` are kept
    /// verbatim for `updatedInput`), and the arguments to ask askuser with.
    Questions { tool_input: Map<String, Value>, arguments: Value },
    /// A permission prompt: the question's header and text, and Claude Code's
    /// `permission_suggestions` when it offers any ("always allow").
    Approval { header: String, question: String, suggestions: Option<Value> },
}

/// The parts of a hook event the hook reads.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Event {
    pub(crate) session_id: Option<String>,
    pub(crate) cwd: Option<String>,
    pub(crate) tool_use_id: Option<String>,
    pub(crate) prompt: Option<Prompt>,
}

/// Reads a hook event (`hook_event_name`, `tool_name`, `tool_input`, …); `prompt` is `None` for
/// an event the hook does not carry (it steps aside).
///
/// # Errors
///
/// The text is not a JSON object.
pub(crate) fn read_event(cli: Cli, text: &str, home: Option<&str>) -> Result<Event, String> {
    let value: Value =
        serde_json::from_str(text).map_err(|e| format!("the event on stdin is not JSON: {e}"))?;
    let object = value.as_object().ok_or("the event on stdin is not a JSON object")?;
    let text_of = |key: &str| object.get(key).and_then(Value::as_str).map(str::to_owned);
    let event_name = text_of("hook_event_name").unwrap_or_default();
    let tool = text_of("tool_name").unwrap_or_default();
    let cwd = text_of("cwd");
    let who = who_asks(cli, cwd.as_deref(), home);
    let input = object.get("tool_input").and_then(Value::as_object);
    let prompt = match (event_name.as_str(), tool.as_str(), input) {
        ("PreToolUse", "AskUserQuestion", Some(input)) if cli == Cli::ClaudeCode => {
            questions(input).map(|arguments| Prompt::Questions { tool_input: input.clone(), arguments })
        }
        // A bare allow on AskUserQuestion's own permission prompt would skip its menu and give
        // the model empty answers: questions are answered on PreToolUse only.
        ("PermissionRequest", "AskUserQuestion", _) => None,
        ("PermissionRequest", tool, _) if !tool.is_empty() => {
            let empty = Map::new();
            let (header, question) = approval_text(&who, tool, input.unwrap_or(&empty));
            let suggestions = object
                .get("permission_suggestions")
                .filter(|s| cli == Cli::ClaudeCode && s.as_array().is_some_and(|a| !a.is_empty()))
                .cloned();
            Some(Prompt::Approval { header, question, suggestions })
        }
        _ => None,
    };
    Ok(Event { session_id: text_of("session_id"), cwd, tool_use_id: text_of("tool_use_id"), prompt })
}

/// "Claude Code in ~/src/app": the label the person sees beside the question.
pub(crate) fn who_asks(cli: Cli, cwd: Option<&str>, home: Option<&str>) -> String {
    let Some(cwd) = cwd.filter(|c| !c.is_empty()) else { return cli.title().to_owned() };
    let shown = match home.filter(|h| !h.is_empty() && *h != "/") {
        Some(home) if cwd == home => "~".to_owned(),
        Some(home) => cwd
            .strip_prefix(home)
            .filter(|rest| rest.starts_with('/'))
            .map_or_else(|| cwd.to_owned(), |rest| format!("~{rest}")),
        None => cwd.to_owned(),
    };
    let label: String = format!("{} in {}", cli.title(), printable(&shown, false));
    cut(&label, MAX_ASKED_BY_CHARS)
}

/// `AskUserQuestion`'s questions as askuser's arguments (`header`, `question`, `multi_select`,
/// `options` with `label` and `description`); `None` when the input has none.
fn questions(input: &Map<String, Value>) -> Option<Value> {
    let asked = input.get("questions")?.as_array()?;
    let questions: Vec<Value> = asked
        .iter()
        .map(|q| {
            let text = |key: &str| q.get(key).and_then(Value::as_str).unwrap_or_default();
            let mut options: Vec<Value> = q
                .get("options")
                .and_then(Value::as_array)
                .map(|options| {
                    options
                        .iter()
                        .map(|o| {
                            let mut option = json!({ "label": o.get("label").and_then(Value::as_str).unwrap_or_default() });
                            if let Some(description) = o.get("description").and_then(Value::as_str)
                                && !description.trim().is_empty()
                            {
                                option["description"] = description.into();
                            }
                            option
                        })
                        .collect()
                })
                .unwrap_or_default();
            let taken = options.iter().any(|o| o["label"].as_str().is_some_and(|l| l.trim() == AT_THE_TERMINAL));
            if !taken && options.len() < MAX_OPTIONS {
                options.push(json!({"label": AT_THE_TERMINAL,
                    "description": "Withdraw the question here: Claude Code asks in its own menu"}));
            }
            json!({
                "header": text("header"),
                "question": text("question"),
                "multi_select": q.get("multiSelect").and_then(Value::as_bool).unwrap_or(false),
                "options": options,
            })
        })
        .collect();
    (!questions.is_empty()).then(|| json!({ "questions": questions }))
}

/// The option of every carried question that hands it back to the CLI's own menu: picked on any
/// surface, the hook steps aside (docs/contract.md §17: the person may choose the terminal).
pub(crate) const AT_THE_TERMINAL: &str = "Answer at the terminal";

/// The most options a question takes (contract §2): with one more than that, the terminal option is
/// left out.
const MAX_OPTIONS: usize = 6;

/// The most characters of a question's text (contract §10).
const QUESTION_CHARS: usize = 500;

/// The most characters of a header.
const HEADER_CHARS: usize = 25;

/// An approval's header and question text: the tool and its input as code (a command, a file
/// and what changes in it, an MCP tool's arguments), cut to the question's 500 characters.
pub(crate) fn approval_text(who: &str, tool: &str, input: &Map<String, Value>) -> (String, String) {
    let header = cut(&format!("Allow {}?", printable(tool, false)), HEADER_CHARS);
    let text = |key: &str| input.get(key).and_then(Value::as_str);
    let lines = |s: &str| s.lines().count().max(usize::from(!s.is_empty()));
    let (lead, code, note) = match tool {
        "Bash" if text("command").is_some() => (
            format!("{who} asks to run a command:"),
            text("command").unwrap_or_default().to_owned(),
            text("description").map(str::to_owned),
        ),
        "Edit" | "MultiEdit" | "Write" | "NotebookEdit"
            if text("file_path").or(text("notebook_path")).is_some() =>
        {
            let file = text("file_path").or(text("notebook_path")).unwrap_or_default();
            let change = match tool {
                "Write" => {
                    format!("writes the whole file: {} lines", lines(text("content").unwrap_or_default()))
                }
                "MultiEdit" => {
                    format!("{} edits", input.get("edits").and_then(Value::as_array).map_or(0, Vec::len))
                }
                "NotebookEdit" => "edits a notebook cell".to_owned(),
                _ => {
                    let all = if input.get("replace_all").and_then(Value::as_bool) == Some(true) {
                        " (every occurrence)"
                    } else {
                        ""
                    };
                    format!(
                        "replaces {} lines with {} lines{all}",
                        lines(text("old_string").unwrap_or_default()),
                        lines(text("new_string").unwrap_or_default())
                    )
                }
            };
            (format!("{who} asks to change a file ({tool}):"), file.to_owned(), Some(change))
        }
        _ => (
            format!("{who} asks to use the tool {}:", printable(tool, false)),
            serde_json::to_string_pretty(&Value::Object(input.clone())).unwrap_or_default(),
            None,
        ),
    };
    let lead = printable(&lead, false);
    let note = note.map(|n| printable(&n, true));
    // What is left for the code once the lead, the note and the fences are in.
    let fixed = lead.chars().count() + note.as_ref().map_or(0, |n| n.chars().count() + 1) + 2;
    let fence = "`".repeat(longest_backtick_run(&code).max(2) + 1);
    let budget = QUESTION_CHARS.saturating_sub(fixed + 2 * fence.chars().count() + 2);
    let code = printable(&code, true);
    let total = code.chars().count();
    let code = if total > budget {
        let tail = format!("\n… ({total} characters in all)");
        let keep = budget.saturating_sub(tail.chars().count());
        format!("{}{tail}", code.chars().take(keep).collect::<String>())
    } else {
        code
    };
    let mut question = format!("{lead}\n{fence}\n{code}\n{fence}");
    if let Some(note) = note {
        let _ = write!(question, "\n{note}");
    }
    (header, cut(&question, QUESTION_CHARS))
}

fn longest_backtick_run(text: &str) -> usize {
    text.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

/// `text` with what validation refuses made harmless: a tab as four spaces, line breaks kept only
/// when `multiline` (else a space), other control and invisible characters as `�`.
fn printable(text: &str, multiline: bool) -> String {
    text.replace("\r\n", "\n")
        .chars()
        .map(|c| match c {
            '\t' => "    ".to_owned(),
            '\n' if multiline => "\n".to_owned(),
            '\n' | '\r' => " ".to_owned(),
            c if askuser_core::is_forbidden_char(c, multiline) => "\u{fffd}".to_owned(),
            c => c.to_string(),
        })
        .collect()
}

/// `text` cut to `max` characters, ending with `…` when cut.
fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// The arguments of an approval: one question with the options `Allow once` and `Deny`, and
/// `Always allow` when there are suggestions; none is a default.
pub(crate) fn approval_arguments(header: &str, question: &str, always: bool) -> Value {
    let [allow, deny, always_allow] = APPROVAL_OPTIONS;
    let mut options = vec![
        json!({"label": allow, "description": "Allow it this time; the next one is asked again"}),
        json!({"label": deny, "description": "Refuse it. To tell the agent why, type the reason under Other… instead"}),
    ];
    if always {
        options.push(json!({"label": always_allow, "description": "Allow it, and add the rule the CLI suggests so it is not asked again"}));
    }
    json!({"questions": [{"header": header, "question": question, "options": options}]})
}

/// How a settled question ends for the CLI.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Decision {
    /// Print this JSON on stdout.
    Print(Value),
    /// Step aside: print nothing, the CLI asks at its terminal.
    StepAside(&'static str),
}

/// The decision for `AskUserQuestion` answered with `response` (the server validated it
/// against `asked`, the validated questions, which keep the order of `tool_input`'s).
pub(crate) fn question_decision(
    tool_input: &Map<String, Value>,
    asked: &askuser_core::Questions,
    response: &askuser_core::AskUserResponse,
) -> Decision {
    if response.answered_by != askuser_core::AnsweredBy::User {
        return Decision::StepAside("not answered by a person");
    }
    if response.cancelled {
        return Decision::Print(json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "The user declined to answer these questions (through askuser)."
        }}));
    }
    let originals = tool_input.get("questions").and_then(Value::as_array).cloned().unwrap_or_default();
    let mut answers = Map::new();
    for (at, question) in asked.iter().enumerate() {
        let Some(original) = originals.get(at) else { return Decision::StepAside("the questions changed") };
        let Some(answer) = response.answers.iter().find(|a| a.header == question.header()) else {
            return Decision::StepAside("a question has no answer");
        };
        if answer.selected.iter().any(|label| label == AT_THE_TERMINAL) {
            return Decision::StepAside("the person chose to answer at the terminal");
        }
        let text = if let Some(custom) = &answer.custom_answer {
            custom.clone()
        } else {
            let original_labels: Vec<&str> = original
                .get("options")
                .and_then(Value::as_array)
                .map(|o| {
                    o.iter().map(|o| o.get("label").and_then(Value::as_str).unwrap_or_default()).collect()
                })
                .unwrap_or_default();
            // The person's picks in the order picked, as Claude Code's own menu lists them
            // (measured: Tracing then Backups gives "Tracing, Backups"), by the labels Claude
            // Code gave (the server's are the same after its trimming).
            let mut picked: Vec<usize> = Vec::new();
            for label in &answer.selected {
                if let Some(n) = question.options().iter().position(|o| o.label() == label)
                    && !picked.contains(&n)
                {
                    picked.push(n);
                }
            }
            let labels: Option<Vec<&str>> = picked.iter().map(|&n| original_labels.get(n).copied()).collect();
            let Some(labels) = labels.filter(|l| !l.is_empty()) else {
                return Decision::StepAside("an answer picks no option");
            };
            labels.join(", ")
        };
        let key = original.get("question").and_then(Value::as_str).unwrap_or_default().to_owned();
        answers.insert(key, Value::String(text));
    }
    let mut updated = tool_input.clone();
    updated.insert("answers".to_owned(), Value::Object(answers));
    Decision::Print(json!({"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "allow",
        "updatedInput": Value::Object(updated)
    }}))
}

/// The decision for a permission prompt answered with `response`: only a person's answer counts;
/// a typed answer (Other…) or a decline denies, with the text as the reason the model reads.
pub(crate) fn approval_decision(
    cli: Cli,
    response: &askuser_core::AskUserResponse,
    suggestions: Option<&Value>,
) -> Decision {
    if response.answered_by != askuser_core::AnsweredBy::User {
        return Decision::StepAside("not answered by a person");
    }
    let deny = |message: String| {
        json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
            "decision": {"behavior": "deny", "message": message}}})
    };
    if response.cancelled {
        return Decision::Print(deny("The user declined this request (through askuser).".to_owned()));
    }
    let Some(answer) = response.answers.first() else { return Decision::StepAside("no answer") };
    if let Some(reason) = &answer.custom_answer {
        return Decision::Print(deny(format!("The user denied this request (through askuser): {reason}")));
    }
    let allow = |extra: Option<&Value>| {
        let mut decision = json!({"behavior": "allow"});
        if let Some(rules) = extra {
            decision["updatedPermissions"] = rules.clone();
        }
        json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}})
    };
    match answer.selected.as_slice() {
        [one] if one == APPROVAL_OPTIONS[0] => Decision::Print(allow(None)),
        [one] if one == APPROVAL_OPTIONS[1] => {
            Decision::Print(deny("The user denied this request (through askuser).".to_owned()))
        }
        // Codex refuses updatedPermissions (it fails closed): "Always allow" is never offered there.
        [one] if one == APPROVAL_OPTIONS[2] && cli == Cli::ClaudeCode && suggestions.is_some() => {
            Decision::Print(allow(suggestions))
        }
        _ => Decision::StepAside("an answer that is not one of the approval's options"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check_who(cwd: Option<&str>, home: Option<&str>, expected: &str) {
        assert_eq!(who_asks(Cli::ClaudeCode, cwd, home), expected);
    }

    #[test]
    fn who_asks_names_the_cli_and_the_folder() {
        check_who(Some("/home/me/src/app"), Some("/home/me"), "Claude Code in ~/src/app");
        check_who(Some("/home/me"), Some("/home/me"), "Claude Code in ~");
        check_who(Some("/home/meadow/x"), Some("/home/me"), "Claude Code in /home/meadow/x");
        check_who(Some("/srv/x"), None, "Claude Code in /srv/x");
        check_who(None, Some("/home/me"), "Claude Code");
        check_who(Some("/tmp/a\tb\u{202e}"), None, "Claude Code in /tmp/a    b\u{fffd}");
    }

    #[test]
    fn a_bash_approval_shows_the_command_as_code_and_fits_the_limits() {
        let input = json!({"command": "rm -rf build\necho ```done```", "description": "Clean the build"});
        let (header, question) = approval_text("Claude Code in ~/app", "Bash", input.as_object().unwrap());
        assert_eq!(header, "Allow Bash?");
        assert_eq!(
            question,
            "Claude Code in ~/app asks to run a command:\n````\nrm -rf build\necho ```done```\n````\nClean the build"
        );
        let long = json!({"command": "x".repeat(2000)});
        let (_, question) = approval_text("Codex in ~", "Bash", long.as_object().unwrap());
        assert!(question.chars().count() <= QUESTION_CHARS, "{}", question.chars().count());
        assert!(question.contains("… (2000 characters in all)\n```"), "{question}");
        let (header, _) = approval_text("x", "mcp__a_very_long_server_name__and_tool", &Map::new());
        assert_eq!(header.chars().count(), HEADER_CHARS);
    }

    #[test]
    fn an_edit_approval_names_the_file_and_what_changes() {
        let input = json!({"file_path": "/src/a.rs", "old_string": "a\nb", "new_string": "c\nd\ne"});
        let (_, question) = approval_text("Claude Code", "Edit", input.as_object().unwrap());
        assert_eq!(
            question,
            "Claude Code asks to change a file (Edit):\n```\n/src/a.rs\n```\nreplaces 2 lines with 3 lines"
        );
    }

    #[test]
    fn the_approvals_options_are_the_servers() {
        let arguments = approval_arguments("Allow Bash?", "run it?", true);
        let labels: Vec<&str> = arguments["questions"][0]["options"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["label"].as_str().unwrap())
            .collect();
        assert_eq!(labels, APPROVAL_OPTIONS);
    }

    #[test]
    fn only_a_persons_answer_decides_an_approval() {
        use askuser_core::{AnsweredBy, AskUserAnswer, AskUserResponse};
        let allow = AskUserResponse::answered(vec![AskUserAnswer::picked("Allow Bash?", ["Allow once"])]);
        assert_eq!(
            approval_decision(Cli::Codex, &allow, None),
            Decision::Print(
                json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}})
            )
        );
        for by in [AnsweredBy::Timeout, AnsweredBy::Unattended] {
            assert!(matches!(
                approval_decision(Cli::ClaudeCode, &allow.clone().with_answered_by(by), None),
                Decision::StepAside(_)
            ));
        }
        let always = AskUserResponse::answered(vec![AskUserAnswer::picked("Allow Bash?", ["Always allow"])]);
        let rules = json!([{"type": "addRules", "rules": [{"toolName": "Bash"}], "behavior": "allow", "destination": "localSettings"}]);
        assert!(matches!(approval_decision(Cli::Codex, &always, Some(&rules)), Decision::StepAside(_)));
        assert_eq!(
            approval_decision(Cli::ClaudeCode, &always, Some(&rules)),
            Decision::Print(json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                "decision": {"behavior": "allow", "updatedPermissions": rules}}}))
        );
        let reason =
            AskUserResponse::answered(vec![AskUserAnswer::custom("Allow Bash?", "use the test folder")]);
        assert_eq!(
            approval_decision(Cli::ClaudeCode, &reason, None),
            Decision::Print(json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                "decision": {"behavior": "deny", "message": "The user denied this request (through askuser): use the test folder"}}}))
        );
    }

    #[test]
    fn every_question_offers_the_terminal_and_picking_it_steps_aside() {
        use askuser_core::{AskUserAnswer, AskUserResponse, Validator};
        let input = json!({"questions": [
            {"question": "Which?", "header": "Pick", "multiSelect": false,
             "options": [{"label": "A", "description": "a"}, {"label": "B", "description": "b"}]},
            {"question": "More?", "header": "More", "multiSelect": true,
             "options": [{"label": "C", "description": "c"}, {"label": "Answer at the terminal", "description": "x"}]}
        ]});
        let event =
            json!({"hook_event_name": "PreToolUse", "tool_name": "AskUserQuestion", "tool_input": input});
        let Some(Prompt::Questions { tool_input, arguments }) =
            read_event(Cli::ClaudeCode, &event.to_string(), None).unwrap().prompt
        else {
            panic!("not carried")
        };
        let labels = |n: usize| -> Vec<String> {
            arguments["questions"][n]["options"]
                .as_array()
                .unwrap()
                .iter()
                .map(|o| o["label"].as_str().unwrap().to_owned())
                .collect()
        };
        assert_eq!(labels(0), ["A", "B", AT_THE_TERMINAL]);
        // Claude Code's own option of that label is kept, not doubled.
        assert_eq!(labels(1), ["C", AT_THE_TERMINAL]);
        let asked = Validator::new().validate_value(&arguments).unwrap();
        let terminal = AskUserResponse::answered(vec![
            AskUserAnswer::picked("Pick", [AT_THE_TERMINAL]),
            AskUserAnswer::picked("More", ["C"]),
        ]);
        assert!(matches!(question_decision(&tool_input, &asked, &terminal), Decision::StepAside(_)));
        let picked = AskUserResponse::answered(vec![
            AskUserAnswer::picked("Pick", ["B"]),
            AskUserAnswer::picked("More", ["C"]),
        ]);
        let Decision::Print(printed) = question_decision(&tool_input, &asked, &picked) else { panic!() };
        assert_eq!(
            printed["hookSpecificOutput"]["updatedInput"]["answers"],
            json!({"Which?": "B", "More?": "C"})
        );
    }

    #[test]
    fn askuser_question_on_its_permission_prompt_steps_aside() {
        let event = r#"{"hook_event_name":"PermissionRequest","tool_name":"AskUserQuestion","tool_input":{"questions":[]}}"#;
        assert_eq!(read_event(Cli::ClaudeCode, event, None).unwrap().prompt, None);
        let other = r#"{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{}}"#;
        assert_eq!(read_event(Cli::ClaudeCode, other, None).unwrap().prompt, None);
        assert!(read_event(Cli::ClaudeCode, "[1]", None).unwrap_err().contains("not a JSON object"));
    }
}
