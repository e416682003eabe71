//! Tools compiled once per project: a graph step, a plan step or a hook calling the same tool
//! again reuses its executor chain, merged config and compiled stages 3–6, for as long as every
//! file of its chain is byte for byte the same.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use strata_core::{Error, FieldPath};
use strata_pipeline::Template;

use crate::chain::ToolChain;
use crate::registry::Project;
use crate::stages::{stage_chain, take_literals, Literal};

/// A tool ready to be called any number of times.
#[derive(Debug)]
pub struct CompiledTool {
    /// Its executor chain.
    pub chain: ToolChain,
    /// The merged config with `{literal: …}` values taken out.
    pub config: Value,
    /// The `{literal: …}` values.
    pub literals: Vec<Literal>,
    /// The config compiled for stages 3–6.
    pub template: Template,
    /// Every file of the chain and the hash of its content when it was compiled.
    files: Vec<(PathBuf, u64)>,
}

impl CompiledTool {
    /// Loads and compiles tool `id` of `project`.
    fn compile(project: &Project, id: &str) -> Result<CompiledTool, Error> {
        let chain = ToolChain::load(project, id)?;
        let files = chain
            .links
            .iter()
            .map(|l| (l.path.clone(), hash(l.doc.text.as_bytes())))
            .collect();
        let mut config = Value::Object(chain.merged_config());
        let literals =
            take_literals(&mut config).map_err(|e| chain.locate(e.at_path(&FieldPath::root())))?;
        let template = Template::compile(&config, &stage_chain(), &project.limits)
            .map_err(|e| chain.locate(crate::config_error(e)))?;
        Ok(CompiledTool {
            chain,
            config,
            literals,
            template,
            files,
        })
    }

    /// True while every file of the chain still holds what was compiled (and still lies
    /// inside `tools/`).
    fn is_current(&self, project: &Project) -> bool {
        self.files
            .iter()
            .all(|(path, h)| project.read(path).is_ok_and(|bytes| hash(&bytes) == *h))
    }
}

fn hash(bytes: &[u8]) -> u64 {
    let mut h = std::hash::DefaultHasher::new();
    bytes.hash(&mut h);
    h.finish()
}

/// The compiled tools of one project, shared by every clone of the [`Project`].
#[derive(Debug, Default)]
pub struct ToolCache {
    tools: Mutex<HashMap<String, Arc<CompiledTool>>>,
}

impl ToolCache {
    /// Tool `id`, compiled now or taken from the cache when its files have not changed.
    pub fn get(&self, project: &Project, id: &str) -> Result<Arc<CompiledTool>, Error> {
        let cached = self.lock().get(id).cloned();
        if let Some(tool) = cached.filter(|t| t.is_current(project)) {
            return Ok(tool);
        }
        let tool = Arc::new(CompiledTool::compile(project, id)?);
        self.lock().insert(id.to_string(), Arc::clone(&tool));
        Ok(tool)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<CompiledTool>>> {
        self.tools.lock().unwrap_or_else(|e| e.into_inner())
    }
}
