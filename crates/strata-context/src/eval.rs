use std::borrow::Cow;

use serde_json::{Map, Value};

use crate::{Expr, Path, Seg};

/// Why a path did not resolve: the index of the step that failed, and a likely intended key.
#[derive(Debug, Clone, PartialEq)]
pub struct Miss {
    /// Index of the first step that found nothing.
    pub at: usize,
    /// The closest existing key at that step, when one is close.
    pub suggestion: Option<String>,
}

fn step<'v>(value: &'v Value, seg: &Seg) -> Option<&'v Value> {
    match (value, seg) {
        (Value::Object(map), Seg::Key(k)) => map.get(k),
        (Value::Object(map), Seg::Index(n)) => map.get(&n.to_string()),
        (Value::Array(items), Seg::Index(n)) => index(items, *n),
        (Value::Array(items), Seg::Key(k)) => k.parse().ok().and_then(|n| index(items, n)),
        _ => None,
    }
}

fn index(items: &[Value], n: i64) -> Option<&Value> {
    let i = if n < 0 { items.len() as i64 + n } else { n };
    usize::try_from(i).ok().and_then(|i| items.get(i))
}

fn suggest(value: &Value, seg: &Seg) -> Option<String> {
    match value {
        Value::Object(map) => suggest_key(map.keys(), seg),
        _ => None,
    }
}

fn suggest_key<'k>(keys: impl Iterator<Item = &'k String>, seg: &Seg) -> Option<String> {
    let Seg::Key(k) = seg else {
        return None;
    };
    keys.map(|cand| (strsim::jaro_winkler(k, cand), cand))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, cand)| cand.clone())
}

/// Walks `path` through `root`.
pub fn resolve<'v>(path: &Path, root: &'v Value) -> Result<&'v Value, Miss> {
    let mut cur = root;
    for (i, seg) in path.segs.iter().enumerate() {
        match step(cur, seg) {
            Some(next) => cur = next,
            None => {
                return Err(Miss {
                    at: i,
                    suggestion: suggest(cur, seg),
                })
            }
        }
    }
    Ok(cur)
}

/// Walks `path` through the context; when the context has no `inputs` namespace, `inputs`
/// names the directive inputs (so `${inputs.x}` reaches what `{input:x}` does).
fn resolve_in<'v>(
    path: &Path,
    root: &'v Value,
    inputs: &'v Map<String, Value>,
) -> Result<Cow<'v, Value>, Miss> {
    let uses_inputs = matches!(path.segs.first(), Some(Seg::Key(k)) if k == "inputs")
        && root.get("inputs").is_none();
    if !uses_inputs {
        return resolve(path, root).map(Cow::Borrowed);
    }
    let Some(second) = path.segs.get(1) else {
        return Ok(Cow::Owned(Value::Object(inputs.clone())));
    };
    let first = match second {
        Seg::Key(k) => inputs.get(k),
        Seg::Index(n) => inputs.get(&n.to_string()),
    };
    let Some(first) = first else {
        let suggestion = suggest_key(inputs.keys(), second);
        return Err(Miss { at: 1, suggestion });
    };
    let rest = Path {
        segs: path.segs[2..].to_vec(),
    };
    resolve(&rest, first)
        .map(Cow::Borrowed)
        .map_err(|m| Miss { at: m.at + 2, ..m })
}

/// Evaluates an expression; `Err` carries the miss of the first path that missed.
pub(crate) fn eval<'v>(
    expr: &'v Expr,
    root: &'v Value,
    inputs: &'v Map<String, Value>,
) -> Result<Cow<'v, Value>, (Option<&'v Path>, Miss)> {
    match expr {
        Expr::Path(p) => resolve_in(p, root, inputs).map_err(|m| (Some(p), m)),
        Expr::Literal(v) => Ok(Cow::Borrowed(v)),
        Expr::Fallback(items) => {
            let mut last = Err((
                None,
                Miss {
                    at: 0,
                    suggestion: None,
                },
            ));
            for item in items {
                match eval(item, root, inputs) {
                    Ok(v) if !v.is_null() => return Ok(v),
                    Ok(v) => last = Ok(v),
                    Err(miss) if last.is_err() => last = Err(miss),
                    Err(_) => {}
                }
            }
            last
        }
    }
}
