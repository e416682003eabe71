//! The one way the end-to-end tests run the `strata` binary: [`Test`], a builder in the
//! manner of `just`'s, [`Running`], a run whose standard input the test writes as it goes,
//! and [`Ran`], what a run printed (and the signal it died of). A run may be limited
//! ([`Limit`]: stack, address space, as `ulimit` does) and signalled ([`Running::signal`]).
//! Also the repository root, the caller's PATH and HOME, which expectations quote, and
//! [`wait_for`] a file a running process writes.
#![allow(dead_code)]

use std::ffi::{OsStr, OsString};
use std::io::{BufRead, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::rc::Rc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A tool, `t/say` in the tests, that prints its `text` parameter (default `hi`).
pub const SAY: &str = "description: prints its text\nexecutor: runtimes/subprocess\nparameters:\n  type: object\n  properties:\n    text: {type: string, default: hi}\nconfig:\n  command: printf\n  args: [\"%s\\n\", \"{text}\"]\n";

/// A graph calling `t/say` once, then returning `{said: true}`.
pub const SAY_GRAPH: &str = "kind: graph\ndescription: says hi\nstart: say\nnodes:\n  say:\n    kind: action\n    tool: t/say\n    next: done\n  done:\n    kind: return\n    output: {said: true}\n";

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

/// `s/leak`: prints `TOKEN`, a secret its chain declares, on stdout.
pub const LEAK_TOOL: &str = "executor: runtimes/subprocess\nsecrets: [TOKEN]\nconfig:\n  command: printf\n  args: [\"%s\", \"${TOKEN}\"]\n";

/// `s/keep`: writes its `tok` parameter to `got.txt` in the project and prints it back as
/// `kept <tok>` (it takes an `x` too, for a plan's user value).
pub const KEEP_TOOL: &str = "executor: runtimes/subprocess\nparameters:\n  type: object\n  properties:\n    tok: {type: string}\n    x: {type: string}\n  required: [tok]\nconfig:\n  command: sh\n  args: [\"-c\", \"printf %s \\\"$1\\\" > got.txt; printf 'kept %s' \\\"$1\\\"\", \"sh\", \"{tok}\"]\n  cwd: \"{project_path}\"\n";

/// What follows the check's errors on stderr when the gate refuses `shown` for `n` errors.
pub fn refusal(shown: &str, n: usize) -> String {
    format!(
        "\nerror[check]: `{shown}` was not run: {n} error{} found\n   = help: `strata check` lists every error and warning of the project\n",
        if n == 1 { "" } else { "s" }
    )
}

/// GNU time, which measures the peak memory of a [`Test::measured`] run.
const GNU_TIME: &str = "/usr/bin/time";

/// Where the binary runs: a scratch directory (removed when the last [`Test`] or [`Ran`]
/// holding it is dropped) or the repository itself, which is never written to.
struct Project {
    scratch: Option<tempfile::TempDir>,
    path: PathBuf,
}

/// One end-to-end case of the `strata` binary, built step by step and checked at
/// [`Test::run`]:
///
/// ```ignore
/// let ran = Test::new()
///     .copy("tools/runtimes")
///     .tool("t/x", "executor: runtimes/subprocess\n…")
///     .args(&["run", "t/x"])
///     .stdout("…\n")
///     .status(0)
///     .run();
/// ran.then(&["run", "t/x", "--json"]).status(0).run(); // again, in the same project
/// ```
///
/// The exit status is always stated and checked, as `just`'s test builder checks it: the code
/// ([`Test::status`]), the signal the run dies of ([`Test::killed_by`]), or that the case
/// reads it as data ([`Test::any_status`]). A run that states none fails, so every case says
/// whether it expects success or which failure.
///
/// The binary runs in the project's root with an empty environment but `PATH` and `HOME`
/// (and what [`Test::env`] adds), and no stdin unless [`Test::stdin`] gives one. Unset
/// expectations are not checked. Standard output and error must be UTF-8.
pub struct Test {
    project: Rc<Project>,
    args: Vec<String>,
    env: Vec<(OsString, OsString)>,
    stdin: Option<Vec<u8>>,
    stdout: Option<String>,
    stderr: Option<String>,
    status: Option<i32>,
    any_status: bool,
    signal: Option<i32>,
    kill_after: Option<Duration>,
    limits: Vec<Limit>,
    open_fd: Option<i32>,
    sink: Option<Sink>,
    /// The folder of the project the run starts in (`None`: its root).
    cwd: Option<String>,
}

/// Where a run's standard output goes instead of the pipe the test reads
/// ([`Test::stdout_into`]).
#[derive(Clone, Copy, Debug)]
pub enum Sink {
    /// `/dev/full`: every write fails with "No space left on device".
    Full,
    /// A pipe whose read end is closed before the run starts: every write fails with a
    /// broken pipe, as `strata … | head -0` does.
    ClosedPipe,
}

/// A resource limit of a run ([`Test::limit`]), set in the child before `exec` as `ulimit`
/// sets it in a shell.
#[derive(Clone, Copy, Debug)]
pub enum Limit {
    /// The main thread's stack, in KiB (`ulimit -s`).
    StackKib(u64),
    /// The address space, in bytes (`ulimit -v`): a run that regresses into a memory bomb
    /// fails its test instead of exhausting the machine.
    AddressSpace(u64),
    /// CPU time, in seconds (`ulimit -t`): a run that regresses into quadratic work dies of
    /// `SIGXCPU` instead of taking the suite's time. A resource bound, not a timing
    /// assertion: set it an order of magnitude above what the linear work needs.
    CpuSeconds(u64),
}

/// A [`Test`] under way ([`Test::start`]): the caller writes its standard input while it
/// runs, then [`Running::finish`] closes it, waits and checks the expectations.
pub struct Running {
    test: Test,
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: JoinHandle<Vec<u8>>,
    stderr: JoinHandle<Vec<u8>>,
    /// Each line of stdout as it comes.
    lines: std::sync::mpsc::Receiver<String>,
    start: Instant,
    rss: Option<tempfile::NamedTempFile>,
}

/// What a [`Test`] run printed; its project stays while the `Ran` is held.
pub struct Ran {
    project: Rc<Project>,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
    /// The exit code (`None` when killed by a signal).
    pub code: Option<i32>,
    /// The signal the run died of (`None` when it exited).
    pub signal: Option<i32>,
    /// How long the run took.
    pub elapsed: Duration,
    /// Peak resident memory of strata and the children it reaped, in KiB, for a
    /// [`Test::measured`] run where GNU time is installed; 0 otherwise.
    pub peak_rss_kib: u64,
}

impl Project {
    /// A file of the project, as text (empty when it does not exist).
    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path.join(rel)).unwrap_or_default()
    }
}

