//! Hardening, round 3 (issue 24), rows 1 and 8 and misspelt variables: threads and stacks.
//!
//! * Plan jobs: never more threads than steps that can run; `jobs` bounded (1 to 256) with
//!   one message whether it comes from `--jobs`, `STRATA_JOBS` or `strata.yaml`.
//! * Limits that bound a recursion are capped at a value proven safe on the stack every strata
//!   thread gets, whatever the main thread's stack (`ulimit -s`); a setting over its cap is
//!   refused naming the setting and the cap.
//! * A misspelt `STRATA_*` variable is warned about with a did-you-mean.

mod common;
use common::{Limit, Ran, Test};

use serde_json::{json, Value};

/// A project with a tool printing a line, and a plan of two independent steps calling it.
fn two_steps() -> Test {
    Test::new()
        .copy("tools/runtimes")
        .tool(
            "t/text",
            "description: prints text\nexecutor: runtimes/subprocess\nconfig:\n  command: printf\n  args: [\"plain words\\n\"]\n",
        )
        .file(
            "two.yaml",
            "steps:\n  - {id: a, tool: t/text, arguments: {}}\n  - {id: b, tool: t/text, arguments: {}}\n",
        )
}

const TWO_OUT: &str = "{\n  \"a\": \"plain words\",\n  \"b\": \"plain words\"\n}\n";

