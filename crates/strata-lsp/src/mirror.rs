//! The project as the editor sees it: a copy of the project's files in a private directory,
//! each open document written over its file as it is typed, which the check reads instead
//! of the files on disk. A file closed unsaved gets its text from disk back.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use strata_app::tree_copy::{copy_tree, Unusual};
use tempfile::TempDir;

/// Directories of a project that no check reads: build output, version control, runs.
const SKIPPED: [&str; 4] = [".git", ".strata", "target", "node_modules"];

/// Where edits are written before they replace a file (atomically, by a rename).
const STAGING: &str = ".strata-lsp";

/// The copy of one project.
#[derive(Debug)]
pub struct Mirror {
    /// The project on disk.
    source: PathBuf,
    /// The copy.
    dir: TempDir,
}

impl Mirror {
    /// Copies the project at `source` (its files, and its symbolic links as links).
    pub fn of(source: &Path) -> io::Result<Mirror> {
        let dir = tempfile::Builder::new().prefix("strata-lsp").tempdir()?;
        copy_tree(source, dir.path(), &SKIPPED, Unusual::Skip)?;
        fs::create_dir_all(dir.path().join(STAGING))?;
        Ok(Mirror {
            source: source.to_path_buf(),
            dir,
        })
    }

    /// The root of the copy.
    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// The project on disk.
    pub fn source(&self) -> &Path {
        &self.source
    }

    /// Writes `text` as the file at `relative` in the copy.
    pub fn write(&self, relative: &Path, text: &str) -> io::Result<()> {
        let target = self.root().join(relative);
        if let Some(parent) = target.parent() {
            fs::create_dir_all(parent)?;
        }
        let staged = tempfile::NamedTempFile::new_in(self.root().join(STAGING))?;
        fs::write(staged.path(), text)?;
        staged.persist(&target).map_err(|e| e.error)?;
        Ok(())
    }

    /// Puts back the file at `relative` as it is on disk (removed when it is not there).
    pub fn restore(&self, relative: &Path) -> io::Result<()> {
        match fs::read_to_string(self.source.join(relative)) {
            Ok(text) => self.write(relative, &text),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                match fs::remove_file(self.root().join(relative)) {
                    Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
                    _ => Ok(()),
                }
            }
            Err(e) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_replace_the_copy_and_closing_restores_the_disk() {
        let project = tempfile::tempdir().unwrap();
        fs::create_dir_all(project.path().join("tools/x")).unwrap();
        fs::create_dir_all(project.path().join(".git")).unwrap();
        fs::write(project.path().join("tools/x/a.yaml"), "disk").unwrap();
        let mirror = Mirror::of(project.path()).unwrap();
        let a = Path::new("tools/x/a.yaml");
        assert_eq!(fs::read_to_string(mirror.root().join(a)).unwrap(), "disk");
        assert!(!mirror.root().join(".git").exists());
        mirror.write(a, "typed").unwrap();
        assert_eq!(fs::read_to_string(mirror.root().join(a)).unwrap(), "typed");
        mirror.restore(a).unwrap();
        assert_eq!(fs::read_to_string(mirror.root().join(a)).unwrap(), "disk");
        let new = Path::new("tools/new.yaml");
        mirror.write(new, "n").unwrap();
        mirror.restore(new).unwrap();
        assert!(!mirror.root().join(new).exists());
    }
}
