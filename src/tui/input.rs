//! Keys to actions: what each key means depends only on which popup is open, so this is a
//! plain function of the key and the overlay, tested without a terminal. The bindings are
//! `keymap`'s tables; only the export prompt's line editing is written here.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::app::Overlay;
use super::keymap::{self, Action};

/// The keys a key event stands for. Esc and the key after it can arrive in one read (a
/// quick hand, a slow link, keys pasted or sent together), and the terminal library then
/// reports a single Alt+key. No binding here uses Alt, so that is the two keys, in order:
/// Esc, then the key without Alt. Read as one key it would drop the Esc, and `Esc q`
/// would leave a popup open instead of closing it and quitting.
pub fn keys_pressed(key: KeyEvent) -> impl Iterator<Item = KeyEvent> {
    let escaped = key.modifiers.contains(KeyModifiers::ALT) && key.code != KeyCode::Esc;
    let esc = escaped.then(|| KeyEvent::new_with_kind(KeyCode::Esc, KeyModifiers::NONE, key.kind));
    let mut key = key;
    if escaped {
        key.modifiers.remove(KeyModifiers::ALT);
    }
    esc.into_iter().chain([key])
}

/// The action for a key press in the current overlay; `None` for keys that mean nothing.
pub fn action_for(key: KeyEvent, overlay: &Overlay) -> Option<Action> {
    if key.kind == KeyEventKind::Release {
        return None;
    }
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let code = key.code;
    if let Some(action) = keymap::lookup(keymap::ANYWHERE, code, ctrl) {
        return Some(action);
    }
    match overlay {
        Overlay::Export(prompt) if prompt.confirm.is_some() => {
            keymap::lookup(keymap::OVERWRITE, code, ctrl)
        }
        Overlay::Export(_) => prompt_key(key, ctrl),
        Overlay::CommandLine(_) if code == KeyCode::Tab => Some(Action::Complete),
        Overlay::CommandLine(_) if code == KeyCode::Up => Some(Action::RecallOlder),
        Overlay::CommandLine(_) if code == KeyCode::Down => Some(Action::RecallNewer),
        Overlay::CommandLine(_) | Overlay::Search(_) => prompt_key(key, ctrl),
        Overlay::Help { .. } => {
            keymap::lookup(keymap::HELP, code, ctrl).or_else(|| keymap::movement(code, ctrl))
        }
        Overlay::Command { .. } => keymap::lookup(keymap::COMMAND, code, ctrl),
        Overlay::About { .. } => {
            keymap::lookup(keymap::ABOUT, code, ctrl).or_else(|| keymap::movement(code, ctrl))
        }
        Overlay::Detail { .. } => {
            keymap::lookup(keymap::DETAIL, code, ctrl).or_else(|| keymap::movement(code, ctrl))
        }
        Overlay::None => keymap::lookup(keymap::MAIN, code, ctrl),
    }
}

