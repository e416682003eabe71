"""The examples of docs/python.md and the README, run as doctests from the repository root.

Every ```pycon block of a file is one doctest; the blocks of a file share one namespace, in
order, as a reader running them one after the other would.
"""

from __future__ import annotations

import doctest
import io
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
BLOCK = re.compile(r"^```pycon\n(.*?)^```", re.S | re.M)


def blocks(path: Path) -> list[tuple[int, str]]:
    """Each pycon block of `path`: its first line (0-based) and its text."""
    text = path.read_text()
    return [(text.count("\n", 0, m.start(1)), m.group(1)) for m in BLOCK.finditer(text)]


@pytest.mark.parametrize(("doc", "at_least"), [("docs/python.md", 40), ("README.md", 1)])
def test_the_examples_run_as_shown(doc: str, at_least: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    path = ROOT / doc
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    report = io.StringIO()
    globs: dict[str, object] = {}
    for line, block in blocks(path):
        test = parser.get_doctest(block, globs, f"{doc}:{line + 1}", str(path), line)
        runner.run(test, out=report.write, clear_globs=False)
        globs = test.globs
    results = runner.summarize(verbose=False)
    assert results.failed == 0, report.getvalue()
    assert results.attempted >= at_least
