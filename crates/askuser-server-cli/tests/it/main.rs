//! The `askuser-server` binary, as processes: `serve`, then `ask --server`, answered on the page
//! by a plain HTTP client and by a real browser.

mod browser;
mod channels;
mod conformance;
mod full_disk;
mod mcp;
mod processes;
mod stopping;
mod support;
mod terminal;
