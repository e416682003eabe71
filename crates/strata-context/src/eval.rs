use std::borrow::Cow;

use serde_json::{Map, Value};
use strata_core::walk::{step, suggest, Miss};
use strata_core::{a_or_an, did_you_mean, type_name, ContextSource, Error, ErrorKind, Layer};

use crate::condition::{json_cmp, json_eq};
use crate::expr::{BinOp, UnOp};
use crate::functions::{contains, Func};

use crate::{Expr, Path, Seg};

/// Walks `path` through the context; when the context has no `inputs` namespace, `inputs`
/// names the directive inputs (so `${inputs.x}` reaches what `{input:x}` does).
fn resolve_with_inputs<'e, 'v>(
    path: &'e Path,
    root: &'v dyn ContextSource,
    inputs: &'v dyn ContextSource,
) -> Result<Cow<'v, Value>, Fail<'e>> {
    let miss = |at, suggestion| Fail::Missing(path, Miss { at, suggestion });
    let uses_inputs = path.head() == Some("inputs") && root.namespace("inputs").is_none();
    if !uses_inputs {
        let Some((Seg::Key(name), rest)) = path.segs.split_first() else {
            return Err(miss(0, None));
        };
        return match root.namespace(name) {
            Some(ns) => walk(path, rest, ns, 1).map(Cow::Borrowed),
            None => Err(miss(
                0,
                did_you_mean(name, root.namespaces()).map(str::to_string),
            )),
        };
    }
    let Some(second) = path.segs.get(1) else {
        return Ok(Cow::Owned(Value::Object(inputs.to_object())));
    };
    let first = match second {
        Seg::Key(k) => inputs.namespace(k),
        Seg::Index(n) => inputs.namespace(&n.to_string()),
    };
    let Some(first) = first else {
        let suggestion = match second {
            Seg::Key(k) => did_you_mean(k, inputs.namespaces()).map(str::to_string),
            Seg::Index(_) => None,
        };
        return Err(miss(1, suggestion));
    };
    walk(path, &path.segs[2..], first, 2).map(Cow::Borrowed)
}

/// The walk of [`strata_core::walk`], except that a string key never indexes an array:
/// `items['0']` is an error (write `items[0]`), where the shared walk would find the item.
/// `offset` is the index in `path` of `segs[0]`.
fn walk<'e, 'v>(
    path: &'e Path,
    segs: &[Seg],
    from: &'v Value,
    offset: usize,
) -> Result<&'v Value, Fail<'e>> {
    let mut cur = from;
    for (i, seg) in segs.iter().enumerate() {
        if let (Value::Array(_), Seg::Key(k)) = (cur, seg) {
            if let Ok(n) = k.parse::<i64>() {
                let mut fixed = Path::new(path.segs[..i + offset].to_vec());
                fixed.segs.push(Seg::Index(n));
                return Err(Fail::Type(format!(
                    "cannot index an array with the string {}: write `{}`",
                    Value::from(k.as_str()),
                    fixed.display()
                )));
            }
        }
        match step(cur, seg) {
            Some(next) => cur = next,
            None => {
                return Err(Fail::Missing(
                    path,
                    Miss {
                        at: i + offset,
                        suggestion: suggest(cur, seg),
                    },
                ))
            }
        }
    }
    Ok(cur)
}

/// Why an expression has no value.
#[derive(Debug, Clone)]
pub(crate) enum Fail<'e> {
    /// A path found nothing: a warning (empty) in a placeholder.
    Missing(&'e Path, Miss),
    /// A type error or a bad operation: always an error.
    Type(String),
}

/// A number, integer while it can be (every JSON integer, `u64` included, fits `i128`).
#[derive(Debug, Clone, Copy)]
enum Num {
    Int(i128),
    Float(f64),
}

fn num(v: &Value) -> Option<Num> {
    let n = v.as_number()?;
    Some(match (n.as_i64(), n.as_u64()) {
        (Some(i), _) => Num::Int(i128::from(i)),
        (None, Some(u)) => Num::Int(i128::from(u)),
        _ => Num::Float(n.as_f64()?),
    })
}

/// An integer result as JSON: an error when it fits neither `i64` nor `u64`.
fn int_value(i: i128) -> Option<Value> {
    i64::try_from(i)
        .map(Value::from)
        .or_else(|_| u64::try_from(i).map(Value::from))
        .ok()
}

fn float(n: Num) -> f64 {
    match n {
        Num::Int(i) => i as f64,
        Num::Float(f) => f,
    }
}

