//! Integration tests of askuser-tool: one binary, one module per concern.

mod capability;
mod deferred;
mod extended;
#[cfg(feature = "async-openai")]
mod openai;
mod properties;
mod router;
mod schema;
#[cfg(feature = "tracing")]
mod secrets;
mod support;
mod toolset;
#[cfg(feature = "tracing")]
mod tracing_spans;
