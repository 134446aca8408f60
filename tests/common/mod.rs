//! Shared by the explorer's tests: sessions over the bundled sample and a two-length run,
//! key presses carried out on this thread, and frames drawn into a test backend.
#![allow(dead_code)]

use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;

use seqpoint::sample::{SAMPLE_COMPARE_NAME, SAMPLE_NAME};
use seqpoint::tui::{self, App, Session};
use seqpoint::{load_run, LoadOptions, SelectOptions};

pub const TRANSLATION: &str = "tests/data/translation_2d.csv";

pub fn sample_session(base: SelectOptions) -> Session {
    let load = LoadOptions {
        compare: Some(SAMPLE_COMPARE_NAME.into()),
        ..LoadOptions::default()
    };
    let log = load_run(SAMPLE_NAME, &load).unwrap();
    Session::new(SAMPLE_NAME.into(), load, log, base).unwrap()
}

/// A translation-like run keyed by (src_len, tgt_len): k-means bins it.
pub fn translation_session(base: SelectOptions) -> Session {
    let load = LoadOptions {
        key: vec!["src_len".into(), "tgt_len".into()],
        ..LoadOptions::default()
    };
    let log = load_run(TRANSLATION, &load).unwrap();
    Session::new(TRANSLATION.into(), load, log, base).unwrap()
}

/// An app with its first result computed, as the screen shows it after start-up.
pub fn started(session: &Session) -> App<'_> {
    let mut app = App::new(session, false);
    let effect = tui::update::recompute(&mut app);
    tui::settle(&mut app, effect);
    app
}

pub fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

pub fn ch(c: char) -> KeyEvent {
    key(KeyCode::Char(c))
}

/// Press a key and let any recomputation or export finish.
pub fn press(app: &mut App, event: KeyEvent) {
    let effect = tui::press(app, event);
    tui::settle(app, effect);
}

pub fn type_text(app: &mut App, text: &str) {
    for c in text.chars() {
        press(app, ch(c));
    }
}

pub fn frame(app: &mut App, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|f| tui::ui::draw(f, app)).unwrap();
    format!("{}", terminal.backend())
}

pub fn terminal(app: &mut App, width: u16, height: u16) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|f| tui::ui::draw(f, app)).unwrap();
    terminal
}
