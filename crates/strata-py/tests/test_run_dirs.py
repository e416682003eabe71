"""A run's working directory on a Ray node (``strata.ray._worker``), without Ray: a slot, a copy
of the package Ray unpacked that one run at a time has, kept as a spare for the package's next
run when the run left it as it was made, removed otherwise — so a run never sees what another
run wrote."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

import strata
from strata.ray import _worker

PACKAGE = "_ray_pkg_0123abcd"


@pytest.fixture()
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A package as Ray unpacks one (a tool, a script, a folder, a link), the current
    directory as it is a task's."""
    root = tmp_path / PACKAGE
    (root / "tools" / "t").mkdir(parents=True)
    (root / "tools" / "t" / "a.yaml").write_text("config: {command: echo}\n")
    (root / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (root / "run.sh").chmod(0o755)
    os.symlink("tools/t/a.yaml", root / "link.yaml")
    monkeypatch.chdir(root)
    # The runs this process served, as a new worker process has them: none.
    monkeypatch.setattr(_worker, "_RUNS", {})
    return root


def spares(package: Path) -> list[str]:
    """The spare slots on the node (of any package), by their names without the id."""
    return sorted(
        p.name.rpartition("-")[0]
        for p in package.parent.glob("strata-slot-*")
        if p.is_dir() and not (p.parent / f".{p.name}.claimed").exists()
    )


def listing(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_a_run_that_changed_nothing_leaves_a_spare_the_next_run_takes(package: Path) -> None:
    first = _worker.run_dir("r1")
    assert first.parent == package.parent and first.name.startswith(f"strata-slot-{PACKAGE}-")
    assert (package.parent / "strata-run-r1").resolve() == first
    assert listing(first) == listing(package) and spares(package) == []
    # What strata keeps for the run there (its gate's records) is not the run's work.
    (first / ".strata" / "gate").mkdir(parents=True)
    (first / ".strata" / "gate" / "x").write_text("1")
    _worker.cleanup("r1")
    assert not (package.parent / "strata-run-r1").exists()
    assert not (package.parent / ".strata-run-r1.lock").exists()
    assert spares(package) == [f"strata-slot-{PACKAGE}"]
    inode = first.stat().st_ino
    second = _worker.run_dir("r2")
    # The same slot, with none of the last run's `.strata`.
    assert second == first and second.stat().st_ino == inode and spares(package) == []
    assert listing(second) == listing(package)
    assert (second / "run.sh").stat().st_mode & 0o777 == 0o755


def test_runs_at_once_have_slots_of_their_own_and_a_process_keeps_its_project_in_one(package: Path) -> None:
    first, opened = _worker._project("r1")
    second = _worker.run_dir("r2")
    assert second != first and _worker.run_dir("r1") == first
    _worker.cleanup("r1")
    # The next run takes r1's slot, where this process's project is open already.
    again, project = _worker._project("r3")
    assert again == first and project is opened
    _worker.cleanup("r3")
    _worker.cleanup("r2")
    assert spares(package) == [f"strata-slot-{PACKAGE}"] * 2
    # A slot a run changed goes, and with it what the process kept of it.
    changed, _ = _worker._project("r4")
    (changed / "out.txt").write_text("left by r4")
    _worker.cleanup("r4")
    assert not changed.exists() and str(changed) not in _worker._PROJECTS


def test_a_runs_later_tasks_in_a_process_find_its_slot_without_asking_the_node_until_it_ends(
    package: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, opened = _worker._project("r1")

    def asked(run: str) -> Path:
        raise AssertionError(f"the node was asked for run {run}'s slot")

    monkeypatch.setattr(_worker, "run_dir", asked)
    assert _worker._project("r1") == (first, opened)
    _worker.cleanup("r1")
    # Ended: a task of that id asks the node again.
    with pytest.raises(AssertionError, match="the node was asked for run r1's slot"):
        _worker._project("r1")


@pytest.mark.parametrize(
    "change",
    [
        "a new file",
        "a file's bytes, same size",
        "a file's time",
        "a file removed",
        "a mode",
        "a link's target",
        "a hard link out",
        "a new folder",
    ],
)
def test_a_run_that_changed_its_directory_leaves_no_spare(package: Path, tmp_path: Path, change: str) -> None:
    run = _worker.run_dir("r1")
    if change == "a new file":
        (run / "tools" / "t" / "out.txt").write_text("left by r1")
    elif change == "a file's bytes, same size":
        (run / "tools" / "t" / "a.yaml").write_text("config: {command: ohce}\n")
    elif change == "a file's time":
        os.utime(run / "run.sh", ns=(0, 0))
    elif change == "a file removed":
        (run / "run.sh").unlink()
    elif change == "a mode":
        (run / "run.sh").chmod(0o700)
    elif change == "a link's target":
        (run / "link.yaml").unlink()
        os.symlink("run.sh", run / "link.yaml")
    elif change == "a hard link out":
        os.link(run / "run.sh", tmp_path / "outside")
    else:
        (run / "cache").mkdir()
    _worker.cleanup("r1")
    assert not run.exists() and spares(package) == []
    assert not list(package.parent.glob(".strata-slot-*"))
    # The next run gets a fresh copy.
    assert listing(_worker.run_dir("r2")) == listing(package)


def test_spares_are_bounded_and_forgotten_with_their_package(package: Path) -> None:
    for run in ("r1", "r2", "r3"):
        _worker.run_dir(run)
    for run in ("r1", "r2", "r3"):
        _worker.cleanup(run)
    assert spares(package) == [f"strata-slot-{PACKAGE}"] * 2
    assert not list(package.parent.glob("strata-run-*"))
    # Ray removed another package: its spare goes at the next cleanup, this package's stay.
    gone = package.parent / "strata-slot-_ray_pkg_gone-0f0f"
    gone.mkdir()
    _worker.run_dir("r4")
    _worker.cleanup("r4")
    assert not gone.exists()
    assert spares(package) == [f"strata-slot-{PACKAGE}"] * 2


def test_a_copy_that_fails_leaves_neither_half_a_slot_nor_a_claim(
    package: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A socket in the package: no copy of it can be made (nor is one in a package Ray made).
    with socket.socket(socket.AF_UNIX) as listening:
        listening.bind(str(package / "zz.sock"))
        with pytest.raises(strata.StrataError) as failed:
            _worker.run_dir("r1")
    assert failed.value.kind == "io"
    assert failed.value.message == (
        f"cannot make run r1's working directory: `{package / 'zz.sock'}` is not a file, a folder or a link"
    )
    assert sorted(p.name for p in package.parent.iterdir()) == [".strata-run-r1.lock", PACKAGE]
    # A task's answer says it, on the node it ran.
    monkeypatch.setattr(_worker, "where", lambda: {"node": "n1", "pid": 1, "task": "t"})
    _, answer = _worker._opened([strata.__version__, "r1"])
    assert answer["error"]["kind"] == "io"
    assert answer["error"]["message"] == (
        f"on node n1: cannot make run r1's working directory: `{package / 'zz.sock'}` is not a file, "
        "a folder or a link"
    )


def test_a_run_id_that_names_a_path_makes_no_directory(package: Path) -> None:
    with pytest.raises(strata.StrataError) as refused:
        _worker.run_dir("../x")
    assert (refused.value.kind, refused.value.message) == ("invalid", "invalid run id `../x`")
    _worker.cleanup("../x")
    assert sorted(p.name for p in package.parent.iterdir()) == [PACKAGE]


def test_a_working_directory_gone_is_the_tasks_io_error(package: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Ray's package removed under a worker process: its current directory is gone.
    def gone() -> str:
        raise FileNotFoundError(2, "No such file or directory")

    monkeypatch.setattr(_worker, "where", lambda: {"node": "n1", "pid": 1, "task": "t"})
    monkeypatch.setattr(os, "getcwd", gone)
    _, answer = _worker._opened([strata.__version__, "r1"])
    assert answer["error"]["kind"] == "io"
    assert answer["error"]["message"] == (
        "on node n1: cannot make run r1's working directory: [Errno 2] No such file or directory"
    )


@pytest.mark.parametrize(
    "task",
    [
        # A driver of another version whose task holds less, or more, than this one's.
        ["0.0.0-another"],
        ["0.0.0-another", {"run": "r1"}, None, None, None, "more"],
        # An earlier driver, which sent its version as an argument of its own.
        "0.0.0-another",
    ],
)
def test_a_task_of_another_strata_is_refused_before_anything_else_is_read(
    package: Path, monkeypatch: pytest.MonkeyPatch, task: object
) -> None:
    monkeypatch.setattr(_worker, "where", lambda: {"node": "n1", "pid": 1, "task": "t"})
    mismatch = (
        f"strata version mismatch: the driver runs strata 0.0.0-another, the Ray worker on node n1 "
        f"runs strata {strata.__version__}"
    )
    for answer in (_worker.step(task), _worker.part(task)):  # type: ignore[arg-type]
        assert answer == {
            "error": {
                "kind": "invalid",
                "layer": "request",
                "message": mismatch,
                "path": "",
                "span": None,
                "hint": "install the same strata-engine on the driver and every node",
            },
            "node": "n1",
            "pid": 1,
            "task": "t",
        }
    # No working directory was made for it.
    assert sorted(p.name for p in package.parent.iterdir()) == [PACKAGE]
