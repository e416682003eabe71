/// Bounds that keep hostile templates and data from exhausting time or memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Largest authored string leaf accepted for compilation, in bytes.
    pub template_bytes: usize,
    /// Most placeholders (of all layers together) in one string leaf.
    pub placeholders_per_string: usize,
    /// Most bytes of all the string leaves of one document compiled as a template (what a
    /// compiled template holds grows with them).
    pub template_bytes_per_document: usize,
    /// Most placeholders in one document compiled as a template.
    pub placeholders_per_document: usize,
    /// Deepest nesting of operator words and defaults (`${A:-${B:-…}}`).
    pub default_depth: usize,
    /// Largest rendered string leaf, in bytes.
    pub output_bytes_per_string: usize,
    /// Largest rendered document (all string leaves together), in bytes.
    pub output_bytes_per_config: usize,
    /// Longest chain of config-key parameter references (`a -> b -> c -> d` is 3).
    pub param_links: usize,
    /// Most YAML nodes a document may expand to through aliases.
    pub yaml_nodes: usize,
    /// Largest document read (a file, standard input, a batch request line), in bytes: its
    /// size as written, and what it expands to through YAML aliases (the bytes of its
    /// strings and keys).
    pub document_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            template_bytes: 4 << 20,
            placeholders_per_string: 10_000,
            template_bytes_per_document: 16 << 20,
            placeholders_per_document: 100_000,
            default_depth: 32,
            output_bytes_per_string: 16 << 20,
            output_bytes_per_config: 64 << 20,
            param_links: 3,
            yaml_nodes: 1_000_000,
            document_bytes: 64 << 20,
        }
    }
}

/// How to raise limit `key` (a field of [`Limits`]), for error hints: the project's
/// `strata.yaml` or its `STRATA_LIMITS_<KEY>` variable (embedders set the field).
pub fn raise_hint(key: &str) -> String {
    format!(
        "raise `limits.{key}` in strata.yaml (or STRATA_LIMITS_{})",
        key.to_ascii_uppercase()
    )
}

/// The stack of every thread strata starts to do its work (the command line's and the Python
/// module's work, plan workers, `foreach` workers): 16 MiB, whatever the main thread's stack
/// (`ulimit -s`): 64 MiB of address space, of which a thread touches only what it uses. The
/// caps of the limits that bound a recursion ([`limit_cap`]) are proven safe on it, in a
/// debug build, with both at their cap at once (tests/hardening_jobs.rs).
pub const STACK_BYTES: usize = 64 << 20;

/// The stack of a thread that only waits or writes files (signals, checkpoint writers), 1 MiB: it
/// renders nothing, so it recurses into nothing the user controls.
pub const SMALL_STACK_BYTES: usize = 1 << 20;

/// A builder for a thread named `name` with the work stack ([`STACK_BYTES`]).
pub fn work_thread(name: &str) -> std::thread::Builder {
    std::thread::Builder::new()
        .name(name.to_string())
        .stack_size(STACK_BYTES)
}

/// The most nesting of defaults (`limits.default_depth`) strata accepts. Nesting and links
/// multiply: a link followed inside a default nests the next value's defaults inside it, so
/// the deepest recursion is about `(param_links + 1) × default_depth` levels of up to 5 KiB
/// each in a debug build (less in a release build): 51 × 100 levels take about 25 MiB, under
/// half of [`STACK_BYTES`].
pub const MAX_DEFAULT_DEPTH: usize = 100;

/// The most parameter links (`limits.param_links`) strata accepts (see
/// [`MAX_DEFAULT_DEPTH`] for why).
pub const MAX_PARAM_LINKS: usize = 50;

/// The most any byte limit may be raised to: 1 GiB.
pub const MAX_BYTES_LIMIT: usize = 1 << 30;

/// The most any count limit (placeholders, YAML nodes) may be raised to: 100,000,000.
pub const MAX_COUNT_LIMIT: usize = 100_000_000;

/// The largest value limit `key` (a field of [`Limits`]) accepts: a recursion bound is
/// capped below what [`STACK_BYTES`] holds, a size or a count at what one process can hold.
pub fn limit_cap(key: &str) -> Option<usize> {
    Some(match key {
        "default_depth" => MAX_DEFAULT_DEPTH,
        "param_links" => MAX_PARAM_LINKS,
        "template_bytes"
        | "template_bytes_per_document"
        | "output_bytes_per_string"
        | "output_bytes_per_config"
        | "document_bytes" => MAX_BYTES_LIMIT,
        "placeholders_per_string" | "placeholders_per_document" | "yaml_nodes" => MAX_COUNT_LIMIT,
        _ => return None,
    })
}