/// Every line of standard output parsed as JSON.
fn json_lines(ran: &Ran) -> Vec<Value> {
    ran.stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Row 1: plan jobs
// ---------------------------------------------------------------------------------------------

#[test]
fn the_most_jobs_on_a_two_step_plan_start_two_workers_in_little_memory() {
    // 256 threads with their stacks would not fit in 1 GiB of address space; two do.
    let s = two_steps();
    s.then(&["plan", "run", "two.yaml", "--jobs", "256", "--quiet"])
        .limit(Limit::AddressSpace(1 << 30))
        .stdout(TWO_OUT)
        .status(0)
        .run();
    s.then(&["plan", "run", "two.yaml", "--quiet"])
        .env("STRATA_JOBS", "256")
        .limit(Limit::AddressSpace(1 << 30))
        .stdout(TWO_OUT)
        .status(0)
        .run();
    let s = two_steps().file("strata.yaml", "jobs: 256\n");
    s.then(&["plan", "run", "two.yaml", "--quiet"])
        .limit(Limit::AddressSpace(1 << 30))
        .stdout(TWO_OUT)
        .status(0)
        .run();
}

#[test]
fn jobs_out_of_range_are_refused_with_one_message_from_every_source() {
    let s = two_steps();
    for n in ["0", "257", "30000", "1000000"] {
        let message =
            format!("error[settings]: `jobs` must be an integer from 1 to 256, not {n}\n");
        s.then(&["plan", "run", "two.yaml", "--jobs", n])
            .stdout("")
            .stderr(&format!("{message}   = help: set by --jobs\n"))
            .status(2)
            .run();
        s.then(&["plan", "run", "two.yaml"])
            .env("STRATA_JOBS", n)
            .stdout("")
            .stderr(&format!("{message}   = help: set by STRATA_JOBS\n"))
            .status(2)
            .run();
        let yaml = two_steps().file("strata.yaml", format!("jobs: {n}\n"));
        yaml.then(&["plan", "run", "two.yaml"])
            .stdout("")
            .stderr(&format!(
                "{message}  --> strata.yaml:1:7\n  |\n1 | jobs: {n}\n  |       ^\n   = field: jobs\n"
            ))
            .status(2)
            .run();
    }
    s.then(&["plan", "run", "two.yaml"])
        .env("STRATA_JOBS", "many")
        .stderr("error[settings]: `jobs` must be an integer from 1 to 256, not `many`\n   = help: set by STRATA_JOBS\n")
        .status(2)
        .run();
    two_steps()
        .file("strata.yaml", "jobs: many\n")
        .args(&["plan", "run", "two.yaml"])
        .stderr("error[settings]: `jobs` must be an integer from 1 to 256, not a string\n  --> strata.yaml:1:7\n  |\n1 | jobs: many\n  |       ^\n   = field: jobs\n")
        .status(2)
        .run();
    // A flag in range wins over the variable.
    s.then(&["plan", "run", "two.yaml", "--jobs", "2", "--quiet"])
        .env("STRATA_JOBS", "1")
        .stdout(TWO_OUT)
        .status(0)
        .run();
}

// ---------------------------------------------------------------------------------------------
// Row 8: limits bounding a recursion are capped below what strata's stacks hold
// ---------------------------------------------------------------------------------------------

/// `n` nested defaults around `x`.
fn nested_defaults(n: usize) -> String {
    format!("{}x{}", "${A:-".repeat(n), "}".repeat(n))
}

/// A document of `n` config keys, each referring to the next (`n` parameter links) inside
/// `wrap` nested defaults; the last holds `wrap` nested defaults around `end`.
fn link_chain(n: usize, wrap: usize) -> Value {
    let wrapped = |inner: &str| format!("{}{inner}{}", "${A:-".repeat(wrap), "}".repeat(wrap));
    let mut doc = serde_json::Map::new();
    for i in 0..n {
        doc.insert(format!("k{i}"), json!(wrapped(&format!("{{k{}}}", i + 1))));
    }
    doc.insert(format!("k{n}"), json!(wrapped("end")));
    Value::Object(doc)
}

#[test]
fn the_capped_recursion_limits_hold_on_any_main_stack_and_later_lines_are_served() {
    // Nesting and links multiply: 51 values of 100 nested defaults, each following a link
    // inside its innermost default, is the deepest recursion the caps allow.
    let lines = [
        json!({"template": nested_defaults(100)}),
        json!({"template": nested_defaults(101)}),
        json!({"template": link_chain(50, 0)}),
        json!({"template": link_chain(51, 0)}),
        json!({"template": link_chain(50, 100)}),
        json!({"template": "c"}),
    ];
    // Ten times over, in one read: the lines waiting together are shared among the server's
    // threads, whose stacks must hold the same recursion.
    let stdin: String = lines
        .iter()
        .map(|l| format!("{l}\n"))
        .collect::<String>()
        .repeat(10);
    for kib in [256, 8192] {
        let ran = Test::new()
            .args(&["render", "--batch"])
            .envs(&[
                ("STRATA_LIMITS_DEFAULT_DEPTH", "100"),
                ("STRATA_LIMITS_PARAM_LINKS", "50"),
            ])
            .limit(Limit::StackKib(kib))
            .stdin(stdin.clone())
            .stderr("")
            .status(0)
            .run();
        let all = json_lines(&ran);
        assert_eq!(all.len(), 60);
        assert!(all.chunks(6).all(|c| c == &all[..6]), "{all:?}");
        let replies = &all[..6];
        assert_eq!(
            replies[0],
            json!({"ok": true, "value": "x", "warnings": []})
        );
        assert_eq!(
            replies[1]["error"]["message"],
            "defaults are nested more than 100 levels deep"
        );
        assert_eq!(replies[2]["ok"], true, "{}", replies[2]["error"]);
        assert_eq!(replies[2]["value"]["k0"], "end");
        assert_eq!(replies[3]["ok"], false, "{}", replies[3]);
        assert!(replies[3]["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("parameter chain is longer than 50 links: k0 -> k1 -> "));
        assert_eq!(replies[4]["ok"], true, "{}", replies[4]["error"]);
        assert_eq!(replies[4]["value"]["k0"], "end");
        assert_eq!(
            replies[5],
            json!({"ok": true, "value": "c", "warnings": []})
        );
    }
}

#[test]
fn the_capped_limits_hold_in_a_plan_step_on_a_worker_thread() {
    // The deepest recursion the caps allow, in a tool's config: `args` -> k1 -> … -> k50,
    // each value inside 100 nested defaults, rendered by two plan workers at once.
    let mut config = link_chain(50, 100);
    let config = config.as_object_mut().expect("a map");
    config.remove("k0");
    config.insert("command".into(), json!("printf"));
    config.insert("args".into(), json!(["%s\n", "{k1}"]));
    let tool = json!({"description": "deep", "executor": "runtimes/subprocess", "config": config});
    let s = Test::new()
        .copy("tools/runtimes")
        .tool("t/deep", &tool.to_string())
        .file(
            "p.yaml",
            "steps:\n  - {id: a, tool: t/deep, arguments: {}}\n  - {id: b, tool: t/deep, arguments: {}}\n",
        )
        .file("strata.yaml", "limits: {default_depth: 100, param_links: 50}\n");
    s.then(&["plan", "run", "p.yaml", "--quiet", "--jobs", "2"])
        .limit(Limit::StackKib(256))
        .stdout("{\n  \"a\": \"end\",\n  \"b\": \"end\"\n}\n")
        .status(0)
        .run();
    s.then(&["run", "t/deep"])
        .limit(Limit::StackKib(256))
        .stdout("end\n")
        .status(0)
        .run();
}

#[test]
fn limits_over_their_cap_are_refused_naming_the_setting_and_the_cap() {
    let s = Test::new();
    for (var, value, message) in [
        (
            "STRATA_LIMITS_DEFAULT_DEPTH",
            "10000",
            "`limits.default_depth` must be an integer from 1 to 100, not 10000",
        ),
        (
            "STRATA_LIMITS_PARAM_LINKS",
            "100000",
            "`limits.param_links` must be an integer from 1 to 50, not 100000",
        ),
        (
            "STRATA_LIMITS_YAML_NODES",
            "1000000000",
            "`limits.yaml_nodes` must be an integer from 1 to 100000000, not 1000000000",
        ),
        (
            "STRATA_LIMITS_DOCUMENT_BYTES",
            "0",
            "`limits.document_bytes` must be an integer from 1 to 1073741824, not 0",
        ),
    ] {
        s.then(&["render", "--batch"])
            .env(var, value)
            .stdin("{\"template\": \"c\"}\n")
            .stdout("")
            .stderr(&format!(
                "error[settings]: {message}\n   = help: set by {var}\n"
            ))
            .status(2)
            .run();
    }
    Test::new()
        .file("strata.yaml", "limits:\n  param_links: 1000000000\n")
        .args(&["config"])
        .stdout("")
        .stderr("error[settings]: `limits.param_links` must be an integer from 1 to 50, not 1000000000\n  --> strata.yaml:2:16\n  |\n2 |   param_links: 1000000000\n  |                ^\n   = field: limits.param_links\n")
        .status(2)
        .run();
}

/// One request of 1 MB asked for a 1 GB reply once `strata.yaml` raised the output limit to
/// its cap: a project file raises a size only to four times its default, and going higher
/// takes the caller's own variable.
#[test]
fn a_project_file_raises_a_size_within_its_bound_and_a_variable_goes_higher() {
    let request =
        json!({"id": 1, "template": vec!["{p}"; 10_000], "params": {"p": "x".repeat(100 << 10)}});
    Test::new()
        .file("strata.yaml", "limits:\n  output_bytes_per_config: 1073741824\n")
        .args(&["render", "--batch"])
        .stdin(format!("{request}\n"))
        .stdout("")
        .stderr("error[settings]: `limits.output_bytes_per_config` must be an integer from 1 to 268435456, not 1073741824\n  --> strata.yaml:2:28\n  |\n2 |   output_bytes_per_config: 1073741824\n  |                            ^\n   = field: limits.output_bytes_per_config\n   = help: strata.yaml may raise a size or a count to 4 times its default; to go higher, set STRATA_LIMITS_OUTPUT_BYTES_PER_CONFIG (at most 1073741824)\n")
        .status(2)
        .run();
    let bounded = Test::new().file(
        "strata.yaml",
        "limits:\n  output_bytes_per_config: 268435456\n",
    );
    let ran = bounded
        .then(&["render", "--batch"])
        .stdin(format!("{request}\n"))
        .stderr("")
        .status(0)
        .run();
    let reply = &json_lines(&ran)[0];
    assert_eq!(
        (
            &reply["id"],
            &reply["error"]["kind"],
            &reply["error"]["message"]
        ),
        (
            &json!(1),
            &json!("limit"),
            &json!("rendered document exceeds 268435456 bytes")
        )
    );
    // The variable of whoever runs strata raises it past the file's bound, to its cap.
    let ran = bounded
        .then(&["config", "--json"])
        .env("STRATA_LIMITS_OUTPUT_BYTES_PER_CONFIG", "1073741824")
        .status(0)
        .run();
    let config: Value = serde_json::from_str(&ran.stdout).unwrap();
    assert_eq!(
        config["limits.output_bytes_per_config"],
        json!({"value": 1073741824, "source": "env STRATA_LIMITS_OUTPUT_BYTES_PER_CONFIG"})
    );
}

// ---------------------------------------------------------------------------------------------
// Misspelt variables
// ---------------------------------------------------------------------------------------------

#[test]
fn a_misspelt_strata_variable_is_warned_about_with_a_did_you_mean() {
    let s = two_steps();
    s.then(&["plan", "run", "two.yaml", "--quiet"])
        .env("STRATA_JOSB", "3")
        .stdout(TWO_OUT)
        .stderr("warning[settings]: `STRATA_JOSB` is not a setting and is ignored: did you mean `STRATA_JOBS`?\n")
        .status(0)
        .run();
    Test::new()
        .args(&["render", "--batch"])
        .env("STRATA_LIMITS_DEFALT_DEPTH", "40")
        .stdin("{\"template\": \"c\"}\n")
        .stdout("{\"ok\":true,\"value\":\"c\",\"warnings\":[]}\n")
        .stderr("warning[settings]: `STRATA_LIMITS_DEFALT_DEPTH` is not a setting and is ignored: did you mean `STRATA_LIMITS_DEFAULT_DEPTH`?\n")
        .status(0)
        .run();
    let ran = Test::new()
        .args(&["config"])
        .env("STRATA_STIRCT", "1")
        .status(0)
        .run();
    assert_eq!(
        ran.stderr,
        "warning[settings]: `STRATA_STIRCT` is not a setting and is ignored: did you mean `STRATA_STRICT`?\n"
    );
    // A variable of another program that happens to start with STRATA_ is left alone.
    Test::new()
        .args(&["render", "--batch"])
        .env("STRATA_BIN", "/usr/bin/strata")
        .stdin("{\"template\": \"c\"}\n")
        .stderr("")
        .status(0)
        .run();
}
