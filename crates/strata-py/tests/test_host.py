"""Embedding strata leaves its host process as it found it: running a tool through the
bindings changes none of the host's descriptors, does not make the host the reaper of its
orphaned descendants, and leaves its transparent-huge-page setting as it was. The tool itself
still inherits no descriptor but its standard input, output and error."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import strata

PR_GET_CHILD_SUBREAPER = 37
PR_SET_THP_DISABLE = 41
PR_GET_THP_DISABLE = 42

LIBC = ctypes.CDLL(None, use_errno=True)

# Reports whether its descriptor `fd` is open.
FD_TOOL = """\
executor: runtimes/subprocess
parameters:
  type: object
  properties:
    fd: {type: integer}
config:
  command: sh
  args: ["-c", "if [ -e /proc/self/fd/$1 ]; then echo open; else echo closed; fi", "sh", "{fd}"]
"""


def child_subreaper() -> int:
    """The host's PR_GET_CHILD_SUBREAPER flag."""
    flag = ctypes.c_int(-1)
    assert LIBC.prctl(PR_GET_CHILD_SUBREAPER, ctypes.byref(flag), 0, 0, 0) == 0
    return flag.value


def test_an_inheritable_descriptor_of_the_host_stays_inheritable_and_never_reaches_the_tool(
    project_dir: Path,
) -> None:
    (project_dir / "tools" / "fd.yaml").write_text(FD_TOOL)
    project = strata.Project(project_dir)
    fd = os.open(os.devnull, os.O_RDONLY)
    try:
        os.set_inheritable(fd, True)
        record = project.run_tool("fd", {"fd": fd})
        assert (record["status"], record["result"]) == ("completed", "closed")
        assert os.get_inheritable(fd)
    finally:
        os.close(fd)


def test_the_host_is_never_made_a_subreaper(project: strata.Project) -> None:
    assert project.run_tool("say")["status"] == "completed"
    assert child_subreaper() == 0


def test_an_orphaned_grandchild_of_the_host_is_reaped_by_init_not_left_a_zombie_of_the_host(
    project: strata.Project,
) -> None:
    assert project.run_tool("say")["status"] == "completed"
    shell = subprocess.run(
        ["sh", "-c", "sleep 0.2 >/dev/null 2>&1 & echo $!"],
        capture_output=True,
        text=True,
        check=True,
    )
    grandchild = int(shell.stdout)
    proc = Path(f"/proc/{grandchild}")
    try:
        # Its parent is gone: the orphan is no child of the host (waitpid would reap it).
        with pytest.raises(ChildProcessError):
            os.waitpid(grandchild, os.WNOHANG)
        # Once it ends, whoever adopted it reaps it: it does not stay a zombie.
        deadline = time.monotonic() + 30
        while proc.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not proc.exists()
    finally:
        if proc.exists():
            os.kill(grandchild, 9)


# Sets the host's huge-page flag, imports strata, runs a tool, and prints the flag after the
# import and after the run.
THP_HOST = """\
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
assert libc.prctl(41, int(sys.argv[1]), 0, 0, 0) == 0
import strata
after_import = libc.prctl(42, 0, 0, 0, 0)
record = strata.Project(sys.argv[2]).run_tool("say")
print(record["status"], after_import, libc.prctl(42, 0, 0, 0, 0))
"""


@pytest.mark.parametrize("disabled", [0, 1])
def test_importing_strata_and_running_a_tool_leave_the_hosts_huge_page_setting(
    project_dir: Path, disabled: int
) -> None:
    host = subprocess.run(
        [sys.executable, "-c", THP_HOST, str(disabled), str(project_dir)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert host.stdout == f"completed {disabled} {disabled}\n"
