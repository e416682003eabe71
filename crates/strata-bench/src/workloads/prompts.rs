//! Prompt templates (`strata-prompts`).
//!
//! * `prompt_render`: a cached template with a 10-variable feed rendered through the manager
//!   (lookup, feed, context, render), against minijinja rendering the same template from the
//!   same feed directly (target ≤ 1.3×), and against Python's jinja2 on the same template and
//!   feed (`scripts/jinja2_render.py`, run when `python3 -c 'import jinja2'` works).
//! * `prompt_render_shipped`: every `.j2` template of the repository's own `prompts/` tree
//!   (loaded as `strata prompt render` loads a project's), each rendered through the manager
//!   with the same feed, against minijinja rendering the same sources directly: one
//!   iteration renders them all (target ≤ 1.2×).
//! * `prompt_lookup_miss`: a key through the whole six-step chain of seed 002 (root space,
//!   type, top), every step a miss, to the configured default template: target < 1 µs.
//! * `prompt_render_cli`: `strata prompt render` as a user runs it (the release binary next
//!   to this one, a real `prompts/` tree, the feed from a file), against `python3` rendering
//!   the same file with jinja2 in a new process.

use std::hint::black_box;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use serde_json::{json, Map, Value};
use strata_prompts::{Call, Overrides, PromptManager};

use crate::harness::{compare, measure, of_calls, strata_binary, Measurement, Settings};
use crate::report::Report;

/// The template: ten variables in a prompt of typical shape.
pub const TEMPLATE: &str = "You are {{ persona }}, helping {{ user_name }} ({{ user_role }}).
Task: {{ task }}
Context: {{ context }}
Last action: {{ last_action }} -> {{ action_result }}
Memory: {{ memory }}
Constraints: {{ constraints }}
User: {{ user_input }}
";

/// The lookup target of the requirements, in nanoseconds.
pub const LOOKUP_TARGET_NS: f64 = 1_000.0;

/// The feed: ten string variables.
pub fn feed() -> Map<String, Value> {
    let v = json!({
        "persona": "a careful research assistant",
        "user_name": "Ada",
        "user_role": "engineer",
        "task": "summarise the search results",
        "context": "https://example.org/strata",
        "last_action": "Search",
        "action_result": "3 results: docs/prompts.md, README.md, docs/graphs.md",
        "memory": "the user prefers short answers",
        "constraints": "cite the documents you use",
        "user_input": "How does strata choose a prompt?",
    });
    v.as_object().cloned().unwrap_or_default()
}

fn manager() -> PromptManager {
    PromptManager::builder()
        .dict(&json!({"main": {"Search": TEMPLATE}}), "bench")
        .build()
        .expect("the bench template loads")
}

/// The seed's tree: `action_agent/main` and `main` hold other templates, no `default`
/// anywhere, and a configured default template ends the chain.
fn miss_manager() -> PromptManager {
    let tree = json!({
        "action_agent": {"main": {"Search": "s", "Answer": "a"}},
        "main": {"Search": "s", "Answer": "a", "Reflect": "r"},
    });
    PromptManager::builder()
        .dict(&tree, "bench")
        .default_template("fallback")
        .build()
        .expect("the miss tree loads")
        .switch(&Overrides {
            root_space: Some(Some("action_agent".into())),
            ..Overrides::default()
        })
        .expect("the root space is valid")
}

