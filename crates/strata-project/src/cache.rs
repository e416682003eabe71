//! Tools compiled once per project: a graph step, a plan step or a hook calling the same tool
//! again reuses its executor chain, merged config and compiled stages 3–6, for as long as every
//! file of its chain is the same.
//!
//! A hit costs one `lstat` per file of the chain, on the path it was found to really have
//! (inside the project) when it was compiled: a file whose identity (device, inode, size,
//! modification time) is what it was then is taken as unchanged. Only when that time is too
//! close to the read to be trusted (a file written within the file system's timestamp
//! granularity of being read, which a later write in the same tick would not change) is the
//! file read again — through the confined path — and its content hash compared; once its
//! time has settled, its identity is recorded anew and vouches for it from then on.

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
    /// The path as the project shows it (read through [`Project::read`], which confines it).
    path: PathBuf,
    /// Where it really was when it was compiled (every link resolved, inside the project).
    real: Option<PathBuf>,
    /// Its identity when it was last found to hold the compiled content.
    stamp: Mutex<Option<Stamp>>,
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
    /// The identity of the file at `path` (a link there is not followed: the path is the one
    /// the file really had, so a link put in its place later is a different identity),
    /// `read_at` the time its content was read.
    fn of(path: &Path, read_at: SystemTime) -> Option<Stamp> {
        let meta = std::fs::symlink_metadata(path).ok()?;
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

/// Checks the tool's `parameters` schema uses the supported subset: once, when the tool is
/// compiled, so no call checks it again.
fn parameters_schema(chain: &ToolChain) -> Result<(), Error> {
    let link = chain.tool();
    let Some(schema) = &link.file.parameters else {
        return Ok(());
    };
    crate::check_schema(schema).map_err(|e| {
        let err = Error::new(
            strata_core::Layer::REQUEST,
            strata_core::ErrorKind::Invalid,
            e.message,
        )
        .with_hint("see docs/tools.md for the supported schema subset")
        .with_path(e.path.under(&FieldPath(vec![strata_core::PathSeg::Key(
            "parameters".into(),
        )])));
        link.doc.locate_error(err)
    })
}

impl CompiledTool {
    /// Loads and compiles tool `id` of `project`.
    fn compile(project: &Project, id: &str) -> Result<CompiledTool, Error> {
        let read_at = SystemTime::now();
        let chain = ToolChain::load(project, id)?;
        parameters_schema(&chain)?;
        let files = chain
            .links
            .iter()
            .map(|l| {
                let real = project.confine(&l.path).ok();
                CompiledFile {
                    stamp: Mutex::new(real.as_deref().and_then(|r| Stamp::of(r, read_at))),
                    real,
                    path: l.path.clone(),
                    hash: hash(l.doc.text.as_bytes()),
                }
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
        self.files
            .iter()
            .all(|file| file.is_current(project, reads))
    }
}

impl CompiledFile {
    /// True while the file holds what was compiled: its identity vouches for it, or, read
    /// again through the confined path, its content hashes the same (and its identity is
    /// recorded anew).
    fn is_current(&self, project: &Project, reads: &AtomicU64) -> bool {
        let now = SystemTime::now();
        let current = self.real.as_deref().and_then(|r| Stamp::of(r, now));
        let stamp = || self.stamp.lock().unwrap_or_else(|e| e.into_inner());
        if let (Some(then), Some(current)) = (*stamp(), current) {
            if then.vouches_for(&current) {
                return true;
            }
        }
        reads.fetch_add(1, Ordering::Relaxed);
        let same = project
            .read(&self.path)
            .is_ok_and(|bytes| hash(&bytes) == self.hash);
        if same {
            *stamp() = current;
        }
        same
    }
}

/// A project file read once while it does not change (the project's `.env`, which the gate,
/// the check and the environment of every call read): a later read costs an `lstat` when the
/// file's identity vouches for the text kept (see [`Stamp`]), and reads the file again when
/// it does not.
#[derive(Debug, Default)]
pub(crate) struct TextMemo {
    kept: Mutex<Option<(PathBuf, Stamp, Arc<str>)>>,
}

impl TextMemo {
    /// The text of `path` (shown as `shown`), a path of `project`: `None` when there is no
    /// such file; an error when it cannot be read or leads outside the project.
    pub(crate) fn text(&self, project: &Project, path: &Path) -> Result<Option<Arc<str>>, Error> {
        if !path.is_file() {
            return Ok(None);
        }
        let real = project.confine(path)?;
        let read_at = SystemTime::now();
        let now = Stamp::of(&real, read_at);
        let kept = || self.kept.lock().unwrap_or_else(|e| e.into_inner());
        if let (Some((at, then, text)), Some(now)) = (&*kept(), now) {
            if *at == real && then.vouches_for(&now) {
                return Ok(Some(Arc::clone(text)));
            }
        }
        let text: Arc<str> =
            strata_doc::read_text(&real, &project.display_name(path), &project.limits)?.into();
        if let Some(stamp) = Stamp::of(&real, read_at) {
            *kept() = Some((real, stamp, Arc::clone(&text)));
        }
        Ok(Some(text))
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

    /// Tool `id` when the cache holds it compiled and its files have not changed; `None`
    /// otherwise (nothing is compiled, and a miss is not counted).
    pub fn current(&self, project: &Project, id: &str) -> Option<Arc<CompiledTool>> {
        let cached = self.lock().get(id).cloned()?;
        cached
            .is_current(project, &self.stats.reads)
            .then_some(cached)
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

#[cfg(test)]
mod tests {
    use std::fs::File;

    use super::*;
    use crate::CacheStats;

    const TOOL: &str = "executor: runtimes/subprocess\nconfig: {command: printf, args: [a]}\n";

    /// A project with the primitive and `t`, every file's time `age` in the past.
    fn project(age: Duration) -> (tempfile::TempDir, Project) {
        let dir = tempfile::tempdir().unwrap();
        let tools = dir.path().join("tools");
        std::fs::create_dir_all(tools.join("runtimes")).unwrap();
        std::fs::write(
            tools.join("runtimes/subprocess.yaml"),
            "config: {args: []}\n",
        )
        .unwrap();
        std::fs::write(tools.join("t.yaml"), TOOL).unwrap();
        for f in ["runtimes/subprocess.yaml", "t.yaml"] {
            age_file(&tools.join(f), age);
        }
        let p = Project::at(dir.path()).unwrap();
        (dir, p)
    }

    fn age_file(path: &Path, age: Duration) {
        let file = File::options().write(true).open(path).unwrap();
        file.set_modified(SystemTime::now() - age).unwrap();
    }

    fn stats(hits: u64, misses: u64, reads: u64) -> CacheStats {
        CacheStats {
            hits,
            misses,
            reads,
        }
    }

    #[test]
    fn a_hit_on_settled_files_reads_nothing() {
        let (_dir, p) = project(Duration::from_secs(3600));
        let first = p.compiled("t").unwrap();
        for _ in 0..3 {
            assert!(Arc::ptr_eq(&first, &p.compiled("t").unwrap()));
        }
        assert_eq!(p.cache_stats(), stats(3, 1, 0));
    }

    #[test]
    fn files_written_just_now_are_read_again_until_their_time_settles() {
        let (dir, p) = project(Duration::ZERO);
        p.compiled("t").unwrap();
        p.compiled("t").unwrap();
        assert_eq!(p.cache_stats(), stats(1, 1, 2), "both files re-read");
        // Once their time lies far enough back, the identity recorded at the next read
        // vouches for them.
        for f in ["runtimes/subprocess.yaml", "t.yaml"] {
            age_file(&dir.path().join("tools").join(f), Duration::from_secs(3600));
        }
        p.compiled("t").unwrap();
        p.compiled("t").unwrap();
        assert_eq!(p.cache_stats(), stats(3, 1, 4));
    }

    #[test]
    fn an_edited_file_is_compiled_again() {
        let (dir, p) = project(Duration::from_secs(3600));
        let first = p.compiled("t").unwrap();
        let path = dir.path().join("tools/t.yaml");
        std::fs::write(&path, TOOL.replace("[a]", "[b]")).unwrap();
        age_file(&path, Duration::from_secs(3600));
        let second = p.compiled("t").unwrap();
        assert!(!Arc::ptr_eq(&first, &second));
        assert_eq!(second.config["args"], serde_json::json!(["b"]));
    }
}
