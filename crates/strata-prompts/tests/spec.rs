//! Every rule of SPEC §6 against the library, with exact outputs and error kinds. The
//! lookup order itself is tested step by step in `src/lookup.rs`.

use std::path::Path;

use serde_json::{json, Map, Value};
use strata_core::{ErrorKind, Location, Undefined};
use strata_prompts::{Call, Merge, Overrides, PromptLimits, PromptManager, Settings};

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn manager(value: Value) -> PromptManager {
    PromptManager::builder()
        .dict(&value, "t.yaml")
        .build()
        .unwrap()
}

fn map(v: Value) -> Map<String, Value> {
    v.as_object().unwrap().clone()
}

fn text(m: &PromptManager, call: &Call<'_>) -> String {
    m.render(call).unwrap().text().unwrap().to_string()
}

fn seed() -> Value {
    json!({
        "main": {
            "default": "You are a helpful assistant.\n\nUser: {{ user_input }}",
            "BrowseLink": "You navigated to {{ context }}.\n\nUser: {{ user_input }}",
            "BrowseLink.enterprise": "[enterprise] {{ context }}",
            "Search": "Search results:\n{{ action_result }}\n\nUser: {{ user_input }}",
        },
        "reflection": {"default": "Review your previous actions.\n{{ previous_states }}"},
        "action_agent": {"main": {"default": "agent default"}},
        "default": "global default",
    })
}

#[test]
fn tree_and_dict_forms_mix_and_a_dict_starts_at_its_own_directory() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "prompts/main/BrowseLink.j2", "file {{ x }}");
    write(
        dir.path(),
        "prompts/templates.yaml",
        "main:\n  Search: dict {{ x }}\n",
    );
    write(
        dir.path(),
        "prompts/agent/more.json",
        r#"{"main": {"default": "agent"}}"#,
    );
    let m = PromptManager::load(dir.path(), &strata_core::Limits::default()).unwrap();
    let feed = map(json!({"x": 1}));
    assert_eq!(text(&m, &Call::key("BrowseLink").feed(&feed)), "file 1");
    assert_eq!(text(&m, &Call::key("Search").feed(&feed)), "dict 1");
    let agent = m
        .switch(&Overrides {
            root_space: Some(Some("agent".into())),
            ..Overrides::default()
        })
        .unwrap();
    assert_eq!(
        agent.resolve(Some("Search")).unwrap(),
        Some("agent/main/default")
    );
}

#[test]
fn the_same_template_twice_names_both_places() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "prompts/main/BrowseLink.j2", "a");
    write(dir.path(), "prompts/t.yaml", "main:\n  BrowseLink: b\n");
    let e = PromptManager::load(dir.path(), &strata_core::Limits::default()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::DuplicateId);
    assert_eq!(
        e.message(),
        "template `main/BrowseLink` is defined twice: in prompts/main/BrowseLink.j2 and in prompts/t.yaml:2:15"
    );
}

#[test]
fn a_null_key_means_the_default_name_and_a_key_may_carry_its_type() {
    let m = manager(seed());
    assert_eq!(m.resolve(None).unwrap(), Some("main/default"));
    assert_eq!(
        m.resolve(Some("reflection/Search")).unwrap(),
        Some("reflection/default")
    );
    assert_eq!(m.resolve(Some("Nothing")).unwrap(), Some("main/default"));
}

#[test]
fn nothing_found_lists_every_candidate() {
    let m = manager(json!({"other": {"x": "x"}}));
    let m = m
        .switch(&Overrides {
            root_space: Some(Some("a/b".into())),
            version: Some(Some("v".into())),
            ..Overrides::default()
        })
        .unwrap();
    let e = m.render(&Call::key("K")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TemplateNotFound);
    assert_eq!(
        e.message(),
        "no template for key `K`: tried a/b/main/K.v, a/b/main/K, a/b/main/default.v, a/b/main/default, \
         a/main/K.v, a/main/K, a/main/default.v, a/main/default, main/K.v, main/K, main/default.v, \
         main/default, default.v, default"
    );
    let Some(strata_core::ErrorData::Candidates(tried)) = e.data() else {
        panic!("no candidates: {:?}", e.data());
    };
    assert_eq!(tried.len(), 14);
    assert_eq!(tried[0], "a/b/main/K.v");
    assert_eq!(tried[13], "default");
}

