"""strata.Project.run_plan: a whole plan over real tools, every step record, the GIL released."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

import strata

EXTRA_TOOLS = {
    # Creates the file `ran`.
    "touch.yaml": """\
executor: runtimes/subprocess
config:
  command: touch
  args: [ran]
""",
    # Creates the file `me`, then waits until the file `other` exists.
    "rendezvous.yaml": """\
executor: runtimes/subprocess
parameters:
  type: object
  properties:
    me: {type: string}
    other: {type: string}
config:
  command: sh
  args: ["-c", "touch {me}; while [ ! -e {other} ]; do sleep 0.01; done; printf {me}"]
  timeout: 20
""",
}


@pytest.fixture
def plans_project(project_dir: Path) -> strata.Project:
    """The test project with the tools above too."""
    for name, text in EXTRA_TOOLS.items():
        (project_dir / "tools" / name).write_text(text)
    return strata.Project(project_dir)


def records(run: Any) -> list[Any]:
    """The step records with the run's duration left out (it varies)."""
    out = []
    for record in run["steps"]:
        if record["run"] is not None:
            run_fields = dict(record["run"])
            assert isinstance(run_fields.pop("duration_ms"), int)
            record = {**record, "run": run_fields}
        out.append(record)
    return out


OK_RUN = {"success": True, "exit_code": 0, "signal": None, "stderr": "", "truncated": False, "timed_out": False}


def test_results_flow_between_real_tools_byte_for_byte(plans_project: strata.Project) -> None:
    # The first tool prints what it is given (a user value: data), the second what the first
    # printed; neither text is ever scanned for references or placeholders.
    made = '{"token": "{{b.result.token}}", "home": "${HOME}", "n": 18446744073709551615}'
    plan = strata.Plan(
        [
            {"id": "make", "tool": "say", "arguments": {"message": "{{PLACEHOLDER_made}}"}},
            {"id": "use", "tool": "say", "arguments": {"message": "{{make.result.token}} {{make.result.home}} {{make.result.n}}"}},
        ]
    )
    run = plans_project.run_plan(plan, values={"made": made})
    assert (run["status"], run["levels"], run["missing_values"]) == ("completed", [["make"], ["use"]], [])
    assert records(run) == [
        {
            "id": "make",
            "status": "completed",
            "result": {"token": "{{b.result.token}}", "home": "${HOME}", "n": 2**64 - 1},
            "error": None,
            "run": OK_RUN,
        },
        {
            "id": "use",
            "status": "completed",
            "result": "{{b.result.token}} ${HOME} 18446744073709551615",
            "error": None,
            "run": OK_RUN,
        },
    ]


def test_a_failure_skips_its_dependents_and_the_rest_runs(plans_project: strata.Project) -> None:
    run = plans_project.run_plan(
        [
            {"id": "a", "tool": "fail", "arguments": {}},
            {"id": "b", "tool": "say", "arguments": {"message": "{{a.result}}"}},
            {"id": "c", "tool": "say", "arguments": {"message": "{{b.result}}"}},
            {"id": "d", "tool": "say", "arguments": {"message": "independent"}},
        ],
        jobs=1,
    )
    assert run["status"] == "failed"
    assert records(run) == [
        {
            "id": "a",
            "status": "failed",
            "result": None,
            "error": {"kind": "tool_failed", "message": "tool `fail` exited with code 3"},
            "run": {**OK_RUN, "success": False, "exit_code": 3, "stderr": "broken\n"},
        },
        {"id": "b", "status": "skipped", "result": None, "error": {"kind": "run_state", "message": "step `a` failed"}, "run": None},
        {"id": "c", "status": "skipped", "result": None, "error": {"kind": "run_state", "message": "step `b` was skipped"}, "run": None},
        {"id": "d", "status": "completed", "result": "independent", "error": None, "run": OK_RUN},
    ]


def test_steps_wait_for_user_values(plans_project: strata.Project) -> None:
    plan = [
        {"id": "ask", "tool": "say", "arguments": {"message": "{{PLACEHOLDER_question}}"}},
        {"id": "echo", "tool": "say", "arguments": {"message": "asked: {{ask.result}}"}},
    ]
    waiting = plans_project.run_plan(plan)
    run_id = waiting["run_id"]
    assert waiting == {
        "run_id": run_id,
        "plan": "<string>",
        "rejected": [],
        "status": "waiting",
        "levels": [["ask"], ["echo"]],
        "steps": [
            {"id": "ask", "status": "waiting", "result": None, "error": None, "run": None, "waiting_for": ["question"]},
            {"id": "echo", "status": "waiting", "result": None, "error": None, "run": None, "waiting_for": ["question"]},
        ],
        "missing_values": ["question"],
    }
    done = plans_project.run_plan(plan, values={"question": "${HOME}?"})
    assert [(r["id"], r["status"], r["result"]) for r in done["steps"]] == [
        ("ask", "completed", "${HOME}?"),
        ("echo", "completed", "asked: ${HOME}?"),
    ]


