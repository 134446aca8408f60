//! The export prompt's steps: open it at the default path, check the typed path, hand the
//! documents' making and writing to the run loop, and ask before writing over files.

use std::path::{Path, PathBuf};

use super::app::{App, ExportPrompt, Exporting, Overlay, Overwrite, Status};
use super::keymap::Action;
use super::recompute::{say_error, Effect};
use super::save::{ExportJob, ExportOutcome, ExportSet, ExportTargets};
use crate::output::protect::refuse_input_target;
use crate::output::simpoints::SimPointPaths;

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
        let mut set = asked.set;
        set.overwrite = true;
        Effect::Export(set)
    })
}

/// The export's documents were made (or could not be): write them, unless the prompt was
/// left meanwhile.
pub fn export_made<'a>(
    app: &mut App<'a>,
    id: u64,
    made: Result<ExportSet, String>,
) -> Option<Effect<'a>> {
    if app.exporting.as_ref().is_none_or(|e| e.id != id) {
        return None;
    }
    app.exporting = None;
    match made {
        Ok(set) => Some(Effect::Export(set)),
        Err(e) => {
            say_error(app, &e);
            None
        }
    }
}

/// The export was written, refused or failed.
pub fn exported(app: &mut App, outcome: ExportOutcome) {
    match outcome {
        ExportOutcome::Written(paths) => {
            app.overlay = Overlay::None;
            app.status = Some(Status {
                text: format!("wrote {}", listed(&paths)),
                error: false,
            });
        }
        ExportOutcome::Exists { set, existing } => {
            if let Overlay::Export(prompt) = &mut app.overlay {
                prompt.confirm = Some(Overwrite { set, existing });
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

/// `a`, `a and b`, `a, b and c`.
pub fn listed(paths: &[PathBuf]) -> String {
    let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    match shown.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => shown.concat(),
    }
}

/// The files a typed name stands for, as `seqpoint select -o` reads it: `.json` or `.csv`
/// names a JSON document and its CSV list (side by side, same name), a final `.gz`
/// compresses both, `.simpoints` or `.weights` names a SimPoint set; `~` is the home folder.
/// A name without an extension, where `select -o` writes its text table, is the JSON
/// document's (the explorer writes no table), with the CSV list beside it as `NAME.csv`.
pub fn export_targets_of(input: &str) -> Result<ExportTargets, String> {
    let input = input.trim();
    if input.is_empty() {
        return Err("type a path for the JSON file".into());
    }
    let path = expand_home(input);
    if path.is_dir() {
        // Said before anything is made: a folder is never a file to overwrite.
        return Err(format!(
            "{input} is a folder: give the JSON file's path in it, e.g. {}",
            path.join("seqpoints.json").display()
        ));
    }
    let lower = |p: &Path| {
        p.extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase())
    };
    let gzip = lower(&path).as_deref() == Some("gz");
    let named = if gzip {
        path.with_extension("")
    } else {
        path.clone()
    };
    let with = |ext: &str| {
        let mut file = named.with_extension(ext).into_os_string();
        if gzip {
            file.push(".gz");
        }
        PathBuf::from(file)
    };
    match lower(&named).as_deref() {
        Some("json") | None => Ok(ExportTargets::Pair {
            json: path.clone(),
            csv: with("csv"),
            gzip,
        }),
        Some("csv") => Ok(ExportTargets::Pair {
            json: with("json"),
            csv: path.clone(),
            gzip,
        }),
        Some("simpoints" | "weights") if !gzip => {
            Ok(ExportTargets::SimPoints(SimPointPaths::of(&path)))
        }
        Some(ext @ ("simpoints" | "weights")) => Err(format!(
            "{input}: a SimPoint set is written uncompressed, as `seqpoint select -o` writes \
             it: name it NAME.{ext}"
        )),
        Some(ext) => Err(format!(
            "{input}: {}; name the export .json or .csv (the JSON document and its CSV list, \
             each optionally .gz) or .simpoints (a SimPoint set)",
            if ext == "txt" {
                "`seqpoint select -o` writes a text table there".to_string()
            } else {
                format!("cannot tell the format from '.{ext}'")
            }
        )),
    }
}

/// `~` and `~/…` as a shell reads them (the prompt has no shell to do it): the home folder.
pub(crate) fn expand_home(input: &str) -> PathBuf {
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
    let targets = match export_targets(app, &prompt.input) {
        Ok(targets) => targets,
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
        targets,
        selection,
        plan,
        command: app.session.command(&app.settings),
        judged_by: (!app.settings.auto).then_some(app.settings.target_pct),
    };
    app.exporting = Some(Exporting {
        id: job.id,
        json_path: job.targets.paths().swap_remove(0),
    });
    Some(Effect::MakeExport(Box::new(job)))
}

/// The files the typed path names. The loaded logs are never written over, whatever the
/// answer to "overwrite?" would be: the question is not even asked.
pub(super) fn export_targets(app: &App, input: &str) -> Result<ExportTargets, String> {
    let targets = export_targets_of(input)?;
    let inputs = app.inputs();
    for path in targets.paths() {
        refuse_input_target(&path, &inputs).map_err(|e| e.to_string())?;
    }
    Ok(targets)
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

    fn pair(json: &str, csv: &str, gzip: bool) -> ExportTargets {
        ExportTargets::Pair {
            json: json.into(),
            csv: csv.into(),
            gzip,
        }
    }

    #[test]
    fn the_name_is_read_as_a_shell_and_select_would_read_it() {
        let home = std::env::var_os("HOME").map(PathBuf::from);
        if let Some(home) = home.filter(|h| !h.as_os_str().is_empty()) {
            let targets = export_targets_of("~/x.json").unwrap();
            assert_eq!(targets.paths(), [home.join("x.json"), home.join("x.csv")]);
        }
        // `~user` is not expanded (no shell here to ask for other users' homes).
        assert_eq!(
            export_targets_of("~u/x.json").unwrap().paths()[0],
            PathBuf::from("~u/x.json")
        );
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().display().to_string();
        assert!(export_targets_of(&folder)
            .unwrap_err()
            .contains("is a folder"));
        // The extension names what `select -o` writes; the other file goes beside it.
        let cases = [
            ("out.json", pair("out.json", "out.csv", false)),
            ("out.csv", pair("out.json", "out.csv", false)),
            ("out.json.gz", pair("out.json.gz", "out.csv.gz", true)),
            ("OUT.CSV.GZ", pair("OUT.json.gz", "OUT.CSV.GZ", true)),
            ("a.b.json", pair("a.b.json", "a.b.csv", false)),
            ("run", pair("run", "run.csv", false)),
        ];
        for (name, want) in cases {
            assert_eq!(export_targets_of(name).unwrap(), want, "{name}");
        }
        for name in ["out.simpoints", "out.weights", "OUT.SIMPOINTS"] {
            match export_targets_of(name).unwrap() {
                ExportTargets::SimPoints(set) => {
                    assert_eq!(set, SimPointPaths::of(Path::new(name)), "{name}")
                }
                other => panic!("{name}: {other:?}"),
            }
        }
        // What the explorer cannot write (a text table) or `select -o` cannot either.
        for (name, said) in [
            ("out.txt", "text table"),
            ("out.yaml", "'.yaml'"),
            ("out.simpoints.gz", "uncompressed"),
        ] {
            let e = export_targets_of(name).unwrap_err();
            assert!(e.starts_with(name) && e.contains(said), "{name}: {e}");
            assert!(!e.contains("  "), "no run of spaces in the message: {e}");
        }
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
            Some(Effect::Export(set)) => {
                assert_eq!(set.files[0], (path.clone(), want.into_bytes()));
                assert!(!set.overwrite, "the overwrite question still comes first");
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