/// `+ - * / %` on two numbers: integers stay integers, checked (`integer overflow`,
/// `division by zero`); a float makes the result a float, which must be finite.
pub(crate) fn arith(op: BinOp, a: &Value, b: &Value) -> Result<Value, String> {
    let (Some(x), Some(y)) = (num(a), num(b)) else {
        return Err(format!(
            "`{}` cannot combine {} and {}",
            op.symbol(),
            a_or_an(type_name(a)),
            a_or_an(type_name(b))
        ));
    };
    if let (Num::Int(x), Num::Int(y)) = (x, y) {
        let r = match op {
            BinOp::Add => x.checked_add(y),
            BinOp::Sub => x.checked_sub(y),
            BinOp::Mul => x.checked_mul(y),
            BinOp::Div | BinOp::Rem if y == 0 => return Err("division by zero".into()),
            BinOp::Div => x.checked_div(y),
            _ => x.checked_rem(y),
        };
        return r
            .and_then(int_value)
            .ok_or_else(|| "integer overflow".into());
    }
    let (x, y) = (float(x), float(y));
    let r = match op {
        BinOp::Add => x + y,
        BinOp::Sub => x - y,
        BinOp::Mul => x * y,
        BinOp::Div => x / y,
        _ => x % y,
    };
    serde_json::Number::from_f64(r)
        .map(Value::Number)
        .ok_or_else(|| format!("`{}` gives no finite number", op.symbol()))
}

fn boolean<'e>(v: &Value, what: &str) -> Result<bool, Fail<'e>> {
    v.as_bool().ok_or_else(|| {
        // `a || b` is the fallback in RyeOS and JavaScript; layer C spells it `??`.
        let hint = if what == "||" {
            "; did you mean `??`?"
        } else {
            ""
        };
        Fail::Type(format!(
            "{what} needs a boolean, got {}{hint}",
            a_or_an(type_name(v))
        ))
    })
}

/// Applies a (non-logical) operator to two values.
fn apply<'e>(op: BinOp, x: &Value, y: &Value) -> Result<Value, Fail<'e>> {
    let typed = |r: Result<Value, String>| r.map_err(Fail::Type);
    match op {
        BinOp::Eq => Ok(Value::Bool(json_eq(x, y))),
        BinOp::Ne => Ok(Value::Bool(!json_eq(x, y))),
        BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
            let o = json_cmp(x, y).map_err(|m| Fail::Type(format!("`{}`: {m}", op.symbol())))?;
            Ok(Value::Bool(match op {
                BinOp::Lt => o.is_lt(),
                BinOp::Le => o.is_le(),
                BinOp::Gt => o.is_gt(),
                _ => o.is_ge(),
            }))
        }
        BinOp::In => typed(contains(y, x).map(Value::Bool)),
        BinOp::Add => match (x, y) {
            (Value::String(s), Value::String(t)) => Ok(Value::String(format!("{s}{t}"))),
            _ => typed(arith(op, x, y)),
        },
        _ => typed(arith(op, x, y)),
    }
}

/// Evaluates a chain `first op e op e …` left to right, in a loop. `&&` and `||` stop at the
/// first operand that decides the result (operators of one chain are all of one level, so a
/// logical chain holds only `&&` or only `||`).
fn chain<'e, 'v>(
    first: &'e Expr,
    rest: &'e [(BinOp, Expr, strata_core::Span)],
    root: &'v dyn ContextSource,
    inputs: &'v dyn ContextSource,
) -> Result<Cow<'v, Value>, Fail<'e>> {
    let mut acc = eval(first, root, inputs)?;
    for (op, e, _) in rest {
        if let BinOp::And | BinOp::Or = op {
            let left = boolean(&acc, op.symbol())?;
            if left == (*op == BinOp::Or) {
                return Ok(Cow::Owned(Value::Bool(left)));
            }
            let right = boolean(&*eval(e, root, inputs)?, op.symbol())?;
            acc = Cow::Owned(Value::Bool(right));
        } else {
            let right = eval(e, root, inputs)?;
            acc = Cow::Owned(apply(*op, &acc, &right)?);
        }
    }
    Ok(acc)
}

