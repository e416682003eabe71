//! SPEC §1, "integer → decimal (no float round trip)", past 64 bits, end to end: integers
//! beyond `u64` and `i64`, and one past 128 bits, read from JSON and YAML (documents,
//! parameters, contexts, batch requests, plan results, tool output, response fields, prompt
//! feeds) print as their exact decimal, whole and embedded in text.

mod common;
use common::Test;

/// 2^64 + 1.
const U: &str = "18446744073709551617";
/// -(2^63) - 1.
const I: &str = "-9223372036854775809";
/// 40 digits: past 128 bits.
const L: &str = "1234567890123456789012345678901234567890";

#[test]
fn render_reads_them_from_documents_parameters_and_contexts() {
    let s = Test::new()
        .file("doc.yaml", format!("u: {U}\nw: \"{{u}}\"\nt: \"u={{u}} i={{i}} l=${{state.l}}\"\nci: \"{{i}}\"\nl: \"${{state.l}}\"\n"))
        .file("doc.json", format!("{{\"u\": {U}, \"w\": \"{{u}}\", \"t\": \"u={{u}} i={{i}} l=${{state.l}}\", \"ci\": \"{{i}}\", \"l\": \"${{state.l}}\"}}"))
        .file("ctx.yaml", format!("state: {{l: {L}}}\n"));
    let expected = format!("{{\n  \"u\": {U},\n  \"w\": {U},\n  \"t\": \"u={U} i={I} l={L}\",\n  \"ci\": {I},\n  \"l\": {L}\n}}\n");
    for doc in ["doc.yaml", "doc.json"] {
        for context in [
            "@ctx.yaml".to_string(),
            format!("{{\"state\": {{\"l\": {L}}}}}"),
        ] {
            let params = format!("{{\"i\": {I}}}");
            s.then(&[
                "render",
                doc,
                "--params-json",
                &params,
                "--context",
                &context,
            ])
            .stdout(&expected)
            .stderr("")
            .status(0)
            .run();
        }
    }
}

#[test]
fn render_batch_answers_with_them() {
    let request = format!(
        "{{\"id\": {U}, \"template\": {{\"a\": \"{{p}}\", \"b\": \"${{state.l}}\", \"c\": \"{{input:i}}\", \"d\": \"{{p}} ${{state.l}} {{input:i}}\", \"e\": {L}}}, \"params\": {{\"p\": {U}}}, \"context\": {{\"state\": {{\"l\": {L}}}}}, \"inputs\": {{\"i\": {I}}}}}\n"
    );
    Test::new()
        .args(&["render", "--batch"])
        .stdin(request)
        .stdout(&format!("{{\"id\":{U},\"ok\":true,\"value\":{{\"a\":{U},\"b\":{L},\"c\":{I},\"d\":\"{U} {L} {I}\",\"e\":{L}}},\"warnings\":[]}}\n"))
        .stderr("")
        .status(0)
        .run();
}

#[test]
fn plan_references_carry_them_from_results_and_tool_output() {
    let plan = "steps:\n  - {tool: t/big, arguments: {}}\n  - tool: t/json\n    arguments:\n      x: \"$step1.u\"\n      text: \"u={$step1.u} i={$step1.i} l={{step1.result.l}}\"\n      data: \"{{step1.result.l}}\"\n";
    let s = Test::new()
        .copy("tools/runtimes")
        .tool(
            "t/big",
            &format!("executor: runtimes/subprocess\nconfig:\n  command: printf\n  args: [\"%s\\n\", '{{\"u\": {U}, \"i\": {I}, \"l\": {L}}}']\n"),
        )
        .tool(
            "t/json",
            "executor: runtimes/subprocess\nparameters:\n  type: object\n  properties:\n    x: {}\n    text: {type: string}\n    data: {}\nconfig:\n  command: printf\n  args: [\"%s\\n\", \"{params_json}\"]\n",
        )
        .file("plan.yaml", plan);
    s.then(&["plan", "run", "plan.yaml", "--quiet"])
        .stdout(&format!("{{\n  \"step2\": {{\n    \"x\": {U},\n    \"text\": \"u={U} i={I} l={L}\",\n    \"data\": {L}\n  }}\n}}\n"))
        .stderr("")
        .status(0)
        .run();
    // The same references resolved from results an orchestrator reports, all three forms.
    let request = format!(
        "{{\"id\": 1, \"plan\": [{{\"tool\": \"t/big\", \"arguments\": {{}}}}, {{\"tool\": \"t/json\", \"arguments\": {{\"x\": \"$step1.u\", \"text\": \"{{$step1.i}} {{{{step1.result.l}}}}\", \"data\": \"{{{{step1.result.l}}}}\"}}}}], \"results\": {{\"step1\": {{\"u\": {U}, \"i\": {I}, \"l\": {L}}}}}}}\n"
    );
    s.then(&["plan", "resolve", "--batch"])
        .stdin(request)
        .stdout(&format!("{{\"id\":1,\"ok\":true,\"levels\":[[\"step1\"],[\"step2\"]],\"steps\":[{{\"id\":\"step1\",\"depends_on\":[],\"state\":\"completed\"}},{{\"id\":\"step2\",\"depends_on\":[\"step1\"],\"state\":\"ready\",\"arguments\":{{\"x\":{U},\"text\":\"{I} {L}\",\"data\":{L}}}}}],\"missing_values\":[]}}\n"))
        .stderr("")
        .status(0)
        .run();
}

#[test]
fn respond_prints_them_from_tool_fields_and_the_callers_context() {
    Test::new()
        .copy("tools/runtimes")
        .file("big.j2", "u={{ account.u }} i={{ account.i }} l={{ account.l }} list={{ account.list }} std={{ std.variables.n }}\n")
        .file("results/r.json", format!("{{\"canned_response_fields\": {{\"account\": {{\"u\": {U}, \"l\": {L}}}}}}}"))
        .file("results/r.yaml", format!("canned_response_fields:\n  account.i: {I}\n  account.list: [{U}, {L}, 1.5]\n"))
        .args(&["respond", "big.j2", "--std-json", &format!("{{\"variables\": {{\"n\": {L}}}}}"), "--tool-result", "results/r.json", "--tool-result", "results/r.yaml"])
        .stdout(&format!("u={U} i={I} l={L} list=[{U},{L},1.5] std={L}\n"))
        .stderr("")
        .status(0)
        .run();
}

#[test]
fn prompt_feeds_print_them_alone_and_inside_lists_and_maps() {
    let s = Test::new()
        .copy("tools/runtimes")
        .file(
            "prompts/main/big.j2",
            "u={{ u }} i={{ i }} l={{ l }} list={{ list }} map={{ map }}",
        )
        .file(
            "feed.yaml",
            format!("u: {U}\ni: {I}\nlist: [{U}, {L}, 2.50]\nmap: {{k: {L}}}\n"),
        );
    s.then(&[
        "prompt",
        "render",
        "big",
        "--feed-json",
        "@feed.yaml",
        "--knowledge-json",
        &format!("{{\"l\": {L}}}"),
    ])
    .stdout(&format!(
        "u={U} i={I} l={L} list=[{U},{L},2.5] map={{\"k\":{L}}}\n"
    ))
    .stderr("")
    .status(0)
    .run();
}
