//! The fast path of `strata plan resolve --batch`: a well-formed request whose steps all
//! resolve is answered without building JSON values. Its fields, results and values are read
//! borrowed from the line ([`Raw`]: strings point into the line, maps are lists kept in
//! order), the plan's constant parts of the reply (levels, each step's id and dependencies,
//! each step's arguments around their holes) are written once per plan ([`FastPlan`]), and the
//! reply is written straight into the output from the resolution.
//!
//! Anything to report — a line that is not a request, an unknown step, a path that does not
//! resolve, a limit passed, a duplicate key, deep nesting — is not handled here: the caller
//! then answers the line the general way, so that every reply is exactly the one of the line
//! answered alone.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Number, Value};
use strata_core::walk::Seg;
use strata_core::ErrorKind;
use strata_doc::has_duplicates;

use crate::compile::{Fill, Hole, Part};
use crate::plan::Plan;
use crate::state::{skip_reason, State};
use crate::syntax::Target;

/// The deepest nesting read here (the general path reads the line whole, whose parser stops
/// at 128 levels; anything deeper than this goes there).
const MAX_DEPTH: usize = 100;

/// A JSON value read from the request line: strings borrowed where they have no escapes,
/// maps as their entries in order (a map with a duplicate key is not read).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Raw<'a> {
    Null,
    Bool(bool),
    /// An integer that fits an `i64`, held as one (no number is built for it).
    Int(i64),
    /// An integer past `i64::MAX` that fits a `u64`, held as one.
    UInt(u64),
    /// Any other number, in the readers' one form.
    Num(Number),
    Str(Cow<'a, str>),
    Arr(Vec<Raw<'a>>),
    Obj(Vec<(Cow<'a, str>, Raw<'a>)>),
}

impl<'a> Raw<'a> {
    /// Reads `text` (one JSON value).
    pub(crate) fn parse(text: &'a str) -> Option<Raw<'a>> {
        let mut de = serde_json::Deserializer::from_str(text);
        let raw = Seed { depth: 0 }.deserialize(&mut de).ok()?;
        de.end().ok()?;
        Some(raw)
    }

    fn get(&self, key: &str) -> Option<&Raw<'a>> {
        match self {
            Raw::Obj(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
}

#[derive(Clone, Copy)]
struct Seed {
    depth: usize,
}

impl<'de> DeserializeSeed<'de> for Seed {
    type Value = Raw<'de>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Raw<'de>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Seed {
    type Value = Raw<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, b: bool) -> Result<Raw<'de>, E> {
        Ok(Raw::Bool(b))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Raw<'de>, E> {
        Ok(Raw::Int(n))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Raw<'de>, E> {
        Ok(i64::try_from(n).map_or(Raw::UInt(n), Raw::Int))
    }
    fn visit_f64<E>(self, f: f64) -> Result<Raw<'de>, E> {
        Ok(Number::from_f64(f).map_or(Raw::Null, Raw::Num))
    }
    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Raw<'de>, E> {
        Ok(Raw::Str(Cow::Borrowed(s)))
    }
    fn visit_str<E>(self, s: &str) -> Result<Raw<'de>, E> {
        Ok(Raw::Str(Cow::Owned(s.to_owned())))
    }
    fn visit_string<E>(self, s: String) -> Result<Raw<'de>, E> {
        Ok(Raw::Str(Cow::Owned(s)))
    }
    fn visit_unit<E>(self) -> Result<Raw<'de>, E> {
        Ok(Raw::Null)
    }
    fn visit_none<E>(self) -> Result<Raw<'de>, E> {
        Ok(Raw::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Raw<'de>, A::Error> {
        let inner = self.deeper::<A::Error>()?;
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(inner)? {
            items.push(item);
        }
        Ok(Raw::Arr(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Raw<'de>, A::Error> {
        let inner = self.deeper::<A::Error>()?;
        let mut entries = Vec::new();
        while let Some(k) = map.next_key_seed(Key)? {
            // A number handed over as its text (a float, an integer past 64 bits), in the
            // form the line read whole gives it (strata_doc::json_value).
            if entries.is_empty() && k == strata_core::NUMBER_TOKEN {
                let text: Cow<'de, str> = map.next_value_seed(Key)?;
                return strata_core::number_from_text(&text)
                    .map(Raw::Num)
                    .ok_or_else(|| de::Error::custom("number out of range"));
            }
            let v = map.next_value_seed(inner)?;
            entries.push((k, v));
        }
        if has_duplicates(entries.iter().map(|(k, _)| k.as_ref())) {
            return Err(de::Error::custom("duplicate key"));
        }
        Ok(Raw::Obj(entries))
    }
}

impl Seed {
    fn deeper<E: de::Error>(self) -> Result<Seed, E> {
        if self.depth >= MAX_DEPTH {
            return Err(E::custom("nested too deep"));
        }
        Ok(Seed {
            depth: self.depth + 1,
        })
    }
}

/// A map key or string, borrowed where it has no escapes.
struct Key;

impl<'de> DeserializeSeed<'de> for Key {
    type Value = Cow<'de, str>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Cow<'de, str>, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Key {
    type Value = Cow<'de, str>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Borrowed(s))
    }
    fn visit_str<E>(self, s: &str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(s.to_owned()))
    }
    fn visit_string<E>(self, s: String) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(s))
    }
}

