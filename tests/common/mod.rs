//! Helpers shared by the end-to-end tests: the repository, scratch files, the environment
//! the binary is given.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The caller's PATH (a default when unset), for children that must find interpreters.
pub fn path_var() -> String {
    std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into())
}

/// The caller's HOME (a default when unset).
pub fn home_var() -> String {
    std::env::var("HOME").unwrap_or_else(|_| "/root".into())
}

/// Copies a directory tree.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Writes `text` to `rel` under `root`, creating directories.
pub fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// One end-to-end case of the `strata` binary, built step by step and checked at
/// [`Test::run`] (in the manner of `just`'s test builder):
///
/// ```ignore
/// Test::new()
///     .shipped()
///     .file("tools/t/x.yaml", "…")
///     .args(&["run", "t/x"])
///     .stdout("…\n")
///     .status(0)
///     .run();
/// ```
///
/// The binary runs in a scratch project (removed when the returned [`Ran`] is dropped) with
/// an empty environment but `PATH` and `HOME` (and what [`Test::env`] adds), and no stdin
/// unless [`Test::stdin`] gives one. Unset expectations are not checked.
pub struct Test {
    dir: tempfile::TempDir,
    args: Vec<String>,
    env: Vec<(String, String)>,
    stdin: Option<Vec<u8>>,
    stdout: Option<String>,
    stderr: Option<String>,
    status: Option<i32>,
}

/// What a [`Test`] run printed, with its scratch project.
pub struct Ran {
    /// The scratch project (still present).
    pub dir: tempfile::TempDir,
    /// Standard output, as text.
    pub stdout: String,
    /// Standard error, as text.
    pub stderr: String,
    /// The exit code (`None` when killed by a signal).
    pub code: Option<i32>,
}

impl Ran {
    /// Standard output parsed as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}\n{}", self.stdout, self.stderr))
    }

    /// A file of the scratch project, as text (empty when it does not exist).
    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.dir.path().join(rel)).unwrap_or_default()
    }
}

impl Default for Test {
    fn default() -> Self {
        Test::new()
    }
}

impl Test {
    /// An empty scratch project holding only `tools/`.
    pub fn new() -> Test {
        let dir = tempfile::tempdir().expect("a scratch directory");
        std::fs::create_dir_all(dir.path().join("tools")).expect("tools/");
        Test {
            dir,
            args: Vec::new(),
            env: Vec::new(),
            stdin: None,
            stdout: None,
            stderr: None,
            status: None,
        }
    }

    /// Copies the repository's shipped project in: `tools/`, `directives/`, `hooks/`,
    /// `plans/` and `prompts/` (those that exist).
    pub fn shipped(self) -> Test {
        for sub in ["tools", "directives", "hooks", "plans", "prompts"] {
            let from = repo().join(sub);
            if from.is_dir() {
                copy_dir(&from, &self.dir.path().join(sub));
            }
        }
        self
    }

    /// Writes a file of the scratch project.
    pub fn file(self, rel: &str, text: &str) -> Test {
        write(self.dir.path(), rel, text);
        self
    }

    /// The command line after `strata`.
    pub fn args(mut self, args: &[&str]) -> Test {
        self.args = args.iter().map(|a| a.to_string()).collect();
        self
    }

    /// Sets an environment variable of the run.
    pub fn env(mut self, name: &str, value: &str) -> Test {
        self.env.push((name.into(), value.into()));
        self
    }

    /// Feeds `text` on standard input.
    pub fn stdin(mut self, text: impl Into<Vec<u8>>) -> Test {
        self.stdin = Some(text.into());
        self
    }

    /// Expects exactly this standard output.
    pub fn stdout(mut self, text: &str) -> Test {
        self.stdout = Some(text.into());
        self
    }

    /// Expects exactly this standard error.
    pub fn stderr(mut self, text: &str) -> Test {
        self.stderr = Some(text.into());
        self
    }

    /// Expects this exit code.
    pub fn status(mut self, code: i32) -> Test {
        self.status = Some(code);
        self
    }

    /// Runs the binary and checks every expectation set.
    pub fn run(self) -> Ran {
        use std::io::Write;
        use std::process::{Command, Stdio};
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_strata"));
        cmd.args(&self.args)
            .current_dir(self.dir.path())
            .env_clear()
            .env("PATH", path_var())
            .env("HOME", home_var())
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(if self.stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("strata starts");
        if let (Some(input), Some(mut pipe)) = (self.stdin, child.stdin.take()) {
            std::thread::spawn(move || {
                let _ = pipe.write_all(&input);
            });
        }
        let out = child.wait_with_output().expect("strata runs");
        let ran = Ran {
            dir: self.dir,
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            code: out.status.code(),
        };
        let context = || format!("strata {}", self.args.join(" "));
        if let Some(want) = &self.stdout {
            assert_eq!(&ran.stdout, want, "stdout of {}", context());
        }
        if let Some(want) = &self.stderr {
            assert_eq!(&ran.stderr, want, "stderr of {}", context());
        }
        if let Some(want) = self.status {
            assert_eq!(
                ran.code,
                Some(want),
                "exit code of {}\n--- stdout\n{}\n--- stderr\n{}",
                context(),
                ran.stdout,
                ran.stderr
            );
        }
        ran
    }
}
