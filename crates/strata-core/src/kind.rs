use std::fmt;

/// What kind of failure an [`crate::Error`] is: a stable name that scripts and bindings can
/// match on (`error.kind` in every JSON form), independent of the wording of the message.
///
/// The kinds are grouped by family below; the family of an error is usually clear from its
/// [`crate::Layer`]. New kinds may be added: match with a wildcard arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    // Templates and documents.
    /// Malformed syntax: a placeholder, expression, template, YAML or JSON document.
    Syntax,
    /// A value a template needs is missing and the render is strict (or the template says
    /// it is required, as `${NAME:?msg}` does).
    Undefined,
    /// An operation on values of the wrong type (`${'a' + 1}`).
    Type,
    /// A limit was reached (bytes, placeholders, nesting, links, steps, fuel, variants).
    Limit,
    /// Something refers to itself, directly or through others (parameters, executors, steps).
    Cycle,
    /// A name that is not defined where it is used (a function, layer, event, node, key).
    UnknownName,
    /// A value that does not satisfy its declaration (a parameter schema, an input type, a
    /// field of a file that must be a map, a number that is out of range).
    Invalid,

    // Files, requests and processes.
    /// A file or directory could not be read or written.
    Io,
    /// A path or link that leads outside the directories a project may read.
    Forbidden,
    /// A malformed request: command-line options, a batch line, a JSON argument.
    Request,
    /// A tool id that names no tool.
    UnknownTool,
    /// A tool's process could not be started.
    Spawn,
    /// A tool ran and failed (non-zero exit, or killed by a signal).
    ToolFailed,
    /// A tool or a run took longer than its timeout.
    Timeout,
    /// A run cannot be started or resumed in its current state (locked, ended, changed).
    RunState,
    /// The caller cancelled the run while it went on (its tool processes were killed).
    Cancelled,
    /// What was to run fails the project check (`strata check` reports the same errors), so
    /// it was not run.
    Check,

    // Plans.
    /// A reference to a step id the plan does not have.
    UnknownStep,
    /// A reference to a field of a step record other than `id`, `status`, `result`, `error`
    /// and `run`.
    UnknownField,
    /// A reference whose path is not in the step's result.
    PathNotFound,
    /// Two steps with the same id.
    DuplicateId,

    // Prompts and responses.
    /// No template matched a key through the whole fallback chain.
    TemplateNotFound,
    /// A template's content does not match the hash it was pinned to.
    HashMismatch,
    /// Fields of a response that no source provides.
    MissingFields,
    /// The generator of `generative.*` fields failed.
    Generator,
}

impl ErrorKind {
    /// The stable snake_case name used in JSON and by the bindings.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Syntax => "syntax",
            ErrorKind::Undefined => "undefined",
            ErrorKind::Type => "type",
            ErrorKind::Limit => "limit",
            ErrorKind::Cycle => "cycle",
            ErrorKind::UnknownName => "unknown_name",
            ErrorKind::Invalid => "invalid",
            ErrorKind::Io => "io",
            ErrorKind::Forbidden => "forbidden",
            ErrorKind::Request => "request",
            ErrorKind::UnknownTool => "unknown_tool",
            ErrorKind::Spawn => "spawn",
            ErrorKind::ToolFailed => "tool_failed",
            ErrorKind::Timeout => "timeout",
            ErrorKind::RunState => "run_state",
            ErrorKind::Cancelled => "cancelled",
            ErrorKind::Check => "check",
            ErrorKind::UnknownStep => "unknown_step",
            ErrorKind::UnknownField => "unknown_field",
            ErrorKind::PathNotFound => "path_not_found",
            ErrorKind::DuplicateId => "duplicate_id",
            ErrorKind::TemplateNotFound => "template_not_found",
            ErrorKind::HashMismatch => "hash_mismatch",
            ErrorKind::MissingFields => "missing_fields",
            ErrorKind::Generator => "generator",
        }
    }

    /// Every kind, in the order above (for documentation and tests).
    pub const ALL: [ErrorKind; 25] = [
        ErrorKind::Syntax,
        ErrorKind::Undefined,
        ErrorKind::Type,
        ErrorKind::Limit,
        ErrorKind::Cycle,
        ErrorKind::UnknownName,
        ErrorKind::Invalid,
        ErrorKind::Io,
        ErrorKind::Forbidden,
        ErrorKind::Request,
        ErrorKind::UnknownTool,
        ErrorKind::Spawn,
        ErrorKind::ToolFailed,
        ErrorKind::Timeout,
        ErrorKind::RunState,
        ErrorKind::Cancelled,
        ErrorKind::Check,
        ErrorKind::UnknownStep,
        ErrorKind::UnknownField,
        ErrorKind::PathNotFound,
        ErrorKind::DuplicateId,
        ErrorKind::TemplateNotFound,
        ErrorKind::HashMismatch,
        ErrorKind::MissingFields,
        ErrorKind::Generator,
    ];

    /// The kind called `name`.
    pub fn from_name(name: &str) -> Option<ErrorKind> {
        ErrorKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_round_trip() {
        let mut names: Vec<&str> = ErrorKind::ALL.iter().map(|k| k.name()).collect();
        for kind in ErrorKind::ALL {
            assert_eq!(ErrorKind::from_name(kind.name()), Some(kind));
        }
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ErrorKind::ALL.len());
    }
}