/// Evaluates an expression against the context (and the directive inputs, see
/// [`resolve_in`]).
///
/// A path's value is borrowed from the data (`'v`); what the expression computes, literals
/// included, is owned; a failure borrows the expression (`'e`).
pub(crate) fn eval<'e, 'v>(
    expr: &'e Expr,
    root: &'v dyn ContextSource,
    inputs: &'v dyn ContextSource,
) -> Result<Cow<'v, Value>, Fail<'e>> {
    match expr {
        Expr::Path(p) => resolve_with_inputs(p, root, inputs),
        Expr::Literal(v) => Ok(Cow::Owned(v.clone())),
        Expr::List(items) => items
            .iter()
            .map(|e| eval(e, root, inputs).map(Cow::into_owned))
            .collect::<Result<Vec<_>, _>>()
            .map(|v| Cow::Owned(Value::Array(v))),
        Expr::Object(entries) => entries
            .iter()
            .map(|(k, e)| Ok((k.clone(), eval(e, root, inputs)?.into_owned())))
            .collect::<Result<Map<_, _>, _>>()
            .map(|m| Cow::Owned(Value::Object(m))),
        Expr::Fallback(items) => {
            let mut last: Result<Cow<'v, Value>, Fail<'e>> =
                Err(Fail::Type("empty fallback".into()));
            for item in items {
                match eval(item, root, inputs) {
                    Ok(v) if !v.is_null() => return Ok(v),
                    Ok(v) => last = Ok(v),
                    Err(Fail::Type(m)) => return Err(Fail::Type(m)),
                    Err(miss) if !matches!(last, Err(Fail::Missing(..))) && last.is_err() => {
                        last = Err(miss)
                    }
                    Err(_) => {}
                }
            }
            last
        }
        Expr::Cond(arms, otherwise) => {
            for (cond, then, _) in arms {
                if boolean(&*eval(cond, root, inputs)?, "the condition of `? :`")? {
                    return eval(then, root, inputs);
                }
            }
            eval(otherwise, root, inputs)
        }
        Expr::Unary(op, inner, _) => {
            let v = eval(inner, root, inputs)?;
            if *op != UnOp::Not && !v.is_number() {
                return Err(Fail::Type(format!(
                    "`{}` needs a number, got {}",
                    op.symbol(),
                    a_or_an(type_name(&v))
                )));
            }
            match op {
                UnOp::Not => Ok(Cow::Owned(Value::Bool(!boolean(&v, "`!`")?))),
                UnOp::Plus => Ok(v),
                UnOp::Neg => arith(BinOp::Sub, &Value::from(0), &v)
                    .map(Cow::Owned)
                    .map_err(Fail::Type),
            }
        }
        Expr::Binary(first, rest) => chain(first, rest, root, inputs),
        Expr::Call(Func::Exists, args, _) => match eval(&args[0], root, inputs) {
            Ok(_) => Ok(Cow::Owned(Value::Bool(true))),
            Err(Fail::Missing(..)) => Ok(Cow::Owned(Value::Bool(false))),
            Err(other) => Err(other),
        },
        Expr::Call(func, args, _) => {
            // Borrowed, not copied: a call on a large value of the context costs no copy.
            let values = args
                .iter()
                .map(|e| eval(e, root, inputs))
                .collect::<Result<Vec<_>, _>>()?;
            let refs: Vec<&Value> = values.iter().map(|v| &**v).collect();
            func.apply(&refs).map(Cow::Owned).map_err(Fail::Type)
        }
    }
}

fn fail_error(fail: Fail<'_>) -> Error {
    match fail {
        Fail::Missing(p, _) => Error::new(
            Layer::CONTEXT,
            ErrorKind::Undefined,
            format!("context path `{}` not found", p.display()),
        ),
        Fail::Type(m) => type_error(m),
    }
}

/// A type error of layer C (a bad operand, a condition that is not a boolean).
pub(crate) fn type_error(message: impl Into<String>) -> Error {
    Error::new(Layer::CONTEXT, ErrorKind::Type, message)
}

/// Evaluates an expression (a `when:` condition, say) against `root`; a missing path is an
/// error here (kind `undefined`), as is a type mismatch (kind `type`).
pub fn eval_value(expr: &Expr, root: &dyn ContextSource) -> Result<Value, Error> {
    let no_inputs = Map::new();
    eval(expr, root, &no_inputs)
        .map(Cow::into_owned)
        .map_err(fail_error)
}

/// Evaluates an expression that must yield a boolean.
pub fn eval_bool(expr: &Expr, root: &dyn ContextSource) -> Result<bool, Error> {
    match eval_value(expr, root)? {
        Value::Bool(b) => Ok(b),
        other => Err(type_error(format!(
            "a condition must be a boolean, got {}",
            a_or_an(type_name(&other))
        ))),
    }
}
