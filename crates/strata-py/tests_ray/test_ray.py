"""strata.ray on a real two-node Ray cluster (head + one worker node, loopback only): the
fan-out spread over both nodes, each plan step a task through the step operation, a graph on
the walk in parts with a foreach's elements as parallel tasks, the driver's project never
written by a task, the same records as `strata plan run` / `strata run` for every shipped plan
and graph, a worker killed mid-step (retried, or failed with its dependents skipped), a seeded
secret never on the wire or in Ray's files, a refused plan refused before any task, resume and
the command line."""

from __future__ import annotations

import hashlib
import shutil
import importlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

import pytest

import strata
import strata.ray as sray
from cluster import Cluster, walk_bytes
from conftest import REPO, SEEDED

# --- helpers --------------------------------------------------------------------------------


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def timeless(steps: list[Any]) -> list[Any]:
    """Step records without their durations."""
    out = []
    for record in steps:
        record = dict(record)
        if isinstance(record.get("run"), dict):
            record["run"] = {k: v for k, v in record["run"].items() if k != "duration_ms"}
        out.append(record)
    return out


def snapshot(root: Path) -> dict[str, str]:
    """Every file under `root` (but what the driver itself keeps there: the runs, the gate's
    admissions) with a hash of its bytes."""
    out = {}
    for path, data in walk_bytes(root):
        rel = str(path.relative_to(root))
        if rel.startswith((".strata/runs/", ".strata/gate/")):
            continue
        out[rel] = hashlib.sha256(data).hexdigest()
    return out


def cli(strata_bin: Path, project: Path, *args: str, **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(strata_bin), *args], cwd=project, capture_output=True, text=True, **kw)


FAN_OUT_TOOL = """\
description: Sleeps, then reports the process that ran it (its parent is the Ray worker)
executor: runtimes/subprocess
parameters:
  type: object
  properties:
    n: {type: integer}
    seconds: {type: number}
config:
  command: sh
  args: ["-c", "sleep $1; echo $PPID", "sh", "{seconds}"]
"""

WRITE_TOOL = """\
description: Writes a file in its working directory and prints that directory
executor: runtimes/subprocess
config:
  command: sh
  args: ["-c", "echo task > written-by-task; mkdir -p .strata/runs/fake; echo x > .strata/runs/fake/x; pwd"]
"""

STALL_TOOL = """\
description: Records its pid and its parent's, then sleeps until killed, unless `go-NAME` exists
executor: runtimes/subprocess
parameters:
  type: object
  properties:
    dir: {type: string}
    name: {type: string}
config:
  command: sh
  args: ["-c", "if [ -e \\"$1/go-$2\\" ]; then printf 'ok-%s' \\"$2\\"; else echo $$ $PPID > \\"$1/$2.tmp\\"; mv \\"$1/$2.tmp\\" \\"$1/$2.pids\\"; exec sleep 60; fi", "sh", "{dir}", "{name}"]
"""

SAY_TOOL = """\
description: Prints its text
executor: runtimes/subprocess
parameters:
  type: object
  properties:
    text: {type: string}
config:
  command: printf
  args: ["%s", "{text}"]
"""

LEAK_TOOL = """\
description: Prints the secret SEEDED_TOKEN on stdout
executor: runtimes/subprocess
secrets: [SEEDED_TOKEN]
config:
  command: printf
  args: ["%s", "${SEEDED_TOKEN}"]
"""

LENGTH_TOOL = """\
description: Prints the length of the value it was given
executor: runtimes/subprocess
parameters:
  type: object
  properties:
    tok: {type: string}
config:
  command: sh
  args: ["-c", "printf %s \\"$1\\" | wc -c | tr -d ' '", "sh", "{tok}"]
"""

# --- the tests ------------------------------------------------------------------------------


def test_the_fan_out_spreads_over_both_nodes_and_steps_report_where_they_ran(
    cluster: Cluster, project: Path
) -> None:
    write(project, {"tools/fan/out.yaml": FAN_OUT_TOOL})
    plan = [{"id": f"s{i}", "tool": "fan/out", "arguments": {"n": i, "seconds": 0.3}} for i in range(8)]
    run = sray.run_plan(project, plan, strategy="SPREAD")
    assert run["status"] == "completed", run
    nodes_by_pid = {p["pid"]: p["node"] for p in run["placements"]}
    assert len(run["placements"]) == 8
    # Each step reports its process's parent: the Ray worker that ran it.
    step_nodes = {nodes_by_pid[int(s["result"])] for s in run["steps"]}
    assert step_nodes == set(cluster.node_ids()), (step_nodes, cluster.node_ids())


def test_each_step_is_one_task_running_the_step_operation_on_the_worker(
    cluster: Cluster, project: Path, strata_bin: Path
) -> None:
    plan = [
        {"id": "make", "tool": "plans/work", "arguments": {"step": "make", "ms": 0}},
        {"id": "lost", "tool": "plans/work", "arguments": {"step": "{{make.result.nope}}", "ms": 0}},
        {"id": "after", "tool": "plans/work", "arguments": {"step": "{{lost.result}}", "ms": 0}},
    ]
    (project / "plans" / "lost.json").write_text(json.dumps(plan))
    run = sray.run_plan(project, "plans/lost.json")
    local = json.loads(cli(strata_bin, project, "plan", "run", "plans/lost.json", "--json", "--quiet").stdout)
    assert timeless(run["steps"]) == timeless(local["steps"])
    assert [s["status"] for s in run["steps"]] == ["completed", "failed", "skipped"]
    # One task per step that ran. `lost` calls no tool: its reference does not resolve. It
    # still went to a worker as a task — the step operation resolves a step's arguments
    # there — and failed there, located in the plan's file; `after`, skipped by the
    # driver's scheduler, never left.
    assert sorted(p["step"] for p in run["placements"]) == ["lost", "make"]
    assert run["steps"][1]["error"] == {
        "kind": "path_not_found",
        "message": "plans/lost.json:1:140: plan error at [1].arguments.step 0..20: `{{make.result.nope}}`: step "
        "`make` has no `result.nope`; `result` has `step`, `input`, `slept_ms`",
    }


MEET_TOOL = """\
description: Marks element N in DIR, waits until all four are marked, prints its Ray worker's pid
executor: runtimes/subprocess
parameters:
  type: object
  properties:
    dir: {type: string}
    n: {type: integer}
config:
  command: sh
  args: ["-c", "touch \\"$1/$2\\"; while [ $(ls \\"$1\\" | wc -l) -lt 4 ]; do sleep 0.05; done; echo $PPID", "sh", "{dir}", "{n}"]
  timeout: 60
"""

MEET_GRAPH = """\
kind: graph
parameters:
  type: object
  properties:
    dir: {type: string}
state: {pids: []}
nodes:
  each:
    kind: foreach
    over: [1, 2, 3, 4]
    as: n
    parallel: true
    max_concurrency: 4
    do: {kind: action, tool: f/meet, params: {dir: "${inputs.dir}", n: "${n}"}}
    collect: pids
    next: done
  done: {kind: return, output: "${state.pids}"}
"""


