//! askuser-server's integration tests: the API and the pages, in process.

mod api;
mod support;
