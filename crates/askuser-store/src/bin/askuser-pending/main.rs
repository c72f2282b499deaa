//! `askuser-pending`: the same command as `askuser pending`, under its own name (see
//! `askuser pending --help` and `docs/store.md`).

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    askuser_store::cli::main(&args)
}
