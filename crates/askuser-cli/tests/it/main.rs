//! The integration tests of the `askuser` binary: one binary, one module per command, each
//! command run as a process of `CARGO_BIN_EXE_askuser`.

mod ask;
#[cfg(feature = "server")]
mod audit;
mod check;
// Claude Code's native binary is linux-x64 here; tmux drives it.
#[cfg(all(unix, feature = "server"))]
mod claude_code;
#[cfg(all(unix, feature = "server"))]
mod codex;
// The docs name every command, so they are checked against a build that has them all.
#[cfg(all(feature = "mcp", feature = "server"))]
mod docs;
#[cfg(feature = "server")]
mod hook;
mod install;
mod mcp;
#[cfg(feature = "server")]
mod pending;
#[cfg(unix)]
mod pty;
mod server;
mod usage;
mod version;
