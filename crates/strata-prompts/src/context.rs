//! The context a template renders against: one minijinja object that looks a name up in the
//! feed (with knowledge merged in), then the components the template sees (rendered on first
//! use with the same context), then the predefined variables — without copying any of them
//! per lookup, and noting every name nothing provides.
//!
//! The feed is not converted into minijinja values before a render: the context reads the
//! caller's map where it is, lent by [`lend_feed`], and converts only the values the template
//! reads, each once per context.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use indexmap::IndexMap;
use minijinja::value::{Enumerator, Object, ObjectRepr, Value as JValue};
use serde_json::{Map, Value};
use strata_core::{Error, ErrorKind};

use crate::store::{jinja_error, FastMap, Store};
use crate::LAYER;

/// Variables converted to minijinja values, found by name.
#[derive(Debug, Default)]
pub(crate) struct Vars {
    list: Vec<(String, JValue)>,
    index: Option<FastMap<String, usize>>,
}

/// Feed strings this long or shorter are copied each time a template reads them (as cheap as
/// finding a copy made before); longer ones are converted once per context.
const COPY_BELOW: usize = 256;

/// Maps this small or smaller are searched name by name instead of hashed.
const SCAN_BELOW: usize = 16;

impl Vars {
    /// The variables of `map`.
    pub fn of(map: &Map<String, Value>) -> Vars {
        Vars::from_list(
            map.iter()
                .map(|(k, v)| (k.clone(), strata_jinja::value_of(v)))
                .collect(),
        )
    }

    pub fn from_list(list: Vec<(String, JValue)>) -> Vars {
        let index = (list.len() >= SCAN_BELOW).then(|| {
            list.iter()
                .enumerate()
                .map(|(i, (k, _))| (k.clone(), i))
                .collect()
        });
        Vars { list, index }
    }

    pub fn get(&self, name: &str) -> Option<&JValue> {
        match &self.index {
            Some(index) => index.get(name).map(|&i| &self.list[i].1),
            None => self.list.iter().find(|(k, _)| k == name).map(|(_, v)| v),
        }
    }
}

/// A feed map, as the thread-local slot of [`lend_feed`] holds it.
type FeedPtr = *const Map<String, Value>;

thread_local! {
    /// The feed of the innermost lend under way on this thread, with its id.
    static FEED: Cell<Option<(u64, FeedPtr)>> = const { Cell::new(None) };
}

/// The id of the next lend (never 0, never reused).
static NEXT_LEND: AtomicU64 = AtomicU64::new(1);

/// Lends `feed` to the renders `f` makes on this thread, without copying it, and returns what
/// `f` returned. A [`Ctx`] must be `'static` (minijinja's objects are), so it holds the lend's
/// id (`f`'s argument) and reads the map through [`read_feed`]. Lends nest (the innermost
/// wins); one ends when its `f` returns or unwinds, and gives back the lend it hid. Only this
/// function starts and ends a lend, so no caller can end one out of order or keep one past the
/// borrow of its map.
pub(crate) fn lend_feed<R>(feed: &Map<String, Value>, f: impl FnOnce(u64) -> R) -> R {
    /// Puts the hidden lend back in the slot when dropped, on unwinding too.
    struct GiveBack(Option<(u64, FeedPtr)>);

    impl Drop for GiveBack {
        fn drop(&mut self) {
            FEED.with(|slot| slot.set(self.0));
        }
    }

    let id = NEXT_LEND.fetch_add(1, Ordering::Relaxed);
    let _give_back = GiveBack(FEED.with(|slot| slot.replace(Some((id, feed as FeedPtr)))));
    f(id)
}

/// `f` of the map of lend `id`, when that lend is the innermost one under way on this
/// thread; `None` otherwise.
fn read_feed<R>(id: u64, f: impl FnOnce(&Map<String, Value>) -> R) -> Option<R> {
    FEED.with(|slot| match slot.get() {
        Some((at, map)) if at == id => {
            // SAFETY: the slot holds `id` only within the call of `lend_feed` that made it
            // (which puts the previous value back when its closure returns or unwinds; ids
            // are never reused), and that call borrows the map throughout: the pointer is
            // valid and the map is not mutated meanwhile.
            Some(f(unsafe { &*map }))
        }
        _ => None,
    })
}

