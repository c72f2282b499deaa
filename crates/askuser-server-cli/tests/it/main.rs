//! The `askuser-server` binary, as processes: `serve`, then `ask --server`, answered on the page.

mod processes;
