//! Every `sh` block of the README runs as written, from a fresh copy of the files the
//! repository ships (tools, directives, hooks, plans, prompts, examples), with `strata` the
//! binary under test (`cargo run -q --` in a block stands for it) and an empty HOME. The few
//! lines that cannot run here are named in [`SKIPPED`] with the reason; a synopsis is a
//! `text` block, not an `sh` one.

mod common;
use common::{path_var, repo, Test};

/// Lines (by how they start) not run, and why.
const SKIPPED: [(&str, &str); 6] = [
    (
        "cargo install",
        "the binary under test is the one cargo built",
    ),
    ("cargo test", "this is the test suite"),
    ("pip install", ".ci/python installs and tests the wheel"),
    ("docker build", "needs Docker"),
    ("argo submit", "needs a cluster"),
    (
        "planner |",
        "`planner` and `orchestrator` stand for programs of your own",
    ),
];

/// The `sh` blocks of the README, with the line each starts at.
fn sh_blocks(readme: &str) -> Vec<(usize, String)> {
    let mut blocks = Vec::new();
    let mut current: Option<(usize, String)> = None;
    for (n, line) in readme.lines().enumerate() {
        match (&mut current, line.trim_end()) {
            (None, "```sh") => current = Some((n + 2, String::new())),
            (Some(_), "```") => blocks.extend(current.take()),
            (Some((_, text)), _) => {
                text.push_str(line);
                text.push('\n');
            }
            (None, _) => {}
        }
    }
    blocks
}

/// The block as the shell runs it: skipped lines replaced by `:`, `cargo run -q --` and
/// `cargo run --` by `strata`.
fn script(block: &str) -> String {
    block
        .lines()
        .map(|line| {
            let trimmed = line.trim_start();
            let skipped = SKIPPED
                .iter()
                .chain(&[("orchestrator |", "")])
                .any(|(start, _)| trimmed.starts_with(start));
            if skipped {
                ":".to_string()
            } else {
                line.replace("cargo run -q -- ", "strata ")
                    .replace("cargo run -- ", "strata ")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_sh_block_of_the_readme_runs_as_written() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let blocks = sh_blocks(&readme);
    assert!(blocks.len() >= 10, "{} sh blocks", blocks.len());
    let bin = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_strata"), bin.path().join("strata")).unwrap();
    let path = format!("{}:{}", bin.path().display(), path_var());
    for (line, block) in blocks {
        let project = [
            "tools",
            "directives",
            "hooks",
            "plans",
            "prompts",
            "docs/examples",
        ]
        .into_iter()
        .filter(|sub| repo().join(sub).exists())
        .fold(Test::new(), Test::copy);
        let home = tempfile::tempdir().unwrap();
        let out = std::process::Command::new("sh")
            .args(["-e", "-c", &script(&block)])
            .current_dir(project.path())
            .env_clear()
            .env("PATH", &path)
            .env("HOME", home.path())
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "README.md:{line}: the block failed ({})\n{block}\n--- stdout\n{}\n--- stderr\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn the_skipped_lines_are_few_and_each_has_a_reason() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let skipped = sh_blocks(&readme)
        .iter()
        .flat_map(|(_, b)| b.lines().map(str::to_string).collect::<Vec<_>>())
        .filter(|l| script(l) == ":")
        .count();
    assert!(skipped <= 8, "{skipped} lines skipped");
    assert!(SKIPPED.iter().all(|(_, why)| !why.is_empty()));
}

/// The file `name` on the caller's PATH.
fn on_path(name: &str) -> std::path::PathBuf {
    std::env::split_paths(&path_var())
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("`{name}` is not on PATH"))
}

/// The README's main job (and `.ci/main-job`'s plans) with nothing on PATH but a POSIX
/// shell, Python 3 and `sleep`: no Node.js, no bash.
#[test]
fn the_main_job_needs_only_a_posix_shell_and_python() {
    let bin = tempfile::tempdir().unwrap();
    for tool in ["sh", "sleep"] {
        let real = std::fs::canonicalize(on_path(tool)).unwrap();
        std::os::unix::fs::symlink(real, bin.path().join(tool)).unwrap();
    }
    // The interpreter itself (a `python3` on PATH may be a shim, a script run by bash).
    let python = std::process::Command::new(on_path("python3"))
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .unwrap();
    let python = String::from_utf8(python.stdout).unwrap();
    std::os::unix::fs::symlink(python.trim(), bin.path().join("python3")).unwrap();
    let path = bin.path().display().to_string();
    let p = ["tools", "directives", "plans"]
        .into_iter()
        .fold(Test::new(), Test::copy);
    let ran = p
        .then(&[
            "run",
            "directives/word_report.md",
            "--input",
            "text=layered configs, rendered once",
        ])
        .env("PATH", &path)
        .status(0)
        .run();
    assert!(
        ran.stdout.starts_with("directive word_report: completed\n"),
        "{}",
        ran.all()
    );
    for plan in [
        "plans/duplicates.json",
        "plans/exercise.yaml",
        "plans/diamond.yaml",
    ] {
        p.then(&["plan", "run", plan, "-q"])
            .env("PATH", &path)
            .status(0)
            .run();
    }
}

/// The README's first command builds strata, which takes minutes the first time: it runs
/// without `-q`, so cargo shows the build's progress.
#[test]
fn the_main_job_shows_the_first_builds_progress() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let first = sh_blocks(&readme)
        .into_iter()
        .flat_map(|(_, b)| b.lines().map(str::to_string).collect::<Vec<_>>())
        .find(|l| l.starts_with("cargo run"))
        .unwrap();
    assert!(
        first.starts_with("cargo run -- run directives/word_report.md"),
        "{first}"
    );
}

/// The man pages installed where the README's install steps put them are found by `man`
/// with no MANPATH: next to the `bin/` on PATH that `cargo install` fills.
#[test]
fn man_finds_the_pages_the_readme_installs() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let line = readme
        .lines()
        .find(|l| l.starts_with("strata man --install "))
        .unwrap();
    let home = tempfile::tempdir().unwrap();
    let dir = line.split_whitespace().nth(3).unwrap();
    let dir = dir.replacen('~', &home.path().display().to_string(), 1);
    let cargo_bin = home.path().join(".cargo/bin");
    std::fs::create_dir_all(&cargo_bin).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_strata"), cargo_bin.join("strata")).unwrap();
    let path = format!("{}:{}", cargo_bin.display(), path_var());
    let man = on_path("man");
    let run = |program: &std::path::Path, args: &[&str]| {
        std::process::Command::new(program)
            .args(args)
            .env_clear()
            .env("PATH", &path)
            .env("HOME", home.path())
            .output()
            .unwrap()
    };
    assert!(run(&cargo_bin.join("strata"), &["man", "--install", &dir])
        .status
        .success());
    let found = run(&man, &["-w", "strata-run"]);
    assert_eq!(
        String::from_utf8_lossy(&found.stdout),
        format!("{dir}/strata-run.1\n"),
        "{}",
        String::from_utf8_lossy(&found.stderr)
    );
}
