//! The directive converter, both eras, file to file.

use super::*;
use crate::model::Outcome;

fn convert(text: &str) -> FileImport {
    import_directive(".ai/directives/t/x.md", "t/x", text, &Catalog::default())
}

fn written(f: &FileImport) -> &str {
    assert_eq!(f.outcome, Outcome::Imported, "{:?}", f.reason);
    assert_eq!(f.written.len(), 1);
    assert_eq!(f.written[0].path, "directives/t/x.md");
    &f.written[0].contents
}

/// (code, line, column) of every warning.
fn codes(f: &FileImport) -> Vec<(&str, usize, usize)> {
    f.warnings
        .iter()
        .map(|w| (w.code.as_str(), w.line, w.column))
        .collect()
}

fn message<'a>(f: &'a FileImport, code: &str) -> &'a str {
    &f.warnings
        .iter()
        .find(|w| w.code == code)
        .unwrap_or_else(|| panic!("no {code} in {:#?}", f.warnings))
        .message
}

/// A Python-era directive: `meta` inside <metadata>, `rest` after it in <directive>,
/// `body` after the block.
fn py(meta: &str, rest: &str, body: &str) -> String {
    format!(
        "<!-- rye:signed:2026-04-19T09:49:53Z:abc:def==:0123\n<!-- rye:unsigned -->\n# Title\n\nProse before.\n\n```xml\n<directive name=\"x\" version=\"1.2.0\">\n  <metadata>\n    <description>Does x</description>\n    <category>t</category>\n    <author>rye-os</author>\n{meta}  </metadata>\n{rest}</directive>\n```\n\n{body}"
    )
}

// §6 D-xml, D-name, D-description, D-category / D-author, D-body, HD-leading-comment's
// Python twin (signature comments dropped).
#[test]
fn d_xml_block_becomes_front_matter_and_the_rest_the_body() {
    let f = convert(&py(
        "",
        "",
        "<process>\n  <step name=\"a\">Do it.</step>\n</process>\n",
    ));
    assert_eq!(
        written(&f),
        "---\nname: x\ndescription: Does x\nversion: 1.2.0\n---\n# Title\n\nProse before.\n\n<process>\n  <step name=\"a\">Do it.</step>\n</process>\n"
    );
    assert!(f.warnings.is_empty(), "{:#?}", f.warnings);
    assert_eq!(f.rewrites, ["```xml <directive> block → YAML front matter"]);
}

// D-model (with the text some files give it).
#[test]
fn d_model_attributes_become_the_model_map() {
    let f = convert(&py(
        "    <model tier=\"fast\" id=\"claude-3-5-haiku-20241022\" provider=\"zen/zen\">Research</model>\n",
        "",
        "",
    ));
    assert_eq!(
        written(&f),
        "---\nname: x\ndescription: Does x\nversion: 1.2.0\nmodel:\n  tier: fast\n  id: claude-3-5-haiku-20241022\n  provider: zen/zen\n  description: Research\n---\n# Title\n\nProse before.\n"
    );
    assert!(f
        .rewrites
        .contains(&"<model> text \"Research\" → model.description".to_owned()));
}

// D-limits-turns, D-limits-duration, D-limits-llm.
#[test]
fn d_limits_keep_turns_and_duration_and_drop_the_llm_ones() {
    let f = convert(&py(
        "    <limits turns=\"10\" tokens=\"100000\" spend=\"1.0\" spawns=\"2\" depth=\"3\" duration_seconds=\"1\" />\n",
        "",
        "",
    ));
    assert!(written(&f).contains("limits:\n  turns: 10\n  timeout: 1\n---\n"));
    assert_eq!(
        codes(&f),
        [("IMP-D-limits-turns", 13, 5), ("IMP-D-limits-llm", 13, 5)]
    );
    assert_eq!(
        message(&f, "IMP-D-limits-turns"),
        "limits turns=10 became `limits.turns: 10`: RyeOS counted LLM turns, strata caps how many actions run"
    );
    assert_eq!(
        message(&f, "IMP-D-limits-llm"),
        "limits [tokens=100000, spend=1.0, spawns=2, depth=3] dropped: strata runs no LLM"
    );
    assert!(f
        .rewrites
        .contains(&"limits duration_seconds=1 → limits.timeout: 1".to_owned()));
}