#[test]
fn the_configured_default_template_comes_last() {
    let m = PromptManager::builder()
        .dict(&json!({"main": {"Search": "s"}}), "t.yaml")
        .default_template("fallback {{ x }}")
        .build()
        .unwrap();
    let feed = map(json!({"x": "!"}));
    let out = m.render(&Call::key("BrowseLink").feed(&feed)).unwrap();
    assert_eq!(out.template, "<default template>");
    assert_eq!(out.text(), Some("fallback !"));
}

#[test]
fn switch_returns_a_new_manager_and_leaves_the_old_one_alone() {
    let m = manager(seed());
    let switched = m
        .switch(&Overrides {
            version: Some(Some("enterprise".into())),
            ..Overrides::default()
        })
        .unwrap();
    assert_eq!(
        switched.resolve(Some("BrowseLink")).unwrap(),
        Some("main/BrowseLink.enterprise")
    );
    assert_eq!(
        m.resolve(Some("BrowseLink")).unwrap(),
        Some("main/BrowseLink")
    );
    assert_eq!(m.settings(), &Settings::default());
    let e = m
        .switch(&Overrides {
            root_space: Some(Some("../..".into())),
            ..Overrides::default()
        })
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Forbidden);
}

#[test]
fn every_setting_can_be_overridden_for_one_call() {
    let m = manager(json!({
        "main": {"default": "main {{ p }}", "K": "main K", "K.v": "main K.v", "fallback": "fb"},
        "reflection": {"default": "refl"},
        "agent": {"main": {"K": "agent K"}},
    }));
    let call = |o: Overrides| {
        let c = Call {
            key: Some("K"),
            overrides: o,
            ..Call::default()
        };
        text(&m, &c)
    };
    assert_eq!(call(Overrides::default()), "main K");
    assert_eq!(
        call(Overrides {
            type_: Some("reflection".into()),
            ..Overrides::default()
        }),
        "refl"
    );
    assert_eq!(
        call(Overrides {
            root_space: Some(Some("agent".into())),
            ..Overrides::default()
        }),
        "agent K"
    );
    assert_eq!(
        call(Overrides {
            version: Some(Some("v".into())),
            ..Overrides::default()
        }),
        "main K.v"
    );
    let missing = |o: Overrides| {
        let c = Call {
            key: Some("Missing"),
            overrides: o,
            ..Call::default()
        };
        text(&m, &c)
    };
    assert_eq!(
        missing(Overrides {
            default_name: Some("fallback".into()),
            ..Overrides::default()
        }),
        "fb"
    );
    assert_eq!(
        missing(Overrides {
            predefined: Some(map(json!({"p": "pre"}))),
            ..Overrides::default()
        }),
        "main pre"
    );
    assert_eq!(m.resolve(Some("K")).unwrap(), Some("main/K"));
}

#[test]
fn predefined_variables_sit_below_the_feed_and_the_feed_below_knowledge() {
    let m = manager(json!({"main": {"default": "{{ a }}|{{ b }}|{{ c }}|{{ l }}|{{ m }}"}}));
    let m = m
        .switch(&Overrides {
            predefined: Some(map(json!({"a": "pre", "b": "pre", "c": "pre"}))),
            ..Overrides::default()
        })
        .unwrap();
    let feed = map(json!({"b": "feed", "c": "feed", "l": [1], "m": {"x": 1}}));
    let knowledge = map(json!({"c": "know", "l": [2], "m": {"y": 2}}));
    let render = |merge: Merge| {
        let c = Call {
            key: None,
            feed: Some(&feed),
            knowledge: Some(&knowledge),
            merge,
            ..Call::default()
        };
        text(&m, &c)
    };
    assert_eq!(render(Merge::FeedOnly), r#"pre|feed|know|[2]|{"y":2}"#);
    assert_eq!(render(Merge::AttributeOnly), r#"pre|feed|feed|[1]|{"x":1}"#);
    assert_eq!(
        render(Merge::Merge),
        "pre|feed|feed\n\nknow|[1,2]|{\"x\":1,\"y\":2}"
    );
}

#[test]
fn feed_values_are_data_printed_as_text() {
    let m = manager(json!({"main": {"default": "<{{ v }}>"}}));
    let feed = map(json!({"v": "{{ secret }} {% include '/etc/passwd' %}", "secret": "s3"}));
    assert_eq!(
        text(&m, &Call::default().feed(&feed)),
        "<{{ secret }} {% include '/etc/passwd' %}>"
    );
}

#[test]
fn values_print_like_layer_c_without_escaping_whatever_the_file_name() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "prompts/main/default.md",
        "[{{ n }}][{{ t }}][{{ f }}][{{ i }}][{{ l }}][{{ m }}][{{ h }}]",
    );
    let m = PromptManager::load(dir.path(), &strata_core::Limits::default()).unwrap();
    let feed = map(
        json!({"n": null, "t": true, "f": 0.38, "i": 10000000, "l": [1, "a"],
                          "m": {"k": [null]}, "h": "<b>&\""}),
    );
    assert_eq!(
        text(&m, &Call::default().feed(&feed)),
        r#"[][true][0.38][10000000][[1,"a"]][{"k":[null]}][<b>&"]"#
    );
}

