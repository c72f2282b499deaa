//! Integration tests: `ask()` end to end on scripted input, the line protocol, and real ptys.

mod ask;
mod lines;
#[cfg(unix)]
mod pty;

use std::io::{self, Write};
use std::sync::{Arc, Mutex};

use askuser_core::{AskUserRequest, Questions};

/// A writer whose bytes the test can read while the answerer owns it.
#[derive(Clone, Default)]
pub(crate) struct Shared(Arc<Mutex<Vec<u8>>>);

impl Shared {
    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Two questions: `Db` (single-select: `Postgres`, `SQLite`, `MySQL`) and `Extras` (multi-select:
/// `Cache`, `Metrics`, `Tracing`).
pub(crate) fn batch() -> AskUserRequest {
    AskUserRequest::new(
        Questions::from_json(
            r#"{"questions":[
            {"header":"Db","question":"Which database?","options":[
                {"label":"Postgres","description":"mature"},{"label":"SQLite"},{"label":"MySQL"}]},
            {"header":"Extras","question":"Which extras?","multi_select":true,"options":[
                {"label":"Cache"},{"label":"Metrics"},{"label":"Tracing"}]}]}"#,
        )
        .unwrap(),
    )
}

pub(crate) fn single(header: &str) -> AskUserRequest {
    let json = format!(
        r#"{{"questions":[{{"header":"{header}","question":"Question {header}?","options":[{{"label":"Yes"}},{{"label":"No"}}]}}]}}"#
    );
    AskUserRequest::new(Questions::from_json(&json).unwrap())
}
