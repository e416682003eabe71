//! Starting a child as `posix_spawn` does — on Linux, `clone` with the caller's memory shared
//! and the calling thread suspended until the child has exec'd (`CLONE_VM | CLONE_VFORK`), so
//! that starting one costs the same whatever the caller's size (a `fork` copies the page
//! tables of the whole process: a Python host of 1 GiB took 96 ms a tool instead of 1.8 ms) —
//! with the set-up strata needs done in the child, which `posix_spawn` cannot do ([`set_up`]).
//!
//! Until it execs, the child runs on a stack of its own in the caller's memory: it reads only
//! what was prepared before it started, makes only system calls, allocates nothing, and
//! reports a failure through a close-on-exec pipe, as the standard library's children do.

use std::ffi::{c_char, c_int, c_void, CString};
use std::io::Read;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::ExitStatus;

use nix::errno::Errno;
use nix::sys::signal::{kill, pthread_sigmask, SigSet, SigmaskHow, Signal};
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::{dup2_stderr, dup2_stdin, dup2_stdout, getpid, setpgid, Pid};

/// The stack the child runs on until it execs (its frames take a few hundred bytes).
#[cfg(target_os = "linux")]
const CHILD_STACK_BYTES: usize = 64 << 10;

/// The exec of a child, made ready before it starts: the program, the working directory,
/// `argv` and the whole environment, as C strings and the null-terminated pointer arrays
/// `execve` takes. The pointers point into the strings, which move with them.
pub(crate) struct Exec {
    program: CString,
    cwd: CString,
    _strings: Vec<CString>,
    argv: Vec<*const c_char>,
    envp: Vec<*const c_char>,
}

impl Exec {
    /// The exec of `program` (a path; without a `/`, relative to `cwd`) in `cwd`, with `argv`
    /// (its `argv[0]` first; the program's path when empty) and the environment `env`
    /// (`NAME=value` each); `None` when a string holds a NUL.
    pub fn new<'a>(
        program: &Path,
        cwd: &Path,
        argv: impl IntoIterator<Item = &'a str>,
        env: impl IntoIterator<Item = String>,
    ) -> Option<Exec> {
        let program = CString::new(program.as_os_str().as_bytes()).ok()?;
        let cwd = CString::new(cwd.as_os_str().as_bytes()).ok()?;
        let mut args = argv
            .into_iter()
            .map(CString::new)
            .collect::<Result<Vec<_>, _>>()
            .ok()?;
        if args.is_empty() {
            args.push(program.clone());
        }
        let env = env
            .into_iter()
            .map(CString::new)
            .collect::<Result<Vec<_>, _>>()
            .ok()?;
        let pointers = |strings: &[CString]| {
            let mut out: Vec<*const c_char> = strings.iter().map(|s| s.as_ptr()).collect();
            out.push(std::ptr::null());
            out
        };
        let argv = pointers(&args);
        let envp = pointers(&env);
        let mut strings = args;
        strings.extend(env);
        Some(Exec {
            program,
            cwd,
            _strings: strings,
            argv,
            envp,
        })
    }

    /// Replaces the calling process by the program; returns only when that fails, with why.
    fn execve(&self) -> Errno {
        // SAFETY: the three pointers are valid, null-terminated arrays of C strings owned by
        // `self`.
        unsafe {
            libc::execve(
                self.program.as_ptr(),
                self.argv.as_ptr(),
                self.envp.as_ptr(),
            )
        };
        Errno::last()
    }
}

/// A started child, until it is reaped.
#[derive(Debug)]
pub(crate) struct Child {
    pid: Pid,
    status: Option<ExitStatus>,
}

impl Child {
    /// Its process id (and the id of its process group, which it leads).
    pub fn pid(&self) -> i32 {
        self.pid.as_raw()
    }

    /// Its status when it has ended (then reaped), without waiting.
    pub fn try_wait(&mut self) -> std::io::Result<Option<ExitStatus>> {
        self.reap(Some(WaitPidFlag::WNOHANG))
    }

    /// Waits for it to end, and reaps it.
    pub fn wait(&mut self) -> std::io::Result<ExitStatus> {
        loop {
            if let Some(status) = self.reap(None)? {
                return Ok(status);
            }
        }
    }

    /// Sends it `SIGKILL`, unless it is reaped already (its pid may then be another's).
    pub fn kill(&self) {
        if self.status.is_none() {
            let _ = kill(self.pid, Signal::SIGKILL);
        }
    }

