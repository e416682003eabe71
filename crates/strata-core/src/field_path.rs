use std::fmt;

/// One step of a [`FieldPath`]: a map key or a list index.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PathSeg {
    /// A map key.
    Key(String),
    /// A list index.
    Index(usize),
}

/// Where a value sits in a document, printed as `config.args[2]` or `env["MY KEY"]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct FieldPath(pub Vec<PathSeg>);

impl FieldPath {
    /// The path of the document root (printed as `$`).
    pub fn root() -> FieldPath {
        FieldPath(Vec::new())
    }

    /// This path followed by `seg`.
    pub fn child(&self, seg: PathSeg) -> FieldPath {
        let mut segs = self.0.clone();
        segs.push(seg);
        FieldPath(segs)
    }

    /// `prefix` followed by this path.
    pub fn under(&self, prefix: &FieldPath) -> FieldPath {
        let mut segs = prefix.0.clone();
        segs.extend(self.0.iter().cloned());
        FieldPath(segs)
    }

    /// The value at this path inside `root`.
    pub fn lookup<'v>(&self, root: &'v serde_json::Value) -> Option<&'v serde_json::Value> {
        self.0.iter().try_fold(root, |cur, seg| match seg {
            PathSeg::Key(k) => cur.get(k.as_str()),
            PathSeg::Index(i) => cur.get(*i),
        })
    }

    /// True for the document root.
    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }
}

fn is_plain_key(key: &str) -> bool {
    let mut chars = key.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("$");
        }
        for (i, seg) in self.0.iter().enumerate() {
            match seg {
                PathSeg::Key(k) if is_plain_key(k) => {
                    if i > 0 {
                        f.write_str(".")?;
                    }
                    f.write_str(k)?;
                }
                PathSeg::Key(k) => write!(f, "[{}]", serde_json::Value::from(k.as_str()))?,
                PathSeg::Index(n) => write!(f, "[{n}]")?,
            }
        }
        Ok(())
    }
}
