//! The terminal menu's costs (docs/contract.md §8): first frame after `ask()`, one redraw per key on a
//! 10-question × 6-option batch, and bytes written per key. Hand-written timing loop.
//!
//! `cargo bench -p askuser-terminal --bench terminal`

use std::hint::black_box;
use std::io::{self, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use askuser_core::{AskUserRequest, Questions};
use askuser_terminal::TerminalAnswerer;
use askuser_terminal::crossterm::event::Event;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use tokio::sync::mpsc;

/// Counts bytes and frames, and remembers when the first byte arrived.
#[derive(Clone, Default)]
struct Meter(Arc<Mutex<(usize, Option<Instant>, usize)>>);

impl Write for Meter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut m = self.0.lock().unwrap();
        m.0 += buf.len();
        m.2 += usize::from(buf.starts_with(b"\x1b[?2026h"));
        m.1.get_or_insert_with(Instant::now);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn batch() -> AskUserRequest {
    let options: Vec<String> = (1..=6)
        .map(|o| format!(r#"{{"label":"Option {o} (a realistic label)","description":"What choosing option {o} means, in a sentence or two of explanation"}}"#))
        .collect();
    let questions: Vec<String> = (1..=10)
        .map(|q| format!(r#"{{"header":"Question {q}","question":"Question {q}: which approach should the assistant take for this part of the task?","multi_select":{},"options":[{}]}}"#, q % 3 == 0, options.join(",")))
        .collect();
    AskUserRequest::new(
        Questions::from_json(&format!(r#"{{"questions":[{}]}}"#, questions.join(","))).unwrap(),
    )
}

fn key(code: KeyCode) -> Event {
    Event::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

/// Runs one `ask()` on pre-queued `events`, then end of input; returns the meter.
fn run(runtime: &tokio::runtime::Runtime, request: &AskUserRequest, events: &[Event]) -> (Meter, Instant) {
    let (tx, rx) = mpsc::unbounded_channel();
    for event in events {
        tx.send(event.clone()).unwrap();
    }
    // End of input declines: the run always ends, whatever state the keys left.
    drop(tx);
    let meter = Meter::default();
    let answerer = TerminalAnswerer::builder().input(rx).output(meter.clone()).size(100, 40).build();
    let start = Instant::now();
    black_box(runtime.block_on(answerer.ask(request)).unwrap());
    (meter, start)
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let request = batch();

    // First frame: from calling ask() to the first byte written.
    let mut firsts = Vec::new();
    for _ in 0..300 {
        let (meter, start) = run(&runtime, &request, &[]);
        let first = meter.0.lock().unwrap().1.unwrap();
        firsts.push(first - start);
    }
    firsts.sort();

    // Per key: a mix of moves, picks, toggles and tab switches, each followed by a redraw. Digit 2
    // toggles on a multi-select and picks (moving on) on a single-select; the Other editor is
    // never opened, so every key is a menu key.
    let cycle = [
        KeyCode::Down,
        KeyCode::Up,
        KeyCode::Down,
        KeyCode::Char('2'),
        KeyCode::Tab,
        KeyCode::Down,
        KeyCode::BackTab,
        KeyCode::Up,
    ];
    let keys: Vec<Event> = cycle.iter().cycle().take(4_000).map(|&c| key(c)).collect();
    let (baseline, _) = run(&runtime, &request, &[]);
    let base_bytes = baseline.0.lock().unwrap().0;
    let mut per_key = Vec::new();
    let mut bytes = 0;
    let mut frames = 0;
    for _ in 0..5 {
        let start = Instant::now();
        let (meter, _) = run(&runtime, &request, &keys);
        let total = start.elapsed();
        bytes = meter.0.lock().unwrap().0 - base_bytes;
        // The baseline's frames: the first one and the summary.
        frames = meter.0.lock().unwrap().2 - baseline.0.lock().unwrap().2;
        per_key.push(total / u32::try_from(keys.len()).unwrap());
    }
    per_key.sort();

    let micros = |d: Duration| d.as_secs_f64() * 1e6;
    println!("terminal menu, 10 questions x 6 options, 100x40 terminal");
    println!("frames drawn for {} keys: {frames}", keys.len());
    println!(
        "first frame after ask():  median {:8.1} µs   p99 {:8.1} µs",
        micros(firsts[firsts.len() / 2]),
        micros(firsts[firsts.len() * 99 / 100])
    );
    println!(
        "one key + redraw:         median {:8.1} µs   best {:8.1} µs",
        micros(per_key[2]),
        micros(per_key[0])
    );
    println!(
        "bytes written per key:    {:8.1}",
        f64::from(u32::try_from(bytes).unwrap()) / f64::from(u32::try_from(keys.len()).unwrap())
    );
}
