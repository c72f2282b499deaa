//! `askuser-pending`: the same command as `askuser pending`, under its own name (see
//! `askuser pending --help` and `docs/store.md`).

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag] = args.as_slice()
        && matches!(flag.as_str(), "--version" | "-V" | "version")
    {
        return askuser_tool::cli::Command::new("askuser-pending", "").version(env!("CARGO_PKG_VERSION"));
    }
    askuser_store::cli::main(&args)
}
