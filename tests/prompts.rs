//! End-to-end tests of prompt templates through the `strata` binary: `strata prompt render`
//! and `strata prompt list` over the shipped `prompts/`, the agent-loop graph whose prompt
//! follows the last anchor action, and `strata check` over a broken tree (T001–T006).

mod common;
use common::{copy_dir, home_var, path_var, repo, write};

use std::path::Path;
use std::process::{Command, Output, Stdio};

/// A scratch project holding a copy of the repository's `tools/` and `prompts/`.
struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    fn new() -> Scratch {
        let dir = tempfile::tempdir().unwrap();
        copy_dir(&repo().join("tools"), &dir.path().join("tools"));
        copy_dir(&repo().join("prompts"), &dir.path().join("prompts"));
        Scratch { dir }
    }

    /// A project with the runtimes only, no `prompts/`.
    fn bare() -> Scratch {
        let dir = tempfile::tempdir().unwrap();
        copy_dir(
            &repo().join("tools/runtimes"),
            &dir.path().join("tools/runtimes"),
        );
        Scratch { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn file(&self, rel: &str, text: &str) -> &Scratch {
        write(self.path(), rel, text);
        self
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_strata"))
            .args(args)
            .current_dir(self.path())
            .env_clear()
            .env("PATH", path_var())
            .env("HOME", home_var())
            .stdin(Stdio::null())
            .output()
            .expect("strata runs")
    }
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn render(s: &Scratch, args: &[&str]) -> Output {
    let mut all = vec!["prompt", "render"];
    all.extend_from_slice(args);
    s.run(&all)
}

// ---------------------------------------------------------------------------------------
// strata prompt render

#[test]
fn a_key_renders_its_template_and_a_missing_key_falls_back_to_main_default() {
    let s = Scratch::new();
    let o = render(
        &s,
        &[
            "BrowseLink",
            "--feed",
            "context=example.org",
            "--feed",
            "user_input=Hi",
        ],
    );
    assert_eq!(
        stdout(&o),
        "You just navigated to a webpage. Here is what you see:\nexample.org\n\n\
         Based on the page content, respond to the user.\nUser: Hi\n"
    );
    assert_eq!((stderr(&o).as_str(), o.status.code()), ("", Some(0)));
    for args in [
        &["--feed", "user_input=Hi"][..],
        &["Answer", "--feed", "user_input=Hi"],
    ] {
        let o = render(&s, args);
        assert_eq!(stdout(&o), "You are a helpful assistant.\n\nUser: Hi\n");
    }
}

#[test]
fn type_root_space_version_and_default_name_are_flags() {
    let s = Scratch::new();
    s.file("prompts/agent/main/default.j2", "agent default\n")
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
        let o = render(&s, args);
        assert_eq!(stdout(&o), want, "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn feed_json_knowledge_and_merge_strategies() {
    let s = Scratch::new();
    s.file("feed.yaml", "user_input: from a file\naction_result: [1]\n");
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
        let o = render(&s, &args);
        assert_eq!(
            stdout(&o),
            format!("You just performed a search. Results:\n{result}\n\nAnalyze these results for the user.\nUser: {user}\n"),
            "{merge}"
        );
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
    );
    assert!(
        stdout(&o).ends_with("User: a\n"),
        "--feed wins over --feed-json"
    );
}

#[test]
fn feed_values_holding_template_syntax_print_as_text() {
    let s = Scratch::new();
    let o = render(
        &s,
        &[
            "--feed",
            "user_input={{ secret }} {% include '/etc/passwd' %}",
        ],
    );
    assert_eq!(
        stdout(&o),
        "You are a helpful assistant.\n\nUser: {{ secret }} {% include '/etc/passwd' %}\n"
    );
}

#[test]
fn several_variants_need_all_variants_or_pins() {
    let s = Scratch::new();
    let args = [
        "BrowseLink",
        "--version",
        "enterprise",
        "--feed",
        "context=c",
        "--feed",
        "user_input=u",
    ];
    let o = render(&s, &args);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        "error[prompt]: template `main/BrowseLink.enterprise` has 2 variants (system_preamble=concise; system_preamble=detailed)\n\
         \x20  = help: pass --all-variants to print them all, or --pin COMPONENT=VERSION for one\n"
    );
    let mut all = args.to_vec();
    all.push("--all-variants");
    assert_eq!(
        stdout(&render(&s, &all)),
        "--- system_preamble=concise ---\nYou are a CFD assistant.\nPage: c\n\
         Respond in a structured format with reasoning.\nUser: u\n\
         --- system_preamble=detailed ---\nYou are a helpful AI assistant with expertise in CFD.\n\
         Page: c\nRespond in a structured format with reasoning.\nUser: u\n"
    );
    let mut json = all.clone();
    json.push("--json");
    let v: serde_json::Value = serde_json::from_slice(&render(&s, &json).stdout).unwrap();
    assert_eq!(
        v["variants"][1]["versions"],
        serde_json::json!({"system_preamble": "detailed"})
    );
    let mut bad = args.to_vec();
    bad.extend(["--pin", "system_preamble=short"]);
    assert_eq!(
        stderr(&render(&s, &bad)),
        "error[prompt]: component `system_preamble` has no version `short`\n   = help: its versions are concise, detailed\n"
    );
}

#[test]
fn json_output_names_template_file_and_hash() {
    let s = Scratch::new();
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
    );
    let hash = {
        let text = std::fs::read_to_string(s.path().join("prompts/main/Search.j2")).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["hash"].as_str().unwrap().len(), 64);
        assert!(text.starts_with("You just performed a search."));
        v["hash"].as_str().unwrap().to_string()
    };
    assert_eq!(
        stdout(&o),
        format!(
            "{{\n  \"template\": \"main/Search\",\n  \"file\": \"prompts/main/Search.j2\",\n  \"hash\": \"{hash}\",\n  \
             \"text\": \"You just performed a search. Results:\\nr\\n\\nAnalyze these results for the user.\\nUser: u\\n\"\n}}\n"
        )
    );
    let pinned = render(
        &s,
        &["Search", "--feed", "user_input=u", "--hash", &hash[..12]],
    );
    assert_eq!(pinned.status.code(), Some(0));
    let o = render(&s, &["Search", "--hash", "00000000"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!(
            "error[prompt]: template `main/Search` (prompts/main/Search.j2) does not match the pinned hash `00000000`: its content hash is `{hash}`\n  \
             --> prompts/main/Search.j2:1:1\n  |\n1 | You just performed a search. Results:\n  | ^\n   \
             = help: the template changed since it was pinned: review the change, then pin the new hash\n"
        )
    );
}

