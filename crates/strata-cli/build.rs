//! Puts the commit into `strata --version` when the crate is built from a git checkout:
//! `STRATA_VERSION` is `0.1.0 (commit 1a2b3c4d5e6f)`, or `0.1.0` outside git (a source
//! tarball, no git installed). git runs with an argument vector, never through a shell.
// A build script speaks to cargo on its standard output.
#![allow(clippy::disallowed_macros)]

use std::path::Path;
use std::process::Command;

/// Runs `git <args>` in the crate's directory; its trimmed stdout when it succeeds.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let text = text.trim();
    (out.status.success() && !text.is_empty()).then(|| text.to_string())
}

fn main() {
    let version = std::env::var("CARGO_PKG_VERSION").unwrap_or_default();
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
    let dir = Path::new(&dir);
    let commit = git(dir, &["rev-parse", "--short=12", "HEAD"]);
    let shown = match &commit {
        Some(c) if c.bytes().all(|b| b.is_ascii_hexdigit()) => format!("{version} (commit {c})"),
        _ => version,
    };
    println!("cargo:rustc-env=STRATA_VERSION={shown}");
    // A new commit (HEAD moves, or the branch it names does) builds the version again.
    for path in ["HEAD", "refs/heads", "packed-refs"] {
        if let Some(p) = git(dir, &["rev-parse", "--git-path", path]) {
            let p = dir.join(p);
            if p.exists() {
                println!("cargo:rerun-if-changed={}", p.display());
            }
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}