/// The fields of a request, each written once, no other key: the plan as written, the
/// others read.
#[derive(Default)]
pub(crate) struct Fields<'a> {
    pub(crate) id: Option<Raw<'a>>,
    pub(crate) plan: Option<&'a str>,
    pub(crate) results: Option<Raw<'a>>,
    pub(crate) failed: Option<Raw<'a>>,
    pub(crate) values: Option<Raw<'a>>,
}

/// The index of the first byte from `i` on that is not JSON whitespace.
fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// A value read at the top of a field: [`Raw`] nested from depth 0.
struct Top<'a>(Raw<'a>);

impl<'de> de::Deserialize<'de> for Top<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Seed { depth: 0 }.deserialize(d).map(Top)
    }
}

/// The JSON value `rest` starts with, and the bytes it takes.
fn value_at<'a, T: de::Deserialize<'a>>(rest: &'a str) -> Option<(T, usize)> {
    let mut values = serde_json::Deserializer::from_str(rest).into_iter::<T>();
    let value = values.next()?.ok()?;
    Some((value, values.byte_offset()))
}

impl<'a> Fields<'a> {
    /// Reads a request line's fields; `None` for anything else (not an object, a key that
    /// is not one of the five as written plainly, a key repeated, a value this path does
    /// not read, trailing text). A plan written as `plan` (the last one, known to be a
    /// list or a map) is recognised by its text, not read again.
    pub(crate) fn parse(line: &'a str, plan: Option<&str>) -> Option<Fields<'a>> {
        let b = line.as_bytes();
        let mut fields = Fields::default();
        let mut i = skip_ws(b, 0);
        if b.get(i) != Some(&b'{') {
            return None;
        }
        i = skip_ws(b, i + 1);
        if b.get(i) == Some(&b'}') {
            i += 1;
        } else {
            loop {
                if b.get(i) != Some(&b'"') {
                    return None;
                }
                let start = i + 1;
                let end = start + memchr::memchr2(b'"', b'\\', &b[start..])?;
                if b[end] != b'"' {
                    return None;
                }
                let key = &line[start..end];
                i = skip_ws(b, end + 1);
                if b.get(i) != Some(&b':') {
                    return None;
                }
                i = skip_ws(b, i + 1);
                let rest = &line[i..];
                let used = if key == "plan" {
                    if fields.plan.is_some() {
                        return None;
                    }
                    let (text, used) = match plan {
                        Some(p) if rest.starts_with(p) => (&rest[..p.len()], p.len()),
                        _ => {
                            let (raw, used) = value_at::<&RawValue>(rest)?;
                            (raw.get(), used)
                        }
                    };
                    fields.plan = Some(text);
                    used
                } else {
                    let slot = match key {
                        "id" => &mut fields.id,
                        "results" => &mut fields.results,
                        "failed" => &mut fields.failed,
                        "values" => &mut fields.values,
                        _ => return None,
                    };
                    if slot.is_some() {
                        return None;
                    }
                    let (Top(value), used) = value_at::<Top<'a>>(rest)?;
                    *slot = Some(value);
                    used
                };
                i = skip_ws(b, i + used);
                match b.get(i) {
                    Some(b',') => i = skip_ws(b, i + 1),
                    Some(b'}') => {
                        i += 1;
                        break;
                    }
                    _ => return None,
                }
            }
        }
        (skip_ws(b, i) == b.len()).then_some(fields)
    }
}

/// The text rule of strata (`strata_core::push_value_text`) applies to a value read here as
/// to the JSON value it stands for.
impl strata_core::AsText for Raw<'_> {
    fn text_form(&self) -> strata_core::TextForm<'_> {
        use strata_core::TextForm;
        match self {
            Raw::Str(s) => TextForm::Str(s),
            Raw::Null => TextForm::Null,
            Raw::Bool(b) => TextForm::Bool(*b),
            // Read in the readers' one form (`number_from_text`, or an integer or a
            // finite float serde_json parsed).
            Raw::Num(n) => TextForm::NumberText(n.as_str()),
            Raw::Int(n) => TextForm::Integer((*n).into()),
            Raw::UInt(n) => TextForm::Integer((*n).into()),
            Raw::Arr(_) | Raw::Obj(_) => TextForm::Json,
        }
    }
}

