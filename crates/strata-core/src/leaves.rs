//! The one walk over the leaves of a JSON document, with the field path of each.

use serde_json::Value;

use crate::{FieldPath, PathSeg};

/// Calls `f` with every scalar leaf of `value` (strings, numbers, booleans, nulls) and its
/// field path under `path`, in document order; empty lists and maps have no leaves.
pub fn for_each_leaf<'v>(
    value: &'v Value,
    path: &FieldPath,
    f: &mut impl FnMut(&FieldPath, &'v Value),
) {
    match value {
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                for_each_leaf(v, &path.child(PathSeg::Index(i)), f);
            }
        }
        Value::Object(map) => {
            for (k, v) in map {
                for_each_leaf(v, &path.child(PathSeg::Key(k.clone())), f);
            }
        }
        leaf => f(path, leaf),
    }
}

/// Every string leaf of `value` with its field path under `path`, in document order.
pub fn string_leaves<'v>(value: &'v Value, path: &FieldPath) -> Vec<(FieldPath, &'v str)> {
    let mut out = Vec::new();
    for_each_leaf(value, path, &mut |p, v| {
        if let Value::String(s) = v {
            out.push((p.clone(), s.as_str()));
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn leaves_come_in_document_order_with_their_paths() {
        let doc = json!({"a": [1, {"b c": "x"}], "d": {}, "e": "y"});
        let mut seen = Vec::new();
        for_each_leaf(&doc, &FieldPath::root(), &mut |p, v| {
            seen.push(format!("{p}={v}"))
        });
        assert_eq!(seen, ["a[0]=1", "a[1][\"b c\"]=\"x\"", "e=\"y\""]);
        let strings: Vec<String> = string_leaves(&doc, &FieldPath::root())
            .into_iter()
            .map(|(p, s)| format!("{p}={s}"))
            .collect();
        assert_eq!(strings, ["a[1][\"b c\"]=x", "e=y"]);
    }
}
