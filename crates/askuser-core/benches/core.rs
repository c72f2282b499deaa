//! Validation and check + render on the typical request (4 questions × 4 options, ~1.2 KB), beside
//! the parse-only floor, in one run. `cargo bench -p askuser-core --bench core`.
//!
//! With `ASKUSER_ORACLE_PY` set to the oracle's python (`$(crates/askuser-core/tests/oracle/setup.sh)`), the
//! reference's in-process rates are measured in the same run and the ratios printed.

use std::hint::black_box;
use std::process::Command;
use std::time::{Duration, Instant};

use askuser_core::{AskUserRequest, AskUserResponse, Profile, Questions, Validator, ask_user_result};
use serde::Deserialize;

const ARGS: &str = include_str!("../tests/data/typical-4x4.args.json");
/// The same four choice questions as a model using the extended profile writes them: `kind`, an
/// `id` each, declared defaults and `timeout_seconds`.
const EXTENDED_ARGS: &str = include_str!("../tests/data/typical-4x4.extended.args.json");
const RESPONSE: &str = include_str!("../tests/data/typical-4x4.response.json");

/// The same arguments into plain structs: no trimming, no limits, no character or uniqueness checks.
#[derive(Deserialize)]
#[expect(dead_code, reason = "only parsed, never read: this is the floor")]
struct PlainArgs {
    questions: Vec<PlainQuestion>,
}

#[derive(Deserialize)]
#[expect(dead_code, reason = "only parsed, never read: this is the floor")]
struct PlainQuestion {
    header: String,
    question: String,
    options: Vec<PlainOption>,
    #[serde(default)]
    multi_select: bool,
}

#[derive(Deserialize)]
#[expect(dead_code, reason = "only parsed, never read: this is the floor")]
struct PlainOption {
    label: String,
    description: Option<String>,
}

/// The extended text into plain structs, for the floor of the extended call.
#[derive(Deserialize)]
#[expect(dead_code, reason = "only parsed, never read: this is the floor")]
struct PlainExtendedArgs {
    questions: Vec<PlainExtendedQuestion>,
    timeout_seconds: Option<u32>,
}

#[derive(Deserialize)]
#[expect(dead_code, reason = "only parsed, never read: this is the floor")]
struct PlainExtendedQuestion {
    kind: Option<String>,
    id: Option<String>,
    header: String,
    question: String,
    options: Vec<PlainExtendedOption>,
    #[serde(default)]
    multi_select: bool,
}

#[derive(Deserialize)]
#[expect(dead_code, reason = "only parsed, never read: this is the floor")]
struct PlainExtendedOption {
    label: String,
    description: Option<String>,
    #[serde(default)]
    default: bool,
}

/// Nanoseconds per call: the best of `rounds` rounds of about `budget` each.
fn measure(rounds: u32, budget: Duration, mut f: impl FnMut()) -> f64 {
    let mut iterations = 1_u64;
    loop {
        let start = Instant::now();
        for _ in 0..iterations {
            f();
        }
        if start.elapsed() >= budget / 10 {
            break;
        }
        iterations *= 2;
    }
    let iterations = iterations * 10;
    (0..rounds)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..iterations {
                f();
            }
            #[expect(clippy::cast_precision_loss, reason = "iteration counts are far below 2^52")]
            let per = start.elapsed().as_nanos() as f64 / iterations as f64;
            per
        })
        .fold(f64::INFINITY, f64::min)
}

/// Nanoseconds per call of `a` and of `b` (the best of `samples` short samples each, taken
/// alternately), and the median over the samples of `b`'s time over `a`'s in the same sample. On
/// a loaded machine the minimum finds the moments that were quiet for both; the median of the
/// paired ratios is what one lucky moment for either cannot move.
fn paired(samples: u32, iterations: u32, mut a: impl FnMut(), mut b: impl FnMut()) -> (f64, f64, f64) {
    let time = |f: &mut dyn FnMut()| {
        let start = Instant::now();
        for _ in 0..iterations {
            f();
        }
        start.elapsed().as_secs_f64() * 1e9 / f64::from(iterations)
    };
    let (mut best_a, mut best_b) = (f64::INFINITY, f64::INFINITY);
    let mut ratios = Vec::with_capacity(samples as usize);
    for _ in 0..samples {
        let (ta, tb) = (time(&mut a), time(&mut b));
        best_a = best_a.min(ta);
        best_b = best_b.min(tb);
        ratios.push(tb / ta);
    }
    ratios.sort_by(f64::total_cmp);
    (best_a, best_b, ratios[ratios.len() / 2])
}

/// The reference's rates (calls per second) for validation and check + render, if its python is set.
fn reference_rates() -> Option<(f64, f64)> {
    let python = std::env::var("ASKUSER_ORACLE_PY").ok()?;
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/reference.py");
    let output = Command::new(python).arg(script).output().ok()?;
    if !output.status.success() {
        eprintln!("reference.py failed: {}", String::from_utf8_lossy(&output.stderr));
        return None;
    }
    let text = String::from_utf8(output.stdout).ok()?;
    let mut numbers = text.split_whitespace().filter_map(|w| w.parse::<f64>().ok());
    Some((numbers.next()?, numbers.next()?))
}

