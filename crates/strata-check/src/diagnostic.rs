use serde_json::{json, Value};
use strata_core::{Error, ErrorKind, FieldPath, Layer, PathSeg, Span};

/// How bad a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// The file will not work as intended: `strata check` exits 1.
    Error,
    /// Suspicious; fatal only with `--deny-warnings`.
    Warning,
    /// Worth a look, and may well be right: never fatal, not even with `--deny-warnings`.
    Note,
}

impl Severity {
    /// `error`, `warning` or `note`.
    pub fn name(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        }
    }
}

/// The stable diagnostic codes (documented in `docs/diagnostics.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Code {
    /// S001: a placeholder's syntax is broken (unterminated, empty, malformed).
    Syntax,
    /// S002: the file cannot be read as a tool, directive or hook (YAML, fields, types).
    Load,
    /// S003: the executor chain does not end at the primitive (unknown, cycle, too long).
    Chain,
    /// S004: a `resources:` or `retries:` declaration of a tool or a plan step is invalid.
    Scale,
    /// R001: `{name}` in a tool config names no parameter.
    UnknownParam,
    /// R002: `${NAME}` without a default that nothing in the chain sets.
    UnsetEnv,
    /// R003: `{input:x}` / `${inputs.x}` names no declared input.
    UnknownInput,
    /// R004: `${ns…}` names no namespace of the context at that stage.
    UnknownNamespace,
    /// R005: a hook reads an event field its event does not have.
    EventField,
    /// R006: `${steps.<id>…}` names the action itself, a later one, or no action.
    StepOrder,
    /// R007: an action or hook names an unknown tool.
    UnknownTool,
    /// R008: a hook names an unknown event, or its condition is malformed.
    BadHook,
    /// R009: config keys used as parameters refer to each other in a cycle.
    ParamCycle,
    /// R010: a response field that no source of the directive declares.
    ResponseField,
    /// R011: an action's parameters cannot match its tool's parameter schema.
    ActionParams,
    /// R012: config keys used as parameters refer to each other in a chain longer than the
    /// `param_links` limit.
    ParamChain,
    /// R013: `${result.x}` reads a field the `outputs` schema of the step's tool does not
    /// declare.
    UnknownOutput,
    /// L001: `{input:…}` in a tool file, where layer I never runs.
    InputInTool,
    /// L002: a context placeholder in a tool file, where layer C never runs.
    ContextInTool,
    /// L003: `{ name }` with spaces: literal text, not a placeholder.
    Spaced,
    /// L004: a step reference in another system's syntax (`{$step1.x}`, `{{step.result.x}}`).
    ForeignStep,
    /// L005: `{name}` in a directive, where layer P never runs.
    ParamInDirective,
    /// L006: a step record read with its old spelling (`result.success`, `result.data.x`).
    OldRecord,
    /// L007: a parameter written as a context placeholder in a tool file (`${tool_dir}`),
    /// which would reach the process as written.
    ParamAsContext,
    /// L008: `$NAME` (no braces) in a tool config that no shell reads: literal text, where
    /// Compose and shells would expand it.
    BareDollar,
    /// U001: a declared directive input is never used.
    UnusedInput,
    /// U002: a declared tool parameter never reaches the tool.
    UnusedParam,
    /// U003: a declared tool parameter is shadowed by a config key of the same name, which
    /// `{name}` always reads.
    ShadowedParam,
    /// X001: a secret is placed in `args`, where every process on the machine can read it.
    SecretInArgs,
    /// G001: a graph fails its load-time validation.
    Graph,
    /// T001: a prompt template's syntax is broken.
    PromptSyntax,
    /// T002: `prompts/` cannot be loaded as it is (a duplicate, a bad name or shape, a link
    /// out of the tree, a file past the size limit, components in a cycle).
    PromptLoad,
    /// T003: a template a graph prompt node can render reads a variable its feed lacks.
    PromptFeed,
    /// T004: a component or included template that is referenced but not defined.
    PromptComponent,
    /// T005: a template version that shadows nothing.
    PromptShadow,
    /// T006: a graph prompt node's key resolves to no template.
    PromptKey,
    /// P001: a plan cannot be read (document, steps, ids, reference syntax).
    PlanLoad,
    /// P002: a plan refers to an unknown step or record field.
    PlanReference,
    /// P003: a plan's steps depend on each other in a cycle.
    PlanCycle,
    /// P004: a step's arguments cannot match its tool's parameter schema.
    PlanArguments,
    /// P005: `{{…}}` in a plan that is not a reference: literal text.
    PlanLiteral,
    /// P006: another layer's syntax in a plan, where no layer reads it.
    LayerInPlan,
}

