"""strata.Project.run_tool: a real subprocess, the step record, the GIL released meanwhile."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import strata

RUN_KEYS = ["success", "exit_code", "signal", "stderr", "duration_ms", "truncated", "timed_out"]


def without_duration(record: Any) -> Any:
    run = dict(record["run"])
    assert isinstance(run.pop("duration_ms"), int)
    return {**record, "run": run}


def test_a_completed_run_gives_the_step_record(project: strata.Project) -> None:
    record = project.run_tool("say", {"message": '{"words": 3, "big": 18446744073709551615}'})
    assert list(record) == ["id", "status", "result", "error", "run"]
    assert record["run"] is not None and list(record["run"]) == RUN_KEYS
    assert without_duration(record) == {
        "id": "say",
        "status": "completed",
        "result": {"words": 3, "big": 2**64 - 1},
        "error": None,
        "run": {
            "success": True,
            "exit_code": 0,
            "signal": None,
            "stderr": "",
            "truncated": False,
            "timed_out": False,
        },
    }


def test_output_that_is_not_json_is_the_text(project: strata.Project) -> None:
    assert project.run_tool("say")["result"] == "hello"
    assert project.run_tool("say", {"message": "two words"})["result"] == "two words"


def test_parameters_reach_the_tool_byte_for_byte(project: strata.Project) -> None:
    for message in ["{{b.result.token}}", "${HOME}", "{tool_path} $(rm -rf /) ${state.x} {input:k}"]:
        assert project.run_tool("say", {"message": message})["result"] == message


def test_a_failed_run_is_a_failed_record(project: strata.Project) -> None:
    record = project.run_tool("fail", step_id="check")
    assert without_duration(record) == {
        "id": "check",
        "status": "failed",
        "result": None,
        "error": {"kind": "tool_failed", "message": "tool `fail` exited with code 3"},
        "run": {
            "success": False,
            "exit_code": 3,
            "signal": None,
            "stderr": "broken\n",
            "truncated": False,
            "timed_out": False,
        },
    }


def test_a_timeout_caps_the_run(project: strata.Project) -> None:
    record = project.run_tool("nap", timeout=0.2)
    assert record["status"] == "failed"
    assert record["error"] is not None and record["error"]["kind"] == "timeout"
    assert record["run"] is not None and record["run"]["timed_out"] is True
    for bad in [0, -1.0, float("nan"), float("inf"), 10**400]:
        with pytest.raises(ValueError) as info:
            project.run_tool("nap", timeout=bad)
        assert str(info.value) == "timeout: expected a positive, finite number of seconds"


def test_env_replaces_the_process_environment(project: strata.Project) -> None:
    env = {**os.environ, "GREETING": "hi there"}
    assert project.run_tool("greet", env=env)["result"] == "hi there"
    without = {k: v for k, v in os.environ.items() if k != "GREETING"}
    with pytest.raises(strata.UndefinedError) as info:
        project.run_tool("greet", env=without, strict=True)
    assert info.value.message == "environment variable `GREETING` is not set"
    assert info.value.path == "config.env.GREETING"


def test_parameters_are_checked_against_the_schema(project: strata.Project) -> None:
    with pytest.raises(strata.StrataError) as info:
        project.run_tool("say", {"n": "three"})
    assert (info.value.kind, info.value.layer) == ("invalid", "params")
    assert info.value.message == "invalid parameters for `say`: parameter `n` must be an integer, not a string"
    with pytest.raises(TypeError, match=r"^params\['n'\]: a set is not a JSON value"):
        project.run_tool("say", {"n": {3}})


def test_arguments_of_the_wrong_type_name_themselves(project: strata.Project) -> None:
    cases: list[tuple[Any, dict[str, Any], type, str]] = [
        (5, {}, TypeError, "tool: expected str, got int"),
        ("say", {"params": ["hi"]}, TypeError, "params: expected a dict, got list"),
        ("say", {"step_id": 1}, TypeError, "step_id: expected str, got int"),
        ("say", {"env": {"PATH": b"/bin"}}, TypeError, "env['PATH']: bytes are not a JSON value (decode them to str first)"),
        ("say", {"strict": "no"}, TypeError, "strict: expected bool, got str"),
        ("say", {"timeout": "1"}, TypeError, "timeout: expected a number of seconds, got str"),
        ("say", {"timeout": True}, TypeError, "timeout: expected a number of seconds, got bool"),
    ]
    for tool, kwargs, error, message in cases:
        with pytest.raises(error) as info:
            project.run_tool(tool, **kwargs)
        assert (type(info.value), str(info.value)) == (error, message), kwargs
    with pytest.raises(TypeError) as path_info:
        strata.Project(3)  # type: ignore[arg-type]
    assert str(path_info.value) == "path: expected str or os.PathLike, got int"


def test_other_threads_run_while_the_tool_does(project: strata.Project, project_dir: Path) -> None:
    # The tool waits for a file that only this thread creates, after the tool has started:
    # were the GIL held during the run, this thread could not create it and the tool would
    # time out.
    records: list[Any] = []
    runner = threading.Thread(target=lambda: records.append(project.run_tool("wait_for_go")))
    runner.start()
    deadline = time.monotonic() + 20
    while not (project_dir / "started").exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    (project_dir / "go").touch()
    runner.join()
    assert [(r["status"], r["result"]) for r in records] == [("completed", {"went": True})]


def test_the_project_knows_its_root_and_tools(project: strata.Project, project_dir: Path) -> None:
    assert project.root == project_dir
    assert isinstance(project.root, Path)
    assert project.tool_ids() == [
        "broken",
        "fail",
        "greet",
        "nap",
        "runtimes/subprocess",
        "say",
        "wait_for_go",
    ]
    assert repr(strata.Project(str(project_dir))) == f"<strata.Project {project_dir}>"
    assert project.run_tool("say", timeout=5)["status"] == "completed"


GRAPH = """\
kind: graph
parameters:
  type: object
  properties:
    word: {type: string}
  required: [word]
