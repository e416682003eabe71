"""Fixtures: a scratch strata project with a few tools."""

from __future__ import annotations

from pathlib import Path

import pytest

import strata

TOOLS = {
    "runtimes/subprocess.yaml": 'config: {args: [], cwd: "{project_path}", timeout: 60}\n',
    # Prints its `message` parameter exactly as given.
    "say.yaml": """\
executor: runtimes/subprocess
parameters:
  type: object
  properties:
    message: {type: string, default: hello}
    n: {type: integer}
config:
  command: printf
  args: ["%s", "{message}"]
""",
    # Exits with status 3 after writing to stderr.
    "fail.yaml": """\
executor: runtimes/subprocess
config:
  command: sh
  args: ["-c", "echo broken >&2; exit 3"]
""",
    # Prints the environment variable GREETING.
    "greet.yaml": """\
executor: runtimes/subprocess
config:
  command: printenv
  args: [GREETING]
  env: {GREETING: "${GREETING}"}
""",
    # Sleeps longer than any test waits.
    "nap.yaml": """\
executor: runtimes/subprocess
config:
  command: sleep
  args: ["30"]
""",
    # Marks that it started, then waits until the file `go` exists.
    "wait_for_go.yaml": """\
executor: runtimes/subprocess
config:
  command: sh
  args: ["-c", "touch started; while [ ! -e go ]; do sleep 0.01; done; printf '{\\"went\\": true}'"]
  timeout: 20
""",
    # An unclosed placeholder on line 4.
    "broken.yaml": """\
executor: runtimes/subprocess
config:
  command: printf
  args: ["${X"]
""",
}


@pytest.fixture
def project_dir(tmp_path: Path) -> Path:
    """A project directory holding the tools above."""
    for name, text in TOOLS.items():
        path = tmp_path / "tools" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


@pytest.fixture
def project(project_dir: Path) -> strata.Project:
    """The project of `project_dir`."""
    return strata.Project(project_dir)
