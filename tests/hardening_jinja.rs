//! Hardening, round 3 (issue 24), rows 5–7: prompt trees and Jinja renders attacked from
//! outside. A chain of components must not overflow the stack or load in quadratic time, a
//! render must stop at its output limit while it writes and at its fuel whatever a loop's
//! body, and a prompt tree is capped by its compiled size, aliases counted.
//!
//! Every run is bounded by [`MEMORY`], so that a regression fails its test instead of the
//! machine.

mod common;
use common::{Limit, Test};

use serde_json::{json, Value};

/// At most 1 GiB of address space (the bombs below needed 1 to 8 GB).
const MEMORY: Limit = Limit::AddressSpace(1 << 30);

/// A scratch project with the runtimes only, plus `files`.
fn project(files: &[(&str, &str)]) -> Test {
    let mut t = Test::new().copy("tools/runtimes");
    for (rel, text) in files {
        t = t.file(rel, text);
    }
    t
}

/// A prompts dict whose template `deep` reads component `c_0`, which reads `c_1`, … up to
/// `c_n`, which is plain text.
fn chain(n: usize) -> String {
    let mut out = String::from("main:\n  deep: '{{ c_0 }}'\n  components:\n");
    for i in 0..n {
        out.push_str(&format!("    c_{i}: '{{{{ c_{} }}}}'\n", i + 1));
    }
    out.push_str(&format!("    c_{n}: end\n"));
    out
}

