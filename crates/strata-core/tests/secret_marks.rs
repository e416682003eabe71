//! Properties of secret markers over arbitrary tool output: no secret survives marking, what
//! a tool printed comes back byte for byte, and no text a tool printed becomes a marker.

use proptest::prelude::*;
use strata_core::secret_marks::{mark_text, markers_in, restore_text, Secret};

const TOKEN: &str = "s3cr3t";

fn secrets() -> Vec<Secret> {
    vec![Secret {
        name: "TOKEN".into(),
        value: TOKEN.into(),
    }]
}

/// Text made of the pieces that matter: `%` runs, marker openings, names, braces, the secret.
fn output() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(vec![
            "%", "%%", "{secret:", "TOKEN", "OTHER", "}", "{", "x", " ", TOKEN, "s3c", "r3t",
        ]),
        0..24,
    )
    .prop_map(|pieces| pieces.concat())
}

fn env(name: &str) -> Option<String> {
    (name == "TOKEN").then(|| TOKEN.to_owned())
}

proptest! {
    #[test]
    fn marking_hides_the_secret_and_restoring_gives_the_text_back(text in output()) {
        let marked = mark_text(&text, &secrets()).unwrap_or_else(|| text.clone());
        prop_assert!(!marked.contains(TOKEN), "{marked}");
        let restored = restore_text(&marked, &mut env).unwrap().unwrap_or(marked.clone());
        prop_assert_eq!(restored, text.clone());
        // Every marker stands for a secret the text held: none is forged.
        let names = markers_in(&serde_json::Value::String(marked));
        prop_assert_eq!(names.is_empty(), !text.contains(TOKEN));
    }

    #[test]
    fn text_without_a_secret_restores_to_itself_whatever_markers_it_forges(text in output()) {
        let marked = mark_text(&text, &[]).unwrap_or_else(|| text.clone());
        prop_assert!(markers_in(&serde_json::Value::String(marked.clone())).is_empty());
        let mut nothing = |_: &str| None;
        prop_assert_eq!(restore_text(&marked, &mut nothing).unwrap().unwrap_or(marked), text);
    }
}