impl serde::Serialize for Raw<'_> {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        match self {
            Raw::Null => ser.serialize_unit(),
            Raw::Bool(b) => ser.serialize_bool(*b),
            Raw::Num(n) => n.serialize(ser),
            Raw::Int(n) => ser.serialize_i64(*n),
            Raw::UInt(n) => ser.serialize_u64(*n),
            Raw::Str(s) => ser.serialize_str(s),
            Raw::Arr(items) => {
                let mut seq = ser.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Raw::Obj(entries) => {
                let mut map = ser.serialize_map(Some(entries.len()))?;
                for (k, v) in entries {
                    map.serialize_entry(k.as_ref(), v)?;
                }
                map.end()
            }
        }
    }
}

/// True when the references of step `s` yield no more than the output limits allow, each
/// counted as the general path counts it before copying it (so that nothing past the
/// limits is ever written).
fn within_limits(fast: &FastPlan, look: &Lookup<'_, '_, '_>, s: usize) -> Option<()> {
    let limits = &look.plan.limits;
    let mut total = 0usize;
    for hole in &look.plan.steps[s].args.holes {
        match &hole.fill {
            Fill::Ref(r) => {
                let budget = limits.output_bytes_per_config.saturating_sub(total);
                total += look.with(s, *r, &fast.ref_steps, |v| {
                    strata_core::value_text_len(v, budget)
                })??;
            }
            Fill::Text(parts) => {
                let mut len = 0usize;
                for p in parts {
                    match p {
                        Part::Lit(t) => len += t.len(),
                        Part::Ref(r) => {
                            let config_left = limits.output_bytes_per_config.saturating_sub(total);
                            let string_left = limits.output_bytes_per_string.saturating_sub(len);
                            let budget = config_left.min(string_left);
                            let n = look.with(s, *r, &fast.ref_steps, |v| {
                                strata_core::value_text_len(v, budget)
                            })??;
                            len += n;
                            total += n;
                        }
                    }
                }
            }
        }
    }
    Some(())
}

