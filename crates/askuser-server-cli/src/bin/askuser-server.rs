//! `askuser-server serve|ask …`: the same commands as `askuser serve` and `askuser ask --server`,
//! under their own name (see `askuser serve --help`).

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    askuser_server_cli::main(&args)
}
