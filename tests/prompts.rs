//! End-to-end tests of prompt templates through the `strata` binary: `strata prompt render`
//! and `strata prompt list` over the shipped `prompts/`, the agent-loop graph whose prompt
//! follows the last anchor action, and `strata check` over a broken tree (T001–T006).

mod common;
use common::Test;

/// A scratch project holding a copy of the repository's `tools/` and `prompts/`.
fn project() -> Test {
    Test::new().copy("tools").copy("prompts")
}

/// A scratch project with the runtimes only, no `prompts/`.
fn bare() -> Test {
    Test::new().copy("tools/runtimes")
}

/// `strata prompt render` with `args`, in `s`'s project.
fn render(s: &Test, args: &[&str]) -> Test {
    let mut all = vec!["prompt", "render"];
    all.extend_from_slice(args);
    s.then(&all)
}

// ---------------------------------------------------------------------------------------
// strata prompt render

#[test]
fn a_key_renders_its_template_and_a_missing_key_falls_back_to_main_default() {
    let s = project();
    render(
        &s,
        &[
            "BrowseLink",
            "--feed",
            "context=example.org",
            "--feed",
            "user_input=Hi",
        ],
    )
    .stdout(
        "You just navigated to a webpage. Here is what you see:\nexample.org\n\n\
         Based on the page content, respond to the user.\nUser: Hi\n",
    )
    .stderr("")
    .status(0)
    .run();
    for args in [
        &["--feed", "user_input=Hi"][..],
        &["Answer", "--feed", "user_input=Hi"],
    ] {
        render(&s, args)
            .stdout("You are a helpful assistant.\n\nUser: Hi\n")
            .status(0)
            .run();
    }
}

#[test]
fn type_root_space_version_and_default_name_are_flags() {
    let s = project()
        .file("prompts/agent/main/default.j2", "agent default\n")
        .file("prompts/main/fallback.j2", "the fallback\n");
    let cases: [(&[&str], &str); 4] = [
        (&["Search", "--type", "reflection", "--feed", "user_input=x"], "Review your previous actions for: x\n"),
        (&["Search", "--root-space", "agent"], "agent default\n"),
        (
            &["BrowseLink", "--version", "enterprise", "--pin", "system_preamble=concise", "--feed", "context=c", "--feed", "user_input=u"],
            "You are a CFD assistant.\nPage: c\nRespond in a structured format with reasoning.\nUser: u\n",
        ),
        (&["Nothing", "--default-name", "fallback"], "the fallback\n"),
    ];
    for (args, want) in cases {
        render(&s, args).stdout(want).status(0).run();
    }
}

#[test]
fn feed_json_knowledge_and_merge_strategies() {
    let s = project().file("feed.yaml", "user_input: from a file\naction_result: [1]\n");
    let base = [
        "Search",
        "--feed-json",
        "@feed.yaml",
        "--knowledge-json",
        r#"{"action_result": [2], "user_input": "known"}"#,
    ];
    let cases = [
        ("feed_only", "[2]", "known"),
        ("attribute_only", "[1]", "from a file"),
        ("merge", "[1,2]", "from a file\n\nknown"),
    ];
    for (merge, result, user) in cases {
        let mut args = base.to_vec();
        args.extend(["--merge", merge]);
        render(&s, &args)
            .stdout(&format!("You just performed a search. Results:\n{result}\n\nAnalyze these results for the user.\nUser: {user}\n"))
            .status(0).run();
    }
    let o = render(
        &s,
        &[
            "Search",
            "--feed",
            "user_input=a",
            "--feed-json",
            r#"{"user_input": "b"}"#,
        ],
    )
    .status(0)
    .run();
    assert!(
        o.stdout.ends_with("User: a\n"),
        "--feed wins over --feed-json"
    );
}

#[test]
fn feed_values_holding_template_syntax_print_as_text() {
    let s = project();
    render(
        &s,
        &[
            "--feed",
            "user_input={{ secret }} {% include '/etc/passwd' %}",
        ],
    )
    .stdout("You are a helpful assistant.\n\nUser: {{ secret }} {% include '/etc/passwd' %}\n")
    .status(0)
    .run();
}

