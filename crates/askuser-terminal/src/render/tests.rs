use std::fmt::Write as _;
use std::num::NonZeroU16;

use askuser_core::{AskUserRequest, Questions};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::{Frame, Line, Look, PLAIN, Painter, layout, summary};
use crate::menu::{Effect, Menu, MenuOutcome};
use crate::text::{sanitize, width};

const PLAIN_LOOK: Look = Look { color: false, unicode: true };
const SIZES: [(u16, u16); 4] = [(80, 24), (60, 20), (40, 12), (20, 6)];

fn demo() -> Menu {
    let json = r#"{"questions":[
        {"header":"Database","question":"Which database should the new billing service use? It stores invoices and needs to survive a restart.","options":[
            {"label":"Postgres (Recommended)","description":"Mature, transactional, already runs in production for two other services"},
            {"label":"SQLite","description":"Embedded file, nothing to operate, single writer"},
            {"label":"DynamoDB","description":"Managed key-value store; needs a different data model"}]},
        {"header":"Features","question":"Which features should the first release include?","multi_select":true,"options":[
            {"label":"PDF invoices","description":"Render and email a PDF per invoice"},
            {"label":"Webhooks"},
            {"label":"Multi-currency","description":"Prices in EUR, USD and GBP"},
            {"label":"Audit log"}]},
        {"header":"Deploy","question":"Where should it run?","options":[
            {"label":"Kubernetes"},{"label":"A single VM","description":"Cheapest; manual failover"}]}]}"#;
    Menu::new(AskUserRequest::new(Questions::from_json(json).unwrap()), 2000)
}

