use strata_core::{Error, ErrorKind, Layer, Location};

/// A directive file cut into its front matter and its Markdown body.
#[derive(Debug, Clone)]
pub struct Source {
    /// The file name as shown in errors.
    pub name: String,
    /// The front matter, preceded by one empty line so YAML line numbers are file line numbers.
    pub front: String,
    /// The Markdown body (the prompt).
    pub body: String,
    /// The 1-based file line where the body starts.
    pub body_line: usize,
    /// Where the body's lines start, found when first needed.
    body_lines: std::sync::OnceLock<strata_doc::Lines>,
}

fn at(name: &str, line: usize, column: usize, message: &str, hint: &str) -> Error {
    Error::new(Layer::REQUEST, ErrorKind::Syntax, message)
        .with_hint(hint)
        .at_location(Location {
            file: name.to_string(),
            line,
            column,
        })
}

impl Source {
    /// Splits `text`: a first line `---`, the YAML front matter, a line `---`, the body.
    pub fn split(name: &str, text: &str) -> Result<Source, Error> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let mut lines = text.split_inclusive('\n');
        let first = lines.next().unwrap_or("");
        if first.trim_end() != "---" {
            return Err(at(
                name,
                1,
                1,
                "a directive starts with YAML front matter between `---` lines",
                "put `---` on the first line, the front matter, then `---`",
            ));
        }
        let mut front = String::from("\n");
        let mut offset = first.len();
        for (i, line) in lines.enumerate() {
            offset += line.len();
            if line.trim_end() == "---" {
                return Ok(Source {
                    name: name.to_string(),
                    front,
                    body: text[offset..].to_string(),
                    body_line: i + 3,
                    body_lines: std::sync::OnceLock::new(),
                });
            }
            front.push_str(line);
        }
        Err(at(
            name,
            1,
            1,
            "the front matter is not closed by a `---` line",
            "end the front matter with a line holding only `---`",
        ))
    }

    /// The file location of byte `offset` of the body.
    pub fn body_location(&self, offset: usize) -> Location {
        let lines = self
            .body_lines
            .get_or_init(|| strata_doc::Lines::of(&self.body));
        let (line, column) = lines.position(&self.body, offset);
        Location {
            file: self.name.clone(),
            line: self.body_line + line - 1,
            column,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_front_matter_and_body_keeping_line_numbers() {
        let s = Source::split("d.md", "---\nname: x\n---\nHello\n{input:a}\n").unwrap();
        assert_eq!(s.front, "\nname: x\n");
        assert_eq!(s.body, "Hello\n{input:a}\n");
        assert_eq!(s.body_line, 4);
        let loc = s.body_location(6);
        assert_eq!((loc.line, loc.column), (5, 1));
    }

    #[test]
    fn rejects_missing_or_unclosed_front_matter() {
        let e = Source::split("d.md", "# title\n").unwrap_err();
        assert_eq!(
            e.message(),
            "a directive starts with YAML front matter between `---` lines"
        );
        let e = Source::split("d.md", "---\nname: x\n").unwrap_err();
        assert_eq!(
            e.message(),
            "the front matter is not closed by a `---` line"
        );
    }
}
