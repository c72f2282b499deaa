//! `askuser schema [--dialect generic|openai-strict|anthropic|gemini]`: print the parameters
//! schema of `ask_user_question`, canonical (with `$defs`, as in `schema/ask_user_question.json`)
//! or in a provider's dialect.

use std::process::ExitCode;

use askuser_tool::{Dialect, parameters, parameters_schema};

pub(crate) fn main(args: &[String]) -> ExitCode {
    let dialect = match args {
        [] => None,
        [flag, name] if flag == "--dialect" => match name.parse::<Dialect>() {
            Ok(dialect) => Some(dialect),
            Err(e) => return usage_error(&e.to_string()),
        },
        [flag] if flag.starts_with("--dialect=") => match flag["--dialect=".len()..].parse::<Dialect>() {
            Ok(dialect) => Some(dialect),
            Err(e) => return usage_error(&e.to_string()),
        },
        _ => return usage_error(&format!("unexpected arguments {args:?}")),
    };
    let schema = dialect.map_or_else(parameters_schema, parameters);
    match serde_json::to_string_pretty(&schema) {
        Ok(text) => {
            println!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("askuser schema: {e}");
            ExitCode::FAILURE
        }
    }
}

fn usage_error(message: &str) -> ExitCode {
    eprintln!(
        "askuser schema: {message}\nusage: askuser schema [--dialect generic|openai-strict|anthropic|gemini]"
    );
    ExitCode::from(2)
}
