"""strata's work runs on a thread with its own large stack, whatever the caller's stack.

Each render below runs in a fresh interpreter on a Python thread with a 256 KiB stack
(``threading.stack_size``): the renders at the capped recursion limits (``default_depth``
100, ``param_links`` 50) would overflow it and kill the interpreter if they ran there. A
project within the default limits works in place on a caller's stack with 4 MiB left.
"""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

# Runs `work()` on a thread with a 256 KiB stack and prints its JSON result.
SMALL_STACK = """\
import json, sys, threading
import strata

def main(work, stack=256 * 1024):
    out = {}
    def run():
        try:
            out["value"] = work()
        except BaseException as e:
            out["error"] = f"{type(e).__name__}: {e}"
    threading.stack_size(stack)
    t = threading.Thread(target=run)
    t.start()
    t.join()
    print(json.dumps(out))
"""


def nested_defaults(n: int) -> str:
    return "${A:-" * n + "x" + "}" * n


def on_small_stack(body: str, cwd: Path) -> object:
    script = SMALL_STACK + textwrap.dedent(body)
    ran = subprocess.run(
        [sys.executable, "-c", script], cwd=cwd, capture_output=True, text=True, timeout=120
    )
    assert ran.returncode == 0, (ran.returncode, ran.stderr)
    out = json.loads(ran.stdout)
    assert "error" not in out, out["error"]
    return out["value"]


def deep_tool(links: int, wrap: int) -> str:
    """A tool whose `args` follow `links` parameter links, each value in `wrap` nested defaults."""

    def wrapped(inner: str) -> str:
        return "${A:-" * wrap + inner + "}" * wrap

    config: dict[str, object] = {"command": "printf", "args": ["%s", "{k1}"]}
    for i in range(1, links):
        config[f"k{i}"] = wrapped(f"{{k{i + 1}}}")
    config[f"k{links}"] = wrapped("end")
    return json.dumps({"executor": "runtimes/subprocess", "config": config})


def make_project(root: Path) -> None:
    (root / "tools" / "runtimes").mkdir(parents=True)
    (root / "tools" / "runtimes" / "subprocess.yaml").write_text(
        'config: {args: [], cwd: "{project_path}", timeout: 60}\n'
    )
    (root / "tools" / "deep.yaml").write_text(deep_tool(50, 100))
    (root / "tools" / "nested.yaml").write_text(
        json.dumps(
            {
                "executor": "runtimes/subprocess",
                "config": {"command": "printf", "args": ["%s", nested_defaults(100)]},
            }
        )
    )
    (root / "strata.yaml").write_text("limits: {default_depth: 100, param_links: 50}\n")


def test_defaults_nested_to_the_cap_render_on_a_small_python_stack(tmp_path: Path) -> None:
    make_project(tmp_path)
    value = on_small_stack(
        """
        main(lambda: strata.Project(".").run_tool("nested")["result"])
        """,
        tmp_path,
    )
    assert value == "x"


def test_a_chain_of_links_at_the_cap_renders_on_a_small_python_stack(tmp_path: Path) -> None:
    # 50 links, every value inside 100 nested defaults: the deepest recursion the caps allow.
    make_project(tmp_path)
    value = on_small_stack(
        """
        main(lambda: strata.Project(".").run_tool("deep")["result"])
        """,
        tmp_path,
    )
    assert value == "end"


def test_a_plan_at_the_caps_runs_on_a_small_python_stack(tmp_path: Path) -> None:
    make_project(tmp_path)
    value = on_small_stack(
        """
        plan = [{"id": "a", "tool": "deep", "arguments": {}}]
        main(lambda: strata.Project(".").run_plan(plan)["steps"][0]["result"])
        """,
        tmp_path,
    )
    assert value == "end"


def test_a_project_within_the_default_limits_works_in_place_on_a_stack_just_over_4_mib(tmp_path: Path) -> None:
    # Its work needs 4 MiB of stack at most: a thread of 4.5 MiB runs it in place (no fresh
    # segment), at those limits' bounds — 3 links, every value inside 32 nested defaults —,
    # as a tool, as a plan and as one step of a plan.
    (tmp_path / "tools" / "runtimes").mkdir(parents=True)
    (tmp_path / "tools" / "runtimes" / "subprocess.yaml").write_text(
        'config: {args: [], cwd: "{project_path}", timeout: 60}\n'
    )
    (tmp_path / "tools" / "deep.yaml").write_text(deep_tool(3, 32))
    value = on_small_stack(
        """
        def work():
            project = strata.Project(".")
            plan = [{"id": "a", "tool": "deep", "arguments": {}}]
            step = project.plan_step(project.admit_plan(plan, name="p"), "a")
            return [
                project.run_tool("deep")["result"],
                project.run_plan(plan)["steps"][0]["result"],
                step["record"]["result"],
            ]
        main(work, stack=4608 * 1024)
        """,
        tmp_path,
    )
    assert value == ["end", "end", "end"]


def test_the_default_limits_render_on_a_small_python_stack(tmp_path: Path) -> None:
    # Template, Plan and PromptManager use the default limits: nested to them, on the
    # smallest stack, each still renders.
    value = on_small_stack(
        """
        deep = "${A:-" * 32 + "x" + "}" * 32
        chain = {"k0": "{k1}", "k1": "{k2}", "k2": "{k3}", "k3": deep}
        def work():
            return [
                strata.render(deep),
                strata.Template(chain).render()["k0"],
                strata.Plan([{"id": "a", "tool": "t", "arguments": {"x": deep}}]).resolve()[
                    "steps"][0]["state"],
                strata.CannedResponse("{{ generative.x }}").render(
                    generator=lambda template, field, context: "g"),
            ]
        main(work)
        """,
        tmp_path,
    )
    assert value == ["x", "x", "ready", "g"]


def test_a_generator_still_sees_its_exception_as_the_cause() -> None:
    import pytest

    import strata

    def boom(template: str, field: str, context: object) -> object:
        raise KeyError("nope")

    with pytest.raises(strata.StrataError) as info:
        strata.CannedResponse("{{ generative.x }}").render(generator=boom)
    assert isinstance(info.value.__cause__, KeyError)
