"""strata.ray on a real two-node Ray cluster (head + one worker node, loopback only): the
fan-out spread over both nodes, each plan step a task through the step operation, a graph on
the walk in parts with a foreach's elements as parallel tasks, the driver's project never
written by a task, the same records as `strata plan run` / `strata run` for every shipped plan
and graph, a worker killed mid-step (retried, or failed with its dependents skipped), a seeded
secret never on the wire or in Ray's files, a refused plan refused before any task, resume and
the command line."""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

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
    write(project, {"tools/f/stall.yaml": STALL_TOOL, "tools/f/say.yaml": SAY_TOOL})
    marks = tmp_path / "marks"
    marks.mkdir()
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
    write(project, {"tools/f/stall.yaml": STALL_TOOL, "tools/f/say.yaml": SAY_TOOL})
    marks = tmp_path / "marks"
    marks.mkdir()
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
    real = sray._Executor.submit

    def traced(self: Any, fn: Any, what: str, placement: dict[str, Any], *args: Any) -> dict[str, Any]:
        ray: Any = importlib.import_module("ray")
        wire.append(ray.cloudpickle.dumps((strata.__version__, *args, self.strict)))
        answer = real(self, fn, what, placement, *args)
        wire.append(ray.cloudpickle.dumps(answer))
        return answer

    monkeypatch.setattr(sray._Executor, "submit", traced)
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
    with pytest.raises(ValueError, match="notes.txt"):
        sray.runtime_env(project)
    assert sray.runtime_env(project, excludes=["notes.txt"])["working_dir"] == str(project.resolve())


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
    try:
        pids = marks / "first.pids"
        deadline = time.monotonic() + 60
        while not pids.exists():
            assert time.monotonic() < deadline and driver.poll() is None, "step a never started"
            time.sleep(0.05)
    finally:
        driver.kill()
        driver.wait()
    tool = int(pids.read_text().split()[0])
    assert gone(tool, within=30), "the step's tool outlived its driver's job"
    checkpoint = json.loads((project / ".strata" / "runs" / "killed" / "checkpoint.json").read_text())
    assert checkpoint["status"] == "running"
    assert [r["id"] for r in checkpoint["records"]] == ["first"]
    (marks / "go-first").touch()
    resumed = sray.run_plan(project, resume="killed")
    assert resumed["status"] == "completed", resumed
    assert [s["result"] for s in resumed["steps"]] == ["first", "ok-first", "last-ok-first"]
    assert (marks / "count-first").read_text() == "x\n"  # finished steps do not run again
