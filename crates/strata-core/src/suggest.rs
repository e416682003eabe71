//! The one did-you-mean of strata: every "unknown name" message suggests through it.

/// How similar a candidate must be (Jaro–Winkler) to count as a likely misspelling.
const THRESHOLD: f64 = 0.8;

/// The candidate closest to `name`, when it is close enough to be a likely misspelling.
///
/// Names with `/` (tool ids) are also compared by their last segment, so `exmples/echo`
/// finds `examples/echo` and `echo` finds `examples/echo`.
pub fn did_you_mean<'a, S: AsRef<str> + ?Sized + 'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a S>,
) -> Option<&'a str> {
    fn last(s: &str) -> &str {
        s.rsplit('/').next().unwrap_or(s)
    }
    let score = |c: &str| {
        let whole = strsim::jaro_winkler(name, c);
        let tail = strsim::jaro_winkler(last(name), last(c));
        whole.max(tail * 0.95)
    };
    candidates
        .into_iter()
        .map(AsRef::as_ref)
        .filter(|c| *c != name)
        .map(|c| (score(c), c))
        .filter(|(s, _)| *s >= THRESHOLD)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names_only() {
        let names = ["examples/echo", "examples/greet", "runtimes/python"];
        assert_eq!(did_you_mean("exmples/echo", names), Some("examples/echo"));
        assert_eq!(did_you_mean("greet", names), Some("examples/greet"));
        assert_eq!(did_you_mean("zzz", names), None);
        assert_eq!(did_you_mean("emial", ["email", "name"]), Some("email"));
    }
}
