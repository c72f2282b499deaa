//! `askuser schema [--dialect generic|openai-strict|anthropic|gemini]`: print the parameters
//! schema of `ask_user_question`, canonical (with `$defs`, as in `schema/ask_user_question.json`)
//! or in a provider's dialect.

use std::process::ExitCode;

use askuser_tool::{Dialect, parameters, parameters_schema};

pub(crate) fn main(args: &[String]) -> ExitCode {
    match render(args) {
        Ok(text) => crate::print_result(&text).map_or_else(|code| code, |()| ExitCode::SUCCESS),
        Err(message) => {
            eprintln!(
                "askuser schema: {message}\nusage: askuser schema [--dialect generic|openai-strict|anthropic|gemini]"
            );
            ExitCode::from(2)
        }
    }
}

/// The pretty JSON to print for `args`, or a usage error.
fn render(args: &[String]) -> Result<String, String> {
    let dialect = match args {
        [] => None,
        [flag, name] if flag == "--dialect" => Some(name.parse::<Dialect>().map_err(|e| e.to_string())?),
        [flag] if flag.starts_with("--dialect=") => {
            Some(flag["--dialect=".len()..].parse::<Dialect>().map_err(|e| e.to_string())?)
        }
        _ => return Err(format!("unexpected arguments {args:?}")),
    };
    let schema = dialect.map_or_else(parameters_schema, parameters);
    serde_json::to_string_pretty(&schema).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    #[track_caller]
    fn check(args: &[&str], expected: Result<Value, &str>) {
        let args: Vec<String> = args.iter().map(|&a| a.to_owned()).collect();
        let got = render(&args).map(|text| serde_json::from_str::<Value>(&text).expect("JSON"));
        assert_eq!(got, expected.map_err(str::to_owned));
    }

    #[test]
    fn prints_the_canonical_schema_or_a_dialect() {
        check(&[], Ok(parameters_schema()));
        for dialect in Dialect::ALL {
            check(&["--dialect", dialect.name()], Ok(parameters(dialect)));
            check(&[&format!("--dialect={dialect}")], Ok(parameters(dialect)));
        }
        check(
            &["--dialect", "openai"],
            Err(r#"unknown schema dialect "openai" (expected generic, openai-strict, anthropic or gemini)"#),
        );
        check(&["--dialect"], Err(r#"unexpected arguments ["--dialect"]"#));
        check(&["gemini"], Err(r#"unexpected arguments ["gemini"]"#));
    }
}
