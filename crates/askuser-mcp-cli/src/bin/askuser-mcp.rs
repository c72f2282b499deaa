//! `askuser-mcp`: the same command as `askuser mcp`, under its own name (see `askuser mcp --help`).

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    askuser_mcp_cli::main(&args)
}
