//! Running a child: argv only, an explicit environment, the child in its own process group
//! (started by [`crate::child`]), stdin from `input_data`, stdout and stderr drained with a
//! byte cap, a timeout that kills the whole group, a child that dies with strata, and no
//! zombie or orphan left behind.
//!
//! The library changes nothing in the process that embeds it (the Python module's host): its
//! descriptors, signal handlers and reaper status stay as they were. Only the `strata` binary,
//! which owns its process, opts in to more ([`own_process`]).

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, Once};
use std::thread;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::signal::{killpg, Signal};
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;
use strata_core::{EnvVar, Error, ErrorKind, Layer, Origin, Text};

use strata_tools::RunResult;

use crate::child::{self, Exec};

/// Default cap on captured stdout and on captured stderr, each: 8 MiB.
pub const DEFAULT_MAX_OUTPUT: usize = 8 << 20;

/// How long the pipes may stay open once the child's group is gone (a process that left the
/// group may still hold one).
const READER_GRACE: Duration = Duration::from_millis(250);

/// Everything needed to start a child, fully resolved.
#[derive(Debug, Clone)]
pub struct SpawnSpec {
    /// The program, an absolute path (or relative to `cwd`).
    pub program: PathBuf,
    /// The argument vector, `argv[0]` included; text keeps its origins for redaction.
    pub argv: Vec<Text>,
    /// The working directory.
    pub cwd: PathBuf,
    /// The child's whole environment.
    pub env: BTreeMap<String, EnvVar>,
    /// Standard input; `None` is `/dev/null`.
    pub stdin: Option<Text>,
    /// The child's process group is killed after this long.
    pub timeout: Duration,
    /// Most bytes kept of stdout, and of stderr; the rest is read and dropped.
    pub max_output_bytes: usize,
    /// When set, stops the child (its process group killed) and the spawn fails with
    /// [`ErrorKind::Cancelled`]; set before the spawn, nothing starts.
    pub cancel: Option<crate::Cancel>,
}

/// Authored text (for argv built by strata itself).
pub fn authored(s: &str) -> Text {
    let mut t = Text::default();
    t.push(s, Origin::Authored);
    t
}

/// The children still running, and the signal strata received, if any.
///
/// Each child has one owner: the thread that spawned it, which alone waits for it and reaps
/// it. On a signal, the signal thread only records it and kills the groups; each owner then
/// reaps its child and its group, and the last one makes strata die of the signal.
#[derive(Debug, Default)]
struct Children {
    /// Process groups of children not yet reaped.
    groups: Vec<i32>,
    /// The signal received (no child starts after one).
    signal: Option<i32>,
}

static CHILDREN: Mutex<Children> = Mutex::new(Children {
    groups: Vec::new(),
    signal: None,
});

fn children() -> std::sync::MutexGuard<'static, Children> {
    CHILDREN.lock().unwrap_or_else(|e| e.into_inner())
}

/// How long the signal thread lets the owners reap their children before strata dies
/// anyway.
const REAP_GRACE: Duration = Duration::from_secs(2);

/// The line [`die`] prints before strata dies of a signal: how to resume the run under way.
static INTERRUPT_NOTE: Mutex<Option<String>> = Mutex::new(None);

/// Sets (or clears) the line printed on standard error when a signal ends strata while a
/// run is under way — how to resume it (`strata: interrupted: resume with …`).
pub fn on_interrupt(note: Option<String>) {
    *INTERRUPT_NOTE.lock().unwrap_or_else(|e| e.into_inner()) = note;
}

/// Dies of signal `sig`, as strata would have without a handler (exit status 128 + `sig` if
/// the default action cannot be restored), after the [`on_interrupt`] line if one is set.
fn die(sig: i32) -> ! {
    if let Ok(note) = INTERRUPT_NOTE.try_lock() {
        if let Some(line) = note.as_deref() {
            use std::io::Write as _;
            let _ = writeln!(std::io::stderr().lock(), "{line}");
        }
    }
    let _ = signal_hook::low_level::emulate_default_handler(sig);
    std::process::exit(128 + sig)
}

