//! Text that looks like a placeholder of another layer, or of another system, where no layer
//! will ever read it.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;
use strata_core::{Layer, Limits, Span};
use strata_pipeline::{Chain, Template};

use crate::diagnostic::Code;

/// A finding inside one string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lint {
    /// What kind.
    pub code: Code,
    /// Where in the string.
    pub span: Span,
    /// What is wrong.
    pub message: String,
    /// The fix.
    pub help: Option<String>,
}

// The patterns are ASCII throughout (`[ \t\n\x0B\x0C\r]` for a space, as the template lexers
// have it): a Unicode `\s` makes each pattern several times slower to build. Each is built on
// its first use, and a string without a `{` never uses one (see [`braced`]).
static SPACED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\{[ \t\n\x0B\x0C\r]*([A-Za-z_][A-Za-z0-9_]*)[ \t\n\x0B\x0C\r]*\}")
        .expect("valid regex")
});
static DOLLAR_STEP: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\{\$([A-Za-z_][A-Za-z0-9_]*)\.([^{} \t\n\x0B\x0C\r]+)\}").expect("valid regex")
});
static DOUBLE_BRACE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"\{\{[ \t\n\x0B\x0C\r]*([A-Za-z_][A-Za-z0-9_]*)\.([^{} \t\n\x0B\x0C\r]+?)[ \t\n\x0B\x0C\r]*\}\}",
    )
    .expect("valid regex")
});

/// Whether `text` holds a `{`: every pattern starts with one, so text without it is not
/// searched (and no pattern is built for it).
fn braced(text: &str) -> bool {
    text.as_bytes().contains(&b'{')
}

static BARE_DOLLAR: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\$([A-Z_][A-Z0-9_]*)").expect("valid regex"));

/// `$NAME` without braces (an environment variable's name: capitals, digits, `_`), which
/// shells and Compose expand and strata leaves as written; `$$NAME` is skipped (it is
/// someone's escape).
pub fn bare_dollars(text: &str) -> Vec<Lint> {
    BARE_DOLLAR
        .captures_iter(text)
        .filter_map(|c| {
            let whole = c.get(0)?;
            let name = c.get(1)?.as_str();
            if text[..whole.start()].ends_with('$') {
                return None;
            }
            Some(Lint {
                code: Code::BareDollar,
                span: span(&whole),
                message: format!("`${name}` is literal text: strata reads an environment variable as `${{{name}}}`"),
                help: Some(format!("write `${{{name}}}` (or `${{{name}:-default}}`); for a program that expands `${name}` itself, `strata check --allow L008`")),
            })
        })
        .collect()
}

fn span(m: &regex::Match<'_>) -> Span {
    Span::new(m.start(), m.end())
}

/// `{ name }` with spaces where `suggest(name)` knows what was meant.
pub fn spaced(text: &str, suggest: impl Fn(&str) -> Option<String>) -> Vec<Lint> {
    if !braced(text) {
        return Vec::new();
    }
    SPACED
        .captures_iter(text)
        .filter_map(|c| {
            let whole = c.get(0)?;
            let name = c.get(1)?.as_str();
            if whole.as_str() == format!("{{{name}}}") {
                return None;
            }
            let fix = suggest(name)?;
            Some(Lint {
                code: Code::Spaced,
                span: span(&whole),
                message: format!("`{}` is literal text, not a placeholder", whole.as_str()),
                help: Some(format!("write `{fix}` (no spaces inside the braces)")),
            })
        })
        .collect()
}

/// Step references in the syntaxes of other planners: `{$step1.count}`, `{{step.result.x}}`.
pub fn foreign_steps(text: &str) -> Vec<Lint> {
    let mut out = Vec::new();
    if !braced(text) {
        return out;
    }
    for c in DOLLAR_STEP
        .captures_iter(text)
        .chain(DOUBLE_BRACE.captures_iter(text))
    {
        let (Some(whole), Some(step), Some(rest)) = (c.get(0), c.get(1), c.get(2)) else {
            continue;
        };
        let rest = rest
            .as_str()
            .strip_prefix("result.")
            .unwrap_or(rest.as_str());
        out.push(Lint {
            code: Code::ForeignStep,
            span: span(&whole),
            message: format!(
                "`{}` is literal text: no layer reads this syntax",
                whole.as_str()
            ),
            help: Some(format!(
                "a step result is `${{steps.{}.result.{rest}}}`",
                step.as_str()
            )),
        });
    }
    out
}

/// `{name}` (layer P syntax) in a directive, where layer P never runs: what layer P's own
/// compile pass would claim after the directive's stages (inputs, context) have claimed theirs.
pub fn params_in_directive(text: &str) -> Vec<Lint> {
    let chain = Chain::of(&[Layer::INPUTS, Layer::CONTEXT, Layer::PARAMS]);
    let Ok(template) =
        Template::compile(&Value::String(text.to_string()), &chain, &Limits::default())
    else {
        return Vec::new();
    };
    template
        .references()
        .into_iter()
        .filter(|(_, r)| r.layer == Layer::PARAMS)
        .map(|(_, r)| {
            let name = r.name;
            Lint {
                code: Code::ParamInDirective,
                span: r.span,
                message: format!("`{{{name}}}` is literal text in a directive: layer P runs only on tool configs"),
                help: Some(format!("for a directive input write `{{input:{name}}}`; to pass it to a tool, use a tool parameter")),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_foreign_step_syntax() {
        let l = foreign_steps("Found {$step1.count} items, {{find.result.data[0].email}}");
        let got: Vec<(Span, &str)> = l
            .iter()
            .map(|l| (l.span, l.help.as_deref().unwrap_or("")))
            .collect();
        assert_eq!(
            got,
            [
                (
                    Span::new(6, 20),
                    "a step result is `${steps.step1.result.count}`"
                ),
                (
                    Span::new(28, 57),
                    "a step result is `${steps.find.result.data[0].email}`"
                ),
            ]
        );
    }

    #[test]
    fn bare_dollars_are_capitals_not_escaped() {
        let l = bare_dollars("$HOME/x $$PATH ${USER} $lower $1 a$B");
        let got: Vec<Span> = l.iter().map(|l| l.span).collect();
        assert_eq!(got, [Span::new(0, 5), Span::new(34, 36)]);
        assert_eq!(
            l[0].message,
            "`$HOME` is literal text: strata reads an environment variable as `${HOME}`"
        );
    }

    #[test]
    fn spaced_needs_a_known_name() {
        let known = |n: &str| (n == "user").then(|| "{user}".to_string());
        assert_eq!(spaced("{ user } { other } {user}", known).len(), 1);
    }

    #[test]
    fn params_in_directives_skip_escapes_and_dollars() {
        assert_eq!(
            params_in_directive("${x} {{y}} {z}")
                .iter()
                .map(|l| l.span)
                .collect::<Vec<_>>(),
            [Span::new(11, 14)]
        );
    }
}
