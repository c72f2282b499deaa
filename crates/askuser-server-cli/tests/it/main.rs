//! The `askuser-server` binary, as processes: `serve`, then `ask --server`, answered on the page
//! by a plain HTTP client and by a real browser.

mod browser;
mod channels;
mod conformance;
mod mcp;
mod processes;
mod support;
mod terminal;
