//! The integration tests of the `askuser` binary: one binary, one module per command.

mod ask;
mod check;
mod server;