/// Appends `s` as a JSON string.
fn push_str(out: &mut Vec<u8>, s: &str) {
    // Writing into a `Vec` cannot fail.
    let _ = serde_json::to_writer(&mut *out, s);
}

/// Appends `v` as compact JSON, as `serde_json` writes the value it reads from the same
/// text.
pub(crate) fn push_raw(out: &mut Vec<u8>, v: &Raw<'_>) {
    // Writing into a `Vec` cannot fail.
    let _ = serde_json::to_writer(&mut *out, v);
}

/// What the reply says of a plan whatever the request: written once per plan.
#[derive(Debug, Clone)]
pub(crate) struct FastPlan {
    /// The levels (step indexes).
    levels: Vec<Vec<usize>>,
    /// `"levels":[…],"steps":[` as JSON.
    head: Vec<u8>,
    /// Per step: `{"id":…,"depends_on":[…],"state":"`.
    step_heads: Vec<Vec<u8>>,
    /// Per step: the user values used, in order of first use.
    value_names: Vec<Vec<String>>,
    /// Per step: its arguments written around their holes (one more piece than holes).
    pieces: Vec<Vec<Vec<u8>>>,
    /// Per step and reference: the index of the step it reads, when it reads one.
    ref_steps: Vec<Vec<Option<usize>>>,
}

/// Writes `v` (a skeleton) as compact JSON, cutting a new piece at each hole.
fn cut(
    v: &Value,
    at: &mut Vec<usize>,
    holes: &[Hole],
    next: &mut usize,
    pieces: &mut Vec<Vec<u8>>,
) {
    let inside = holes
        .get(*next)
        .is_some_and(|h| h.at.starts_with(at.as_slice()));
    let last = pieces.len() - 1;
    if !inside {
        let _ = serde_json::to_writer(&mut pieces[last], v);
        return;
    }
    if holes[*next].at == *at {
        *next += 1;
        pieces.push(Vec::new());
        return;
    }
    /// The entries of a collection: its brackets, and each item with its key (maps).
    type Entries<'v> = Box<dyn Iterator<Item = (Option<&'v str>, &'v Value)> + 'v>;
    let (open, close, entries): (u8, u8, Entries<'_>) = match v {
        Value::Array(items) => (b'[', b']', Box::new(items.iter().map(|item| (None, item)))),
        Value::Object(map) => (
            b'{',
            b'}',
            Box::new(map.iter().map(|(k, item)| (Some(k.as_str()), item))),
        ),
        // A hole is never inside a scalar.
        _ => {
            let _ = serde_json::to_writer(&mut pieces[last], v);
            return;
        }
    };
    pieces[last].push(open);
    for (i, (key, item)) in entries.enumerate() {
        let last = pieces.len() - 1;
        if i > 0 {
            pieces[last].push(b',');
        }
        if let Some(key) = key {
            push_str(&mut pieces[last], key);
            pieces[last].push(b':');
        }
        at.push(i);
        cut(item, at, holes, next, pieces);
        at.pop();
    }
    let last = pieces.len() - 1;
    pieces[last].push(close);
}