impl Code {
    /// The stable id (`R001`).
    pub fn id(self) -> &'static str {
        match self {
            Code::Syntax => "S001",
            Code::Load => "S002",
            Code::Chain => "S003",
            Code::Scale => "S004",
            Code::UnknownParam => "R001",
            Code::UnsetEnv => "R002",
            Code::UnknownInput => "R003",
            Code::UnknownNamespace => "R004",
            Code::EventField => "R005",
            Code::StepOrder => "R006",
            Code::UnknownTool => "R007",
            Code::BadHook => "R008",
            Code::ParamCycle => "R009",
            Code::ResponseField => "R010",
            Code::ActionParams => "R011",
            Code::ParamChain => "R012",
            Code::UnknownOutput => "R013",
            Code::InputInTool => "L001",
            Code::ContextInTool => "L002",
            Code::Spaced => "L003",
            Code::ForeignStep => "L004",
            Code::ParamInDirective => "L005",
            Code::OldRecord => "L006",
            Code::ParamAsContext => "L007",
            Code::BareDollar => "L008",
            Code::UnusedInput => "U001",
            Code::UnusedParam => "U002",
            Code::ShadowedParam => "U003",
            Code::SecretInArgs => "X001",
            Code::Graph => "G001",
            Code::PromptSyntax => "T001",
            Code::PromptLoad => "T002",
            Code::PromptFeed => "T003",
            Code::PromptComponent => "T004",
            Code::PromptShadow => "T005",
            Code::PromptKey => "T006",
            Code::PlanLoad => "P001",
            Code::PlanReference => "P002",
            Code::PlanCycle => "P003",
            Code::PlanArguments => "P004",
            Code::PlanLiteral => "P005",
            Code::LayerInPlan => "P006",
        }
    }

    /// The kind of error the code reports, from the one kind vocabulary every error of
    /// strata uses (`error.kind` in JSON); lints and unused declarations are `invalid`.
    pub fn kind(self) -> ErrorKind {
        match self {
            Code::Syntax | Code::PromptSyntax => ErrorKind::Syntax,
            Code::UnknownParam
            | Code::UnknownInput
            | Code::UnknownNamespace
            | Code::EventField
            | Code::UnknownOutput => ErrorKind::UnknownName,
            Code::UnsetEnv | Code::PromptFeed => ErrorKind::Undefined,
            Code::StepOrder | Code::PlanReference => ErrorKind::UnknownStep,
            Code::UnknownTool => ErrorKind::UnknownTool,
            Code::ParamCycle | Code::PlanCycle => ErrorKind::Cycle,
            Code::ParamChain => ErrorKind::Limit,
            Code::ResponseField => ErrorKind::MissingFields,
            Code::SecretInArgs => ErrorKind::Forbidden,
            Code::PromptComponent | Code::PromptKey => ErrorKind::TemplateNotFound,
            Code::PlanLoad => ErrorKind::Syntax,
            Code::Load
            | Code::Chain
            | Code::Scale
            | Code::BadHook
            | Code::ActionParams
            | Code::InputInTool
            | Code::ContextInTool
            | Code::Spaced
            | Code::ForeignStep
            | Code::ParamInDirective
            | Code::OldRecord
            | Code::ParamAsContext
            | Code::BareDollar
            | Code::UnusedInput
            | Code::UnusedParam
            | Code::ShadowedParam
            | Code::Graph
            | Code::PromptLoad
            | Code::PromptShadow
            | Code::PlanArguments
            | Code::PlanLiteral
            | Code::LayerInPlan => ErrorKind::Invalid,
        }
    }

    /// The severity the code has, except L006, which is raised to a warning where the
    /// step's tool declares `outputs` that show the read is wrong.
    pub fn severity(self) -> Severity {
        match self {
            Code::OldRecord => Severity::Note,
            Code::UnsetEnv
            | Code::ResponseField
            | Code::InputInTool
            | Code::ContextInTool
            | Code::Spaced
            | Code::ForeignStep
            | Code::BareDollar
            | Code::ParamInDirective
            | Code::UnknownOutput
            | Code::UnusedInput
            | Code::UnusedParam
            | Code::ShadowedParam
            | Code::SecretInArgs
            | Code::PromptFeed
            | Code::PromptShadow => Severity::Warning,
            Code::PlanLiteral | Code::LayerInPlan => Severity::Warning,
            _ => Severity::Error,
        }
    }
}

