//! Timing of one full call against validation alone (filled in below).
fn main() {}
