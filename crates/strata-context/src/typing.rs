//! Static types of context expressions: what can be known before any data arrives is checked
//! when the template compiles (`'1' + 2` fails at load time, not at run time).

use serde_json::Value;
use strata_core::{a_or_an, Error, ErrorKind, Layer, Span};

use crate::expr::{BinOp, Expr, UnOp};

/// What is known of a value's type before rendering.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    /// Comes from data: checked at run time.
    Unknown,
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool,
    /// A number.
    Num,
    /// A string.
    Str,
    /// An array.
    List,
    /// An object.
    Object,
}

impl Ty {
    /// The type of a literal value.
    pub fn of(v: &Value) -> Ty {
        match v {
            Value::Null => Ty::Null,
            Value::Bool(_) => Ty::Bool,
            Value::Number(_) => Ty::Num,
            Value::String(_) => Ty::Str,
            Value::Array(_) => Ty::List,
            Value::Object(_) => Ty::Object,
        }
    }

    /// The name used in errors.
    pub fn name(self) -> &'static str {
        match self {
            Ty::Unknown => "value",
            Ty::Null => "null",
            Ty::Bool => "boolean",
            Ty::Num => "number",
            Ty::Str => "string",
            Ty::List => "array",
            Ty::Object => "object",
        }
    }

    fn is(self, wanted: &[Ty]) -> bool {
        self == Ty::Unknown || wanted.contains(&self)
    }
}

fn fail(span: Span, message: String) -> Error {
    Error::new(Layer::CONTEXT, ErrorKind::Type, message)
        .with_span(Span::new(span.start, span.start + 1))
        .with_hint("types are strict: convert with number(…) or string(…)")
}

/// Checks an expression's known types; returns its type.
pub fn check(expr: &Expr) -> Result<Ty, Error> {
    Ok(match expr {
        Expr::Path(_) | Expr::Fallback(_) => {
            if let Expr::Fallback(items) = expr {
                items.iter().try_for_each(|e| check(e).map(drop))?;
            }
            Ty::Unknown
        }
        Expr::Literal(v) => Ty::of(v),
        Expr::List(items) => {
            items.iter().try_for_each(|e| check(e).map(drop))?;
            Ty::List
        }
        Expr::Object(entries) => {
            entries.iter().try_for_each(|(_, e)| check(e).map(drop))?;
            Ty::Object
        }
        Expr::Cond(arms, otherwise) => {
            // The type of the branches when they agree; otherwise known only at run time.
            let mut ty = check(otherwise)?;
            for (cond, then, span) in arms {
                let c = check(cond)?;
                if !c.is(&[Ty::Bool]) {
                    return Err(fail(
                        *span,
                        format!(
                            "the condition of `? :` needs a boolean, got {}",
                            a_or_an(c.name())
                        ),
                    ));
                }
                if check(then)? != ty {
                    ty = Ty::Unknown;
                }
            }
            ty
        }
        Expr::Unary(op, inner, span) => {
            let t = check(inner)?;
            let (want, what) = match op {
                UnOp::Not => (Ty::Bool, "`!` needs a boolean"),
                UnOp::Neg => (Ty::Num, "`-` needs a number"),
                UnOp::Plus => (Ty::Num, "`+` needs a number"),
            };
            if !t.is(&[want]) {
                return Err(fail(*span, format!("{what}, got {}", a_or_an(t.name()))));
            }
            want
        }
        Expr::Binary(first, rest) => {
            let mut ty = check(first)?;
            for (op, e, span) in rest {
                ty = binary(*op, ty, check(e)?, *span)?;
            }
            ty
        }
        Expr::Call(func, args, span) => {
            let types = args.iter().map(check).collect::<Result<Vec<_>, _>>()?;
            func.check_types(&types).map_err(|m| fail(*span, m))?
        }
    })
}

fn binary(op: BinOp, a: Ty, b: Ty, span: Span) -> Result<Ty, Error> {
    let mismatch = || {
        fail(
            span,
            format!(
                "`{}` cannot combine {} and {}",
                op.symbol(),
                a_or_an(a.name()),
                a_or_an(b.name())
            ),
        )
    };
    match op {
        BinOp::Or | BinOp::And => {
            if !(a.is(&[Ty::Bool]) && b.is(&[Ty::Bool])) {
                let mut e = mismatch();
                if op == BinOp::Or {
                    // `a || b` is the fallback in RyeOS and JavaScript; layer C spells it `??`.
                    e = e.map_message(|m| m + "; did you mean `??`?");
                }
                return Err(e);
            }
            Ok(Ty::Bool)
        }
        BinOp::Eq | BinOp::Ne => Ok(Ty::Bool),
        BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
            let ordered = a.is(&[Ty::Num, Ty::Str]) && b.is(&[Ty::Num, Ty::Str]);
            if !ordered || (a != Ty::Unknown && b != Ty::Unknown && a != b) {
                return Err(mismatch());
            }
            Ok(Ty::Bool)
        }
        BinOp::In => {
            if !b.is(&[Ty::Str, Ty::List, Ty::Object]) {
                return Err(mismatch());
            }
            Ok(Ty::Bool)
        }
        BinOp::Add => {
            if !(a.is(&[Ty::Num, Ty::Str]) && b.is(&[Ty::Num, Ty::Str])) {
                return Err(mismatch());
            }
            match (a, b) {
                (Ty::Unknown, t) | (t, Ty::Unknown) => {
                    Ok(if t == Ty::Unknown { Ty::Unknown } else { t })
                }
                (x, y) if x == y => Ok(x),
                _ => Err(mismatch()),
            }
        }
        BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Rem => {
            if !(a.is(&[Ty::Num]) && b.is(&[Ty::Num])) {
                return Err(mismatch());
            }
            Ok(Ty::Num)
        }
    }
}