    fn reap(&mut self, flags: Option<WaitPidFlag>) -> std::io::Result<Option<ExitStatus>> {
        if self.status.is_some() {
            return Ok(self.status);
        }
        let status = loop {
            match waitpid(self.pid, flags) {
                Err(Errno::EINTR) => {}
                Err(e) => return Err(e.into()),
                Ok(WaitStatus::Exited(_, code)) => break ExitStatus::from_raw((code & 0xff) << 8),
                Ok(WaitStatus::Signaled(_, sig, core)) => {
                    break ExitStatus::from_raw(sig as i32 | if core { 0x80 } else { 0 })
                }
                // Still running (a stop is reported only to a caller who asks for it).
                Ok(_) => return Ok(None),
            }
        };
        self.status = Some(status);
        Ok(self.status)
    }
}

/// What the child needs, prepared before it starts.
struct Setup<'a> {
    exec: &'a Exec,
    /// Its standard input, output and error.
    stdio: [BorrowedFd<'a>; 3],
    /// Where it writes the errno of what failed.
    report: BorrowedFd<'a>,
    /// The caller's process, which the child dies with.
    parent: Pid,
}

/// Starts `exec` with `stdio` as its standard input, output and error (the caller's copies
/// are closed once the child has its own), set up as [`set_up`] says. An error is a failure
/// to start: no child is left.
pub(crate) fn start(exec: &Exec, stdio: [OwnedFd; 3]) -> std::io::Result<Child> {
    let [input, output, error] = stdio;
    let stdio = [
        above_stdio(input)?,
        above_stdio(output)?,
        above_stdio(error)?,
    ];
    let (mut report, report_end) = os_pipe::pipe()?;
    let setup = Setup {
        exec,
        stdio: [stdio[0].as_fd(), stdio[1].as_fd(), stdio[2].as_fd()],
        report: report_end.as_fd(),
        parent: getpid(),
    };
    let pid = create(&setup)?;
    drop(report_end);
    let mut child = Child { pid, status: None };
    // End of file: the child exec'd, and the pipe closed with it.
    let mut failed = Vec::with_capacity(4);
    report.read_to_end(&mut failed)?;
    match <[u8; 4]>::try_from(failed.as_slice()) {
        Ok(errno) => {
            child.wait()?;
            Err(std::io::Error::from_raw_os_error(i32::from_ne_bytes(errno)))
        }
        Err(_) => Ok(child),
    }
}

/// `fd`, moved above 0-2 if it is one of them (a host whose standard streams are closed hands
/// out those numbers): the child puts its descriptors onto 0-2 in turn, and must not
/// overwrite one it has yet to place.
fn above_stdio(fd: OwnedFd) -> std::io::Result<OwnedFd> {
    if fd.as_raw_fd() > 2 {
        return Ok(fd);
    }
    // A copy at 3 or above, close-on-exec.
    fd.try_clone()
}

/// Creates the child, running [`child_main`], with every signal blocked in the calling thread
/// meanwhile (the child unblocks them once no handler of the caller's can run in it).
fn create(setup: &Setup<'_>) -> std::io::Result<Pid> {
    let mut mask = SigSet::empty();
    pthread_sigmask(
        SigmaskHow::SIG_SETMASK,
        Some(&SigSet::all()),
        Some(&mut mask),
    )?;
    let created = clone_or_fork(setup);
    let _ = pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&mask), None);
    created
}

/// On Linux, a `clone` sharing the caller's memory, that returns once the child has exec'd or
/// exited.
#[cfg(target_os = "linux")]
fn clone_or_fork(setup: &Setup<'_>) -> std::io::Result<Pid> {
    let mut stack = vec![0u128; CHILD_STACK_BYTES / 16];
    let top = stack.as_mut_ptr_range().end.cast::<c_void>();
    let arg = std::ptr::from_ref(setup).cast_mut().cast::<c_void>();
    // SAFETY: the child runs `child_main` on `stack` with `setup`, both alive until the child
    // has exec'd or exited: CLONE_VFORK suspends this thread until then. The child reads
    // `setup`, writes only its own stack, makes only system calls and allocates nothing, so
    // sharing the memory of this process is sound; no handler of ours runs in it (every
    // signal is blocked until it has reset them).
    let pid = unsafe {
        libc::clone(
            child_main,
            top,
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            arg,
        )
    };
    drop(stack);
    Ok(Pid::from_raw(Errno::result(pid)?))
}

/// Elsewhere, a `fork`.
#[cfg(not(target_os = "linux"))]
fn clone_or_fork(setup: &Setup<'_>) -> std::io::Result<Pid> {
    // SAFETY: the child makes only async-signal-safe calls (`child_main`), as the child of a
    // process of several threads must.
    match unsafe { nix::unistd::fork() }? {
        nix::unistd::ForkResult::Parent { child } => Ok(child),
        nix::unistd::ForkResult::Child => {
            child_main(std::ptr::from_ref(setup).cast_mut().cast::<c_void>());
            unreachable!("child_main exits")
        }
    }
}

