//! A program that embeds the library (as the Python module does) is left as it was by
//! running a tool: its descriptors keep their flags, it is not made the reaper of its
//! orphaned descendants, and its transparent-huge-page setting stays its own. The tool still
//! inherits no descriptor but 0-2. One test, so that its process starts no tool before it.

use std::collections::BTreeMap;
use std::os::fd::AsRawFd;
use std::time::Duration;

use nix::fcntl::{fcntl, FcntlArg, FdFlag};
use nix::sys::prctl;
use strata_core::EnvVar;
use strata_exec::{authored, spawn, which, SpawnSpec};
use strata_tools::RunResult;

/// Runs `argv` (its program found on `PATH`) as the library does.
fn run(argv: &[&str]) -> RunResult {
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
        stdin: None,
        timeout: Duration::from_secs(10),
        max_output_bytes: 1 << 16,
    })
    .expect("the tool starts")
}

#[test]
fn running_a_tool_leaves_the_host_as_it_found_it() {
    // Descriptors without close-on-exec, as a host that means its own children to inherit
    // them has them; and the host's huge pages turned off.
    let (read, write) = nix::unistd::pipe().expect("a pipe");
    prctl::set_thp_disable(true).expect("PR_SET_THP_DISABLE");
    let probe = format!(
        "[ -e /proc/self/fd/{} ] && echo open || echo closed",
        write.as_raw_fd()
    );
    let r = run(&["sh", "-c", &probe]);
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
    assert!(run(&["true"]).success);
    assert!(!prctl::get_thp_disable().expect("PR_GET_THP_DISABLE"));
}
