//! The integration tests of the `askuser` binary: one binary, one module per command.

mod ask;
mod check;
mod docs;
mod install;
mod mcp;
#[cfg(unix)]
mod pty;
mod server;
mod usage;
mod version;
