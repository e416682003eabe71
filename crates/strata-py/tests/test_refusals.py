"""What ``strata check`` rejects, no Python front-end runs — for every error code of the
diagnostics corpus (``tests/check/``): ``run_tool``, ``run_plan`` and ``run_graph`` each refuse
(``CheckError``, or ``PlanError``/``StrataError`` for a plan that does not load) before anything
runs, and a refusal of the gate lists every error ``strata check`` reports in the file."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

import strata

REPO = Path(__file__).resolve().parents[3]
CORPUS = REPO / "tests" / "check"

#: A tool that would leave a mark if it ever ran.
CANARY = 'executor: runtimes/subprocess\nconfig:\n  command: touch\n  args: ["{project_path}/RAN"]\n'


def error_cases() -> Iterator[Path]:
    """The corpus files whose expected diagnostics hold an error."""
    for path in sorted(CORPUS.iterdir()):
        if path.suffix == ".expected":
            continue
        expected = Path(f"{path}.expected").read_text()
        if any(line.startswith("error[") for line in expected.splitlines()):
            yield path


def project_for(case: Path, root: Path) -> tuple[str, str]:
    """Builds the case's project in ``root``: the shipped runtimes, the canary, the case in
    place and, for a tool, a plan and a graph calling it. Returns the case's kind and the
    file's path in the project."""
    shutil.copytree(REPO / "tools" / "runtimes", root / "tools" / "runtimes")
    (root / "tools" / "examples").mkdir()
    shutil.copy(REPO / "tools" / "examples" / "echo.yaml", root / "tools" / "examples" / "echo.yaml")
    (root / "tools" / "canary.yaml").write_text(CANARY)
    kind = case.name[0]
    stem = case.stem
    rel = {
        "t": f"tools/case/{case.name}",
        "d": f"directives/{case.name}",
        "g": f"tools/graphs/{case.name}",
        "p": f"plans/{case.name}",
        "h": f"hooks/{case.name}",
    }[kind]
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_bytes(case.read_bytes())
    if kind == "t":
        graph = (
            "kind: graph\nnodes:\n"
            "  first: {kind: action, tool: canary, next: n}\n"
            f"  n: {{kind: action, tool: case/{stem}, next: done}}\n"
            "  done: {kind: return, output: x}\n"
        )
        (root / "tools" / "graphs").mkdir(parents=True, exist_ok=True)
        (root / "tools" / "graphs" / "calls.yaml").write_text(graph)
    return kind, rel


def check_errors(root: Path, rel: str) -> list[str]:
    """The messages of the errors ``strata check`` reports in ``rel``."""
    out = subprocess.run(
        [os.environ.get("STRATA_BIN", "strata"), "check", "--format", "json"],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    return [d["message"] for d in json.loads(out.stdout) if d["severity"] == "error" and d["file"] == rel]


def calls(kind: str, rel: str, case: Path, project: strata.Project) -> list[tuple[str, Callable[[], Any]]]:
    """Every Python call that reaches the case."""
    stem = case.stem
    if kind == "t":
        plan = [{"id": "first", "tool": "canary", "arguments": {}}, {"id": "s", "tool": f"case/{stem}", "arguments": {}}]
        return [
            ("run_tool", lambda: project.run_tool(f"case/{stem}")),
            ("run_plan", lambda: project.run_plan(plan)),
            ("run_graph", lambda: project.run_graph("graphs/calls")),
        ]
    if kind == "g":
        return [("run_graph", lambda: project.run_graph(f"graphs/{stem}"))]
    if kind == "p":
        return [("run_plan", lambda: project.run_plan(strata.Plan.from_file(project.root / rel)))]
    return []


@pytest.mark.parametrize("case", list(error_cases()), ids=lambda p: p.name)
def test_every_python_front_end_refuses_every_error_the_check_finds(case: Path, tmp_path: Path) -> None:
    kind, rel = project_for(case, tmp_path)
    errors = check_errors(tmp_path, rel)
    assert errors, f"{case.name}: the check found no error"
    project = strata.Project(tmp_path)
    for name, call in calls(kind, rel, case, project):
        with pytest.raises(strata.StrataError) as raised:
            call()
        assert not (tmp_path / "RAN").exists(), f"{name} ran something"
        error = raised.value
        said = str(error) + json.dumps(error.errors)
        if isinstance(error, strata.CheckError):
            said += json.dumps(error.diagnostics)
        for message in errors:
            assert message in said or json.dumps(message)[1:-1] in said, f"{name}: {message!r} not in {said!r}"


TWO_ERRORS = (
    "executor: runtimes/subprocess\nconfig:\n"
    '  b: "${HOME:-{b}}"\n  command: touch\n'
    '  args: ["{project_path}/RAN", "${tool_dir}/data", "{b}"]\n'
)


def test_a_tool_beside_an_error_the_call_never_meets_is_refused(tmp_path: Path) -> None:
    shutil.copytree(REPO / "tools" / "runtimes", tmp_path / "tools" / "runtimes")
    (tmp_path / "tools" / "t").mkdir()
    (tmp_path / "tools" / "t" / "two.yaml").write_text(TWO_ERRORS)
    (tmp_path / "tools" / "graphs").mkdir()
    (tmp_path / "tools" / "graphs" / "calls.yaml").write_text(
        "kind: graph\nnodes:\n  n: {kind: action, tool: t/two, next: done}\n  done: {kind: return, output: x}\n"
    )
    project = strata.Project(tmp_path)
    calls: list[Callable[[], Any]] = [
        lambda: project.run_tool("t/two"),
        lambda: project.run_plan([{"id": "s", "tool": "t/two", "arguments": {}}]),
        lambda: project.run_graph("graphs/calls"),
        lambda: project.plan_step([{"id": "s", "tool": "t/two", "arguments": {}}], "s"),
    ]
    for call in calls:
        with pytest.raises(strata.CheckError) as raised:
            call()
        assert [d["code"] for d in raised.value.diagnostics] == ["R009", "L007"]
        assert raised.value.message.endswith("was not run: 2 errors found")
    assert not (tmp_path / "RAN").exists()