def test_independent_steps_run_at_the_same_time(plans_project: strata.Project, project_dir: Path) -> None:
    # Each step waits for the file the other creates: they complete only when both run at once.
    run = plans_project.run_plan(
        [
            {"id": "left", "tool": "rendezvous", "arguments": {"me": "l", "other": "r"}},
            {"id": "right", "tool": "rendezvous", "arguments": {"me": "r", "other": "l"}},
        ],
        jobs=2,
    )
    assert [(r["id"], r["status"], r["result"]) for r in run["steps"]] == [
        ("left", "completed", "l"),
        ("right", "completed", "r"),
    ]


def test_other_threads_run_while_the_plan_does(plans_project: strata.Project, project_dir: Path) -> None:
    # The plan's step waits for a file only this thread creates, after the step has started.
    runs: list[Any] = []
    plan = [{"id": "wait", "tool": "wait_for_go", "arguments": {}}]
    runner = threading.Thread(target=lambda: runs.append(plans_project.run_plan(plan)))
    runner.start()
    deadline = time.monotonic() + 20
    while not (project_dir / "started").exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    (project_dir / "go").touch()
    runner.join()
    assert [(r["status"], r["result"]) for r in runs[0]["steps"]] == [("completed", {"went": True})]


def test_tools_are_checked_before_anything_runs(plans_project: strata.Project, project_dir: Path) -> None:
    with pytest.raises(strata.ToolError) as unknown:
        plans_project.run_plan(
            [{"id": "first", "tool": "touch", "arguments": {}}, {"id": "hello", "tool": "gret", "arguments": {}}]
        )
    assert unknown.value.to_dict() == {
        "kind": "unknown_tool",
        "layer": "request",
        "message": "step `hello` calls unknown tool `gret`",
        "path": "[1].tool",
        "span": None,
        "hint": "did you mean `greet`?",
    }
    with pytest.raises(strata.StrataError) as invalid:
        plans_project.run_plan([{"tool": "touch", "arguments": {}}, {"tool": "say", "arguments": {"n": "three"}}])
    assert (invalid.value.kind, invalid.value.path, invalid.value.message) == (
        "invalid",
        "[1].arguments",
        "step `step2`: invalid parameters for `say`: parameter `n` must be an integer, not a string",
    )
    assert not (project_dir / "ran").exists()
    with pytest.raises(strata.PlanError) as plan_error:
        plans_project.run_plan([{"tool": "touch", "arguments": {"x": "{{nope.result}}"}}])
    assert plan_error.value.kind == "unknown_step"
    assert not (project_dir / "ran").exists()
    assert plans_project.run_plan([{"tool": "touch", "arguments": {}}])["status"] == "completed"
    assert (project_dir / "ran").exists()


def test_options_apply_to_every_step(plans_project: strata.Project) -> None:
    timed_out = plans_project.run_plan([{"tool": "nap", "arguments": {}}], timeout=0.2)
    assert timed_out["status"] == "failed"
    assert timed_out["steps"][0]["error"] is not None and timed_out["steps"][0]["error"]["kind"] == "timeout"
    greeted = plans_project.run_plan([{"tool": "greet", "arguments": {}}], env={"GREETING": "hi", "PATH": "/usr/bin:/bin"})
    assert greeted["steps"][0]["result"] == "hi"
    unset = plans_project.run_plan([{"tool": "greet", "arguments": {}}], env={"PATH": "/usr/bin:/bin"}, strict=True)
    assert (unset["status"], unset["steps"][0]["error"]) == (
        "failed",
        {
            "kind": "undefined",
            "message": "tools/greet.yaml:5:20: env error at config.env.GREETING 0..11: environment variable "
            "`GREETING` is not set (hint: strict mode turns missing values into errors)",
        },
    )


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (
            {"plan": "[]"},
            TypeError,
            "plan: expected a list of steps or a dict {'steps': [...]}, got str "
            "(for a plan's JSON or YAML text, use Plan.from_text)",
        ),
        ({"jobs": "2"}, TypeError, "jobs: expected int, got str"),
        ({"jobs": True}, TypeError, "jobs: expected int, got bool"),
        ({"jobs": 0}, ValueError, "`jobs` must be an integer from 1 to 256, not 0"),
        ({"jobs": -3}, ValueError, "`jobs` must be an integer from 1 to 256, not -3"),
        ({"jobs": 2**70}, ValueError, "`jobs` must be an integer from 1 to 256, not 1180591620717411303424"),
        ({"values": [1]}, TypeError, "values: expected a dict, got list"),
        ({"values": {"q": {1}}}, TypeError, "values['q']: a set is not a JSON value (use a list)"),
        ({"strict": 1}, TypeError, "strict: expected bool, got int"),
        ({"timeout": 0}, ValueError, "timeout: expected a positive, finite number of seconds"),
    ],
)
def test_bad_arguments_name_themselves(
    plans_project: strata.Project, kwargs: dict[str, Any], error: type, message: str
) -> None:
    arguments: dict[str, Any] = {"plan": [{"tool": "say", "arguments": {}}], **kwargs}
    with pytest.raises(error) as info:
        plans_project.run_plan(**arguments)
    assert (type(info.value), str(info.value)) == (error, message)