def test_a_graph_walks_in_parts_with_a_foreachs_elements_as_parallel_tasks(
    cluster: Cluster, project: Path, tmp_path: Path
) -> None:
    write(project, {"tools/f/meet.yaml": MEET_TOOL, "tools/graphs/meet.yaml": MEET_GRAPH})
    marks = tmp_path / "meet"
    marks.mkdir()
    run = sray.run_graph(project, "graphs/meet", {"dir": str(marks)}, run_id="meet")
    assert run["status"] == "completed", run
    parts = [(p["part"], p["at"], p["index"]) for p in run["placements"]]
    assert parts[:2] == [("begin", None, None), ("items", "each", None)]
    assert sorted(parts[2:6]) == [("element", "each", i) for i in range(4)]
    assert parts[6:] == [("advance", "each", None), ("advance", "done", None)]
    # Each element waited for all four to start: they were tasks in flight together, each
    # in its own Ray worker (the parent of its tool).
    pids = run["result"]
    assert sorted(pids) == sorted(p["pid"] for p in run["placements"][2:6])
    assert len(set(pids)) == 4
    assert run["steps"] == 2
    assert graph_checkpoint(project, "meet")["status"] == "completed"


def test_the_driver_project_is_never_written_by_a_task(cluster: Cluster, project: Path) -> None:
    write(project, {"tools/w/write.yaml": WRITE_TOOL})
    before = snapshot(project)
    run = sray.run_plan(project, [{"id": "w", "tool": "w/write", "arguments": {}}], run_id="w1")
    assert run["status"] == "completed", run
    assert run["steps"][0]["result"] != str(project)  # the task ran in Ray's copy
    assert snapshot(project) == before
    assert not (project / "written-by-task").exists()
    # The driver alone wrote the run's records.
    assert sorted(p.name for p in (project / ".strata" / "runs").iterdir()) == ["w1"]


def shipped_plans() -> list[str]:
    return sorted(p.name for p in (REPO / "plans").iterdir())


@pytest.mark.parametrize("name", shipped_plans())
def test_every_shipped_plan_gives_the_records_of_strata_plan_run(
    cluster: Cluster, project: Path, strata_bin: Path, name: str
) -> None:
    local = cli(strata_bin, project, "plan", "run", f"plans/{name}", "--json", "--quiet")
    strategy: Any = "DEFAULT"
    if name == "duplicates.json":
        # Its steps pass files through the project directory (the first writes a folder the
        # second reads): on a cluster they need one node's copy (docs/scale-out.md).
        strategies: Any = importlib.import_module("ray.util.scheduling_strategies")
        strategy = strategies.NodeAffinitySchedulingStrategy(node_id=cluster.node_ids()[0], soft=False)
    try:
        ray_run: Any = sray.run_plan(project, f"plans/{name}", strategy=strategy)
    except strata.StrataError as e:
        # Refused by both, alike.
        assert local.returncode == 2, local.stdout
        assert json.loads(local.stdout)["error"]["message"] == e.message
        return
    report = json.loads(local.stdout)
    for key in ("status", "levels", "missing_values"):
        assert ray_run[key] == report[key], key
    assert timeless(ray_run["steps"]) == timeless(report["steps"])


@pytest.mark.parametrize("inline", [True, False])
def test_a_plan_travels_with_its_tasks_or_once_through_the_object_store_with_the_same_records(
    cluster: Cluster, project: Path, strata_bin: Path, monkeypatch: pytest.MonkeyPatch, inline: bool
) -> None:
    local = json.loads(cli(strata_bin, project, "plan", "run", "plans/exercise.yaml", "--json", "--quiet").stdout)
    given: list[Any] = []
    real = sray._driver.Executor._plan_arg

    def plan_arg(self: Any, plan: Any) -> Any:
        given.append(real(self, plan))
        return given[-1]

    monkeypatch.setattr(sray._driver.Executor, "_plan_arg", plan_arg)
    if not inline:
        monkeypatch.setattr(sray._driver, "INLINE_PLAN", 0)
    ray_run: Any = sray.run_plan(project, "plans/exercise.yaml")
    # Made once per run: the plan's bytes, or a list holding its reference.
    assert len(given) == 1 and isinstance(given[0], bytes) == inline
    if not inline:
        assert isinstance(given[0][0], importlib.import_module("ray").ObjectRef)
    assert timeless(ray_run["steps"]) == timeless(local["steps"])


def shipped_graphs() -> list[str]:
    return sorted(p.stem for p in (REPO / "tools" / "graphs").glob("*.yaml"))


def graph_checkpoint(project: Path, run_id: str) -> Any:
    cp = json.loads((project / ".strata" / "runs" / run_id / "checkpoint.json").read_text())
    for key in ("run_id", "started", "updated"):
        cp.pop(key, None)
    return cp


@pytest.mark.parametrize("name", shipped_graphs())
def test_every_shipped_graph_gives_the_records_of_strata_run(
    cluster: Cluster, project: Path, strata_bin: Path, name: str
) -> None:
    local = cli(strata_bin, project, "run", f"graphs/{name}", "--json", "--run-id", "local")
    ray_run = sray.run_graph(project, f"graphs/{name}", run_id="remote")
    report = json.loads(local.stdout)
    assert ray_run["status"] == report["status"], ray_run
    assert ray_run["steps"] == report["steps"]
    assert ray_run.get("result") == report.get("result")
    assert graph_checkpoint(project, "remote") == graph_checkpoint(project, "local")


def stall_plan(marks: Path) -> list[Any]:
    return [
        {"id": "a", "tool": "f/stall", "arguments": {"dir": str(marks), "name": "a"}},
        {"id": "b", "tool": "f/say", "arguments": {"text": "after {{a.result}}"}},
        {"id": "c", "tool": "f/say", "arguments": {"text": "independent"}},
    ]


def stalling(project: Path, tmp_path: Path) -> Path:
    """Gives ``project`` the tools of ``stall_plan`` and returns the directory of its marks."""
    write(project, {"tools/f/stall.yaml": STALL_TOOL, "tools/f/say.yaml": SAY_TOOL})
    marks = tmp_path / "marks"
    marks.mkdir()
    return marks


def kill_worker_mid_step(marks: Path, go: bool) -> int:
    """Waits for step `a` to start, then kills the Ray worker running it; returns the tool's
    pid."""
    pids = marks / "a.pids"
    deadline = time.monotonic() + 60
    while not pids.exists():
        assert time.monotonic() < deadline, "step a never started"
        time.sleep(0.05)
    tool, worker = (int(x) for x in pids.read_text().split())
    if go:
        (marks / "go-a").touch()
    os.kill(worker, signal.SIGKILL)
    return tool


