//! Integration tests of the `askuser` binary.

mod ask;
