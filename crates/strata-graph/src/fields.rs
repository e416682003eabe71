//! Reading a graph document field by field, with every error located at file:line:col.

use serde_json::{Map, Value};
use strata_core::{did_you_mean, Error, ErrorKind, FieldPath, Layer, Limits, PathSeg};
use strata_doc::Document;
use strata_pipeline::{Chain, Template};
use strata_tools::{a_or_an, type_name};

/// Reads fields of one document and locates errors in it.
pub(crate) struct Reader<'d> {
    /// The document.
    pub doc: &'d Document,
    /// Limits for templates.
    pub limits: &'d Limits,
}

/// `path` followed by key `k`.
pub(crate) fn key(path: &FieldPath, k: &str) -> FieldPath {
    path.child(PathSeg::Key(k.to_string()))
}

/// `path` followed by index `i`.
pub(crate) fn index(path: &FieldPath, i: usize) -> FieldPath {
    path.child(PathSeg::Index(i))
}

/// A list of names for messages: `` `a`, `b`, `c` ``.
pub(crate) fn names<S: AsRef<str>>(items: &[S]) -> String {
    items
        .iter()
        .map(|s| format!("`{}`", s.as_ref()))
        .collect::<Vec<_>>()
        .join(", ")
}

impl Reader<'_> {
    /// A request-layer error about the field at `path`, located in the document.
    pub fn err(&self, path: &FieldPath, message: impl Into<String>) -> Error {
        self.locate(Error::new(Layer::REQUEST, ErrorKind::Invalid, message).at_path(path))
    }

    /// The same, with a hint.
    pub fn err_hint(&self, path: &FieldPath, message: impl Into<String>, hint: &str) -> Error {
        self.locate(
            Error::new(Layer::REQUEST, ErrorKind::Invalid, message)
                .with_hint(hint)
                .at_path(path),
        )
    }

    /// Attaches file, line and column to an error whose path is set.
    pub fn locate(&self, err: Error) -> Error {
        if err.location().is_some() {
            return err;
        }
        if err.path().is_root() && err.span().is_none() {
            return err.at_location(strata_core::Location {
                file: self.doc.name.clone(),
                line: 1,
                column: 1,
            });
        }
        // A field that is not in the text (a default) is located at its parent.
        let mut probe = err.path().clone();
        while !probe.is_root() && probe.lookup(&self.doc.value).is_none() {
            probe.0.pop();
        }
        if &probe != err.path() {
            let located = self
                .doc
                .locate_error(Error::new(err.layer(), ErrorKind::Request, "").at_path(&probe));
            return err.at_location(located.location().cloned());
        }
        self.doc.locate_error(err)
    }

    /// A request-layer error about the key that ends `path` (an unknown key, a node): located
    /// at the key itself rather than at its value.
    pub fn err_at_key(&self, path: &FieldPath, message: impl Into<String>, hint: &str) -> Error {
        let mut err = Error::new(Layer::REQUEST, ErrorKind::Invalid, message)
            .with_hint(hint)
            .at_path(path);
        if let Some((line, column)) = self.key_position(path) {
            err = err.at_location(strata_core::Location {
                file: self.doc.name.clone(),
                line,
                column,
            });
        }
        self.locate(err)
    }

    /// The line and column of the key ending `path`: the first line at or after its
    /// parent's position where the key is written (`key:`, `"key":`, `{key:` or `, key:`).
    fn key_position(&self, path: &FieldPath) -> Option<(usize, usize)> {
        let (Some(PathSeg::Key(k)), Some(parent)) = (path.0.last(), path.0.split_last()) else {
            return None;
        };
        let parent = FieldPath(parent.1.to_vec());
        let (from, _) = self.doc.locate(&parent, None).unwrap_or((1, 1));
        let spellings = [format!("{k}:"), format!("\"{k}\":"), format!("'{k}':")];
        for (i, line) in self.doc.text.lines().enumerate().skip(from - 1) {
            for s in &spellings {
                let mut at = 0;
                while let Some(found) = line[at..].find(s.as_str()) {
                    let col = at + found;
                    let before = line[..col].trim_end();
                    if before.is_empty() || before.ends_with(['{', ',', '-']) {
                        return Some((i + 1, line[..col].chars().count() + 1));
                    }
                    at = col + 1;
                }
            }
        }
        None
    }

    /// The value as a map, or an error naming `what`.
    pub fn map<'v>(
        &self,
        value: &'v Value,
        path: &FieldPath,
        what: &str,
    ) -> Result<&'v Map<String, Value>, Error> {
        value.as_object().ok_or_else(|| {
            let found = a_or_an(type_name(value));
            self.err(path, format!("{what} must be a map, not {found}"))
        })
    }

    /// Rejects keys of `map` not in `allowed`, with a did-you-mean.
    pub fn known_keys(
        &self,
        map: &Map<String, Value>,
        path: &FieldPath,
        allowed: &[&str],
        what: &str,
    ) -> Result<(), Error> {
        for k in map.keys() {
            if allowed.contains(&k.as_str()) {
                continue;
            }
            let hint = match did_you_mean(k, allowed.iter().copied()) {
                Some(best) => format!("did you mean `{best}`?"),
                None => format!("the keys of {what} are {}", names(allowed)),
            };
            return Err(self.err_at_key(
                &key(path, k),
                format!("unknown key `{k}` in {what}"),
                &hint,
            ));
        }
        Ok(())
    }

    /// An optional string field.
    pub fn opt_str<'v>(
        &self,
        map: &'v Map<String, Value>,
        path: &FieldPath,
        k: &str,
    ) -> Result<Option<&'v str>, Error> {
        match map.get(k) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(self.err(&key(path, k), format!("`{k}` must be a string"))),
        }
    }

    /// An optional boolean field (false when absent).
    pub fn flag(&self, map: &Map<String, Value>, path: &FieldPath, k: &str) -> Result<bool, Error> {
        match map.get(k) {
            None => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(self.err(&key(path, k), format!("`{k}` must be true or false"))),
        }
    }

    /// An optional positive integer field.
    pub fn opt_count(
        &self,
        map: &Map<String, Value>,
        path: &FieldPath,
        k: &str,
    ) -> Result<Option<u64>, Error> {
        match map.get(k) {
            None => Ok(None),
            Some(v) => match v.as_u64() {
                Some(n) if n > 0 => Ok(Some(n)),
                _ => Err(self.err(&key(path, k), format!("`{k}` must be a positive integer"))),
            },
        }
    }

    /// Compiles `value` (found at `path`) as a layer-C template.
    pub fn template(&self, value: &Value, path: &FieldPath) -> Result<Template, Error> {
        Template::compile(value, &Chain::of(&[Layer::CONTEXT]), self.limits)
            .map_err(|e| self.locate(e.map_path(|p| p.under(path))))
    }
}
