use askuser_core::{AskUserAnswer, AskUserRequest, Questions};
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::{Effect, Menu, MenuOutcome, Notice};

/// Two questions: a single-select with three options, a multi-select with three.
fn two() -> Menu {
    let json = r#"{"questions":[
        {"header":"Db","question":"Which database?","options":[
            {"label":"Postgres (Recommended)","description":"mature"},{"label":"SQLite"},{"label":"MySQL"}]},
        {"header":"Extras","question":"Which extras?","multi_select":true,"options":[
            {"label":"Cache"},{"label":"Metrics"},{"label":"Tracing"}]}]}"#;
    Menu::new(AskUserRequest::new(Questions::from_json(json).unwrap()), 10)
}

fn one(multi: bool) -> Menu {
    let json = format!(
        r#"{{"questions":[{{"header":"Fix","question":"How?","multi_select":{multi},"options":[{{"label":"Patch"}},{{"label":"Refactor"}}]}}]}}"#
    );
    Menu::new(AskUserRequest::new(Questions::from_json(&json).unwrap()), 10)
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

fn ch(c: char) -> KeyEvent {
    key(KeyCode::Char(c))
}

/// Feeds keys, returning the last effect.
fn feed(menu: &mut Menu, keys: &[KeyEvent]) -> Effect {
    keys.iter().fold(Effect::Ignored, |_, k| menu.handle(*k))
}

fn answered(answers: Vec<AskUserAnswer>) -> Effect {
    Effect::Done(MenuOutcome::Answered(answers))
}

#[test]
fn moving_wraps_and_jumps() {
    let mut m = two();
    assert_eq!(m.row(), 0);
    let cases: &[(KeyEvent, usize)] = &[
        (key(KeyCode::Down), 1),
        (ch('j'), 2),
        (ctrl('n'), 3),
        (key(KeyCode::Down), 0),
        (key(KeyCode::Up), 3),
        (ch('k'), 2),
        (ctrl('p'), 1),
        (key(KeyCode::Home), 0),
        (key(KeyCode::End), 3),
        (ch('g'), 0),
        (ch('G'), 3),
    ];
    for &(k, row) in cases {
        assert_eq!(m.handle(k), Effect::Redraw, "{k:?}");
        assert_eq!(m.row(), row, "{k:?}");
    }
    assert_eq!(m.handle(ch('G')), Effect::Ignored, "already last");
    assert_eq!(
        m.handle(KeyEvent::new_with_kind(KeyCode::Up, KeyModifiers::NONE, KeyEventKind::Release)),
        Effect::Ignored
    );
}

#[test]
fn digit_picks_and_advances_then_review_submits() {
    let mut m = two();
    assert_eq!(m.handle(ch('2')), Effect::Redraw);
    assert_eq!(m.tab(), 1, "a single-select digit advances");
    assert_eq!(m.picked(0), [1]);
    assert_eq!(feed(&mut m, &[ch('3'), ch('1'), ch('3')]), Effect::Redraw);
    assert_eq!(m.picked(1), [0], "digits toggle on a multi-select");
    assert_eq!(m.tab(), 1, "toggling does not advance");
    assert_eq!(feed(&mut m, &[ch('2'), key(KeyCode::Enter)]), Effect::Redraw);
    assert!(m.in_review());
    assert_eq!(
        m.handle(key(KeyCode::Enter)),
        answered(vec![
            AskUserAnswer::picked("Db", ["SQLite"]),
            AskUserAnswer::picked("Extras", ["Cache", "Metrics"]),
        ])
    );
}

#[test]
fn digits_out_of_range_are_ignored() {
    let mut m = two();
    assert_eq!(m.handle(ch('5')), Effect::Ignored);
    assert_eq!(m.handle(ch('9')), Effect::Ignored);
    assert_eq!(m.row(), 0);
}

#[test]
fn space_selects_without_advancing_and_enter_picks_highlighted() {
    let mut m = two();
    feed(&mut m, &[key(KeyCode::Down), ch(' ')]);
    assert_eq!((m.tab(), m.picked(0)), (0, &[1][..]));
    feed(&mut m, &[key(KeyCode::Down), key(KeyCode::Enter)]);
    assert_eq!((m.tab(), m.picked(0)), (1, &[2][..]));
}

#[test]
fn multi_select_space_all_none_and_enter_needs_a_pick() {
    let mut m = two();
    m.handle(key(KeyCode::Tab));
    assert_eq!(m.tab(), 1);
    assert_eq!(m.handle(key(KeyCode::Enter)), Effect::Redraw);
    assert_eq!(m.notice, Some(Notice::PickOne));
    assert_eq!(m.tab(), 1, "enter with nothing picked stays");
    feed(&mut m, &[ch(' '), key(KeyCode::Down), ch(' ')]);
    assert_eq!(m.picked(1), [0, 1]);
    feed(&mut m, &[ch(' ')]);
    assert_eq!(m.picked(1), [0]);
    feed(&mut m, &[ch('a')]);
    assert_eq!(m.picked(1), [0, 1, 2]);
    feed(&mut m, &[ch('n')]);
    assert!(m.picked(1).is_empty());
}

#[test]
fn a_and_n_do_nothing_on_single_select() {
    let mut m = two();
    assert_eq!(m.handle(ch('a')), Effect::Ignored);
    assert!(m.picked(0).is_empty());
}

#[test]
fn tabs_cycle_through_review() {
    let mut m = two();
    let cases: &[(KeyEvent, usize)] = &[
        (key(KeyCode::Right), 1),
        (key(KeyCode::Tab), 2),
        (ch('l'), 0),
        (key(KeyCode::Left), 2),
        (key(KeyCode::BackTab), 1),
        (ch('h'), 0),
    ];
    for &(k, tab) in cases {
        m.handle(k);
        assert_eq!(m.tab(), tab, "{k:?}");
    }
    assert_eq!(one(false).handle(key(KeyCode::Tab)), Effect::Ignored, "no tabs with one question");
}

#[test]
fn review_with_unanswered_jumps_back() {
    let mut m = two();
    feed(&mut m, &[ch('1'), key(KeyCode::Tab)]);
    assert!(m.in_review());
    assert_eq!(m.handle(key(KeyCode::Enter)), Effect::Redraw);
    assert_eq!((m.tab(), m.notice), (1, Some(Notice::Unanswered)));
    assert_eq!(feed(&mut m, &[key(KeyCode::Tab), ch('1')]), Effect::Ignored, "digits do nothing in review");
}

#[test]
fn single_question_submits_directly() {
    assert_eq!(one(false).handle(ch('2')), answered(vec![AskUserAnswer::picked("Fix", ["Refactor"])]));
    let mut m = one(true);
    feed(&mut m, &[ch('2'), ch('1')]);
    assert_eq!(
        m.handle(key(KeyCode::Enter)),
        answered(vec![AskUserAnswer::picked("Fix", ["Refactor", "Patch"])])
    );
}

#[test]
fn other_editor_types_edits_and_commits() {
    let mut m = one(false);
    assert_eq!(m.handle(ch('3')), Effect::Redraw, "the digit after the options opens Other");
    assert!(m.editing());
    feed(&mut m, &[ch('a'), ch('b'), ch('c'), key(KeyCode::Left), key(KeyCode::Backspace), ch('X')]);
    assert_eq!(m.editor_text().as_deref(), Some("aXc"));
    feed(&mut m, &[key(KeyCode::Home), key(KeyCode::Delete), key(KeyCode::End), ch(' '), ch('d')]);
    assert_eq!(m.editor_text().as_deref(), Some("Xc d"));
    feed(&mut m, &[ctrl('w')]);
    assert_eq!(m.editor_text().as_deref(), Some("Xc "));
    feed(&mut m, &[ctrl('a'), key(KeyCode::Right), ctrl('k')]);
    assert_eq!(m.editor_text().as_deref(), Some("X"));
    feed(&mut m, &[ctrl('e'), ch('y'), ctrl('b'), ctrl('u')]);
    assert_eq!(m.editor_text().as_deref(), Some("y"));
    assert_eq!(m.handle(ch('j')), Effect::Redraw, "letters type, they do not move");
    assert_eq!(m.handle(key(KeyCode::Enter)), answered(vec![AskUserAnswer::custom("Fix", "jy")]));
}

#[test]
fn other_editor_enter_on_blank_and_esc_keeps_selection() {
    let mut m = two();
    feed(&mut m, &[ch(' ')]);
    feed(&mut m, &[key(KeyCode::End), key(KeyCode::Enter)]);
    assert!(m.editing());
    feed(&mut m, &[ch(' '), key(KeyCode::Enter)]);
    assert_eq!(m.notice, Some(Notice::TypeSomething));
    assert!(m.editing(), "a blank answer is not committed");
    assert_eq!(m.handle(key(KeyCode::Esc)), Effect::Redraw);
    assert!(!m.editing(), "esc leaves the editor, it does not decline");
    assert_eq!(m.picked(0), [0], "and keeps the previous selection");
    assert!(m.custom(0).is_none());
}

#[test]
fn custom_replaces_picks_and_picks_replace_custom() {
    let mut m = two();
    feed(&mut m, &[key(KeyCode::Tab), ch('1'), ch('4'), ch('z'), key(KeyCode::Enter)]);
    assert_eq!((m.picked(1), m.custom(1)), (&[][..], Some("z")));
    assert!(m.in_review());
    feed(&mut m, &[key(KeyCode::BackTab), ch('2')]);
    assert_eq!((m.picked(1), m.custom(1)), (&[1][..], None));
    feed(&mut m, &[ch('4')]);
    assert_eq!(m.editor_text().as_deref(), Some(""), "the editor opens empty again");
}

#[test]
fn editor_reopens_with_committed_text() {
    let mut m = two();
    feed(&mut m, &[ch('4'), ch('q'), key(KeyCode::Enter), key(KeyCode::BackTab), ch('4')]);
    assert_eq!(m.editor_text().as_deref(), Some("q"));
}

#[test]
fn custom_answer_is_capped_and_paste_is_cleaned() {
    let mut m = one(false);
    assert_eq!(m.paste("ignored"), Effect::Ignored, "paste outside the editor");
    m.handle(ch('3'));
    assert_eq!(m.paste("a\tb\nc\u{1b}[2J\u{202e}"), Effect::Redraw);
    assert_eq!(m.editor_text().as_deref(), Some("a b c [2J"));
    m.paste("0123456789");
    assert_eq!(m.editor_text().map(|t| t.chars().count()), Some(10));
    assert_eq!(m.notice, Some(Notice::TooLong));
}

/// Guards Backspace, Delete, ← and → in the Other editor working on graphemes: `é` typed as `e` +
/// U+0301, or a flag, is one character to the person, and half of one left behind corrupts the
/// answer (Backspace used to remove only the accent).
#[test]
fn editor_moves_and_deletes_whole_graphemes() {
    let mut m = one(false);
    m.handle(ch('3'));
    m.paste("ae\u{301}\u{1f1eb}\u{1f1f7}b");
    feed(&mut m, &[key(KeyCode::Backspace), key(KeyCode::Backspace)]);
    assert_eq!(m.editor_text().as_deref(), Some("ae\u{301}"), "b, then the whole flag");
    m.handle(key(KeyCode::Backspace));
    assert_eq!(m.editor_text().as_deref(), Some("a"), "the accent goes with its letter");
    m.paste("e\u{301}x");
    feed(&mut m, &[key(KeyCode::Home), key(KeyCode::Right), key(KeyCode::Delete)]);
    assert_eq!(m.editor_text().as_deref(), Some("ax"), "→ steps over e + accent, Delete removes both");
    feed(&mut m, &[key(KeyCode::End), key(KeyCode::Left), ch('y')]);
    assert_eq!(m.editor_text().as_deref(), Some("ayx"));
    // A mark pasted at the cursor joins the letter before it; the cursor stays after the grapheme.
    feed(&mut m, &[key(KeyCode::Home), ch('o')]);
    m.paste("\u{308}");
    m.handle(key(KeyCode::Backspace));
    assert_eq!(m.editor_text().as_deref(), Some("ayx"));
}

#[test]
fn esc_declines_at_once_without_answers() {
    assert_eq!(two().handle(key(KeyCode::Esc)), Effect::Done(MenuOutcome::Declined));
    assert_eq!(two().handle(ctrl('d')), Effect::Done(MenuOutcome::Declined));
}

#[test]
fn esc_asks_first_when_answers_exist() {
    let mut m = two();
    m.handle(ch('1'));
    assert_eq!(m.handle(key(KeyCode::Esc)), Effect::Redraw);
    assert_eq!(m.notice, Some(Notice::ConfirmDecline));
    assert_eq!(m.handle(key(KeyCode::Esc)), Effect::Done(MenuOutcome::Declined));

    let mut m = two();
    feed(&mut m, &[ch('1'), key(KeyCode::Esc), key(KeyCode::Down)]);
    assert_eq!(m.notice, None, "any other key cancels the confirmation");
    assert_eq!(m.handle(key(KeyCode::Esc)), Effect::Redraw);
}

#[test]
fn ctrl_c_interrupts_everywhere() {
    assert_eq!(two().handle(ctrl('c')), Effect::Done(MenuOutcome::Interrupted));
    let mut m = two();
    feed(&mut m, &[ch('4'), ch('x')]);
    assert_eq!(m.handle(ctrl('c')), Effect::Done(MenuOutcome::Interrupted));
    let mut m = two();
    feed(&mut m, &[ch('1'), ch('1'), key(KeyCode::Enter)]);
    assert!(m.in_review());
    assert_eq!(m.handle(ctrl('c')), Effect::Done(MenuOutcome::Interrupted));
}

#[test]
fn help_toggles_and_unknown_keys_are_ignored() {
    let mut m = two();
    assert_eq!(m.handle(ch('?')), Effect::Redraw);
    assert!(m.help);
    m.handle(ch('?'));
    assert!(!m.help);
    assert_eq!(m.handle(ch('x')), Effect::Ignored);
    assert_eq!(m.handle(key(KeyCode::F(5))), Effect::Ignored);
    assert_eq!(m.handle(ctrl('z')), Effect::Ignored, "ctrl-z arrives as a key in raw mode");
}

#[test]
fn answers_carry_the_original_labels() {
    let json =
        r#"{"questions":[{"header":"H","question":"Q?","options":[{"label":"a\u0000b"},{"label":"x"}]}]}"#;
    // The validator rejects control characters, so labels reaching the menu are the request's.
    assert!(Questions::from_json(json).is_err());
    let mut m = two();
    feed(&mut m, &[ch('1')]);
    assert_eq!(m.picks()[0].picked, [0]);
    feed(&mut m, &[ch('1'), key(KeyCode::Enter)]);
    let Effect::Done(MenuOutcome::Answered(answers)) = m.handle(key(KeyCode::Enter)) else {
        panic!("not done")
    };
    assert_eq!(answers[0].selected, ["Postgres (Recommended)"]);
}

proptest::proptest! {
    #[test]
    fn any_key_sequence_keeps_the_state_valid(keys in proptest::collection::vec(0u8..24, 0..60)) {
        let mut m = two();
        for k in keys {
            let event = match k {
                0 => key(KeyCode::Up), 1 => key(KeyCode::Down), 2 => key(KeyCode::Enter), 3 => key(KeyCode::Tab),
                4 => key(KeyCode::BackTab), 5 => key(KeyCode::Backspace), 6 => key(KeyCode::Left), 7 => key(KeyCode::Right),
                8 => key(KeyCode::Home), 9 => key(KeyCode::End), 10 => key(KeyCode::Delete), 11 => ch(' '),
                12 => ch('a'), 13 => ch('n'), 14 => ctrl('w'), 15 => ctrl('u'),
                n => ch(char::from(b'1' + (n - 16))),
            };
            if let Effect::Done(MenuOutcome::Answered(answers)) = m.handle(event) {
                let response = askuser_core::AskUserResponse::answered(answers);
                proptest::prop_assert!(askuser_core::check_response(&m.request, &response).is_ok());
                break;
            }
            proptest::prop_assert!(m.row() <= 3);
            proptest::prop_assert!(m.tab() <= 2);
        }
    }
}

fn extended(json: &str) -> Menu {
    let questions = askuser_core::Validator::new()
        .with_profile(askuser_core::Profile::Extended)
        .validate_json(json)
        .unwrap();
    Menu::new(AskUserRequest::new(questions), 10)
}

/// Guards the defaults cursor (docs/contract.md §10): the cursor starts on the first declared default, so
/// Enter on an untouched single-select takes it; on a multi-select Enter takes every declared
/// default; without declared defaults the old behaviour holds.
#[test]
fn enter_on_an_untouched_question_takes_its_declared_defaults() {
    let mut m = extended(
        r#"{"questions":[{"header":"One","question":"?","options":[{"label":"a"},{"label":"b"},{"label":"c","default":true}]}]}"#,
    );
    assert_eq!(m.row(), 2);
    assert_eq!(
        m.handle(key(KeyCode::Enter)),
        answered(vec![AskUserAnswer::picked("One", ["c"]).with_id("q1")])
    );

    let mut m = extended(
        r#"{"questions":[{"header":"Many","question":"?","multi_select":true,"options":[{"label":"a"},{"label":"b","default":true},{"label":"c","default":true}]}]}"#,
    );
    assert_eq!(m.row(), 1);
    assert_eq!(
        m.handle(key(KeyCode::Enter)),
        answered(vec![AskUserAnswer::picked("Many", ["b", "c"]).with_id("q1")])
    );

    let mut m = extended(
        r#"{"questions":[{"header":"Many","question":"?","multi_select":true,"options":[{"label":"a"},{"label":"b"}]}]}"#,
    );
    assert_eq!(m.row(), 0);
    assert_eq!(m.handle(key(KeyCode::Enter)), Effect::Redraw);
    assert_eq!(m.notice, Some(Notice::PickOne), "no declared defaults: pick one first");
}

/// Guards `allow_other: false`: no "Other…" row to move to, and its digit does nothing.
#[test]
fn allow_other_false_has_no_other_row() {
    let mut m = extended(
        r#"{"questions":[{"header":"H","question":"?","allow_other":false,"options":[{"label":"a"},{"label":"b"}]}]}"#,
    );
    assert_eq!(feed(&mut m, &[key(KeyCode::End)]), Effect::Redraw);
    assert_eq!(m.row(), 1, "the last row is the last option");
    assert_eq!(m.handle(key(KeyCode::Down)), Effect::Redraw);
    assert_eq!(m.row(), 0, "wraps without an Other row");
    assert_eq!(m.handle(ch('3')), Effect::Ignored);
    assert!(!m.editing());
    assert_eq!(m.handle(ch('2')), answered(vec![AskUserAnswer::picked("H", ["b"]).with_id("q1")]));
}

/// Guards the text question: its editor is open on arrival (the same grapheme-aware editor, with
/// its cap), Tab keeps a draft as the answer, a blank answer is refused, Esc declines.
#[test]
fn a_text_question_is_an_editor() {
    let json = r#"{"questions":[
        {"header":"Db","question":"?","options":[{"label":"a"},{"label":"b"}]},
        {"id":"name","kind":"text","header":"Name","question":"Called?"}]}"#;
    let mut m = extended(json);
    assert_eq!(m.handle(ch('1')), Effect::Redraw);
    assert_eq!(m.tab(), 1);
    assert!(m.editing(), "the editor opens on arrival");
    assert_eq!(m.handle(key(KeyCode::Enter)), Effect::Redraw);
    assert_eq!(m.notice, Some(Notice::TypeSomething), "blank is refused");
    // The cap (10 here) holds, and Backspace removes a whole grapheme.
    feed(&mut m, &"e\u{301}abcdefghijkl".chars().map(ch).collect::<Vec<_>>());
    assert_eq!(m.editor_text().unwrap().chars().count(), 10);
    feed(&mut m, &[key(KeyCode::Home), key(KeyCode::Right), key(KeyCode::Backspace)]);
    assert_eq!(m.editor_text().unwrap(), "abcdefgh");
    assert_eq!(m.handle(key(KeyCode::Tab)), Effect::Redraw);
    assert_eq!(m.custom(1), Some("abcdefgh"), "tab keeps the draft");
    assert!(m.in_review());
    assert_eq!(
        m.handle(key(KeyCode::Enter)),
        answered(vec![
            AskUserAnswer::picked("Db", ["a"]).with_id("q1"),
            AskUserAnswer::custom("Name", "abcdefgh").with_id("name"),
        ])
    );

    let mut m = extended(r#"{"questions":[{"kind":"text","header":"T","question":"?"}]}"#);
    assert!(m.editing());
    assert_eq!(m.handle(key(KeyCode::Esc)), Effect::Done(MenuOutcome::Declined));
}

