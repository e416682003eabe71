use serde_json::Value;

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
    let (Value::Object(map), Seg::Key(k)) = (value, seg) else {
        return None;
    };
    map.keys()
        .map(|cand| (strsim::jaro_winkler(k, cand), cand))
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

/// Evaluates an expression; `Err` carries the miss of the last path tried.
pub(crate) fn eval<'v>(
    expr: &'v Expr,
    root: &'v Value,
) -> Result<&'v Value, (Option<&'v Path>, Miss)> {
    match expr {
        Expr::Path(p) => resolve(p, root).map_err(|m| (Some(p), m)),
        Expr::Literal(v) => Ok(v),
        Expr::Fallback(items) => {
            let mut last = Err((
                None,
                Miss {
                    at: 0,
                    suggestion: None,
                },
            ));
            for item in items {
                match eval(item, root) {
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