fn big() -> Menu {
    let options: Vec<String> = (1..=6)
        .map(|o| format!(r#"{{"label":"Option {o} with a longer label","description":"A description that is long enough to wrap on a narrow terminal, number {o}"}}"#))
        .collect();
    let questions: Vec<String> = (1..=10)
        .map(|q| format!(r#"{{"header":"Q{q}","question":"Question number {q}: which of these should we do first, and why does it matter?","multi_select":{},"options":[{}]}}"#, q % 2 == 0, options.join(",")))
        .collect();
    let json = format!(r#"{{"questions":[{}]}}"#, questions.join(","));
    Menu::new(AskUserRequest::new(Questions::from_json(&json).unwrap()), 2000)
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn parser(cols: u16, rows: u16) -> vt100::Parser {
    vt100::Parser::new(NonZeroU16::new(rows).unwrap(), NonZeroU16::new(cols).unwrap(), 200)
}

/// The visible screen, one row per line between bars, with the cursor marked.
fn screen(parser: &vt100::Parser) -> String {
    let screen = parser.screen();
    let (_, cols) = screen.size();
    let mut out = String::new();
    for row in screen.rows(0, cols.get()) {
        out.push('|');
        out.push_str(&row);
        out.push_str(&" ".repeat(usize::from(cols.get()).saturating_sub(width(&row))));
        out.push_str("|\n");
    }
    let (r, c) = screen.cursor_position();
    let hidden = if screen.hide_cursor() { " hidden" } else { "" };
    let _ = writeln!(out, "cursor {r},{c}{hidden}");
    out
}

fn paint(painter: &mut Painter, parser: &mut vt100::Parser, menu: &Menu, size: (u16, u16)) -> usize {
    let frame = layout(menu, size.0, size.1, PLAIN_LOOK);
    let mut bytes = Vec::new();
    painter.paint(&frame, size, PLAIN_LOOK, &mut bytes).unwrap();
    parser.process(&bytes);
    bytes.len()
}

/// A fresh terminal with the menu drawn on it, once.
fn shot(menu: &Menu, size: (u16, u16)) -> String {
    let mut p = parser(size.0, size.1);
    paint(&mut Painter::default(), &mut p, menu, size);
    screen(&p)
}

#[track_caller]
fn assert_fits(menu: &Menu, cols: u16, rows: u16) {
    let frame = layout(menu, cols, rows, PLAIN_LOOK);
    assert!(frame.height() < usize::from(rows), "{cols}x{rows}: {} lines", frame.height());
    for line in frame.text() {
        assert!(width(&line) < usize::from(cols), "{cols}x{rows}: {line:?} is too wide");
    }
    let (row, col) = frame.cursor;
    assert!(row < frame.height() && col < usize::from(cols), "{cols}x{rows}: cursor {row},{col}");
}

#[test]
fn demo_at_every_size() {
    for (cols, rows) in SIZES {
        let mut menu = demo();
        insta::assert_snapshot!(format!("demo_first_{cols}x{rows}"), shot(&menu, (cols, rows)));
        menu.handle(key(KeyCode::Char('1')));
        menu.handle(key(KeyCode::Char('3')));
        menu.handle(key(KeyCode::Down));
        insta::assert_snapshot!(format!("demo_multi_{cols}x{rows}"), shot(&menu, (cols, rows)));
        menu.handle(key(KeyCode::Char('5')));
        for c in "Stripe sync".chars() {
            menu.handle(key(KeyCode::Char(c)));
        }
        insta::assert_snapshot!(format!("demo_other_{cols}x{rows}"), shot(&menu, (cols, rows)));
        menu.handle(key(KeyCode::Enter));
        menu.handle(key(KeyCode::Tab));
        insta::assert_snapshot!(format!("demo_review_{cols}x{rows}"), shot(&menu, (cols, rows)));
        menu.handle(key(KeyCode::Char('?')));
        menu.handle(key(KeyCode::BackTab));
        insta::assert_snapshot!(format!("demo_help_{cols}x{rows}"), shot(&menu, (cols, rows)));
    }
}

#[test]
fn every_frame_fits_every_size() {
    let sizes = [(80, 24), (60, 20), (40, 12), (24, 8), (20, 6), (200, 50)];
    for (cols, rows) in sizes {
        for mut menu in [demo(), big()] {
            for step in 0..40 {
                assert_fits(&menu, cols, rows);
                let code = match step % 5 {
                    0 | 1 => KeyCode::Down,
                    2 => KeyCode::Char(' '),
                    3 => KeyCode::Char('?'),
                    _ => KeyCode::Tab,
                };
                menu.handle(key(code));
            }
        }
    }
}

#[test]
fn big_batch_windows_options_with_more_markers() {
    let mut menu = big();
    for _ in 0..4 {
        menu.handle(key(KeyCode::Down));
    }
    insta::assert_snapshot!("big_40x12", shot(&menu, (40, 12)));
    insta::assert_snapshot!("big_20x6", shot(&menu, (20, 6)));
    menu.handle(key(KeyCode::BackTab));
    insta::assert_snapshot!("big_review_40x12", shot(&menu, (40, 12)));
}

#[test]
fn redraws_over_scrollback_keep_history_and_leave_nothing_stale() {
    let mut p = parser(60, 20);
    for i in 0..30 {
        p.process(format!("$ history line {i}\r\n").as_bytes());
    }
    p.process(b"$ agent run\r\n");
    let mut painter = Painter::default();
    let mut menu = demo();
    let mut size = (60, 20);
    paint(&mut painter, &mut p, &menu, size);
    for code in [KeyCode::Down, KeyCode::Down, KeyCode::Char('1'), KeyCode::Char('2'), KeyCode::Char('?')] {
        menu.handle(key(code));
        paint(&mut painter, &mut p, &menu, size);
    }
    insta::assert_snapshot!("cumulative_60x20", screen(&p));
    // A taller terminal: the block is redrawn whole from its first line.
    size = (60, 22);
    p.screen_mut().set_size(NonZeroU16::new(22).unwrap(), NonZeroU16::new(60).unwrap());
    menu.handle(key(KeyCode::Char('?')));
    paint(&mut painter, &mut p, &menu, size);
    insta::assert_snapshot!("cumulative_resized_60x22", screen(&p));
    let mut bytes = Vec::new();
    menu.handle(key(KeyCode::Char('1')));
    menu.handle(key(KeyCode::Enter));
    menu.handle(key(KeyCode::Char('2')));
    let crate::menu::Effect::Done(outcome) = menu.handle(key(KeyCode::Enter)) else { panic!("not done") };
    painter.finish(&summary(&menu, Some(&outcome), size.0, PLAIN_LOOK), PLAIN_LOOK, &mut bytes).unwrap();
    p.process(&bytes);
    p.process(b"$ next command");
    let text = screen(&p);
    insta::assert_snapshot!("cumulative_summary", text);
    assert!(text.contains("$ agent run"), "history above the block survives");
    assert!(!text.contains("Which database"), "no stale menu line remains");
}

#[test]
fn only_changed_lines_are_rewritten() {
    let mut p = parser(80, 24);
    let mut painter = Painter::default();
    let mut menu = demo();
    let first = paint(&mut painter, &mut p, &menu, (80, 24));
    menu.handle(key(KeyCode::Down));
    let second = paint(&mut painter, &mut p, &menu, (80, 24));
    assert!(second * 3 < first, "a move rewrote {second} bytes of {first}");
    assert_eq!(screen(&p), shot(&menu, (80, 24)), "the diff gives the same screen as a full draw");
}

#[test]
fn no_color_emits_no_colour_codes() {
    let mut menu = demo();
    menu.handle(key(KeyCode::Char('1')));
    for (look, expect_colour) in [(PLAIN_LOOK, false), (Look { color: true, unicode: true }, true)] {
        let frame = layout(&menu, 80, 24, look);
        let mut bytes = Vec::new();
        Painter::default().paint(&frame, (80, 24), look, &mut bytes).unwrap();
        let text = String::from_utf8(bytes).unwrap();
        let colour = ["\x1b[3", ";3", "\x1b[9", "\x1b[4"].iter().any(|c| text.contains(c));
        assert_eq!(colour, expect_colour, "{text:?}");
        assert!(text.contains("\x1b[1"), "bold stays");
    }
}

#[test]
fn ascii_symbols() {
    let menu = demo();
    let frame = layout(&menu, 80, 24, Look { color: false, unicode: false });
    assert!(frame.text().iter().all(|l| l.is_ascii() || l.contains('…')), "{:?}", frame.text());
}

#[test]
fn each_frame_is_one_synchronized_update() {
    let mut bytes = Vec::new();
    Painter::default().paint(&layout(&demo(), 80, 24, PLAIN_LOOK), (80, 24), PLAIN_LOOK, &mut bytes).unwrap();
    assert!(bytes.starts_with(b"\x1b[?2026h"));
    assert!(bytes.ends_with(b"\x1b[?2026l"));
}

const HOSTILE: [&str; 8] = [
    "2. Delete\x1b[2J\x1b[H> 1. Keep (safe)\rX",
    "title \x1b]0;pwned\x07 osc",
    "link \x1b]8;;http://evil\x1b\\click\x1b]8;;\x1b\\",
    "clip \x1b]52;c;ZXZpbA==\x07",
    "dcs \x1bP+q544e\x1b\\ c1 \u{9b}31m red",
    "bidi \u{202e}txet desrever\u{202c} tab\there",
    "tags \u{e0041}\u{e0042} zw\u{200b}sp \u{feff}bom",
    "wide 日本語 👨\u{200d}👩\u{200d}👧 e\u{301}",
];

#[test]
fn hostile_strings_stay_inert() {
    let (cols, rows) = (60, 14);
    let mut p = parser(cols, rows);
    p.process(b"$ above the block\r\n");
    let lines = HOSTILE.iter().map(|s| Line::of(sanitize(s, false).into_owned(), PLAIN)).collect();
    let frame = Frame { lines, cursor: (0, 2) };
    Painter::default().paint(&frame, (cols, rows), PLAIN_LOOK, &mut Vec::new()).unwrap();
    let mut bytes = Vec::new();
    Painter::default().paint(&frame, (cols, rows), PLAIN_LOOK, &mut bytes).unwrap();
    p.process(&bytes);
    let text = screen(&p);
    insta::assert_snapshot!("hostile_60x14", text);
    assert!(text.starts_with("|$ above the block"), "nothing cleared the screen");
    let (row, _) = p.screen().cursor_position();
    assert_eq!(row, 1, "the cursor stays in the block");
    assert!(!p.screen().cell(2, 0).is_some_and(vt100::Cell::bold), "no attributes leaked");
}

#[test]
fn hostile_paste_into_other_stays_inert() {
    let mut menu = demo();
    menu.handle(key(KeyCode::Char('4')));
    menu.paste(HOSTILE.concat().as_str());
    let text = shot(&menu, (60, 20));
    insta::assert_snapshot!("hostile_paste_60x20", text);
    assert!(text.contains("Assistant asks"), "the block is intact");
}

#[test]
fn summaries() {
    let mut menu = demo();
    for (outcome, name) in [
        (Some(MenuOutcome::Declined), "declined"),
        (Some(MenuOutcome::Interrupted), "interrupted"),
        (None, "withdrawn"),
    ] {
        let text = summary(&menu, outcome.as_ref(), 60, PLAIN_LOOK).text().join("\n");
        insta::assert_snapshot!(format!("summary_{name}"), text);
    }
    for code in
        [KeyCode::Char('2'), KeyCode::Char('1'), KeyCode::Char('3'), KeyCode::Enter, KeyCode::Char('1')]
    {
        menu.handle(key(code));
    }
    let answers = MenuOutcome::Answered(Vec::new());
    insta::assert_snapshot!(
        "summary_answered",
        summary(&menu, Some(&answers), 60, PLAIN_LOOK).text().join("\n")
    );
}

/// vt100 ignores DECAWM (line wrap off), avt honours it: the same bytes giving the same screen in
/// both shows that no line reaches the last column, so turning wrap off while drawing (our
/// backstop) never changes what is seen.
#[test]
fn wrap_mode_does_not_matter_avt_agrees_with_vt100() {
    for (cols, rows) in SIZES {
        for mut menu in [demo(), big()] {
            let mut vt = parser(cols, rows);
            let mut avt = avt::Terminal::new(usize::from(cols), usize::from(rows)).unwrap();
            let mut painter = Painter::default();
            for code in [
                KeyCode::Down,
                KeyCode::Char('2'),
                KeyCode::Char('?'),
                KeyCode::Down,
                KeyCode::Tab,
                KeyCode::End,
            ] {
                let frame = layout(&menu, cols, rows, PLAIN_LOOK);
                let mut bytes = Vec::new();
                painter.paint(&frame, (cols, rows), PLAIN_LOOK, &mut bytes).unwrap();
                vt.process(&bytes);
                avt.feed(String::from_utf8(bytes).unwrap().as_str());
                let vt_rows: Vec<String> =
                    vt.screen().rows(0, cols).map(|r| r.trim_end().to_owned()).collect();
                let avt_rows: Vec<String> =
                    avt.screen().text().iter().map(|r| r.trim_end().to_owned()).collect();
                assert_eq!(vt_rows, avt_rows, "{cols}x{rows} after {code:?}");
                menu.handle(key(code));
            }
        }
    }
}

#[test]
fn highlight_is_bold_and_reverse_without_colour() {
    let mut p = parser(80, 24);
    paint(&mut Painter::default(), &mut p, &demo(), (80, 24));
    let cell = |row, col| p.screen().cell(row, col).unwrap().clone();
    assert_eq!(cell(4, 6).contents(), "P");
    assert!(cell(4, 6).bold() && cell(4, 6).inverse(), "the highlighted label stands out without colour");
    assert_eq!(cell(6, 6).contents(), "S");
    assert!(!cell(6, 6).bold() && !cell(6, 6).inverse(), "other labels are plain");
    assert!(cell(5, 6).dim(), "descriptions are dim");
    assert!(cell(1, 1).bold(), "the question is bold");
}

/// A batch of the widest text the validator lets through: 50-character CJK and emoji labels,
/// 200-character descriptions, 500-character questions with no spaces to break at.
fn wide() -> Menu {
    let label = |o: usize| format!("{o}{}", "語😀".repeat(24));
    let options: Vec<String> = (1..=6)
        .map(|o| format!(r#"{{"label":"{}","description":"{}"}}"#, label(o), "説".repeat(200)))
        .collect();
    let questions: Vec<String> = (1..=10)
        .map(|q| {
            format!(
                r#"{{"header":"{q}{}","question":"{}","multi_select":{},"options":[{}]}}"#,
                "見".repeat(20),
                "問".repeat(500),
                q % 2 == 0,
                options.join(",")
            )
        })
        .collect();
    let json = format!(r#"{{"questions":[{}]}}"#, questions.join(","));
    Menu::new(AskUserRequest::new(Questions::from_json(&json).unwrap()), 2000)
}

static DEMO: std::sync::LazyLock<Menu> = std::sync::LazyLock::new(demo);
static WIDE: std::sync::LazyLock<Menu> = std::sync::LazyLock::new(wide);

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
    /// Guards the height and width rules against any mix of keys, pastes and sizes: every frame of
    /// a usable terminal (at least 20 × 6) fits in cols − 1 × rows − 1 with the cursor inside, and
    /// no size at all, however small a host says its terminal is, makes layout panic.
    #[test]
    fn any_state_fits_any_size(
        keys in proptest::collection::vec(0u8..16, 0..50),
        cols in 1u16..160,
        rows in 1u16..50,
    ) {
        for mut menu in [DEMO.clone(), WIDE.clone()] {
            for k in &keys {
                let code = match k {
                    0 => KeyCode::Down, 1 => KeyCode::Up, 2 => KeyCode::Enter, 3 => KeyCode::Tab,
                    4 => KeyCode::BackTab, 5 => KeyCode::Char(' '), 6 => KeyCode::Char('?'),
                    7 => KeyCode::Esc, 8 => KeyCode::Left, 9 => KeyCode::Backspace,
                    10 => KeyCode::Char('7'), 11 => KeyCode::Char('a'),
                    _ => {
                        menu.paste(&"漢😀 x".repeat(40));
                        continue;
                    }
                };
                if matches!(menu.handle(key(code)), crate::menu::Effect::Done(_)) {
                    break;
                }
                let frame = layout(&menu, cols, rows, PLAIN_LOOK);
                if cols >= 20 && rows >= 6 {
                    proptest::prop_assert!(frame.height() < usize::from(rows), "{cols}x{rows}: {} lines", frame.height());
                    for line in frame.text() {
                        proptest::prop_assert!(width(&line) < usize::from(cols), "{cols}x{rows}: {line:?}");
                    }
                    proptest::prop_assert!(frame.cursor.0 < frame.height() && frame.cursor.1 < usize::from(cols));
                }
            }
        }
    }
}

/// Guards "what is on screen is what is sent": ticks stay on screen while "Other…" is being typed,
/// yet saving it replaced them silently. While the editor is open the ticks show cleared and the
/// hint says the answer replaces them; Esc brings them back.
#[test]
fn an_open_other_editor_shows_the_picks_it_will_replace() {
    let mut menu = demo();
    menu.handle(key(KeyCode::Tab));
    menu.handle(key(KeyCode::Char('1')));
    menu.handle(key(KeyCode::Char('3')));
    let text = |menu: &Menu| layout(menu, 80, 24, PLAIN_LOOK).text().join("\n");
    assert_eq!(text(&menu).matches("[x]").count(), 2);
    menu.handle(key(KeyCode::Char('5')));
    menu.handle(key(KeyCode::Char('x')));
    let editing = text(&menu);
    assert_eq!(editing.matches("[x]").count(), 0, "{editing}");
    assert!(editing.contains("enter save, replacing your picks"), "{editing}");
    menu.handle(key(KeyCode::Esc));
    assert_eq!(text(&menu).matches("[x]").count(), 2, "esc keeps the picks");
    menu.handle(key(KeyCode::Char('5')));
    menu.handle(key(KeyCode::Char('x')));
    menu.handle(key(KeyCode::Enter));
    assert_eq!(menu.picks()[1].picked, Vec::<usize>::new());
    assert_eq!(menu.picks()[1].custom.as_deref(), Some("x"));
}

/// An extended batch: a choice question with a declared default and no "Other…", then a text
/// question.
fn mixed() -> Menu {
    let json = r#"{"questions":[
        {"id":"db","header":"Database","question":"Which database?","allow_other":false,"options":[
            {"label":"Postgres","description":"Mature"},{"label":"SQLite","default":true},{"label":"MySQL"}]},
        {"id":"name","kind":"text","header":"Name","question":"What should the service be called?"}]}"#;
    let questions = askuser_core::Validator::new()
        .with_profile(askuser_core::Profile::Extended)
        .validate_json(json)
        .unwrap();
    Menu::new(AskUserRequest::new(questions), 2000)
}

fn secret_menu() -> Menu {
    let json = r#"{"questions":[{"kind":"secret","header":"Token","question":"Your deploy token?",
        "secret_name":"DEPLOY_TOKEN","purpose":"To push the release to the registry."}]}"#;
    let questions = askuser_core::Validator::new()
        .with_profile(askuser_core::Profile::Extended)
        .validate_json(json)
        .unwrap();
    Menu::new(AskUserRequest::new(questions), 2000)
}

/// Guards the extended menu's look: the cursor starts on the declared default (marked), no
/// "Other…" row when `allow_other` is false, a text question is an editor, and the review shows
/// the typed answer.
#[test]
fn mixed_batch_at_every_size() {
    for (cols, rows) in SIZES {
        let mut menu = mixed();
        let first = shot(&menu, (cols, rows));
        assert!(!first.contains("Other"), "{cols}x{rows}: allow_other false shows no Other row\n{first}");
        insta::assert_snapshot!(format!("mixed_first_{cols}x{rows}"), first);
        menu.handle(key(KeyCode::Enter));
        for c in "billing-api".chars() {
            menu.handle(key(KeyCode::Char(c)));
        }
        insta::assert_snapshot!(format!("mixed_text_{cols}x{rows}"), shot(&menu, (cols, rows)));
        menu.handle(key(KeyCode::Enter));
        insta::assert_snapshot!(format!("mixed_review_{cols}x{rows}"), shot(&menu, (cols, rows)));
        assert_fits(&menu, cols, rows);
    }
}

/// Guards the secret's screen: while typing, a mask; the value itself is never drawn, in any
/// frame nor in the summary left in the scrollback (which shows no mask either).
#[test]
fn a_secret_is_masked_and_never_drawn() {
    const VALUE: &str = "hunter2-LEAKCANARY";
    for (cols, rows) in SIZES {
        let mut menu = secret_menu();
        let mut p = parser(cols, rows);
        p.process(b"$ history line\r\n");
        let mut painter = Painter::default();
        let mut bytes = Vec::new();
        let mut frames = Vec::new();
        for c in VALUE.chars() {
            menu.handle(key(KeyCode::Char(c)));
            let frame = layout(&menu, cols, rows, PLAIN_LOOK);
            painter.paint(&frame, (cols, rows), PLAIN_LOOK, &mut bytes).unwrap();
            frames.push(frame.text().join("\n"));
        }
        p.process(&bytes);
        insta::assert_snapshot!(format!("secret_typing_{cols}x{rows}"), screen(&p));
        let Effect::Done(outcome) = menu.handle(key(KeyCode::Enter)) else { panic!("the secret submits") };
        let MenuOutcome::Secret(answer, value) = &outcome else { panic!("{outcome:?}") };
        assert_eq!(value.expose(), VALUE);
        assert_eq!(answer.secret_ref.as_deref(), Some("session:DEPLOY_TOKEN"));
        let done = summary(&menu, Some(&outcome), cols, PLAIN_LOOK);
        painter.finish(&done, PLAIN_LOOK, &mut bytes).unwrap();
        let mut after = parser(cols, rows);
        after.process(b"$ history line\r\n");
        after.process(&bytes);
        let shown = screen(&after);
        insta::assert_snapshot!(format!("secret_done_{cols}x{rows}"), shown);
        let all = String::from_utf8_lossy(&bytes);
        for text in [all.as_ref(), &frames.join("\n"), &shown, &format!("{menu:?} {outcome:?}")] {
            assert!(!text.contains("hunter") && !text.contains("LEAKCANARY"), "the value was drawn: {text}");
        }
        assert!(!shown.contains('•'), "no mask is left behind: {shown}");
    }
}

/// A host's "asked by" label replaces "Assistant" in the title, made inert, cut to a third of the
/// width, and every frame still fits.
#[test]
fn the_title_says_who_asks() {
    let menu = demo().asked_by(Some("codex 1.2 in ~/src/app"));
    let frame = layout(&menu, 100, 24, PLAIN_LOOK);
    assert!(frame.text()[0].starts_with(" codex 1.2 in ~/src/app asks  "), "{:?}", frame.text()[0]);
    let hostile = demo().asked_by(Some("\u{1b}[31mevil\u{202e} agent with a very long name that goes on"));
    for cols in [20, 40, 80] {
        assert_fits(&hostile, cols, 12);
    }
    let title = &layout(&hostile, 80, 24, PLAIN_LOOK).text()[0];
    assert!(!title.contains('\u{1b}') && !title.contains('\u{202e}'), "{title:?}");
    assert!(title.contains('…'), "cut short: {title:?}");
}

/// Guards the countdown: the time left ends the title line in every size (the title is cut to
/// keep it whole), and turns to a warning past the nudge time.
#[test]
fn the_countdown_ends_the_title() {
    use std::time::Duration;

    use askuser_core::{Deadline, Timestamp};

    use crate::menu::Countdown;
    let asked = Timestamp::now();
    let json =
        r#"{"questions":[{"header":"Deploy","question":"Where?","options":[{"label":"A"},{"label":"B"}]}]}"#;
    let request = AskUserRequest::new(Questions::from_json(json).unwrap())
        .with_deadline(Deadline::new(asked, Some(Duration::from_mins(5))));
    let mut menu = Menu::new(request, 2000);
    menu.tick(asked);
    assert_eq!(menu.countdown, Some(Countdown { left: Duration::from_mins(5), late: false }));
    for (cols, rows) in SIZES {
        let title = layout(&menu, cols, rows, PLAIN_LOOK).text()[0].clone();
        assert!(title.ends_with(" · 5:00 left"), "{cols}x{rows}: {title:?}");
        assert!(width(&title) < usize::from(cols), "{cols}x{rows}: {title:?}");
    }
    // 300 s − min(60 s, 60 s): nudged at 240 s, in the warning style.
    menu.tick(asked.plus(Duration::from_secs(250)));
    assert_eq!(menu.countdown, Some(Countdown { left: Duration::from_secs(50), late: true }));
    let frame = layout(&menu, 80, 24, Look { color: true, unicode: true });
    assert!(frame.text()[0].ends_with(" · 50 s left"));
    assert_eq!(frame.lines[0].0.last().map(|(_, style)| style.fg), Some(Some(super::WARN)));
    assert_eq!(super::time_left(Duration::from_mins(65)), "1 h 05 min");
    // Without a deadline, no countdown.
    assert!(!layout(&demo(), 80, 24, PLAIN_LOOK).text()[0].contains("left"));
}

/// Guards code in a question's text: `code` spans take the code style, fenced blocks sit behind
/// a gutter with their indentation and without their fences; everything else is as written.
#[test]
fn code_in_the_question_is_set_apart() {
    let json = r#"{"questions":[{"header":"Tests","options":[{"label":"Yes"},{"label":"No"}],
        "question":"Run `cargo test` first?\n```sh\n  cargo test -p x\n```\nA ``literal`` and a lone ` stay."}]}"#;
    let menu = Menu::new(AskUserRequest::new(Questions::from_json(json).unwrap()), 2000);
    let frame = layout(&menu, 80, 24, Look { color: true, unicode: true });
    let text = frame.text();
    assert_eq!(
        &text[1..4],
        [" Run `cargo test` first?", " │   cargo test -p x", " A ``literal`` and a lone ` stay."]
    );
    let styles = |row: usize| frame.lines[row].0.iter().map(|(t, s)| (t.as_str(), *s)).collect::<Vec<_>>();
    assert_eq!(
        styles(1),
        [(" ", PLAIN), ("Run ", super::BOLD), ("`cargo test`", super::CODE), (" first?", super::BOLD)]
    );
    assert_eq!(styles(2), [(" │ ", super::DIM), ("  cargo test -p x", super::CODE)]);
    assert!(styles(3).iter().all(|(_, s)| *s != super::CODE), "{:?}", styles(3));
}
