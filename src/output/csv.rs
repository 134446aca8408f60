//! The CSV lists a profiler script reads, written from the `seqpoint/1` document: the
//! SeqPoints, or every iteration a plan profiles. Fields are quoted where CSV needs it.

use std::borrow::Cow;

use crate::doc::{SelectDoc, SeqPointDoc};
use crate::runlog::RunLog;
use crate::select::Selection;

/// One field as every CSV list writes it (the one rule, RFC 4180): quoted when it holds a `,`, a
/// `"` or a line break, a `"` inside doubled; a control character other than a line break
/// never raw (a terminal would obey it) and never as `\u{1b}` (which names another column): a
/// C0 character or DEL as its Unicode control picture (ESC as `␛`), a C1 one as `�`.
pub fn csv_field(text: &str) -> Cow<'_, str> {
    let control = |c: char| c.is_control() && c != '\n' && c != '\r';
    let quote = text.contains([',', '"', '\n', '\r']);
    if !quote && !text.contains(control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 2);
    if quote {
        out.push('"');
    }
    for c in text.chars() {
        match c {
            '"' => out.push_str("\"\""),
            '\u{7f}' => out.push('\u{2421}'),
            c if control(c) && (c as u32) < 0x20 => {
                out.push(char::from_u32(0x2400 + c as u32).unwrap_or('\u{fffd}'))
            }
            c if control(c) => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    if quote {
        out.push('"');
    }
    Cow::Owned(out)
}

/// A CSV list being written: one record per line, each field through [`csv_field`].
#[derive(Default)]
struct Writer(String);

fn writer() -> Writer {
    Writer::default()
}

fn write(out: &mut Writer, record: &[String]) {
    for (i, field) in record.iter().enumerate() {
        if i > 0 {
            out.0.push(',');
        }
        out.0.push_str(&csv_field(field));
    }
    out.0.push('\n');
}

fn finish(out: Writer) -> String {
    out.0
}

/// The columns both lists share: `id,iteration,epoch,<keys>,weight,<metrics>[,stratum]`.
fn header(doc: &SelectDoc, strata: bool) -> Vec<String> {
    let mut names = vec!["id".to_string(), "iteration".into(), "epoch".into()];
    names.extend(doc.input.key.iter().cloned());
    names.push("weight".into());
    names.extend(doc.input.metrics.iter().cloned());
    if strata {
        names.push("stratum".into());
    }
    names
}

/// One iteration's shared columns, as `header` names them: its SeqPoint's id and stratum
/// beside the iteration's own number, epoch, key and values, and `weight`, the iterations
/// of the run the row stands for.
fn shared_fields(doc: &SelectDoc, sp: &SeqPointDoc, row: ListedRow<'_>) -> Vec<String> {
    let mut fields = vec![
        sp.id.to_string(),
        row.iteration.to_string(),
        row.epoch.map_or(String::new(), |e| e.to_string()),
    ];
    fields.extend(row.key.iter().map(u32::to_string));
    fields.push(row.weight.to_string());
    // The document's values are keyed by name; the columns keep the log's metric order.
    fields.extend(doc.input.metrics.iter().map(|name| {
        row.values
            .get(name)
            .copied()
            .unwrap_or(f64::NAN)
            .to_string()
    }));
    if let Some(s) = sp.stratum {
        fields.push(s.to_string());
    }
    fields
}

/// One row of a list: an iteration, what the document knows of it, and its weight as written.
#[derive(Clone, Copy)]
struct ListedRow<'a> {
    iteration: u64,
    epoch: Option<u32>,
    key: &'a [u32],
    values: &'a std::collections::BTreeMap<String, f64>,
    weight: &'a str,
}

/// A profiled iteration's share of its SeqPoint's weight when the plan profiles `rows` of
/// them: the bin's iterations divided evenly, so that the column sums to the run's.
fn share_of(weight: u64, rows: usize) -> String {
    if rows <= 1 {
        return weight.to_string();
    }
    (weight as f64 / rows as f64).to_string()
}

fn has_strata(doc: &SelectDoc) -> bool {
    doc.seqpoints.iter().any(|s| s.stratum.is_some())
}

