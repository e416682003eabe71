use crate::{Error, ErrorKind, Hole, Layer, Limits, Lit, Part, Seq, Span};

/// What a compile pass knows besides the text: the limits and how deep in words it is.
#[derive(Debug, Clone, Copy)]
pub struct CompileCx<'a> {
    /// The limits in force.
    pub limits: &'a Limits,
    /// How many operator words or defaults enclose the text being compiled.
    pub depth: usize,
}

impl<'a> CompileCx<'a> {
    /// The context for a whole field value.
    pub(crate) fn new(limits: &'a Limits) -> CompileCx<'a> {
        CompileCx { limits, depth: 0 }
    }

    /// The context for a word nested one level deeper; an error past the depth limit.
    pub(crate) fn nested(&self, layer: Layer, span: Span) -> Result<CompileCx<'a>, Error> {
        if self.depth >= self.limits.default_depth {
            return Err(Error::new(
                layer,
                ErrorKind::Limit,
                format!(
                    "defaults are nested more than {} levels deep",
                    self.limits.default_depth
                ),
            )
            .with_span(span)
            .with_limit(
                "default_depth",
                self.limits.default_depth,
                "flatten the nesting, or",
            ));
        }
        Ok(CompileCx {
            limits: self.limits,
            depth: self.depth + 1,
        })
    }
}

/// A position inside a list of parts: a part index and a byte offset in that part's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pos {
    /// Index of the part.
    pub part: usize,
    /// Byte offset inside the part (only meaningful for [`Part::Lit`]).
    pub off: usize,
}

impl Pos {
    /// The position `n` bytes further in the same part.
    pub fn ahead(self, n: usize) -> Pos {
        Pos {
            part: self.part,
            off: self.off + n,
        }
    }
}

/// A placeholder (or escape) a layer recognised, and the position just after it.
#[derive(Debug)]
pub struct Found {
    /// What replaces the recognised text.
    pub part: Part,
    /// The position just after the recognised text.
    pub end: Pos,
}

impl Found {
    /// A placeholder that ends at `end`.
    pub fn hole(hole: impl Hole + 'static, end: Pos) -> Found {
        Found {
            part: Part::Hole(Box::new(hole)),
            end,
        }
    }

    /// Literal text (an escape's meaning) that ends at `end`.
    pub fn data(text: impl Into<Box<str>>, end: Pos) -> Found {
        Found {
            part: Part::Data(text.into()),
            end,
        }
    }

    /// `$${`, the escape of the `${` layers (E and C), when `at` holds it: the literal `${`.
    pub fn dollar_escape(bytes: &[u8], at: Pos) -> Option<Found> {
        bytes
            .starts_with(b"$${")
            .then(|| Found::data("${", at.ahead(3)))
    }
}

/// The authored run at `at` and its bytes from there, or `None` when the part there is not
/// one (a layer's syntax starts only in authored text).
pub fn lit_at(parts: &[Part], at: Pos) -> Option<(&Lit, &[u8])> {
    match &parts[at.part] {
        Part::Lit(lit) => Some((lit, &lit.text.as_bytes()[at.off..])),
        _ => None,
    }
}

/// One layer's syntax, as a compile pass needs it.
pub trait Syntax: Send + Sync {
    /// The layer, for errors.
    fn layer(&self) -> Layer;

    /// The bytes that can start this layer's syntax (give one twice if there is only one).
    fn openers(&self) -> (u8, u8);

    /// Whether a placeholder that is the whole string keeps its value's type.
    fn keeps_type(&self) -> bool;

    /// Tries to recognise this layer's syntax at `at`, which holds one of the openers.
    ///
    /// Returns `None` when the text there is not this layer's. May move parts after `at.part`
    /// out of `parts` (with [`take_word`]) when a word spans substituted values.
    fn parse(
        &self,
        parts: &mut [Part],
        at: Pos,
        cx: &CompileCx<'_>,
    ) -> Result<Option<Found>, Error>;
}

