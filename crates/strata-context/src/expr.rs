//! The expressions inside `${…}`: paths, literals, `? :`, `??`, operators and function calls,
//! parsed by recursive descent.
//!
//! Recursion depth never grows with the length of an expression: the operands of one
//! precedence level are kept in a flat chain ([`Expr::Binary`], and [`Expr::Cond`] for
//! `a ? b : c ? d : e`) that parsing, type checking and evaluation walk in a loop, and what
//! does nest (groups, `!`/`-`/`+`, lists, objects, calls and the middle branch of `? :`)
//! stops at [`MAX_DEPTH`] levels with a syntax error. So every recursive walk of an
//! [`Expr`] (evaluation, checks, `Clone`, `Drop`) is bounded by a small constant times that
//! limit, whatever the input.

use std::collections::HashSet;

use serde_json::Value;
use strata_core::{Error, ErrorKind, Layer, Span};

use crate::functions::{strata_spelling, Func, Spelling};
use crate::lexer::{lex, Tok, Token};

pub use strata_core::walk::{Path, Seg};

/// A prefix operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnOp {
    /// `!`: boolean not.
    Not,
    /// `-`: numeric negation.
    Neg,
    /// `+`: a number, unchanged (an error for anything else).
    Plus,
}

impl UnOp {
    /// The operator as written.
    pub fn symbol(self) -> &'static str {
        match self {
            UnOp::Not => "!",
            UnOp::Neg => "-",
            UnOp::Plus => "+",
        }
    }
}

