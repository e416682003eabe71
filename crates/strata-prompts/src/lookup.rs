//! The lookup of SPEC §6: for key `K` with root space `R`, type `T`, version `V` and default
//! name `D`, the first of `R/T/K.V, R/T/K, R/T/D.V, R/T/D`, the same four for each ancestor
//! of `R`, then `T/K.V, T/K, T/D.V, T/D`, then `D.V, D`, then the configured default
//! template.
//!
//! A [`Plan`] is computed once per settings: the namespaces to visit and the default hit of
//! each, so a lookup is two hash probes per namespace and nothing is formatted unless a
//! version is set (then `K.V` is joined on the stack).

use serde_json::{Map, Value};
use strata_core::Error;

use crate::names::{check_name, check_root_space, check_version, parse_key, Key};
use crate::store::Store;

/// The settings of a manager: where lookups start and what they fall back to.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// The root space (`action_agent`, `org/team`): looked in first, then its ancestors.
    pub root_space: Option<String>,
    /// The type namespace (`main`, `reflection`).
    pub type_: String,
    /// The deployment version (`enterprise`): `K.V` is tried before `K`.
    pub version: Option<String>,
    /// The name every namespace falls back to.
    pub default_name: String,
    /// Variables every render sees, below the feed.
    pub predefined: Map<String, Value>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            root_space: None,
            type_: "main".into(),
            version: None,
            default_name: "default".into(),
            predefined: Map::new(),
        }
    }
}

/// Changes to [`Settings`], for `switch` and for one call: `None` keeps a setting.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overrides {
    /// `Some(None)` clears the root space.
    pub root_space: Option<Option<String>>,
    /// The type.
    pub type_: Option<String>,
    /// `Some(None)` clears the version.
    pub version: Option<Option<String>>,
    /// The default name.
    pub default_name: Option<String>,
    /// The predefined variables (replacing them all).
    pub predefined: Option<Map<String, Value>>,
}

impl Overrides {
    /// True when nothing is overridden.
    pub fn is_empty(&self) -> bool {
        *self == Overrides::default()
    }
}

impl Settings {
    /// These settings with `o` applied, each checked (no name may lead out of the tree).
    pub fn with(&self, o: &Overrides) -> Result<Settings, Error> {
        let mut s = self.clone();
        if let Some(r) = &o.root_space {
            s.root_space = r.clone();
        }
        if let Some(t) = &o.type_ {
            s.type_ = t.clone();
        }
        if let Some(v) = &o.version {
            s.version = v.clone();
        }
        if let Some(d) = &o.default_name {
            s.default_name = d.clone();
        }
        if let Some(p) = &o.predefined {
            s.predefined = p.clone();
        }
        s.check()?;
        Ok(s)
    }

    /// Checks every name.
    pub fn check(&self) -> Result<(), Error> {
        if let Some(r) = &self.root_space {
            check_root_space(r)?;
        }
        check_name("type", &self.type_)?;
        if let Some(v) = &self.version {
            check_version(v)?;
        }
        check_name("default name", &self.default_name)
    }

    /// The root space and each of its ancestors, nearest first (`a/b`, `a`).
    fn roots(&self) -> Vec<&str> {
        let mut out = Vec::new();
        let mut at = self.root_space.as_deref().filter(|r| !r.is_empty());
        while let Some(r) = at {
            out.push(r);
            at = r.rsplit_once('/').map(|(parent, _)| parent);
        }
        out
    }
}

/// One namespace a lookup visits, with its default hit (`D.V` or `D`) found in advance.
#[derive(Debug, Clone, Copy)]
struct Level {
    space: usize,
    default: Option<usize>,
}

/// The lookup for one set of settings, computed in advance.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    /// The root space and its ancestors that exist, nearest first.
    roots: Vec<usize>,
    /// The namespaces of type `T` under them, then `T` itself.
    levels: Vec<Level>,
    /// `D.V` or `D` at the root, else the configured default template.
    last: Option<usize>,
    type_: String,
    version: Option<String>,
    default_name: String,
}