/// Called by an owner once its child and group are reaped: forgets the group and, when a
/// signal came, dies of it if no other child is left — else waits for the owner of the last
/// one to do so.
fn reaped(pgid: i32) {
    let mut c = children();
    c.groups.retain(|g| *g != pgid);
    let Some(sig) = c.signal else {
        return;
    };
    let last = c.groups.is_empty();
    drop(c);
    if last {
        die(sig);
    }
    loop {
        thread::park();
    }
}

/// Set by [`own_process`].
static OWNED: AtomicBool = AtomicBool::new(false);

/// Declares the process strata's own: the `strata` binary calls this first thing. A program
/// that embeds the library (the Python module's host) does not, and strata then changes
/// nothing in its process.
///
/// Before the first child starts in a process strata owns, it installs the interrupt handler
/// ([`install_interrupt_handler`]; until a child runs there is no process group to kill, and
/// dying of the signal is what the handler would do, so a command that never starts a tool
/// pays nothing for it) and makes itself the reaper of its orphaned descendants (Linux), so
/// that grandchildren killed with their group are reaped by strata instead of lingering as
/// zombies.
pub fn own_process() {
    OWNED.store(true, Ordering::Relaxed);
}

/// What a process strata owns sets up before its first child starts (see [`own_process`]).
fn prepare_process() -> Result<(), Error> {
    if !OWNED.load(Ordering::Relaxed) {
        return Ok(());
    }
    static REAPER: Once = Once::new();
    REAPER.call_once(|| {
        #[cfg(target_os = "linux")]
        let _ = nix::sys::prctl::set_child_subreaper(true);
    });
    install_interrupt_handler().map_err(|e| spawn_error("cannot install the signal handler", e))
}

/// On SIGINT, SIGTERM, SIGHUP or SIGQUIT: kills the process group of every running child,
/// lets the threads that spawned them reap them, then dies of that signal as strata would
/// have. Installed once per process (later calls do nothing); every command of the CLI
/// installs it before it starts.
pub fn install_interrupt_handler() -> std::io::Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};
    static INSTALLED: Mutex<bool> = Mutex::new(false);
    let mut installed = INSTALLED.lock().unwrap_or_else(|e| e.into_inner());
    if *installed {
        return Ok(());
    }
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP, SIGQUIT])?;
    thread::Builder::new()
        .name("strata-signals".into())
        .stack_size(strata_core::SMALL_STACK_BYTES)
        .spawn(move || {
            if let Some(sig) = signals.forever().next() {
                let mut c = children();
                c.signal = Some(sig);
                for pgid in &c.groups {
                    // Killed, not reaped: each child's owner reaps it.
                    let _ = killpg(Pid::from_raw(*pgid), Signal::SIGKILL);
                }
                let none = c.groups.is_empty();
                drop(c);
                if none {
                    die(sig);
                }
                thread::sleep(REAP_GRACE);
                die(sig);
            }
        })?;
    *installed = true;
    Ok(())
}

/// One captured stream: the bytes kept, and whether more came than the cap.
#[derive(Debug, Default)]
struct Capture {
    pipe: Option<os_pipe::PipeReader>,
    bytes: Vec<u8>,
    truncated: bool,
}

impl Capture {
    fn new(pipe: os_pipe::PipeReader) -> Capture {
        Capture {
            pipe: Some(pipe),
            ..Capture::default()
        }
    }