/// An infix operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    /// `||`
    Or,
    /// `&&`
    And,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `in`
    In,
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%`
    Rem,
}

impl BinOp {
    /// The operator as written.
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Or => "||",
            BinOp::And => "&&",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::In => "in",
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
        }
    }
}

/// A context expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// A path into the context.
    Path(Path),
    /// A literal value.
    Literal(Value),
    /// `[a, b, …]`
    List(Vec<Expr>),
    /// `{"k": v, …}`
    Object(Vec<(String, Expr)>),
    /// `a ?? b ?? …`: the first operand that is present and not null.
    Fallback(Vec<Expr>),
    /// `c ? a : b`, with `c1 ? a : c2 ? b : e` kept flat: each condition with the branch it
    /// selects (and the span of its `?`), then the branch taken when every condition is
    /// false. Only the branch taken is evaluated.
    Cond(Vec<(Expr, Expr, Span)>, Box<Expr>),
    /// `!a`, `-a`, `+a`.
    Unary(UnOp, Box<Expr>, Span),
    /// `a op b op c …`: operands of one precedence level, applied left to right. The first
    /// operand, then each operator (with its span) and the operand after it.
    Binary(Box<Expr>, Vec<(BinOp, Expr, Span)>),
    /// `f(a, …)`.
    Call(Func, Vec<Expr>, Span),
}

impl Expr {
    /// Every path the expression reads, in order.
    pub fn paths(&self) -> Vec<&Path> {
        let mut out = Vec::new();
        self.collect_paths(&mut out);
        out
    }

    fn collect_paths<'e>(&'e self, out: &mut Vec<&'e Path>) {
        match self {
            Expr::Path(p) => out.push(p),
            Expr::Literal(_) => {}
            Expr::List(items) | Expr::Fallback(items) | Expr::Call(_, items, _) => {
                items.iter().for_each(|e| e.collect_paths(out))
            }
            Expr::Object(entries) => entries.iter().for_each(|(_, e)| e.collect_paths(out)),
            Expr::Cond(arms, otherwise) => {
                for (cond, then, _) in arms {
                    cond.collect_paths(out);
                    then.collect_paths(out);
                }
                otherwise.collect_paths(out);
            }
            Expr::Unary(_, e, _) => e.collect_paths(out),
            Expr::Binary(first, rest) => {
                first.collect_paths(out);
                rest.iter().for_each(|(_, e, _)| e.collect_paths(out));
            }
        }
    }
}

/// How deeply expressions may nest (groups, `!`, `-` and `+`, lists, objects, calls, the
/// middle branch of `? :`).
pub const MAX_DEPTH: usize = 64;
const HINT: &str = "a placeholder holds a path such as `state.items[0].name`, optionally `?? fallback`, or an expression";

struct Parser<'a> {
    src: &'a str,
    base: usize,
    toks: Vec<Token>,
    pos: usize,
    depth: usize,
}

/// Parses the text between `${` and `}` (or a `when:` expression); `base` is its offset in the
/// field, for spans. Literal type errors (`'1' + 2`) are reported here.
pub fn parse_expr(src: &str, base: usize) -> Result<Expr, Error> {
    match simple_path(src) {
        Some(path) => Ok(Expr::Path(path)),
        None => parse_full(src, base),
    }
}

/// A plain path (`state.cart.items[0].name`), the commonest placeholder, read by the path
/// parser every front-end shares, without the lexer and the precedence climb. Anything else
/// (spaces, operators, a leading `true`, `false` or `null`, an upper-case namespace) is
/// `None` and goes to the full parser, which reads such a path to the same [`Path`].
fn simple_path(src: &str) -> Option<Path> {
    let first = src.split(['.', '[']).next()?;
    if matches!(first, "true" | "false" | "null")
        || !first.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
    {
        return None;
    }
    Path::parse(src).ok()
}

/// The full parser: lexer, precedence climbing, literal type checks.
fn parse_full(src: &str, base: usize) -> Result<Expr, Error> {
    let toks = lex(src, base)?;
    let mut p = Parser {
        src,
        base,
        toks,
        pos: 0,
        depth: 0,
    };
    if p.toks.is_empty() {
        let at = base + src.len();
        return Err(
            Error::new(Layer::CONTEXT, ErrorKind::Syntax, "empty placeholder `${}`")
                .with_span(Span::new(at, at + 1))
                .with_hint("write a context path such as `${state.name}`"),
        );
    }
    let expr = p.ternary()?;
    if let Some(t) = p.toks.get(p.pos) {
        let text = &src[t.span.start - base..t.span.end - base];
        return Err(p.err_at(
            t.span,
            &format!("unexpected `{text}` in context placeholder"),
            HINT,
        ));
    }
    crate::typing::check(&expr)?;
    Ok(expr)
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.kind)
    }

    fn here(&self) -> Span {
        match self.toks.get(self.pos) {
            Some(t) => t.span,
            None => {
                let end = self.base + self.src.len();
                Span::new(end, end + 1)
            }
        }
    }

    fn err_at(&self, span: Span, message: &str, hint: &str) -> Error {
        Error::new(Layer::CONTEXT, ErrorKind::Syntax, message)
            .with_span(Span::new(span.start, span.start + 1))
            .with_hint(hint)
    }

    fn err(&self, message: &str, hint: &str) -> Error {
        self.err_at(self.here(), message, hint)
    }

    fn eat(&mut self, p: &str) -> bool {
        if matches!(self.peek(), Some(Tok::Punct(q)) if *q == p) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, p: &str, hint: &str) -> Result<(), Error> {
        if self.eat(p) {
            Ok(())
        } else {
            Err(self.err(&format!("expected `{p}`"), hint))
        }
    }

    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T, Error>) -> Result<T, Error> {
        if self.depth >= MAX_DEPTH {
            return Err(self.err("expression nested too deeply", "nest at most 64 levels"));
        }
        self.depth += 1;
        let r = f(self);
        self.depth -= 1;
        r
    }

    /// The loosest level, `c ? a : b`: right-associative (`a ? b : c ? d : e` is
    /// `a ? b : (c ? d : e)`), read in a loop into one flat [`Expr::Cond`]. A `|` after an
    /// operand is explained here (layer C has no filters).
    fn ternary(&mut self) -> Result<Expr, Error> {
        let start = self.here().start;
        let mut arms = Vec::new();
        let mut cond = self.fallback()?;
        let otherwise = loop {
            let span = self.here();
            if !self.eat("?") {
                break cond;
            }
            let then = self.nested(Self::ternary)?;
            self.expect(":", "a conditional is written `condition ? then : else`")?;
            arms.push((cond, then, span));
            cond = self.fallback()?;
        };
        self.no_filter(start)?;
        Ok(if arms.is_empty() {
            otherwise
        } else {
            Expr::Cond(arms, Box::new(otherwise))
        })
    }

    /// A `|` where an operator could stand is a filter in other template languages
    /// (`${x | upper}`): an error naming the call to write instead (`upper(x)`).
    fn no_filter(&self, start: usize) -> Result<(), Error> {
        let Some(pipe) = self.toks.get(self.pos) else {
            return Ok(());
        };
        if pipe.kind != Tok::Punct("|") {
            return Ok(());
        }
        let text = |from: usize, to: usize| self.src[from - self.base..to - self.base].trim();
        let value = text(start, pipe.span.start);
        let hint = "layer C has no filters: call the function on the value, `f(x)`";
        let Some(Token {
            kind: Tok::Ident(name),
            ..
        }) = self.toks.get(self.pos + 1)
        else {
            return Err(self.err_at(pipe.span, "unexpected `|` in context placeholder", hint));
        };
        // The filter's own arguments, as written: `join(', ')` → `, `.
        let mut args = "";
        if matches!(self.toks.get(self.pos + 2), Some(t) if t.kind == Tok::Punct("(")) {
            let mut depth = 0usize;
            for t in &self.toks[self.pos + 2..] {
                match t.kind {
                    Tok::Punct("(") => depth += 1,
                    Tok::Punct(")") if depth == 1 => {
                        args = text(self.toks[self.pos + 2].span.end, t.span.start);
                        break;
                    }
                    Tok::Punct(")") => depth -= 1,
                    _ => {}
                }
            }
        }
        let with_args = |f: &str| match args {
            "" => format!("{f}({value})"),
            a => format!("{f}({value}, {a})"),
        };
        let message = match strata_spelling(name) {
            Some(Spelling::Func(f)) => format!(
                "unexpected `|`: layer C has no filters; did you mean `{}`?",
                with_args(f.name())
            ),
            Some(Spelling::Fallback) => format!(
                "unexpected `|`: layer C has no filters; did you mean `{value} ?? {}`?",
                if args.is_empty() { "…" } else { args }
            ),
            None => format!("unexpected `|`: layer C has no filters, and no function `{name}`"),
        };
        Err(self.err_at(pipe.span, &message, hint))
    }

    fn fallback(&mut self) -> Result<Expr, Error> {
        let mut items = vec![self.or()?];
        while self.eat("??") {
            items.push(self.or()?);
        }
        Ok(if items.len() == 1 {
            items.remove(0)
        } else {
            Expr::Fallback(items)
        })
    }

    fn binary_level(
        &mut self,
        ops: &[(&str, BinOp)],
        next: fn(&mut Self) -> Result<Expr, Error>,
    ) -> Result<Expr, Error> {
        let first = next(self)?;
        let mut rest = Vec::new();
        loop {
            let span = self.here();
            let Some(op) = ops.iter().find(|(p, _)| self.eat(p)).map(|(_, op)| *op) else {
                break;
            };
            rest.push((op, next(self)?, span));
        }
        Ok(if rest.is_empty() {
            first
        } else {
            Expr::Binary(Box::new(first), rest)
        })
    }

    fn or(&mut self) -> Result<Expr, Error> {
        self.binary_level(&[("||", BinOp::Or)], Self::and)
    }

    fn and(&mut self) -> Result<Expr, Error> {
        self.binary_level(&[("&&", BinOp::And)], Self::cmp)
    }

    fn cmp(&mut self) -> Result<Expr, Error> {
        let left = self.add()?;
        let span = self.here();
        let ops = [
            ("==", BinOp::Eq),
            ("!=", BinOp::Ne),
            ("<=", BinOp::Le),
            (">=", BinOp::Ge),
            ("<", BinOp::Lt),
            (">", BinOp::Gt),
        ];
        let op = match ops.iter().find(|(p, _)| self.eat(p)) {
            Some((_, op)) => *op,
            None if matches!(self.peek(), Some(Tok::Ident(w)) if w == "in") => {
                self.pos += 1;
                BinOp::In
            }
            None => return Ok(left),
        };
        let right = self.add()?;
        Ok(Expr::Binary(Box::new(left), vec![(op, right, span)]))
    }

    fn add(&mut self) -> Result<Expr, Error> {
        self.binary_level(&[("+", BinOp::Add), ("-", BinOp::Sub)], Self::mul)
    }

    fn mul(&mut self) -> Result<Expr, Error> {
        self.binary_level(
            &[("*", BinOp::Mul), ("/", BinOp::Div), ("%", BinOp::Rem)],
            Self::unary,
        )
    }

    fn unary(&mut self) -> Result<Expr, Error> {
        let span = self.here();
        for (p, op) in [("!", UnOp::Not), ("-", UnOp::Neg), ("+", UnOp::Plus)] {
            if self.eat(p) {
                let inner = self.nested(Self::unary)?;
                match (op, &inner) {
                    (UnOp::Neg, Expr::Literal(Value::Number(n))) => {
                        if let Some(v) = negate(n) {
                            return Ok(Expr::Literal(v));
                        }
                    }
                    (UnOp::Plus, Expr::Literal(Value::Number(_))) => return Ok(inner),
                    _ => {}
                }
                return Ok(Expr::Unary(op, Box::new(inner), span));
            }
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<Expr, Error> {
        let span = self.here();
        let Some(tok) = self.peek().cloned() else {
            return Err(self.err("expected a context path or a value", HINT));
        };
        self.pos += 1;
        match tok {
            Tok::Number(v) => Ok(Expr::Literal(v)),
            Tok::Str(s) => Ok(Expr::Literal(Value::String(s))),
            Tok::Ident(w) if w == "true" => Ok(Expr::Literal(Value::Bool(true))),
            Tok::Ident(w) if w == "false" => Ok(Expr::Literal(Value::Bool(false))),
            Tok::Ident(w) if w == "null" => Ok(Expr::Literal(Value::Null)),
            Tok::Ident(w) if self.eat("(") => self.call(&w, span),
            Tok::Ident(w) if w.starts_with(|c: char| c.is_ascii_lowercase() || c == '_') => {
                self.path(w).map(Expr::Path)
            }
            Tok::Punct("(") => {
                let inner = self.nested(Self::ternary)?;
                self.expect(")", "close the group with `)`")?;
                Ok(inner)
            }
            Tok::Punct("[") => self.nested(Self::list),
            Tok::Punct("{") => self.nested(Self::object),
            _ => {
                self.pos -= 1;
                Err(self.err(
                    "expected a context path or a value",
                    "paths start with a lower-case letter or `_` (`state.x`)",
                ))
            }
        }
    }

    fn list(&mut self) -> Result<Expr, Error> {
        let mut items = Vec::new();
        if !self.eat("]") {
            loop {
                items.push(self.ternary()?);
                if self.eat("]") {
                    break;
                }
                self.expect(",", "separate list items with `,`")?;
            }
        }
        Ok(Expr::List(items))
    }

    fn object(&mut self) -> Result<Expr, Error> {
        let mut entries = Vec::new();
        let mut seen = HashSet::new();
        if !self.eat("}") {
            loop {
                let key_span = self.here();
                let key = match self.peek().cloned() {
                    Some(Tok::Str(s)) | Some(Tok::Ident(s)) => {
                        self.pos += 1;
                        s
                    }
                    _ => return Err(self.err("expected an object key", "write {\"key\": value}")),
                };
                if !seen.insert(key.clone()) {
                    return Err(self.err_at(
                        key_span,
                        &format!("duplicate key `{key}` in an object literal"),
                        "each key may appear once in `{…}`",
                    ));
                }
                self.expect(":", "write {\"key\": value}")?;
                entries.push((key, self.ternary()?));
                if self.eat("}") {
                    break;
                }
                self.expect(",", "separate object entries with `,`")?;
            }
        }
        Ok(Expr::Object(entries))
    }

    fn call(&mut self, name: &str, span: Span) -> Result<Expr, Error> {
        let Some(func) = Func::from_name(name) else {
            let mut message = format!("unknown function `{name}`");
            match strata_spelling(name) {
                Some(Spelling::Func(f)) => {
                    message.push_str(&format!("; did you mean `{}`?", f.name()))
                }
                Some(Spelling::Fallback) => {
                    message.push_str("; did you mean the fallback `a ?? b`?")
                }
                None => {}
            }
            return Err(self.err_at(
                span,
                &message,
                &format!("the functions are {}", Func::names().join(", ")),
            ));
        };
        let mut args = Vec::new();
        if !self.eat(")") {
            loop {
                args.push(self.nested(Self::ternary)?);
                if self.eat(")") {
                    break;
                }
                self.expect(",", "separate arguments with `,`")?;
            }
        }
        func.check_arity(&args)
            .map_err(|m| self.err_at(span, &m, "see docs/layers.md"))?;
        if let (Func::Matches, Some(Expr::Literal(Value::String(pattern)))) = (func, args.get(1)) {
            crate::functions::compile_regex(pattern).map_err(|m| {
                Error::new(Layer::CONTEXT, ErrorKind::Invalid, m)
                    .with_span(Span::new(span.start, span.start + 1))
                    .with_hint(crate::functions::REGEX_HINT)
            })?;
        }
        Ok(Expr::Call(func, args, span))
    }

    fn index(&mut self) -> Option<i64> {
        let neg = self.eat("-");
        match self.peek() {
            Some(Tok::Number(Value::Number(n))) if n.is_i64() || n.is_u64() => {
                let n = n.as_i64()?;
                self.pos += 1;
                Some(if neg { -n } else { n })
            }
            _ => {
                if neg {
                    self.pos -= 1;
                }
                None
            }
        }
    }

    fn path(&mut self, first: String) -> Result<Path, Error> {
        let mut segs = vec![Seg::Key(first)];
        loop {
            if self.eat(".") {
                match self.peek().cloned() {
                    Some(Tok::Ident(k)) => {
                        self.pos += 1;
                        segs.push(Seg::Key(k));
                    }
                    _ => match self.index() {
                        Some(n) => segs.push(Seg::Index(n)),
                        None => {
                            return Err(self.err(
                                "expected a key or an index after `.`",
                                "write `a.b`, `a.0` or `a[\"b c\"]`",
                            ))
                        }
                    },
                }
            } else if self.eat("[") {
                let seg = match (self.index(), self.peek().cloned()) {
                    (Some(n), _) => Seg::Index(n),
                    (None, Some(Tok::Str(s))) => {
                        self.pos += 1;
                        Seg::Key(s)
                    }
                    _ => {
                        return Err(self.err(
                            "expected an index or a quoted key",
                            "write `[0]`, `[-1]` or `[\"key\"]`",
                        ))
                    }
                };
                self.expect("]", "close the index with `]`")?;
                segs.push(seg);
            } else {
                return Ok(Path { segs });
            }
        }
    }
}

