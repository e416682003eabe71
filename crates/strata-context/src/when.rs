//! Conditions (`when:`, `condition:`): an expression (`state.count > 0`), the structured form
//! (`{path, op, value}` / `any` / `all` / `not`), or a boolean constant — the one condition
//! type of graphs, hooks and response candidates.
//!
//! Expressions are layer C's language, parsed (and type-checked where literals allow) at
//! load time and evaluated against a context.

use serde_json::Value;
use strata_core::{ContextSource, Error};

use crate::condition::Condition;
use crate::{eval_bool, parse_expr, Expr, Path};

/// A parsed condition.
#[derive(Debug, Clone)]
pub enum When {
    /// An expression as written, and its parse.
    Expr {
        /// The text.
        source: String,
        /// The parsed expression.
        expr: Expr,
    },
    /// The structured form.
    Structured {
        /// The condition in compact JSON, for messages and drawings.
        source: String,
        /// The parsed condition.
        cond: Condition,
    },
    /// `when: true` or `when: false`.
    Const(bool),
}

impl When {
    /// Parses the value of a `when:` or `condition:` field. Expression errors carry spans
    /// inside the string; structured errors are messages.
    pub fn parse(value: &Value) -> Result<When, WhenError> {
        match value {
            Value::Bool(b) => Ok(When::Const(*b)),
            Value::String(s) => {
                let expr = parse_expr(s, 0).map_err(WhenError::Expr)?;
                Ok(When::Expr {
                    source: s.clone(),
                    expr,
                })
            }
            Value::Object(_) => {
                let cond = Condition::parse(value).map_err(|e| WhenError::Structured(e.message().to_string()))?;
                Ok(When::Structured {
                    source: serde_json::to_string(value).unwrap_or_default(),
                    cond,
                })
            }
            _ => Err(WhenError::Structured(
                "a condition is an expression (`state.count > 0`), a map ({path, op, value}, any, all, not) or a boolean".into(),
            )),
        }
    }

    /// Evaluates the condition against `root`; a non-boolean expression or a type mismatch is
    /// an error.
    pub fn eval(&self, root: &dyn ContextSource) -> Result<bool, Error> {
        match self {
            When::Const(b) => Ok(*b),
            When::Structured { cond, .. } => cond.eval(root),
            When::Expr { expr, .. } => eval_bool(expr, root),
        }
    }

    /// The condition as written (compact JSON for the structured form).
    pub fn source(&self) -> String {
        match self {
            When::Const(b) => b.to_string(),
            When::Structured { source, .. } | When::Expr { source, .. } => source.clone(),
        }
    }

    /// Every context path the condition reads, in canonical form (`state.count`).
    pub fn paths(&self) -> Vec<Path> {
        match self {
            When::Const(_) => Vec::new(),
            When::Expr { expr, .. } => expr.paths().into_iter().cloned().collect(),
            When::Structured { cond, .. } => {
                let mut out = Vec::new();
                structured_paths(cond, &mut out);
                out
            }
        }
    }
}

fn structured_paths(cond: &Condition, out: &mut Vec<Path>) {
    match cond {
        Condition::Compare { path, .. } => out.push(path.clone()),
        Condition::Any(items) | Condition::All(items) => {
            items.iter().for_each(|c| structured_paths(c, out))
        }
        Condition::Not(inner) => structured_paths(inner, out),
    }
}

/// Why a condition did not parse.
#[derive(Debug)]
pub enum WhenError {
    /// An expression error, with its span inside the string.
    Expr(Error),
    /// A structured-form error.
    Structured(String),
}
