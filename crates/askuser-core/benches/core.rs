//! Benchmarks of askuser-core.
fn main() {}
