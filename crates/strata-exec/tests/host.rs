//! A program that embeds the library (as the Python module does) is left as it was by
//! running a tool: its descriptors keep their flags, it is not made the reaper of its
//! orphaned descendants, and its transparent-huge-page setting stays its own. The tool still
//! inherits no descriptor but 0-2, and has its own streams there even when the host's
//! standard streams are closed. The tests change the state of the whole process, so they
//! take turns.

use std::collections::BTreeMap;
use std::os::fd::{AsFd, AsRawFd};
use std::sync::Mutex;
use std::time::Duration;

use nix::fcntl::{fcntl, FcntlArg, FdFlag};
use nix::sys::prctl;
use nix::unistd::{close, dup2_stderr, dup2_stdin, dup2_stdout};
use strata_core::EnvVar;
use strata_exec::{authored, spawn, which, SpawnSpec};
use strata_tools::RunResult;

/// Held by each test while it runs.
static TURN: Mutex<()> = Mutex::new(());

/// Runs `argv` (its program found on `PATH`) as the library does, `stdin` its input.
fn run(argv: &[&str], stdin: Option<&str>) -> RunResult {
    let path = std::env::var("PATH").unwrap_or_default();
    let program = which(argv[0], &path).expect("the program is on PATH");
    let env = BTreeMap::from([(
        "PATH".to_string(),
        EnvVar {
            value: path,
            secret: false,
        },
    )]);
    spawn(&SpawnSpec {
        program,
        argv: argv.iter().map(|a| authored(a)).collect(),
        cwd: std::env::temp_dir(),
        env,
        stdin: stdin.map(authored),
        timeout: Duration::from_secs(10),
        max_output_bytes: 1 << 16,
        cancel: None,
    })
    .expect("the tool starts")
}

#[test]
fn running_a_tool_leaves_the_host_as_it_found_it() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    // Descriptors without close-on-exec, as a host that means its own children to inherit
    // them has them; and the host's huge pages turned off.
    let (read, write) = nix::unistd::pipe().expect("a pipe");
    prctl::set_thp_disable(true).expect("PR_SET_THP_DISABLE");
    let probe = format!(
        "[ -e /proc/self/fd/{} ] && echo open || echo closed",
        write.as_raw_fd()
    );
    let r = run(&["sh", "-c", &probe], None);
    assert_eq!(
        r.stdout, b"closed\n",
        "the tool inherited the host's descriptor"
    );
    for fd in [&read, &write] {
        let flags = FdFlag::from_bits_truncate(fcntl(fd, FcntlArg::F_GETFD).expect("F_GETFD"));
        assert!(
            !flags.contains(FdFlag::FD_CLOEXEC),
            "descriptor {} of the host became close-on-exec",
            fd.as_raw_fd()
        );
    }
    assert!(
        !prctl::get_child_subreaper().expect("PR_GET_CHILD_SUBREAPER"),
        "the host became a subreaper"
    );
    assert!(
        prctl::get_thp_disable().expect("PR_GET_THP_DISABLE"),
        "the host's huge pages were turned back on"
    );
    prctl::set_thp_disable(false).expect("PR_SET_THP_DISABLE");
    assert!(run(&["true"], None).success);
    assert!(!prctl::get_thp_disable().expect("PR_GET_THP_DISABLE"));
}

#[test]
fn a_tool_has_its_own_streams_in_a_host_whose_standard_streams_are_closed() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let saved = [
        std::io::stdin().as_fd().try_clone_to_owned(),
        std::io::stdout().as_fd().try_clone_to_owned(),
        std::io::stderr().as_fd().try_clone_to_owned(),
    ]
    .map(|fd| fd.expect("a copy of a standard stream"));
    // The pipes strata makes now take descriptors 0-2, as they do in a daemon.
    for fd in 0..3 {
        close(fd).expect("close");
    }
    let r = run(&["sh", "-c", "cat; echo out; echo err >&2"], Some("in "));
    let [input, output, error] = &saved;
    dup2_stdin(input).expect("stdin back");
    dup2_stdout(output).expect("stdout back");
    dup2_stderr(error).expect("stderr back");
    assert_eq!(
        (r.stdout.as_slice(), r.stderr.as_slice()),
        (&b"in out\n"[..], &b"err\n"[..])
    );
}
