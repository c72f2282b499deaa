//! `askuser schema [--profile P] [--dialect D] [--tool | --instructions]`: print the parameters
//! schema of `ask_user_question`, canonical (with `$defs`, as in `schema/ask_user_question.json`)
//! or in a provider's dialect; or the whole tool definition (name, description, parameters), or
//! the system-prompt instructions, for an agent written in another language.

use std::process::ExitCode;

use crate::cli::{self, Args, Command};
use askuser_core::Profile;
use askuser_tool::{
    Dialect, EXTENDED_INSTRUCTIONS, INSTRUCTIONS, ToolDefinition, parameters_for, parameters_schema_for,
};

const USAGE: &str = "\
usage: askuser schema [--profile reference|extended] [--dialect DIALECT] [--tool | --instructions]

Prints the JSON Schema of ask_user_question's arguments on stdout: canonical (with $defs, as in
schema/ask_user_question.json) or, with --dialect, in a provider's dialect.

  --profile PROFILE   reference (default) or extended (text and secret questions, ids, defaults)
  --dialect DIALECT   generic, openai-strict, anthropic or gemini
  --tool              the whole tool definition: {\"name\",\"description\",\"parameters\"}
                      (the parameters in --dialect, generic by default)
  --instructions      the system-prompt text that goes with the tool (plain text)

exit status: 0, 2 usage error, 4 stdout could not be written
";

const SCHEMA: Command = Command::new("askuser schema", USAGE);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum What {
    Parameters,
    Tool,
    Instructions,
}

#[derive(Debug, PartialEq, Eq)]
struct Options {
    profile: Profile,
    dialect: Option<Dialect>,
    what: What,
}

pub(crate) fn main(args: &[String]) -> ExitCode {
    let text = SCHEMA.options(args, parse).and_then(|options| {
        render(&options).map_err(|e| {
            eprintln!("askuser schema: {e}");
            ExitCode::FAILURE
        })
    });
    match text {
        Ok(text) => crate::print_result(&text).map_or_else(|code| code, |()| ExitCode::SUCCESS),
        Err(status) => status,
    }
}

fn parse(mut args: Args) -> Result<Options, String> {
    let mut options = Options { profile: Profile::Reference, dialect: None, what: What::Parameters };
    let chosen = |options: &mut Options, what: What| {
        if options.what != What::Parameters && options.what != what {
            return Err("--tool and --instructions exclude each other".to_owned());
        }
        options.what = what;
        Ok(())
    };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--profile" => options.profile = cli::profile(&arg, &args.value(&arg, "reference or extended")?)?,
            "--dialect" => {
                let name = args.value(&arg, "generic, openai-strict, anthropic or gemini")?;
                options.dialect = Some(name.parse::<Dialect>().map_err(|e| e.to_string())?);
            }
            "--tool" => chosen(&mut options, What::Tool)?,
            "--instructions" => chosen(&mut options, What::Instructions)?,
            other => return Err(cli::unknown(other)),
        }
    }
    if options.what == What::Instructions && options.dialect.is_some() {
        return Err("--instructions is plain text: it takes no --dialect".to_owned());
    }
    Ok(options)
}

/// The text to print for `options`.
fn render(options: &Options) -> Result<String, serde_json::Error> {
    match options.what {
        What::Parameters => serde_json::to_string_pretty(&match options.dialect {
            None => parameters_schema_for(options.profile),
            Some(dialect) => parameters_for(options.profile, dialect),
        }),
        What::Tool => serde_json::to_string_pretty(&ToolDefinition::for_profile(
            options.profile,
            options.dialect.unwrap_or(Dialect::Generic),
        )),
        What::Instructions => Ok(match options.profile {
            Profile::Extended => EXTENDED_INSTRUCTIONS,
            _ => INSTRUCTIONS,
        }
        .to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;
    use askuser_tool::{DESCRIPTION, EXTENDED_DESCRIPTION, parameters, parameters_schema};

    fn options(args: &[&str]) -> Result<Options, String> {
        let args: Vec<String> = args.iter().map(|&a| a.to_owned()).collect();
        parse(Args::new(&args))
    }

    #[track_caller]
    fn check(args: &[&str], expected: Result<Value, &str>) {
        let got = options(args).map(|o| serde_json::from_str::<Value>(&render(&o).unwrap()).expect("JSON"));
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
        check(&["--dialect"], Err("--dialect needs generic, openai-strict, anthropic or gemini"));
        check(&["gemini"], Err(r#"unexpected argument "gemini""#));
    }

    #[test]
    fn prints_the_extended_profile_the_tool_and_the_instructions() {
        check(&["--profile", "extended"], Ok(parameters_schema_for(Profile::Extended)));
        assert_ne!(parameters_schema_for(Profile::Extended), parameters_schema());
        check(
            &["--profile=extended", "--dialect", "openai-strict"],
            Ok(parameters_for(Profile::Extended, Dialect::OpenAiStrict)),
        );
        let tool = |args: &[&str]| -> Value {
            serde_json::from_str(&render(&options(args).unwrap()).unwrap()).unwrap()
        };
        let reference = tool(&["--tool"]);
        assert_eq!(reference["name"], "ask_user_question");
        assert_eq!(reference["description"], DESCRIPTION);
        assert_eq!(reference["parameters"], parameters(Dialect::Generic));
        let extended = tool(&["--tool", "--profile", "extended", "--dialect", "gemini"]);
        assert_eq!(extended["description"], EXTENDED_DESCRIPTION);
        assert_eq!(extended["parameters"], parameters_for(Profile::Extended, Dialect::Gemini));
        assert_eq!(render(&options(&["--instructions"]).unwrap()).unwrap(), INSTRUCTIONS);
        assert_eq!(
            render(&options(&["--instructions", "--profile", "extended"]).unwrap()).unwrap(),
            EXTENDED_INSTRUCTIONS
        );
        assert!(options(&["--tool", "--instructions"]).is_err());
        assert!(options(&["--instructions", "--dialect", "gemini"]).is_err());
    }
}