    /// Reads what the pipe holds (one read: poll said it would not block); closes it at
    /// end-of-file. Past the cap, bytes are read and dropped so the child never blocks.
    fn read_once(&mut self, buf: &mut [u8], cap: usize) {
        let Some(pipe) = &mut self.pipe else {
            return;
        };
        match pipe.read(buf) {
            Ok(0) => self.pipe = None,
            Ok(n) => {
                let room = cap.saturating_sub(self.bytes.len());
                self.bytes.extend_from_slice(&buf[..n.min(room)]);
                if n > room {
                    self.truncated = true;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => self.pipe = None,
        }
    }
}

/// Standard input still to be written.
struct Feed {
    pipe: Option<os_pipe::PipeWriter>,
    bytes: Vec<u8>,
    written: usize,
}

impl Feed {
    /// Writes at most `PIPE_BUF` bytes (poll said that much fits, so this never blocks);
    /// closes the pipe when everything is written or the child stopped reading.
    fn write_once(&mut self) {
        let Some(pipe) = &mut self.pipe else {
            return;
        };
        let end = self.bytes.len().min(self.written + PIPE_BUF);
        match pipe.write(&self.bytes[self.written..end]) {
            Ok(n) => self.written += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => self.written = self.bytes.len(),
        }
        if self.written >= self.bytes.len() {
            self.pipe = None;
        }
    }
}

/// Bytes a pipe write is guaranteed to take at once when poll reports it writable.
const PIPE_BUF: usize = 4096;

/// Tests turn pidfds off to exercise the fallback (polling the child every 10 ms).
#[cfg(test)]
static NO_PIDFD: AtomicBool = AtomicBool::new(false);

/// An fd that becomes readable when process `pid` exits (Linux 5.3+), if the kernel has one.
fn pidfd(pid: i32) -> Option<OwnedFd> {
    #[cfg(test)]
    if NO_PIDFD.load(Ordering::Relaxed) {
        return None;
    }
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::FromRawFd;
        // SAFETY: pidfd_open takes a pid and flags and returns a new fd or -1; it touches no
        // memory of ours.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
        if fd >= 0 {
            let fd = i32::try_from(fd).ok()?;
            // SAFETY: the kernel just returned this fd to us, and nothing else owns it.
            return Some(unsafe { OwnedFd::from_raw_fd(fd) });
        }
    }
    let _ = pid;
    None
}

/// A spawn that failed in the operating system (no path is involved: pipes, signals, waits).
fn spawn_error(what: &str, e: std::io::Error) -> Error {
    Error::new(Layer::REQUEST, ErrorKind::Spawn, format!("{what}: {e}")).with_source(e)
}

/// Kills what is left of the group and reaps the members that became strata's children.
fn clean_group(pgid: i32) {
    let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
    loop {
        match waitpid(Pid::from_raw(-pgid), Some(WaitPidFlag::WNOHANG)) {
            Err(Errno::EINTR) => {}
            Ok(WaitStatus::StillAlive) => {
                // A killed member not yet dead: wait for it (SIGKILL cannot be ignored).
                let _ = waitpid(Pid::from_raw(-pgid), None);
            }
            Err(_) => break,
            Ok(_) => {}
        }
    }
}

/// The poll timeout until `deadline` (at most about 24 days, poll's limit).
fn until(deadline: Option<Instant>) -> PollTimeout {
    match deadline {
        None => PollTimeout::NONE,
        Some(d) => {
            let ms = d.saturating_duration_since(Instant::now()).as_millis();
            // Round up so that a wake-up never comes just before the deadline.
            PollTimeout::try_from(ms.saturating_add(1).min(i32::MAX as u128) as i32)
                .unwrap_or(PollTimeout::MAX)
        }
    }
}

/// Runs `spec` to completion (or to its timeout) and returns what happened.
///
/// Errors are failures to start (the program cannot be executed, a pipe cannot be made); a
/// child that fails, hangs or floods its output yields a result saying so.
///
/// One thread does everything: it polls the child's stdout and stderr, its stdin when there
/// is input, and a pidfd that reports the child's exit. When the child exits, whatever is left
/// of its process group is killed (grandchildren holding the pipes open included) and the
/// pipes are drained; at the deadline the whole group is killed.
///
/// The child dies with the calling thread (its parent-death signal is set as it starts),
/// which waits for it to the end: so with strata, however strata ends.
pub fn spawn(spec: &SpawnSpec) -> Result<RunResult, Error> {
    prepare_process()?;
    let shown = || {
        spec.argv
            .first()
            .map_or_else(|| spec.program.display().to_string(), Text::redacted)
    };
    if spec
        .cancel
        .as_ref()
        .is_some_and(crate::Cancel::is_cancelled)
    {
        return Err(crate::Cancel::error(&shown()));
    }
    let cannot_start = |e: std::io::Error| {
        let program = shown();
        Error::new(
            Layer::REQUEST,
            ErrorKind::Spawn,
            format!("cannot start `{program}`: {e}"),
        )
        .with_source(e)
        .with_hint("check that the program exists, is executable and has a valid interpreter line")
    };
    let exec = Exec::new(
        &spec.program,
        &spec.cwd,
        spec.argv.iter().map(|t| t.text.as_str()),
        spec.env.iter().map(|(k, v)| format!("{k}={}", v.value)),
    )
    .ok_or_else(|| {
        cannot_start(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "nul byte found in provided data",
        ))
    })?;
    let pipe = || os_pipe::pipe().map_err(|e| spawn_error("cannot create a pipe", e));
    let (out_r, out_w) = pipe()?;
    let (err_r, err_w) = pipe()?;
    let (stdin, mut feed) = match &spec.stdin {
        Some(input) => {
            let (r, w) = pipe()?;
            let bytes = input.text.clone().into_bytes();
            let pipe = (!bytes.is_empty()).then_some(w);
            (
                OwnedFd::from(r),
                Feed {
                    pipe,
                    bytes,
                    written: 0,
                },
            )
        }
        None => {
            let null = std::fs::File::open("/dev/null")
                .map_err(|e| spawn_error("cannot open /dev/null", e))?;
            (
                OwnedFd::from(null),
                Feed {
                    pipe: None,
                    bytes: Vec::new(),
                    written: 0,
                },
            )
        }
    };
    let started = Instant::now();
    // The child starts and is registered under the lock, so that a signal either comes
    // before (and no child starts) or sees its group.
    let mut registry = children();
    if let Some(sig) = registry.signal {
        drop(registry);
        if children().groups.is_empty() {
            die(sig);
        }
        loop {
            thread::park();
        }
    }
    // Our copies of the pipes' other ends are closed once the child has its own, so that
    // the reads see end-of-file once the child's group is gone.
    let mut child = child::start(&exec, [stdin, OwnedFd::from(out_w), OwnedFd::from(err_w)])
        .map_err(cannot_start)?;
    let pid = child.pid();
    registry.groups.push(pid);
    drop(registry);
    let exit_fd = pidfd(pid);