/// Runs `f` on `a.b` without allocating when it is short.
fn joined<R>(a: &str, b: &str, f: impl FnOnce(&str) -> R) -> R {
    let len = a.len() + 1 + b.len();
    let mut buf = [0u8; 128];
    if len > buf.len() {
        return f(&format!("{a}.{b}"));
    }
    buf[..a.len()].copy_from_slice(a.as_bytes());
    buf[a.len()] = b'.';
    buf[a.len() + 1..len].copy_from_slice(b.as_bytes());
    // Both parts are `str`s and `.` is ASCII, so the bytes are UTF-8.
    f(std::str::from_utf8(&buf[..len]).unwrap_or_default())
}

impl Plan {
    /// The plan for `settings` over `store`.
    pub fn new(store: &Store, settings: &Settings) -> Plan {
        let roots: Vec<usize> = settings
            .roots()
            .into_iter()
            .filter_map(|r| store.space_at(r))
            .collect();
        let mut plan = Plan {
            roots,
            levels: Vec::new(),
            last: None,
            type_: settings.type_.clone(),
            version: settings.version.clone(),
            default_name: settings.default_name.clone(),
        };
        plan.levels = plan.levels_for(store, &settings.type_);
        plan.last = plan
            .name_in(store, 0, &plan.default_name)
            .or(store.default_template);
        plan
    }

    fn levels_for(&self, store: &Store, type_: &str) -> Vec<Level> {
        self.roots
            .iter()
            .chain(std::iter::once(&0))
            .filter_map(|&r| store.spaces[r].children.get(type_).copied())
            .map(|space| Level {
                space,
                default: self.name_in(store, space, &self.default_name),
            })
            .collect()
    }

    /// `name.V` then `name` in namespace `space`.
    fn name_in(&self, store: &Store, space: usize, name: &str) -> Option<usize> {
        let stems = &store.spaces[space].stems;
        if let Some(v) = &self.version {
            if let Some(&t) = joined(name, v, |s| stems.get(s)) {
                return Some(t);
            }
        }
        stems.get(name).copied()
    }

    /// The template key `key` resolves to (`None` means `D`), or `None` when nothing matches.
    pub fn resolve(&self, store: &Store, key: Option<&str>) -> Result<Option<usize>, Error> {
        let key = match key {
            Some(k) => parse_key(k)?,
            None => Key {
                type_: None,
                name: &self.default_name,
            },
        };
        let other;
        let levels = match key.type_ {
            Some(t) if t != self.type_ => {
                other = self.levels_for(store, t);
                &other
            }
            _ => &self.levels,
        };
        for level in levels {
            if let Some(t) = self.name_in(store, level.space, key.name) {
                return Ok(Some(t));
            }
            if level.default.is_some() {
                return Ok(level.default);
            }
        }
        Ok(self.last)
    }
}