nodes:
  a:
    kind: action
    tool: say
    params: {message: "${inputs.word}"}
    assign: {said: "${result}"}
    next: done
  done:
    kind: return
    output: {said: "${state.said}"}
"""


def test_a_graph_runs_and_its_run_is_recorded(project: strata.Project, project_dir: Path) -> None:
    (project_dir / "tools/graphs").mkdir(parents=True)
    (project_dir / "tools/graphs/echo.yaml").write_text(GRAPH)
    run = project.run_graph("graphs/echo", {"word": "${HOME}"}, run_id="r1")
    assert run == {
        "run_id": "r1",
        "status": "completed",
        "steps": 2,
        "result": {"said": "${HOME}"},
        "failure": None,
    }
    assert (project_dir / ".strata/runs/r1").is_dir()
    with pytest.raises(strata.StrataError) as info:
        project.run_graph("graphs/echo", resume="r1")
    assert info.value.kind == "run_state"
    with pytest.raises(ValueError, match="resume= continues a run"):
        project.run_graph("graphs/echo", {"word": "x"}, resume="r1")
    # A graph is named as on the command line: its id, or its name under graphs/.
    by_name = project.run_graph("echo", {"word": "x"}, run_id="r2")
    assert (by_name["status"], by_name["result"]) == ("completed", {"said": "x"})


def test_a_tool_the_check_rejects_is_refused_with_its_diagnostics(
    project: strata.Project, project_dir: Path
) -> None:
    (project_dir / "tools/typo.yaml").write_text(
        'executor: runtimes/subprocess\nconfig:\n  command: printf\n  args: ["%s", "{nosuch}"]\n'
    )
    with pytest.raises(strata.CheckError) as info:
        project.run_tool("typo")
    assert (info.value.kind, info.value.message) == ("check", "`typo` was not run: 1 error found")
    assert [(d["code"], d["kind"], d["message"]) for d in info.value.diagnostics] == [
        ("R001", "unknown_name", "unknown parameter `{nosuch}`: it is left as written")
    ]