#[test]
fn components_are_variables_rendered_with_the_same_feed() {
    let m = manager(json!({
        "components": {"sign": "-- {{ name }}"},
        "main": {
            "default": "{{ system_preamble }}\n{{ user_input }}\n{{ sign }}",
            "components": {"system_preamble": "You help {{ name }}."},
        },
    }));
    let feed = map(json!({"user_input": "Hi", "name": "Ann"}));
    assert_eq!(
        text(&m, &Call::default().feed(&feed)),
        "You help Ann.\nHi\n-- Ann"
    );
}

/// The context reads the feed in place (no copy per render): values read many times, by
/// components, by every variant and by the renders that look for undefined names are the
/// caller's, and a render made from another thread, or after one, sees its own feed.
#[test]
fn feed_values_are_read_in_place_by_every_render_of_a_call() {
    let m = manager(json!({"main": {
        "default": "{% for i in range(2) %}{{ long }}/{{ l|length }}/{{ m.k }};{% endfor %}{{ c }}|{{ v }}|{{ gone }}{{ big|length }}{{ big == big2 }}",
        "components": {
            "c": "[{{ long }} {{ short }} {{ n }} {{ l }}]",
            "v": [
                {"version": "a", "content": "A {{ short }}"},
                {"version": "b", "content": "B {{ long }}"},
            ],
        },
    }}));
    let long = "a value longer than twenty-two bytes";
    let big = "b".repeat(300);
    let feed = map(
        json!({"long": long, "short": "s", "n": 1.5, "l": [1, "x"], "m": {"k": null}, "big": big, "big2": big}),
    );
    let out = m.render(&Call::default().feed(&feed)).unwrap();
    let texts: Vec<&str> = out.variants.iter().map(|v| v.text.as_str()).collect();
    let head = format!("{long}/2/;{long}/2/;[{long} s 1.5 [1,\"x\"]]");
    assert_eq!(
        texts,
        [
            format!("{head}|A s|300true"),
            format!("{head}|B {long}|300true")
        ]
    );
    assert_eq!(out.warnings.len(), 1, "{:?}", out.warnings);
    assert!(out.warnings[0].message.contains("`gone`"));
    let other = map(
        json!({"long": "other", "short": "t", "n": 2, "l": [], "m": {"k": "K"}, "big": "", "big2": 1}),
    );
    let from_thread = std::thread::scope(|s| {
        s.spawn(|| m.render(&Call::default().feed(&other)).unwrap())
            .join()
            .unwrap()
    });
    assert_eq!(
        from_thread.variants[0].text,
        "other/0/K;other/0/K;[other t 2 []]|A t|0false"
    );
    let again = m.render(&Call::default().feed(&feed)).unwrap();
    assert_eq!(again.variants, out.variants);
    let wide: Map<String, Value> = (0..20).map(|i| (format!("k{i}"), Value::from(i))).collect();
    let m = manager(json!({"main": {"default": "{{ k0 }}-{{ k17 }}-{{ k19 }}-{{ k20 }}"}}));
    assert_eq!(text(&m, &Call::default().feed(&wide)), "0-17-19-");
}

fn versioned() -> PromptManager {
    manager(json!({"main": {
        "default": "{{ system_preamble }} / {{ response_instructions }}",
        "components": {
            "system_preamble": [
                {"version": "concise", "content": "CFD assistant."},
                {"version": "detailed", "content": "A helpful CFD assistant."},
            ],
            "response_instructions": [
                {"version": "structured", "content": "Use XML."},
                {"version": "freeform", "content": "Respond naturally."},
            ],
        },
    }}))
}

