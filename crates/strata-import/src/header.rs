//! Rust-era Python code tools: the `# ryeos-tool:` comment-YAML header RyeOS's
//! `parser:ryeos/core/python/tool-header` reads from a `.py` file's prologue (after an
//! optional shebang and signature lines), e.g.
//!
//! ```text
//! #!/usr/bin/env python3
//! # ryeos-tool:
//! #   version: "1.0.0"
//! #   executor_id: "tool:ryeos/core/runtimes/python/function"
//! ```

use serde_json::{Map, Value};

use crate::position::is_signature_line;
use crate::yaml::read_yaml;

/// The line that opens the header.
const OPENER: &str = "# ryeos-tool:";

/// A `# ryeos-tool:` header as read.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Header {
    /// The 1-based line of `# ryeos-tool:`.
    pub line: usize,
    /// The mapping under `ryeos-tool`, or why it could not be read.
    pub fields: Result<Map<String, Value>, String>,
}

impl Header {
    /// The header's `executor_id`, its kind prefix (`tool:`) removed; `None` when absent or
    /// not text.
    pub fn executor(&self) -> Option<String> {
        let e = self.fields.as_ref().ok()?.get("executor_id")?.as_str()?;
        Some(e.strip_prefix("tool:").unwrap_or(e).to_owned())
    }
}

/// The `# ryeos-tool:` header of a Python file's prologue, when it has one.
pub(crate) fn tool_header(text: &str) -> Option<Header> {
    let mut lines = text.lines().enumerate().peekable();
    if let Some((_, first)) = lines.peek() {
        if first.starts_with("#!") {
            lines.next();
        }
    }
    let (at, _) = lines.find(|(_, l)| !is_signature_line(l) && !l.trim().is_empty())?;
    let opener = text.lines().nth(at)?;
    if opener.trim_end() != OPENER {
        return None;
    }
    let mut yaml = String::from("ryeos-tool:\n");
    for line in text.lines().skip(at + 1) {
        let Some(inner) = line.strip_prefix('#') else {
            break;
        };
        if inner.trim().is_empty() {
            continue;
        }
        yaml.push_str(inner);
        yaml.push('\n');
    }
    let fields = match read_yaml(&yaml) {
        Ok(v) => match v.get("ryeos-tool") {
            Some(Value::Object(m)) => Ok(m.clone()),
            _ => Err("the header holds no mapping".to_owned()),
        },
        Err(why) => Err(why),
    };
    Some(Header {
        line: at + 1,
        fields,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_header_after_a_shebang_and_a_signature() {
        let text = "#!/usr/bin/env python3\n# ryeos:signed:x\n# ryeos-tool:\n#   category: hello\n#   version: \"1.0.0\"\n#   executor_id: \"tool:ryeos/core/runtimes/python/script\"\n\nimport sys\n";
        let h = tool_header(text).unwrap();
        assert_eq!(h.line, 3);
        assert_eq!(
            h.executor().as_deref(),
            Some("ryeos/core/runtimes/python/script")
        );
        assert_eq!(h.fields.unwrap()["version"], "1.0.0");
    }

    #[test]
    fn only_a_prologue_header_counts() {
        assert_eq!(tool_header("import os\n# ryeos-tool:\n#   a: 1\n"), None);
        assert_eq!(tool_header("# a comment\n"), None);
        let no_exec = tool_header("# ryeos-tool:\n#   version: \"1\"\n").unwrap();
        assert_eq!(no_exec.executor(), None);
        let bad = tool_header("# ryeos-tool:\n#   a: [\n").unwrap();
        assert!(bad.fields.is_err());
    }
}
