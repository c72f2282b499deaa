//! A small MCP host: connects to an MCP server, lists its tools, calls the tools named with
//! `--call`, and answers every form the server sends through askuser's [`ElicitationHandler`]
//! (the terminal menu, or a form's defaults for a server you name): what a command-line agent
//! does with an MCP server's forms. The MCP conformance suite runs its client scenarios against
//! it (askuser-mcp's `conformance` test).
//!
//! ```text
//! cargo run -p askuser-mcp --example host -- --call add_numbers='{"a":2,"b":3}' http://127.0.0.1:3000/mcp
//! cargo run -p askuser-mcp --example host -- --call deploy -- some-mcp-server --stdio
//! ```

mod http;

use std::collections::HashMap;
use std::process::ExitCode;
use std::time::Duration;

use askuser_core::{DefaultsResponder, Profile};
use askuser_mcp::ElicitationHandler;
use askuser_terminal::TerminalAnswerer;
use rmcp::ServiceExt as _;
use rmcp::model::{CallToolRequestParams, JsonObject};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

const USAGE: &str = "\
usage: host [OPTIONS] URL
       host [OPTIONS] -- COMMAND [ARGS...]

Connects to an MCP server (Streamable HTTP at URL, or COMMAND over stdio), lists its tools on
stderr, calls each --call in order and prints each result as one JSON line. The server's forms
are asked in the terminal.

  --call TOOL[=JSON]         call TOOL with this JSON object of arguments (default {})
  --unattended-from NAME     answer forms with their defaults, unseen, for the server whose
                             serverInfo.name is NAME; forms from any other server are declined
  --profile PROFILE          reference (default: choices and yes/no) or extended (text too)
  --header 'NAME: VALUE'     an HTTP header on every request, e.g. 'Authorization: Bearer …'

Exit status: 0, 1 when a call failed or a tool reported an error, 2 on a usage error.
";

struct Options {
    calls: Vec<(String, JsonObject)>,
    unattended: Option<String>,
    profile: Profile,
    headers: HashMap<::http::HeaderName, ::http::HeaderValue>,
    server: Server,
}

enum Server {
    Url(String),
    Command(Vec<String>),
}

/// The word after option `flag`, which needs `what`.
fn value(args: &mut impl Iterator<Item = String>, flag: &str, what: &str) -> Result<String, String> {
    args.next().ok_or_else(|| format!("{flag} needs {what}"))
}

/// The options in `words`, each `--flag=value` read as `--flag value`.
fn options(words: &[String]) -> Result<Options, String> {
    let mut args = words
        .iter()
        .flat_map(|word| match word.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") && flag.len() > 2 => {
                vec![flag.to_owned(), value.to_owned()]
            }
            _ => vec![word.clone()],
        })
        .collect::<Vec<_>>()
        .into_iter();
    let (mut calls, mut unattended, mut profile, mut headers) =
        (Vec::new(), None, Profile::Reference, HashMap::new());
    let mut server = None;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--call" => {
                let call = value(&mut args, &arg, "TOOL or TOOL=JSON")?;
                let (tool, arguments) = call.split_once('=').unwrap_or((&call, "{}"));
                let arguments: JsonObject = serde_json::from_str(arguments)
                    .map_err(|e| format!("--call {tool}: the arguments are not a JSON object: {e}"))?;
                calls.push((tool.to_owned(), arguments));
            }
            "--unattended-from" => unattended = Some(value(&mut args, &arg, "a server's name")?),
            "--profile" => {
                profile = match value(&mut args, &arg, "reference or extended")?.as_str() {
                    "reference" | "standard" => Profile::Reference,
                    "extended" => Profile::Extended,
                    other => return Err(format!("--profile takes reference or extended, got {other:?}")),
                };
            }
            "--header" => {
                let line = value(&mut args, &arg, "'NAME: VALUE'")?;
                let (name, value) =
                    line.split_once(':').ok_or_else(|| format!("--header {line:?}: no ':'"))?;
                let name = ::http::HeaderName::try_from(name.trim())
                    .map_err(|e| format!("--header {name:?}: {e}"))?;
                let value = ::http::HeaderValue::try_from(value.trim())
                    .map_err(|e| format!("--header {name}: {e}"))?;
                headers.insert(name, value);
            }
            "--" => server = Some(Server::Command(args.by_ref().collect())),
            url if url.starts_with("http://") || url.starts_with("https://") => {
                server = Some(Server::Url(url.to_owned()));
            }
            other if other.starts_with('-') => return Err(format!("unknown option {other:?}")),
            other => return Err(format!("unexpected argument {other:?}")),
        }
    }
    let server = match server {
        Some(Server::Command(command)) if command.is_empty() => return Err("-- needs a command".to_owned()),
        Some(server) => server,
        None => return Err("name the server: a URL, or -- and a command".to_owned()),
    };
    Ok(Options { calls, unattended, profile, headers, server })
}