#[test]
fn versioned_components_yield_every_combination_labelled_in_declaration_order() {
    let out = versioned().render(&Call::default()).unwrap();
    let shown: Vec<(String, &str)> = out
        .variants
        .iter()
        .map(|v| (v.label(), v.text.as_str()))
        .collect();
    assert_eq!(
        shown,
        [
            (
                "system_preamble=concise, response_instructions=structured".into(),
                "CFD assistant. / Use XML."
            ),
            (
                "system_preamble=concise, response_instructions=freeform".into(),
                "CFD assistant. / Respond naturally."
            ),
            (
                "system_preamble=detailed, response_instructions=structured".into(),
                "A helpful CFD assistant. / Use XML."
            ),
            (
                "system_preamble=detailed, response_instructions=freeform".into(),
                "A helpful CFD assistant. / Respond naturally."
            ),
        ]
    );
    assert_eq!(out.text(), None);
    let e = out.only_text("pin them").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Request);
    assert_eq!(
        e.message(),
        "template `main/default` has 4 variants (system_preamble=concise, response_instructions=structured; \
         system_preamble=concise, response_instructions=freeform; system_preamble=detailed, response_instructions=structured; \
         system_preamble=detailed, response_instructions=freeform)"
    );
    assert_eq!(e.hint(), Some("pin them"));
}

#[test]
fn variants_have_one_json_form() {
    let out = versioned().render(&Call::default()).unwrap();
    let json = out.variants_json();
    assert_eq!(
        json[0],
        json!({"versions": {"system_preamble": "concise", "response_instructions": "structured"},
               "text": "CFD assistant. / Use XML."})
    );
    assert_eq!(json.as_array().unwrap().len(), 4);
    assert_eq!(out.to_json()["variants"], json);
    assert_eq!(out.variants[3].to_json(), json[3]);
    // No versioned component: one variant, with empty versions.
    let plain = manager(json!({"main": {"default": "Hi"}}))
        .render(&Call::default())
        .unwrap();
    assert_eq!(
        plain.variants_json(),
        json!([{"versions": {}, "text": "Hi"}])
    );
    assert_eq!(plain.to_json()["text"], "Hi");
}

#[test]
fn a_pinned_component_version_narrows_the_product() {
    let m = versioned();
    let call = Call {
        pins: vec![
            ("system_preamble".into(), "detailed".into()),
            ("response_instructions".into(), "freeform".into()),
        ],
        ..Call::default()
    };
    let out = m.render(&call).unwrap();
    assert_eq!(
        out.text(),
        Some("A helpful CFD assistant. / Respond naturally.")
    );
    assert_eq!(
        out.only_text("unused").ok(),
        Some("A helpful CFD assistant. / Respond naturally.")
    );
    assert_eq!(
        out.variants[0].label(),
        "system_preamble=detailed, response_instructions=freeform"
    );
    let bad = Call {
        pins: vec![("system_preamble".into(), "detailled".into())],
        ..Call::default()
    };
    let e = m.render(&bad).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::UnknownName);
    assert_eq!(
        e.message(),
        "component `system_preamble` has no version `detailled`"
    );
    assert_eq!(e.hint(), Some("did you mean `detailed`?"));
}

#[test]
fn a_million_variants_is_a_limit_error_before_any_render() {
    let versions: Vec<Value> = (0..10)
        .map(|i| json!({"version": format!("v{i}"), "content": "x"}))
        .collect();
    let mut components = Map::new();
    let mut body = String::new();
    for c in 0..6 {
        components.insert(format!("c{c}"), Value::Array(versions.clone()));
        body.push_str(&format!("{{{{ c{c} }}}}"));
    }
    let m = manager(json!({"main": {"default": body, "components": components}}));
    let e = m.render(&Call::default()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Limit);
    assert_eq!(
        e.message(),
        "template `main/default` has 1000000 variants (c0 (10) × c1 (10) × c2 (10) × c3 (10) × c4 (10) × c5 (10)), more than the limit of 1000"
    );
}