// D-permissions (an empty one, which granted nothing, warns too), also directly under
// <directive>.
#[test]
fn d_permissions_are_dropped_with_a_warning() {
    let f = convert(&py(
        "    <permissions>\n      <execute><tool>rye.file-system.*</tool></execute>\n      <fetch>*</fetch>\n    </permissions>\n",
        "",
        "",
    ));
    assert_eq!(codes(&f), [("IMP-permissions", 13, 5)]);
    assert_eq!(
        message(&f, "IMP-permissions"),
        "<permissions> (execute: tool rye.file-system.*; fetch: *) dropped: strata enforces no capabilities"
    );
    let f = convert(&py("    <permissions />\n", "", ""));
    assert_eq!(codes(&f), [("IMP-permissions", 13, 5)]);
    assert_eq!(
        message(&f, "IMP-permissions"),
        "empty <permissions /> dropped: RyeOS granted this directive no capability, strata enforces none (its actions may do what RyeOS denied)"
    );
    let f = convert(&py(
        "",
        "  <permissions><execute><tool>*</tool></execute></permissions>\n",
        "",
    ));
    assert_eq!(codes(&f), [("IMP-permissions", 14, 3)]);
}

// D-context.
#[test]
fn d_context_is_dropped_with_a_warning() {
    let f = convert(&py(
        "    <context>\n      <system>agent/core/Behavior</system>\n      <before>x/rules</before>\n    </context>\n",
        "",
        "",
    ));
    assert_eq!(codes(&f), [("IMP-D-context", 13, 5)]);
    assert_eq!(
        message(&f, "IMP-D-context"),
        "<context> knowledge injection (system: agent/core/Behavior; before: x/rules) dropped: strata injects no knowledge into prompts"
    );
}

// D-extends.
#[test]
fn d_extends_is_dropped_with_a_warning() {
    let text = py("", "", "").replace(
        "<directive name=\"x\" version=\"1.2.0\">",
        "<directive name=\"x\" version=\"1.2.0\" extends=\"rye/agent/core/base\">",
    );
    let f = convert(&text);
    assert_eq!(codes(&f), [("IMP-D-extends", 8, 1)]);
    assert_eq!(
        message(&f, "IMP-D-extends"),
        "`extends=\"rye/agent/core/base\"` dropped: strata directives have no inheritance (the parent's context, permissions and limits are not merged in)"
    );
}

// D-inputs (types, required, typed defaults, descriptions) and D-outputs.
#[test]
fn d_inputs_become_typed_inputs_and_outputs_are_dropped() {
    let f = convert(&py(
        "",
        "  <inputs>\n    <input name=\"path\" type=\"string\" required=\"true\">\n      The file\n      to read\n    </input>\n    <input name=\"timeout\" type=\"integer\" required=\"false\" default=\"30\">Seconds</input>\n    <input name=\"items\" type=\"array\" required=\"false\" />\n    <input name=\"flag\" type=\"boolean\" required=\"false\" default=\"true\" />\n    <input name=\"opts\" type=\"object\" required=\"false\" />\n    <input name=\"ratio\" type=\"number\" required=\"false\" default=\"0.5\" />\n  </inputs>\n  <outputs>\n    <output name=\"content\">The text</output>\n    <success>It worked</success>\n  </outputs>\n",
        "Read {input:path} within {input:timeout}s.\n",
    ));
    assert_eq!(
        written(&f),
        "---\nname: x\ndescription: Does x\nversion: 1.2.0\ninputs:\n- name: path\n  type: string\n  required: true\n  description: The file to read\n- name: timeout\n  type: integer\n  required: false\n  default: 30\n  description: Seconds\n- name: items\n  type: array\n  required: false\n- name: flag\n  type: boolean\n  required: false\n  default: true\n- name: opts\n  type: object\n  required: false\n- name: ratio\n  type: number\n  required: false\n  default: 0.5\n---\n# Title\n\nProse before.\n\nRead {input:path} within {input:timeout}s.\n"
    );
    assert_eq!(codes(&f), [("IMP-D-outputs", 25, 3)]);
    assert_eq!(
        message(&f, "IMP-D-outputs"),
        "<outputs> (output name=content: The text; success: It worked) dropped: strata directives declare no outputs"
    );
}

#[test]
fn bad_inputs_are_reported() {
    let f = convert(&py(
        "",
        "  <inputs>\n    <input name=\"a\" type=\"dict\" required=\"false\" />\n    <input name=\"a\" type=\"string\" />\n    <input name=\"n\" type=\"integer\" default=\"many\" />\n  </inputs>\n",
        "{input:a} {input:n}",
    ));
    let messages: Vec<&str> = f.warnings.iter().map(|w| w.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "input `a` has type `dict`, which strata does not know: declared as `string`",
            "input `a` is declared twice: the second declaration is dropped",
            "default \"many\" of input `n` is not a integer: dropped",
        ]
    );
}

