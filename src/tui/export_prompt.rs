//! The export prompt's steps: open it at the default path, check the typed path, hand the
//! documents' making and writing to the run loop, and ask before writing over files.

use std::path::PathBuf;

use super::app::{App, ExportPlan, ExportPrompt, Exporting, Overlay, Overwrite, Status};
use super::keymap::Action;
use super::recompute::{say_error, Effect};
use super::save::{ExportJob, ExportOutcome};
use crate::output::protect::refuse_input_target;

/// `e`, `y` / `n` at the overwrite question: the export keys outside the path's typing.
pub(super) fn export_key<'a>(app: &mut App<'a>, action: Action) -> Option<Effect<'a>> {
    match action {
        Action::Export => {
            open_export(app);
            None
        }
        Action::ConfirmOverwrite => confirm_overwrite(app),
        Action::DeclineOverwrite => {
            if let Overlay::Export(prompt) = &mut app.overlay {
                prompt.confirm = None;
            }
            None
        }
        _ => None,
    }
}

/// The prompt at the default path, once the result on screen is the current settings'.
fn open_export(app: &mut App) {
    if app.current().is_some() {
        let input = app.session.default_export_path().display().to_string();
        app.overlay = Overlay::Export(ExportPrompt {
            cursor: input.chars().count(),
            input,
            confirm: None,
        });
    } else {
        say_error(app, "still computing: export once the new result is shown");
    }
}

/// `y`: write the refused export over the files that exist.
fn confirm_overwrite<'a>(app: &mut App<'a>) -> Option<Effect<'a>> {
    let Overlay::Export(prompt) = &mut app.overlay else {
        return None;
    };
    prompt.confirm.take().map(|asked| {
        let mut plan = asked.plan;
        plan.overwrite = true;
        Effect::Export(plan)
    })
}

/// The export's documents were made (or could not be): write them, unless the prompt was
/// left meanwhile.
pub fn export_made<'a>(
    app: &mut App<'a>,
    id: u64,
    made: Result<ExportPlan, String>,
) -> Option<Effect<'a>> {
    if app.exporting.as_ref().is_none_or(|e| e.id != id) {
        return None;
    }
    app.exporting = None;
    match made {
        Ok(plan) => Some(Effect::Export(plan)),
        Err(e) => {
            say_error(app, &e);
            None
        }
    }
}

/// The export was written, refused or failed.
pub fn exported(app: &mut App, outcome: ExportOutcome) {
    match outcome {
        ExportOutcome::Written { json, csv } => {
            app.overlay = Overlay::None;
            app.status = Some(Status {
                text: format!("wrote {} and {}", json.display(), csv.display()),
                error: false,
            });
        }
        ExportOutcome::Exists { plan, existing } => {
            if let Overlay::Export(prompt) = &mut app.overlay {
                prompt.confirm = Some(Overwrite { plan, existing });
            } else {
                // Written without a prompt (`:top-up`): nothing to confirm in, so no overwrite.
                let named: Vec<String> = existing.iter().map(|p| p.display().to_string()).collect();
                say_error(
                    app,
                    &format!(
                        "{} exists; nothing written: give another name",
                        named.join(", ")
                    ),
                );
            }
        }
        ExportOutcome::Failed(e) => say_error(app, &e),
    }
}

/// The CSV list goes beside the JSON document, same name with `.csv`.
pub fn export_paths(input: &str) -> Result<(PathBuf, PathBuf), String> {
    let input = input.trim();
    if input.is_empty() {
        return Err("type a path for the JSON file".into());
    }
    let json = expand_home(input);
    if json.is_dir() {
        // Said before anything is made: a folder is never a file to overwrite.
        return Err(format!(
            "{input} is a folder: give the JSON file's path in it, e.g. {}",
            json.join("seqpoints.json").display()
        ));
    }
    let lower = input.to_ascii_lowercase();
    // What `select -o` makes of these names is not a JSON document and its CSV list: say
    // so rather than write a JSON document under that name.
    let other = [
        (
            ".simpoints",
            "a SimPoint set (NAME.simpoints, .weights, .json)",
        ),
        (
            ".weights",
            "a SimPoint set (NAME.simpoints, .weights, .json)",
        ),
        (".gz", "a gzip-compressed file"),
    ];
    if let Some((ext, what)) = other.iter().find(|(ext, _)| lower.ends_with(ext)) {
        return Err(format!(
            "{input}: a {ext} name is {what} for `seqpoint select -o`; the explorer writes              a JSON document and its CSV list (name it .json), and y copies the select              command to write the other"
        ));
    }
    let csv = json.with_extension("csv");
    if csv == json {
        return Err(format!(
            "{input}: give the JSON file's path; the CSV list is written beside it as .csv"
        ));
    }
    Ok((json, csv))
}

/// `~` and `~/…` as a shell reads them (the prompt has no shell to do it): the home folder.
fn expand_home(input: &str) -> PathBuf {
    let home = || std::env::var_os("HOME").filter(|h| !h.is_empty());
    match input.strip_prefix('~') {
        Some("") => home().map_or_else(|| PathBuf::from(input), PathBuf::from),
        Some(rest) if rest.starts_with('/') => home().map_or_else(
            || PathBuf::from(input),
            |h| PathBuf::from(h).join(&rest[1..]),
        ),
        _ => PathBuf::from(input),
    }
}

