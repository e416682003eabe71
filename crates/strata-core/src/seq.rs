use std::fmt;

use crate::{Error, RenderCx, Rendered, Text};

/// A byte range inside one authored string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Span {
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
}

impl Span {
    /// The range `start..end`.
    pub fn new(start: usize, end: usize) -> Span {
        Span { start, end }
    }
}

/// Something a placeholder refers to, for checks and dependency analysis.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    /// The layer of the placeholder.
    pub layer: crate::Layer,
    /// The variable, parameter or input name, or the context path in canonical form.
    pub name: String,
    /// What it names, parsed: one key for a variable, parameter or input; the whole path for
    /// a context path (`steps["later-step"].result` is `steps`, `later-step`, `result`).
    pub path: crate::walk::Path,
    /// Where the placeholder stands in its string.
    pub span: Span,
    /// True when the placeholder has a default or fallback, so a missing value is expected.
    pub optional: bool,
}

/// A run of authored text that no layer has claimed (yet).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lit {
    /// The characters.
    pub text: Box<str>,
    /// Byte offset of the first character in the original string (for spans).
    pub start: usize,
}

/// A copy of a placeholder behind a box: every [`Hole`] that is `Clone` has it.
pub trait CloneHole {
    /// A copy of the placeholder (a YAML alias repeats a compiled node).
    fn clone_box(&self) -> Box<dyn Hole>;
}

impl<H: Hole + Clone + 'static> CloneHole for H {
    fn clone_box(&self) -> Box<dyn Hole> {
        Box::new(self.clone())
    }
}

/// A placeholder installed by a layer's compile pass, rendered against a scope.
pub trait Hole: CloneHole + fmt::Debug + Send + Sync {
    /// The layer that installed the placeholder.
    fn layer(&self) -> crate::Layer;

    /// Where the placeholder stands in the original string.
    fn span(&self) -> Span;

    /// The authored sub-templates (operator words, defaults) that later layers also scan;
    /// none by default.
    fn words_mut(&mut self) -> &mut [Seq] {
        &mut []
    }

    /// The authored sub-templates, read-only; none by default.
    fn words(&self) -> &[Seq] {
        &[]
    }

    /// What the placeholder refers to (variables, parameters, paths, inputs).
    fn references(&self) -> Vec<Reference>;

    /// The parameter a `{name}` placeholder names (layer P's placeholders only).
    fn param_name(&self) -> Option<&str> {
        None
    }

    /// Renders the placeholder into running text.
    fn render_text(&self, cx: &mut RenderCx<'_, '_>, out: &mut Text) -> Result<(), Error>;

    /// Renders the placeholder when it is the whole string: the value keeps its type.
    /// The default renders text.
    fn render_whole<'t>(&self, cx: &mut RenderCx<'t, '_>) -> Result<Rendered<'t>, Error> {
        let mut out = Text::default();
        self.render_text(cx, &mut out)?;
        Ok(Rendered::Text(out))
    }
}

impl Clone for Box<dyn Hole> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

/// One piece of a compiled string.
#[derive(Debug, Clone)]
pub enum Part {
    /// Authored text no layer of the chain claimed.
    Lit(Lit),
    /// Constant data produced at compile time (the literal text of an escape).
    Data(Box<str>),
    /// A placeholder.
    Hole(Box<dyn Hole>),
}

/// A compiled string: its parts in order, and whether it is exactly one placeholder.
#[derive(Debug, Default, Clone)]
pub struct Seq {
    /// The parts in order.
    pub parts: Vec<Part>,
    /// True when the string is exactly one placeholder whose value keeps its type.
    pub whole: bool,
}

impl Seq {
    /// The uncompiled form of an authored string.
    pub fn authored(text: &str) -> Seq {
        Seq::at(text, 0)
    }

    /// An authored string that starts at byte `start` of its field.
    pub fn at(text: &str, start: usize) -> Seq {
        let parts = if text.is_empty() {
            Vec::new()
        } else {
            vec![Part::Lit(Lit {
                text: text.into(),
                start,
            })]
        };
        Seq {
            parts,
            whole: false,
        }
    }

    /// True when no part is a placeholder or escape: the string renders to itself.
    pub fn is_literal(&self) -> bool {
        self.parts.iter().all(|p| matches!(p, Part::Lit(_)))
    }

    /// Number of placeholders, counting those inside words.
    pub fn hole_count(&self) -> usize {
        let mut n = 0;
        for part in &self.parts {
            if let Part::Hole(h) = part {
                n += 1;
                for w in h.words() {
                    n += w.hole_count();
                }
            }
        }
        n
    }

    /// Appends what every placeholder (including those inside words) refers to.
    pub fn references(&self, out: &mut Vec<Reference>) {
        for part in &self.parts {
            if let Part::Hole(h) = part {
                out.extend(h.references());
                for word in h.words() {
                    word.references(out);
                }
            }
        }
    }

    /// Appends the parameters that `{name}` placeholders (including those inside words) name.
    pub fn param_names<'s>(&'s self, out: &mut Vec<&'s str>) {
        for part in &self.parts {
            if let Part::Hole(h) = part {
                out.extend(h.param_name());
                for word in h.words() {
                    word.param_names(out);
                }
            }
        }
    }

    /// Renders the string into running text.
    pub fn render_text(&self, cx: &mut RenderCx<'_, '_>, out: &mut Text) -> Result<(), Error> {
        for part in &self.parts {
            match part {
                Part::Lit(lit) => out.push(&lit.text, crate::Origin::Authored),
                Part::Data(d) => out.push(d, crate::Origin::Data),
                Part::Hole(h) => {
                    h.render_text(cx, out)?;
                    if out.text.len() > cx.limits.output_bytes_per_string {
                        cx.check_output(out.text.len(), h.layer(), h.span())?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Renders the string as a field value: typed when whole, text otherwise.
    pub fn render<'t>(&self, cx: &mut RenderCx<'t, '_>) -> Result<Rendered<'t>, Error> {
        if self.whole {
            if let [Part::Hole(h)] = self.parts.as_slice() {
                return h.render_whole(cx);
            }
        }
        let (bytes, marks) = self.size_hint();
        let mut out = Text::with_capacity(bytes, marks);
        self.render_text(cx, &mut out)?;
        Ok(Rendered::Text(out))
    }

    /// A guess at the rendered size, to allocate once: the fixed text plus some bytes per
    /// placeholder (generous in short strings, where slack is cheap and a second allocation is
    /// not; tight in long ones), and one mark per placeholder or escape (none reserved for a
    /// few placeholders, which fit inline or may render no data).
    fn size_hint(&self) -> (usize, usize) {
        const SHORT: usize = 4096;
        const FEW: usize = 8;
        let (fixed, holes, marks) =
            self.parts
                .iter()
                .fold((0, 0, 0), |(fixed, holes, marks), part| match part {
                    Part::Lit(lit) => (fixed + lit.text.len(), holes, marks),
                    Part::Data(d) => (fixed + d.len(), holes, marks + 1),
                    Part::Hole(_) => (fixed, holes + 1, marks + 1),
                });
        let per_hole = if fixed < SHORT { 48 } else { 16 };
        (
            fixed + holes * per_hole,
            if marks < FEW { 0 } else { marks },
        )
    }
}
