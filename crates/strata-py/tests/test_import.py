"""strata.import_ryeos: a RyeOS project's .ai/ tree into a new strata project (docs/import.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import strata

CORPUS = Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "ryeos" / "corpus"


def ryeos(root: Path, files: dict[str, str]) -> Path:
    """A RyeOS project under root/ryeos holding .ai/<rel> for each file."""
    src = root / "ryeos"
    for rel, text in files.items():
        path = src / ".ai" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return src


def test_a_tool_and_a_code_tool_on_a_space_runtime(tmp_path: Path) -> None:
    runtime = (CORPUS / "py/tools/rye/core/runtimes/python/function.yaml").read_text()
    src = ryeos(
        tmp_path,
        {
            "tools/echo.yaml": 'executor_id: "@subprocess"\nconfig: {command: echo, args: [hi]}\n',
            "tools/my/code.py": (
                '__version__ = "1.0.0"\n'
                '__executor_id__ = "rye/core/runtimes/python/function"\n'
                "def execute(params, project_path):\n"
                "    return {\"n\": params.get(\"n\", 0) + 1}\n"
            ),
        },
    )
    space = tmp_path / "space"
    (space / ".ai/tools/rye/core/runtimes/python").mkdir(parents=True)
    (space / ".ai/tools/rye/core/runtimes/python/function.yaml").write_text(runtime)

    dst = tmp_path / "new"
    report = strata.import_ryeos(src, dst, spaces=[space])

    assert report["exit_code"] == 0
    assert report["summary"]["imported"] == 3
    assert report["summary"]["refused"] == 0
    assert report["check"]["errors"] == 0
    sources = [(f["source"], f.get("space")) for f in report["files"]]
    assert sources == [
        (".ai/tools/echo.yaml", None),
        (".ai/tools/my/code.py", None),
        (".ai/tools/rye/core/runtimes/python/function.yaml", 1),
    ]
    assert json.loads((dst / "IMPORT-REPORT.json").read_text()) == report
    # The imported project runs.
    result = strata.Project(dst).run_tool("my/code", {"n": 2})
    assert result["result"] == {"n": 3}


def test_refusals_are_in_the_report(tmp_path: Path) -> None:
    src = ryeos(tmp_path, {"tools/p.yaml": "tool_type: primitive\nexecutor_id: null\n"})
    report = strata.import_ryeos(str(src), str(tmp_path / "new"))
    assert report["exit_code"] == 3
    [entry] = report["files"]
    assert entry["outcome"] == "refused"
    assert entry["reason"]["code"] == "IMP-primitive"


def test_a_non_empty_target_raises(tmp_path: Path) -> None:
    src = ryeos(tmp_path, {"tools/t.yaml": 'executor_id: "@subprocess"\n'})
    dst = tmp_path / "new"
    dst.mkdir()
    (dst / "x").write_text("mine")
    with pytest.raises(strata.StrataError, match="is not empty"):
        strata.import_ryeos(src, dst)
    assert sorted(p.name for p in dst.iterdir()) == ["x"]


def test_spaces_must_be_a_list_of_paths(tmp_path: Path) -> None:
    src = ryeos(tmp_path, {"tools/t.yaml": 'executor_id: "@subprocess"\n'})
    with pytest.raises(TypeError, match="spaces: expected a list of paths, got a str"):
        strata.import_ryeos(src, tmp_path / "new", spaces="space")
