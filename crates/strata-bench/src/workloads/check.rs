//! `strata check` over a generated project of 1,000 tools and 200 directives, against the
//! 1 s budget of the requirements.

use std::hint::black_box;

use strata_check::{check_project, Severity};
use strata_core::Limits;

use super::exec::{write, PRIMITIVE};
use crate::harness::{measure, Settings};
use crate::report::Report;

/// Tools in the generated project.
pub const TOOLS: usize = 1_000;
/// Directives in the generated project.
pub const DIRECTIVES: usize = 200;
/// The budget: 1 s.
const TARGET_NS: f64 = 1e9;
/// Tools and directives in smoke mode.
const SMOKE_TOOLS: usize = 40;
const SMOKE_DIRECTIVES: usize = 10;

/// Writes the project: a script runtime, `tools` tools ([`TOOLS`] when measured) with
/// parameters, env defaults, config keys and literals, and `directives` directives
/// ([`DIRECTIVES`]) with inputs, two actions chained through `${steps…}` and a hook.
pub fn generated_project(tools: usize, directives: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let root = dir.path();
    write(root, "tools/runtimes/subprocess.yaml", PRIMITIVE);
    write(
        root,
        "tools/runtimes/script.yaml",
        "description: runs a script\nexecutor: runtimes/subprocess\nconfig:\n  command: \"${SHELL_BIN:-sh}\"\n  args: [\"{tool_dir}/{script}\"]\n  input_data: \"{params_json}\"\n",
    );
    for i in 0..tools {
        let text = format!(
            "description: generated tool {i}\nexecutor: runtimes/script\nparameters:\n  type: object\n  properties:\n    name: {{type: string, default: n{i}}}\n    count: {{type: integer, default: {i}}}\nenv_config:\n  env:\n    TOOL_HOME: \"${{HOME}}/.cache/t{i}\"\nconfig:\n  script: scripts/t{i}.sh\n  label: \"tool {i} for {{name}}\"\n  env: {{LABEL: \"{{label}}\", COUNT: \"{{count}}\", MODE: \"${{MODE:-fast}}\"}}\n  timeout: {}\n",
            10 + i % 50
        );
        write(
            root,
            &format!("tools/gen/g{:02}/tool{i}.yaml", i % 20),
            &text,
        );
    }
    for j in 0..directives {
        let (a, b) = (j % tools, (j * 7 + 3) % tools);
        let text = format!(
            "---\nname: d{j}\ndescription: \"directive {j} for {{input:who?}}\"\nmodel: {{tier: fast}}\nlimits: {{turns: 4}}\ninputs:\n  - {{name: who, type: string, required: true}}\n  - {{name: n, type: integer, default: {j}}}\nhooks:\n  - id: log\n    event: after_action\n    condition: {{path: result.exit_code, op: eq, value: 0}}\n    action: {{tool: gen/g{:02}/tool{a}, params: {{name: \"${{action.id}} by ${{directive}}\"}}}}\nactions:\n  - id: first\n    tool: gen/g{:02}/tool{a}\n    params: {{name: \"{{input:who}}\", count: \"{{input:n}}\"}}\n  - id: second\n    tool: gen/g{:02}/tool{b}\n    params: {{name: \"${{steps.first.result.stdout}}\", count: \"${{length(inputs.who) + 1}}\"}}\n---\nHello {{input:who}}: ${{steps.second.result.data.words ?? 0}} words on ${{model.tier}}.\n",
            a % 20,
            a % 20,
            b % 20
        );
        write(root, &format!("directives/d{j}.md"), &text);
    }
    dir
}

/// Measures `check_project` over the generated project.
pub fn run(settings: &Settings, report: &mut Report) {
    let tools = settings.pick(TOOLS, TOOLS, SMOKE_TOOLS);
    let directives = settings.pick(DIRECTIVES, DIRECTIVES, SMOKE_DIRECTIVES);
    let dir = generated_project(tools, directives);
    let limits = Limits::default();
    let first = check_project(dir.path(), &limits).expect("checks");
    assert_eq!(
        first.count(Severity::Error),
        0,
        "the generated project is clean: {:?}",
        first
            .diagnostics
            .iter()
            .find(|d| d.severity == Severity::Error)
    );
    assert_eq!(first.files, tools + directives + 2, "every file is checked");
    report.note(&format!(
        "check: {} files ({tools} tools, {directives} directives, 2 runtimes), {} diagnostics",
        first.files,
        first.diagnostics.len()
    ));
    let m = measure(settings, || {
        black_box(check_project(dir.path(), &limits).expect("checks"))
    });
    report.against("check_project", &m, "target", TARGET_NS);
}