def test_jobs_defaults_to_the_projects_setting(project_dir: Path) -> None:
    # With `jobs: 1` in strata.yaml the two rendezvous steps cannot meet: the first one waits
    # for a file only the second creates, and times out; the second then finds the first's.
    for name, text in EXTRA_TOOLS.items():
        (project_dir / "tools" / name).write_text(text)
    (project_dir / "strata.yaml").write_text("jobs: 1\n")
    plan = [
        {"id": "left", "tool": "rendezvous", "arguments": {"me": "l", "other": "r"}},
        {"id": "right", "tool": "rendezvous", "arguments": {"me": "r", "other": "l"}},
    ]
    run = strata.Project(project_dir).run_plan(plan, timeout=0.5)
    timed = [(r["id"], r["status"], r["run"] is not None and r["run"]["timed_out"]) for r in run["steps"]]
    assert timed == [
        ("left", "failed", True),
        ("right", "completed", False),
    ]
    # `jobs=` wins over the setting.
    for name in ("l", "r"):
        (project_dir / name).unlink()
    run = strata.Project(project_dir).run_plan(plan, jobs=2, timeout=10)
    assert [(r["id"], r["status"]) for r in run["steps"]] == [("left", "completed"), ("right", "completed")]


def strata_binary() -> Path:
    """The `strata` binary: `$STRATA_BIN`, else the debug build (built when missing)."""
    import os
    import subprocess

    given = os.environ.get("STRATA_BIN")
    if given:
        return Path(given)
    repo = Path(__file__).resolve().parents[3]
    binary = repo / "target" / "debug" / "strata"
    if not binary.exists():
        subprocess.run(["cargo", "build", "-q", "-p", "strata"], cwd=repo, check=True)
    return binary


def test_a_run_is_recorded_listed_by_runs_show_and_resumed_by_the_command_line(
    plans_project: strata.Project, project_dir: Path
) -> None:
    import json
    import subprocess

    plan = [
        {"id": "ask", "tool": "say", "arguments": {"message": "{{PLACEHOLDER_question}}"}},
        {"id": "echo", "tool": "say", "arguments": {"message": "asked: {{ask.result}}"}},
    ]
    waiting = plans_project.run_plan(plan, run_id="py-run-1")
    assert waiting["run_id"] == "py-run-1" and waiting["status"] == "waiting"
    checkpoint = json.loads((project_dir / ".strata" / "runs" / "py-run-1" / "checkpoint.json").read_text())
    assert checkpoint["kind"] == "plan" and checkpoint["status"] == "waiting"
    with pytest.raises(strata.StrataError) as taken:
        plans_project.run_plan(plan, run_id="py-run-1")
    assert taken.value.kind == "run_state"
    binary = strata_binary()
    shown = subprocess.run([str(binary), "runs", "show", "py-run-1"], cwd=project_dir, capture_output=True, text=True)
    assert shown.returncode == 0, shown.stderr
    assert "py-run-1" in shown.stdout and "waiting" in shown.stdout
    resumed = subprocess.run(
        [str(binary), "plan", "run", "--resume", "py-run-1", "--value", "question=why", "--json"],
        cwd=project_dir,
        capture_output=True,
        text=True,
    )
    assert resumed.returncode == 0, resumed.stderr
    report = json.loads(resumed.stdout)
    assert [(s["id"], s["status"], s["result"]) for s in report["steps"]] == [
        ("ask", "completed", "why"),
        ("echo", "completed", "asked: why"),
    ]
    # And a run the command line left waiting resumes from Python.
    subprocess.run(
        [str(binary), "plan", "run", "-", "--run-id", "cli-run-1", "--json"],
        cwd=project_dir,
        input=json.dumps(plan),
        capture_output=True,
        text=True,
    )
    done = plans_project.run_plan(resume="cli-run-1", values={"question": "how"})
    assert done["status"] == "completed"
    assert [s["result"] for s in done["steps"]] == ["how", "asked: how"]
    with pytest.raises(strata.StrataError) as ended:
        plans_project.run_plan(resume="cli-run-1")
    assert ended.value.kind == "run_state"
