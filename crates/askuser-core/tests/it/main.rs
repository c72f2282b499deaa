//! Integration tests of askuser-core.
mod conformance;
