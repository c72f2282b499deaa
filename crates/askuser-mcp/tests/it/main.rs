//! askuser-mcp's integration tests: one binary, one module per concern.

mod harness;
mod server;