// D-input-ref (all four forms), D-output-ref, and `${input:k}` (a `$` before a layer-I
// reference) stay as they are.
#[test]
fn d_input_and_output_references_are_unchanged() {
    let body =
        "{input:k} {input:k?} {input:k:user} {input:k|outputs} {output:verdict} ${input:k}\n";
    let f = convert(&py(
        "",
        "  <inputs><input name=\"k\" type=\"string\" required=\"false\" /></inputs>\n",
        body,
    ));
    assert!(written(&f).ends_with(&format!("Prose before.\n\n{body}")));
    assert!(f.warnings.is_empty());
}

// D-inputs-dollar and D-dollar-text.
#[test]
fn d_dollar_text_is_escaped_and_declared_inputs_are_kept() {
    let f = convert(&py(
        "",
        "  <inputs><input name=\"k\" type=\"string\" required=\"false\" /></inputs>\n",
        "Use ${inputs.k} and ${inputs.field}, ${result.<field>} or ${VAR:-default}.\n",
    ));
    assert!(written(&f).ends_with(
        "Use ${inputs.k} and $${inputs.field}, $${result.<field>} or $${VAR:-default}.\n"
    ));
    assert_eq!(codes(&f), [("IMP-D-inputs-dollar", 18, 5)]);
    assert_eq!(
        message(&f, "IMP-D-inputs-dollar"),
        "`${inputs.k}` kept: it reads input `k`, but when the input is not given it now renders empty where RyeOS kept the text"
    );
    assert!(f
        .rewrites
        .contains(&"3 `${…}` of the body escaped as `$${…}` (literal text in RyeOS)".to_owned()));
}

// D-env-ref: left literal, one warning per reference.
#[test]
fn d_env_references_are_left_literal_with_a_warning() {
    let f = convert(&py(
        "",
        "",
        "Space {env:USER_SPACE}, again {env:USER_SPACE}, {env:AI_DIR}.\n",
    ));
    assert!(
        written(&f).ends_with("Space {env:USER_SPACE}, again {env:USER_SPACE}, {env:AI_DIR}.\n")
    );
    assert_eq!(codes(&f), [("IMP-D-env", 17, 7), ("IMP-D-env", 17, 49)]);
    assert_eq!(
        f.warnings[0].message,
        "`{env:USER_SPACE}` is left literal: RyeOS filled it from the environment, strata renders no environment variable in a directive body"
    );
}

// D-description: what strata would render is escaped.
#[test]
fn d_description_templates_are_escaped() {
    let text = py("", "", "").replace(
        "<description>Does x</description>",
        "<description>Costs ${cost} for {input:k}, not {input:k:d}</description>",
    );
    let f = convert(&text);
    assert!(written(&f).contains("description: Costs $${cost} for {{input:k}}, not {input:k:d}\n"));
}

#[test]
fn a_malformed_input_reference_is_kept_literal() {
    let f = convert(&py("", "", "Write {input:<name>} and {input:}.\n"));
    assert!(written(&f).ends_with("Write ${'{'}input:<name>} and ${'{'}input:}.\n"));
}

#[test]
fn undeclared_input_references_are_declared_as_optional_strings() {
    let f = convert(&py("", "", "Hello {input:who}.\n"));
    assert!(written(&f).contains("inputs:\n- name: who\n  type: string\n  required: false\n---\n"));
    assert_eq!(codes(&f), [("IMP-D-undeclared", 17, 7)]);
    assert_eq!(
        f.warnings[0].message,
        "the body reads input `who`, which the directive does not declare (RyeOS supplied it): declared as an optional string input"
    );
}

#[test]
fn a_file_without_a_directive_block_is_refused() {
    let f = convert("# Notes\n\n```xml\n<tool/>\n```\n");
    assert_eq!(f.outcome, Outcome::Refused);
    let r = f.reason.expect("a reason");
    assert_eq!(r.code, "IMP-D-xml");
    assert_eq!(
        r.message,
        "no ```xml <directive> block and no YAML front matter: not a RyeOS directive"
    );
    let f = convert("```xml\n<directive name=\"x\">\n  <metadata>\n</directive>\n```\n");
    assert_eq!(f.outcome, Outcome::Refused);
    assert_eq!(
        f.reason.expect("a reason").message,
        "the <directive> block does not parse at 4:1: </directive> closes <metadata>"
    );
}

