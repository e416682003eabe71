//! `strata config`: the settings in force for the project — `strata.yaml` and `STRATA_*`
//! variables over the defaults — each with where its value came from.

use std::process::ExitCode;

use clap::Args;
use serde_json::{json, Map, Value};
use strata_app::settings::{limit, Source, LIMIT_KEYS};
use strata_app::{Project, Settings};

use crate::outcome::open_project_as;
use crate::shared_args::SharedArgs;
use crate::style::{paint, NOTE};

/// Options of `strata config`.
#[derive(Debug, Args)]
pub(crate) struct ConfigArgs {
    /// The global options; `--json` prints the settings as JSON (each `{value, source}`)
    #[command(flatten)]
    pub(crate) shared: SharedArgs,
}

/// Every setting: its key, its value as JSON, where it came from, and what it does.
fn rows(s: &Settings) -> Vec<(String, Value, &Source, &'static str)> {
    let mut rows = vec![
        (
            "strict".to_string(),
            json!(s.strict.value),
            &s.strict.source,
            "missing variables, paths and inputs are errors",
        ),
        (
            "jobs".to_string(),
            json!(s.jobs.value),
            &s.jobs.source,
            "plan steps running at once",
        ),
        (
            "checkpoint_every".to_string(),
            json!(s.checkpoint_every.value.to_string()),
            &s.checkpoint_every.source,
            "graph runs write a synced checkpoint every N steps, or every duration (500ms, 2s, 1m)",
        ),
        (
            "secrets".to_string(),
            json!(s.secrets.value),
            &s.secrets.source,
            "environment variables shown as *** everywhere",
        ),
    ];
    for ((key, what), source) in LIMIT_KEYS.iter().zip(&s.limit_sources) {
        rows.push((
            format!("limits.{key}"),
            json!(limit(&s.limits, key)),
            source,
            what,
        ));
    }
    rows
}

/// The settings for people: one aligned line each, then the order in which sources win.
fn table(project: &Project) -> String {
    let rows = rows(&project.settings);
    let cells: Vec<[String; 3]> = rows
        .iter()
        .map(|(k, v, src, _)| [k.clone(), v.to_string(), src.to_string()])
        .collect();
    let width = |i: usize| {
        cells
            .iter()
            .map(|c| c[i].chars().count())
            .max()
            .unwrap_or(0)
    };
    let (w0, w1, w2) = (width(0), width(1), width(2));
    let file = strata_app::settings::FILE;
    let from = if project.root.join(file).is_file() {
        format!("({file})")
    } else {
        format!("(no {file}: defaults and STRATA_* variables)")
    };
    let mut out = format!("settings of {} {from}\n", project.root.display());
    for (c, (_, _, _, what)) in cells.iter().zip(&rows) {
        let line = format!(
            "  {:<w0$}  {:<w1$}  {:<w2$}  {}",
            c[0],
            c[1],
            c[2],
            paint(NOTE, format!("# {what}"))
        );
        out.push_str(&line);
        out.push('\n');
    }
    out.push_str("a flag wins over a STRATA_* variable, which wins over strata.yaml, which wins over the default\n");
    out
}

fn as_json(project: &Project) -> Value {
    let mut map = Map::new();
    for (key, value, source, _) in rows(&project.settings) {
        map.insert(key, json!({"value": value, "source": source.to_string()}));
    }
    Value::Object(map)
}

/// Runs `strata config`.
pub(crate) fn run(args: ConfigArgs) -> ExitCode {
    let project = match open_project_as(None, None, args.shared.json) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let text = if args.shared.json {
        serde_json::to_string_pretty(&as_json(&project)).unwrap_or_default() + "\n"
    } else {
        table(&project)
    };
    crate::output::print_styled(&text);
    ExitCode::SUCCESS
}
