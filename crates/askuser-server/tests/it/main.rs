//! askuser-server's integration tests: the API and the pages in process, the client on loopback.

mod api;
#[cfg(feature = "client")]
mod client;
mod connections;
mod extended;
mod fleet;
#[cfg(feature = "client")]
mod load;
mod logs;
#[cfg(feature = "client")]
mod notify;
mod outage;
mod pages;
mod support;