#[test]
fn recursive_components_are_a_cycle_error() {
    let value =
        json!({"main": {"default": "{{ a }}", "components": {"a": "{{ b }}", "b": "{{ a }}"}}});
    let e = PromptManager::builder()
        .dict(&value, "t.yaml")
        .build()
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Cycle);
    assert_eq!(
        e.message(),
        "components refer to each other in a cycle: a -> b -> a"
    );
    let loaded = PromptManager::builder()
        .dict(&value, "t.yaml")
        .build_all()
        .unwrap();
    let e = loaded.manager.render(&Call::default()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Cycle);
    assert_eq!(e.message(), "component `a` uses itself");
}

#[test]
fn a_pinned_content_hash_must_match() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "prompts/main/default.j2", "frozen text");
    let m = PromptManager::load(dir.path(), &strata_core::Limits::default()).unwrap();
    let out = m.render(&Call::default()).unwrap();
    assert_eq!(
        out.hash,
        "b2d954ffe17b55c437135cb9539212a1d78977550545fa6bd6dc7e658d3e79e4"
    );
    let ok = Call {
        hash: Some(out.hash[..12].to_string()),
        ..Call::default()
    };
    assert_eq!(m.render(&ok).unwrap().text(), Some("frozen text"));
    let pinned = Call {
        hash: Some("00000000".into()),
        ..Call::default()
    };
    let e = m.render(&pinned).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::HashMismatch);
    assert_eq!(
        e.message(),
        format!(
            "template `main/default` (prompts/main/default.j2) does not match the pinned hash `00000000`: its content hash is `{}`",
            out.hash
        )
    );
    assert_eq!(e.location().unwrap().file, "prompts/main/default.j2");
}

#[test]
fn undefined_variables_warn_naming_variable_and_template() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "prompts/main/default.j2",
        "Hi {{ name }}\n{% if opt is defined %}{{ opt }}{% endif %}{% if flag %}F{% endif %}{% for i in items %}{{ i }}{% endfor %}",
    );
    let m = PromptManager::load(dir.path(), &strata_core::Limits::default()).unwrap();
    let out = m.render(&Call::default()).unwrap();
    assert_eq!(out.text(), Some("Hi \n"));
    let warnings: Vec<&str> = out.warnings.iter().map(|w| w.message.as_str()).collect();
    assert_eq!(
        warnings,
        [
            "undefined variable `name` in template `main/default` (prompts/main/default.j2:1:7)",
            "undefined variable `items` in template `main/default` (prompts/main/default.j2:2:81)",
        ]
    );
    let strict = Call {
        undefined: Undefined::Strict,
        ..Call::default()
    };
    let e = m.render(&strict).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Undefined);
    assert_eq!(
        e.message(),
        "undefined variable `name` in template `main/default`"
    );
    assert_eq!(
        e.location(),
        Some(&Location {
            file: "prompts/main/default.j2".into(),
            line: 1,
            column: 7
        })
    );
    let feed = map(json!({"name": "Ann", "items": ["u"]}));
    let ok = Call {
        undefined: Undefined::Strict,
        feed: Some(&feed),
        ..Call::default()
    };
    assert_eq!(text(&m, &ok), "Hi Ann\nu");
}

#[test]
fn syntax_errors_name_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "prompts/main/default.j2", "one\ntwo {% if %}\n");
    write(
        dir.path(),
        "prompts/t.yaml",
        "main:\n  Search: |\n    fine\n    {{ x + }}\n",
    );
    let loaded = PromptManager::builder()
        .dir(&dir.path().join("prompts"), "prompts")
        .build_all()
        .unwrap();
    let shown: Vec<String> = loaded
        .errors
        .iter()
        .map(|e| {
            let l = e.location().unwrap();
            format!(
                "{}:{}:{} {:?} {}",
                l.file,
                l.line,
                l.column,
                e.kind(),
                e.message()
            )
        })
        .collect();
    assert_eq!(
        shown,
        [
            "prompts/main/default.j2:2:11 Syntax template `main/default`: unexpected end of block",
            "prompts/t.yaml:4:12 Syntax template `main/Search`: unexpected end of variable block",
        ]
    );
}