impl Default for Test {
    fn default() -> Self {
        Test::new()
    }
}

impl Test {
    /// A scratch project holding only an empty `tools/`.
    pub fn new() -> Test {
        let dir = tempfile::tempdir().expect("a scratch directory");
        std::fs::create_dir_all(dir.path().join("tools")).expect("tools/");
        let path = dir.path().to_path_buf();
        Test::at(&Rc::new(Project {
            scratch: Some(dir),
            path,
        }))
    }

    /// A scratch project with the shipped runtimes, the tool `t/say` ([`SAY`]) and the graph
    /// `graphs/g` ([`SAY_GRAPH`]).
    pub fn say() -> Test {
        Test::new()
            .copy("tools/runtimes")
            .tool("t/say", SAY)
            .tool("graphs/g", SAY_GRAPH)
    }

    /// The repository itself as the project (for its shipped files as they are); files
    /// cannot be added to it.
    pub fn in_repo() -> Test {
        Test::at(&Rc::new(Project {
            scratch: None,
            path: repo(),
        }))
    }

    fn at(project: &Rc<Project>) -> Test {
        Test {
            project: Rc::clone(project),
            args: Vec::new(),
            env: Vec::new(),
            stdin: None,
            stdout: None,
            stderr: None,
            status: None,
            any_status: false,
            signal: None,
            kill_after: None,
            limits: Vec::new(),
            open_fd: None,
            sink: None,
            cwd: None,
        }
    }

    /// Another case in the same project, with the command line after `strata`; nothing else
    /// carries over.
    pub fn then(&self, args: &[&str]) -> Test {
        Test::at(&self.project).args(args)
    }

    /// The project's root.
    pub fn path(&self) -> &Path {
        &self.project.path
    }

    /// A file of the project, as text (empty when it does not exist), for a case that looks
    /// at it while the binary runs.
    pub fn read(&self, rel: &str) -> String {
        self.project.read(rel)
    }

