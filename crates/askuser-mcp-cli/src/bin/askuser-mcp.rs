//! `askuser-mcp`: the same command as `askuser mcp`, under its own name (see `askuser mcp --help`).

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag] = args.as_slice()
        && matches!(flag.as_str(), "--version" | "-V" | "version")
    {
        return askuser_tool::cli::Command::new("askuser-mcp", "").version(env!("CARGO_PKG_VERSION"));
    }
    askuser_mcp_cli::main(&args)
}
