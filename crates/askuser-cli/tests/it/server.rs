//! `askuser serve`, `askuser ask --server` and `askuser pending` are in this binary (feature
//! `server`, on by default); without the feature they say how to get a build that has them. The
//! submodules run `serve`, then `ask --server`, as processes, answered on the page by a plain HTTP
//! client and by a real browser.

use std::process::Command;

#[cfg(feature = "server")]
mod browser;
#[cfg(feature = "server")]
mod channels;
#[cfg(feature = "server")]
mod conformance;
#[cfg(feature = "server")]
mod full_disk;
#[cfg(feature = "server")]
mod mcp;
#[cfg(feature = "server")]
mod processes;
#[cfg(feature = "server")]
mod stopping;
#[cfg(feature = "server")]
pub(crate) mod support;
#[cfg(feature = "server")]
mod terminal;

fn askuser(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_askuser")).args(args).output().unwrap()
}

#[cfg(feature = "server")]
#[test]
fn serve_ask_server_and_pending_are_built_in() {
    let serve = askuser(&["serve", "--help"]);
    let ask = askuser(&["ask", "--server", "http://127.0.0.1:1", "--help"]);
    let pending = askuser(&["pending", "--help"]);
    assert!(String::from_utf8_lossy(&serve.stdout).starts_with("usage: askuser serve [options]"));
    assert!(String::from_utf8_lossy(&ask.stdout).starts_with("usage: askuser ask --server URL"));
    assert!(String::from_utf8_lossy(&pending.stdout).starts_with("usage: askuser pending --store URL"));
    assert_eq!((serve.status.code(), ask.status.code(), pending.status.code()), (Some(0), Some(0), Some(0)));
    // A store command end to end: an in-memory store lists nothing.
    let list = askuser(&["pending", "--store", "memory:", "list"]);
    assert_eq!((list.status.code(), list.stdout.as_slice()), (Some(0), &b""[..]));
    let bad = askuser(&["pending", "--store", "memory:", "ask", "--timeout", "1e300"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--timeout must be a duration above 0"));
}

#[cfg(not(feature = "server"))]
#[test]
fn without_the_feature_they_give_a_command_that_works_here() {
    for (args, shown) in [
        (&["serve"][..], "serve"),
        (
            &["ask", "--server", "http://127.0.0.1:1", "examples/calls/first.json"],
            "ask --server http://127.0.0.1:1 examples/calls/first.json",
        ),
        (&["pending", "list"], "pending list"),
    ] {
        let output = askuser(args);
        assert_eq!(output.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("built without the `server` feature"), "{stderr}");
        assert!(stderr.contains(&format!("\n  cargo run --quiet --bin askuser -- {shown}\n")), "{stderr}");
        assert!(stderr.contains("\n  cargo install --locked --path /"), "{stderr}");
    }
}

#[test]
fn ask_without_server_stays_the_terminals() {
    let terminal = askuser(&["ask", "--help"]);
    assert!(String::from_utf8_lossy(&terminal.stdout).starts_with("usage: askuser ask [FILE|-]"));
}
