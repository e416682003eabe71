"""Work that runs elsewhere, here standing in for strata.ray's Ray tasks: a plan's whole steps
through ``Project.plan_step`` (``run_plan(step_executor=...)``) and a graph's walk in parts
through ``Project.walk_part`` (``run_graph(part_executor=...)``) — the records and checkpoints
those of a local run."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

import strata
from strata.ray import __main__ as ray_command

OK_RUN = {"success": True, "exit_code": 0, "signal": None, "stderr": "", "truncated": False, "timed_out": False}

PLAN_STEPS = [
    {"id": "make", "tool": "say", "arguments": {"message": '{"word": "hi"}'}},
    {"id": "use", "tool": "say", "arguments": {"message": "{{make.result.word}} {{PLACEHOLDER_who}}"}},
    {"id": "lost", "tool": "say", "arguments": {"message": "{{make.result.nope}}"}},
    {"id": "bad", "tool": "fail", "arguments": {}},
    {"id": "after", "tool": "say", "arguments": {"message": "{{bad.result}}"}},
]

#: Three steps, each using the one before.
CHAIN = [
    {"id": "a", "tool": "say", "arguments": {"message": "one"}},
    {"id": "b", "tool": "say", "arguments": {"message": "{{a.result}} two"}},
    {"id": "c", "tool": "say", "arguments": {"message": "{{b.result}} three"}},
]

#: The plan's text (`plans/p.json`).
PLAN = json.dumps({"steps": PLAN_STEPS}, indent=1) + "\n"

GRAPH = """\
kind: graph
parameters:
  type: object
  properties:
    words: {type: array, default: [a, bb, ccc]}
state: {said: []}
nodes:
  each:
    kind: foreach
    over: "${inputs.words}"
    as: word
    parallel: true
    do: {kind: action, tool: say, params: {message: "${word}"}}
    output: "${result}"
    collect: said
    next: done
  done:
    kind: return
    output: {said: "${state.said}"}
