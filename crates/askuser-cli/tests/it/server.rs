//! `askuser serve` and `askuser ask --server` run the `askuser-server` binary beside `askuser`,
//! or say how to get it.

use std::process::Command;

fn askuser(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_askuser")).args(args).output().unwrap()
}

#[test]
fn serve_and_ask_server_forward_to_the_sibling_binary() {
    let sibling = std::path::Path::new(env!("CARGO_BIN_EXE_askuser"))
        .with_file_name(format!("askuser-server{}", std::env::consts::EXE_SUFFIX));
    let serve = askuser(&["serve", "--help"]);
    let ask = askuser(&["ask", "--server", "http://127.0.0.1:1", "--help"]);
    if sibling.is_file() {
        // Built (as `cargo test --workspace` does): the help is askuser-server's.
        assert!(String::from_utf8_lossy(&serve.stdout).starts_with("usage: askuser serve [options]"));
        assert!(String::from_utf8_lossy(&ask.stdout).starts_with("usage: askuser ask --server URL"));
        assert_eq!((serve.status.code(), ask.status.code()), (Some(0), Some(0)));
    } else {
        for output in [serve, ask] {
            assert_eq!(output.status.code(), Some(2));
            assert!(
                String::from_utf8_lossy(&output.stderr)
                    .contains("cargo build --release -p askuser-server-cli")
            );
        }
    }
    // Without --server, `ask` stays the terminal's.
    let terminal = askuser(&["ask", "--help"]);
    assert!(String::from_utf8_lossy(&terminal.stdout).starts_with("usage: askuser ask [FILE|-]"));
}
