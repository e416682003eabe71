use smallvec::SmallVec;

use crate::Origin;

/// A run of a [`Text`] that did not come from authored text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mark {
    /// First byte of the run.
    pub start: usize,
    /// One past the last byte of the run.
    pub end: usize,
    /// [`Origin::Data`] or [`Origin::Secret`].
    pub origin: Origin,
}

/// Rendered text that remembers which bytes were substituted data and which were secret.
///
/// Bytes outside every [`Mark`] are authored. Marks are sorted and never overlap. The first
/// [`INLINE_MARKS`] marks live inside the value itself: most strings hold one substitution,
/// and then rendering them allocates only the text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Text {
    /// The text itself.
    pub text: String,
    /// The substituted runs, in order.
    pub marks: SmallVec<[Mark; INLINE_MARKS]>,
}

/// Marks a [`Text`] holds without allocating.
pub const INLINE_MARKS: usize = 1;

impl Text {
    /// An empty text with room for `bytes` bytes and `marks` marks.
    pub fn with_capacity(bytes: usize, marks: usize) -> Text {
        Text {
            text: String::with_capacity(bytes),
            marks: SmallVec::with_capacity(marks),
        }
    }

    /// Appends `s` with the given origin.
    pub fn push(&mut self, s: &str, origin: Origin) {
        let start = self.text.len();
        self.text.push_str(s);
        self.mark(start, origin);
    }

    /// Records that the bytes from `start` to the current end have `origin`.
    ///
    /// An empty run of data leaves no mark, but an empty secret does: it is shown as `***`
    /// like any other, so that what is printed never tells that a secret is empty.
    pub fn mark(&mut self, start: usize, origin: Origin) {
        let end = self.text.len();
        if origin == Origin::Authored || (start == end && origin != Origin::Secret) {
            return;
        }
        if let Some(last) = self.marks.last_mut() {
            if last.end == start && last.origin == origin {
                last.end = end;
                return;
            }
        }
        self.marks.push(Mark { start, end, origin });
    }

    /// Appends the text form of a value (see [`crate::push_value_text`]) with `origin`.
    pub fn push_value(&mut self, value: &serde_json::Value, origin: Origin) {
        let start = self.text.len();
        crate::push_value_text(value, &mut self.text);
        self.mark(start, origin);
    }

    /// Appends another text, keeping its marks.
    pub fn append(&mut self, other: &Text) {
        let base = self.text.len();
        let mut cursor = 0;
        for m in &other.marks {
            self.push(&other.text[cursor..m.start], Origin::Authored);
            self.push(&other.text[m.start..m.end], m.origin);
            cursor = m.end;
        }
        self.push(&other.text[cursor..], Origin::Authored);
        debug_assert_eq!(self.text.len(), base + other.text.len());
    }

    /// The strongest origin found in the text (secret > data > authored).
    pub fn origin(&self) -> Origin {
        self.marks
            .iter()
            .fold(Origin::Authored, |acc, m| acc.join(m.origin))
    }

    /// The text with every secret run replaced by `***`.
    pub fn redacted(&self) -> String {
        if !self.marks.iter().any(|m| m.origin == Origin::Secret) {
            return self.text.clone();
        }
        let mut out = String::with_capacity(self.text.len());
        let mut cursor = 0;
        for m in self.marks.iter().filter(|m| m.origin == Origin::Secret) {
            out.push_str(&self.text[cursor..m.start]);
            out.push_str("***");
            cursor = m.end;
        }
        out.push_str(&self.text[cursor..]);
        out
    }

    /// The text cut into runs of one origin each, in order, secrets shown as `***`.
    pub fn segments(&self) -> Vec<(Origin, String)> {
        let mut out = Vec::new();
        let mut cursor = 0;
        for m in &self.marks {
            if cursor < m.start {
                out.push((Origin::Authored, self.text[cursor..m.start].to_string()));
            }
            let shown = match m.origin {
                Origin::Secret => "***".to_string(),
                _ => self.text[m.start..m.end].to_string(),
            };
            out.push((m.origin, shown));
            cursor = m.end;
        }
        if cursor < self.text.len() {
            out.push((Origin::Authored, self.text[cursor..].to_string()));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_substitution_stays_inline_and_adjacent_runs_merge() {
        let mut t = Text::with_capacity(16, 0);
        t.push("a ", Origin::Authored);
        t.push("b", Origin::Data);
        t.push("c", Origin::Data);
        assert!(!t.marks.spilled());
        assert_eq!(
            t.marks.as_slice(),
            [Mark {
                start: 2,
                end: 4,
                origin: Origin::Data
            }]
        );
        t.push(" ", Origin::Authored);
        t.push("s", Origin::Secret);
        assert_eq!(t.redacted(), "a bc ***");
    }

    #[test]
    fn an_empty_secret_is_shown_as_stars() {
        let mut t = Text::default();
        t.push("[", Origin::Authored);
        t.push("", Origin::Secret);
        t.push("", Origin::Data);
        t.push("]", Origin::Authored);
        assert_eq!(t.redacted(), "[***]");
        assert_eq!(t.origin(), Origin::Secret);
        let mut copy = Text::default();
        copy.append(&t);
        assert_eq!(copy.redacted(), "[***]");
        assert_eq!(
            t.segments(),
            [
                (Origin::Authored, "[".to_string()),
                (Origin::Secret, "***".to_string()),
                (Origin::Authored, "]".to_string())
            ]
        );
    }
}