/// Why a render failed: the error, and the variable's name when it is an undefined one.
#[derive(Debug, Clone)]
pub(crate) struct Fault {
    pub error: Error,
    pub undefined: Option<String>,
}

/// A component's state during one render.
#[derive(Debug, Clone)]
enum Slot {
    Rendering,
    Done(JValue),
}

/// What one render sees.
#[derive(Debug)]
pub(crate) struct Ctx {
    pub store: Arc<Store>,
    /// The id of the [`lend_feed`] lending the feed (with knowledge merged in).
    pub feed: u64,
    pub predefined: Arc<Vars>,
    /// The components the rendered template sees.
    pub visible: Arc<IndexMap<String, usize>>,
    /// The version chosen for versioned components: `(component, version index)`.
    pub picks: Arc<Vec<(usize, usize)>>,
    /// Render with the semi-strict view (else the lenient one).
    pub strict: bool,
    /// Names that stand for "anything" while undefined names are being found.
    pub blanks: Vec<String>,
    slots: Mutex<FastMap<usize, Slot>>,
    /// The template rendered first, then the components being rendered, outermost first.
    chain: Mutex<Vec<usize>>,
    misses: Mutex<Vec<String>>,
    fault: Mutex<Option<Fault>>,
    /// Feed values converted at a cost (long strings, lists, maps), by the address of the
    /// feed's value: each is converted once per context.
    converted: Mutex<Vec<(usize, JValue)>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A stand-in for an undefined name: any attribute of it is itself, it iterates as nothing
/// and is false.
#[derive(Debug)]
struct Blank;

impl Object for Blank {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Map
    }

    fn get_value(self: &Arc<Self>, _: &JValue) -> Option<JValue> {
        Some(JValue::from_dyn_object(self.clone()))
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Empty
    }
}

impl Ctx {
    /// A context for one render.
    pub fn new(
        store: Arc<Store>,
        feed: u64,
        predefined: Arc<Vars>,
        visible: Arc<IndexMap<String, usize>>,
        picks: Arc<Vec<(usize, usize)>>,
        strict: bool,
        blanks: Vec<String>,
    ) -> Ctx {
        Ctx {
            store,
            feed,
            predefined,
            visible,
            picks,
            strict,
            blanks,
            slots: Mutex::new(FastMap::default()),
            chain: Mutex::new(Vec::new()),
            misses: Mutex::new(Vec::new()),
            fault: Mutex::new(None),
            converted: Mutex::new(Vec::new()),
        }
    }

    /// The feed's variable `name`, converted (once per context when that costs).
    fn feed_value(&self, name: &str) -> Option<JValue> {
        read_feed(self.feed, |feed| {
            let v = if feed.len() < SCAN_BELOW {
                feed.iter().find(|(k, _)| k.as_str() == name)?.1
            } else {
                feed.get(name)?
            };
            let costly = match v {
                Value::String(s) => s.len() > COPY_BELOW,
                Value::Array(_) | Value::Object(_) => true,
                Value::Null | Value::Bool(_) | Value::Number(_) => false,
            };
            if !costly {
                return Some(strata_jinja::value_of(v));
            }
            let at = v as *const Value as usize;
            let mut converted = lock(&self.converted);
            if let Some((_, j)) = converted.iter().find(|(a, _)| *a == at) {
                return Some(j.clone());
            }
            let j = strata_jinja::value_of(v);
            converted.push((at, j.clone()));
            Some(j)
        })
        .flatten()
    }

