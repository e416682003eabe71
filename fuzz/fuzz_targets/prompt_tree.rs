//! Prompt trees: the bytes are written as a dict file `prompts/t.yaml` of a scratch tree
//! (one per fuzzing process, rewritten for every input), read with the tree walker (size
//! limits, YAML, dict nesting, names, versioned components), built with every problem
//! collected, and rendered with small limits: the default key, a named key, the
//! `reflection` type and every template the tree holds, strictly and not, with a feed of
//! other layers' syntax and a secret variable. Errors are expected; panics, hangs and
//! memory blow-ups are findings, and so is the secret's value in any error or warning.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use serde_json::{json, Map};
use strata_core::Undefined;
use strata_jinja::JinjaLimits;
use strata_prompts::{Call, Overrides, PromptLimits, PromptManager};

const SECRET: &str = "s3cr3t-pr0mpt";

/// The scratch tree's `prompts/` directory.
fn tree() -> &'static PathBuf {
    static TREE: OnceLock<PathBuf> = OnceLock::new();
    TREE.get_or_init(|| {
        let dir = std::env::temp_dir()
            .join(format!("strata-fuzz-prompt-tree-{}", std::process::id()))
            .join("prompts");
        std::fs::create_dir_all(&dir).expect("scratch prompts directory");
        dir
    })
}

fn limits() -> PromptLimits {
    PromptLimits {
        template_bytes: 1 << 16,
        variants: 16,
        jinja: JinjaLimits {
            fuel: 20_000,
            recursion: 16,
            output_bytes: 1 << 16,
        },
        component_depth: 8,
        tree_bytes: 1 << 18,
    }
}

fn check(manager: &PromptManager, call: &Call<'_>) {
    match manager.render(call) {
        Ok(out) => {
            let _ = out.text();
            let _ = out.variants_json();
            let _ = out.to_json();
            if !call.secrets.is_empty() {
                for w in &out.warnings {
                    assert!(!w.to_string().contains(SECRET), "a warning shows the secret");
                }
            }
        }
        Err(e) => {
            if !call.secrets.is_empty() {
                assert!(
                    !e.to_string().contains(SECRET),
                    "an error shows the secret: {e}"
                );
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let dir = tree();
    std::fs::write(dir.join("t.yaml"), data).expect("write the dict file");
    let Ok(loaded) = PromptManager::builder()
        .limits(limits())
        .default_template("fallback: {{ user_input }}")
        .dir(dir, "prompts")
        .build_all()
    else {
        return;
    };
    let manager = loaded.manager;
    for e in &loaded.errors {
        let _ = e.to_string();
    }

    let mut feed = Map::new();
    feed.insert("user_input".into(), json!(strata_fuzz::EVIL));
    feed.insert("context".into(), json!("{{ user_input }} {% include 'x' %}"));
    feed.insert("items".into(), json!([1, "two", {"k": null}]));
    feed.insert("password".into(), json!(SECRET));

    let mut keys: Vec<Option<String>> = vec![None, Some("BrowseLink".into())];
    let templates = manager.templates();
    for t in templates.iter().filter(|t| !t.component).take(6) {
        keys.push(Some(t.id.clone()));
        let _ = manager.needs(&t.id);
        let _ = manager.components_of(&t.id);
    }
    let _ = manager.namespaces();
    let _ = manager.reachable(None);
    let _ = manager.unknown_includes();
    let _ = manager.resolve(None);

    for key in &keys {
        for (i, undefined) in [Undefined::Warn, Undefined::Strict].into_iter().enumerate() {
            let call = Call {
                key: key.as_deref(),
                feed: Some(&feed),
                undefined,
                secrets: vec!["password".into()],
                explain: i == 0,
                ..Call::default()
            };
            check(&manager, &call);
        }
    }

    // Another type and version, as `switch` and as a per-call override.
    let overrides = Overrides {
        type_: Some("reflection".into()),
        version: Some(Some("enterprise".into())),
        ..Overrides::default()
    };
    if let Ok(other) = manager.switch(&overrides) {
        check(&other, &Call::default().feed(&feed));
    }
    let call = Call {
        feed: Some(&feed),
        overrides,
        pins: vec![("system_preamble".into(), "concise".into())],
        ..Call::default()
    };
    check(&manager, &call);
});