impl FastPlan {
    /// The constant parts of `plan`'s replies.
    pub(crate) fn new(plan: &Plan) -> FastPlan {
        let levels = plan.levels();
        let mut head = b"\"levels\":".to_vec();
        let ids: Vec<Vec<&str>> = levels
            .iter()
            .map(|l| l.iter().map(|&i| plan.steps[i].id.as_str()).collect())
            .collect();
        let _ = serde_json::to_writer(&mut head, &ids);
        head.extend_from_slice(b",\"steps\":[");
        let mut step_heads = Vec::with_capacity(plan.steps.len());
        let mut value_names = Vec::with_capacity(plan.steps.len());
        let mut pieces = Vec::with_capacity(plan.steps.len());
        let mut ref_steps = Vec::with_capacity(plan.steps.len());
        for (i, step) in plan.steps.iter().enumerate() {
            let mut h = b"{\"id\":".to_vec();
            push_str(&mut h, &step.id);
            h.extend_from_slice(b",\"depends_on\":");
            let deps: Vec<&str> = plan.deps[i]
                .iter()
                .map(|&d| plan.steps[d].id.as_str())
                .collect();
            let _ = serde_json::to_writer(&mut h, &deps);
            h.extend_from_slice(b",\"state\":\"");
            step_heads.push(h);
            value_names.push(
                step.args
                    .value_names()
                    .into_iter()
                    .map(str::to_string)
                    .collect(),
            );
            let mut p = vec![Vec::new()];
            let mut next = 0;
            cut(
                &step.args.skeleton,
                &mut Vec::new(),
                &step.args.holes,
                &mut next,
                &mut p,
            );
            pieces.push(p);
            ref_steps.push(
                step.args
                    .refs
                    .iter()
                    .map(|site| match &site.r.target {
                        Target::Step { id, .. } => plan.find(id),
                        Target::Value(_) => None,
                    })
                    .collect(),
            );
        }
        FastPlan {
            levels,
            head,
            step_heads,
            value_names,
            pieces,
            ref_steps,
        }
    }
}

/// What the request says of a step.
#[derive(Clone, Copy)]
enum Rec<'r, 'a> {
    Completed(&'r Raw<'a>),
    Failed,
}

/// Buffers kept across requests.
#[derive(Default)]
pub(crate) struct Scratch {
    /// The resolved arguments of the ready steps, one after another.
    args: Vec<u8>,
    /// The text of the string being filled in.
    text: String,
}

/// One step from `v` (as `strata_core::walk::step`).
fn step<'r, 'a>(v: &'r Raw<'a>, seg: &Seg) -> Option<&'r Raw<'a>> {
    match (v, seg) {
        (Raw::Obj(entries), Seg::Key(k)) => {
            entries.iter().find(|(key, _)| key == k).map(|(_, v)| v)
        }
        (Raw::Obj(entries), Seg::Index(n)) => {
            let k = n.to_string();
            entries.iter().find(|(key, _)| *key == k).map(|(_, v)| v)
        }
        (Raw::Arr(items), Seg::Index(n)) => index(items, *n),
        (Raw::Arr(items), Seg::Key(k)) => k.parse().ok().and_then(|n| index(items, n)),
        _ => None,
    }
}

fn index<'r, 'a>(items: &'r [Raw<'a>], n: i64) -> Option<&'r Raw<'a>> {
    let i = if n < 0 { items.len() as i64 + n } else { n };
    usize::try_from(i).ok().and_then(|i| items.get(i))
}

/// The request's view of one step's resolution.
struct Lookup<'x, 'r, 'a> {
    plan: &'x Plan,
    recs: &'x [Option<Rec<'r, 'a>>],
    values: Option<&'x Raw<'a>>,
}

impl<'a> Lookup<'_, '_, 'a> {
    /// Reference `r` of step `s` walked, passed to `use_value`; `None` when it does not
    /// resolve.
    fn with<T>(
        &self,
        s: usize,
        r: usize,
        ref_steps: &[Vec<Option<usize>>],
        use_value: impl FnOnce(&Raw<'_>) -> T,
    ) -> Option<T> {
        let site = &self.plan.steps[s].args.refs[r];
        match &site.r.target {
            Target::Value(name) => self.values?.get(name).map(use_value),
            Target::Step { path, .. } => {
                let d = ref_steps[s][r]?;
                let rec = self.recs[d]?;
                let (Seg::Key(name), rest) = path.segs.split_first()? else {
                    return None;
                };
                let null = Raw::Null;
                let own;
                let root: &Raw<'_> = match (name.as_str(), rec) {
                    ("result", Rec::Completed(v)) => v,
                    ("result" | "run" | "error", _) => &null,
                    ("id", _) => {
                        own = Raw::Str(Cow::Borrowed(self.plan.steps[d].id.as_str()));
                        &own
                    }
                    ("status", Rec::Completed(_)) => {
                        own = Raw::Str(Cow::Borrowed("completed"));
                        &own
                    }
                    ("status", Rec::Failed) => {
                        own = Raw::Str(Cow::Borrowed("failed"));
                        &own
                    }
                    _ => return None,
                };
                let mut cur = root;
                for seg in rest {
                    cur = step(cur, seg)?;
                }
                Some(use_value(cur))
            }
        }
    }
}