#[test]
fn xml_entities_and_comments_are_read() {
    let text = py("", "", "").replace(
        "<description>Does x</description>",
        "<!-- note --><description>A &lt;b&gt; &amp; &#233;</description>",
    );
    assert!(written(&convert(&text)).contains("description: A <b> & é\n"));
}

// HD-escapes: RyeOS's `$${…}` is literal text, `{input:…}` inside it included (stage 1
// never sees it), and an expression strata cannot read (`${inputs.*}` in prose) is kept as
// literal text with a warning rather than left live.
#[test]
fn hd_escapes_and_unreadable_expressions_stay_literal() {
    let f = convert(&head(
        "inputs:\n  - name: x\n    type: string\n",
        "Use ${inputs.*} here. Escaped: $${input:y}, $${inputs.x} and ${input:z}.\n",
    ));
    assert_eq!(
        written(&f).split("---\n").nth(2).unwrap(),
        "Use $${inputs.*} here. Escaped: ${'${'}input:y}, $${inputs.x} and ${'${'}input:z}.\n"
    );
    assert_eq!(codes(&f), [("IMP-D-expr", 7, 5), ("IMP-D-expr", 7, 62)]);
    assert_eq!(
        message(&f, "IMP-D-expr"),
        "`${inputs.*}` is no expression strata reads (expected a key or an index after `.`): kept as literal text"
    );
}

/// A HEAD directive: front matter `front`, body `body`.
fn head(front: &str, body: &str) -> String {
    format!("<!-- ryeos:signed:2026-07-15T07:49:16Z:abc:def== -->\n---\n{front}---\n{body}")
}

// HD-leading-comment, HD-noname, HD-category, HD-model, HD-inputs, HD-inputs-ref.
#[test]
fn hd_front_matter_is_kept_and_named_after_the_file() {
    let f = convert(&head(
        "category: \"container\"\ndescription: \"Base\"\nversion: \"1.0.0\"\nmodel:\n  provider: zai\n  name: glm-4.7-flash\n  context_window: 200000\ninputs:\n  - name: input\n    type: string\n    required: true\n",
        "${inputs.input}\n",
    ));
    assert_eq!(
        written(&f),
        "---\nname: x\ndescription: Base\nversion: 1.0.0\ninputs:\n- name: input\n  type: string\n  required: true\nmodel:\n  provider: zai\n  name: glm-4.7-flash\n  context_window: 200000\n---\n${inputs.input}\n"
    );
    assert!(f.warnings.is_empty(), "{:#?}", f.warnings);
    assert_eq!(
        f.rewrites,
        [
            "signature comment before the front matter removed",
            "no `name:` → name: x (the file stem)"
        ]
    );
    let named = convert("---\nname: context\n---\nBody\n");
    assert_eq!(written(&named), "---\nname: context\n---\nBody\n");
    assert!(named.rewrites.is_empty());
}

// HD-limits, HD-continuation, HD-requires, HD-context, HD-hooks.
#[test]
fn hd_llm_keys_are_dropped_with_warnings() {
    let f = convert(&head(
        "limits:\n  turns: 80\n  tokens: 400000\n  spend_usd: \"4\"\n  depth: 5\ncontinuation:\n  carry_turns: 8\nrequires:\n  capabilities:\n    declared:\n      - ryeos.execute.tool.*\ncontext:\n  system:\n    - \"knowledge:container/important_fact\"\nhooks:\n  - id: summarize\n    event: continuation\n    action:\n      item_id: directive:ryeos/examples/summarize_continuation\n",
        "Work.\n",
    ));
    assert_eq!(
        written(&f),
        "---\nname: x\nlimits:\n  turns: 80\n---\nWork.\n"
    );
    assert_eq!(
        codes(&f),
        [
            ("IMP-D-limits-llm", 3, 1),
            ("IMP-D-limits-turns", 4, 3),
            ("IMP-D-continuation", 8, 1),
            ("IMP-permissions", 10, 1),
            ("IMP-D-context", 14, 1),
            ("IMP-D-hooks", 17, 1),
        ]
    );
    let messages: Vec<&str> = f.warnings.iter().map(|w| w.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "limits [tokens: 400000, spend_usd: \"4\", depth: 5] dropped: strata runs no LLM",
            "limits.turns 80 kept: RyeOS counted LLM turns, strata caps how many actions run",
            "`continuation: {\"carry_turns\":8}` dropped: strata runs no LLM thread, so there is no context window to continue",
            "`requires: {\"capabilities\":{\"declared\":[\"ryeos.execute.tool.*\"]}}` dropped: strata enforces no capabilities",
            "`context: {\"system\":[\"knowledge:container/important_fact\"]}` knowledge injection dropped: strata injects no knowledge into prompts",
            "hooks `summarize` on `continuation` dropped: they run a directive inline on a RyeOS thread event; strata hooks call tools on directive events",
        ]
    );
}