/// The child until it execs: [`set_up`], then the exec; on a failure, the errno written to
/// the report pipe, and exit status 127.
extern "C" fn child_main(setup: *mut c_void) -> c_int {
    // SAFETY: `setup` is the `Setup` that `clone_or_fork` passes, alive until the child has
    // exec'd or exited.
    let setup = unsafe { &*setup.cast_const().cast::<Setup<'_>>() };
    let errno = match set_up(setup) {
        Ok(()) => setup.exec.execve(),
        Err(e) => e,
    };
    let _ = nix::unistd::write(setup.report, &(errno as i32).to_ne_bytes());
    // SAFETY: _exit ends the child at once, running nothing of the caller's.
    unsafe { libc::_exit(127) }
}

/// Sets the child up, in order:
///
/// * every signal that has a handler takes its default action, and `SIGPIPE` too (Rust
///   programs and Python ignore it; a tool expects its default); ignored signals stay ignored;
/// * `stdio` on 0-2, a process group of its own, the working directory;
/// * it dies with the thread that starts it (a parent-death signal, `SIGKILL`), which waits
///   for it to the end: a tool never outlives a strata that was killed, even by `SIGKILL`
///   (a `strata run`, a Ray worker), and a retried step never overlaps the call it replaces;
///   when the caller is already gone by the time the signal is armed, the child exits at
///   once;
/// * every other descriptor it inherited is closed at the exec ([`close_inherited_fds`]);
/// * no signal blocked.
///
/// It then execs with `execve` (never `execvp`, which runs a file that is not an executable
/// format through `/bin/sh`: a script without an interpreter line must fail to start).
fn set_up(setup: &Setup<'_>) -> Result<(), Errno> {
    default_signal_actions();
    let [input, output, error] = setup.stdio;
    dup2_stdin(input)?;
    dup2_stdout(output)?;
    dup2_stderr(error)?;
    setpgid(Pid::from_raw(0), Pid::from_raw(0))?;
    nix::unistd::chdir(setup.exec.cwd.as_c_str())?;
    die_with_parent(setup.parent)?;
    close_inherited_fds();
    pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&SigSet::empty()), None)
}

/// The highest signal number.
#[cfg(target_os = "linux")]
fn last_signal() -> c_int {
    libc::SIGRTMAX()
}

/// The highest signal number.
#[cfg(not(target_os = "linux"))]
fn last_signal() -> c_int {
    31
}

/// Gives every signal with a handler its default action, and `SIGPIPE`: a handler of the
/// caller must never run in the child, which shares its memory until the exec.
fn default_signal_actions() {
    for sig in 1..=last_signal() {
        // SAFETY: sigaction reads (then sets) the action of one signal of the calling
        // process from (into) values on this stack; a signal it does not take fails with
        // EINVAL and is left alone.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, std::ptr::null(), &mut action) != 0 {
                continue;
            }
            let handled =
                action.sa_sigaction != libc::SIG_DFL && action.sa_sigaction != libc::SIG_IGN;
            if handled || sig == libc::SIGPIPE {
                let default: libc::sigaction = std::mem::zeroed();
                libc::sigaction(sig, &default, std::ptr::null_mut());
            }
        }
    }
}

/// Arms the parent-death signal of the calling child, then checks that its parent is still
/// `parent` (else it died before the signal was armed, and the child must not run).
fn die_with_parent(parent: Pid) -> Result<(), Errno> {
    #[cfg(target_os = "linux")]
    {
        nix::sys::prctl::set_pdeathsig(Signal::SIGKILL)?;
        if nix::unistd::getppid() != parent {
            return Err(Errno::ESRCH);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = parent;
    Ok(())
}

/// Marks every descriptor of the calling child above 2 close-on-exec, so that the program it
/// execs inherits none of them: those its parent opened without the flag included (a host's
/// descriptors meant for its own children, or descriptors strata inherited). It changes the
/// child's table only, never the parent's. Close-on-exec rather than closed: the report pipe
/// stays open until the exec.
fn close_inherited_fds() {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: close_range changes only flags of the calling process's descriptors; it
        // touches no memory.
        let done = unsafe {
            libc::syscall(
                libc::SYS_close_range,
                3u32,
                u32::MAX,
                libc::CLOSE_RANGE_CLOEXEC,
            )
        };
        if done == 0 {
            return;
        }
    }
    // Without close_range (Linux before 5.11, other systems): each descriptor up to the limit.
    let max = nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)
        .map_or(1024, |(soft, _)| soft.min(1 << 16) as i32);
    for fd in 3..max {
        // SAFETY: fcntl on a descriptor number that may not be open fails with EBADF; it only
        // reads or sets the flags of the calling process's descriptor.
        unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFD);
            if flags >= 0 && flags & libc::FD_CLOEXEC == 0 {
                libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC);
            }
        }
    }
}