/// Guards the secret question: typed into a masked editor, handed out as a `SecretValue` with an
/// answer that carries only `session:NAME`, never kept in the menu's state or its `Debug`.
#[test]
fn a_secret_leaves_as_a_value_and_a_reference() {
    let json = r#"{"questions":[{"kind":"secret","header":"Token","question":"?","secret_name":"API_TOKEN","purpose":"p"}]}"#;
    let mut m = extended(json);
    assert!(m.editing());
    assert_eq!(m.handle(key(KeyCode::Enter)), Effect::Redraw, "an empty secret is refused");
    feed(&mut m, &"s3cr3t".chars().map(ch).collect::<Vec<_>>());
    m.paste("XY");
    assert!(!format!("{m:?}").contains("s3cr3t"), "the editor's Debug is redacted");
    let Effect::Done(MenuOutcome::Secret(answer, value)) = m.handle(key(KeyCode::Enter)) else {
        panic!("a secret outcome")
    };
    assert_eq!(value.expose(), "s3cr3tXY");
    assert_eq!(answer, AskUserAnswer::secret("Token", "API_TOKEN").with_id("q1"));
    assert!(!format!("{m:?}").contains("s3cr3t"));

    let mut m = extended(json);
    assert_eq!(feed(&mut m, &[ch('x'), key(KeyCode::Esc)]), Effect::Done(MenuOutcome::Declined));
}

/// A pasted secret keeps its exact characters or is refused whole, saying so: a line break or a
/// control character inside is never turned into a space or dropped. One line ending at the end
/// (a copied whole line) is not part of it.
#[test]
fn a_pasted_secret_is_exact_or_refused() {
    let json = r#"{"questions":[{"kind":"secret","header":"Token","question":"?","secret_name":"API_TOKEN","purpose":"p"}]}"#;
    let mut m = extended(json);
    for refused in ["line one\nline two", "a\u{1b}[2Jb", "tab\there", "mid\r\nline"] {
        assert_eq!(m.paste(refused), Effect::Redraw);
        assert_eq!(m.notice, Some(Notice::SecretPasteRefused), "{refused:?}");
    }
    assert!(Notice::SecretPasteRefused.text().contains("line break"));
    m.paste("t0k€n ✓\r\n");
    assert_eq!(m.notice, None);
    let Effect::Done(MenuOutcome::Secret(_, value)) = m.handle(key(KeyCode::Enter)) else {
        panic!("a secret outcome")
    };
    assert_eq!(value.expose(), "t0k€n ✓", "exactly what was pasted, nothing of the refused pastes");
}