// HD-undeclared.
#[test]
fn hd_undeclared_inputs_are_declared_optional() {
    let f = convert(&head(
        "description: \"Continue\"\n",
        "Directive `${inputs.original_directive}`.\n\n${inputs.original_directive}\n",
    ));
    assert_eq!(
        written(&f),
        "---\nname: x\ndescription: Continue\ninputs:\n- name: original_directive\n  type: string\n  required: false\n---\nDirective `${inputs.original_directive}`.\n\n${inputs.original_directive}\n"
    );
    assert_eq!(codes(&f), [("IMP-D-undeclared", 5, 12)]);
}

// HD-expr (json order), HD-brace-literal, HD-rye-expr-only (`/`), and the §8 rewrites
// `a || b` → `a ?? b`, `x | f` → `f(x)`, `${1 + 2}` → `${(1 + 2)}`.
#[test]
fn hd_expressions_are_rewritten_for_strata() {
    let f = convert(&head(
        "inputs:\n  - {name: usage, type: object}\n  - {name: n, type: integer}\n  - {name: s, type: string}\n",
        "`${json(inputs.usage ?? null)}` {directive_name} ${inputs.n / 2} ${inputs.s || 'none'} ${inputs.s | upper} ${1 + 2} ${exists(inputs.n) ? 1 : 0}\n",
    ));
    assert!(written(&f).ends_with(
        "---\n`${json(inputs.usage ?? null)}` {directive_name} ${inputs.n / 2} ${inputs.s ?? 'none'} ${upper(inputs.s)} ${(1 + 2)} ${exists(inputs.n) ? 1 : 0}\n"
    ));
    assert_eq!(
        codes(&f),
        [("IMP-D-json-order", 8, 2), ("IMP-D-expr", 8, 50)]
    );
    assert_eq!(
        f.warnings[0].message,
        "`${json(inputs.usage ?? null)}`: strata's `json` keeps the objects' key order where HEAD RyeOS sorted the keys"
    );
    assert_eq!(
        f.warnings[1].message,
        "`${inputs.n / 2}`: `/` of two integers is integer division in strata (HEAD RyeOS gave a float)"
    );
    assert_eq!(
        &f.rewrites[2..],
        [
            "`${inputs.s || 'none'}` → `${inputs.s ?? 'none'}`",
            "`${inputs.s | upper}` → `${upper(inputs.s)}`",
            "`${1 + 2}` → `${(1 + 2)}` (an expression starting with a digit or `+` is literal text in strata)",
        ]
    );
}

#[test]
fn hd_other_namespaces_and_input_syntax_stay_literal() {
    let f = convert(&head("", "${thread.id} {input:k} {input:k:d}\n"));
    assert!(written(&f).ends_with("---\n$${thread.id} {{input:k}} ${'{'}input:k:d}\n"));
    assert_eq!(codes(&f), [("IMP-D-expr", 4, 1)]);
    assert_eq!(
        f.warnings[0].message,
        "`${thread.id}` reads `thread`, which a strata directive body does not have: kept as literal text"
    );
}

#[test]
fn hd_bad_front_matter_is_refused() {
    let f = convert("---\nname: [\n---\nBody\n");
    assert_eq!(f.reason.expect("refused").code, "IMP-D-yaml");
    let f = convert("---\nname: x\n");
    assert_eq!(
        f.reason.expect("refused").message,
        "the front matter has no closing `---` line"
    );
    // Lines are the file's, counted past the signature comment and the opening `---`.
    let f = convert(&head("name: a\nname: b\n", "Body\n"));
    assert_eq!(
        f.reason.expect("refused"),
        crate::Refusal {
            code: "IMP-D-yaml".into(),
            message: "the front matter cannot be read: duplicate key `name` at line 4 column 1 (each key may appear once in a map)".into(),
        }
    );
}
