//! The executor chain: tool → runtime(s) → `subprocess` primitive, and the merged config.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use strata_core::{Error, ErrorKind, FieldPath, Layer, PathSeg};
use strata_doc::Document;

use crate::registry::Project;
use crate::tool_file::{path_of, read_tool_file, ToolFile};

/// The id of the primitive every chain ends at.
pub const PRIMITIVE: &str = "runtimes/subprocess";

/// Most files in one chain, the tool and the primitive included.
pub const MAX_LINKS: usize = 10;

/// One file of a chain.
#[derive(Debug, Clone)]
pub struct Link {
    /// The tool id.
    pub id: String,
    /// The file, absolute.
    pub path: PathBuf,
    /// The parsed document (for locating errors).
    pub doc: Document,
    /// The typed fields.
    pub file: ToolFile,
}

/// A loaded chain: `links[0]` is the tool being run, the last link the primitive.
#[derive(Debug, Clone)]
pub struct ToolChain {
    /// The files, tool first.
    pub links: Vec<Link>,
}

/// Reads one tool file of the project.
pub fn load_link(project: &Project, id: &str, path: &Path) -> Result<Link, Error> {
    let bytes = project.read(path)?;
    let (doc, file) = read_tool_file(&project.display_name(path), bytes, &project.limits)?;
    Ok(Link {
        id: id.to_string(),
        path: path.to_path_buf(),
        doc,
        file,
    })
}

fn names(ids: &[String]) -> String {
    ids.join(" -> ")
}

impl ToolChain {
    /// Loads tool `id` and follows `executor` until the primitive.
    pub fn load(project: &Project, id: &str) -> Result<ToolChain, Error> {
        let path = project.require_tool(id)?;
        let mut links = vec![load_link(project, id, &path)?];
        loop {
            let last = links.last().expect("a chain has a first link");
            let Some(executor) = last.file.executor.clone() else {
                if last.id != PRIMITIVE {
                    let err = Error::new(
                        Layer::REQUEST,
                        ErrorKind::Invalid,
                        format!(
                            "`{}` names no executor; only the subprocess primitive ({PRIMITIVE}) has none",
                            last.id
                        ),
                    )
                    .with_hint(format!("add `executor: {PRIMITIVE}` or another runtime"));
                    return Err(last.doc.locate_error(err));
                }
                return Ok(ToolChain { links });
            };
            let ids: Vec<String> = links.iter().map(|l| l.id.clone()).collect();
            let at_executor = |err: Error| {
                let err = err.with_path(path_of(&["executor"]));
                last.doc.locate_error(err)
            };
            let next = resolve_executor(project, &executor).map_err(at_executor)?;
            let Some((next_id, next_path)) = next else {
                let mut chain = ids.clone();
                chain.push(executor.clone());
                let err = project
                    .unknown_tool(&executor, "executor")
                    .map_message(|m| format!("{m} in chain {}", names(&chain)));
                return Err(at_executor(err));
            };
            if let Some(pos) = ids.iter().position(|i| *i == next_id) {
                let mut cycle = ids[pos..].to_vec();
                cycle.push(next_id);
                return Err(at_executor(
                    Error::new(
                        Layer::REQUEST,
                        ErrorKind::Cycle,
                        format!("executor cycle: {}", names(&cycle)),
                    )
                    .with_hint(format!("every chain must end at {PRIMITIVE}")),
                ));
            }
            if links.len() == MAX_LINKS {
                let mut chain = ids;
                chain.push(next_id);
                return Err(at_executor(
                    Error::new(
                        Layer::REQUEST,
                        ErrorKind::Limit,
                        format!(
                            "executor chain is longer than {MAX_LINKS} links: {}",
                            names(&chain)
                        ),
                    )
                    .with_hint("run the tool on a runtime closer to the primitive"),
                ));
            }
            let link = load_link(project, &next_id, &next_path)?;
            links.push(link);
        }
    }

    /// The tool being run.
    pub fn tool(&self) -> &Link {
        &self.links[0]
    }

    /// The runtime the tool runs on (its executor), or the tool itself when it is the primitive.
    pub fn runtime(&self) -> &Link {
        self.links.get(1).unwrap_or(&self.links[0])
    }

    /// The chain as `tool -> runtime -> primitive`.
    pub fn describe(&self) -> String {
        let ids: Vec<String> = self.links.iter().map(|l| l.id.clone()).collect();
        names(&ids)
    }

    /// The configs merged primitive first, tool last: maps deep-merged, everything else
    /// (lists included) replaced.
    pub fn merged_config(&self) -> Map<String, Value> {
        let mut out = Map::new();
        for link in self.links.iter().rev() {
            if let Some(config) = &link.file.config {
                merge_into(&mut out, config);
            }
        }
        out
    }

    /// The names declared secret anywhere in the chain.
    pub fn secrets(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for link in self.links.iter().rev() {
            for s in &link.file.secrets {
                if !out.contains(s) {
                    out.push(s.clone());
                }
            }
        }
        out
    }