#[test]
fn explain_lists_the_candidates_in_order_and_the_winner() {
    let s = Scratch::new();
    let o = render(
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
    );
    assert_eq!(
        stdout(&o),
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
"
    );
}

#[test]
fn undefined_variables_warn_and_strict_makes_them_errors() {
    let s = Scratch::new();
    let o = render(&s, &[]);
    assert_eq!(stdout(&o), "You are a helpful assistant.\n\nUser: \n");
    assert_eq!(
        stderr(&o),
        "warning[prompt]: undefined variable `user_input` in template `main/default` (prompts/main/default.j2:3:10)\n"
    );
    let o = render(&s, &["--strict"]);
    assert_eq!((stdout(&o).as_str(), o.status.code()), ("", Some(1)));
    assert_eq!(
        stderr(&o),
        "error[prompt]: undefined variable `user_input` in template `main/default`\n  \
         --> prompts/main/default.j2:3:10\n  |\n3 | User: {{ user_input }}\n  |          ^\n   \
         = help: strict mode: give the variable a value, or guard it with `{% if x is defined %}`\n"
    );
}

#[test]
fn bad_keys_missing_templates_and_escapes_are_clear_errors() {
    let s = Scratch::new();
    let o = render(&s, &["../../etc/passwd"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        "error[prompt]: key `../../etc/passwd` would lead outside the prompts tree\n   \
         = help: keys and settings name templates inside prompts/: no `..`, `/…` or `\\`\n"
    );
    let o = render(&s, &["x", "--type", "other", "--version", "v"]);
    assert_eq!(
        stderr(&o),
        "error[prompt]: no template for key `x`: tried other/x.v, other/x, other/default.v, other/default, default.v, default\n   \
         = help: add one of them, or a `default` template at the top of prompts/\n"
    );
    let outside = tempfile::tempdir().unwrap();
    write(outside.path(), "secret.j2", "top secret");
    std::os::unix::fs::symlink(
        outside.path().join("secret.j2"),
        s.path().join("prompts/main/leak.j2"),
    )
    .unwrap();
    let o = render(&s, &["leak"]);
    assert_eq!(
        stderr(&o),
        "error[prompt]: `prompts/main/leak.j2` is a symbolic link to a path outside prompts/\n\
         \x20  = help: templates are read only from inside prompts/\n"
    );
    let bare = Scratch::bare();
    let o = render(&bare, &["x"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        "error[prompt]: the project has no `prompts/` directory\n   \
         = help: prompt templates live in prompts/<type>/<name>.j2 (see docs/prompts.md)\n"
    );
}

#[test]
fn a_ten_megabyte_template_is_refused_unread() {
    let s = Scratch::new();
    s.file("prompts/main/huge.j2", &"x".repeat(10 << 20));
    let o = render(&s, &["huge"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        "error[prompt]: `prompts/main/huge.j2` is larger than the template limit of 4194304 bytes\n\
         \x20  = help: split the template, or raise the `template_bytes` limit\n"
    );
}

// ---------------------------------------------------------------------------------------
// strata prompt list

#[test]
fn list_shows_namespaces_names_versions_and_components() {
    let s = Scratch::new();
    let o = s.run(&["prompt", "list"]);
    assert_eq!(
        stdout(&o),
        "main
  BrowseLink [-, enterprise]
  Search
  default
  component system_preamble [concise, detailed]
  component response_instructions
reflection
  default
"
    );
    let v: serde_json::Value =
        serde_json::from_slice(&s.run(&["prompt", "list", "--json"]).stdout).unwrap();
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
    let s = Scratch::new();
    let o = s.run(&["run", "graphs/agent_loop", "--run-id", "demo"]);
    assert_eq!(
        stderr(&o),
        r#"run demo: starting graphs/agent_loop at `think`
step 1 think (prompt) -> plan: template = "main/default" (was ""), prompt = "You are a helpful assistant.\n\nUser: How does strata choo… (was "")
step 2 plan (action) -> think (otherwise): turn = 1 (was 0), last_anchor_action_type = "BrowseLink" (was null), observation = "strata renders layered configs and prompt templates." (was ""), answer = "https://example.org/strata" (was null)
step 3 think (prompt) -> plan: template = "main/BrowseLink" (was "main/default"), prompt = "You just navigated to a webpage. Here is what you see:\nst… (was "You are a helpful assistant.\n\nUser: How does strata choo…)
step 4 plan (action) -> think (otherwise): turn = 2 (was 1), last_anchor_action_type = "Search" (was "BrowseLink"), observation = "1. docs/prompts.md  2. README.md  3. docs/graphs.md" (was "strata renders layered configs and prompt templates."), answer = "strata prompt fallback" (was "https://example.org/strata")
step 5 think (prompt) -> plan: template = "main/Search" (was "main/BrowseLink"), prompt = "You just performed a search. Results:\n1. docs/prompts.md … (was "You just navigated to a webpage. Here is what you see:\nst…)
step 6 plan (action) -> done (when result.action == 'Answer'): turn = 3 (was 2), observation = "" (was "1. docs/prompts.md  2. README.md  3. docs/graphs.md"), answer = "strata picks the prompt from the last anchor action." (was "strata prompt fallback")
step 7 done (return) -> return: no state change
run demo: completed after 7 steps
"#
    );
    assert_eq!(
        stdout(&o),
        "{\n  \"answer\": \"strata picks the prompt from the last anchor action.\",\n  \"turns\": 3,\n  \"last_template\": \"main/Search\"\n}\n"
    );
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn a_prompt_node_renders_key_version_and_feed_from_state() {
    let s = Scratch::new();
    s.file(
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
    );
    let o = s.run(&["run", "graphs/p", "--quiet"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        v["out"],
        serde_json::json!({"template": "main/BrowseLink.enterprise",
            "text": "You are a helpful AI assistant with expertise in CFD.\nPage: {{ not rendered }}\nRespond in a structured format with reasoning.\nUser: BrowseLink\n"})
    );
    s.file(
        "tools/graphs/bad.yaml",
        "kind: graph\nstate: {}\nnodes:\n  render:\n    kind: prompt\n    key: \"../x\"\n",
    );
    let o = s.run(&["run", "graphs/bad", "--run-id", "b"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        "run b: starting graphs/bad at `render`\n\
         step 1 render failed: key `../x` would lead outside the prompts tree (on_error: fail)\n\
         run b: failed after 1 step: node `render`: key `../x` would lead outside the prompts tree\n"
    );
}

// ---------------------------------------------------------------------------------------
// strata check

#[test]
fn check_reports_every_prompt_mistake_with_its_code() {
    let s = Scratch::bare();
    s.file("prompts/main/broken.j2", "Hello {{ user_input }}\n{% if %}\n")
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
        );
    let o = s.run(&["check"]);
    assert_eq!(o.status.code(), Some(1));
    let text = stdout(&o);
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
    let s = Scratch::bare();
    s.file(
        "tools/graphs/ask.yaml",
        "kind: graph\nstate: {}\nnodes:\n  think:\n    kind: prompt\n    key: x\n",
    );
    let o = s.run(&["check"]);
    assert!(
        stdout(&o).starts_with(
            "error[T006]: prompt node `think` renders a template, but the project has no prompts/ directory\n  \
             --> tools/graphs/ask.yaml:5:11\n"
        ),
        "{}",
        stdout(&o)
    );
    let shipped = Scratch::new();
    let o = shipped.run(&["check", "--deny-warnings"]);
    assert!(
        stdout(&o).ends_with(": 0 errors, 0 warnings\n"),
        "{}",
        stdout(&o)
    );
}