/// The CSV file `seqpoint select` writes: the iterations to profile when the document has a
/// plan, else the SeqPoint list.
pub fn select_csv(doc: &SelectDoc) -> String {
    if doc.plan.is_some() {
        profile_csv(doc)
    } else {
        seqpoints_list_csv(doc)
    }
}

/// The list a profiler script reads when a plan profiles several iterations per SeqPoint:
/// one row per iteration, `id` naming its SeqPoint and `sample` numbering it in the plan's
/// order (0 the first, the SeqPoint's own where the plan lists it first: at one row per
/// SeqPoint or with a compare log), `samples` counting them; `weight` is the iterations of the
/// run the row stands for: its SeqPoint's weight divided evenly over the SeqPoint's rows, so
/// that the column sums to the run's iterations as the SeqPoint list's does (the SeqPoint's
/// weight is `weight` times `samples`). Other columns as in the SeqPoint list. Without a
/// plan, the header alone.
pub fn profile_csv(doc: &SelectDoc) -> String {
    let mut out = writer();
    let mut names = header(doc, has_strata(doc));
    names.extend(["sample".to_string(), "samples".into()]);
    write(&mut out, &names);
    let Some(plan) = &doc.plan else {
        return finish(out);
    };
    let mut rows_of = vec![0usize; doc.seqpoints.len()];
    for row in &plan.profile {
        rows_of[row.seqpoint] += 1;
    }
    // The profile lists each bin's iterations together, its SeqPoint's own first.
    let mut taken = vec![0usize; doc.seqpoints.len()];
    for row in &plan.profile {
        let sp = &doc.seqpoints[row.seqpoint];
        let samples = plan
            .bins
            .iter()
            .find(|b| b.seqpoint == row.seqpoint)
            .map_or(0, |b| b.samples);
        let weight = share_of(sp.weight, rows_of[row.seqpoint]);
        let listed = ListedRow {
            iteration: row.iteration,
            epoch: row.epoch,
            key: &row.key,
            values: &row.metrics,
            weight: &weight,
        };
        let mut fields = shared_fields(doc, sp, listed);
        fields.extend([taken[row.seqpoint].to_string(), samples.to_string()]);
        taken[row.seqpoint] += 1;
        write(&mut out, &fields);
    }
    finish(out)
}

/// The SeqPoint list a profiler script reads: `id,iteration,epoch,<keys>,weight,<metrics>`.
pub fn seqpoints_list_csv(doc: &SelectDoc) -> String {
    let mut out = writer();
    write(&mut out, &header(doc, has_strata(doc)));
    for sp in &doc.seqpoints {
        let weight = sp.weight.to_string();
        let listed = ListedRow {
            iteration: sp.iteration,
            epoch: sp.epoch,
            key: &sp.key,
            values: &sp.metrics,
            weight: &weight,
        };
        write(&mut out, &shared_fields(doc, sp, listed));
    }
    finish(out)
}