    /// Renders template `t` against this context.
    pub fn render(self: &Arc<Self>, t: usize) -> Result<String, Fault> {
        let store = &self.store;
        let env = if self.strict {
            &store.strict
        } else {
            &store.lenient
        };
        {
            let mut chain = lock(&self.chain);
            if chain.is_empty() {
                chain.push(t);
            }
        }
        let out = env.get_template(&store.templates[t].id).and_then(|tmpl| {
            strata_jinja::render_value(
                &tmpl,
                JValue::from_dyn_object(self.clone()),
                store.limits.jinja,
            )
        });
        if let Some(f) = lock(&self.fault).take() {
            return Err(f);
        }
        out.map_err(|e| self.fault_of(&e, t))
    }

    /// The fault of a minijinja error met while rendering `t` (or a template it includes).
    fn fault_of(&self, err: &minijinja::Error, t: usize) -> Fault {
        let store = &self.store;
        let at = err
            .name()
            .and_then(|n| store.by_id.get(n).copied())
            .unwrap_or(t);
        let tmpl = &store.templates[at];
        let mut error = jinja_error(err, tmpl);
        if err.kind() != minijinja::ErrorKind::UndefinedError {
            return Fault {
                error,
                undefined: None,
            };
        }
        let named = err
            .range()
            .and_then(|r| tmpl.source.get(r))
            .map(leading_name)
            .filter(|n| !n.is_empty())
            .map(str::to_string);
        let name = named.or_else(|| lock(&self.misses).last().cloned());
        if let Some(n) = &name {
            error = error.with_message(format!(
                "undefined variable `{n}` in template `{}`",
                tmpl.id
            ));
        }
        Fault {
            error,
            undefined: Some(name.unwrap_or_default()),
        }
    }

    /// The version index chosen for component `c`.
    fn pick(&self, c: usize) -> usize {
        self.picks
            .iter()
            .find(|(p, _)| *p == c)
            .map_or(0, |(_, v)| *v)
    }

    fn component(self: &Arc<Self>, c: usize) -> Option<JValue> {
        {
            let mut slots = lock(&self.slots);
            match slots.get(&c).cloned() {
                Some(Slot::Done(v)) => return Some(v),
                Some(Slot::Rendering) => {
                    let name = &self.store.comps[c].name;
                    self.fail(Fault {
                        error: Error::new(
                            LAYER,
                            ErrorKind::Cycle,
                            format!("component `{name}` uses itself"),
                        )
                        .with_hint("a component cannot use itself, directly or through others"),
                        undefined: None,
                    });
                    return None;
                }
                None => {}
            }
            let mut chain = lock(&self.chain);
            let most = self.store.limits.component_depth;
            if chain.len() > most {
                let fault = self.too_deep(&chain, c, most);
                drop(chain);
                self.fail(fault);
                return None;
            }
            chain.push(c);
            slots.insert(c, Slot::Rendering);
        }
        let comp = &self.store.comps[c];
        let rendered = comp
            .versions
            .get(self.pick(c))
            .map(|&(_, t)| self.render(t));
        lock(&self.chain).pop();
        match rendered? {
            Ok(text) => {
                let v = JValue::from(text);
                lock(&self.slots).insert(c, Slot::Done(v.clone()));
                Some(v)
            }
            Err(f) => {
                self.fail(f);
                None
            }
        }
    }

    /// The fault of component `next` read at the end of `chain` (the template, then the
    /// components it reads through), which holds more than `most` components already.
    fn too_deep(&self, chain: &[usize], next: usize, most: usize) -> Fault {
        let store = &self.store;
        let mut names: Vec<String> = Vec::with_capacity(chain.len() + 1);
        if let Some(&t) = chain.first() {
            names.push(store.templates[t].id.clone());
        }
        names.extend(chain[1..].iter().map(|&c| store.comps[c].name.clone()));
        names.push(store.comps[next].name.clone());
        let shown = |n: &String| format!("`{n}`");
        let path = if names.len() <= 5 {
            let rest: Vec<String> = names[1..].iter().map(shown).collect();
            format!("{} reads {}", shown(&names[0]), rest.join(", which reads "))
        } else {
            let k = names.len();
            format!(
                "{} reads {}, which reads {}, … {}, which reads {}",
                shown(&names[0]),
                shown(&names[1]),
                shown(&names[2]),
                shown(&names[k - 2]),
                shown(&names[k - 1])
            )
        };
        Fault {
            error: Error::new(
                LAYER,
                ErrorKind::Limit,
                format!("components nest more than {most} deep: {path}"),
            )
            .with_hint(format!(
                "a component may read other components at most {most} deep: flatten the chain"
            )),
            undefined: None,
        }
    }