def gone(pid: int, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        # A zombie is gone too.
        try:
            if Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z":
                return True
        except OSError:
            return True
        time.sleep(0.05)
    return False


def test_a_killed_worker_is_retried_and_the_run_completes_with_the_local_records(
    cluster: Cluster, project: Path, strata_bin: Path, tmp_path: Path
) -> None:
    marks = stalling(project, tmp_path)
    runs: list[Any] = []
    driver = threading.Thread(target=lambda: runs.append(sray.run_plan(project, stall_plan(marks), max_retries=2)))
    driver.start()
    tool = kill_worker_mid_step(marks, go=True)
    driver.join(120)
    assert not driver.is_alive()
    # The tool died with its worker: the retry never overlapped it.
    assert gone(tool), "the tool outlived its Ray worker"
    (project / "plans").mkdir(exist_ok=True)
    (project / "plans" / "stall.json").write_text(json.dumps(stall_plan(marks)))
    local = json.loads(cli(strata_bin, project, "plan", "run", "plans/stall.json", "--json", "--quiet").stdout)
    assert runs[0]["status"] == "completed"
    assert timeless(runs[0]["steps"]) == timeless(local["steps"])


def test_with_retries_exhausted_the_step_fails_with_a_kind_and_its_dependents_are_skipped(
    cluster: Cluster, project: Path, tmp_path: Path
) -> None:
    marks = stalling(project, tmp_path)
    runs: list[Any] = []
    driver = threading.Thread(
        target=lambda: runs.append(sray.run_plan(project, stall_plan(marks), max_retries=0, run_id="lost"))
    )
    driver.start()
    tool = kill_worker_mid_step(marks, go=False)
    driver.join(120)
    assert not driver.is_alive()
    assert gone(tool)
    run = runs[0]
    assert run["status"] == "failed"
    a, b, c = run["steps"]
    assert a["status"] == "failed" and a["error"]["kind"] == "tool_failed", a
    assert "Ray worker" in a["error"]["message"]
    assert b["status"] == "skipped"
    assert b["error"] == {"kind": "run_state", "message": "step `a` failed"}
    assert (c["status"], c["result"]) == ("completed", "independent")
    checkpoint = json.loads((project / ".strata" / "runs" / "lost" / "checkpoint.json").read_text())
    assert checkpoint["status"] == "failed"


def test_a_seeded_secret_is_never_on_the_wire_nor_in_rays_files(
    cluster: Cluster, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(
        project,
        {
            ".env": f"SEEDED_TOKEN={SEEDED}\n",
            "strata.yaml": "secrets: [SEEDED_TOKEN]\n",
            "tools/s/leak.yaml": LEAK_TOOL,
            "tools/s/length.yaml": LENGTH_TOOL,
        },
    )
    wire: list[bytes] = []
    real = sray._driver.Executor.start

    def traced(self: Any, fn: Any, name: str, what: str, placement: dict[str, Any], options: dict[str, Any],
               done: Any, *args: Any, **kw: Any) -> None:
        ray: Any = importlib.import_module("ray")
        # The plan as the task reads it: packed bytes hide nothing from this check.
        plan = sray._worker.given_plan(args[0]) if fn is sray._worker.step else args[0]
        given = [plan, *args[1:]]
        wire.append(ray.cloudpickle.dumps((strata.__version__, self.run, *given, self.strict)))

        def answered(answer: dict[str, Any]) -> object:
            wire.append(ray.cloudpickle.dumps(answer))
            return done(answer)

        real(self, fn, name, what, placement, options, answered, *args, **kw)

    monkeypatch.setattr(sray._driver.Executor, "start", traced)
    plan = [
        {"id": "a", "tool": "s/leak", "arguments": {}},
        {"id": "b", "tool": "s/length", "arguments": {"tok": "{{a.result}}"}},
    ]
    run = sray.run_plan(project, plan, run_id="sec")
    assert run["status"] == "completed", run
    # The marker travelled; the next worker restored the value from its own environment.
    assert run["steps"][0]["result"].startswith("%{secret:SEEDED_TOKEN:")
    assert run["steps"][1]["result"] == len(SEEDED)
    secret = SEEDED.encode()
    assert wire and not any(secret in w for w in wire)
    found = [str(p) for p, data in walk_bytes(cluster.base) if secret in data]
    assert found == [], found
    on_disk = [str(p) for p, data in walk_bytes(project / ".strata") if secret in data]
    assert on_disk == [], on_disk


def test_a_file_holding_a_secret_is_never_uploaded(project: Path) -> None:
    write(project, {".env": "API_KEY=abcd-1234-efgh\n", "notes.txt": "key abcd-1234-efgh\n"})
    with pytest.raises(strata.StrataError) as refused:
        sray.runtime_env(project)
    assert (refused.value.kind, refused.value.message) == (
        "forbidden",
        "`notes.txt` holds the value of secret `API_KEY`: it would be uploaded to the Ray workers",
    )
    assert sray.runtime_env(project, excludes=["notes.txt"])["working_dir"] == str(project.resolve())


def test_dotenv_is_read_as_strata_reads_it_and_big_files_are_scanned_whole(project: Path) -> None:
    # A comment after the value is no part of it: `abcd-1234` is the secret.
    write(project, {".env": "export API_KEY=abcd-1234 # the staging key\n", "notes.txt": "abcd-1234\n"})
    with pytest.raises(strata.StrataError, match="`notes.txt` holds the value of secret `API_KEY`"):
        sray.runtime_env(project)
    (project / "notes.txt").unlink()
    # A file of 9 MiB with the secret at its very end, across a chunk boundary.
    big = project / "data.bin"
    big.write_bytes(b"x" * ((9 << 20) - 4) + b"abcd-1234")
    with pytest.raises(strata.StrataError, match="`data.bin` holds the value"):
        sray.runtime_env(project)


def test_a_refused_plan_is_refused_before_any_task_is_submitted(cluster: Cluster, project: Path) -> None:
    before = sray.tasks_submitted()
    with pytest.raises(strata.ToolError) as refused:
        sray.run_plan(project, [{"id": "a", "tool": "plans/work", "arguments": {"step": "a"}},
                                {"id": "b", "tool": "no/such", "arguments": {}}])
    assert refused.value.kind == "unknown_tool"
    assert sray.tasks_submitted() == before
    assert not (project / ".strata" / "runs").exists()


def error_cases() -> list[Path]:
    """The files of the diagnostics corpus (``tests/check/``) whose diagnostics hold an error
    and that a plan or a graph reaches: tools, graphs and plans."""
    corpus = REPO / "tests" / "check"
    out = []
    for path in sorted(corpus.iterdir()):
        if path.suffix == ".expected" or path.name[0] not in "tgp":
            continue
        expected = Path(f"{path}.expected").read_text()
        if any(line.startswith("error[") for line in expected.splitlines()):
            out.append(path)
    return out


def test_every_error_the_check_finds_is_refused_before_any_task(cluster: Cluster, tmp_path: Path) -> None:
    canary = 'executor: runtimes/subprocess\nconfig:\n  command: touch\n  args: ["{project_path}/RAN"]\n'
    asked = 0
    for case in error_cases():
        root = tmp_path / case.stem
        write(root, {"tools/canary.yaml": canary})
        for runtime in (REPO / "tools" / "runtimes").iterdir():
            write(root, {f"tools/runtimes/{runtime.name}": runtime.read_text()})
        kind, stem = case.name[0], case.stem
        rel = {"t": f"tools/case/{case.name}", "g": f"tools/graphs/{case.name}", "p": f"plans/{case.name}"}[kind]
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(case.read_bytes())
        calls: list[Any] = []
        if kind == "t":
            write(root, {"tools/graphs/calls.yaml": (
                "kind: graph\nnodes:\n  first: {kind: action, tool: canary, next: n}\n"
                f"  n: {{kind: action, tool: case/{stem}, next: done}}\n  done: {{kind: return, output: x}}\n")})
            plan = [{"id": "first", "tool": "canary", "arguments": {}}, {"id": "s", "tool": f"case/{stem}", "arguments": {}}]
            calls = [lambda: sray.run_plan(root, plan), lambda: sray.run_graph(root, "graphs/calls")]
        elif kind == "g":
            calls = [lambda: sray.run_graph(root, f"graphs/{stem}")]
        else:
            calls = [lambda: sray.run_plan(root, root / rel)]
        for call in calls:
            before = sray.tasks_submitted()
            with pytest.raises(strata.StrataError):
                call()
            asked += 1
            assert sray.tasks_submitted() == before, case.name
            assert not (root / "RAN").exists(), case.name
    assert asked > 40, asked


def test_a_waiting_run_is_listed_and_resumed_by_strata(cluster: Cluster, project: Path, strata_bin: Path) -> None:
    waiting = sray.run_plan(project, "plans/meeting.yaml", run_id="meet")
    assert waiting["status"] == "waiting"
    assert waiting["missing_values"] == ["meeting_title", "attendees"]
    shown = cli(strata_bin, project, "runs", "show", "meet")
    assert shown.returncode == 0 and "waiting" in shown.stdout, shown.stdout + shown.stderr
    done = sray.run_plan(project, resume="meet", values={"meeting_title": "Q1", "attendees": ["ann"]})
    assert done["status"] == "completed", done["steps"]
    assert "Q1" in json.dumps(done["steps"][1]["result"])
    again = cli(strata_bin, project, "plan", "run", "--resume", "meet")
    assert again.returncode == 2 and "already ended" in again.stderr


def test_a_version_mismatch_is_refused_clearly(
    cluster: Cluster, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(strata, "__version__", "0.0.0-not-the-workers")
    run = sray.run_plan(project, [{"id": "a", "tool": "plans/sleep", "arguments": {"seconds": 0}}])
    assert run["status"] == "failed"
    assert "strata version mismatch" in run["steps"][0]["error"]["message"]


def test_the_command_line_mirrors_strata_plan_run_and_run(cluster: Cluster, project: Path, strata_bin: Path) -> None:
    env = dict(os.environ)
    py = [sys.executable, "-m", "strata.ray"]
    ran = subprocess.run(
        [*py, "plan", "run", "plans/exercise.yaml", "--address", cluster.address, "-C", str(project), "--quiet"],
        capture_output=True, text=True, env=env,
    )
    local = cli(strata_bin, project, "plan", "run", "plans/exercise.yaml", "--quiet")
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout) == json.loads(local.stdout)
    waiting = subprocess.run(
        [*py, "plan", "run", "plans/meeting.yaml", "--address", cluster.address, "-C", str(project), "--json",
         "--run-id", "m2"],
        capture_output=True, text=True, env=env,
    )
    assert waiting.returncode == 3, waiting.stderr
    assert json.loads(waiting.stdout)["run_id"] == "m2"
    resumed = subprocess.run(
        [*py, "plan", "run", "--resume", "m2", "--value", "meeting_title=Q2", "--value-json", 'attendees=["bo"]',
         "--address", cluster.address, "-C", str(project), "--json"],
        capture_output=True, text=True, env=env,
    )
    assert resumed.returncode == 0, resumed.stderr
    graph = subprocess.run(
        [*py, "run", "graphs/words", "--input", "text=a bb ccc", "--address", cluster.address, "-C", str(project),
         "--json"],
        capture_output=True, text=True, env=env,
    )
    assert graph.returncode == 0, graph.stderr
    assert json.loads(graph.stdout)["result"]["lengths"] == [1, 2, 3]
    refused = subprocess.run(
        [*py, "plan", "run", "plans/nope.yaml", "--address", cluster.address, "-C", str(project)],
        capture_output=True, text=True, env=env,
    )
    assert refused.returncode == 2 and "nope.yaml" in refused.stderr


COUNT_TOOL = """\
description: Counts its runs in `DIR/count-NAME`, then prints NAME
executor: runtimes/subprocess
parameters:
  type: object
  properties:
    dir: {type: string}
    name: {type: string}
config:
  command: sh
  args: ["-c", "echo x >> \\"$1/count-$2\\"; printf %s \\"$2\\"", "sh", "{dir}", "{name}"]
"""


def test_a_killed_driver_resumes_without_running_finished_steps_again(
    cluster: Cluster, project: Path, tmp_path: Path
) -> None:
    write(project, {"tools/f/stall.yaml": STALL_TOOL, "tools/f/count.yaml": COUNT_TOOL})
    marks = tmp_path / "marks"
    marks.mkdir()
    plan = [
        {"id": "first", "tool": "f/count", "arguments": {"dir": str(marks), "name": "first"}},
        {"id": "a", "tool": "f/stall", "arguments": {"dir": str(marks), "name": "{{first.result}}"}},
        {"id": "last", "tool": "f/count", "arguments": {"dir": str(marks), "name": "last-{{a.result}}"}},
    ]
    (project / "plans" / "killed.json").write_text(json.dumps(plan))
    driver = subprocess.Popen(
        [sys.executable, "-m", "strata.ray", "plan", "run", "plans/killed.json", "--run-id", "killed",
         "--address", cluster.address, "-C", str(project), "--quiet"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    kept = project / ".strata" / "runs" / "killed" / "checkpoint.json"

    def recorded() -> list[str]:
        try:
            return [r["id"] for r in json.loads(kept.read_text())["records"]]
        except (OSError, ValueError):
            return []

    try:
        pids = marks / "first.pids"
        deadline = time.monotonic() + 60
        # Step a runs; step first's end is written (a step whose end was not written yet
        # would run again after a resume, which is the documented contract: this test is
        # about a finished step, and a runs on the cluster without waiting for the write).
        while not pids.exists() or recorded() != ["first"]:
            assert time.monotonic() < deadline and driver.poll() is None, "step a never started"
            time.sleep(0.05)
    finally:
        driver.kill()
        driver.wait()
    tool = int(pids.read_text().split()[0])
    assert gone(tool, within=30), "the step's tool outlived its driver's job"
    checkpoint = json.loads(kept.read_text())
    assert checkpoint["status"] == "running"
    assert [r["id"] for r in checkpoint["records"]] == ["first"]
    (marks / "go-first").touch()
    resumed = sray.run_plan(project, resume="killed")
    assert resumed["status"] == "completed", resumed
    assert [s["result"] for s in resumed["steps"]] == ["first", "ok-first", "last-ok-first"]
    assert (marks / "count-first").read_text() == "x\n"  # finished steps do not run again


# --- round 2: Ray Client, cancellation, isolation, secrets, the upload, progress, retries --

SAY_PLAN = [
    {"id": "a", "tool": "f/say", "arguments": {"text": "hi"}},
    {"id": "b", "tool": "f/say", "arguments": {"text": "{{a.result}} there"}},
]

CLIENT_DRIVER = """\
import json, sys
import strata.ray as sray
address, project, plan = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
run = sray.run_plan(project, plan, address=address, run_id="client")
graph = sray.run_graph(project, "graphs/words", {"text": "a bb ccc"}, address=address, run_id="client-graph")
print(json.dumps({"plan": [s["result"] for s in run["steps"]], "graph": graph["result"]["lengths"],
                  "nodes": sorted({p["node"] for p in run["placements"] + graph["placements"]})}))
"""


#: What Ray Client says when the server of a new client died as Ray's proxy forked it (gRPC
#: skips its fork handlers while other threads call into it): Ray's, retried once.
CLIENT_SERVER_DIED = "Starting Ray client server failed"


def test_plans_and_graphs_run_through_ray_client(cluster: Cluster, project: Path) -> None:
    write(project, {"tools/f/say.yaml": SAY_TOOL})
    for _ in range(2):
        ran = subprocess.run(
            [sys.executable, "-c", CLIENT_DRIVER, cluster.client_address, str(project), json.dumps(SAY_PLAN)],
            capture_output=True, text=True, timeout=300,
        )
        if ran.returncode == 0 or CLIENT_SERVER_DIED not in ran.stderr:
            break
    assert ran.returncode == 0, ran.stderr[-3000:] + cluster.client_server_log()
    out = json.loads(ran.stdout.strip().splitlines()[-1])
    assert out["plan"] == ["hi", "hi there"]
    assert out["graph"] == [1, 2, 3]
    assert set(out["nodes"]) <= set(cluster.node_ids())
    # The driver recorded both runs in the project, as a local driver does.
    assert sorted(p.name for p in (project / ".strata" / "runs").iterdir()) == ["client", "client-graph"]


def test_another_address_than_the_connected_one_is_an_error(cluster: Cluster, project: Path) -> None:
    write(project, {"tools/f/say.yaml": SAY_TOOL})
    before = sray.tasks_submitted()
    with pytest.raises(ValueError) as refused:
        sray.run_plan(project, SAY_PLAN, address="127.0.0.1:1")
    assert str(refused.value) == (
        f"Ray is already connected to {cluster.address}, not to 127.0.0.1:1: leave address= out to use "
        "that connection, or call ray.shutdown() first"
    )
    assert sray.tasks_submitted() == before
    # The connected address itself is fine.
    assert sray.run_plan(project, SAY_PLAN, address=cluster.address)["status"] == "completed"


def wait_for(path: Path, within: float = 60.0, driver: "subprocess.Popen[str] | None" = None) -> bool:
    """Waits until ``path`` exists (True), or until ``driver``, when given, has ended (False);
    fails after ``within`` seconds, with what the driver said (it is stopped)."""
    deadline = time.monotonic() + within
    while not path.exists():
        if driver is not None and driver.poll() is not None:
            return False
        if time.monotonic() > deadline:
            said = ""
            if driver is not None:
                driver.kill()
                said = "; the driver said:\n" + driver.communicate()[1][-3000:]
            raise AssertionError(f"{path.name} never appeared{said}")
        time.sleep(0.05)
    return True


def driver_output(script: str, *args: str) -> Any:
    """What a driver process running ``script`` with ``args`` printed last, as JSON, once it
    exited with 0 — and started no Ray of its own (Ray's auto-init) once Ray was shut down."""
    ran = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert "Started a local Ray instance" not in ran.stderr, ran.stderr[-3000:]
    return json.loads(ran.stdout.strip().splitlines()[-1])


SHUTDOWN_DRIVER = """\
import json, sys, time
from pathlib import Path
import ray
import strata.ray as sray
address, project, plan, marks, later = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), Path(sys.argv[4]), json.loads(sys.argv[5])
handle = sray.submit_plan(project, plan, address=address, run_id="shut")
deadline = time.monotonic() + 60
while not (marks / "a.pids").exists():
    assert time.monotonic() < deadline, "step a never started"
    time.sleep(0.05)
ray.shutdown()
try:
    handle.result(60)
    out = {"raised": None}
except sray.ClusterLost as e:
    out = {"raised": str(e), "run_id": e.run_id}
again = sray.run_plan(project, later, address=address, run_id="after")
out["after"] = [s["result"] for s in again["steps"]]
print(json.dumps(out))
"""


def test_ray_shut_down_under_a_run_stops_it_and_the_process_runs_again_once_connected(
    cluster: Cluster, project: Path, tmp_path: Path
) -> None:
    marks = stalling(project, tmp_path)
    out = driver_output(
        SHUTDOWN_DRIVER, cluster.address, str(project), json.dumps(stall_plan(marks)), str(marks), json.dumps(SAY_PLAN)
    )
    assert out == {
        "raised": "Ray was shut down in this process; the run stopped",
        "run_id": "shut",
        "after": ["hi", "hi there"],
    }
    checkpoint = json.loads((project / ".strata" / "runs" / "shut" / "checkpoint.json").read_text())
    assert checkpoint["status"] == "cancelled"
    assert gone(int((marks / "a.pids").read_text().split()[0]), within=30), "the step's tool outlived its driver's job"


#: A driver in which Ray is shut down just as a step's task is submitted: after the run's
#: cancel check, before Ray's submission (``Task.submit``).
SHUTDOWN_AT_SUBMISSION_DRIVER = """\
import json, sys
import ray
import strata.ray as sray
from strata.ray import _tasks
address, project, plan = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
real = _tasks.Task.submit
def submit(self, options, *args):
    if options.get("name") == "strata:plan/a":
        ray.shutdown()
    return real(self, options, *args)
_tasks.Task.submit = submit
try:
    sray.run_plan(project, plan, address=address, run_id="shut-at-a")
    out = {"raised": None}
except sray.ClusterLost as e:
    out = {"raised": str(e), "run_id": e.run_id}
out["initialized"] = ray.is_initialized()
_tasks.Task.submit = real
again = sray.run_plan(project, plan, address=address, run_id="after-a")
out["after"] = [s["result"] for s in again["steps"]]
print(json.dumps(out))
"""


def test_ray_shut_down_as_a_step_is_submitted_starts_no_ray_of_its_own(
    cluster: Cluster, project: Path, tmp_path: Path
) -> None:
    stalling(project, tmp_path)
    # Step a's submission starts no Ray of the process's own (`driver_output`).
    out = driver_output(SHUTDOWN_AT_SUBMISSION_DRIVER, cluster.address, str(project), json.dumps(SAY_PLAN))
    assert out == {
        "raised": "Ray was shut down in this process; the run stopped",
        "run_id": "shut-at-a",
        "initialized": False,
        "after": ["hi", "hi there"],
    }
    checkpoint = json.loads((project / ".strata" / "runs" / "shut-at-a" / "checkpoint.json").read_text())
    assert checkpoint["status"] == "cancelled"
    # Step a was stopped before it went to Ray; b, which needs it, is skipped.
    assert checkpoint["records"] == [
        {
            "id": "a",
            "status": "failed",
            "result": None,
            "error": {
                "kind": "cancelled",
                "message": "request error at $: step `a` was stopped: Ray was shut down in this process",
            },
            "run": None,
        },
        {
            "id": "b",
            "status": "skipped",
            "result": None,
            "error": {"kind": "run_state", "message": "step `a` failed"},
            "run": None,
        },
    ]


def test_a_cancelled_handle_stops_its_steps_and_the_run_resumes(
    cluster: Cluster, project: Path, tmp_path: Path
) -> None:
    marks = stalling(project, tmp_path)
    handle = sray.submit_plan(project, stall_plan(marks), run_id="cancelled")
    wait_for(marks / "a.pids")
    tool = int((marks / "a.pids").read_text().split()[0])
    handle.cancel()
    run = handle.result(120)
    assert handle.cancelled and run["status"] == "cancelled"
    a, b, c = run["steps"]
    assert (a["status"], a["error"]["kind"]) == ("failed", "cancelled")
    assert a["error"]["message"] == "request error at $: step `a` was stopped: the run was cancelled"
    assert b["status"] == "skipped"
    assert gone(tool), "the cancelled step's tool outlived its task"
    checkpoint = json.loads((project / ".strata" / "runs" / "cancelled" / "checkpoint.json").read_text())
    assert checkpoint["status"] == "cancelled"
    (marks / "go-a").touch()
    resumed = sray.run_plan(project, resume="cancelled")
    assert resumed["status"] == "completed", resumed
    assert [s["result"] for s in resumed["steps"]] == ["ok-a", "after ok-a", "independent"]


def test_a_keyboard_interrupt_in_run_plan_cancels_the_run(cluster: Cluster, project: Path, tmp_path: Path) -> None:
    marks = stalling(project, tmp_path)
    main = threading.main_thread().ident
    assert main is not None

    def interrupt() -> None:
        wait_for(marks / "a.pids", within=120)
        signal.pthread_kill(main, signal.SIGINT)  # Ctrl-C's signal, to the waiting thread

    # Python in a terminal's foreground: a process started in the background of a script
    # inherits SIGINT ignored, and Ctrl-C then does nothing, rightly.
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)
    threading.Thread(target=interrupt, daemon=True).start()
    try:
        with pytest.raises(KeyboardInterrupt):
            run = sray.run_plan(project, stall_plan(marks), run_id="interrupted")
            pytest.fail(f"the run ended before the interrupt: {json.dumps(run['steps'])[:2000]}")
    finally:
        signal.signal(signal.SIGINT, inherited)
    tool = int((marks / "a.pids").read_text().split()[0])
    assert gone(tool)
    checkpoint = json.loads((project / ".strata" / "runs" / "interrupted" / "checkpoint.json").read_text())
    assert checkpoint["status"] == "cancelled"


def test_sigterm_on_the_command_line_cancels_the_run_and_exits_as_strata(
    cluster: Cluster, project: Path, tmp_path: Path
) -> None:
    marks = stalling(project, tmp_path)
    (project / "plans" / "stall.json").write_text(json.dumps(stall_plan(marks)))
    driver = subprocess.Popen(
        [sys.executable, "-m", "strata.ray", "plan", "run", "plans/stall.json", "--run-id", "termed",
         "--address", cluster.address, "-C", str(project), "--quiet"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        wait_for(marks / "a.pids")
        driver.send_signal(signal.SIGTERM)
        _, err = driver.communicate(timeout=120)
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait()
    assert driver.returncode == 128 + signal.SIGTERM, err
    assert err.strip().splitlines()[-1] == (
        "strata: run termed interrupted: resume it with `python -m strata.ray plan run --resume termed`"
    )
    assert "Stack trace" not in err and "SIGABRT" not in err, err
    tool = int((marks / "a.pids").read_text().split()[0])
    assert gone(tool)
    checkpoint = json.loads((project / ".strata" / "runs" / "termed" / "checkpoint.json").read_text())
    assert checkpoint["status"] == "cancelled"


SEEN_TOOL = """\
description: Says whether a file `seen` is in its working directory, then writes it
executor: runtimes/subprocess
config:
  command: sh
  args: ["-c", "if [ -e seen ]; then echo seen; else echo fresh; fi; echo x > seen"]
"""


def test_runs_never_see_each_others_files(cluster: Cluster, project: Path, tmp_path: Path) -> None:
    write(project, {"tools/f/seen.yaml": SEEN_TOOL})
    twin = tmp_path / "twin"
    shutil.copytree(project, twin)
    plan = [{"id": "s", "tool": "f/seen", "arguments": {}}]
    seen = [sray.run_plan(root, plan)["steps"][0]["result"] for root in (project, project, twin)]
    assert seen == ["fresh", "fresh", "fresh"]
    # Within a run, its steps share its directory.
    chained = [{"id": "s", "tool": "f/seen", "arguments": {}},
               {"id": "t", "tool": "f/seen", "arguments": {}, "depends_on": ["s"]}]
    run = sray.run_plan(project, chained, strategy=sray_affinity(cluster.node_ids()[0]))
    assert [s["result"] for s in run["steps"]] == ["fresh", "seen"]


def sray_affinity(node: str) -> Any:
    strategies: Any = importlib.import_module("ray.util.scheduling_strategies")
    return strategies.NodeAffinitySchedulingStrategy(node_id=node, soft=False)


def test_secret_values_never_travel_as_task_arguments(cluster: Cluster, project: Path, tmp_path: Path) -> None:
    write(project, {".env": f"SEEDED_TOKEN={SEEDED}\n", "tools/f/say.yaml": SAY_TOOL})
    literal = [{"id": "a", "tool": "f/say", "arguments": {"text": f"x{SEEDED}"}}]
    # Outside the project: inside, the upload's scan would refuse the file itself.
    (tmp_path / "literal.json").write_text(json.dumps(literal))
    placeholder = [{"id": "a", "tool": "f/say", "arguments": {"text": "{{PLACEHOLDER_word}}"}}]
    before = sray.tasks_submitted()
    cases: list[tuple[Callable[[], Any], str]] = [
        (lambda: sray.run_plan(project, placeholder, {"word": SEEDED}), "the user values"),
        (lambda: sray.run_plan(project, tmp_path / "literal.json"), "the plan"),
        (lambda: sray.run_plan(project, literal), "the plan"),
        (lambda: sray.run_plan(project, strata.Plan(literal)), "the plan"),
        (lambda: sray.run_graph(project, "graphs/words", {"text": SEEDED}), "the graph's inputs"),
        (lambda: sray.run_graph(project, "graphs/words", inputs_text={"text": SEEDED}), "the graph's inputs"),
    ]
    for call, what in cases:
        with pytest.raises(strata.StrataError) as refused:
            call()
        assert (refused.value.kind, refused.value.message) == (
            "forbidden",
            f"the Ray tasks' arguments would hold the value of secret `SEEDED_TOKEN` (found in {what})",
        )
        assert SEEDED not in str(refused.value)
    assert sray.tasks_submitted() == before
    # None of them started a run.
    assert not (project / ".strata" / "runs").exists() or not any((project / ".strata" / "runs").iterdir())


def test_a_secret_a_tool_declares_set_in_the_drivers_environment_is_never_sent(
    cluster: Cluster, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Declared by the tool's chain (`secrets:`), set in the driver's environment, not in .env:
    # the Argo export refuses it in a manifest, and so does strata.ray in what it sends.
    value = "declared-" + SEEDED
    monkeypatch.setenv("DECLARED_TOKEN", value)
    write(project, {"tools/f/say.yaml": SAY_TOOL.replace("parameters:", "secrets: [DECLARED_TOKEN]\nparameters:")})
    before = sray.tasks_submitted()
    with pytest.raises(strata.StrataError) as refused:
        sray.run_plan(project, [{"id": "a", "tool": "f/say", "arguments": {"text": "{{PLACEHOLDER_w}}"}}], {"w": value})
    assert (refused.value.kind, refused.value.message) == (
        "forbidden",
        "the Ray tasks' arguments would hold the value of secret `DECLARED_TOKEN` (found in the user values)",
    )
    write(project, {"notes.txt": f"token {value}\n"})
    with pytest.raises(strata.StrataError) as refused:
        sray.run_plan(project, SAY_PLAN)
    assert (refused.value.kind, refused.value.message) == (
        "forbidden",
        "`notes.txt` holds the value of secret `DECLARED_TOKEN`: it would be uploaded to the Ray workers",
    )
    assert value not in str(refused.value)
    assert sray.tasks_submitted() == before


def test_a_tool_left_out_of_the_upload_is_refused_on_the_driver(cluster: Cluster, project: Path) -> None:
    write(project, {"tools/f/say.yaml": SAY_TOOL, "tools/f/other.yaml": SAY_TOOL})
    before = sray.tasks_submitted()
    message = (
        "the run needs tool `f/say`, left out of the upload to the Ray workers (by excludes= or .gitignore)"
    )
    with pytest.raises(strata.StrataError) as refused:
        sray.run_plan(project, SAY_PLAN, excludes=["tools/f/say.yaml"])
    assert (refused.value.kind, refused.value.message) == ("invalid", message)
    write(project, {".gitignore": "say.yaml\n"})
    with pytest.raises(strata.StrataError) as refused:
        sray.run_plan(project, SAY_PLAN)
    assert refused.value.message == message
    # Its executor chain counts too.
    (project / ".gitignore").write_text("tools/runtimes/subprocess.yaml\n")
    with pytest.raises(strata.StrataError) as refused:
        sray.run_plan(project, SAY_PLAN)
    assert "`runtimes/subprocess`" in refused.value.message
    assert sray.tasks_submitted() == before
    # A tool excluded that the run does not need is no matter.
    (project / ".gitignore").write_text("tools/f/other.yaml\n")
    assert sray.run_plan(project, SAY_PLAN)["status"] == "completed"


def test_a_plan_file_is_read_once_so_the_text_checked_for_secrets_is_the_text_sent(
    cluster: Cluster, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(project, {"tools/f/say.yaml": SAY_TOOL})
    (project / "plans" / "say.json").write_text(json.dumps(SAY_PLAN))
    reads: list[str] = []
    read_bytes, read_text = Path.read_bytes, Path.read_text

    def counted_bytes(self: Path) -> bytes:
        reads.append(self.name)
        return read_bytes(self)

    def counted_text(self: Path, *args: Any, **kwargs: Any) -> str:
        reads.append(self.name)
        return read_text(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_bytes", counted_bytes)
    monkeypatch.setattr(Path, "read_text", counted_text)
    assert sray.run_plan(project, "plans/say.json")["status"] == "completed"
    assert reads.count("say.json") == 1


def test_progress_events_and_task_names_say_the_step(cluster: Cluster, project: Path) -> None:
    write(project, {"tools/f/say.yaml": SAY_TOOL})
    (project / "plans" / "say.json").write_text(json.dumps(SAY_PLAN))
    events: list[Any] = []
    run = sray.run_plan(project, "plans/say.json", on_event=events.append)
    assert [(e["event"], e["id"]) for e in events] == [
        ("step_started", "a"), ("step_finished", "a"), ("step_started", "b"), ("step_finished", "b"),
    ]
    assert events[3]["record"]["result"] == "hi there"
    assert [p["task"] for p in run["placements"]] == ["strata:say/a", "strata:say/b"]
    ran = subprocess.run(
        [sys.executable, "-m", "strata.ray", "plan", "run", "plans/say.json", "--address", cluster.address,
         "-C", str(project)],
        capture_output=True, text=True,
    )
    assert ran.returncode == 0, ran.stderr
    import re

    lines = [re.sub(r"in \d+ ms", "in N ms", line) for line in ran.stderr.splitlines()
             if line.startswith(("start ", "end "))]
    assert lines[:4] == ["start a (f/say)", "end a (f/say): completed in N ms", "start b (f/say)",
                         "end b (f/say): completed in N ms"]
    as_json = subprocess.run(
        [sys.executable, "-m", "strata.ray", "plan", "run", "plans/say.json", "--address", cluster.address,
         "-C", str(project), "--json"],
        capture_output=True, text=True,
    )
    assert as_json.returncode == 0, as_json.stderr
    streamed = [json.loads(line) for line in as_json.stderr.splitlines() if line.startswith("{")]
    assert [(e["event"], e["id"]) for e in streamed] == [(e["event"], e["id"]) for e in events]


def test_declared_resources_and_retries_map_to_ray(cluster: Cluster) -> None:
    request = {"step": "a", "resources": {"num_cpus": 0.5, "num_gpus": 1, "memory": 1 << 30, "custom": {"disk": 2}}}
    assert sray.task_options(request, 1) == {
        "num_cpus": 0.5, "num_gpus": 1.0, "memory": 1 << 30, "resources": {"disk": 2.0},
    }
    assert sray.task_options({"step": "a"}, 2) == {"num_cpus": 2}


FLAKY_TOOL = """\
description: Fails until it has run N times (counted in DIR/count), then prints how many
executor: runtimes/subprocess
parameters:
  type: object
  properties:
    dir: {type: string}
    n: {type: integer}
config:
  command: sh
  args: ["-c", "echo x >> \\"$1/count\\"; c=$(wc -l < \\"$1/count\\"); [ $c -ge $2 ] || exit 1; echo $c", "sh", "{dir}", "{n}"]
"""


def test_a_failing_tool_is_retried_as_declared_and_the_attempts_are_reported(
    cluster: Cluster, project: Path, tmp_path: Path
) -> None:
    write(project, {"tools/f/flaky.yaml": FLAKY_TOOL})
    declared = {"retries": {"limit": 2, "delay": "10ms"}, "resources": {"custom": {"strata_worker": 1}}}
    counts = tmp_path / "ok"
    counts.mkdir()
    events: list[dict[str, Any]] = []
    run = sray.run_plan(
        project, [{"id": "f", "tool": "f/flaky", "arguments": {"dir": str(counts), "n": 3}, **declared}],
        on_event=events.append,
    )
    assert (run["steps"][0]["status"], run["steps"][0]["result"]) == ("completed", 3)
    # Each attempt a task of its own, started again by the plan's scheduler.
    assert [(p["attempts"], p["retries"]) for p in run["placements"]] == [(1, 2), (2, 2), (3, 2)]
    assert [(e["event"], e.get("attempt")) for e in events] == [
        ("step_started", None), ("step_retrying", 1), ("step_retrying", 2), ("step_finished", None)
    ]
    # The custom resource only the worker node has placed every attempt there.
    worker = [n["NodeID"] for n in importlib.import_module("ray").nodes() if n["Alive"]
              and n["Resources"].get("strata_worker")]
    assert {p["node"] for p in run["placements"]} == set(worker)
    fails = tmp_path / "fails"
    fails.mkdir()
    run = sray.run_plan(project, [{"id": "f", "tool": "f/flaky", "arguments": {"dir": str(fails), "n": 9}, **declared}])
    assert run["steps"][0]["status"] == "failed"
    assert [p["attempts"] for p in run["placements"]] == [1, 2, 3]


# --- declarations in the project's files, graph retries, graph cancellation ----------------

#: What only the worker node of the test cluster has (``cluster.py``).
ON_THE_WORKER = "resources: {custom: {strata_worker: 1}}\n"


def worker_node() -> str:
    """The node with the custom resource ``strata_worker``."""
    nodes = importlib.import_module("ray").nodes()
    (node,) = [n["NodeID"] for n in nodes if n["Alive"] and n["Resources"].get("strata_worker")]
    return str(node)


def test_resources_and_retries_declared_in_project_files_reach_ray(
    cluster: Cluster, project: Path, strata_bin: Path, tmp_path: Path
) -> None:
    write(project, {"tools/f/pinned.yaml": SAY_TOOL + ON_THE_WORKER, "tools/f/flaky.yaml": FLAKY_TOOL})
    counts = tmp_path / "counts"
    counts.mkdir()
    plan = [
        {"id": "p", "tool": "f/pinned", "arguments": {"text": "here"}},
        {"id": "f", "tool": "f/flaky", "arguments": {"dir": str(counts), "n": 2}, "retries": {"limit": 2}},
    ]
    (project / "plans" / "declared.json").write_text(json.dumps(plan))
    run = sray.run_plan(project, "plans/declared.json")
    assert run["status"] == "completed", run
    p, f = run["steps"]
    assert p["result"] == "here"
    assert (f["status"], f["result"], f["run"]["attempts"], f["run"]["retries"]) == (
        "completed", 2, 2, {"limit": 2},
    )
    placed = sorted((x["step"], x.get("attempts"), x.get("retries")) for x in run["placements"])
    assert placed == [("f", 1, 2), ("f", 2, 2), ("p", None, None)]
    # The tool's custom resource, which only the worker node has, placed its step there.
    assert [x["node"] for x in run["placements"] if x["step"] == "p"] == [worker_node()]
    # The records are those of `strata plan run`, attempts and all.
    (counts / "count").unlink()
    local = cli(strata_bin, project, "plan", "run", "plans/declared.json", "--json", "--quiet")
    assert timeless(run["steps"]) == timeless(json.loads(local.stdout)["steps"])


FLAKY_GRAPH = """\
kind: graph
parameters:
  type: object
  properties:
    dir: {type: string}
    each: {type: string}
state: {count: 0, counts: []}
nodes:
  once:
    kind: action
    tool: f/flaky
    params: {dir: "${inputs.dir}", n: 2}
    assign: {count: "${result}"}
    next: each
  each:
    kind: foreach
    over: [1]
    as: k
    do: {kind: action, tool: f/flaky, params: {dir: "${inputs.each}", n: 2}}
    collect: counts
    next: done
  done: {kind: return, output: "${state}"}
"""


def retries_logged(project: Path, run_id: str) -> list[tuple[str, Any, int, int]]:
    """The ``action_retrying`` events of run ``run_id``'s log: node, element, attempt, attempts."""
    lines = (project / ".strata" / "runs" / run_id / "events.jsonl").read_text().splitlines()
    events = [json.loads(line) for line in lines]
    return [(e["node"], e.get("index"), e["attempt"], e["attempts"]) for e in events if e["event"] == "action_retrying"]


def test_a_graphs_tool_runs_where_it_declares_and_is_retried_as_declared(
    cluster: Cluster, project: Path, strata_bin: Path, tmp_path: Path
) -> None:
    declaring = FLAKY_TOOL + ON_THE_WORKER + "retries: {limit: 2}\n"
    graph = FLAKY_GRAPH.replace('assign: {count: "${result}"}', 'assign: {count: "${result}", attempts: "${run.attempts}"}')
    write(project, {"tools/f/flaky.yaml": declaring, "tools/graphs/flaky.yaml": graph})
    once, each = tmp_path / "once", tmp_path / "each"
    once.mkdir()
    each.mkdir()
    inputs = {"dir": str(once), "each": str(each)}
    run = sray.run_graph(project, "graphs/flaky", inputs, run_id="flaky")
    assert (run["status"], run["result"]) == ("completed", {"count": 2, "attempts": 2, "counts": [2]}), run
    # Each part is one task; the walk retried the tool inside the two that run it, on the
    # worker node its declaration asks for, each retry in the run's log.
    placed = sorted((x["part"], x["at"] or "", -1 if x["index"] is None else x["index"]) for x in run["placements"])
    assert placed == [
        ("advance", "done", -1), ("advance", "each", -1), ("advance", "once", -1),
        ("begin", "", -1), ("element", "each", 0), ("items", "each", -1),
    ]
    tool_parts = [x for x in run["placements"] if (x["part"], x["at"]) in (("advance", "once"), ("element", "each"))]
    assert {x["node"] for x in tool_parts} == {worker_node()}
    assert retries_logged(project, "flaky") == [("once", None, 1, 3), ("each.do[0]", 0, 1, 3)]
    assert graph_checkpoint(project, "flaky")["status"] == "completed"
    # The same records as `strata run` on one machine, retries and all.
    for done in (once, each):
        (done / "count").unlink()
    local = cli(strata_bin, project, "run", "graphs/flaky", "--params-json", json.dumps(inputs), "--run-id", "local", "--quiet")
    assert local.returncode == 0, local.stderr
    assert graph_checkpoint(project, "flaky") == graph_checkpoint(project, "local")
    assert retries_logged(project, "local") == retries_logged(project, "flaky")
    # Past its retries, the run fails as the tool did: its part placed once, the tool run thrice.
    failing = tmp_path / "failing"
    failing.mkdir()
    (failing / "count").write_text("")
    write(project, {"tools/f/flaky.yaml": declaring.replace("[ $c -ge $2 ]", "false")})
    run = sray.run_graph(project, "graphs/flaky", {"dir": str(failing), "each": str(each)})
    assert run["status"] == "failed", run
    assert [x["part"] for x in run["placements"]] == ["begin", "advance"]
    assert (failing / "count").read_text().count("x") == 3
    assert retries_logged(project, run["run_id"]) == [("once", None, 1, 3), ("once", None, 2, 3)]


STALL_GRAPH = """\
kind: graph
parameters:
  type: object
  properties:
    dir: {type: string}
state: {said: ""}
nodes:
  stall:
    kind: action
    tool: f/stall
    params: {dir: "${inputs.dir}", name: g}
    assign: {said: "${result}"}
    next: done
  done: {kind: return, output: "${state.said}"}
"""


def test_a_cancelled_graph_handle_stops_its_step_and_the_run_resumes(
    cluster: Cluster, project: Path, tmp_path: Path
) -> None:
    write(project, {"tools/f/stall.yaml": STALL_TOOL, "tools/graphs/stall.yaml": STALL_GRAPH})
    marks = tmp_path / "marks"
    marks.mkdir()
    handle = sray.submit_graph(project, "graphs/stall", {"dir": str(marks)}, run_id="gcancelled")
    wait_for(marks / "g.pids")
    tool = int((marks / "g.pids").read_text().split()[0])
    handle.cancel()
    run = handle.result(120)
    assert handle.cancelled and run["status"] == "cancelled", run
    assert gone(tool), "the cancelled step's tool outlived its task"
    assert graph_checkpoint(project, "gcancelled")["status"] == "cancelled"
    (marks / "go-g").touch()
    resumed = sray.run_graph(project, "graphs/stall", resume="gcancelled")
    assert (resumed["status"], resumed["result"]) == ("completed", "ok-g"), resumed
    assert graph_checkpoint(project, "gcancelled")["status"] == "completed"


# Last: it leaves a dead node behind.
def test_a_node_lost_at_the_start_is_retried_not_a_spawn_failure(cluster: Cluster, project: Path) -> None:
    write(project, {"tools/f/say.yaml": SAY_TOOL})
    proc, node = cluster.add_node("t3")
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    plan = [{"id": f"s{i}", "tool": "f/say", "arguments": {"text": str(i)}} for i in range(8)]
    run = sray.run_plan(project, plan, strategy="SPREAD", max_retries=3)
    assert run["status"] == "completed", [s.get("error") for s in run["steps"]]
    assert [s["result"] for s in run["steps"]] == [i for i in range(8)]
