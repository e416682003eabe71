//! Spawning with duct: argv only, an explicit environment, the child in its own process group,
//! stdin from `input_data`, stdout and stderr drained with a byte cap, a timeout that kills the
//! whole group, and no zombie or orphan left behind.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::sync::mpsc;
use std::sync::{Arc, Mutex, Once};
use std::thread;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::signal::{killpg, Signal};
use nix::sys::wait::waitpid;
use nix::unistd::Pid;
use strata_core::{EnvVar, Error, Layer, Origin, Text};

use crate::result::RunResult;

/// Default cap on captured stdout and on captured stderr, each: 8 MiB.
pub const DEFAULT_MAX_OUTPUT: usize = 8 << 20;

/// How long the output readers may take to finish once the child's group is gone (a process
/// that left the group may still hold a pipe open).
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
}

/// Authored text (for argv built by strata itself).
pub fn authored(s: &str) -> Text {
    let mut t = Text::default();
    t.push(s, Origin::Authored);
    t
}

/// Process groups of children still running, killed if strata is interrupted.
static LIVE_GROUPS: Mutex<Vec<i32>> = Mutex::new(Vec::new());

fn live(pgid: i32, add: bool) {
    let mut groups = LIVE_GROUPS.lock().unwrap_or_else(|e| e.into_inner());
    if add {
        groups.push(pgid);
    } else {
        groups.retain(|g| *g != pgid);
    }
}

/// Makes strata the reaper of its orphaned descendants (Linux), so that grandchildren killed
/// with their group are reaped by strata instead of lingering as zombies.
fn ensure_subreaper() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        #[cfg(target_os = "linux")]
        let _ = nix::sys::prctl::set_child_subreaper(true);
    });
}

/// Kills the process groups of every running child when strata receives SIGINT, SIGTERM,
/// SIGHUP or SIGQUIT, then dies of that signal as it would have.
pub fn install_interrupt_handler() -> std::io::Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP, SIGQUIT])?;
    thread::Builder::new()
        .name("strata-signals".into())
        .spawn(move || {
            if let Some(sig) = signals.forever().next() {
                let groups = LIVE_GROUPS
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .clone();
                for pgid in groups {
                    let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
                }
                let _ = signal_hook::low_level::emulate_default_handler(sig);
                std::process::exit(128 + sig);
            }
        })?;
    Ok(())
}

/// What one output reader kept.
#[derive(Debug, Default, Clone)]
struct Captured {
    bytes: Vec<u8>,
    truncated: bool,
}