    fn fail(&self, f: Fault) {
        let mut fault = lock(&self.fault);
        if fault.is_none() {
            *fault = Some(f);
        }
    }
}

/// The name an expression starts with (`q` in `q.b + 1`).
fn leading_name(expr: &str) -> &str {
    let expr = expr.trim_start();
    let end = expr
        .char_indices()
        .find(|(i, c)| !(c.is_ascii_alphanumeric() || *c == '_') || (*i == 0 && c.is_ascii_digit()))
        .map_or(expr.len(), |(i, _)| i);
    &expr[..end]
}

impl Object for Ctx {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Map
    }

    fn get_value(self: &Arc<Self>, key: &JValue) -> Option<JValue> {
        self.get_value_by_str(key.as_str()?)
    }

    fn get_value_by_str(self: &Arc<Self>, name: &str) -> Option<JValue> {
        if let Some(v) = self.feed_value(name) {
            return Some(v);
        }
        if let Some(&c) = self.visible.get(name) {
            return self.component(c);
        }
        if let Some(v) = self.predefined.get(name) {
            return Some(v.clone());
        }
        if self.blanks.iter().any(|b| b == name) {
            return Some(JValue::from_object(Blank));
        }
        if !self.store.globals.iter().any(|g| g == name) {
            lock(&self.misses).push(name.to_string());
        }
        None
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::NonEnumerable
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leading_names_of_expressions() {
        assert_eq!(leading_name("q.b + 1"), "q");
        assert_eq!(leading_name(" user_input"), "user_input");
        assert_eq!(leading_name("1 + x"), "");
    }

    #[test]
    fn a_feed_is_read_only_within_its_lend() {
        let a = serde_json::json!({"x": 1}).as_object().unwrap().clone();
        let b = serde_json::json!({"x": 2}).as_object().unwrap().clone();
        let x = |m: &Map<String, Value>| m["x"].clone();
        let (ia, ib) = lend_feed(&a, |ia| {
            assert_eq!(read_feed(ia, x), Some(Value::from(1)));
            let ib = lend_feed(&b, |ib| {
                assert_eq!(read_feed(ib, x), Some(Value::from(2)));
                assert_eq!(read_feed(ia, x), None, "hidden by the inner lend");
                ib
            });
            assert_eq!(read_feed(ia, x), Some(Value::from(1)), "given back");
            assert_eq!(read_feed(ib, x), None);
            (ia, ib)
        });
        assert_eq!(read_feed(ia, x), None);
        assert_eq!(read_feed(ib, x), None);
        let mut ic = 0;
        let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            lend_feed(&a, |id| {
                ic = id;
                panic!("a render panics");
            })
        }));
        assert!(unwound.is_err());
        assert_eq!(
            read_feed(ic, x),
            None,
            "a lend ends when its closure unwinds"
        );
    }

    #[test]
    fn json_values_convert_exactly() {
        let v = serde_json::json!({"i": 10000000, "u": u64::MAX, "f": 0.38, "n": null, "l": [1]});
        let vars = Vars::of(v.as_object().unwrap());
        assert_eq!(vars.get("i").unwrap().to_string(), "10000000");
        assert_eq!(vars.get("u").unwrap().to_string(), u64::MAX.to_string());
        assert_eq!(vars.get("f").unwrap().to_string(), "0.38");
        assert!(vars.get("n").unwrap().is_none());
        assert_eq!(vars.get("l").unwrap().len(), Some(1));
        assert!(vars.get("x").is_none());
        let big: Map<String, Value> = (0..20).map(|i| (format!("k{i}"), Value::from(i))).collect();
        assert_eq!(Vars::of(&big).get("k17").unwrap().to_string(), "17");
    }
}