#[test]
fn several_variants_need_all_variants_or_pins() {
    let s = project();
    let args = [
        "BrowseLink",
        "--version",
        "enterprise",
        "--feed",
        "context=c",
        "--feed",
        "user_input=u",
    ];
    render(&s, &args)
        .status(2)
        .stderr(
            "error[prompt]: template `main/BrowseLink.enterprise` has 2 variants (system_preamble=concise; system_preamble=detailed)\n\
             \x20  = help: pass --all-variants to print them all, or --pin COMPONENT=VERSION for one\n",
        )
        .run();
    let mut all = args.to_vec();
    all.push("--all-variants");
    render(&s, &all)
        .stdout(
            "--- system_preamble=concise ---\nYou are a CFD assistant.\nPage: c\n\
             Respond in a structured format with reasoning.\nUser: u\n\
             --- system_preamble=detailed ---\nYou are a helpful AI assistant with expertise in CFD.\n\
             Page: c\nRespond in a structured format with reasoning.\nUser: u\n",
        )
        .status(0).run();
    let mut json = all.clone();
    json.push("--json");
    let v = render(&s, &json).status(0).run().json();
    assert_eq!(
        v["variants"][1]["versions"],
        serde_json::json!({"system_preamble": "detailed"})
    );
    let mut bad = args.to_vec();
    bad.extend(["--pin", "system_preamble=short"]);
    render(&s, &bad)
        .stderr("error[prompt]: component `system_preamble` has no version `short`\n   = help: its versions are concise, detailed\n")
        .status(2).run();
}

#[test]
fn json_output_names_template_file_and_hash() {
    let s = project();
    let o = render(
        &s,
        &[
            "Search",
            "--feed",
            "user_input=u",
            "--feed",
            "action_result=r",
            "--json",
        ],
    )
    .status(0)
    .run();
    let hash = {
        let text = o.read("prompts/main/Search.j2");
        let v = o.json();
        assert_eq!(v["hash"].as_str().unwrap().len(), 64);
        assert!(text.starts_with("You just performed a search."));
        v["hash"].as_str().unwrap().to_string()
    };
    assert_eq!(
        o.stdout,
        format!(
            "{{\n  \"template\": \"main/Search\",\n  \"file\": \"prompts/main/Search.j2\",\n  \"hash\": \"{hash}\",\n  \
             \"text\": \"You just performed a search. Results:\\nr\\n\\nAnalyze these results for the user.\\nUser: u\"\n}}\n"
        )
    );
    render(
        &s,
        &["Search", "--feed", "user_input=u", "--hash", &hash[..12]],
    )
    .status(0)
    .run();
    render(&s, &["Search", "--hash", "00000000"])
        .status(2)
        .stderr(&format!(
            "error[prompt]: template `main/Search` (prompts/main/Search.j2) does not match the pinned hash `00000000`: its content hash is `{hash}`\n  \
             --> prompts/main/Search.j2:1:1\n  |\n1 | You just performed a search. Results:\n  | ^\n   \
             = help: the template changed since it was pinned: review the change, then pin the new hash\n"
        ))
        .run();
}

#[test]
fn explain_lists_the_candidates_in_order_and_the_winner() {
    let s = project();
    render(
        &s,
        &[
            "BrowseLink",
            "--root-space",
            "action_agent",
            "--feed",
            "context=c",
            "--feed",
            "user_input=u",
            "--feed",
            "token=t0k3n",
            "--secret",
            "token",
            "--explain",
        ],
    )
    .stdout(
        "key: BrowseLink
settings: type main, root space action_agent, version none, default name default, merge feed_only
candidates:
   1. action_agent/main/BrowseLink  missing
   2. action_agent/main/default     missing
   3. main/BrowseLink               won: prompts/main/BrowseLink.j2
   4. main/default                  not tried
   5. default                       not tried
variables:
  context (feed): \"c\"
  user_input (feed): \"u\"
  token (feed): ***
  system_preamble (component): prompts/templates.yaml:13:18 (versions concise, detailed)
  response_instructions (component): prompts/templates.yaml:16:28
--- main/BrowseLink (prompts/main/BrowseLink.j2) ---
You just navigated to a webpage. Here is what you see:
c

Based on the page content, respond to the user.
User: u
",
    )
    .status(0)
    .run();
}