pub(super) fn submit_export<'a>(app: &mut App<'a>) -> Option<Effect<'a>> {
    let Overlay::Export(prompt) = &app.overlay else {
        return None;
    };
    if app.exporting.is_some() {
        // Already making the documents; the footer says so.
        return None;
    }
    let (json_path, csv_path) = match export_targets(app, &prompt.input) {
        Ok(paths) => paths,
        Err(e) => {
            say_error(app, &e);
            return None;
        }
    };
    let Some(shown) = app.current_shown() else {
        say_error(app, "still computing: export once the new result is shown");
        return None;
    };
    let (selection, plan) = (shown.selection.clone(), shown.plan.clone());
    let job = ExportJob {
        id: app.next_job_id(),
        json_path,
        csv_path,
        selection,
        plan,
        command: app.session.command(&app.settings),
        judged_by: (!app.settings.auto).then_some(app.settings.target_pct),
    };
    app.exporting = Some(Exporting {
        id: job.id,
        json_path: job.json_path.clone(),
    });
    Some(Effect::MakeExport(Box::new(job)))
}

/// The two files the typed path names. The loaded logs are never written over, whatever the
/// answer to "overwrite?" would be: the question is not even asked.
fn export_targets(app: &App, input: &str) -> Result<(PathBuf, PathBuf), String> {
    let (json_path, csv_path) = export_paths(input)?;
    let inputs = app.inputs();
    for path in [&json_path, &csv_path] {
        refuse_input_target(path, &inputs).map_err(|e| e.to_string())?;
    }
    Ok((json_path, csv_path))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runlog::sample::SAMPLE_NAME;
    use crate::select::{BinCount, SelectOptions};
    use crate::tui::app::Session;
    use crate::tui::update::{recompute, update};
    use crate::{load_run, LoadOptions};

    fn session() -> Session {
        let load = LoadOptions::default();
        let log = load_run(SAMPLE_NAME, &load).unwrap();
        let base = SelectOptions {
            bins: BinCount::Fixed(4),
            ..SelectOptions::default()
        };
        Session::new(SAMPLE_NAME.into(), load, log, base).unwrap()
    }

    /// Opens the export prompt at `path` and presses Enter: the job that makes the documents.
    fn submit(app: &mut App, path: &std::path::Path) -> ExportJob {
        assert!(update(app, Action::Export).is_none());
        if let Overlay::Export(prompt) = &mut app.overlay {
            prompt.input = path.display().to_string();
        }
        match update(app, Action::Submit) {
            Some(Effect::MakeExport(job)) => *job,
            _ => panic!("no export job"),
        }
    }

    #[test]
    fn the_name_is_read_as_a_shell_and_select_would_read_it() {
        let home = std::env::var_os("HOME").map(PathBuf::from);
        if let Some(home) = home.filter(|h| !h.as_os_str().is_empty()) {
            let (json, csv) = export_paths("~/x.json").unwrap();
            assert_eq!((json, csv), (home.join("x.json"), home.join("x.csv")));
        }
        // `~user` is not expanded (no shell here to ask for other users' homes).
        assert_eq!(
            export_paths("~u/x.json").unwrap().0,
            PathBuf::from("~u/x.json")
        );
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().display().to_string();
        assert!(export_paths(&folder).unwrap_err().contains("is a folder"));
        for name in ["out.simpoints", "out.json.gz", "OUT.SIMPOINTS", "x.weights"] {
            let e = export_paths(name).unwrap_err();
            assert!(e.contains("seqpoint select -o"), "{name}: {e}");
        }
        assert_eq!(
            export_paths("out.json").unwrap(),
            (PathBuf::from("out.json"), PathBuf::from("out.csv"))
        );
    }

    #[test]
    fn the_documents_are_made_off_the_ui_thread_then_written() {
        let session = session();
        let mut app = App::new(&session, false);
        let effect = recompute(&mut app);
        crate::tui::settle(&mut app, effect);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.json");

        let job = submit(&mut app, &path);
        assert_eq!(app.exporting.as_ref().map(|e| e.id), Some(job.id));
        // A second Enter while the documents are made starts nothing.
        assert!(update(&mut app, Action::Submit).is_none());
        let want = crate::output::json::select_json(
            &session.log,
            app.current().unwrap(),
            None,
            Some(session.command(&app.settings)),
            &crate::select::naive::Baselines::new(&session.log),
        );
        // A fixed K is judged against the target on screen: the document records it.
        let want = want.replacen(
            "\"target_error_pct\": null",
            &format!("\"target_error_pct\": {:?}", app.settings.target_pct),
            1,
        );
        let id = job.id;
        match export_made(&mut app, id, job.make(&session)) {
            Some(Effect::Export(plan)) => {
                assert_eq!(plan.json, want);
                assert!(!plan.overwrite, "the overwrite question still comes first");
            }
            _ => panic!("the made documents are not written"),
        }
        assert!(app.exporting.is_none());

        // Leaving the prompt while they are made cancels the export: nothing is written.
        let job = submit(&mut app, &path);
        update(&mut app, Action::Close);
        assert!(app.exporting.is_none());
        let id = job.id;
        assert!(export_made(&mut app, id, job.make(&session)).is_none());
        assert!(!path.exists());
    }
}
