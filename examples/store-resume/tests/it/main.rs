//! Runs the example's story: three processes, one store, the exact tool result at the end.

use std::process::Command;

#[test]
fn three_processes_one_answer() {
    let out = Command::new(env!("CARGO_BIN_EXE_store-resume")).output().expect("runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    assert!(lines[0].starts_with("process 1 (agent):  deferred call call_42 stored in "), "{stdout}");
    assert!(lines[1].starts_with("process 2 (person): answered at "), "{stdout}");
    assert_eq!(lines[2], r#"process 3 (agent):  resumes; the model receives {"Deploy":["Production"]}"#);
}