#[test]
fn undefined_variables_warn_and_strict_makes_them_errors() {
    let s = project();
    render(&s, &[])
        .stdout("You are a helpful assistant.\n\nUser: \n")
        .stderr("warning[prompt]: undefined variable `user_input` in template `main/default` (prompts/main/default.j2:3:10)\n")
        .status(0).run();
    render(&s, &["--strict"])
        .stdout("")
        .status(2)
        .stderr(
            "error[prompt]: undefined variable `user_input` in template `main/default`\n  \
             --> prompts/main/default.j2:3:10\n  |\n3 | User: {{ user_input }}\n  |          ^\n   \
             = help: strict mode: give the variable a value, or guard it with `{% if x is defined %}`\n",
        )
        .run();
}

#[test]
fn bad_keys_missing_templates_and_escapes_are_clear_errors() {
    let s = project();
    render(&s, &["../../etc/passwd"])
        .status(2)
        .stderr(
            "error[prompt]: key `../../etc/passwd` would lead outside the prompts tree\n   \
             = help: keys and settings name templates inside prompts/: no `..`, `/…` or `\\`\n",
        )
        .run();
    render(&s, &["x", "--type", "other", "--version", "v"])
        .stderr(
            "error[prompt]: no template for key `x`: tried other/x.v, other/x, other/default.v, other/default, default.v, default\n   \
             = help: add one of them, or a `default` template at the top of prompts/\n",
        )
        .status(2).run();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.j2"), "top secret").unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("secret.j2"),
        s.path().join("prompts/main/leak.j2"),
    )
    .unwrap();
    render(&s, &["leak"])
        .stderr(
            "error[prompt]: `prompts/main/leak.j2` is a symbolic link to a path outside prompts/\n\
             \x20  = help: templates are read only from inside prompts/\n",
        )
        .status(2)
        .run();
    render(&bare(), &["x"])
        .status(2)
        .stderr(
            "error[prompt]: the project has no `prompts/` directory\n   \
             = help: prompt templates live in prompts/<type>/<name>.j2 (see docs/prompts.md)\n",
        )
        .run();
}

#[test]
fn a_ten_megabyte_template_is_refused_unread() {
    let s = project().file("prompts/main/huge.j2", "x".repeat(10 << 20));
    render(&s, &["huge"])
        .status(2)
        .stderr(
            "error[prompt]: `prompts/main/huge.j2` is larger than the template limit of 4194304 bytes\n\
             \x20  = help: split the template, or raise `limits.template_bytes` in strata.yaml (or STRATA_LIMITS_TEMPLATE_BYTES)\n",
        )
        .run();
    // The hint is true: the setting it names lets the template in.
    let ran = render(&s, &["huge"])
        .env("STRATA_LIMITS_TEMPLATE_BYTES", "16777216")
        .status(0)
        .run();
    assert_eq!(ran.stderr, "");
    assert_eq!(ran.stdout.len(), (10 << 20) + 1);
}

// ---------------------------------------------------------------------------------------
// strata prompt list

#[test]
fn list_shows_namespaces_names_versions_and_components() {
    let s = project();
    s.then(&["prompt", "list"])
        .stdout(
            "main
  BrowseLink [-, enterprise]
  Search
  default
  component system_preamble [concise, detailed]
  component response_instructions
reflection
  default
",
        )
        .status(0)
        .run();
    let v = s.then(&["prompt", "list", "--json"]).status(0).run().json();
    assert_eq!(
        v[0],
        serde_json::json!({"namespace": "main",
            "templates": {"BrowseLink": [null, "enterprise"], "Search": [null], "default": [null]},
            "components": {"system_preamble": ["concise", "detailed"], "response_instructions": []}})
    );
}