fn start_reader(
    mut pipe: os_pipe::PipeReader,
    cap: usize,
    done: mpsc::Sender<()>,
) -> Arc<Mutex<Captured>> {
    let shared = Arc::new(Mutex::new(Captured::default()));
    let sink = Arc::clone(&shared);
    thread::spawn(move || {
        let mut buf = vec![0u8; 64 << 10];
        loop {
            match pipe.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    let mut c = sink.lock().unwrap_or_else(|e| e.into_inner());
                    let room = cap.saturating_sub(c.bytes.len());
                    c.bytes.extend_from_slice(&buf[..n.min(room)]);
                    if n > room {
                        c.truncated = true;
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        let _ = done.send(());
    });
    shared
}

fn io_error(what: &str, e: std::io::Error) -> Error {
    Error::new(Layer::Request, format!("{what}: {e}"))
}

/// Kills what is left of the group and reaps the members that became strata's children.
fn clean_group(pgid: i32) {
    let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
    loop {
        match waitpid(Pid::from_raw(-pgid), None) {
            Err(Errno::EINTR) => {}
            Err(_) => break,
            Ok(_) => {}
        }
    }
}

/// Runs `spec` to completion (or to its timeout) and returns what happened.
///
/// Errors are failures to start (the program cannot be executed, a pipe cannot be made); a
/// child that fails, hangs or floods its output yields a result saying so.
pub fn spawn(spec: &SpawnSpec) -> Result<RunResult, Error> {
    ensure_subreaper();
    let (out_r, out_w) = os_pipe::pipe().map_err(|e| io_error("cannot create a pipe", e))?;
    let (err_r, err_w) = os_pipe::pipe().map_err(|e| io_error("cannot create a pipe", e))?;
    let args: Vec<String> = spec.argv.iter().skip(1).map(|t| t.text.clone()).collect();
    let argv0 = spec.argv.first().map(|t| t.text.clone());
    let env = spec.env.iter().map(|(k, v)| (k.clone(), v.value.clone()));
    let mut expr = duct::cmd(&spec.program, args)
        .dir(&spec.cwd)
        .full_env(env)
        .stdout_file(out_w)
        .stderr_file(err_w)
        .unchecked()
        .before_spawn(move |cmd| {
            cmd.process_group(0);
            if let Some(a0) = &argv0 {
                cmd.arg0(a0);
            }
            Ok(())
        });
    let stdin_writer = match &spec.stdin {
        Some(_) => {
            let (r, w) = os_pipe::pipe().map_err(|e| io_error("cannot create a pipe", e))?;
            expr = expr.stdin_file(r);
            Some(w)
        }
        None => {
            expr = expr.stdin_null();
            None
        }
    };
    let started = Instant::now();
    let handle = expr.start();
    // The expression holds our copies of the pipes' write ends: drop it so that the readers
    // see end-of-file once the child's group is gone.
    drop(expr);
    let handle = handle.map_err(|e| {
        let program = spec.program.display();
        Error::new(Layer::Request, format!("cannot start `{program}`: {e}")).with_hint(
            "check that the program exists, is executable and has a valid interpreter line",
        )
    })?;
    let pgid = handle.pids().first().copied().unwrap_or(0) as i32;
    live(pgid, true);
    if let (Some(mut w), Some(input)) = (stdin_writer, &spec.stdin) {
        let bytes = input.text.clone().into_bytes();
        thread::spawn(move || {
            let _ = w.write_all(&bytes);
        });
    }
    let (done_tx, done_rx) = mpsc::channel();
    let out = start_reader(out_r, spec.max_output_bytes, done_tx.clone());
    let err = start_reader(err_r, spec.max_output_bytes, done_tx);

    let deadline = started.checked_add(spec.timeout);
    let waited = match deadline {
        Some(deadline) => handle.wait_deadline(deadline),
        None => handle.wait().map(Some),
    };
    let mut timed_out = false;
    let status = match waited {
        Ok(Some(output)) => Ok(output.status),
        Ok(None) => {
            timed_out = true;
            let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
            handle.wait().map(|o| o.status)
        }
        Err(e) => Err(e),
    };
    let duration = started.elapsed();
    clean_group(pgid);
    live(pgid, false);
    let status = status.map_err(|e| io_error("cannot wait for the child", e))?;

    let grace = Instant::now() + READER_GRACE;
    for _ in 0..2 {
        let left = grace.saturating_duration_since(Instant::now());
        if done_rx.recv_timeout(left).is_err() {
            break;
        }
    }
    let take = |c: &Arc<Mutex<Captured>>| c.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let (out, err) = (take(&out), take(&err));
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
        duration,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(argv: &[&str], stdin: Option<&str>, timeout_ms: u64, cap: usize) -> SpawnSpec {
        let path = std::env::var("PATH").unwrap_or_default();
        let program = crate::env::which(argv[0], &path).unwrap();
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
        }
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
    fn env_is_exactly_the_given_one() {
        let r = spawn(&spec(&["env"], None, 5000, 1 << 20)).unwrap();
        let text = String::from_utf8(r.stdout).unwrap();
        let names: Vec<&str> = text.lines().filter_map(|l| l.split('=').next()).collect();
        assert_eq!(names, ["PATH"]);
    }
}
