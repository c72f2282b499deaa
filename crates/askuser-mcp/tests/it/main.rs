//! askuser-mcp's integration tests: one binary, one module per concern.

mod client;
mod conformance;
mod extended;
mod harness;
mod inbox;
mod later;
mod sdk_forms;
mod server;
#[cfg(feature = "http")]
mod sessions;
