//! Properties of secret markers over arbitrary text: no secret survives marking, what a tool
//! printed comes back byte for byte, and no text that was not minted under the run's key —
//! however it is cut, joined or forged — is ever restored.

use proptest::prelude::*;
use strata_core::secret_marks::{mark_text, markers_in, restore_text, MarkKey, Secret};

const TOKEN: &str = "s3cr3t";
const KEY: MarkKey = MarkKey::from_bytes([1; 32]);
const OTHER: MarkKey = MarkKey::from_bytes([2; 32]);

fn secrets() -> Vec<Secret> {
    vec![Secret {
        name: "TOKEN".into(),
        value: TOKEN.into(),
    }]
}

/// Text made of the pieces that matter: `%` runs, marker openings, names, tags, braces, the
/// secret, pieces of a real marker and markers of another key.
fn text() -> impl Strategy<Value = String> {
    let real = KEY.marker("TOKEN");
    let other = OTHER.marker("TOKEN");
    let (head, tail) = real.split_at(12);
    prop::collection::vec(
        prop::sample::select(vec![
            "%".to_owned(),
            "%%".to_owned(),
            "{secret:".to_owned(),
            "%{secret:".to_owned(),
            "TOKEN".to_owned(),
            "HOME".to_owned(),
            ":".to_owned(),
            "0123456789abcdef".to_owned(),
            "}".to_owned(),
            "x".to_owned(),
            TOKEN.to_owned(),
            "s3c".to_owned(),
            "r3t".to_owned(),
            head.to_owned(),
            tail.to_owned(),
            other,
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
    fn marking_hides_the_secret_and_restoring_gives_the_text_back(text in text()) {
        let real = KEY.marker("TOKEN");
        // Text that already holds a minted marker would restore it: leave such text out
        // (a tool never sees the key, so it cannot print one).
        prop_assume!(!text.contains(&real));
        let marked = mark_text(&text, &secrets(), &KEY).unwrap_or_else(|| text.clone());
        prop_assert!(!marked.contains(TOKEN), "{marked}");
        let restored = restore_text(&marked, &KEY, &mut env).unwrap().unwrap_or(marked.clone());
        prop_assert_eq!(restored, text.clone());
        let names = markers_in(&serde_json::Value::String(marked), &KEY);
        prop_assert_eq!(names.is_empty(), !text.contains(TOKEN));
    }

    /// Caller text, whatever markers of whatever names it holds, reaches the tool unchanged.
    #[test]
    fn text_not_minted_under_the_key_is_never_restored(text in text()) {
        prop_assume!(!text.contains(&KEY.marker("TOKEN")));
        prop_assert!(markers_in(&serde_json::Value::String(text.clone()), &KEY).is_empty());
        let mut any = |name: &str| Some(format!("<{name}>"));
        prop_assert_eq!(restore_text(&text, &KEY, &mut any), Ok(None));
    }
}
