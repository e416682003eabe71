//! Where a template was written: a file of its own, or a string inside a YAML/JSON dict file,
//! and how a line and column inside the template map to the file.

use std::fmt;

use strata_core::Location;

/// Where a template (or component) is defined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// The file, relative to the project (`prompts/main/BrowseLink.j2`), or
    /// `<default template>` for the configured default template.
    pub file: String,
    /// 1-based line where the template's text starts.
    pub line: usize,
    /// 1-based column where the template's text starts.
    pub column: usize,
    layout: Layout,
}

/// How the template's text sits in its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// The whole file is the template.
    File,
    /// A flow scalar in a dict file; `quote` is 1 for a quoted one.
    Inline { quote: usize },
    /// A block scalar (`|` or `>`) in a dict file, its lines indented by `indent` columns.
    Block { indent: usize },
    /// Not in a file.
    Given,
}

impl Place {
    /// A template that is a whole file.
    pub(crate) fn file(file: &str) -> Place {
        Place {
            file: file.to_string(),
            line: 1,
            column: 1,
            layout: Layout::File,
        }
    }

    /// A template given in code, named `name`.
    pub(crate) fn given(name: &str) -> Place {
        Place {
            file: name.to_string(),
            line: 1,
            column: 1,
            layout: Layout::Given,
        }
    }

    /// A string value of a dict file whose value starts at `line`:`column` of `text`.
    pub(crate) fn in_dict(file: &str, text: &str, line: usize, column: usize) -> Place {
        let rest = text
            .lines()
            .nth(line.saturating_sub(1))
            .and_then(|l| l.get(l.char_indices().nth(column - 1).map_or(l.len(), |c| c.0)..))
            .unwrap_or("");
        let layout = match rest.chars().next() {
            Some('|' | '>') => {
                let body = text
                    .lines()
                    .enumerate()
                    .skip(line)
                    .find(|(_, l)| !l.trim().is_empty());
                if let Some((i, l)) = body {
                    return Place {
                        file: file.to_string(),
                        line: i + 1,
                        column: 1 + l.len() - l.trim_start().len(),
                        layout: Layout::Block {
                            indent: l.len() - l.trim_start().len(),
                        },
                    };
                }
                Layout::Block { indent: 0 }
            }
            Some('"' | '\'') => Layout::Inline { quote: 1 },
            _ if block_starts_at(text, line, column) => Layout::Block { indent: column - 1 },
            _ => Layout::Inline { quote: 0 },
        };
        Place {
            file: file.to_string(),
            line,
            column,
            layout,
        }
    }

    /// [`Place::in_dict`] with `starts`, the byte offset where each line of `text` starts:
    /// only the lines from the one before `line` are read, so placing every string of a big
    /// file costs time linear in the file.
    pub(crate) fn in_dict_indexed(
        file: &str,
        text: &str,
        starts: &[usize],
        line: usize,
        column: usize,
    ) -> Place {
        let from = line.saturating_sub(2);
        let offset = starts.get(from).copied().unwrap_or(text.len());
        let mut place = Place::in_dict(file, text.get(offset..).unwrap_or(""), line - from, column);
        place.line += from;
        place
    }

    /// True when the template is a file of its own.
    pub fn is_file(&self) -> bool {
        self.layout == Layout::File
    }

    /// The file position of line `line`, column `column` of the template's text.
    pub fn at(&self, line: usize, column: usize) -> Location {
        let (line, column) = match self.layout {
            Layout::File | Layout::Given => (line, column),
            Layout::Inline { quote } if line == 1 => (self.line, self.column + quote + column - 1),
            Layout::Inline { .. } => (self.line + line - 1, column),
            Layout::Block { indent } => (self.line + line - 1, indent + column),
        };
        Location {
            file: self.file.clone(),
            line,
            column,
        }
    }

    /// Where the template starts.
    pub fn start(&self) -> Location {
        self.at(1, 1)
    }
}

/// True when `line`:`column` starts the text of a block scalar: the previous line ends with
/// `|` or `>` (and chomping or indentation indicators), and only spaces come before it.
fn block_starts_at(text: &str, line: usize, column: usize) -> bool {
    let mut lines = text.lines().skip(line.saturating_sub(2));
    let (Some(prev), Some(this)) = (lines.next(), lines.next()) else {
        return false;
    };
    let indicator = prev
        .trim_end()
        .trim_end_matches(|c: char| c == '-' || c == '+' || c.is_ascii_digit());
    line > 1
        && (indicator.ends_with('|') || indicator.ends_with('>'))
        && this.chars().take(column - 1).all(|c| c == ' ')
}

/// `prompts/main/x.j2` for a file of its own, `prompts/t.yaml:3:12` inside a dict file.
impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.layout {
            Layout::File | Layout::Given => f.write_str(&self.file),
            _ => write!(f, "{}:{}:{}", self.file, self.line, self.column),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loc(line: usize, column: usize) -> Location {
        Location {
            file: "p.yaml".into(),
            line,
            column,
        }
    }

    #[test]
    fn positions_map_into_block_and_flow_scalars() {
        let text =
            "main:\n  a: \"x {{ y }}\"\n  b: |\n    one\n      {{ z }}\n  c: plain {{ w }}\n";
        let a = Place::in_dict("p.yaml", text, 2, 6);
        assert_eq!(a.at(1, 3), loc(2, 9));
        assert_eq!(a.to_string(), "p.yaml:2:6");
        let b = Place::in_dict("p.yaml", text, 3, 6);
        assert_eq!(b.start(), loc(4, 5));
        assert_eq!(b.at(2, 3), loc(5, 7));
        let c = Place::in_dict("p.yaml", text, 6, 6);
        assert_eq!(c.at(1, 7), loc(6, 12));
        assert_eq!(Place::file("p.j2").at(3, 4).line, 3);
    }
}