// ---------------------------------------------------------------------------------------
// The agent-loop graph

#[test]
fn the_agent_loop_prompt_follows_the_last_anchor_action() {
    project()
        .args(&["run", "graphs/agent_loop", "--run-id", "demo"])
        .stderr(
            r#"run demo: starting graphs/agent_loop at `think`
step 1 think (prompt) -> plan: template = "main/default" (was ""), prompt = "You are a helpful assistant.\n\nUser: How does strata choo… (was "")
step 2 plan (action) -> think (otherwise): turn = 1 (was 0), last_anchor_action_type = "BrowseLink" (was null), observation = "strata renders layered configs and prompt templates." (was ""), answer = "https://example.org/strata" (was null)
step 3 think (prompt) -> plan: template = "main/BrowseLink" (was "main/default"), prompt = "You just navigated to a webpage. Here is what you see:\nst… (was "You are a helpful assistant.\n\nUser: How does strata choo…)
step 4 plan (action) -> think (otherwise): turn = 2 (was 1), last_anchor_action_type = "Search" (was "BrowseLink"), observation = "1. docs/prompts.md  2. README.md  3. docs/graphs.md" (was "strata renders layered configs and prompt templates."), answer = "strata prompt fallback" (was "https://example.org/strata")
step 5 think (prompt) -> plan: template = "main/Search" (was "main/BrowseLink"), prompt = "You just performed a search. Results:\n1. docs/prompts.md … (was "You just navigated to a webpage. Here is what you see:\nst…)
step 6 plan (action) -> done (when result.action == 'Answer'): turn = 3 (was 2), observation = "" (was "1. docs/prompts.md  2. README.md  3. docs/graphs.md"), answer = "strata picks the prompt from the last anchor action." (was "strata prompt fallback")
step 7 done (return) -> return: no state change
run demo: completed after 7 steps
"#,
        )
        .stdout("{\n  \"answer\": \"strata picks the prompt from the last anchor action.\",\n  \"turns\": 3,\n  \"last_template\": \"main/Search\"\n}\n")
        .status(0)
        .run();
}

#[test]
fn a_prompt_node_renders_key_version_and_feed_from_state() {
    let o = project()
        .file(
            "tools/graphs/p.yaml",
            r#"kind: graph
parameters:
  type: object
  properties: {version: {type: string, default: enterprise}}
state: {key: BrowseLink}
nodes:
  render:
    kind: prompt
    key: "${state.key}"
    version: "${inputs.version}"
    feed: {context: "{{ not rendered }}", user_input: "${state.key}"}
    pin: {system_preamble: detailed}
    assign: {out: "${result}"}
"#,
        )
        .args(&["run", "graphs/p", "--quiet"])
        .status(0)
        .run();
    let v = o.json();
    assert_eq!(
        v["out"],
        serde_json::json!({"template": "main/BrowseLink.enterprise",
            "text": "You are a helpful AI assistant with expertise in CFD.\nPage: {{ not rendered }}\nRespond in a structured format with reasoning.\nUser: BrowseLink"})
    );
    o.then(&["run", "graphs/bad", "--run-id", "b"])
        .file(
            "tools/graphs/bad.yaml",
            "kind: graph\nstate: {}\nnodes:\n  render:\n    kind: prompt\n    key: \"../x\"\n",
        )
        .status(1)
        .stderr(
            "run b: starting graphs/bad at `render`\n\
             step 1 render failed: key `../x` would lead outside the prompts tree (on_error: fail)\n\
             run b: failed after 1 step: node `render`: key `../x` would lead outside the prompts tree\n",
        )
        .run();
}

// ---------------------------------------------------------------------------------------
// strata check

