//! `strata init [DIR]`: a new project that `strata check` passes and `strata run` runs — the
//! shipped runtimes, one example tool, a directive and a graph calling it, commented project
//! settings, and a `.gitignore` for the run records.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use strata_core::{Error, ErrorKind, Layer};

use crate::outcome::report;

/// Options of `strata init`.
#[derive(Debug, Args)]
pub(crate) struct InitArgs {
    /// The project directory, created when it does not exist (default: the current directory)
    #[arg(default_value = ".", value_hint = clap::ValueHint::DirPath)]
    pub(crate) dir: PathBuf,
    /// The global options; `--json` prints `{"ok": true, "project", "files": […]}`
    #[command(flatten)]
    pub(crate) shared: crate::shared_args::SharedArgs,
}

/// Every file of a new project: its path under the project, and its text. The runtimes are
/// the repository's own files.
const FILES: [(&str, &str); 10] = [
    (
        "tools/runtimes/subprocess.yaml",
        include_str!("../../../tools/runtimes/subprocess.yaml"),
    ),
    (
        "tools/runtimes/python.yaml",
        include_str!("../../../tools/runtimes/python.yaml"),
    ),
    (
        "tools/runtimes/node.yaml",
        include_str!("../../../tools/runtimes/node.yaml"),
    ),
    (
        "tools/runtimes/bash.yaml",
        include_str!("../../../tools/runtimes/bash.yaml"),
    ),
    ("tools/hello.yaml", include_str!("init/hello.yaml")),
    ("tools/scripts/hello.py", include_str!("init/hello.py")),
    ("tools/graphs/hello.yaml", include_str!("init/graph.yaml")),
    ("directives/hello.md", include_str!("init/hello.md")),
    ("strata.yaml", include_str!("init/strata.yaml")),
    (".gitignore", include_str!("init/gitignore")),
];

/// Writes the files of a new project into `dir`; nothing is written when one of them exists
/// (a link counts, even one leading nowhere) or when a directory on the way is a link
/// leading outside `dir`: writes are confined to the project as reads are.
pub(crate) fn create(dir: &Path) -> Result<(), Error> {
    let taken: Vec<&str> = FILES
        .iter()
        .map(|(rel, _)| *rel)
        .filter(|rel| std::fs::symlink_metadata(dir.join(rel)).is_ok())
        .collect();
    if !taken.is_empty() {
        return Err(Error::new(
            Layer::REQUEST,
            ErrorKind::Invalid,
            format!(
                "`{}` already has {}",
                dir.display(),
                taken
                    .iter()
                    .map(|t| format!("`{t}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )
        .with_hint(
            "strata init never overwrites a file: choose a new directory, or move these away",
        ));
    }
    for (rel, _) in FILES {
        confined(dir, rel)?;
    }
    for (rel, text) in FILES {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io("create", parent, e))?;
        }
        confined(dir, rel)?;
        // Never through a link: a file that appeared meanwhile is not overwritten.
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .and_then(|mut f| f.write_all(text.as_bytes()))
            .map_err(|e| Error::io("write", &path, e))?;
    }
    Ok(())
}

/// Refuses `rel` under `dir` when one of its directories that exist is a symbolic link
/// leading outside `dir` (or nowhere), so that nothing is written elsewhere.
fn confined(dir: &Path, rel: &str) -> Result<(), Error> {
    // A directory not made yet holds no link.
    let Ok(real_dir) = dir.canonicalize() else {
        return Ok(());
    };
    let mut sub = PathBuf::new();
    let parents: Vec<&str> = rel.split('/').collect();
    for part in &parents[..parents.len() - 1] {
        sub.push(part);
        let path = dir.join(&sub);
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            return Ok(());
        };
        if !meta.file_type().is_symlink() {
            continue;
        }
        let target = match path.canonicalize() {
            Ok(real) if real.starts_with(&real_dir) => continue,
            Ok(real) => real,
            Err(_) => std::fs::read_link(&path).unwrap_or(path),
        };
        return Err(Error::new(
            Layer::REQUEST,
            ErrorKind::Forbidden,
            format!(
                "`{}` leads outside `{}` (to `{}`)",
                sub.display(),
                dir.display(),
                target.display()
            ),
        )
        .with_hint("strata init writes only inside the new project: remove the link"));
    }
    Ok(())
}

/// What to type next, from the directory `init` ran in.
fn next_steps(dir: &Path) -> String {
    let mut out = format!("created a strata project in `{}`\n\nnext:\n", dir.display());
    if dir != Path::new(".") {
        let _ = writeln!(out, "  cd {}", dir.display());
    }
    for line in [
        "strata check                                        # every file, nothing runs",
        "strata run hello -p name=Ann                        # the tool",
        "strata run directives/hello.md --input name=Ann     # a directive calling it",
        "strata run graphs/hello --input name=Ann            # a graph calling it in a loop",
        "strata config                                       # the settings in force",
    ] {
        let _ = writeln!(out, "  {line}");
    }
    out
}

/// Runs `strata init`.
pub(crate) fn run(args: InitArgs) -> ExitCode {
    match create(&args.dir) {
        Ok(()) => {
            let text = if args.shared.json {
                let files: Vec<&str> = FILES.iter().map(|(rel, _)| *rel).collect();
                let doc = serde_json::json!({"ok": true, "project": args.dir, "files": files});
                serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n"
            } else {
                next_steps(&args.dir)
            };
            crate::output::print_styled(&text);
            ExitCode::SUCCESS
        }
        Err(e) => report(strata_app::Failure::Error(e), None, args.shared.json),
    }
}