#[test]
fn the_trace_shows_every_candidate_and_the_winner() {
    let m = manager(seed())
        .switch(&Overrides {
            root_space: Some(Some("action_agent".into())),
            ..Overrides::default()
        })
        .unwrap();
    let feed = map(json!({"user_input": "Hi", "token": "t0k3n"}));
    let call = Call {
        key: Some("BrowseLink"),
        feed: Some(&feed),
        explain: true,
        secrets: vec!["token".into()],
        ..Call::default()
    };
    let out = m.render(&call).unwrap();
    assert_eq!(
        out.explain.unwrap().to_text(),
        "key: BrowseLink
settings: type main, root space action_agent, version none, default name default, merge feed_only
candidates:
   1. action_agent/main/BrowseLink  missing
   2. action_agent/main/default     won: t.yaml
   3. main/BrowseLink               not tried
   4. main/default                  not tried
   5. default                       not tried
variables:
  user_input (feed): \"Hi\"
  token (feed): ***
"
    );
}

#[test]
fn secrets_are_redacted_in_errors_and_warnings() {
    let m = manager(json!({"main": {"default": "{{ token + 1 }}", "w": "{{ missing }}"}}));
    let feed = map(json!({"token": "t0k3n-value"}));
    let call = Call {
        feed: Some(&feed),
        secrets: vec!["token".into()],
        ..Call::default()
    };
    let e = m.render(&call).unwrap_err();
    assert!(!e.to_string().contains("t0k3n-value"), "{e}");
    let plain = Call {
        feed: Some(&feed),
        ..Call::default()
    };
    let shown = m.render(&plain).unwrap_err().to_string();
    let redacted = e.to_string();
    assert_eq!(redacted, shown.replace("t0k3n-value", "***"));
    let empty = manager(json!({"other": {"x": "x"}}));
    let keyed = Call {
        key: Some("t0k3n-value"),
        ..call
    };
    assert_eq!(
        empty.render(&keyed).unwrap_err().message(),
        "no template for key `***`: tried main/***, main/default, default"
    );
}

#[test]
fn includes_name_loaded_templates_only() {
    let m = manager(json!({"main": {
        "default": "{% include 'main/part' %}!",
        "part": "part {{ x }}",
        "evil": "{% include '/etc/passwd' %}",
        "up": "{% include '../../etc/passwd' %}",
    }}));
    let feed = map(json!({"x": 1}));
    assert_eq!(text(&m, &Call::default().feed(&feed)), "part 1!");
    for key in ["evil", "up"] {
        let e = m.render(&Call::key(key)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::TemplateNotFound, "{key}");
    }
}

#[test]
fn runaway_loops_and_huge_templates_are_limit_errors() {
    let m = manager(
        json!({"main": {"default": "{% for i in range(10000) %}{% for j in range(10000) %}{{ j }}{% endfor %}{% endfor %}"}}),
    );
    assert_eq!(
        m.render(&Call::default()).unwrap_err().kind(),
        ErrorKind::Limit
    );
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "prompts/main/default.j2", &"x".repeat(10 << 20));
    let e = PromptManager::load(dir.path(), &strata_core::Limits::default()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Limit);
    assert_eq!(
        e.message(),
        "`prompts/main/default.j2` is larger than the template limit of 4194304 bytes"
    );
    let small = PromptLimits {
        variants: 2,
        ..PromptLimits::default()
    };
    let m = PromptManager::builder()
        .limits(small)
        .dict(
            &json!({"main": {"default": "{{ c }}", "components": {"c": [
                {"version": "a", "content": "A"}, {"version": "b", "content": "B"}, {"version": "c", "content": "C"}
            ]}}}),
            "t.yaml",
        )
        .build()
        .unwrap();
    assert_eq!(
        m.render(&Call::default()).unwrap_err().kind(),
        ErrorKind::Limit
    );
}

#[test]
fn escaping_keys_are_forbidden() {
    let m = manager(seed());
    for key in ["../../etc/passwd", "/etc/passwd", "main/../../x"] {
        let e = m.render(&Call::key(key)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Forbidden, "{key}");
    }
}

/// A dict whose `main/default` reads component `c0`, which reads `c1`, … up to `c{n}`.
fn chain(n: usize) -> Value {
    let mut comps = Map::new();
    for i in 0..n {
        comps.insert(format!("c{i}"), json!(format!("{{{{ c{} }}}}", i + 1)));
    }
    comps.insert(format!("c{n}"), json!("end"));
    json!({"main": {"default": "{{ c0 }}", "components": comps}})
}