    let deadline = started.checked_add(spec.timeout);
    let cap = spec.max_output_bytes;
    let mut out = Capture::new(out_r);
    let mut err = Capture::new(err_r);
    let mut buf = vec![0u8; 64 << 10];
    let mut exited = false;
    let mut timed_out = false;
    let mut duration = None;
    let mut grace: Option<Instant> = None;
    let mut cancelled = false;
    loop {
        if !exited {
            let done = match &exit_fd {
                // Without a pidfd the loop wakes every 10 ms to look.
                Some(_) => false,
                None => matches!(child.try_wait(), Ok(Some(_)) | Err(_)),
            };
            if done {
                exited = true;
            }
        }
        if exited && grace.is_none() {
            duration.get_or_insert_with(|| started.elapsed());
            let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
            feed.pipe = None;
            grace = Some(Instant::now() + READER_GRACE);
        }
        if out.pipe.is_none() && err.pipe.is_none() && exited {
            break;
        }
        let wake = match (grace, exited) {
            (Some(g), _) => Some(g),
            (None, _) if exit_fd.is_none() => {
                let tick = Instant::now() + Duration::from_millis(10);
                Some(deadline.map_or(tick, |d| d.min(tick)))
            }
            _ => deadline,
        };
        let mut fds: Vec<PollFd<'_>> = Vec::with_capacity(5);
        let mut slots = [None; 5];
        if let Some(p) = &out.pipe {
            slots[0] = Some(fds.len());
            fds.push(PollFd::new(p.as_fd(), PollFlags::POLLIN));
        }
        if let Some(p) = &err.pipe {
            slots[1] = Some(fds.len());
            fds.push(PollFd::new(p.as_fd(), PollFlags::POLLIN));
        }
        if let Some(p) = &feed.pipe {
            slots[2] = Some(fds.len());
            fds.push(PollFd::new(p.as_fd(), PollFlags::POLLOUT));
        }
        if let (Some(fd), false) = (&exit_fd, exited) {
            slots[3] = Some(fds.len());
            fds.push(PollFd::new(fd.as_fd(), PollFlags::POLLIN));
        }
        if let (Some(cancel), false) = (&spec.cancel, exited) {
            slots[4] = Some(fds.len());
            fds.push(PollFd::new(cancel.fd(), PollFlags::POLLIN));
        }
        let ready = match poll(&mut fds, until(wake)) {
            Ok(n) => n,
            Err(Errno::EINTR) => continue,
            Err(e) => {
                let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
                let _ = child.wait();
                clean_group(pid);
                reaped(pid);
                return Err(spawn_error("cannot watch the child", e.into()));
            }
        };
        let fired = |slot: Option<usize>| {
            slot.and_then(|i| fds[i].revents())
                .is_some_and(|r| !r.is_empty())
        };
        let (read_out, read_err, write_in, child_gone, stop) = (
            fired(slots[0]),
            fired(slots[1]),
            fired(slots[2]),
            fired(slots[3]),
            fired(slots[4]),
        );
        drop(fds);
        if stop && !exited {
            cancelled = true;
            duration = Some(started.elapsed());
            let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
            child.kill();
            exited = true;
        }
        if read_out {
            out.read_once(&mut buf, cap);
        }
        if read_err {
            err.read_once(&mut buf, cap);
        }
        if write_in {
            feed.write_once();
        }
        if child_gone {
            exited = true;
        }
        if ready == 0 {
            let now = Instant::now();
            if grace.is_some_and(|g| now >= g) {
                // A process that left the group still holds a pipe: stop waiting for it.
                break;
            }
            if !exited && deadline.is_some_and(|d| now >= d) {
                timed_out = true;
                duration = Some(started.elapsed());
                let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
                // The child may have left its group: kill it by pid too.
                child.kill();
                exited = true;
            }
        }
    }
    let status = child.wait();
    clean_group(pid);
    reaped(pid);
    let status = status.map_err(|e| spawn_error("cannot wait for the child", e))?;
    if cancelled {
        return Err(crate::Cancel::error(&shown()));
    }
    use std::os::unix::process::ExitStatusExt;
    Ok(RunResult {
        success: status.success() && !timed_out,
        exit_code: status.code(),
        signal: status.signal(),
        stdout: out.bytes,
        stderr: err.bytes,
        stdout_truncated: out.truncated,
        stderr_truncated: err.truncated,
        timed_out,
        duration: duration.unwrap_or_else(|| started.elapsed()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(argv: &[&str], stdin: Option<&str>, timeout_ms: u64, cap: usize) -> SpawnSpec {
        let path = std::env::var("PATH").unwrap_or_default();
        let program = crate::which(argv[0], &path).unwrap();
        let mut env = BTreeMap::new();
        env.insert(
            "PATH".to_string(),
            EnvVar {
                value: path,
                secret: false,
            },
        );
        SpawnSpec {
            program,
            argv: argv.iter().map(|a| authored(a)).collect(),
            cwd: std::env::temp_dir(),
            env,
            stdin: stdin.map(authored),
            timeout: Duration::from_millis(timeout_ms),
            max_output_bytes: cap,
            cancel: None,
        }
    }

    #[test]
    fn a_cancel_kills_the_child_and_the_spawn_reports_it() {
        let cancel = crate::Cancel::new().unwrap();
        let mut s = spec(&["sleep", "30"], None, 60_000, 1024);
        s.cancel = Some(cancel.clone());
        let stopper = {
            let cancel = cancel.clone();
            thread::spawn(move || {
                thread::sleep(Duration::from_millis(100));
                cancel.cancel();
            })
        };
        let e = spawn(&s).unwrap_err();
        stopper.join().unwrap();
        assert_eq!(e.kind(), ErrorKind::Cancelled);
        assert_eq!(e.message(), "`sleep` was cancelled");
        // Once set, nothing starts.
        let e = spawn(&s).unwrap_err();
        assert_eq!(e.message(), "`sleep` was cancelled");
    }

    #[test]
    fn captures_output_exit_code_and_stdin() {
        let r = spawn(&spec(
            &["sh", "-c", "cat; echo err >&2; exit 3"],
            Some("in"),
            5000,
            1024,
        ))
        .unwrap();
        assert_eq!(r.stdout, b"in");
        assert_eq!(r.stderr, b"err\n");
        assert_eq!(r.exit_code, Some(3));
        assert!(!r.success && !r.timed_out && !r.stdout_truncated);
    }

    #[test]
    fn caps_output_and_times_out() {
        let r = spawn(&spec(&["yes"], None, 300, 1000)).unwrap();
        assert!(r.timed_out && !r.success);
        assert_eq!(r.stdout.len(), 1000);
        assert!(r.stdout_truncated);
        assert_eq!(r.exit_code, None);
        assert_eq!(r.signal, Some(9));
    }

    #[test]
    fn large_input_is_fed_while_output_is_drained() {
        let input = "0123456789abcdef".repeat(1 << 16);
        let r = spawn(&spec(&["cat"], Some(&input), 10_000, 4 << 20)).unwrap();
        assert!(r.success);
        assert_eq!(r.stdout.len(), input.len());
        assert_eq!(r.stdout, input.as_bytes());
        let r = spawn(&spec(&["true"], Some(&input), 10_000, 1024)).unwrap();
        assert!(r.success, "a child that ignores its input still finishes");
    }

    #[test]
    fn without_pidfd_the_child_is_polled() {
        NO_PIDFD.store(true, Ordering::Relaxed);
        let r = spawn(&spec(&["sh", "-c", "echo hi; exit 4"], None, 5000, 1024));
        let slow = spawn(&spec(&["sleep", "5"], None, 200, 1024));
        NO_PIDFD.store(false, Ordering::Relaxed);
        let r = r.unwrap();
        assert_eq!((r.stdout.as_slice(), r.exit_code), (&b"hi\n"[..], Some(4)));
        assert!(slow.unwrap().timed_out);
    }

    #[test]
    fn a_script_without_an_interpreter_line_is_not_run_through_a_shell() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("plain");
        std::fs::write(&script, "echo ran\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let mut s = spec(&["true"], None, 5000, 1024);
        s.program = script;
        s.argv = vec![authored("plain")];
        let e = spawn(&s).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Spawn);
        assert_eq!(
            e.message(),
            "cannot start `plain`: Exec format error (os error 8)"
        );
    }

    #[test]
    fn a_tool_starts_with_sigpipe_at_its_default_action() {
        // The Rust runtime ignores SIGPIPE in this process; a tool must not inherit that.
        let r = spawn(&spec(
            &["grep", "SigIgn", "/proc/self/status"],
            None,
            5000,
            1024,
        ))
        .unwrap();
        let text = String::from_utf8(r.stdout).unwrap();
        let mask = text.trim().rsplit('\t').next().unwrap();
        let ignored = u64::from_str_radix(mask, 16).unwrap();
        assert_eq!(ignored & 1 << (libc::SIGPIPE - 1), 0, "{text}");
    }

    #[test]
    fn env_is_exactly_the_given_one() {
        let r = spawn(&spec(&["env"], None, 5000, 1 << 20)).unwrap();
        let text = String::from_utf8(r.stdout).unwrap();
        let names: Vec<&str> = text.lines().filter_map(|l| l.split('=').next()).collect();
        assert_eq!(names, ["PATH"]);
    }
}