/// One finding, located in its file.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// The stable code.
    pub code: Code,
    /// The file, relative to the project.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// The byte range inside the field's string.
    pub span: Option<Span>,
    /// The field (`config.args[2]`).
    pub field: FieldPath,
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub help: Option<String>,
}

impl Diagnostic {
    /// A diagnostic of `code` at a position.
    pub fn new(
        code: Code,
        file: &str,
        (line, column): (usize, usize),
        field: FieldPath,
        message: String,
    ) -> Diagnostic {
        Diagnostic {
            severity: code.severity(),
            code,
            file: file.to_string(),
            line,
            column,
            span: None,
            field,
            message,
            help: None,
        }
    }

    /// Sets the span.
    pub fn span(mut self, span: Option<Span>) -> Diagnostic {
        self.span = span;
        self
    }

    /// Sets the severity (for a code whose severity depends on what is known, L006).
    pub fn severity(mut self, severity: Severity) -> Diagnostic {
        self.severity = severity;
        self
    }

    /// Sets the help line.
    pub fn help(mut self, help: Option<String>) -> Diagnostic {
        self.help = help;
        self
    }

    /// A located load or compile error as a diagnostic; the code follows what failed.
    pub fn from_error(e: &Error, fallback_file: &str) -> Diagnostic {
        let code = classify(e);
        let (file, line, column) = match e.location() {
            Some(l) => (l.file.as_str(), l.line, l.column),
            None => (fallback_file, 1, 1),
        };
        Diagnostic::new(
            code,
            file,
            (line, column),
            e.path().clone(),
            e.message().to_string(),
        )
        .span(e.span())
        .help(e.hint().map(str::to_string))
    }

    /// Replaces the code (and its severity).
    pub fn with_code(mut self, code: Code) -> Diagnostic {
        self.code = code;
        self.severity = code.severity();
        self
    }

    /// The JSON form, in the shape of every error of strata (`kind`, `message`, `path`?,
    /// `span`?, `hint`?, `file`, `line`, `column`) plus its `severity` and `code`.
    pub fn to_json(&self) -> Value {
        let mut obj = json!({
            "kind": self.code.kind().name(),
            "message": self.message,
        });
        if !self.field.is_root() {
            obj["path"] = json!(self.field.to_string());
        }
        if let Some(s) = self.span {
            obj["span"] = json!([s.start, s.end]);
        }
        if let Some(help) = &self.help {
            obj["hint"] = json!(help);
        }
        obj["file"] = json!(self.file);
        obj["line"] = json!(self.line);
        obj["column"] = json!(self.column);
        obj["severity"] = json!(self.severity.name());
        obj["code"] = json!(self.code.id());
        obj
    }
}

fn classify(e: &Error) -> Code {
    let m = e.message();
    let chain = ["unknown executor", "executor cycle", "executor chain"];
    if m.starts_with("action `") {
        Code::StepOrder
    } else if chain.iter().any(|p| m.starts_with(p)) || m.contains("names no executor") {
        Code::Chain
    } else if m.starts_with("unknown tool") {
        Code::UnknownTool
    } else if m.starts_with("unknown event") || m.starts_with("bad condition") {
        Code::BadHook
    } else if e.span().is_some() && e.layer() != Layer::REQUEST {
        Code::Syntax
    } else if in_scale_declaration(e.path()) {
        Code::Scale
    } else {
        Code::Load
    }
}

/// Whether `path` lies in a `resources:` or `retries:` declaration: of a tool file (at its
/// top) or of a plan step (right under the step's index).
pub(crate) fn in_scale_declaration(path: &FieldPath) -> bool {
    let segs = match path.0.as_slice() {
        [PathSeg::Index(_), rest @ ..] => rest,
        [PathSeg::Key(steps), PathSeg::Index(_), rest @ ..] if steps == "steps" => rest,
        all => all,
    };
    matches!(segs.first(), Some(PathSeg::Key(k)) if k == "resources" || k == "retries")
}
