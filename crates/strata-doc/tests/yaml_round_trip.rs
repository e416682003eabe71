//! Whatever value strata writes as YAML reads back as the same value.

use proptest::prelude::*;
use serde_json::Value;
use strata_core::Limits;
use strata_doc::{to_yaml, to_yaml_entry, Document, Format};

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[ -~]{0,12}",
        "[ a-z:#\\-'\"\n\t]{0,12}",
        any::<String>(),
        prop::sample::select(vec![
            "true", "null", "~", "0x1f", "1e3", "-.inf", "0123", "+1", "yes", "- a", "a: b",
        ])
        .prop_map(String::from),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (-1e300f64..1e300).prop_map(Value::from),
        text().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((text(), inner), 0..6)
                .prop_map(|entries| Value::Object(entries.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn written_yaml_reads_back_as_the_same_value(value in value()) {
        let yaml = to_yaml(&value);
        let doc = Document::parse("w.yaml", yaml.clone().into_bytes(), Format::Yaml, &Limits::default());
        match doc {
            Ok(doc) => prop_assert_eq!(&doc.value, &value, "written as:\n{}", yaml),
            Err(e) => prop_assert!(false, "{e} reading:\n{yaml}"),
        }
    }

    #[test]
    fn a_map_is_written_as_its_entries_one_after_the_other(
        entries in prop::collection::vec((text(), value()), 1..6),
    ) {
        let map: serde_json::Map<String, Value> = entries.into_iter().collect();
        let one_by_one: String = map.iter().map(|(k, v)| to_yaml_entry(k, v)).collect();
        prop_assert_eq!(one_by_one, to_yaml(&Value::Object(map)));
    }
}
