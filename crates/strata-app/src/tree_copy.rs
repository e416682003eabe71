//! Copying a project's tree: the one copy a run's slot on a Ray node ([`crate::RunSlots`]) and
//! the editor's mirror of a project (`strata lsp`) are both made with.

use std::fs::{self, File, FileTimes};
use std::io;
use std::os::unix::fs::symlink;
use std::path::Path;

/// What [`copy_tree`] does with an entry that is neither a file, a folder nor a link (a
/// FIFO, a socket, a device).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unusual {
    /// The copy fails, naming it.
    Refuse,
    /// It is left out.
    Skip,
}

/// Copies what the directory `from` holds into the existing directory `to`: folders with
/// their modes, files with their bytes, modes and modification times, links as links; at
/// any depth, an entry named as one of `skipped` is left out, and an unusual one as
/// `unusual` says.
pub fn copy_tree(from: &Path, to: &Path, skipped: &[&str], unusual: Unusual) -> io::Result<()> {
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name();
        if skipped.iter().any(|s| name == *s) {
            continue;
        }
        let source = entry.path();
        let target = to.join(&name);
        let meta = fs::symlink_metadata(&source)?;
        let kind = meta.file_type();
        if kind.is_symlink() {
            symlink(fs::read_link(&source)?, &target)?;
        } else if kind.is_dir() {
            fs::create_dir(&target)?;
            copy_tree(&source, &target, skipped, unusual)?;
            fs::set_permissions(&target, meta.permissions())?;
        } else if kind.is_file() {
            fs::copy(&source, &target)?;
            File::open(&target)?.set_times(FileTimes::new().set_modified(meta.modified()?))?;
        } else if unusual == Unusual::Refuse {
            return Err(io::Error::other(format!(
                "`{}` is not a file, a folder or a link",
                source.display()
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::net::UnixListener;

    use super::*;

    /// A tree with a file, a read-only folder, a link, a skipped folder and a socket.
    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir_all(root.join("tools/x")).unwrap();
        fs::write(root.join("tools/x/a.yaml"), "a").unwrap();
        symlink("x/a.yaml", root.join("tools/link.yaml")).unwrap();
        fs::create_dir_all(root.join("tools/.git")).unwrap();
        fs::write(root.join("tools/.git/HEAD"), "ref").unwrap();
        fs::set_permissions(root.join("tools/x"), fs::Permissions::from_mode(0o555)).unwrap();
        UnixListener::bind(root.join("zz.sock")).unwrap();
        dir
    }

    #[test]
    fn files_folders_and_links_are_copied_as_they_are_and_skipped_names_left_out() {
        let from = tree();
        let to = tempfile::tempdir().unwrap();
        copy_tree(from.path(), to.path(), &[".git"], Unusual::Skip).unwrap();
        assert_eq!(
            fs::read_to_string(to.path().join("tools/x/a.yaml")).unwrap(),
            "a"
        );
        assert_eq!(
            fs::read_link(to.path().join("tools/link.yaml")).unwrap(),
            Path::new("x/a.yaml")
        );
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&to.path().join("tools/x")), 0o555);
        let modified = |p: &Path| fs::metadata(p).unwrap().modified().unwrap();
        assert_eq!(
            modified(&to.path().join("tools/x/a.yaml")),
            modified(&from.path().join("tools/x/a.yaml"))
        );
        assert!(!to.path().join("tools/.git").exists());
        assert!(!to.path().join("zz.sock").exists());
        fs::set_permissions(to.path().join("tools/x"), fs::Permissions::from_mode(0o755)).unwrap();
        fs::set_permissions(
            from.path().join("tools/x"),
            fs::Permissions::from_mode(0o755),
        )
        .unwrap();
    }

    #[test]
    fn an_unusual_entry_refused_fails_the_copy_naming_it() {
        let from = tree();
        let to = tempfile::tempdir().unwrap();
        let err = copy_tree(from.path(), to.path(), &[], Unusual::Refuse).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "`{}` is not a file, a folder or a link",
                from.path().join("zz.sock").display()
            )
        );
        for dir in [from.path(), to.path()] {
            let _ = fs::set_permissions(dir.join("tools/x"), fs::Permissions::from_mode(0o755));
        }
    }
}
