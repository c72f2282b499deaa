//! Validates the typical request N times, for instruction counts that a loaded machine cannot
//! disturb (docs/performance.md):
//!
//! ```text
//! cargo build --release -p askuser-core --example validate_n
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null target/release/examples/validate_n 3000 [extended|same|value]
//! ```
//!
//! The difference between two counts (say 1,000 and 3,000 calls), divided by the difference in
//! calls, is the cost of one validation without the start-up.

use std::hint::black_box;

use askuser_core::{Profile, Questions, Validator};

const ARGS: &str = include_str!("../tests/data/typical-4x4.args.json");
const EXTENDED_ARGS: &str = include_str!("../tests/data/typical-4x4.extended.args.json");

fn main() {
    let mut args = std::env::args().skip(1);
    let calls: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(1000);
    // `extended`: the extended text in the extended profile; `same`: the reference text in the
    // extended profile; `value`: the reference arguments already parsed into a
    // `serde_json::Value` (what an MCP server is handed); nothing: the reference text in the
    // reference profile.
    let mode = args.next();
    let validator = Validator::new().with_profile(Profile::Extended);
    let value: serde_json::Value = serde_json::from_str(ARGS).unwrap_or_default();
    let reference = Validator::new();
    for _ in 0..calls {
        match mode.as_deref() {
            Some("value") => black_box(reference.validate_value(black_box(&value)).ok()),
            Some("extended") => black_box(validator.validate_json(black_box(EXTENDED_ARGS)).ok()),
            Some("same") => black_box(validator.validate_json(black_box(ARGS)).ok()),
            _ => black_box(Questions::from_json(black_box(ARGS)).ok()),
        };
    }
}