/// Every template id a lookup of `key` tries, in order, without repeats (a key equal to
/// `D` tries each name once).
pub(crate) fn candidates(settings: &Settings, key: Option<&str>) -> Result<Vec<String>, Error> {
    let key = match key {
        Some(k) => parse_key(k)?,
        None => Key {
            type_: None,
            name: &settings.default_name,
        },
    };
    let type_ = key.type_.unwrap_or(&settings.type_);
    let d = settings.default_name.as_str();
    let names = |out: &mut Vec<String>, prefix: &str, with_key: bool| {
        let mut push = |name: &str| {
            if let Some(v) = &settings.version {
                out.push(format!("{prefix}{name}.{v}"));
            }
            out.push(format!("{prefix}{name}"));
        };
        if with_key {
            push(key.name);
        }
        push(d);
    };
    let mut out = Vec::new();
    for r in settings.roots() {
        names(&mut out, &format!("{r}/{type_}/"), true);
    }
    names(&mut out, &format!("{type_}/"), true);
    names(&mut out, "", false);
    let mut seen = std::collections::HashSet::new();
    out.retain(|c| seen.insert(c.clone()));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::read_value;
    use crate::store::PromptLimits;

    fn store(value: Value, default_template: Option<&str>) -> Store {
        let found = read_value(&value, "t.yaml", &Default::default());
        let mut errors = found.errors;
        let s = Store::build(
            found.defs,
            default_template.map(|s| (s, crate::store::DEFAULT_TEMPLATE)),
            PromptLimits::default(),
            &mut errors,
        );
        assert!(errors.is_empty(), "{errors:?}");
        s
    }

    fn settings(root: Option<&str>, version: Option<&str>) -> Settings {
        Settings {
            root_space: root.map(str::to_string),
            version: version.map(str::to_string),
            ..Settings::default()
        }
    }

    /// The id the fast lookup finds, checked against the first existing candidate.
    fn found(s: &Store, settings: &Settings, key: Option<&str>) -> Option<String> {
        let plan = Plan::new(s, settings);
        let fast = plan
            .resolve(s, key)
            .unwrap()
            .map(|t| s.templates[t].id.clone());
        let slow = candidates(settings, key)
            .unwrap()
            .into_iter()
            .find(|c| s.template(c).is_some())
            .or_else(|| s.default_template.map(|t| s.templates[t].id.clone()));
        assert_eq!(fast, slow, "{key:?} with {settings:?}");
        fast
    }

    #[test]
    fn the_seed_six_step_chain_in_order() {
        let settings = settings(Some("action_agent"), None);
        assert_eq!(
            candidates(&settings, Some("BrowseLink")).unwrap(),
            [
                "action_agent/main/BrowseLink",
                "action_agent/main/default",
                "main/BrowseLink",
                "main/default",
                "default"
            ]
        );
    }

    #[test]
    fn every_step_of_the_chain_wins_when_it_is_the_first_that_exists() {
        let all = [
            "org/team/main/K.v",
            "org/team/main/K",
            "org/team/main/default.v",
            "org/team/main/default",
            "org/main/K.v",
            "org/main/K",
            "org/main/default.v",
            "org/main/default",
            "main/K.v",
            "main/K",
            "main/default.v",
            "main/default",
            "default.v",
            "default",
        ];
        let settings = settings(Some("org/team"), Some("v"));
        assert_eq!(candidates(&settings, Some("K")).unwrap(), all);
        for first in 0..=all.len() {
            let mut tree = serde_json::json!({});
            for id in &all[first..] {
                let mut at = &mut tree;
                let parts: Vec<&str> = id.split('/').collect();
                for p in &parts[..parts.len() - 1] {
                    at = at
                        .as_object_mut()
                        .unwrap()
                        .entry(p.to_string())
                        .or_insert(serde_json::json!({}));
                }
                at[parts[parts.len() - 1]] = serde_json::json!(id);
            }
            let s = store(tree, Some("fallback"));
            let want = all.get(first).map_or("<default template>", |id| id);
            assert_eq!(found(&s, &settings, Some("K")).as_deref(), Some(want));
        }
    }

    #[test]
    fn typed_keys_null_keys_and_misses() {
        let s = store(
            serde_json::json!({
                "main": {"default": "m", "Search": "s"},
                "reflection": {"default": "r", "Search.v": "rs"},
            }),
            None,
        );
        let plain = settings(None, None);
        assert_eq!(found(&s, &plain, None).as_deref(), Some("main/default"));
        assert_eq!(
            found(&s, &plain, Some("Search")).as_deref(),
            Some("main/Search")
        );
        assert_eq!(
            found(&s, &plain, Some("reflection/Search")).as_deref(),
            Some("reflection/default")
        );
        let v = settings(None, Some("v"));
        assert_eq!(
            found(&s, &v, Some("reflection/Search")).as_deref(),
            Some("reflection/Search.v")
        );
        assert_eq!(found(&s, &plain, Some("other/x")), None);
        assert_eq!(
            candidates(&plain, Some("other/x")).unwrap(),
            ["other/x", "other/default", "default"]
        );
        assert_eq!(
            candidates(&v, None).unwrap(),
            ["main/default.v", "main/default", "default.v", "default"]
        );
    }

    #[test]
    fn long_versions_are_joined_on_the_heap() {
        let long = "v".repeat(200);
        let s = store(
            serde_json::json!({"main": {format!("K.{long}"): "x"}}),
            None,
        );
        let settings = settings(None, Some(&long));
        assert_eq!(
            found(&s, &settings, Some("K")),
            Some(format!("main/K.{long}"))
        );
    }
}
