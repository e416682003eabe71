//! Paths whose every reference or warning is located in its file (issue 17: they used to
//! parse the whole file again for each one, quadratic in the file).
//!
//! * `locate_check_8000`: `strata check` of a project whose one tool holds 8,000 known
//!   placeholders (80 arguments of 100 `{who}` each), in process against the 0.2 s target;
//! * `locate_check_8000_bin`: the same through the `strata` binary, against the 0.2 s target
//!   and against `strata run many --dry-run` of the same tool (`dry_run`: loading, checking
//!   and rendering it once; the target is at most 2×);
//! * `locate_render_7400_missing`: a 300 KB YAML file of 7,400 keys, each with an unset
//!   `${MISSING_n}`, parsed, compiled, rendered, and each of its 7,400 warnings located
//!   (line and column), in process against the 0.1 s target;
//! * `locate_render_7400_missing_bin`: `strata render` of that file through the binary (the
//!   warnings printed to standard error), against the 0.1 s target.

use std::hint::black_box;
use std::path::Path;

use strata_check::check_project;
use strata_core::{EnvMap, Limits, RenderOptions, Scope};
use strata_doc::{Document, Format};
use strata_pipeline::{Chain, Template};

use super::exec::{write, PRIMITIVE};
use crate::harness::{compare, measure, run_strata, strata_binary, Settings};
use crate::report::Report;

/// Placeholders in the checked tool.
pub const PLACEHOLDERS: usize = 8_000;
/// Missing variables in the rendered file.
pub const MISSING: usize = 7_400;
/// The two sizes in smoke mode.
const SMOKE_PLACEHOLDERS: usize = 800;
const SMOKE_MISSING: usize = 740;
/// The budget of the check, in nanoseconds.
const CHECK_TARGET_NS: f64 = 2e8;
/// The budget of the render, in nanoseconds.
const RENDER_TARGET_NS: f64 = 1e8;

/// A project whose tool `many` holds `placeholders` known placeholders ([`PLACEHOLDERS`] when
/// measured), 100 to an argument.
pub fn placeholder_project(placeholders: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary directory");
    write(dir.path(), "tools/runtimes/subprocess.yaml", PRIMITIVE);
    let mut tool = String::from(
        "description: many placeholders\nexecutor: runtimes/subprocess\nparameters:\n  type: object\n  properties:\n    who: {type: string, default: ada}\nconfig:\n  command: printf\n  args:\n",
    );
    for _ in 0..placeholders.div_ceil(100) {
        tool.push_str(&format!("    - \"{}\"\n", "{who}-".repeat(100)));
    }
    write(dir.path(), "tools/many.yaml", &tool);
    dir
}

/// YAML of `missing` keys, each with one unset variable (about 300 KB for [`MISSING`]).
pub fn missing_yaml(missing: usize) -> String {
    (0..missing)
        .map(|i| format!("k{i}: \"a value ${{MISSING_{i}}} then text\"\n"))
        .collect()
}

/// Parses, compiles and renders `text`; locates every warning; the number of warnings.
fn render_located(text: &str, limits: &Limits) -> usize {
    let doc = Document::parse("miss.yaml", text.as_bytes().to_vec(), Format::Yaml, limits)
        .expect("parses");
    let template = Template::compile(&doc.value, &Chain::full(), limits).expect("compiles");
    let env = EnvMap::default();
    let scope = Scope {
        env: &env,
        ..Scope::default()
    };
    let out = template
        .render(&scope, &RenderOptions::default())
        .expect("renders");
    out.warnings
        .iter()
        .filter_map(|w| doc.locate(&w.path, w.span.map(|s| s.start)))
        .count()
}

/// Measures the check and the render, in process and through the binary.
pub fn run(settings: &Settings, report: &mut Report) {
    let limits = Limits::default();
    let placeholders = settings.pick(PLACEHOLDERS, PLACEHOLDERS, SMOKE_PLACEHOLDERS);
    let missing = settings.pick(MISSING, MISSING, SMOKE_MISSING);
    let project = placeholder_project(placeholders);
    let found = check_project(project.path(), &limits).expect("checks");
    assert_eq!(
        found.diagnostics.len(),
        0,
        "{:?}",
        found.diagnostics.first()
    );
    let m = measure(settings, || {
        black_box(check_project(project.path(), &limits).expect("checks"))
    });
    report.against("locate_check_8000", &m, "target", CHECK_TARGET_NS);

    let text = missing_yaml(missing);
    assert_eq!(render_located(&text, &limits), missing);
    let m = measure(settings, || render_located(black_box(&text), &limits));
    report.against("locate_render_7400_missing", &m, "target", RENDER_TARGET_NS);

    let Some(bin) = strata_binary() else {
        report.note("no strata binary next to strata-bench: the locate _bin rows are skipped");
        return;
    };
    let dir: &Path = project.path();
    let (check, dry) = compare(
        settings,
        || run_strata(&bin, dir, &["check"], 0),
        || run_strata(&bin, dir, &["run", "many", "--dry-run"], 0),
    );
    report.compare("locate_check_8000_bin", &check, "dry_run", &dry);
    report.against("locate_check_8000_bin", &check, "target", CHECK_TARGET_NS);
    std::fs::write(dir.join("miss.yaml"), &text).expect("write");
    let m = measure(settings, || {
        run_strata(&bin, dir, &["render", "miss.yaml", "--clean-env"], 0)
    });
    report.against(
        "locate_render_7400_missing_bin",
        &m,
        "target",
        RENDER_TARGET_NS,
    );
}