    /// The document that defines the field at `path` (`config.args[2]`): the link closest to
    /// the tool that has it, else the tool's.
    pub fn doc_for(&self, path: &FieldPath) -> &Document {
        self.links
            .iter()
            .find(|l| path.lookup(&l.doc.value).is_some())
            .map_or(&self.links[0].doc, |l| &l.doc)
    }

    /// Attaches the file, line and column of the field an error is about.
    pub fn locate(&self, err: Error) -> Error {
        if err.location().is_some() {
            return err;
        }
        let doc = self.doc_for(err.path());
        doc.locate_error(err)
    }
}

/// The executor named `name`: the id itself, else `runtimes/<name>` (an error when the file
/// found leads outside `tools/`).
fn resolve_executor(project: &Project, name: &str) -> Result<Option<(String, PathBuf)>, Error> {
    if let Some(p) = project.find_tool(name)? {
        return Ok(Some((name.to_string(), p)));
    }
    if name.contains('/') {
        return Ok(None);
    }
    let id = format!("runtimes/{name}");
    Ok(project.find_tool(&id)?.map(|p| (id, p)))
}

/// Deep-merges `over` into `base`: maps merge key by key, anything else replaces.
pub fn merge_into(base: &mut Map<String, Value>, over: &Map<String, Value>) {
    for (k, v) in over {
        match (base.get_mut(k), v) {
            (Some(Value::Object(b)), Value::Object(o)) => merge_into(b, o),
            _ => {
                base.insert(k.clone(), v.clone());
            }
        }
    }
}

/// The path `config.<rest>`.
pub fn config_path(rest: &FieldPath) -> FieldPath {
    rest.under(&FieldPath(vec![PathSeg::Key("config".into())]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn project(files: &[(&str, &str)]) -> (tempfile::TempDir, Project) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("tools")).unwrap();
        for (f, text) in files {
            let p = dir.path().join("tools").join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        let p = Project::at(dir.path()).unwrap();
        (dir, p)
    }

    const PRIM: (&str, &str) = (
        "runtimes/subprocess.yaml",
        "config: {args: [], env: {A: p, B: p}, timeout: 60}\n",
    );

    #[test]
    fn merges_primitive_first_tool_last() {
        let (_d, p) = project(&[
            PRIM,
            (
                "runtimes/r.yaml",
                "executor: runtimes/subprocess\nconfig: {args: [r1, r2], env: {B: r}}\nsecrets: [S1]\n",
            ),
            (
                "t.yaml",
                "executor: r\nconfig: {args: [t], env: {C: t}}\nsecrets: [S2, S1]\n",
            ),
        ]);
        let chain = ToolChain::load(&p, "t").unwrap();
        assert_eq!(chain.describe(), "t -> runtimes/r -> runtimes/subprocess");
        assert_eq!(
            Value::Object(chain.merged_config()),
            json!({"args": ["t"], "env": {"A": "p", "B": "r", "C": "t"}, "timeout": 60})
        );
        assert_eq!(chain.secrets(), ["S1", "S2"]);
        let path = config_path(&FieldPath(vec![PathSeg::Key("timeout".into())]));
        assert_eq!(chain.doc_for(&path).name, "tools/runtimes/subprocess.yaml");
    }

    #[test]
    fn cycles_and_unknown_executors_name_the_chain() {
        let (_d, p) = project(&[
            PRIM,
            ("a.yaml", "executor: b\n"),
            ("b.yaml", "executor: a\n"),
            ("c.yaml", "executor: runtimes/pythn\n"),
            ("runtimes/python.yaml", "executor: runtimes/subprocess\n"),
            ("d.yaml", "description: no executor\n"),
        ]);
        let e = ToolChain::load(&p, "a").unwrap_err();
        assert_eq!(e.message(), "executor cycle: a -> b -> a");
        assert_eq!(e.location().unwrap().file, "tools/b.yaml");
        let e = ToolChain::load(&p, "c").unwrap_err();
        assert_eq!(
            e.message(),
            "unknown executor `runtimes/pythn` in chain c -> runtimes/pythn"
        );
        assert_eq!(e.hint(), Some("did you mean `runtimes/python`?"));
        let e = ToolChain::load(&p, "d").unwrap_err();
        assert_eq!(
            e.message(),
            "`d` names no executor; only the subprocess primitive (runtimes/subprocess) has none"
        );
    }

    #[test]
    fn chains_are_at_most_ten_links() {
        let mut files: Vec<(String, String)> = (0..11)
            .map(|i| (format!("l{i}.yaml"), format!("executor: l{}\n", i + 1)))
            .collect();
        files.push(("l11.yaml".into(), "executor: runtimes/subprocess\n".into()));
        files.push((PRIM.0.into(), PRIM.1.into()));
        let refs: Vec<(&str, &str)> = files
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        let (_d, p) = project(&refs);
        let e = ToolChain::load(&p, "l0").unwrap_err();
        assert_eq!(
            e.message(),
            "executor chain is longer than 10 links: l0 -> l1 -> l2 -> l3 -> l4 -> l5 -> l6 -> l7 -> l8 -> l9 -> l10"
        );
        assert!(ToolChain::load(&p, "l3").is_ok());
    }
}