fn lit_text(part: &Part) -> Option<&str> {
    match part {
        Part::Lit(lit) => Some(&lit.text),
        _ => None,
    }
}

fn slice_lit(lit: &Lit, from: usize, to: usize) -> Option<Part> {
    (from < to).then(|| {
        Part::Lit(Lit {
            text: lit.text[from..to].into(),
            start: lit.start + from,
        })
    })
}

impl Seq {
    /// Compiles an authored string through the compile passes of `stages`, in order: each
    /// scans only the authored runs the earlier ones left (and the authored words of their
    /// placeholders), so text a stage substitutes is never scanned again.
    pub fn compile(text: &str, stages: &[&dyn Syntax], limits: &Limits) -> Result<Seq, Error> {
        let cx = CompileCx::new(limits);
        let mut seq = Seq::authored(text);
        for syntax in stages {
            seq = run_pass(seq, *syntax, &cx)?;
        }
        // Kept as long as its template: no room it will not use (a part is 32 bytes, and a
        // vector grown by pushing has room for at least four).
        seq.parts.shrink_to_fit();
        Ok(seq)
    }
}

/// A placeholder's authored word (an operator's word, a default), cut out of the string being
/// compiled and compiled by the placeholder's own layer. See [`take_word`].
#[derive(Debug)]
pub struct Word {
    /// The compiled word; later layers scan its authored runs too (see [`Hole::words_mut`]).
    pub seq: Seq,
    /// The whole placeholder: from its start up to and including the `}` that closes the word.
    pub span: Span,
    /// The position just after that `}`.
    pub end: Pos,
}

/// Cuts out the word that starts at `from` (just inside a `{` the placeholder opened) and ends
/// at the `}` that balances it, and compiles it with `syntax` one nesting level deeper than
/// `cx`. `start` is the byte offset of the placeholder in its field, for the word's span.
///
/// Only braces in authored runs count; values substituted by earlier layers are opaque and
/// move into the word whole. Returns `None`, leaving `parts` as they are, when no `}` closes
/// the word; an error when the nesting is past the depth limit or the word does not compile.
pub fn take_word(
    parts: &mut [Part],
    from: Pos,
    start: usize,
    syntax: &dyn Syntax,
    cx: &CompileCx<'_>,
) -> Result<Option<Word>, Error> {
    let Some(close) = balanced_close(parts, from) else {
        return Ok(None);
    };
    // `balanced_close` only stops in an authored run.
    let close_end = lit_start(&parts[close.part]) + close.off + 1;
    let span = Span::new(start, close_end);
    let word = take_range(parts, from, close);
    let seq = run_pass(word, syntax, &cx.nested(syntax.layer(), span)?)?;
    let end = Pos {
        part: close.part,
        off: close.off + 1,
    };
    Ok(Some(Word { seq, span, end }))
}