/// Writes the resolved arguments of step `s` into `scratch.args`; `None` when they do not
/// resolve to a map within the plan's limits.
fn resolve_into(
    fast: &FastPlan,
    look: &Lookup<'_, '_, '_>,
    s: usize,
    scratch: &mut Scratch,
) -> Option<()> {
    within_limits(fast, look, s)?;
    let step = &look.plan.steps[s];
    let pieces = &fast.pieces[s];
    let Scratch { args, text } = scratch;
    args.extend_from_slice(&pieces[0]);
    for (hole, piece) in step.args.holes.iter().zip(&pieces[1..]) {
        match &hole.fill {
            Fill::Ref(r) => look.with(s, *r, &fast.ref_steps, |v| {
                if hole.at.is_empty() && !matches!(v, Raw::Obj(_)) {
                    return None;
                }
                push_raw(args, v);
                Some(())
            })??,
            Fill::Text(parts) => {
                text.clear();
                for p in parts {
                    match p {
                        Part::Lit(t) => text.push_str(t),
                        Part::Ref(r) => look.with(s, *r, &fast.ref_steps, |v| {
                            strata_core::push_value_text(v, text)
                        })?,
                    }
                }
                push_str(args, text);
            }
        }
        args.extend_from_slice(piece);
    }
    Some(())
}

/// Where a step stands, and what the reply says of it.
#[derive(Clone)]
enum Said {
    Done(State),
    Skipped(usize, State),
    Waiting,
    Blocked,
    Ready(usize, usize),
}

impl Said {
    fn state(&self) -> State {
        match self {
            Said::Done(s) => *s,
            Said::Skipped(..) => State::Skipped,
            Said::Waiting => State::Waiting,
            Said::Blocked => State::Blocked,
            Said::Ready(..) => State::Ready,
        }
    }
}

/// Writes the reply to a request whose plan is `plan` (with `fast` its constant parts) into
/// `out` (ending in a newline); `None`, with `out` as it was, when the request is not one
/// this path answers.
pub(crate) fn answer(
    plan: &Plan,
    fast: &FastPlan,
    fields: &Fields<'_>,
    scratch: &mut Scratch,
    out: &mut Vec<u8>,
) -> Option<()> {
    let start = out.len();
    let done = write_reply(plan, fast, fields, scratch, out);
    if done.is_none() {
        out.truncate(start);
    }
    done
}