/// The export prompt: letters are text, so its keys are not a table of single keys.
fn prompt_key(key: KeyEvent, ctrl: bool) -> Option<Action> {
    Some(match key.code {
        KeyCode::Char('u') if ctrl => Action::ClearInput,
        KeyCode::Char('a') if ctrl => Action::CursorStart,
        KeyCode::Char('e') if ctrl => Action::CursorEnd,
        // Ctrl-H is what many terminals send for Backspace.
        KeyCode::Char('h') if ctrl => Action::Erase,
        KeyCode::Char(_) if ctrl => return None,
        KeyCode::Char(c) => Action::Type(c),
        KeyCode::Backspace => Action::Erase,
        KeyCode::Delete => Action::EraseForward,
        KeyCode::Left => Action::CursorLeft,
        KeyCode::Right => Action::CursorRight,
        KeyCode::Home => Action::CursorStart,
        KeyCode::End => Action::CursorEnd,
        KeyCode::Enter => Action::Submit,
        KeyCode::Esc => Action::Close,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::app::ExportPrompt;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn keys_mean_what_the_help_says() {
        let main = Overlay::None;
        let cases = [
            (KeyCode::Char('h'), Action::FewerBins),
            (KeyCode::Left, Action::FewerBins),
            (KeyCode::Char('l'), Action::MoreBins),
            (KeyCode::Right, Action::MoreBins),
            (KeyCode::Char('t'), Action::LowerTarget),
            (KeyCode::Char('T'), Action::RaiseTarget),
            (KeyCode::Char('a'), Action::ToggleAuto),
            (KeyCode::Char('m'), Action::CycleMethod),
            (KeyCode::Char('p'), Action::CyclePick),
            (KeyCode::Char('s'), Action::ToggleLogScale),
            (KeyCode::Char('g'), Action::First),
            (KeyCode::Char('G'), Action::Last),
            (KeyCode::Char(' '), Action::PageDown),
            (KeyCode::Char('H'), Action::FewerBinsTen),
            (KeyCode::Char('L'), Action::MoreBinsTen),
            (KeyCode::Char(':'), Action::CommandLine),
            (KeyCode::Tab, Action::NextView),
            (KeyCode::Char('e'), Action::Export),
            (KeyCode::Char('y'), Action::ShowCommand),
            (KeyCode::Char('?'), Action::Help),
            (KeyCode::Char('q'), Action::Quit),
            // Esc goes back; it never quits.
            (KeyCode::Esc, Action::Back),
            (KeyCode::Enter, Action::Open),
        ];
        for (code, action) in cases {
            assert_eq!(action_for(key(code), &main), Some(action), "{code:?}");
        }
        let ctrl = |c| KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL);
        assert_eq!(action_for(ctrl('c'), &main), Some(Action::Quit));
        assert_eq!(action_for(ctrl('q'), &main), Some(Action::Quit));
        assert_eq!(action_for(ctrl('z'), &main), Some(Action::Suspend));
    }

    #[test]
    fn the_prompt_takes_letters_as_text_and_ctrl_c_still_quits() {
        let prompt = Overlay::Export(ExportPrompt {
            input: String::new(),
            cursor: 0,
            confirm: None,
        });
        assert_eq!(
            action_for(key(KeyCode::Char('q')), &prompt),
            Some(Action::Type('q'))
        );
        assert_eq!(
            action_for(key(KeyCode::Left), &prompt),
            Some(Action::CursorLeft)
        );
        assert_eq!(action_for(key(KeyCode::Esc), &prompt), Some(Action::Close));
        let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
        assert_eq!(action_for(ctrl_c, &prompt), Some(Action::Quit));
    }

    #[test]
    fn alt_and_a_key_are_esc_then_the_key() {
        let alt_q = KeyEvent::new(KeyCode::Char('q'), KeyModifiers::ALT);
        let keys: Vec<KeyEvent> = keys_pressed(alt_q).collect();
        assert_eq!(keys, [key(KeyCode::Esc), key(KeyCode::Char('q'))]);
        let ctrl_alt_c = KeyEvent::new(
            KeyCode::Char('c'),
            KeyModifiers::ALT | KeyModifiers::CONTROL,
        );
        let keys: Vec<KeyEvent> = keys_pressed(ctrl_alt_c).collect();
        let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
        assert_eq!(keys, [key(KeyCode::Esc), ctrl_c]);
        // Keys without Alt, and Esc itself, are one key.
        for one in [key(KeyCode::Char('q')), key(KeyCode::Esc), ctrl_c] {
            assert_eq!(keys_pressed(one).collect::<Vec<_>>(), [one]);
        }
        let alt_esc = KeyEvent::new(KeyCode::Esc, KeyModifiers::ALT);
        assert_eq!(keys_pressed(alt_esc).collect::<Vec<_>>(), [alt_esc]);
    }

    #[test]
    fn releases_are_ignored() {
        let mut release = key(KeyCode::Char('q'));
        release.kind = KeyEventKind::Release;
        assert_eq!(action_for(release, &Overlay::None), None);
    }
}
