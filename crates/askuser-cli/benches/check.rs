//! `askuser check` as a whole process over many typical lines, beside the oracle over the same lines
//! when `ASKUSER_ORACLE_PY` names its python. Also its peak memory at two input sizes, to show that
//! it streams. `cargo bench -p askuser --bench check` (`ASKUSER_CHECK_LINES` sets the count,
//! default 100,000).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

const ARGS: &str = include_str!("../../askuser-core/tests/data/typical-4x4.args.json");
const RESPONSE: &str = include_str!("../../askuser-core/tests/data/typical-4x4.response.json");

/// `lines` cases, alternating a typical request and its typical answer.
fn write_cases(path: &Path, lines: usize) {
    let args: serde_json::Value = serde_json::from_str(ARGS).expect("typical args parse");
    let response: serde_json::Value = serde_json::from_str(RESPONSE).expect("typical response parses");
    let request = serde_json::json!({ "kind": "request", "args": args }).to_string();
    let answer = serde_json::json!({ "kind": "response", "args": args, "response": response }).to_string();
    let mut text = String::with_capacity(lines * (answer.len() + 16));
    for i in 0..lines {
        let line = if i % 2 == 0 { &request } else { &answer };
        let _ = writeln!(text, "{{\"id\":{i},{}", &line[1..]);
    }
    std::fs::write(path, text).expect("write the cases");
}

/// Runs `program args < input > /dev/null` under `/usr/bin/time`; returns (seconds, peak KiB).
fn run(program: &str, args: &[&str], input: &Path) -> (f64, Option<u64>) {
    let timed = Path::new("/usr/bin/time").exists();
    let mut command = if timed {
        let mut c = Command::new("/usr/bin/time");
        c.args(["-f", "%M"]).arg(program);
        c
    } else {
        Command::new(program)
    };
    let start = Instant::now();
    let output = command
        .args(args)
        .stdin(std::fs::File::open(input).expect("open the cases"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .expect("run the command");
    let seconds = start.elapsed().as_secs_f64();
    assert!(output.status.success(), "{program} failed: {}", String::from_utf8_lossy(&output.stderr));
    let peak = timed
        .then(|| String::from_utf8_lossy(&output.stderr).lines().last().and_then(|l| l.trim().parse().ok()))
        .flatten();
    (seconds, peak)
}

fn main() {
    let lines: usize =
        std::env::var("ASKUSER_CHECK_LINES").ok().and_then(|v| v.parse().ok()).unwrap_or(100_000);
    let dir = std::env::temp_dir().join(format!("askuser-check-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("make a scratch directory");
    let big = dir.join("cases.jsonl");
    let small = dir.join("cases-small.jsonl");
    write_cases(&big, lines);
    write_cases(&small, lines / 10);
    let askuser = env!("CARGO_BIN_EXE_askuser");

    let (seconds, peak) = run(askuser, &["check"], &big);
    let (_, small_peak) = run(askuser, &["check"], &small);
    #[expect(clippy::cast_precision_loss, reason = "line counts are far below 2^52")]
    let rate = lines as f64 / seconds;
    println!("askuser check: {lines} lines in {seconds:.3} s ({rate:.0} lines/s)");
    if let (Some(peak), Some(small_peak)) = (peak, small_peak) {
        println!("peak memory: {peak} KiB for {lines} lines, {small_peak} KiB for {} lines", lines / 10);
    }
    if let Ok(python) = std::env::var("ASKUSER_ORACLE_PY") {
        let oracle: PathBuf =
            [env!("CARGO_MANIFEST_DIR"), "..", "askuser-core", "tests", "oracle", "oracle.py"]
                .iter()
                .collect();
        let oracle = std::env::var("ASKUSER_ORACLE").map_or(oracle, PathBuf::from);
        let (oracle_seconds, oracle_peak) = run(&python, &[oracle.to_str().expect("a UTF-8 path")], &big);
        println!(
            "oracle (whole process, same lines): {oracle_seconds:.3} s, peak {} KiB",
            oracle_peak.unwrap_or(0)
        );
        println!("askuser check vs oracle: {:.1}x (target >= 20x)", oracle_seconds / seconds);
    } else {
        println!(
            "set ASKUSER_ORACLE_PY=$(crates/askuser-core/tests/oracle/setup.sh) to run the oracle over the same lines"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