fn write_reply(
    plan: &Plan,
    fast: &FastPlan,
    fields: &Fields<'_>,
    scratch: &mut Scratch,
    out: &mut Vec<u8>,
) -> Option<()> {
    let Fields {
        id,
        results,
        failed,
        values,
        ..
    } = fields;
    let n = plan.steps.len();
    let mut recs: Vec<Option<Rec<'_, '_>>> = vec![None; n];
    match &results {
        None | Some(Raw::Null) => {}
        Some(Raw::Obj(entries)) => {
            for (k, v) in entries {
                recs[plan.find(k)?] = Some(Rec::Completed(v));
            }
        }
        Some(_) => return None,
    }
    match &failed {
        None | Some(Raw::Null) => {}
        Some(Raw::Arr(ids)) => {
            for id in ids {
                let Raw::Str(id) = id else { return None };
                let slot = &mut recs[plan.find(id)?];
                if slot.is_some() {
                    return None;
                }
                *slot = Some(Rec::Failed);
            }
        }
        Some(_) => return None,
    }
    let values = match &values {
        None | Some(Raw::Null) => None,
        Some(v @ Raw::Obj(_)) => Some(v),
        Some(_) => return None,
    };
    let look = Lookup {
        plan,
        recs: &recs,
        values,
    };
    // A large reply's buffer is not kept for the next.
    if scratch.args.capacity() > 1 << 20 {
        scratch.args = Vec::new();
    }
    scratch.args.clear();
    let mut said: Vec<Option<Said>> = vec![None; n];
    for &i in fast.levels.iter().flatten() {
        let state = |d: usize| said[d].as_ref().map_or(State::Blocked, Said::state);
        let now = if let Some(rec) = recs[i] {
            Said::Done(match rec {
                Rec::Completed(_) => State::Completed,
                Rec::Failed => State::Failed,
            })
        } else if let Some(&d) = plan.deps[i]
            .iter()
            .find(|&&d| matches!(state(d), State::Failed | State::Skipped))
        {
            Said::Skipped(d, state(d))
        } else if fast.value_names[i]
            .iter()
            .any(|name| values.and_then(|v| v.get(name)).is_none())
        {
            Said::Waiting
        } else if plan.deps[i].iter().any(|&d| state(d) != State::Completed) {
            Said::Blocked
        } else {
            let from = scratch.args.len();
            resolve_into(fast, &look, i, scratch)?;
            Said::Ready(from, scratch.args.len())
        };
        said[i] = Some(now);
    }
    out.push(b'{');
    if let Some(id) = &id {
        out.extend_from_slice(b"\"id\":");
        push_raw(out, id);
        out.push(b',');
    }
    out.extend_from_slice(b"\"ok\":true,");
    out.extend_from_slice(&fast.head);
    let missing = |name: &&String| values.and_then(|v| v.get(name)).is_none();
    for (i, s) in said.iter().enumerate() {
        let s = s.as_ref()?;
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(&fast.step_heads[i]);
        out.extend_from_slice(s.state().name().as_bytes());
        out.push(b'"');
        match s {
            Said::Done(_) => {}
            Said::Ready(from, to) => {
                out.extend_from_slice(b",\"arguments\":");
                out.extend_from_slice(&scratch.args[*from..*to]);
            }
            Said::Waiting => {
                out.extend_from_slice(b",\"waiting_for\":[");
                for (k, name) in fast.value_names[i].iter().filter(missing).enumerate() {
                    if k > 0 {
                        out.push(b',');
                    }
                    push_str(out, name);
                }
                out.push(b']');
            }
            Said::Blocked => {
                out.extend_from_slice(b",\"waiting_for\":[");
                let blocked = plan.deps[i].iter().filter(|&&d| {
                    said[d].as_ref().map_or(State::Blocked, Said::state) != State::Completed
                });
                for (k, &d) in blocked.enumerate() {
                    if k > 0 {
                        out.push(b',');
                    }
                    push_str(out, &plan.steps[d].id);
                }
                out.push(b']');
            }
            Said::Skipped(d, state) => {
                out.extend_from_slice(b",\"error\":{\"kind\":");
                push_str(out, ErrorKind::RunState.name());
                out.extend_from_slice(b",\"message\":");
                push_str(out, &skip_reason(&plan.steps[*d].id, *state));
                out.push(b'}');
            }
        }
        out.push(b'}');
    }
    out.extend_from_slice(b"],\"missing_values\":[");
    let mut listed: Vec<&str> = Vec::new();
    for (i, s) in said.iter().enumerate() {
        if !matches!(s, Some(Said::Waiting)) {
            continue;
        }
        for name in fast.value_names[i].iter().filter(missing) {
            if !listed.contains(&name.as_str()) {
                if !listed.is_empty() {
                    out.push(b',');
                }
                push_str(out, name);
                listed.push(name);
            }
        }
    }
    out.extend_from_slice(b"]}\n");
    Some(())
}