fn main() {
    let request = AskUserRequest::new(Questions::from_json(ARGS).expect("the typical request is valid"));
    let response: AskUserResponse = serde_json::from_str(RESPONSE).expect("the typical response parses");
    assert!(ask_user_result(&request, &response).is_ok());
    let budget = Duration::from_millis(300);

    let extended = Validator::new().with_profile(Profile::Extended);
    assert!(extended.validate_json(EXTENDED_ARGS).is_ok());
    let mut floor = f64::INFINITY;
    let mut validate = f64::INFINITY;
    let mut render = f64::INFINITY;
    let mut validate_extended = f64::INFINITY;
    let mut validate_extended_plain = f64::INFINITY;
    // Interleaved so that they all see the same machine state.
    for _ in 0..3 {
        validate_extended = validate_extended.min(measure(3, budget, || {
            black_box(extended.validate_json(black_box(EXTENDED_ARGS)).ok());
        }));
        validate_extended_plain = validate_extended_plain.min(measure(3, budget, || {
            black_box(extended.validate_json(black_box(ARGS)).ok());
        }));
        floor = floor.min(measure(3, budget, || {
            black_box(serde_json::from_str::<PlainArgs>(black_box(ARGS)).ok());
        }));
        validate = validate.min(measure(3, budget, || {
            black_box(Questions::from_json(black_box(ARGS)).ok());
        }));
        render = render.min(measure(3, budget, || {
            black_box(ask_user_result(black_box(&request), black_box(&response)).ok());
        }));
    }
    let rate = |ns: f64| 1e9 / ns;
    println!("typical request: {} bytes, 4 questions x 4 options", ARGS.len());
    println!("parse-only floor (plain serde structs) {floor:>9.0} ns  {:>12.0}/s", rate(floor));
    println!("validate JSON text                     {validate:>9.0} ns  {:>12.0}/s", rate(validate));
    println!("check_response + render (4 answers)    {render:>9.0} ns  {:>12.0}/s", rate(render));
    println!("validation / parse-only floor: {:.2}x (target <= 2x)", validate / floor);
    println!(
        "extended profile, same text              {validate_extended_plain:>9.0} ns  {:>12.0}/s",
        rate(validate_extended_plain)
    );
    println!(
        "extended profile, typical extended call  {validate_extended:>9.0} ns  {:>12.0}/s  ({} bytes: kind, id, defaults, timeout_seconds)",
        rate(validate_extended),
        EXTENDED_ARGS.len()
    );
    let (paired_reference, paired_extended, median_ratio) = paired(
        2000,
        100,
        || {
            black_box(Questions::from_json(black_box(ARGS)).ok());
        },
        || {
            black_box(extended.validate_json(black_box(EXTENDED_ARGS)).ok());
        },
    );
    println!(
        "typical extended call / reference, same questions: {:.2}x (target <= 1.3x); paired short samples: {paired_extended:.0} / {paired_reference:.0} ns = {:.2}x, median of paired ratios {median_ratio:.2}x",
        validate_extended / validate,
        paired_extended / paired_reference
    );
    let (_, _, same_median) = paired(
        2000,
        100,
        || {
            black_box(Questions::from_json(black_box(ARGS)).ok());
        },
        || {
            black_box(extended.validate_json(black_box(ARGS)).ok());
        },
    );
    println!(
        "reference text, extended profile / reference profile: median of paired ratios {same_median:.2}x"
    );
    // The same two texts through plain serde structs: what any parser pays for the longer text.
    let (floor_reference, floor_extended, floor_median) = paired(
        2000,
        100,
        || {
            black_box(serde_json::from_str::<PlainArgs>(black_box(ARGS)).ok());
        },
        || {
            black_box(serde_json::from_str::<PlainExtendedArgs>(black_box(EXTENDED_ARGS)).ok());
        },
    );
    println!(
        "parse-only floor, extended text / reference text: {floor_extended:.0} / {floor_reference:.0} ns = {:.2}x, median of paired ratios {floor_median:.2}x",
        floor_extended / floor_reference
    );
    match reference_rates() {
        Some((ref_validate, ref_render)) => {
            println!("reference validate {ref_validate:.0}/s, check + render {ref_render:.0}/s (same run)");
            println!("validation vs reference: {:.1}x (target >= 25x)", rate(validate) / ref_validate);
            println!("check + render vs reference: {:.1}x (target >= 10x)", rate(render) / ref_render);
        }
        None => {
            println!(
                "set ASKUSER_ORACLE_PY=$(crates/askuser-core/tests/oracle/setup.sh) to measure the reference beside these"
            );
        }
    }
}