#[test]
fn check_reports_every_prompt_mistake_with_its_code() {
    let o = bare()
        .file("prompts/main/broken.j2", "Hello {{ user_input }}\n{% if %}\n")
        .file(
            "prompts/main/default.j2",
            "Hi {{ user_input }} about {{ topic }}.\n{% include \"main/header\" %}\n",
        )
        .file("prompts/main/dup.j2", "x\n")
        .file(
            "prompts/t.yaml",
            "main:\n  dup: again\n  Browselink.enterprise: ent {{ user_input }}\n  components:\n    tone: [{version: formal, content: F}]\n",
        )
        .file(
            "tools/graphs/ask.yaml",
            r#"kind: graph
description: asks
state: {last: null}
nodes:
  think:
    kind: prompt
    key: "${state.last}"
    feed:
      user_input: hi
    pin:
      tone: casual
      style: short
    assign: {p: "${result.text}"}
    next: other
  other:
    kind: prompt
    type: reflection
    key: Search
    feed: {user_input: x}
"#,
        )
        .args(&["check"])
        .status(1)
        .run();
    let text = &o.stdout;
    let summary = text.lines().last().unwrap_or_default().to_string();
    assert!(summary.ends_with(": 6 errors, 2 warnings"), "{summary}");
    assert_eq!(
        text.replace(&format!("{summary}\n"), ""),
        r#"error[T001]: template `main/broken`: unexpected end of block
  --> prompts/main/broken.j2:2:7
  |
2 | {% if %}
  |       ^
   = help: see the Jinja syntax: {{ value }}, {% if %}…{% endif %}, {% for x in xs %}…{% endfor %}

warning[T003]: `topic` is read by `main/default`, but the feed of prompt node `think` (tools/graphs/ask.yaml) does not provide it
  --> prompts/main/default.j2:1:30
  |
1 | Hi {{ user_input }} about {{ topic }}.
  |                              ^
   = help: add `topic` to the node's `feed`, or guard it with `{% if topic is defined %}`

error[T004]: `main/default` includes `main/header`, which is not a template of prompts/
  --> prompts/main/default.j2:2:12
  |
2 | {% include "main/header" %}
  |            ^
   = help: name a template by its id, such as `main/components/header`

error[T002]: template `main/dup` is defined twice: in prompts/main/dup.j2 and in prompts/t.yaml:2:8
  --> prompts/t.yaml:2:8
  |
2 |   dup: again
  |        ^
   = help: remove one of them

warning[T005]: `main/Browselink.enterprise` is version `enterprise` of `Browselink`, which no lookup through `main` can fall back to
  --> prompts/t.yaml:3:26
  |
3 |   Browselink.enterprise: ent {{ user_input }}
  |                          ^
   = help: add `Browselink` (the template this version overrides), or drop the version

error[T004]: component `tone` has no version `casual`
  --> tools/graphs/ask.yaml:11:13
   |
11 |       tone: casual
   |             ^
   = field: nodes.think.pin.tone
   = help: its versions are formal

error[T004]: prompt node `think` pins component `style`, which `main/Browselink.enterprise` does not see
  --> tools/graphs/ask.yaml:12:14
   |
12 |       style: short
   |              ^
   = field: nodes.think.pin.style

error[T006]: prompt node `other`: no template for key `Search`: tried reflection/Search, reflection/default, default
  --> tools/graphs/ask.yaml:18:10
   |
18 |     key: Search
   |          ^
   = field: nodes.other.key
   = help: add one of them, or a `default` template at the top of prompts/

"#
    );
}

#[test]
fn check_of_a_prompt_node_without_prompts_and_of_the_shipped_tree() {
    let o = bare()
        .file(
            "tools/graphs/ask.yaml",
            "kind: graph\nstate: {}\nnodes:\n  think:\n    kind: prompt\n    key: x\n",
        )
        .args(&["check"])
        .status(1)
        .run();
    assert!(
        o.stdout.starts_with(
            "error[T006]: prompt node `think` renders a template, but the project has no prompts/ directory\n  \
             --> tools/graphs/ask.yaml:5:11\n"
        ),
        "{}",
        o.stdout
    );
    let o = project()
        .args(&["check", "--deny-warnings"])
        .status(0)
        .run();
    assert!(
        o.stdout.ends_with(": 0 errors, 0 warnings\n"),
        "{}",
        o.stdout
    );
}
