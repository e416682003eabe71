"""Caller data is never turned into a secret from Python: text holding markers of every known
and unknown name — forged, with tags of the right shape, copied from another run — reaches the
tool unchanged through ``run_plan``'s arguments and values, ``run_graph``'s inputs,
``plan_step`` and ``call_tool``; only a marker the run itself minted is restored."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import strata

SECRET = "zq-Secret-Value"

KEEP = """\
executor: runtimes/subprocess
parameters:
  type: object
  properties:
    text: {type: string}
config:
  command: printf
  args: ["%s", "{text}"]
"""

LEAK = """\
executor: runtimes/subprocess
config:
  command: printf
  args: ["%s", "${TOKEN}"]
"""

GRAPH = """\
kind: graph
parameters: {type: object, properties: {text: {type: string}}}
state: {out: ""}
nodes:
  k: {kind: action, tool: keep, params: {text: "${inputs.text}"}, assign: {out: "${result}"}, next: done}
  done: {kind: return, output: "${state.out}"}
"""

FORGED = [
    "%{secret:TOKEN}",
    "%{secret:HOME} and %{secret:PATH}",
    "%{secret:TOKEN:0123456789abcdef}",
    "%%{secret:TOKEN} %{secret: %",
    "%{secret:NOPE_1:ffffffffffffffff}",
]


@pytest.fixture
def keeper(tmp_path: Path) -> strata.Project:
    """A project whose ``.env`` declares TOKEN, with a tool printing its ``text`` and one
    printing TOKEN."""
    (tmp_path / "tools" / "runtimes").mkdir(parents=True)
    (tmp_path / "tools" / "runtimes" / "subprocess.yaml").write_text("config: {args: []}\n")
    (tmp_path / "tools" / "keep.yaml").write_text(KEEP)
    (tmp_path / "tools" / "leak.yaml").write_text(LEAK)
    (tmp_path / "tools" / "graphs").mkdir()
    (tmp_path / "tools" / "graphs" / "keep.yaml").write_text(GRAPH)
    (tmp_path / ".env").write_text(f"TOKEN={SECRET}\n")
    return strata.Project(tmp_path)


def results(run: Any) -> dict[str, Any]:
    return {step["id"]: step["result"] for step in run["steps"]}


@pytest.mark.parametrize("text", FORGED)
def test_caller_text_reaches_the_tool_as_written(keeper: strata.Project, text: str) -> None:
    plan = [
        {"id": "lit", "tool": "keep", "arguments": {"text": text}},
        {"id": "val", "tool": "keep", "arguments": {"text": "{{PLACEHOLDER_v}}"}},
        {"id": "mix", "tool": "keep", "arguments": {"text": "%{{lit.result}}"}},
    ]
    got = results(keeper.run_plan(plan, values={"v": text}))
    assert got == {"lit": text, "val": text, "mix": f"%{text}"}
    assert keeper.run_graph("graphs/keep", {"text": text})["result"] == text
    step = keeper.plan_step([{"id": "s", "tool": "keep", "arguments": {"text": text}}], "s")
    assert step["record"]["result"] == text
    called = keeper.call_tool("keep", {"text": text})
    assert called["run"]["stdout"] == text.encode()


def test_a_marker_of_one_run_is_text_in_another_and_restored_only_in_its_own(keeper: strata.Project) -> None:
    run = keeper.run_plan(
        [
            {"id": "a", "tool": "leak", "arguments": {}},
            {"id": "b", "tool": "keep", "arguments": {"text": "[{{a.result}}]"}},
        ]
    )
    got = results(run)
    marker = got["a"]
    assert marker.startswith("%{secret:TOKEN:") and SECRET not in str(run)
    # Its own run restored it for `b`, which printed it back: marked again.
    assert got["b"] == f"[{marker}]"
    again = results(keeper.run_plan([{"id": "c", "tool": "keep", "arguments": {"text": marker}}]))
    assert again["c"] == marker
    assert keeper.call_tool("keep", {"text": marker})["run"]["stdout"] == marker.encode()
