//! What the user lets an agent call: `--tools GLOB…` keeps the items that match, `--exclude
//! GLOB…` drops those that match (it wins), and `--read-only` keeps only the items that cannot
//! change anything.

use globset::{Glob, GlobSet, GlobSetBuilder};
use strata_core::{Error, ErrorKind};

/// The user's choice of items.
#[derive(Debug, Clone)]
pub(crate) struct Select {
    only: Option<GlobSet>,
    exclude: GlobSet,
    /// Only read-only items.
    pub(crate) read_only: bool,
}

impl Select {
    /// The selection of `--tools`, `--exclude` and `--read-only`; a glob that does not parse
    /// is an error naming it.
    pub(crate) fn new(
        only: &[String],
        exclude: &[String],
        read_only: bool,
    ) -> Result<Select, Error> {
        Ok(Select {
            only: if only.is_empty() {
                None
            } else {
                Some(globs(only, "--tools")?)
            },
            exclude: globs(exclude, "--exclude")?,
            read_only,
        })
    }

    /// Whether the item named `name` (its strata id `id`), read-only or not, is exposed.
    pub(crate) fn keeps(&self, name: &str, id: &str, read_only: bool) -> bool {
        let matches = |set: &GlobSet| set.is_match(name) || set.is_match(id);
        if self.read_only && !read_only {
            return false;
        }
        if matches(&self.exclude) {
            return false;
        }
        self.only.as_ref().is_none_or(matches)
    }
}

fn globs(patterns: &[String], option: &str) -> Result<GlobSet, Error> {
    let mut set = GlobSetBuilder::new();
    for pattern in patterns {
        let glob = Glob::new(pattern).map_err(|e| {
            crate::request_error(
                ErrorKind::Invalid,
                format!("{option} `{}`: {e}", strata_core::shown(pattern)),
                "a glob such as `examples.*` or `plans/*`: `*` matches any text, `?` one character",
            )
        })?;
        set.add(glob);
    }
    set.build().map_err(|e| {
        crate::request_error(
            ErrorKind::Invalid,
            format!("{option}: {e}"),
            "a glob such as `examples.*`",
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn select(only: &[&str], exclude: &[&str], read_only: bool) -> Select {
        let own = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        Select::new(&own(only), &own(exclude), read_only).unwrap()
    }

    #[test]
    fn globs_match_the_name_or_the_id_and_exclude_wins() {
        let s = select(&["examples.*", "plans/*"], &["examples.flaky"], false);
        assert!(s.keeps("examples.echo", "examples/echo", false));
        assert!(s.keeps("plans.diamond", "plans/diamond.yaml", false));
        assert!(!s.keeps("examples.flaky", "examples/flaky", false));
        assert!(!s.keeps("graphs.words", "graphs/words", false));
        assert!(select(&[], &[], false).keeps("anything", "any", false));
    }

    #[test]
    fn read_only_keeps_only_read_only_items() {
        let s = select(&[], &[], true);
        assert!(s.keeps("examples.echo", "examples/echo", true));
        assert!(!s.keeps("examples.echo", "examples/echo", false));
    }

    #[test]
    fn a_glob_that_does_not_parse_is_named() {
        let e = Select::new(&["a[".to_string()], &[], false).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Invalid);
        assert!(e.message().starts_with("--tools `a[`: "), "{}", e.message());
    }
}
