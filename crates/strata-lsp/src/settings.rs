//! The server's settings an editor can change: from `initializationOptions` when it starts,
//! and from `workspace/didChangeConfiguration` while it runs.
//!
//! Both take `{"inlayHints": false}`, or the same under `strata` (`{"strata":
//! {"inlayHints": false}}`, how editors send the section of a settings file). A setting not
//! given is left as it was.

use serde_json::Value;

/// What the editor has switched on or off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// Whether inlay hints are sent (on unless switched off).
    pub inlay_hints: bool,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings { inlay_hints: true }
    }
}

impl Settings {
    /// These settings with what `given` sets (under `strata` or at its top).
    pub fn with(self, given: Option<&Value>) -> Settings {
        let Some(given) = given else {
            return self;
        };
        let section = given.get("strata").unwrap_or(given);
        Settings {
            inlay_hints: section
                .get("inlayHints")
                .and_then(Value::as_bool)
                .unwrap_or(self.inlay_hints),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_setting_given_at_the_top_or_under_strata_changes_and_one_not_given_stays() {
        let on = Settings::default();
        assert!(on.inlay_hints);
        let off = on.with(Some(&json!({"inlayHints": false})));
        assert!(!off.inlay_hints);
        assert!(!off.with(Some(&json!({"other": 1}))).inlay_hints);
        assert!(!off.with(None).inlay_hints);
        assert!(
            off.with(Some(&json!({"strata": {"inlayHints": true}})))
                .inlay_hints
        );
        assert!(
            !on.with(Some(&json!({"strata": {"inlayHints": false}})))
                .inlay_hints
        );
    }
}