    /// Copies the repository's file or directory `rel` to the same place in the project.
    pub fn copy(self, rel: &str) -> Test {
        let to = self.writable().join(rel);
        copy_tree(&repo().join(rel), &to);
        self
    }

    /// Copies the repository's shipped project in: `tools/`, `directives/`, `hooks/`,
    /// `plans/` and `prompts/` (those that exist).
    pub fn shipped(self) -> Test {
        ["tools", "directives", "hooks", "plans", "prompts"]
            .into_iter()
            .filter(|sub| repo().join(sub).is_dir())
            .fold(self, Test::copy)
    }

    /// Writes a file of the project, creating directories.
    pub fn file(self, rel: &str, contents: impl AsRef<[u8]>) -> Test {
        let path = self.writable().join(rel);
        std::fs::create_dir_all(path.parent().expect("a file has a parent")).expect("mkdir");
        std::fs::write(&path, contents).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        self
    }

    /// Makes `rel` a symbolic link to `target` (relative to the link's directory, or
    /// absolute), creating directories.
    pub fn link(self, rel: &str, target: impl AsRef<Path>) -> Test {
        let path = self.writable().join(rel);
        std::fs::create_dir_all(path.parent().expect("a link has a parent")).expect("mkdir");
        std::os::unix::fs::symlink(target.as_ref(), &path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        self
    }

    /// Writes the tool file `tools/<id>.yaml`.
    pub fn tool(self, id: &str, yaml: &str) -> Test {
        self.file(&format!("tools/{id}.yaml"), yaml)
    }

    fn writable(&self) -> &Path {
        assert!(
            self.project.scratch.is_some(),
            "the repository is never written to"
        );
        self.path()
    }

    /// The command line after `strata`.
    pub fn args(mut self, args: &[&str]) -> Test {
        self.args = args.iter().map(|a| a.to_string()).collect();
        self
    }

    /// Starts the run in the project's folder `rel` instead of its root.
    pub fn cwd(mut self, rel: &str) -> Test {
        self.cwd = Some(rel.to_string());
        self
    }

    /// Sets an environment variable of the run (its value may be any bytes).
    pub fn env(mut self, name: &str, value: impl AsRef<OsStr>) -> Test {
        self.env.push((name.into(), value.as_ref().to_owned()));
        self
    }

    /// Sets environment variables of the run.
    pub fn envs(self, vars: &[(&str, &str)]) -> Test {
        vars.iter()
            .fold(self, |t, (name, value)| t.env(name, value))
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

    /// Takes any exit status: the case reads [`Ran::code`] as data (a stand-in for an
    /// orchestrator, which decides what a task's status means). Stated, never a default.
    pub fn any_status(mut self) -> Test {
        self.any_status = true;
        self
    }

    /// Expects the run to die of signal `sig` (see [`Running::signal`]).
    pub fn killed_by(mut self, sig: i32) -> Test {
        self.signal = Some(sig);
        self
    }

    /// Sets a resource limit of the run (repeatable); with [`Test::measured`] it is set on
    /// GNU time, whose child strata inherits it.
    pub fn limit(mut self, limit: Limit) -> Test {
        self.limits.push(limit);
        self
    }

    /// Leaves descriptor `fd` open in strata without close-on-exec (the write end of a pipe
    /// the test closes once the run has started), as a careless caller would.
    pub fn open_fd(mut self, fd: i32) -> Test {
        self.open_fd = Some(fd);
        self
    }

    /// Sends the run's standard output into `sink` (the run's [`Ran::stdout`] is then empty).
    pub fn stdout_into(mut self, sink: Sink) -> Test {
        self.sink = Some(sink);
        self
    }

    /// Measures the run's peak memory ([`Ran::peak_rss_kib`]) with GNU time, in a process
    /// group of its own that is killed if the run is still going after `kill_after`.
    /// (GNU time reports strata alone, forked from a small process; measuring a child of
    /// the test would report at least the test's own size, which the kernel carries across
    /// exec.)
    pub fn measured(mut self, kill_after: Duration) -> Test {
        self.kill_after = Some(kill_after);
        self
    }

    /// Starts the binary without waiting, its output discarded, to be signalled by the
    /// caller, who keeps the project (this `Test`'s origin) alive meanwhile.
    pub fn spawn(self) -> Child {
        self.command(None, false)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("strata starts")
    }

    /// Runs the binary to the end and checks every expectation set.
    #[track_caller]
    pub fn run(self) -> Ran {
        self.launch(false).finish()
    }

    /// Starts the binary with its standard input open to the caller ([`Running::write`])
    /// unless [`Test::stdin`] gave it; [`Running::finish`] ends the case as [`Test::run`]
    /// does.
    pub fn start(self) -> Running {
        self.launch(true)
    }

    /// Spawns the binary with its output read on threads of their own; `open_stdin` keeps a
    /// standard input that [`Test::stdin`] does not feed open for the caller.
    fn launch(mut self, open_stdin: bool) -> Running {
        let rss = self
            .kill_after
            .map(|_| tempfile::NamedTempFile::new().expect("a file for the peak memory"));
        let mut cmd = self.command(rss.as_ref().map(|f| f.path()), open_stdin);
        cmd.stdout(match self.sink {
            None => Stdio::piped(),
            Some(Sink::Full) => std::fs::OpenOptions::new()
                .write(true)
                .open("/dev/full")
                .expect("/dev/full")
                .into(),
            Some(Sink::ClosedPipe) => pipe_end().into(),
        })
        .stderr(Stdio::piped());
        let start = Instant::now();
        let mut child = cmd.spawn().expect("strata starts");
        let mut stdin = child.stdin.take();
        if let Some(input) = self.stdin.take() {
            if let Some(mut pipe) = stdin.take() {
                std::thread::spawn(move || {
                    let _ = pipe.write_all(&input);
                });
            }
        }
        let (line, lines) = std::sync::mpsc::channel();
        Running {
            stdout: drain(child.stdout.take(), Some(line)),
            stderr: drain(child.stderr.take(), None),
            lines,
            test: self,
            child,
            stdin,
            start,
            rss,
        }
    }

    /// The command: strata (under GNU time when `rss` is where to report the peak memory
    /// and time is installed) in the project, with the test's environment, and a piped
    /// stdin when the test gives one or `open_stdin` asks for it.
    fn command(&self, rss: Option<&Path>, open_stdin: bool) -> Command {
        let strata = env!("CARGO_BIN_EXE_strata");
        let mut cmd = match rss {
            Some(rss) if Path::new(GNU_TIME).is_file() => {
                let mut cmd = Command::new(GNU_TIME);
                cmd.arg("-f").arg("%M").arg("-o").arg(rss).arg(strata);
                cmd
            }
            _ => Command::new(strata),
        };
        if self.kill_after.is_some() {
            cmd.process_group(0);
        }
        self.pre_exec(&mut cmd);
        cmd.args(&self.args)
            .current_dir(self.path().join(self.cwd.as_deref().unwrap_or(".")))
            .env_clear()
            .env("PATH", path_var())
            .env("HOME", home_var())
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(if self.stdin.is_some() || open_stdin {
                Stdio::piped()
            } else {
                Stdio::null()
            });
        cmd
    }

    /// Sets the run's [`Limit`]s and its [`Test::open_fd`] in the child, before `exec`.
    fn pre_exec(&self, cmd: &mut Command) {
        let limits: Vec<(libc::__rlimit_resource_t, libc::rlimit)> = self
            .limits
            .iter()
            .map(|limit| {
                let (resource, amount) = match *limit {
                    Limit::StackKib(kib) => (libc::RLIMIT_STACK, kib << 10),
                    Limit::AddressSpace(bytes) => (libc::RLIMIT_AS, bytes),
                    Limit::CpuSeconds(seconds) => (libc::RLIMIT_CPU, seconds),
                };
                let value = libc::rlimit {
                    rlim_cur: amount,
                    rlim_max: amount,
                };
                (resource, value)
            })
            .collect();
        let open = self.open_fd.map(|fd| (pipe_end(), fd));
        if limits.is_empty() && open.is_none() {
            return;
        }
        // SAFETY: setrlimit and dup2 are async-signal-safe and touch only the child's own
        // limits and descriptors; the closure allocates nothing.
        unsafe {
            cmd.pre_exec(move || {
                for (resource, value) in &limits {
                    if libc::setrlimit(*resource, value) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                // dup2 gives the copy no close-on-exec flag.
                if let Some((end, fd)) = &open {
                    if libc::dup2(end.as_raw_fd(), *fd) < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
    }

    /// Waits for the run, killing its process group once it outlives a measured run's bound.
    fn wait(&self, child: &mut Child, start: Instant) -> ExitStatus {
        let Some(limit) = self.kill_after else {
            return child.wait().expect("strata runs");
        };
        let group = child.id() as libc::pid_t;
        loop {
            if let Some(status) = child.try_wait().expect("strata runs") {
                return status;
            }
            if start.elapsed() > limit {
                // SAFETY: the group is ours (process_group(0)) and its leader is not reaped.
                unsafe { libc::kill(-group, libc::SIGKILL) };
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[track_caller]
    fn check(&self, ran: &Ran) {
        let at = std::panic::Location::caller();
        let context = || format!("strata {} (run at {at})", self.args.join(" "));
        if let Some(want) = self.signal {
            assert_eq!(
                ran.signal,
                Some(want),
                "the signal {} died of (exit code {:?})\n--- stdout\n{}\n--- stderr\n{}",
                context(),
                ran.code,
                ran.stdout,
                ran.stderr
            );
        }
        if let Some(want) = &self.stdout {
            assert_eq!(&ran.stdout, want, "stdout of {}", context());
        }
        if let Some(want) = &self.stderr {
            assert_eq!(&ran.stderr, want, "stderr of {}", context());
        }
        // The status is always checked, and always stated: the code, the signal, or that
        // the case reads it as data.
        if self.signal.is_none() && !self.any_status {
            let Some(want) = self.status else {
                panic!(
                    "{} states no exit status: give .status(code), .killed_by(signal) or .any_status()",
                    context()
                );
            };
            assert_eq!(
                ran.code,
                Some(want),
                "exit code of {}\n--- stdout\n{}\n--- stderr\n{}",
                context(),
                ran.stdout,
                ran.stderr
            );
        }
    }
}

impl Running {
    /// Writes `text` to the binary's standard input and flushes it.
    pub fn write(&mut self, text: &str) {
        let pipe = self.stdin.as_mut().expect("standard input is open");
        pipe.write_all(text.as_bytes())
            .expect("strata reads its input");
        pipe.flush().expect("strata reads its input");
    }

    /// The next line strata prints on stdout (with its `\n`), as soon as it is printed: for
    /// a conversation, where the next request depends on the reply. Fails when stdout ends
    /// first, or when no line comes for a minute (strata waiting for input it already has).
    pub fn read_line(&mut self) -> String {
        match self.lines.recv_timeout(Duration::from_secs(60)) {
            Ok(line) => line,
            Err(e) => panic!("no line on stdout: {e}"),
        }
    }

    /// Sends signal `sig` to strata (to it alone, not to its process group).
    pub fn signal(&self, sig: i32) {
        let pid = libc::pid_t::try_from(self.child.id()).expect("a pid");
        // SAFETY: a plain kill of our own child, which is not reaped before `finish`.
        let sent = unsafe { libc::kill(pid, sig) };
        assert_eq!(sent, 0, "kill: {}", std::io::Error::last_os_error());
    }

    /// Closes standard input, waits for the end and checks every expectation set.
    #[track_caller]
    pub fn finish(mut self) -> Ran {
        drop(self.stdin.take());
        let status = self.test.wait(&mut self.child, self.start);
        let elapsed = self.start.elapsed();
        // The last line of time's report is the peak in KiB (a line about the exit status
        // may come first).
        let peak_rss_kib = self
            .rss
            .and_then(|f| std::fs::read_to_string(f.path()).ok())
            .and_then(|t| t.lines().last().and_then(|l| l.trim().parse().ok()))
            .unwrap_or(0);
        let ran = Ran {
            project: Rc::clone(&self.test.project),
            stdout: utf8(self.stdout, "stdout"),
            stderr: utf8(self.stderr, "stderr"),
            code: status.code(),
            signal: status.signal(),
            elapsed,
            peak_rss_kib,
        };
        self.test.check(&ran);
        ran
    }
}

impl Ran {
    /// Another case in the same project (files the run wrote included), with the command
    /// line after `strata`; nothing else carries over.
    pub fn then(&self, args: &[&str]) -> Test {
        Test::at(&self.project).args(args)
    }

    /// The project's root.
    pub fn path(&self) -> &Path {
        &self.project.path
    }

    /// A file of the project, as text (empty when it does not exist).
    pub fn read(&self, rel: &str) -> String {
        self.project.read(rel)
    }

    /// Standard output parsed as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}\n{}", self.stdout, self.stderr))
    }

    /// Everything printed: standard output, then standard error.
    pub fn all(&self) -> String {
        format!("{}{}", self.stdout, self.stderr)
    }

    /// The start of everything printed, for failure messages.
    pub fn brief(&self) -> String {
        self.all().chars().take(2000).collect()
    }

    /// The first line of standard error.
    pub fn error_line(&self) -> &str {
        self.stderr.lines().next().unwrap_or_default()
    }
}

/// The values `COMPLETE=fish` offers for the command line `words` after `strata` (the last
/// one being completed), asked in the project's folder `cwd`; options left out.
pub fn complete(p: &Test, cwd: &str, words: &[&str]) -> Vec<String> {
    let mut args = vec!["--", "strata"];
    args.extend(words);
    let ran = p
        .then(&args)
        .cwd(cwd)
        .env("COMPLETE", "fish")
        .status(0)
        .run();
    ran.stdout
        .lines()
        .map(|l| l.split('\t').next().unwrap_or("").to_string())
        .filter(|v| !v.starts_with('-'))
        .collect()
}

/// The trimmed text of the file at `path` once it exists (a process writes it when it
/// reaches a known point); panics after 20 s.
pub fn wait_for(path: &Path) -> String {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(20) {
        if let Ok(text) = std::fs::read_to_string(path) {
            return text.trim().to_string();
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("{} never appeared", path.display());
}

/// The write end of a new pipe whose read end is closed at once, close-on-exec like every
/// descriptor of the test.
fn pipe_end() -> OwnedFd {
    let mut ends = [0; 2];
    // SAFETY: pipe2 writes two new descriptors into `ends`.
    let made = unsafe { libc::pipe2(ends.as_mut_ptr(), libc::O_CLOEXEC) };
    assert_eq!(made, 0, "pipe2: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors were just created and are owned here alone.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(ends[0]), OwnedFd::from_raw_fd(ends[1])) };
    drop(read);
    write
}

/// Reads a pipe to its end on a thread of its own, sending each line to `lines` as it comes.
fn drain(
    pipe: Option<impl Read + Send + 'static>,
    lines: Option<std::sync::mpsc::Sender<String>>,
) -> JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(pipe) = pipe {
            let mut reader = std::io::BufReader::new(pipe);
            loop {
                let start = bytes.len();
                let n = reader
                    .read_until(b'\n', &mut bytes)
                    .expect("strata's output");
                if n == 0 {
                    break;
                }
                if let Some(lines) = &lines {
                    let _ = lines.send(String::from_utf8_lossy(&bytes[start..]).into_owned());
                }
            }
        }
        bytes
    })
}

fn utf8(reader: JoinHandle<Vec<u8>>, stream: &str) -> String {
    let bytes = reader.join().expect("the reader");
    String::from_utf8(bytes).unwrap_or_else(|e| panic!("{stream} is not UTF-8: {e}"))
}

/// Copies a file, or a directory tree, creating parents.
fn copy_tree(from: &Path, to: &Path) {
    if from.is_dir() {
        std::fs::create_dir_all(to).expect("mkdir");
        for entry in std::fs::read_dir(from).expect("a directory").flatten() {
            copy_tree(&entry.path(), &to.join(entry.file_name()));
        }
    } else {
        std::fs::create_dir_all(to.parent().expect("a file has a parent")).expect("mkdir");
        std::fs::copy(from, to).unwrap_or_else(|e| panic!("{}: {e}", from.display()));
    }
}

/// Durations vary: ` in 12 ms` becomes ` in N ms` in progress lines.
pub fn timeless(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(k) = rest.find(" in ") {
        out.push_str(&rest[..k + 4]);
        rest = &rest[k + 4..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && rest[digits..].starts_with(" ms") {
            out.push('N');
            rest = &rest[digits..];
        }
    }
    out.push_str(rest);
    out
}

/// Checks `value` against `$defs/<def>` of docs/schemas/results.schema.json.
pub fn conforms(value: &serde_json::Value, def: &str) {
    let text = std::fs::read_to_string(repo().join("docs/schemas/results.schema.json"));
    let doc: serde_json::Value = serde_json::from_str(&text.unwrap()).unwrap();
    let schema = serde_json::json!({"$defs": doc["$defs"], "$ref": format!("#/$defs/{def}")});
    let validator = jsonschema::validator_for(&schema).expect("a valid schema");
    let errors: Vec<String> = validator
        .iter_errors(value)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{def}: {errors:?}\n{value:#}");
}
