//! One full `ask_user_question` call (argument text → validated → instant answerer → checked →
//! rendered) next to validation alone, on the typical 4 × 4 request (askuser-core's
//! `tests/data/typical-4x4.*.json` conformance fixtures).
//!
//! A hand-written timing loop rather than a benchmark framework, to keep the dependency graph
//! lean. Each measurement is the best of several rounds, which is the most stable figure on a
//! shared two-core machine. Run with `cargo bench -p askuser-tool --bench call`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use askuser_core::{AnswerError, AskContext, AskUserRequest, AskUserResponse, Validator};
use askuser_tool::{AskUser, ToolCall};

const ARGS: &str = include_str!("../../askuser-core/tests/data/typical-4x4.args.json");
const RESPONSE: &str = include_str!("../../askuser-core/tests/data/typical-4x4.response.json");
const ROUNDS: usize = 7;
const ITERATIONS: u32 = 20_000;

/// The best per-iteration time over `ROUNDS` rounds of `ITERATIONS` runs of `run`.
fn best_of(mut run: impl FnMut(u32)) -> Duration {
    run(ITERATIONS / 10);
    (0..ROUNDS)
        .map(|_| {
            let start = Instant::now();
            run(ITERATIONS);
            start.elapsed() / ITERATIONS
        })
        .min()
        .unwrap_or_default()
}

fn report(name: &str, per_op: Duration) {
    let rate = 1.0 / per_op.as_secs_f64();
    println!("{name:<44} {:>8.2} µs/op {rate:>12.0} ops/s", per_op.as_secs_f64() * 1e6);
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let response: AskUserResponse = serde_json::from_str(RESPONSE)?;
    let answerer = move |_: AskUserRequest, _: AskContext| {
        let response = response.clone();
        async move { Ok::<_, AnswerError>(response) }
    };
    let ask_user = AskUser::builder().answerer(answerer).build()?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build()?;

    // Both must succeed, or the figures would time an error path.
    Validator::new().validate_json(ARGS)?;
    let check = runtime.block_on(ask_user.call(ToolCall::new("call_1", ARGS), AskContext::new()));
    if !check.model_text().is_some_and(|t| t.starts_with(r#"{"Topic 0":["Option 1"]"#)) {
        return Err(format!("unexpected outcome {check:?}").into());
    }

    let validator = Validator::new();
    let validate = best_of(|n| {
        for _ in 0..n {
            black_box(validator.validate_json(black_box(ARGS)).ok());
        }
    });
    let call = best_of(|n| {
        runtime.block_on(async {
            for _ in 0..n {
                let call = ToolCall::new("call_1", black_box(ARGS));
                black_box(ask_user.call(call, AskContext::new()).await);
            }
        });
    });
    println!("typical 4x4 request ({} bytes), best of {ROUNDS} rounds x {ITERATIONS}", ARGS.len());
    report("validate JSON text (askuser-core)", validate);
    report("full call: validate+answer+check+render", call);
    println!("full call / validation alone: {:.2}x", call.as_secs_f64() / validate.as_secs_f64());
    Ok(())
}