#[test]
fn components_nest_at_most_the_component_depth() {
    let small = PromptLimits {
        component_depth: 3,
        ..PromptLimits::default()
    };
    let build = |n| {
        PromptManager::builder()
            .limits(small.clone())
            .dict(&chain(n), "t.yaml")
            .build()
            .unwrap()
    };
    assert_eq!(text(&build(2), &Call::default()), "end");
    let e = build(3).render(&Call::default()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Limit);
    assert_eq!(
        e.message(),
        "components nest more than 3 deep: `main/default` reads `c0`, which reads `c1`, which reads `c2`, which reads `c3`"
    );
    // However long the chain, the error names the first components and the one too deep.
    let long = build(10).render(&Call::default()).unwrap_err();
    assert_eq!(long.message(), e.message());
    // The default depth holds on a 2 MiB thread, and a long chain loads.
    let m = PromptManager::builder()
        .dict(&chain(5000), "t.yaml")
        .build()
        .unwrap();
    let e = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || m.render(&Call::default()).unwrap_err())
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(e.kind(), ErrorKind::Limit);
}

#[test]
fn a_render_stops_at_its_output_limit() {
    let mut limits = strata_core::Limits {
        output_bytes_per_string: 100,
        ..strata_core::Limits::default()
    };
    let m = PromptManager::builder()
        .limits(PromptLimits::from_limits(&limits))
        .dict(
            &json!({"main": {"default": "{% for i in range(101) %}x{% endfor %}"}}),
            "t.yaml",
        )
        .build()
        .unwrap();
    let e = m.render(&Call::default()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Limit);
    assert_eq!(
        e.message(),
        "template `main/default`: rendered text exceeds 100 bytes"
    );
    limits.output_bytes_per_string = 101;
    let m = PromptManager::builder()
        .limits(PromptLimits::from_limits(&limits))
        .dict(
            &json!({"main": {"default": "{% for i in range(101) %}x{% endfor %}"}}),
            "t.yaml",
        )
        .build()
        .unwrap();
    assert_eq!(text(&m, &Call::default()).len(), 101);
}

#[test]
fn a_dict_file_holds_at_most_the_template_limit_aliases_counted() {
    let dir = tempfile::tempdir().unwrap();
    let mut yaml = format!("main:\n  t0: &big '{}'\n", "x".repeat(1000));
    for i in 1..20 {
        yaml.push_str(&format!("  t{i}: *big\n"));
    }
    write(dir.path(), "prompts/t.yaml", &yaml);
    let limits = strata_core::Limits {
        template_bytes: 10_000,
        ..strata_core::Limits::default()
    };
    let e = PromptManager::load(dir.path(), &limits).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Limit);
    assert_eq!(
        e.message(),
        "`prompts/t.yaml` holds more than the template limit of 10000 bytes (aliases counted)"
    );
    let limits = strata_core::Limits {
        template_bytes: 30_000,
        ..strata_core::Limits::default()
    };
    assert!(PromptManager::load(dir.path(), &limits).is_ok());
}

/// A versioned component whose first version does not compile: its syntax error is reported,
/// and the next version is not mistaken for a plain definition (found by the `prompt_tree`
/// fuzz target: the mismatch message read the first version of an empty list).
#[test]
fn a_broken_first_version_of_a_component_is_reported_not_a_panic() {
    let tree = json!({"main": {
        "default": "{{ tone }}",
        "components": {"tone": [
            {"version": "a", "content": "{{ x y }}"},
            {"version": "b", "content": "{{ x }}"},
        ]},
    }});
    let e = PromptManager::builder()
        .dict(&tree, "t.yaml")
        .build()
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Syntax);
    assert!(
        e.message().contains("main/components/tone.a"),
        "{}",
        e.message()
    );
}

#[test]
fn the_fallback_chain_lists_the_candidates_tried_through_the_one_that_wins() {
    let m = manager(seed());
    assert_eq!(
        m.fallback_chain(Some("BrowseLink")).unwrap(),
        ["main/BrowseLink"]
    );
    assert_eq!(
        m.fallback_chain(Some("Nothing")).unwrap(),
        ["main/Nothing", "main/default"]
    );
    assert_eq!(
        m.fallback_chain(Some("reflection/Search")).unwrap(),
        ["reflection/Search", "reflection/default"]
    );
    assert_eq!(m.keys(), ["BrowseLink", "Search", "default"]);
}
