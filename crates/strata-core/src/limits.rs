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