/// The error of a `--json` run that failed.
fn error(stdout: &str) -> Value {
    let v: Value = serde_json::from_str(stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    v["error"].clone()
}

// ---------------------------------------------------------------------------------------------
// Row 5: a chain of components
// ---------------------------------------------------------------------------------------------

#[test]
fn a_chain_of_two_thousand_components_is_refused_with_its_depth_not_a_stack_overflow() {
    let tree = chain(2000);
    let s = project(&[("prompts/t.yaml", &tree)]);
    let ran = s
        .then(&["prompt", "render", "deep", "--json"])
        .limit(MEMORY)
        .limit(Limit::StackKib(8192))
        .status(2)
        .run();
    let e = error(&ran.stdout);
    assert_eq!(e["kind"], "limit", "{e}");
    assert_eq!(
        e["message"],
        "components nest more than 100 deep: `main/deep` reads `c_0`, which reads `c_1`, … `c_99`, which reads `c_100`"
    );
    assert_eq!(
        e["hint"],
        "a component may read other components at most 100 deep: flatten the chain"
    );
}

#[test]
fn a_chain_of_one_hundred_components_renders_on_a_small_stack() {
    let tree = chain(99);
    project(&[("prompts/t.yaml", &tree)])
        .args(&["prompt", "render", "deep"])
        .limit(MEMORY)
        .limit(Limit::StackKib(2048))
        .stdout("end\n")
        .status(0)
        .run();
}

#[test]
fn a_chain_of_twenty_thousand_components_loads_and_is_listed_and_checked() {
    // Loading used to walk the chain from every component (cubic), recursively; then the
    // position of each quoted template decoded the rest of its file (quadratic: 131 s of
    // CPU for this list in a debug build, 1.9 s linear).
    let tree = chain(20_000);
    let s = project(&[("prompts/t.yaml", &tree)]);
    let ran = s
        .then(&["prompt", "list", "--json"])
        .measured(std::time::Duration::from_secs(60))
        .limit(MEMORY)
        .limit(Limit::CpuSeconds(30))
        .limit(Limit::StackKib(2048))
        .status(0)
        .run();
    assert!(ran.stdout.contains("c_19999"), "{}", ran.stdout.len());
    // Templates are compiled when a render needs them (a compiled one costs about 10 KB):
    // the tree holds their sources, not 20,000 compiled templates (188 MiB).
    if ran.peak_rss_kib > 0 {
        assert!(ran.peak_rss_kib < 100 << 10, "{} KiB", ran.peak_rss_kib);
    }
    s.then(&["check"])
        .limit(MEMORY)
        .limit(Limit::StackKib(2048))
        .status(0)
        .run();
}

#[test]
fn a_cycle_through_a_long_chain_is_reported_once() {
    let mut tree = chain(5000);
    tree = tree.replace("c_5000: end", "c_5000: '{{ c_0 }}'");
    let s = project(&[("prompts/t.yaml", &tree)]);
    let ran = s
        .then(&["prompt", "render", "deep", "--json"])
        .limit(MEMORY)
        .limit(Limit::StackKib(2048))
        .status(2)
        .run();
    assert_eq!(error(&ran.stdout)["kind"], "cycle", "{}", ran.stdout);
}

// ---------------------------------------------------------------------------------------------
// Row 6: output limit while writing, fuel whatever the body, bounded filters
// ---------------------------------------------------------------------------------------------

/// `prompt render t` of a one-template tree; its error.
fn render_error(template: &str) -> Value {
    let ran = project(&[("prompts/main/t.j2", template)])
        .args(&["prompt", "render", "t", "--json"])
        .limit(MEMORY)
        .status(2)
        .run();
    error(&ran.stdout)
}

const OUTPUT_HINT: &str = "if this is intended, raise `limits.output_bytes_per_string` in strata.yaml (or STRATA_LIMITS_OUTPUT_BYTES_PER_STRING)";

#[test]
fn every_output_bomb_of_a_prompt_stops_at_the_output_limit() {
    for template in [
        "{{ (range(10000)|list) * 10000 }}",
        "{{ \"%0999999999d\"|format(1) }}",
        "{{ \"a\nb\"|indent(100000000) }}",
        "{% set x %}{% for i in range(100) %}{{ \"x\" * 9000000 }}{% endfor %}{% endset %}",
    ] {
        let e = render_error(template);
        assert_eq!(e["kind"], "limit", "{template}: {e}");
        assert_eq!(e["hint"], OUTPUT_HINT, "{template}: {e}");
        assert_eq!(
            e["message"], "template `main/t`: rendered text exceeds 16777216 bytes",
            "{template}: {e}"
        );
    }
}

#[test]
fn a_filter_given_more_items_than_the_fuel_refuses_them_before_building_anything() {
    for (template, filter) in [
        (
            "{% set x = (range(10000)|list) * 10000 %}{{ x|list|length }}",
            "list",
        ),
        ("{{ ((range(10000)|list) * 10000)|join }}", "join"),
        ("{{ ((range(10000)|list) * 10000)|tojson }}", "tojson"),
        ("{{ [[(range(10000)|list) * 10000]]|sort }}", "sort"),
    ] {
        let e = render_error(template);
        assert_eq!(e["kind"], "limit", "{template}: {e}");
        assert_eq!(
            e["message"],
            format!(
                "template `main/t`: engine ran out of fuel: `{filter}` of more than 500000 items"
            ),
            "{template}: {e}"
        );
    }
}

#[test]
fn the_output_limit_is_the_projects_setting() {
    let s = project(&[
        (
            "prompts/main/t.j2",
            "{% for i in range(100) %}0123456789{% endfor %}",
        ),
        ("strata.yaml", "limits:\n  output_bytes_per_string: 500\n"),
    ]);
    let ran = s
        .then(&["prompt", "render", "t", "--json"])
        .limit(MEMORY)
        .status(2)
        .run();
    let e = error(&ran.stdout);
    assert_eq!(
        e["message"],
        "template `main/t`: rendered text exceeds 500 bytes"
    );
    assert_eq!(e["hint"], OUTPUT_HINT);
}

#[test]
fn a_constant_body_loop_of_a_million_items_runs_out_of_fuel() {
    for template in [
        "{% for i in (range(100000)|list) * 10 %}x{% endfor %}",
        "{% for i in range(1000) %}{% for j in range(900) %}{% endfor %}{% endfor %}",
    ] {
        let e = render_error(template);
        assert_eq!(e["kind"], "limit", "{template}: {e}");
        assert_eq!(
            e["message"], "template `main/t`: engine ran out of fuel",
            "{template}: {e}"
        );
    }
}

#[test]
fn a_response_of_a_huge_tool_field_in_a_loop_stops_at_the_output_limit() {
    let ran = project(&[
        (
            "tools/bank/huge.yaml",
            "executor: runtimes/subprocess\nresponse_fields: [big]\nconfig:\n  command: python3\n  \
             args: ['-c', 'import json; print(json.dumps({\"canned_response_fields\": {\"big\": \"x\" * (6 << 20)}}))']\n",
        ),
        (
            "directives/huge.md",
            "---\nname: huge\nactions:\n  - {id: list, tool: bank/huge}\nresponses:\n  candidates:\n    \
             - template: '{% for i in range(100) %}{{ big }}{% endfor %}'\n---\n",
        ),
    ])
    .args(&["run", "directives/huge.md", "--json"])
    .limit(MEMORY)
    .status(1)
    .run();
    let report: Value = serde_json::from_str(&ran.stdout).unwrap();
    let e = &report["response"]["error"];
    assert_eq!(e["kind"], "limit", "{e}");
    assert_eq!(
        e["message"],
        "response template: rendered text exceeds 16777216 bytes"
    );
    assert_eq!(e["hint"], OUTPUT_HINT);
}

// ---------------------------------------------------------------------------------------------
// Row 7: aliases count against the template limit
// ---------------------------------------------------------------------------------------------

#[test]
fn aliases_of_a_big_template_count_against_the_files_template_limit() {
    let mut tree = format!("main:\n  t0: &big '{}'\n", "x".repeat(21 << 10));
    for i in 1..2900 {
        tree.push_str(&format!("  t{i}: *big\n"));
    }
    let s = project(&[("prompts/t.yaml", &tree)]);
    for (args, status) in [
        (&["prompt", "render", "t0", "--json"][..], 2),
        (&["prompt", "list", "--json"], 2),
        (&["check"], 1),
    ] {
        let ran = s.then(args).limit(MEMORY).status(status).run();
        assert!(
            ran.stdout.contains(
                "`prompts/t.yaml` holds more than the template limit of 4194304 bytes (aliases counted)"
            ),
            "{args:?}: {}",
            ran.stdout
        );
        assert!(
            ran.stdout.contains(
                "split the template, or raise `limits.template_bytes` in strata.yaml (or STRATA_LIMITS_TEMPLATE_BYTES)"
            ),
            "{args:?}: {}",
            ran.stdout
        );
    }
}

#[test]
fn templates_of_many_files_together_are_capped_by_the_document_template_limit() {
    let big = "y".repeat(3 << 20);
    let files: Vec<(String, String)> = (0..6)
        .map(|i| (format!("prompts/main/t{i}.j2"), big.clone()))
        .collect();
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let ran = project(&files)
        .args(&["prompt", "list", "--json"])
        .limit(MEMORY)
        .status(2)
        .run();
    assert!(
        ran.stdout.contains(
            "the prompt tree holds more than 16777216 bytes of templates (aliases counted)"
        ),
        "{}",
        ran.stdout
    );
    assert!(
        ran.stdout
            .contains("raise `limits.template_bytes_per_document` in strata.yaml"),
        "{}",
        ran.stdout
    );
    let _ = json!(null);
}

/// A render's run measured: its `--json` error and peak memory in KiB.
fn measured_error(template: &str) -> (Value, u64) {
    let ran = project(&[("prompts/main/t.j2", template)])
        .args(&["prompt", "render", "t", "--json"])
        .measured(std::time::Duration::from_secs(20))
        .limit(MEMORY)
        .status(2)
        .run();
    (error(&ran.stdout), ran.peak_rss_kib)
}

#[test]
fn strings_doubled_by_operators_or_captures_run_out_of_fuel_under_100_mb() {
    for template in [
        // `~` and `+` doubling a namespace's string in a loop.
        "{% set ns = namespace(s='x') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s|length }}",
        "{% set ns = namespace(s='x') %}{% for i in range(64) %}{% set ns.s = ns.s + ns.s %}{% endfor %}{{ ns.s|length }}",
        // Straight-line doubling from the largest repetition minijinja allows.
        "{% set a = 'x' * 60000000 %}{% set b = a ~ a %}{% set c = b ~ b %}{{ c|length }}",
        // One repetition of 99 MB, past the fuel's 32 MB before it is built.
        "{% for i in range(100) %}{{ \"x\" * 99000000 }}{% endfor %}",
        // Lists of a million items built a hundred times.
        "{% for i in range(100) %}{{ (range(10000)|list) * 100 }}{% endfor %}",
    ] {
        let (e, peak) = measured_error(template);
        assert_eq!(e["kind"], "limit", "{template}: {e}");
        assert_eq!(
            e["message"], "template `main/t`: engine ran out of fuel",
            "{template}: {e}"
        );
        if peak > 0 {
            assert!(peak < 100 << 10, "{template}: {peak} KiB");
        }
    }
    // A macro doubling its argument on the way down stops at the nesting limit or the fuel,
    // whichever comes first.
    let (e, peak) = measured_error(
        "{% macro d(s, n) %}{% if n %}{{ d(s ~ s, n - 1) }}{% else %}{{ s|length }}{% endif %}{% endmacro %}{{ d('x', 60) }}",
    );
    assert_eq!(e["kind"], "limit", "{e}");
    if peak > 0 {
        assert!(peak < 100 << 10, "{peak} KiB");
    }
    // A `{% set %}` capture doubling in a loop stops at the output limit, which counts
    // what captures print.
    let (e, peak) = measured_error(
        "{% set ns = namespace(s='x') %}{% for i in range(64) %}{% set t %}{{ ns.s }}{{ ns.s }}{% endset %}{% set ns.s = t %}{% endfor %}{{ ns.s|length }}",
    );
    assert_eq!(e["kind"], "limit", "{e}");
    assert_eq!(
        e["message"],
        "template `main/t`: rendered text exceeds 16777216 bytes"
    );
    if peak > 0 {
        assert!(peak < 100 << 10, "{peak} KiB");
    }
}