/// True when `python3 -c 'import jinja2'` works.
fn has_jinja2() -> bool {
    Command::new("python3")
        .args(["-c", "import jinja2"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/jinja2_render.py");

/// jinja2's median ns per render of [`TEMPLATE`] with [`feed`], or why it could not run.
fn jinja2_ns(expect: &str, iters: u64) -> Result<f64, String> {
    let request = json!({"template": TEMPLATE, "feed": feed(), "iters": iters, "expect": expect});
    let mut child = Command::new("python3")
        .arg(SCRIPT)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start python3: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(request.to_string().as_bytes())
            .map_err(|e| e.to_string())?;
    }
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err("jinja2 rendered a different text".into());
    }
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .map_err(|e| format!("bad output from the jinja2 script: {e}"))
}

/// Wall time of `n` runs of `program` in `dir`, each checked to print `expect`.
fn process_ns(
    dir: &Path,
    program: &Path,
    args: &[&str],
    expect: &str,
    n: usize,
) -> Option<Measurement> {
    let mut times = Vec::with_capacity(n);
    for _ in 0..n {
        let start = Instant::now();
        let out = Command::new(program)
            .args(args)
            .current_dir(dir)
            .stdin(Stdio::null())
            .output()
            .ok()?;
        times.push(start.elapsed());
        if !out.status.success() || String::from_utf8_lossy(&out.stdout) != expect {
            return None;
        }
    }
    Some(of_calls(times))
}

/// Measures the manager's render against minijinja and jinja2, the lookup, and the CLI.
pub fn run(settings: &Settings, report: &mut Report) {
    let prompts = manager();
    let feed = feed();
    let call = Call::key("Search").feed(&feed);
    let expect = prompts
        .render(&call)
        .expect("renders")
        .text()
        .unwrap_or_default()
        .to_string();
    let mut env = minijinja::Environment::new();
    env.add_template("search", TEMPLATE).expect("compiles");
    let direct = env.get_template("search").expect("is there");
    let context = Value::Object(feed.clone());
    assert_eq!(
        direct
            .render(minijinja::value::Serde(&context))
            .expect("renders"),
        expect
    );
    let (ours, theirs) = compare(
        settings,
        || prompts.render(black_box(&call)).expect("renders"),
        || {
            direct
                .render(minijinja::value::Serde(black_box(&context)))
                .expect("renders")
        },
    );
    report.compare("prompt_render", &ours, "minijinja", &theirs);
    if has_jinja2() {
        match jinja2_ns(&expect, settings.pick(20_000, 3_000, 10)) {
            Ok(ns) => report.against("prompt_render", &ours, "jinja2", ns),
            Err(why) => report.check_failed(
                settings.smoke,
                &format!("prompt_render against jinja2 skipped: {why}"),
            ),
        }
    } else {
        report.skip("prompt_render against jinja2 skipped: `python3 -c 'import jinja2'` fails");
    }
    let misses = miss_manager();
    assert_eq!(
        misses.resolve(Some("BrowseLink")).ok().flatten(),
        Some("<default template>")
    );
    let lookup = measure(settings, || {
        misses
            .resolve(black_box(Some("BrowseLink")))
            .map(|id| id.map(str::len))
    });
    report.against("prompt_lookup_miss", &lookup, "target", LOOKUP_TARGET_NS);
    shipped(settings, report);
    cli(&expect, settings, report);
}

/// The repository's root, whose `prompts/` tree is the shipped one.
const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

/// The shipped `.j2` templates through the manager and through minijinja directly.
fn shipped(settings: &Settings, report: &mut Report) {
    let root = Path::new(REPO);
    let prompts = PromptManager::load(root, &strata_core::Limits::default())
        .expect("the shipped prompts load");
    let feed = feed();
    let mut env = minijinja::Environment::new();
    let mut keys = Vec::new();
    for entry in std::fs::read_dir(root.join("prompts/main")).expect("prompts/main") {
        let path = entry.expect("an entry").path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let Some(stem) = name.strip_suffix(".j2") else {
            continue;
        };
        let source = std::fs::read_to_string(&path).expect("a template");
        keys.push(format!("main/{stem}"));
        env.add_template_owned(format!("main/{stem}"), source)
            .expect("compiles");
    }
    keys.sort();
    assert!(
        keys.len() >= 3,
        "the shipped prompts/main holds its templates"
    );
    let calls: Vec<Call<'_>> = keys.iter().map(|k| Call::key(k).feed(&feed)).collect();
    let direct: Vec<_> = keys
        .iter()
        .map(|k| env.get_template(k).expect("is there"))
        .collect();
    let context = Value::Object(feed.clone());
    for (call, template) in calls.iter().zip(&direct) {
        let ours = prompts.render(call).expect("renders");
        let theirs = template
            .render(minijinja::value::Serde(&context))
            .expect("renders");
        assert_eq!(ours.text().unwrap_or_default(), theirs, "{:?}", call.key);
    }
    let (ours, theirs) = compare(
        settings,
        || {
            calls
                .iter()
                .map(|call| {
                    let out = prompts.render(black_box(call)).expect("renders");
                    out.text().map_or(0, str::len)
                })
                .sum::<usize>()
        },
        || {
            direct
                .iter()
                .map(|t| {
                    t.render(minijinja::value::Serde(black_box(&context)))
                        .expect("renders")
                        .len()
                })
                .sum::<usize>()
        },
    );
    report.compare("prompt_render_shipped", &ours, "minijinja", &theirs);
}

/// `strata prompt render` through the release binary against a jinja2 process.
fn cli(expect: &str, settings: &Settings, report: &mut Report) {
    let Some(strata) = strata_binary() else {
        report.note("prompt_render_cli skipped: build the binary first (cargo build --release)");
        return;
    };
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let root = tmp.path();
    crate::workloads::exec::write(root, "tools/.keep", "");
    crate::workloads::exec::write(root, "prompts/main/Search.j2", TEMPLATE);
    crate::workloads::exec::write(root, "feed.json", &Value::Object(feed()).to_string());
    crate::workloads::exec::write(
        root,
        "render.py",
        "import json, jinja2\nenv = jinja2.Environment(loader=jinja2.FileSystemLoader('prompts'))\n\
         text = env.get_template('main/Search.j2').render(**json.load(open('feed.json')))\n\
         print(text, end='' if text.endswith('\\n') else '\\n')\n",
    );
    // `strata prompt render` ends its output with a newline when the text has none; the
    // script prints the same.
    let printed = if expect.ends_with('\n') {
        expect.to_string()
    } else {
        format!("{expect}\n")
    };
    let expect = printed.as_str();
    let n = settings.pick(31, 9, 1);
    let args = ["prompt", "render", "Search", "--feed-json", "@feed.json"];
    let Some(ours) = process_ns(root, &strata, &args, expect, n) else {
        report.check_failed(
            settings.smoke,
            "prompt_render_cli skipped: the binary did not print the expected prompt",
        );
        return;
    };
    if !has_jinja2() {
        report.skip(&format!(
            "prompt_render_cli: {:.2} ms per run; no peer (`python3 -c 'import jinja2'` fails)",
            ours.median_ns / 1e6
        ));
        return;
    }
    match process_ns(root, Path::new("python3"), &["render.py"], expect, n) {
        Some(peer) => report.compare("prompt_render_cli", &ours, "python_jinja2_cli", &peer),
        None => report.check_failed(
            settings.smoke,
            "prompt_render_cli against jinja2 skipped: the script failed",
        ),
    }
}
