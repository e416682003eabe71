/// Where a run of text came from: written by a person, or substituted by a layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Origin {
    /// Characters written in a tool, runtime, directive, graph or hook file.
    Authored,
    /// A value a layer substituted; never scanned again.
    Data,
    /// Substituted data that must be redacted as `***` wherever it is shown.
    Secret,
}

impl Origin {
    /// The origin of text made of both `self` and `other`: secret wins over data over authored.
    pub fn join(self, other: Origin) -> Origin {
        match (self, other) {
            (Origin::Secret, _) | (_, Origin::Secret) => Origin::Secret,
            (Origin::Data, _) | (_, Origin::Data) => Origin::Data,
            _ => Origin::Authored,
        }
    }

    /// The lower-case name used in traces: `authored`, `data` or `secret`.
    pub fn name(self) -> &'static str {
        match self {
            Origin::Authored => "authored",
            Origin::Data => "data",
            Origin::Secret => "secret",
        }
    }
}