"""


def timeless(steps: list[Any]) -> list[Any]:
    """Step records without their durations."""
    return [
        {**r, "run": {k: v for k, v in r["run"].items() if k != "duration_ms"}} if r["run"] else r for r in steps
    ]


def test_plan_step_runs_one_step_given_the_records_it_depends_on(project: strata.Project) -> None:
    plan = [
        {"id": "a", "tool": "say", "arguments": {"message": '{"n": 1}'}},
        {"id": "b", "tool": "say", "arguments": {"message": "n={{a.result.n}} {{PLACEHOLDER_who}}"}},
    ]
    a = project.plan_step(plan, "a")
    assert a["tool"] == "say"
    assert timeless([a["record"]]) == [{"id": "a", "status": "completed", "result": {"n": 1}, "error": None, "run": OK_RUN}]
    b = project.plan_step(plan, "b", records=[a["record"]], values={"who": "Ann"})
    assert timeless([b["record"]]) == [{"id": "b", "status": "completed", "result": "n=1 Ann", "error": None, "run": OK_RUN}]
    assert project.plan_step(plan, "b", records=[a["record"]]) == {"tool": "say", "waiting_for": ["who"]}
    failed = {"id": "a", "status": "failed", "result": None, "error": {"kind": "tool_failed", "message": "x"}, "run": None}
    assert project.plan_step(plan, "b", records=[failed], values={"who": "Ann"}) == {
        "tool": "say",
        "record": {"id": "b", "status": "skipped", "result": None, "error": {"kind": "run_state", "message": "step `a` failed"}, "run": None},
    }
    with pytest.raises(strata.StrataError) as missing:
        project.plan_step(plan, "b", values={"who": "Ann"})
    assert (missing.value.kind, missing.value.message) == ("request", "no record of step `a`, which step `b` depends on")
    with pytest.raises(strata.StrataError) as unknown:
        project.plan_step(plan, "c", name="plans/p.json")
    assert (unknown.value.kind, unknown.value.message) == ("unknown_step", "`plans/p.json` has no step `c`")


def test_plan_step_locates_errors_in_a_plan_text_and_not_in_plan_data(project: strata.Project) -> None:
    make = project.plan_step(PLAN, "make", name="plans/p.json")["record"]
    in_text = project.plan_step(PLAN, "lost", records=[make], name="plans/p.json")["record"]
    as_data = project.plan_step({"steps": PLAN_STEPS}, "lost", records=[make], name="plans/p.json")["record"]
    why = "plan error at steps[2].arguments.message 0..20: `{{make.result.nope}}`: step `make` has no `result.nope`; `result` has `word`"
    assert in_text["error"] == {"kind": "path_not_found", "message": f"plans/p.json:21:17: {why}"}
    assert as_data["error"] == {"kind": "path_not_found", "message": why}


def test_a_step_executor_runs_every_whole_step_and_gives_the_records_of_a_local_run(
    project: strata.Project, project_dir: Path
) -> None:
    (project_dir / "plans").mkdir()
    (project_dir / "plans" / "p.json").write_text(PLAN)
    plan = strata.Plan.from_file(project_dir / "plans" / "p.json")
    asked: list[dict[str, Any]] = []
    lock = threading.Lock()

    def run(request: dict[str, Any], done: Any) -> None:
        answer = project.plan_step(
            request["plan"],
            request["step"],
            records=request["records"],
            values=request["values"],
            name=request["name"],
            timeout=request["timeout"],
        )
        assert done({"record": answer["record"]}) is True
        assert done({"record": answer["record"]}) is False  # only the first answer counts

    def step_executor(request: dict[str, Any], done: Any) -> None:
        with lock:
            asked.append(request)
        # Answered later, from another thread, as a Ray task's future answers.
        threading.Thread(target=run, args=(request, done)).start()

    far = project.run_plan(plan, values={"who": "Ann"}, step_executor=step_executor, timeout=9)
    near = project.run_plan(plan, values={"who": "Ann"})
    assert timeless(far["steps"]) == timeless(near["steps"])
    assert [s["status"] for s in far["steps"]] == ["completed", "completed", "failed", "failed", "skipped"]
    # Every step that ran went whole to the executor (the one whose reference does not
    # resolve too); the skipped one never left.
    assert sorted(r["step"] for r in asked) == ["bad", "lost", "make", "use"]
    use = next(r for r in asked if r["step"] == "use")
    assert sorted(use) == ["attempt", "marks", "name", "plan", "records", "step", "timeout", "values"]
    assert use["attempt"] == 1
    assert (use["plan"], use["values"], use["timeout"]) == (PLAN, {"who": "Ann"}, 9.0)
    assert [r["id"] for r in use["records"]] == ["make"]


class Awaiting:
    """A step executor that runs each step in a thread of its own, a moment later, and notes
    what ``run_plan`` tells its ``answers_awaited``."""

    def __init__(self, project: strata.Project) -> None:
        self.project = project
        self.told: list[bool] = []

    def answers_awaited(self, awaited: bool) -> None:
        self.told.append(awaited)

    def __call__(self, request: dict[str, Any], done: Any) -> None:
        def later() -> None:
            answer = self.project.plan_step(request["plan"], request["step"], records=request["records"])
            done({"record": answer["record"]})

        threading.Timer(0.02, later).start()


def test_a_step_executor_is_told_when_the_answers_only_end_the_run(project: strata.Project) -> None:
    executor = Awaiting(project)
    run = project.run_plan(CHAIN, step_executor=executor)
    assert [s["status"] for s in run["steps"]] == ["completed"] * 3
    # Awaited while `b`, then `c`, waits for the step before it; once `c` runs, its answer
    # only ends the run. Each change told once.
    assert executor.told == [True, False]


def test_a_step_the_executor_could_not_run_fails_and_its_dependents_are_skipped(project: strata.Project) -> None:
    plan = [
        {"id": "a", "tool": "say", "arguments": {}},
        {"id": "b", "tool": "say", "arguments": {"message": "{{a.result}} b"}},
    ]
    lost = {"kind": "tool_failed", "layer": "request", "message": "the worker was lost", "path": "", "span": None}
    run = project.run_plan(plan, step_executor=lambda request, done: done({"error": lost}))
    assert run["status"] == "failed"
    assert run["steps"] == [
        {"id": "a", "status": "failed", "result": None, "error": {"kind": "tool_failed", "message": "request error at $: the worker was lost"}, "run": None},
        {"id": "b", "status": "skipped", "result": None, "error": {"kind": "run_state", "message": "step `a` failed"}, "run": None},
    ]
    with pytest.raises(ValueError, match="give one"):
        project.run_plan(plan, executor=lambda *a: {}, step_executor=lambda r, d: None)


def test_a_step_executor_that_raises_or_answers_malformed_fails_the_step(project: strata.Project) -> None:
    plan = [{"id": "a", "tool": "say", "arguments": {}}]

    def boom(request: dict[str, Any], done: Any) -> None:
        raise RuntimeError("no cluster")

    run = project.run_plan(plan, step_executor=boom)
    assert run["steps"][0]["error"] == {
        "kind": "spawn",
        "message": "request error at $: the executor could not run step `a`: RuntimeError: no cluster",
    }
    run = project.run_plan(plan, step_executor=lambda request, done: done({"record": {"id": "zz"}}))
    assert run["steps"][0]["error"] == {
        "kind": "spawn",
        "message": "request error at $: the executor could not run step `a`: ValueError: malformed executor "
        "answer: `record` is not the record of step `a`",
    }


def test_a_step_whose_tool_fails_is_started_again_elsewhere_as_its_retries_allow(
    project: strata.Project, project_dir: Path
) -> None:
    tools = project_dir / "tools"
    (tools / "flaky.yaml").write_text(
        "executor: runtimes/subprocess\nparameters: {type: object, properties: {dir: {type: string}}}\n"
        "config:\n  command: sh\n  args: ['-c', 'n=$(ls \"$1\" | wc -l); touch \"$1/$n\"; [ $n -ge 2 ]', sh, '{dir}']\n"
        "retries: {limit: 3, delay: 1ms}\n"
    )
    counts = project_dir / "counts"
    counts.mkdir()
    plan = [{"id": "f", "tool": "flaky", "arguments": {"dir": str(counts)}}]
    attempts: list[int] = []
    events: list[Any] = []

    def step_executor(request: dict[str, Any], done: Any) -> None:
        attempts.append(request["attempt"])
        done({"record": project.plan_step(request["plan"], request["step"], records=request["records"])["record"]})

    run = project.run_plan(plan, step_executor=step_executor, on_event=events.append)
    assert attempts == [1, 2, 3]
    record = run["steps"][0]
    ran = record["run"] or {}
    assert (record["status"], ran["attempts"], ran["retries"]) == ("completed", 3, {"limit": 3, "delay_ms": 1})
    assert [(e["event"], e.get("attempt")) for e in events] == [
        ("step_started", None), ("step_retrying", 1), ("step_retrying", 2), ("step_finished", None)
    ]


def test_a_plan_admitted_once_runs_its_steps_as_plan_step_does(
    project: strata.Project, project_dir: Path
) -> None:
    admitted = project.admit_plan(PLAN, name="plans/p.json")
    assert repr(admitted) == 'AdmittedPlan("plans/p.json")'
    make = project.plan_step(admitted, "make")["record"]
    assert make == project.plan_step(PLAN, "make", name="plans/p.json")["record"] | {"run": make["run"]}
    lost = project.plan_step(admitted, "lost", records=[make])["record"]
    assert lost["error"]["message"].startswith("plans/p.json:21:17: plan error at steps[2]")
    with pytest.raises(strata.StrataError) as info:
        project.plan_step(admitted, "nope")
    assert info.value.kind == "unknown_step"
    # Another project checks it again: there, the tool is unknown.
    other = project_dir / "other"
    (other / "tools").mkdir(parents=True)
    with pytest.raises(strata.StrataError) as info:
        strata.Project(other).plan_step(admitted, "make")
    assert (info.value.kind, info.value.message) == ("unknown_tool", "step `make` calls unknown tool `say`")


def checkpoint(root: Path, run_id: str) -> Any:
    cp = json.loads((root / ".strata" / "runs" / run_id / "checkpoint.json").read_text())
    for key in ("run_id", "started", "updated"):
        del cp[key]
    return cp


def test_a_part_executor_walks_the_graph_in_parts_with_the_records_of_a_local_run(
    project: strata.Project, project_dir: Path
) -> None:
    (project_dir / "tools" / "graphs").mkdir()
    (project_dir / "tools" / "graphs" / "each.yaml").write_text(GRAPH)
    asked: list[tuple[str, Any]] = []
    lock = threading.Lock()

    def part_executor(request: dict[str, Any]) -> dict[str, Any]:
        with lock:
            asked.append((request["part"], request.get("index")))
        return {"answer": project.walk_part("graphs/each", request)}

    far = project.run_graph("graphs/each", run_id="far", part_executor=part_executor)
    near = project.run_graph("graphs/each", run_id="near")
    assert far == {**near, "run_id": "far"}
    assert far["result"] == {"said": ["a", "bb", "ccc"]}
    assert checkpoint(project_dir, "far") == checkpoint(project_dir, "near")
    assert asked[:2] == [("begin", None), ("items", None)]
    assert sorted(asked[2:5], key=str) == [("element", 0), ("element", 1), ("element", 2)]
    assert asked[5:] == [("advance", None), ("advance", None)]
    with pytest.raises(strata.StrataError) as ended:
        project.run_graph("graphs/each", resume="far", part_executor=part_executor)
    assert (ended.value.kind, ended.value.message) == ("run_state", "run `far` has already ended (completed)")
    assert len(asked) == 7


def test_walk_part_refuses_a_malformed_request(project: strata.Project, project_dir: Path) -> None:
    (project_dir / "tools" / "graphs").mkdir()
    (project_dir / "tools" / "graphs" / "each.yaml").write_text(GRAPH)
    with pytest.raises(strata.StrataError) as info:
        project.walk_part("graphs/each", {"part": "advance"})
    assert (info.value.kind, info.value.message) == ("request", "malformed walk part: a part request without `marks`")
    with pytest.raises(strata.StrataError) as info:
        project.walk_part("graphs/each", {"part": "advance", "marks": "0" * 64})
    assert (info.value.kind, info.value.message) == ("request", "malformed walk part: a part request without `walk`")
    with pytest.raises(strata.StrataError) as info:
        project.walk_part("graphs/each", {"part": "advance", "marks": "nope"})
    assert info.value.message == "`marks` is not the marker key of a run (64 hex digits)"


def test_step_requests_carry_the_declared_resources_and_retries_and_part_requests_the_resources(
    project: strata.Project, project_dir: Path
) -> None:
    tools = project_dir / "tools"
    (tools / "heavy.yaml").write_text(
        (tools / "say.yaml").read_text() + "resources: {cpus: 2, memory: 1Gi}\nretries: {limit: 1, delay: 2s}\n"
    )
    (tools / "graphs").mkdir()
    (tools / "graphs" / "each.yaml").write_text(GRAPH.replace("tool: say", "tool: heavy"))
    plan = [
        {"id": "a", "tool": "heavy", "arguments": {}, "resources": {"gpus": 1, "custom": {"ssd": 1}}, "retries": {"limit": 3}},
        {"id": "b", "tool": "say", "arguments": {}},
    ]
    steps: dict[str, dict[str, Any]] = {}
    lock = threading.Lock()

    def step_executor(request: dict[str, Any], done: Any) -> None:
        with lock:
            steps[request["step"]] = request
        done({"record": project.plan_step(request["plan"], request["step"], records=request["records"])["record"]})

    assert project.run_plan(plan, step_executor=step_executor)["status"] == "completed"
    assert steps["a"]["resources"] == {"num_cpus": 2.0, "num_gpus": 1.0, "memory": 1 << 30, "custom": {"ssd": 1.0}}
    assert steps["a"]["retries"] == {"limit": 3, "delay_ms": 2000}
    assert "resources" not in steps["b"] and "retries" not in steps["b"]
    parts: list[tuple[str, Any, Any]] = []

    def part_executor(request: dict[str, Any]) -> dict[str, Any]:
        with lock:
            parts.append((request["part"], request.get("resources"), request.get("retries")))
        return {"answer": project.walk_part("graphs/each", request)}

    assert project.run_graph("graphs/each", part_executor=part_executor)["status"] == "completed"
    # A part carries its tool's resources, not its retries: the walk retries the tool where it runs.
    element: tuple[str, Any, Any] = ("element", {"num_cpus": 2.0, "memory": 1 << 30}, None)
    plain: list[tuple[str, Any, Any]] = [(part, None, None) for part in ("begin", "items", "advance", "advance")]
    assert sorted(parts, key=str) == sorted(plain + [element] * 3, key=str)


def test_a_cancel_stops_a_plan_run_recorded_as_cancelled_and_resumable(project: strata.Project) -> None:
    plan = [
        {"id": "a", "tool": "say", "arguments": {"message": "one"}},
        {"id": "b", "tool": "say", "arguments": {"message": "{{a.result}} two"}},
    ]
    cancel = strata.Cancel()
    assert not cancel.cancelled
    stopped = {"kind": "cancelled", "layer": "request", "message": "stopped", "path": "", "span": None}

    def step_executor(request: dict[str, Any], done: Any) -> None:
        cancel.cancel()  # as a Ctrl-C while the step runs
        done({"error": stopped})

    run = project.run_plan(plan, step_executor=step_executor, cancel=cancel, run_id="stopped")
    assert cancel.cancelled and run["status"] == "cancelled"
    assert [(s["id"], s["status"]) for s in run["steps"]] == [("a", "failed"), ("b", "skipped")]
    assert checkpoint(Path(project.root), "stopped")["status"] == "cancelled"
    resumed = project.run_plan(resume="stopped")
    assert resumed["status"] == "completed"
    assert [s["result"] for s in resumed["steps"]] == ["one", "one two"]
    with pytest.raises(TypeError, match="cancel= takes a strata.Cancel"):
        project.run_plan(plan, cancel=True)


def test_a_cancel_stops_a_step_waiting_out_its_retry_delay(project: strata.Project) -> None:
    plan = [{"id": "a", "tool": "fail", "arguments": {}, "retries": {"limit": 3, "delay": "1h"}}]
    cancel = strata.Cancel()
    seen: list[str] = []

    def on_event(event: dict[str, Any]) -> None:
        seen.append(event["event"])
        if event["event"] == "step_retrying":
            cancel.cancel()  # as a Ctrl-C while the step waits to run again

    runs: list[Any] = []
    worker = threading.Thread(
        target=lambda: runs.append(project.run_plan(plan, cancel=cancel, run_id="waiting", on_event=on_event))
    )
    worker.start()
    # Not an hour (the join's timeout only stops a broken scheduler from hanging the suite).
    worker.join(timeout=60)
    assert not worker.is_alive(), "the step waited out its retry delay after the cancel"
    run = runs[0]
    assert run["status"] == "cancelled"
    step = run["steps"][0]
    assert (step["status"], step["error"]["kind"]) == ("failed", "cancelled")
    assert seen.count("step_retrying") == 1
    assert checkpoint(Path(project.root), "waiting")["status"] == "cancelled"


def test_python_m_strata_ray_prints_the_progress_lines_of_strata_plan_run(
    project_dir: Path, strata_bin: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A step completes, one fails each of its three attempts, the one after it is skipped:
    # `python -m strata.ray plan run` prints for these events what `strata plan run` prints.
    tools = project_dir / "tools"
    (tools / "retried.yaml").write_text((tools / "fail.yaml").read_text() + "retries: {limit: 2, delay: 1ms}\n")
    plan = [
        {"id": "ok", "tool": "say", "arguments": {"message": "hi"}},
        {"id": "bad", "tool": "retried", "arguments": {}, "depends_on": ["ok"]},
        {"id": "after", "tool": "say", "arguments": {"message": "x"}, "depends_on": ["bad"]},
    ]
    (project_dir / "plans").mkdir()
    (project_dir / "plans" / "p.json").write_text(json.dumps(plan))
    cli = subprocess.run(
        [str(strata_bin), "--color", "never", "plan", "run", "plans/p.json"],
        cwd=project_dir, capture_output=True, text=True, check=False,
    )
    strata.Project(project_dir).run_plan(plan, on_event=ray_command._progress(argparse.Namespace(json=False, quiet=False)))

    def lines(text: str) -> list[str]:
        shown = [line for line in text.splitlines() if line.startswith(("start ", "end ", "retry ", "skip ", "    ! "))]
        return [re.sub(r" in \d+ ms", " in N ms", line) for line in shown]

    ours = lines(capsys.readouterr().err)
    assert ours == lines(cli.stderr)
    assert ours == [
        "start ok (say)",
        "end ok (say): completed in N ms",
        "start bad (retried)",
        "retry bad (retried): attempt 1 of 3 failed: tool `retried` exited with code 3; again in 1ms",
        "    ! broken",
        "retry bad (retried): attempt 2 of 3 failed: tool `retried` exited with code 3; again in 1ms",
        "    ! broken",
        "end bad (retried): failed in N ms: tool `retried` exited with code 3",
        "    ! broken",
        "skip after (say): step `bad` failed",
    ]


def test_progress_line_is_none_for_what_plan_run_prints_nothing_for() -> None:
    assert strata.progress_line({"event": "run_started", "id": "a", "tool": "t"}) is None
    assert strata.progress_line({"event": "step_started", "id": "a", "tool": "t"}) == "start a (t)"


def test_on_event_gets_the_events_strata_plan_run_json_streams(project: strata.Project) -> None:
    plan = [{"id": "a", "tool": "say", "arguments": {"message": "hi"}}]
    events: list[Any] = []
    project.run_plan(plan, on_event=events.append)
    assert [(e["event"], e["id"], e["tool"]) for e in events] == [("step_started", "a", "say"),
                                                                ("step_finished", "a", "say")]
    assert events[1]["status"] == "completed" and events[1]["record"]["result"] == "hi"


class AheadExecutor:
    """A step executor that runs steps ahead of those they depend on: each step waits, on
    its own thread, for the answers of the tickets in ``after``."""

    ahead = True

    def __init__(self, project: strata.Project) -> None:
        self.project = project
        self.answers: dict[int, dict[str, Any]] = {}
        self.ended: dict[int, threading.Event] = {}
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    def _event(self, ticket: int) -> threading.Event:
        with self.lock:
            return self.ended.setdefault(ticket, threading.Event())

    def _run(self, request: dict[str, Any], done: Any) -> None:
        records = list(request["records"])
        answer: dict[str, Any] = {}
        for ticket in request["after"]:
            self._event(ticket).wait()
            record = self.answers[ticket].get("record")
            if not record or record["status"] != "completed":
                answer = {"unrun": True}
                break
            records.append(record)
        if not answer:
            answer = {"record": self.project.plan_step(request["plan"], request["step"], records=records)["record"]}
        self.answers[request["ticket"]] = answer
        self._event(request["ticket"]).set()
        done(answer)

    def __call__(self, request: dict[str, Any], done: Any) -> None:
        with self.lock:
            self.requests.append(request)
        threading.Thread(target=self._run, args=(request, done)).start()


def test_an_executor_that_runs_steps_ahead_is_given_them_before_their_dependencies_ended(
    project: strata.Project,
) -> None:
    executor = AheadExecutor(project)
    far = project.run_plan(CHAIN, step_executor=executor)
    near = project.run_plan(CHAIN)
    assert timeless(far["steps"]) == timeless(near["steps"])
    assert far["steps"][2]["result"] == "one two three"
    # b and c were handed over before a and b had ended: they waited there.
    assert [(r["step"], r["ticket"], r["after"], [x["id"] for x in r["records"]]) for r in executor.requests] == [
        ("a", 0, [], []), ("b", 1, [0], []), ("c", 2, [1], []),
    ]


def test_a_step_run_ahead_of_a_step_that_fails_is_skipped_as_in_a_local_run(project: strata.Project) -> None:
    plan = [
        {"id": "a", "tool": "nope-not-a-tool-run", "arguments": {}},
        {"id": "b", "tool": "say", "arguments": {"message": "{{a.result}} b"}},
    ]
    (Path(project.root) / "tools" / "nope-not-a-tool-run.yaml").write_text(
        "executor: runtimes/subprocess\nconfig:\n  command: sh\n  args: ['-c', 'exit 3']\n"
    )
    executor = AheadExecutor(project)
    far = project.run_plan(plan, step_executor=executor)
    near = project.run_plan(plan)
    assert timeless(far["steps"]) == timeless(near["steps"])
    assert [s["status"] for s in far["steps"]] == ["failed", "skipped"]
