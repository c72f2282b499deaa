//! The `askuser` command: ask a person from the terminal, run the built-in demo, print the tool
//! schema, and check conformance verdicts. See `askuser --help`.

mod ask;
mod check;
mod schema;
mod server;

use std::process::ExitCode;

const USAGE: &str = "\
usage: askuser <command> [options]

commands:
  ask              ask the questions of a tool call (JSON arguments from a file or stdin)
  demo             ask a built-in batch of three questions and print what the model receives
  check            read conformance cases (JSON lines) on stdin, write one verdict line each
  serve            run the answer server for phones and other programs (runs askuser-server;
                   see askuser serve --help); `askuser ask --server URL` asks through it
  schema           print the tool's parameters schema [--dialect generic|openai-strict|anthropic|gemini]
  help             print this help
";

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let command = args.next();
    let rest: Vec<String> = args.collect();
    match command.as_deref() {
        Some("ask") if server::wanted(&rest) => server::main("ask", &rest),
        Some("ask") => ask::ask(&rest),
        Some("demo") => ask::demo(&rest),
        Some("check") => check::main(&rest),
        Some("schema") => schema::main(&rest),
        Some("serve") => server::main("serve", &rest),
        Some("help" | "--help" | "-h") | None => {
            print!("{USAGE}");
            ExitCode::SUCCESS
        }
        Some(other) => {
            eprintln!("askuser: unknown command {other:?}\n\n{USAGE}");
            ExitCode::from(2)
        }
    }
}
