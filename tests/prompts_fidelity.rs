//! Seed-fidelity edges of prompt templates (issue 27) through the `strata` binary: positions
//! inside double-quoted YAML strings, keys no template is named after, feed keys in braces,
//! trailing newlines, `--default-template`, and which components `ops/main/…` sees.

mod common;
use common::Test;

/// A scratch project with the runtimes only.
fn bare() -> Test {
    Test::new().copy("tools/runtimes")
}

fn render(s: &Test, args: &[&str]) -> Test {
    let mut all = vec!["prompt", "render"];
    all.extend_from_slice(args);
    s.then(&all)
}

/// Two templates written as double-quoted YAML strings with `\n` escapes.
const QUOTED: &str = "main:\n  default: \"Hi\\n\\nUser: {{ user_input }}\"\n  Search: \"Results:\\n{{ results }}\\n\"\n";

#[test]
fn an_undefined_variable_in_a_double_quoted_yaml_string_is_placed_through_its_escapes() {
    let s = bare().file("prompts/t.yaml", QUOTED);
    // `{{ results }}` is on line 3, column 25 of the file, after the `\n` escape.
    render(&s, &["Search"])
        .stdout("Results:\n")
        .stderr(
            "warning[prompt]: undefined variable `results` in template `main/Search` (prompts/t.yaml:3:25)\n",
        )
        .status(0)
        .run();
    // The other template, on line 2: `{{ user_input }}` after two `\n` escapes.
    render(&s, &[])
        .stdout("Hi\n\nUser: \n")
        .stderr(
            "warning[prompt]: undefined variable `user_input` in template `main/default` (prompts/t.yaml:2:28)\n",
        )
        .status(0)
        .run();
}

#[test]
fn a_key_no_template_is_named_after_is_warned_about_with_a_did_you_mean() {
    let warned = "warning[prompt]: key `Serch` fell back to `main/default`: no template anywhere \
                  in prompts/ is named `Serch` (did you mean `Search`?)\n";
    let s = bare()
        .file("prompts/main/default.j2", "Hi {{ user_input }}")
        .file("prompts/main/Search.j2", "Results {{ user_input }}");
    render(&s, &["Serch", "--feed", "user_input=x"])
        .stdout("Hi x\n")
        .stderr(warned)
        .status(0)
        .run();
    // `--quiet` keeps warnings, as cargo's does.
    render(&s, &["Serch", "--feed", "user_input=x", "--quiet"])
        .stdout("Hi x\n")
        .stderr(warned)
        .status(0)
        .run();
    // A key that exists only in another type, or the default name, is no typo.
    render(&s, &["default", "--feed", "user_input=x"])
        .stderr("")
        .status(0)
        .run();
    render(&s, &["Serch", "--feed", "user_input=x", "--quiet", "--explain"])
        .stdout(
            "key: Serch\n\
             unknown key: no template anywhere in prompts/ is named `Serch` (did you mean `Search`?)\n\
             settings: type main, root space none, version none, default name default, merge feed_only\n\
             candidates:\n   \
             1. main/Serch    missing\n   \
             2. main/default  won: prompts/main/default.j2\n   \
             3. default       not tried\n\
             variables:\n  \
             user_input (feed): \"x\"\n\
             --- main/default (prompts/main/default.j2) ---\n\
             Hi x\n",
        )
        .stderr(warned)
        .status(0)
        .run();
    let o = render(&s, &["Serch", "--quiet", "--explain", "--json"])
        .status(0)
        .run();
    assert_eq!(
        o.json()["explain"]["unknown_key"],
        serde_json::json!({"name": "Serch", "did_you_mean": "Search"})
    );
}

#[test]
fn check_reports_a_prompt_node_whose_key_no_template_is_named_after() {
    let s = bare()
        .file("prompts/main/default.j2", "Hi {{ user_input }}\n")
        .file("prompts/main/Search.j2", "Results {{ user_input }}\n")
        .file(
            "tools/graphs/ask.yaml",
            "kind: graph\ndescription: asks\nnodes:\n  think:\n    kind: prompt\n    key: Serch\n    feed:\n      \"{{ user_input }}\": hi\n",
        );
    s.then(&["check"])
        .stdout(
            "warning[T006]: prompt node `think`: key `Serch` falls back to `main/default`: no \
             template anywhere in prompts/ is named `Serch` (did you mean `Search`?)\n  \
             --> tools/graphs/ask.yaml:6:10\n  |\n6 |     key: Serch\n  |          ^\n   \
             = field: nodes.think.key\n   \
             = help: did you mean `Search`? (a key no template is named after is almost always a typo)\n\
             \nchecked 7 files: 0 errors, 1 warning\n",
        )
        .status(0)
        .run();
}