#[tokio::main]
async fn main() -> ExitCode {
    let words: Vec<String> = std::env::args().skip(1).collect();
    if words.iter().take_while(|w| *w != "--").any(|w| w == "-h" || w == "--help") {
        print!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    let options = match options(&words) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("host: {message}\nRun 'host --help' for the options.");
            return ExitCode::from(2);
        }
    };
    let mut handler = match &options.unattended {
        Some(server) => ElicitationHandler::new(DefaultsResponder::new()).allow_unattended_from(server),
        None => ElicitationHandler::new(TerminalAnswerer::new()),
    };
    handler = handler.with_profile(options.profile).with_client_info(rmcp::model::Implementation::new(
        "askuser-example-host",
        env!("CARGO_PKG_VERSION"),
    ));
    match run(handler, options).await {
        Ok(status) => status,
        Err(message) => {
            eprintln!("host: {message}");
            ExitCode::FAILURE
        }
    }
}

async fn run(handler: ElicitationHandler, options: Options) -> Result<ExitCode, String> {
    let client: RunningService<RoleClient, ElicitationHandler> = match options.server {
        Server::Url(url) => {
            let config =
                StreamableHttpClientTransportConfig::with_uri(url.as_str()).custom_headers(options.headers);
            let http = http::Reqwest012::default();
            let transport = StreamableHttpClientTransport::with_client(http.clone(), config);
            let client =
                handler.serve(transport).await.map_err(|e| format!("cannot connect to {url}: {e}"))?;
            // rmcp opens the session's stream beside the first calls: a form the server sends
            // on it (outside any call) before it is open would be lost.
            http.stream_opened(Duration::from_secs(5)).await;
            client
        }
        Server::Command(command) => {
            let mut child = tokio::process::Command::new(&command[0]);
            child.args(&command[1..]);
            let transport = rmcp::transport::TokioChildProcess::new(child)
                .map_err(|e| format!("cannot start {}: {e}", command[0]))?;
            handler.serve(transport).await.map_err(|e| format!("cannot connect to {}: {e}", command[0]))?
        }
    };
    let tools = client.list_all_tools().await.map_err(|e| format!("tools/list failed: {e}"))?;
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
    eprintln!("host: the server's tools: {}", names.join(", "));
    let mut status = ExitCode::SUCCESS;
    for (tool, arguments) in options.calls {
        let call = CallToolRequestParams::new(tool.clone()).with_arguments(arguments);
        match client.call_tool(call).await {
            Ok(result) => {
                if result.is_error == Some(true) {
                    status = ExitCode::FAILURE;
                }
                println!("{}", serde_json::to_string(&result).map_err(|e| e.to_string())?);
            }
            Err(e) => {
                eprintln!("host: {tool} failed: {e}");
                status = ExitCode::FAILURE;
            }
        }
    }
    // Ending the session (a DELETE over HTTP) is a courtesy: a server that does not answer it
    // soon does not keep the host from exiting.
    match tokio::time::timeout(Duration::from_secs(5), client.cancel()).await {
        Ok(Ok(_)) => {}
        Ok(Err(e)) => eprintln!("host: cannot close the connection: {e}"),
        Err(_) => eprintln!("host: the server did not close the connection within 5 s"),
    }
    Ok(status)
}
