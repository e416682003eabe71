//! Tools compiled once per project: a graph step, a plan step or a hook calling the same tool
//! again reuses its executor chain, merged config and compiled stages 3–6, for as long as every
//! file of its chain is the same.
//!
//! A hit costs one `stat` per file of the chain: a file whose identity (device, inode, size,
//! modification time) is what it was when it was compiled is taken as unchanged. Only when
//! that time is too close to the compile to be trusted (a file written within the file
//! system's timestamp granularity of being read, which a later write in the same tick would
//! not change) is the file read again and its content hash compared.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

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
    /// Every file of the chain as it was when it was compiled.
    files: Vec<CompiledFile>,
}

/// A file of a compiled chain: where it is, its identity and the hash of its content.
#[derive(Debug)]
struct CompiledFile {
    path: PathBuf,
    stamp: Option<Stamp>,
    hash: u64,
}

/// What identifies a file's content without reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: SystemTime,
    /// Whether the modification time was far enough before the file was read to be trusted.
    settled: bool,
}

/// How close to a read a modification time must not be for the time to identify the content:
/// coarser than any file system strata runs on (ext4 and tmpfs: ns; FAT: 2 s).
const GRANULARITY: Duration = Duration::from_secs(2);

impl Stamp {
    /// The identity of the file at `path` (symbolic links followed), `read_at` the time its
    /// content was read.
    fn of(path: &Path, read_at: SystemTime) -> Option<Stamp> {
        let meta = std::fs::metadata(path).ok()?;
        let mtime = meta.modified().ok()?;
        let settled = read_at
            .duration_since(mtime)
            .is_ok_and(|age| age > GRANULARITY);
        Some(Stamp {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            mtime,
            settled,
        })
    }

    /// Whether `now` shows the same file, and the stamp can be trusted without a read.
    fn vouches_for(&self, now: &Stamp) -> bool {
        self.settled
            && (self.dev, self.ino, self.size, self.mtime)
                == (now.dev, now.ino, now.size, now.mtime)
    }
}

impl CompiledTool {
    /// Loads and compiles tool `id` of `project`.
    fn compile(project: &Project, id: &str) -> Result<CompiledTool, Error> {
        let read_at = SystemTime::now();
        let chain = ToolChain::load(project, id)?;
        let files = chain
            .links
            .iter()
            .map(|l| CompiledFile {
                stamp: project
                    .confine(&l.path)
                    .ok()
                    .and_then(|real| Stamp::of(&real, read_at)),
                path: l.path.clone(),
                hash: hash(l.doc.text.as_bytes()),
            })
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
    /// inside `tools/`): by its identity when that can be trusted, else by its content.
    fn is_current(&self, project: &Project, reads: &AtomicU64) -> bool {
        self.files.iter().all(|file| {
            let Ok(real) = project.confine(&file.path) else {
                return false;
            };
            let now = SystemTime::now();
            if let (Some(then), Some(current)) = (&file.stamp, Stamp::of(&real, now)) {
                if then.vouches_for(&current) {
                    return true;
                }
            }
            reads.fetch_add(1, Ordering::Relaxed);
            project
                .read(&file.path)
                .is_ok_and(|bytes| hash(&bytes) == file.hash)
        })
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
    stats: CacheCounters,
}

/// How the cache has served so far.
#[derive(Debug, Default)]
struct CacheCounters {
    hits: AtomicU64,
    misses: AtomicU64,
    reads: AtomicU64,
}

/// How often the cache of compiled tools was hit, missed, and had to read a file again to
/// trust a hit (see the module's documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CacheStats {
    /// Calls served by a compiled tool whose files had not changed.
    pub hits: u64,
    /// Calls that compiled the tool (first use, or a file of its chain changed).
    pub misses: u64,
    /// Files read again because their identity could not vouch for their content.
    pub reads: u64,
}

impl ToolCache {
    /// Tool `id`, compiled now or taken from the cache when its files have not changed.
    pub fn get(&self, project: &Project, id: &str) -> Result<Arc<CompiledTool>, Error> {
        let cached = self.lock().get(id).cloned();
        if let Some(tool) = cached.filter(|t| t.is_current(project, &self.stats.reads)) {
            self.stats.hits.fetch_add(1, Ordering::Relaxed);
            return Ok(tool);
        }
        self.stats.misses.fetch_add(1, Ordering::Relaxed);
        let tool = Arc::new(CompiledTool::compile(project, id)?);
        self.lock().insert(id.to_string(), Arc::clone(&tool));
        Ok(tool)
    }

    /// How the cache has served so far.
    pub fn stats(&self) -> CacheStats {
        CacheStats {
            hits: self.stats.hits.load(Ordering::Relaxed),
            misses: self.stats.misses.load(Ordering::Relaxed),
            reads: self.stats.reads.load(Ordering::Relaxed),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<CompiledTool>>> {
        self.tools.lock().unwrap_or_else(|e| e.into_inner())
    }
}
