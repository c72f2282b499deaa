//! askuser-mcp's integration tests: one binary, one module per concern.

mod client;
mod harness;
mod server;
