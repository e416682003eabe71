//! A document's value read into typed fields, with the field an error is about: its path
//! in the message (`inputs[0].type: unknown variant …`) and its line and column.

use serde::de::DeserializeOwned;
use serde_path_to_error::Segment;
use strata_core::{FieldPath, PathSeg};

use crate::Document;

/// Why a document's value does not fit the typed fields: the message, led by the path of
/// the field at fault, and where that field stands (1-based line and column).
#[derive(Debug, Clone, PartialEq)]
pub struct TypedError {
    /// `path: what is wrong` (no path for the whole document).
    pub message: String,
    /// Where the field at fault stands: its key for an unknown field, else its value.
    pub at: (usize, usize),
}

impl Document {
    /// The value read as `T`.
    pub fn typed<T: DeserializeOwned>(&self) -> Result<T, TypedError> {
        serde_path_to_error::deserialize(&self.value).map_err(|e| {
            let mut path = Vec::new();
            for segment in e.path().iter() {
                match segment {
                    Segment::Map { key } => path.push(PathSeg::Key(key.clone())),
                    Segment::Seq { index } => path.push(PathSeg::Index(*index)),
                    Segment::Enum { .. } | Segment::Unknown => break,
                }
            }
            let inner = e.into_inner().to_string();
            let path = FieldPath(path);
            let unknown_field = inner.starts_with("unknown field `");
            let (shown, at) = if unknown_field {
                let parent = FieldPath(path.0[..path.0.len().saturating_sub(1)].to_vec());
                let at = self.positions().locate_key(&path);
                (parent, at)
            } else {
                let at = self.locate(&path, None);
                (path, at)
            };
            let at = at.or_else(|| self.locate(&shown, None)).unwrap_or((1, 1));
            let message = match dotted(&shown) {
                Some(p) => format!("{p}: {inner}"),
                None => inner,
            };
            TypedError { message, at }
        })
    }
}

/// `a.b[0].c`, as serde's messages write a path; none for the root.
fn dotted(path: &FieldPath) -> Option<String> {
    let mut out = String::new();
    for seg in &path.0 {
        match seg {
            PathSeg::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            PathSeg::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    (!out.is_empty()).then_some(out)
}
