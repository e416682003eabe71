//! Argo's `depends` expressions (`A && (B.Succeeded || C.Failed)`, `!D.Skipped`): parsed to
//! the task names they use, or a syntax error at its byte offset.

/// The results a task may be tested for (`A.Succeeded`).
pub const RESULTS: [&str; 8] = [
    "Succeeded",
    "Failed",
    "Errored",
    "Skipped",
    "Omitted",
    "Daemoned",
    "AnySucceeded",
    "AllFailed",
];

/// A syntax error: what is wrong, at which byte.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    /// What is wrong.
    pub message: String,
    /// The byte offset in the expression.
    pub at: usize,
}

struct Parser<'a> {
    text: &'a str,
    at: usize,
    names: Vec<(String, usize)>,
}

fn task_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-' || b == b'_'
}

impl Parser<'_> {
    fn skip_space(&mut self) {
        while self
            .text
            .as_bytes()
            .get(self.at)
            .is_some_and(u8::is_ascii_whitespace)
        {
            self.at += 1;
        }
    }

    fn eat(&mut self, token: &str) -> bool {
        self.skip_space();
        if self.text[self.at..].starts_with(token) {
            self.at += token.len();
            true
        } else {
            false
        }
    }

    fn fail<T>(&self, message: impl Into<String>) -> Result<T, SyntaxError> {
        Err(SyntaxError {
            message: message.into(),
            at: self.at,
        })
    }

    fn or(&mut self) -> Result<(), SyntaxError> {
        self.and()?;
        while self.eat("||") {
            self.and()?;
        }
        Ok(())
    }

    fn and(&mut self) -> Result<(), SyntaxError> {
        self.unary()?;
        while self.eat("&&") {
            self.unary()?;
        }
        Ok(())
    }

    fn unary(&mut self) -> Result<(), SyntaxError> {
        if self.eat("!") {
            return self.unary();
        }
        if self.eat("(") {
            self.or()?;
            if !self.eat(")") {
                return self.fail("expected `)`");
            }
            return Ok(());
        }
        self.operand()
    }

    fn operand(&mut self) -> Result<(), SyntaxError> {
        self.skip_space();
        let start = self.at;
        let bytes = self.text.as_bytes();
        while bytes.get(self.at).copied().is_some_and(task_char) {
            self.at += 1;
        }
        if self.at == start {
            return match self.text[self.at..].chars().next() {
                None => self.fail("expected a task name, found the end"),
                Some(c) => self.fail(format!("expected a task name, found {c:?}")),
            };
        }
        self.names
            .push((self.text[start..self.at].to_string(), start));
        if bytes.get(self.at) == Some(&b'.') {
            self.at += 1;
            let rs = self.at;
            while bytes.get(self.at).is_some_and(u8::is_ascii_alphabetic) {
                self.at += 1;
            }
            let result = &self.text[rs..self.at];
            if !RESULTS.contains(&result) {
                self.at = rs;
                return self.fail(format!(
                    "`{result}` is not a task result; the results are {}",
                    RESULTS.join(", ")
                ));
            }
        }
        Ok(())
    }
}

/// The task names `expr` uses, each with its byte offset, in order.
pub fn parse(expr: &str) -> Result<Vec<(String, usize)>, SyntaxError> {
    let mut p = Parser {
        text: expr,
        at: 0,
        names: Vec::new(),
    };
    p.or()?;
    p.skip_space();
    if p.at < expr.len() {
        return p.fail(format!(
            "unexpected {:?}",
            expr[p.at..].chars().next().unwrap_or(' ')
        ));
    }
    Ok(p.names)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(expr: &str) -> Vec<String> {
        parse(expr).unwrap().into_iter().map(|(n, _)| n).collect()
    }

    #[test]
    fn names_in_expressions() {
        assert_eq!(names("A"), ["A"]);
        assert_eq!(names("A && (C.Succeeded || C.Failed)"), ["A", "C", "C"]);
        assert_eq!(
            names("should-execute-2.Succeeded || should-not-execute"),
            ["should-execute-2", "should-not-execute"]
        );
        assert_eq!(names("!B.Skipped&&c"), ["B", "c"]);
    }

    #[test]
    fn syntax_errors_say_where() {
        let e = parse("A &&").unwrap_err();
        assert_eq!(
            (e.message.as_str(), e.at),
            ("expected a task name, found the end", 4)
        );
        let e = parse("A.Done").unwrap_err();
        assert_eq!(e.at, 2);
        assert!(e.message.starts_with("`Done` is not a task result"));
        assert_eq!(parse("(A").unwrap_err().message, "expected `)`");
        assert_eq!(parse("A B").unwrap_err().message, "unexpected 'B'");
    }
}
