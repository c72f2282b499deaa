//! Runs the session-router example's logic under paused time and checks every session's outcome.

use std::time::Duration;

#[tokio::test(start_paused = true)]
async fn every_session_gets_its_own_answer() {
    let started = tokio::time::Instant::now();
    let lines = session_router::serve(Duration::from_secs(3)).await.expect("valid configuration");
    // All four calls wait at once: the whole run takes one timeout, not the sum of the waits.
    assert_eq!(started.elapsed(), Duration::from_secs(3));
    let transcript = lines.join("\n");
    insta::assert_snapshot!("transcript", transcript);
    for expected in [
        r#"model receives: {"Plan":["Quick fix"]}"#,
        r#"reply refused: answer for "Plan" picked options it does not offer: ["Both"]"#,
        r#"model receives: {"Plan":["Quick fix now, rewrite later"]}"#,
        "model receives: The user declined",
        "client takes the question down",
        "model receives: Nobody answered these questions in time",
    ] {
        assert!(transcript.contains(expected), "missing {expected:?} in\n{transcript}");
    }
}