#[test]
fn feed_keys_in_braces_name_the_variable_inside() {
    let s = bare().file("prompts/main/default.j2", "User: {{ user_input }}");
    render(&s, &["--feed", "{{ user_input }}=Hi"])
        .stdout("User: Hi\n")
        .stderr("")
        .status(0)
        .run();
    render(&s, &["--feed-json", r#"{"{{user_input}}": "Hi"}"#])
        .stdout("User: Hi\n")
        .stderr("")
        .status(0)
        .run();
    render(&s, &["--feed-json", r#"{"{{ a.b }}": 1}"#])
        .stdout("")
        .stderr(
            "error[prompt]: feed key `{{ a.b }}` is not a variable name\n   \
             = help: name the variable alone (`user_input`) or in braces (`{{ user_input }}`)\n",
        )
        .status(2)
        .run();
    render(
        &s,
        &["--feed-json", r#"{"{{ user_input }}": "a", "user_input": "b"}"#],
    )
    .stderr(
        "error[prompt]: feed gives variable `user_input` twice (as `user_input` and as `{{ user_input }}`)\n   \
         = help: keep one of them\n",
    )
    .status(2)
    .run();
}

#[test]
fn a_template_files_trailing_newline_is_dropped_as_jinja_does() {
    let s = bare()
        .file("prompts/main/components/sig.txt", "Bye.\n")
        .file("prompts/main/default.j2", "{{ sig }}\nEnd.\n");
    let o = render(&s, &["--json"]).status(0).run();
    assert_eq!(o.json()["text"], "Bye.\nEnd.");
    render(&s, &[]).stdout("Bye.\nEnd.\n").status(0).run();
}

#[test]
fn the_default_template_is_a_flag() {
    let s = bare().file("prompts/main/Search.j2", "Results");
    render(
        &s,
        &[
            "Search",
            "--type",
            "reflection",
            "--default-template",
            "Fallback: {{ user_input }}",
            "--feed",
            "user_input=q",
        ],
    )
    .stdout("Fallback: q\n")
    .stderr("")
    .status(0)
    .run();
    let s = s.file("fallback.j2", "From a file: {{ user_input }}\n");
    let file = s.path().join("fallback.j2");
    let at = format!("@{}", file.display());
    render(
        &s,
        &[
            "Search",
            "--type",
            "x",
            "--default-template",
            &at,
            "--feed",
            "user_input=q",
        ],
    )
    .stdout("From a file: q\n")
    .status(0)
    .run();
    // Without it, nothing matches.
    let o = render(&s, &["Search", "--type", "x"]).status(2).run();
    assert!(o
        .error_line()
        .starts_with("error[prompt]: no template for key `Search`"));
}

#[test]
fn main_components_are_not_visible_to_ops_main_templates() {
    let s = bare()
        .file("prompts/main/components/tone.txt", "Be brief.")
        .file("prompts/components/footer.txt", "Thanks.")
        .file(
            "prompts/main/Ask.j2",
            "{{ tone }}\nAsk: {{ user_input }}\n{{ footer }}",
        )
        .file(
            "prompts/ops/main/Ask.j2",
            "{{ tone }}\nOps: {{ user_input }}\n{{ footer }}",
        );
    render(&s, &["Ask", "--feed", "user_input=q"])
        .stdout("Be brief.\nAsk: q\nThanks.\n")
        .stderr("")
        .status(0)
        .run();
    // `ops/main` sees its own, `ops/`'s and the top's components, not `main/`'s.
    render(&s, &["Ask", "--root-space", "ops", "--feed", "user_input=q"])
        .stdout("\nOps: q\nThanks.\n")
        .stderr(
            "warning[prompt]: undefined variable `tone` in template `ops/main/Ask` (prompts/ops/main/Ask.j2:1:4)\n",
        )
        .status(0).run();
}