/// Runs one layer's compile pass over a compiled string: every authored run is scanned for
/// the layer's syntax; placeholders and escapes already installed are opaque, but their
/// authored words are scanned too.
pub(crate) fn run_pass(
    mut seq: Seq,
    syntax: &dyn Syntax,
    cx: &CompileCx<'_>,
) -> Result<Seq, Error> {
    for part in &mut seq.parts {
        if let Part::Hole(hole) = part {
            scan_words(hole.as_mut(), syntax, cx)?;
        }
    }
    let whole_candidate = !seq.whole && cx.depth == 0 && seq.parts.len() == 1;
    let (a, b) = syntax.openers();
    let mut parts = seq.parts;
    let mut out: Vec<Part> = Vec::with_capacity(parts.len());
    let mut holes = parts.iter().filter(|p| matches!(p, Part::Hole(_))).count();
    let mut whole = seq.whole;
    let (mut i, mut off, mut pending) = (0, 0, 0);
    while i < parts.len() {
        let Some(text) = lit_text(&parts[i]) else {
            out.push(std::mem::replace(&mut parts[i], Part::Data("".into())));
            (i, off, pending) = (i + 1, 0, 0);
            continue;
        };
        let len = text.len();
        let Some(c) = memchr::memchr2(a, b, &text.as_bytes()[off..]).map(|k| off + k) else {
            if pending == 0 && len > 0 {
                // The whole run stays as it is: move it rather than copy it.
                out.push(std::mem::replace(&mut parts[i], Part::Data("".into())));
            } else if let Part::Lit(lit) = &parts[i] {
                out.extend(slice_lit(lit, pending, len));
            }
            (i, off, pending) = (i + 1, 0, 0);
            continue;
        };
        let at = Pos { part: i, off: c };
        let Some(found) = syntax.parse(&mut parts, at, cx)? else {
            off = c + 1;
            continue;
        };
        if let Part::Lit(lit) = &parts[i] {
            out.extend(slice_lit(lit, pending, c));
        }
        if whole_candidate && c == 0 && found.end == (Pos { part: 0, off: len }) {
            whole = syntax.keeps_type() && matches!(found.part, Part::Hole(_));
        }
        if matches!(found.part, Part::Hole(_)) {
            holes += 1;
            if holes > cx.limits.placeholders_per_string {
                let start = lit_start(&parts[i]) + c;
                return Err(Error::new(
                    syntax.layer(),
                    ErrorKind::Limit,
                    format!(
                        "more than {} placeholders in one string",
                        cx.limits.placeholders_per_string
                    ),
                )
                .with_span(Span::new(start, start + 1))
                .with_limit(
                    "placeholders_per_string",
                    cx.limits.placeholders_per_string,
                    "split the string, or",
                ));
            }
        }
        out.push(found.part);
        i = found.end.part;
        off = found.end.off;
        pending = off;
    }
    Ok(Seq { parts: out, whole })
}

fn scan_words(hole: &mut dyn Hole, syntax: &dyn Syntax, cx: &CompileCx<'_>) -> Result<(), Error> {
    let span = hole.span();
    for word in hole.words_mut() {
        let inner = std::mem::take(word);
        *word = run_pass(inner, syntax, &cx.nested(syntax.layer(), span)?)?;
    }
    Ok(())
}

fn lit_start(part: &Part) -> usize {
    match part {
        Part::Lit(lit) => lit.start,
        _ => 0,
    }
}

/// Finds the `}` that closes a brace opened just before `from`, counting only braces in
/// authored runs (substituted values are opaque). Returns its position.
fn balanced_close(parts: &[Part], from: Pos) -> Option<Pos> {
    let mut depth = 1usize;
    let mut off = from.off;
    for (i, part) in parts.iter().enumerate().skip(from.part) {
        if let Some(text) = lit_text(part) {
            let bytes = text.as_bytes();
            let mut k = off;
            while let Some(rel) = memchr::memchr2(b'{', b'}', &bytes[k..]) {
                let j = k + rel;
                if bytes[j] == b'{' {
                    depth += 1;
                } else {
                    depth -= 1;
                    if depth == 0 {
                        return Some(Pos { part: i, off: j });
                    }
                }
                k = j + 1;
            }
        }
        off = 0;
    }
    None
}

/// Moves the parts from `from` to `to` (exclusive) out of `parts` into a new compiled string.
///
/// Authored runs at either end are copied; whole parts in between are moved, leaving empty
/// data in their place (the caller's pass skips them).
fn take_range(parts: &mut [Part], from: Pos, to: Pos) -> Seq {
    let mut out = Vec::new();
    if from.part == to.part {
        if let Part::Lit(lit) = &parts[from.part] {
            out.extend(slice_lit(lit, from.off, to.off));
        }
    } else {
        if let Part::Lit(lit) = &parts[from.part] {
            out.extend(slice_lit(lit, from.off, lit.text.len()));
        }
        for part in &mut parts[from.part + 1..to.part] {
            out.push(std::mem::replace(part, Part::Data("".into())));
        }
        if let Part::Lit(lit) = &parts[to.part] {
            out.extend(slice_lit(lit, 0, to.off));
        }
    }
    Seq {
        parts: out,
        whole: false,
    }
}
