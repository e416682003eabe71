//! Watches the project's files while serving: once a second, the names, sizes and times of
//! the files under `tools/`, `directives/`, `plans/` and `prompts/` (and `strata.yaml`) are
//! compared with the last look; a difference reloads the catalog and sends
//! `notifications/tools/list_changed` (and the prompts' and resources') to every session.
//! Polling needs no watcher per directory and behaves the same on every file system; a look
//! at a 1,000-tool project is a thousand `stat`s.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::server::Shared;

/// How often the project is looked at.
const EVERY: Duration = Duration::from_secs(1);

/// The folders (and file) whose changes change what is served.
const WATCHED: [&str; 5] = ["tools", "directives", "plans", "prompts", "strata.yaml"];

/// Starts watching in the background, for as long as the server runs.
pub(crate) fn start(shared: Arc<Shared>) {
    tokio::spawn(async move {
        let root = shared.app.root.clone();
        let mut last = look(&root);
        loop {
            tokio::time::sleep(EVERY).await;
            let at = root.clone();
            let Ok(now) = tokio::task::spawn_blocking(move || look(&at)).await else {
                continue;
            };
            if now == last {
                continue;
            }
            last = now;
            let reloading = shared.clone();
            if tokio::task::spawn_blocking(move || reloading.reload())
                .await
                .is_err()
            {
                continue;
            }
            let mut gone = Vec::new();
            for (i, peer) in shared.peers().iter().enumerate() {
                if peer.notify_tool_list_changed().await.is_err() {
                    gone.push(i);
                    continue;
                }
                let _ = peer.notify_prompt_list_changed().await;
                let _ = peer.notify_resource_list_changed().await;
            }
            shared.forget(&gone);
        }
    });
}

/// A fingerprint of the watched files: their paths, sizes and modification times.
fn look(root: &Path) -> u64 {
    let mut hasher = DefaultHasher::new();
    let mut stack: Vec<std::path::PathBuf> = WATCHED.iter().map(|w| root.join(w)).collect();
    while let Some(path) = stack.pop() {
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        path.hash(&mut hasher);
        meta.len().hash(&mut hasher);
        meta.modified().ok().hash(&mut hasher);
        if meta.is_dir() {
            if let Ok(entries) = std::fs::read_dir(&path) {
                let mut names: Vec<_> = entries.flatten().map(|e| e.path()).collect();
                names.sort();
                stack.extend(names);
            }
        }
    }
    hasher.finish()
}
