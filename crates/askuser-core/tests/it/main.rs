//! The integration tests of askuser-core: one binary, one module per concern.

mod conformance;
mod extended;
mod layout;
mod properties;
mod rules;
mod typed;