/// The SeqPoint list of a selection without a plan (its document made here).
pub fn seqpoints_csv(log: &RunLog, selection: &Selection) -> String {
    seqpoints_list_csv(&super::json::select_document(log, selection, None))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runlog::LoadOptions;
    use crate::select::{run_selection, BinCount, SelectOptions};

    /// The SeqPoint list of a small run whose metric columns are `names` (CSV-quoted in the log).
    fn list_for(names: &[&str]) -> (SelectDoc, String) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.csv");
        let quoted: Vec<String> = names
            .iter()
            .map(|n| format!("\"{}\"", n.replace('"', "\"\"")))
            .collect();
        let mut text = format!("iteration,seq_len,{}\n", quoted.join(","));
        for i in 0..12u32 {
            let values: Vec<String> = (0..names.len())
                .map(|m| format!("{}.5", i + m as u32))
                .collect();
            text.push_str(&format!("{i},{},{}\n", 10 + i % 3, values.join(",")));
        }
        std::fs::write(&path, text).unwrap();
        let options = LoadOptions {
            metrics: names.iter().map(|n| n.to_string()).collect(),
            ..LoadOptions::default()
        };
        let log = crate::runlog::load_run(path.to_str().unwrap(), &options).unwrap();
        let select = SelectOptions {
            bins: BinCount::Fixed(3),
            ..SelectOptions::default()
        };
        let doc = crate::output::json::select_document(
            &log,
            &run_selection(&log, &select).unwrap(),
            None,
        );
        let csv = seqpoints_list_csv(&doc);
        (doc, csv)
    }

    /// Every record as the `csv` reader sees it.
    fn records(text: &str) -> Vec<Vec<String>> {
        ::csv::ReaderBuilder::new()
            .has_headers(false)
            .from_reader(text.as_bytes())
            .records()
            .map(|r| r.unwrap().iter().map(str::to_string).collect())
            .collect()
    }

    /// A plan of `samples[b]` rows for SeqPoint `b` (its own iteration, then its alternates).
    fn with_plan(doc: &mut SelectDoc, samples: &[u64]) {
        use crate::doc::{PlanDoc, PlannedBinDoc, ProfileRowDoc};
        let mut profile = Vec::new();
        for (sp, &m) in doc.seqpoints.iter().zip(samples) {
            let iterations = std::iter::once(sp.iteration).chain(sp.alternates.iter().copied());
            for iteration in iterations.take(m as usize) {
                profile.push(ProfileRowDoc {
                    iteration,
                    seqpoint: sp.id,
                    metrics: sp.metrics.clone(),
                    expected: sp.expected.clone(),
                    epoch: None,
                    key: sp.key.clone(),
                });
            }
        }
        doc.plan = Some(PlanDoc {
            rule: "samples".into(),
            budget: None,
            target_error_pct: None,
            met: None,
            iterations: profile.len() as u64,
            bins: doc
                .seqpoints
                .iter()
                .zip(samples)
                .map(|(sp, &m)| PlannedBinDoc {
                    seqpoint: sp.id,
                    samples: m,
                    weight: sp.weight,
                })
                .collect(),
            profile,
            reserve: Vec::new(),
            projection: Vec::new(),
            speedup: None,
            profiling_reduction: None,
        });
    }

    /// The plan CSV's `weight` column sums to the run's iterations, as the SeqPoint list's
    /// does: each row stands for its SeqPoint's weight divided over the SeqPoint's rows.
    #[test]
    fn the_plan_csvs_weight_column_sums_to_the_run() {
        let (mut doc, list) = list_for(&["time_ms"]);
        let run: u64 = doc.seqpoints.iter().map(|sp| sp.weight).sum();
        assert_eq!(run, 12);
        let sum = |csv: &str| -> f64 {
            let records = records(csv);
            let col = records[0].iter().position(|h| h == "weight").unwrap();
            records[1..]
                .iter()
                .map(|r| r[col].parse::<f64>().unwrap())
                .sum()
        };
        assert_eq!(sum(&list), 12.0);
        // 3 SeqPoints of weight 4: one row, three rows (4/3 each) and two rows (2 each).
        assert!(doc.seqpoints.iter().all(|sp| sp.weight == 4), "{list}");
        with_plan(&mut doc, &[1, 3, 2]);
        let csv = profile_csv(&doc);
        assert_eq!(records(&csv).len(), 1 + 6, "{csv}");
        assert!((sum(&csv) - 12.0).abs() < 1e-12, "{csv}");
        let records = records(&csv);
        let col = records[0].iter().position(|h| h == "weight").unwrap();
        let weights: Vec<&str> = records[1..].iter().map(|r| r[col].as_str()).collect();
        assert_eq!(weights[0], "4");
        assert_eq!(weights[4..], ["2", "2"]);
        assert!((weights[1].parse::<f64>().unwrap() - 4.0 / 3.0).abs() < 1e-15);
        // The SeqPoint's weight is `weight` times `samples`.
        let samples = records[0].iter().position(|h| h == "samples").unwrap();
        for r in &records[1..] {
            let w: f64 = r[col].parse().unwrap();
            let m: f64 = r[samples].parse().unwrap();
            assert!((w * m - 4.0).abs() < 1e-12, "{r:?}");
        }
    }

    #[test]
    fn names_that_need_quoting_read_back_with_as_many_fields_as_the_rows() {
        let (doc, csv) = list_for(&["t,ms", "say \"hi\""]);
        let records = records(&csv);
        assert_eq!(records.len(), doc.seqpoints.len() + 1);
        let header = &records[0];
        assert!(records.iter().all(|r| r.len() == header.len()), "{csv}");
        assert_eq!(&header[4..], &["weight", "t,ms", "say \"hi\""]);
        // Plain fields are not quoted: the header's first columns read as before.
        assert!(csv.starts_with("id,iteration,epoch,seq_len,weight,\"t,ms\",\"say \"\"hi\"\"\"\n"));
    }

    #[test]
    fn one_rule_quotes_what_needs_it_and_never_writes_a_control_character() {
        assert_eq!(csv_field("time_ms"), "time_ms");
        assert!(matches!(csv_field("time_ms"), Cow::Borrowed(_)));
        assert_eq!(csv_field("t,ms"), "\"t,ms\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("a\r\nb"), "\"a\r\nb\"");
        assert_eq!(csv_field(""), "");
        assert_eq!(csv_field("t\u{1b}[2Jms"), "t\u{241b}[2Jms");
        assert_eq!(
            csv_field("a\tb\u{7}\u{7f}\u{9b}"),
            "a\u{2409}b\u{2407}\u{2421}\u{fffd}"
        );
        assert_eq!(csv_field("x,\u{1b}"), "\"x,\u{241b}\"");
        // Whatever the name, nothing a terminal obeys is left, and no `\u{` escape appears.
        let all: String = (0u32..0x100).filter_map(char::from_u32).collect();
        let written = csv_field(&all);
        assert!(!written
            .chars()
            .any(|c| c.is_control() && c != '\n' && c != '\r'));
        assert!(!written.contains("\\u{"));
        // The csv crate reads every field back as one field.
        for name in ["t,ms", "a\"b", "two\nlines", "x\r", "\"", ",", "plain"] {
            let line = format!("{},1\n", csv_field(name));
            let record = records(&line).remove(0);
            assert_eq!(record, [name.to_string(), "1".to_string()], "{line:?}");
        }
    }

    /// A document whose names hold control characters (read back, not made by the reader,
    /// which refuses them): the list and the plan's profile CSV write them by the one rule.
    #[test]
    fn both_lists_write_control_characters_as_pictures() {
        let (mut doc, _) = list_for(&["time_ms"]);
        let raw = "t\u{1b}]0;x\u{7},ms".to_string();
        doc.input.metrics = vec![raw.clone()];
        for sp in &mut doc.seqpoints {
            let value = sp.metrics.remove("time_ms").unwrap();
            sp.metrics.insert(raw.clone(), value);
        }
        let list = seqpoints_list_csv(&doc);
        let profile = profile_csv(&doc);
        for csv in [&list, &profile] {
            assert!(csv.contains("weight,\"t\u{241b}]0;x\u{2407},ms\""), "{csv}");
            assert!(!csv.contains('\u{1b}') && !csv.contains("\\u{"), "{csv}");
            let records = records(csv);
            assert!(records.iter().all(|r| r.len() == records[0].len()), "{csv}");
        }
    }

    #[test]
    fn a_line_break_in_a_name_stays_inside_its_field() {
        let (mut doc, _) = list_for(&["time_ms"]);
        // The document may carry any name (the reader escapes control characters; a
        // document read back need not have been).
        let raw = "time\nms".to_string();
        doc.input.metrics = vec![raw.clone()];
        for sp in &mut doc.seqpoints {
            let value = sp.metrics.remove("time_ms").unwrap();
            sp.metrics.insert(raw.clone(), value);
        }
        let csv = seqpoints_list_csv(&doc);
        let records = records(&csv);
        assert_eq!(records.len(), doc.seqpoints.len() + 1);
        assert!(records.iter().all(|r| r.len() == records[0].len()), "{csv}");
        assert_eq!(records[0].last().unwrap(), &raw);
        for (record, sp) in records[1..].iter().zip(&doc.seqpoints) {
            assert_eq!(
                record.last().unwrap().parse::<f64>().unwrap(),
                sp.metrics[&raw]
            );
        }
    }
}