/// `-n` of a number literal, folded when the template compiles. `-9223372036854775808`
/// (written as `-` and `2^63`, which only `u64` holds) is the integer `i64::MIN`, not a
/// float, so `-9223372036854775808 - 1` is the overflow error. (A literal beyond JSON's
/// integers, such as `-18446744073709551615`, stays a float, as JSON reads it.)
fn negate(n: &serde_json::Number) -> Option<Value> {
    if let Some(i) = n.as_i64() {
        return i.checked_neg().map(Value::from);
    }
    if n.as_u64() == Some(1 << 63) {
        return Some(Value::from(i64::MIN));
    }
    n.as_f64()
        .and_then(|f| serde_json::Number::from_f64(-f))
        .map(Value::Number)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn simple_paths_take_the_short_way() {
        let path = |src| simple_path(src).map(|p| p.display());
        assert_eq!(path("state.cart.name").as_deref(), Some("state.cart.name"));
        assert_eq!(path("_x.Y_2").as_deref(), Some("_x.Y_2"));
        assert_eq!(path("a.0[-1]['b c']").as_deref(), Some("a[0][-1][\"b c\"]"));
        assert_eq!(path("a.1.5.-1.0").as_deref(), Some("a[1][5][-1][0]"));
        for other in [
            "", "State.x", "true", "null.x", "a..b", "a.", " a", "a + b", "a.01", "a.1e3",
        ] {
            assert_eq!(path(other), None, "{other:?}");
        }
    }

    proptest! {
        /// Whatever the short way reads, the full parser reads the same.
        #[test]
        fn the_short_way_agrees_with_the_full_parser(
            src in prop_oneof![
                "[a-zA-Z_0-9.]{1,16}",
                "[a-z_][a-z0-9_.\\[\\]'\"-]{0,16}",
                "[a-z_][a-zA-Z0-9_]{0,5}(\\.[a-zA-Z_][a-zA-Z0-9_]{0,5}){0,4}",
                "[a-z_]{1,3}(\\.-?[0-9]{1,2}|\\[-?[0-9]\\]|\\.[a-z]){1,5}",
            ]
        ) {
            if let Some(path) = simple_path(&src) {
                prop_assert_eq!(parse_full(&src, 0).ok(), Some(Expr::Path(path)));
            }
        }
    }
}
