"""Parity of the `strata` command and the Python module: one application layer under both.

Each case builds a scratch project, runs one operation through the `strata` binary (argv
list, `--json` where the command has it, in the project's directory) and the same operation
through the Python module (in the same directory, with the same environment), and asserts
the same outcome: the same result or records field by field (`duration_ms` aside), or the
same refusal — the same error kind, message, hint, path, span, location and, for a refusal
by the project check, the same diagnostics. Where the case pins what the outcome must be
(`kind`, `message`), both sides are held to it as well.

The binary is `$STRATA_BIN`, else `<repo>/target/debug/strata` (built with
`cargo build -p strata` when missing).
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import pytest

import strata

REPO = Path(__file__).resolve().parents[3]

# The fields of an error both front-ends report (the CLI's JSON form, `StrataError.to_dict`).
ERROR_FIELDS = ("kind", "message", "path", "span", "hint", "file", "line", "column", "data")
# The fields of `strata run --json`'s result object that a step record's `run` also has.
RUN_FIELDS = ("success", "exit_code", "stderr", "truncated", "timed_out")

# ---------------------------------------------------------------------------------------------
# The project every case starts from.

BASE: dict[str, str] = {
    "tools/runtimes/subprocess.yaml": 'config: {args: [], cwd: "{project_path}", timeout: 60}\n',
    # Prints its `message` parameter exactly as given.
    "tools/say.yaml": """\
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
    # A required parameter and an enum.
    "tools/req.yaml": """\
executor: runtimes/subprocess
parameters:
  type: object
  properties:
    name: {type: string}
    colour: {type: string, enum: [red, blue], default: red}
  required: [name]
config:
  command: printf
  args: ["%s is %s", "{name}", "{colour}"]
""",
    # Exits with status 3 after writing to stderr.
    "tools/fail.yaml": """\
executor: runtimes/subprocess
config:
  command: sh
  args: ["-c", "echo broken >&2; exit 3"]
""",
    # Two lines of text, the last one ending in a newline.
    "tools/lines.yaml": """\
executor: runtimes/subprocess
config:
  command: printf
  args: ["first\\nsecond\\n"]
""",
    # Prints nothing.
    "tools/quiet.yaml": """\
executor: runtimes/subprocess
config:
  command: "true"
""",
    # Prints the environment variable GREETING, which nothing sets.
    "tools/greet.yaml": """\
executor: runtimes/subprocess
config:
  command: printf
  args: ["%s", "${GREETING}"]
""",
}

# Tools only some cases have.
TYPO_COMMAND = """\
executor: runtimes/subprocess
config:
  command: "{nosuch}"
"""
TYPO_ARGS = """\
executor: runtimes/subprocess
config:
  command: printf
  args: ["%s", "{nosuch}"]
"""
CHAIN = """\
executor: runtimes/subprocess
config:
  command: printf
  args: ["%s", "{a}"]
  a: "{b}"
  b: "{c}"
  c: "{d}"
  d: "{e}"
  e: end
"""
PARAM_CYCLE = """\
executor: runtimes/subprocess
config:
  command: printf
  args: ["%s", "{a}"]
  a: "{b}"
  b: "{a}"
"""
MANY = """\
executor: runtimes/subprocess
config:
  command: printf
  args: ["{tool_dir} {tool_dir} {tool_dir} {tool_dir}"]
"""
# Passes its parameters as variables with a prefix that reaches protected names.
LD_PREFIX = """\
executor: runtimes/subprocess
parameters:
  type: object
  properties:
    preload: {type: string}
config:
  command: "true"
  params_env_prefix: LD_
"""
# A secret from `.env` under the name one of its parameters would be passed as.
SECRET_PREFIX = """\
executor: runtimes/subprocess
parameters:
  type: object
  properties:
    title: {type: string}
    TITLE: {type: string}
    token: {type: string}
secrets: [P_TOKEN]
env_config:
  env: {P_TOKEN: "${API_TOKEN}"}
config:
  command: printenv
  args: [P_TITLE]
  params_env_prefix: P_
"""
# Writes a secret of `.env` to stderr.
LEAK = """\
executor: runtimes/subprocess
config:
  command: sh
  args: ["-c", "echo \\"token=$API_TOKEN\\" >&2; echo ok"]
"""
# A runtime whose `{script}` every tool must set, and a tool that does not.
SCRIPT_RUNTIME = """\
executor: runtimes/subprocess
config:
  command: sh
  args: ["{tool_dir}/{script}"]
"""
NO_SCRIPT = "executor: runtimes/shell\nconfig: {}\n"
GRAPH_BAD_PARAMS = """\
kind: graph
nodes:
  a:
    kind: action
    tool: say
    params: {message: [1]}
"""
GRAPH_UNKNOWN_NODE = """\
kind: graph
nodes:
  a:
    kind: action
    tool: say
    params: {message: hi}
    next: nowhere
"""
GRAPH_OK = """\
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
GRAPH_FAILING_STEP = """\
kind: graph
nodes:
  a:
    kind: action
    tool: fail
"""
GRAPH_SPIN = """\
kind: graph
max_steps: 2
nodes:
  a:
    kind: action
    tool: quiet
    next: a
"""
PROMPTS = {
    "prompts/main/default.j2": "Hello {{ name }}!\n",
    "prompts/main/BrowseLink.j2": "Browse {{ url }} for {{ name }}\n",
    "prompts/reflection/default.j2": "Review: {{ name }}\n",
}
VARIANTS = {
    "prompts/main/Versioned.j2": "{{ preamble }}|{{ name }}\n",
    "prompts/main/components.yaml": (
        "components:\n  preamble:\n    - {version: short, content: 'Hi.'}\n"
        "    - {version: long, content: 'Hello there.'}\n"
    ),
}
BALANCE = "Hi {{std.customer.name}}, your {{account.type}} balance is {{account.balance}}."
CHECKING = '{"canned_response_fields": {"account.balance": "$5,432.10", "account.type": "Checking"}}'
SAVINGS = '{"canned_response_fields": {"account": {"type": "Savings"}}}'
STD = {"customer": {"name": "Ann"}}

# ---------------------------------------------------------------------------------------------
# The two outcomes, in one comparable form.


@dataclass(frozen=True)
class Outcome:
    """What an operation came to: `value` when it succeeded, else `error` (the common fields
    of the error, the check's `diagnostics` included) and the Python class of the error."""

    ok: bool
    value: Any = None
    error: Optional[dict[str, Any]] = None
    cls: Optional[str] = None

    def comparable(self) -> Any:
        return {"ok": self.ok, "value": self.value, "error": self.error}


def common_error(fields: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of an error both sides report; the root path and no span are left out (the
    CLI's JSON form omits them)."""
    out = {k: fields[k] for k in ERROR_FIELDS if fields.get(k) is not None}
    if out.get("path") == "$":
        del out["path"]
    if "span" in out:
        out["span"] = list(out["span"])
    if "diagnostics" in fields:
        out["diagnostics"] = list(fields["diagnostics"])
    return out


def without_duration(record: Any) -> Any:
    """A step record (or a CLI result object) without its `duration_ms`."""
    if not isinstance(record, dict):
        return record
    out = dict(record)
    if isinstance(out.get("run"), dict):
        run = dict(out["run"])
        assert isinstance(run.pop("duration_ms"), int)
        out["run"] = run
    return out


def cli_tool_record(tool: str) -> Callable[[Any], Any]:
    """`strata run TOOL --json`'s result object as the step record's fields it shows: the
    `result` (stdout parsed as JSON, else the text less one trailing newline; empty: None) and
    the `run` fields the object has."""

    def convert(obj: Any) -> Any:
        assert set(obj) >= {"stdout", "data", *RUN_FIELDS}, obj
        if obj["data"] is not None:
            result = obj["data"]
        else:
            text = obj["stdout"][:-1] if obj["stdout"].endswith("\n") else obj["stdout"]
            result = text or None
        return {
            "id": tool,
            "status": "completed" if obj["success"] else "failed",
            "result": result,
            "run": {k: obj[k] for k in RUN_FIELDS},
        }

    return convert


def py_tool_record(record: Any) -> Any:
    """A step record as `strata run --json` can show it (no `error`, no `signal`)."""
    run = record["run"]
    return {
        "id": record["id"],
        "status": record["status"],
        "result": record["result"],
        "run": {k: run[k] for k in RUN_FIELDS},
    }


def plan_report(obj: Any) -> Any:
    """The part of a plan run's report both sides give, without durations."""
    return {
        "status": obj["status"],
        "levels": obj["levels"],
        "steps": [without_duration(s) for s in obj["steps"]],
        "missing_values": obj["missing_values"],
    }


def without_ok(obj: Any) -> Any:
    return {k: v for k, v in obj.items() if k != "ok"}


def reply_fields(obj: Any) -> Any:
    """A response's reply and fields, without where each tool field came from (the CLI names
    the file, Python the position in `tools`)."""
    return {
        "reply": obj["reply"],
        "fields": [{k: v for k, v in f.items() if k != "from"} for f in obj["fields"]],
    }


def identity(value: Any) -> Any:
    return value


# ---------------------------------------------------------------------------------------------
# The cases.


@dataclass(frozen=True)
class Case:
    """One operation, through both front-ends.

    `cli` is the argv after the binary; `py` does the same in-process (in the project's
    directory) and returns its result; `cli_value`/`py_value` bring a success to one form.
    `kind` and `message` (when given) are what a failure must be on both sides, `exit` the
    binary's exit code. `events` marks a graph run, whose `--json` events go to stderr, one a
    line, and whose stdout is what the run came to (the `finished` event's fields). `protocol` marks `strata plan resolve`'s reply (SPEC §5.7), whose
    error message carries the hint after `; `. `same_hint=False` lets each front-end's hint
    name its own way to do what the hint suggests (a flag, a keyword argument).
    """

    id: str
    cli: Sequence[str]
    py: Callable[[], Any]
    files: Mapping[str, str] = field(default_factory=dict)
    env: Mapping[str, str] = field(default_factory=dict)
    kind: Optional[str] = None
    message: Optional[str] = None
    cls: Optional[type[strata.StrataError]] = None
    exit: Optional[int] = None
    cli_value: Callable[[Any], Any] = identity
    py_value: Callable[[Any], Any] = identity
    protocol: bool = False
    same_hint: bool = True
    events: bool = False


def graph_run(obj: Any) -> Any:
    """A graph run as both sides report it: how it ended, its steps, result and failure (the
    run id is each side's own)."""
    return {k: obj[k] for k in ("status", "steps", "result", "failure")}


def project() -> strata.Project:
    return strata.Project(".")


def plan_file(name: str) -> strata.Plan:
    return strata.Plan.from_file(name)


def plan_shown(plan: strata.Plan) -> Any:
    return {"steps": plan.steps, "levels": plan.levels, "values": plan.placeholders}


def prompt_result(manager: strata.PromptManager, key: Optional[str], **kwargs: Any) -> Any:
    """What `strata prompt render --json` prints, from the Python API: the template chosen,
    its file and hash, and the text."""
    text = manager.render(key, **kwargs)
    lookup = {k: v for k, v in kwargs.items() if k in ("type", "root_space", "version", "default_name")}
    chosen = manager.switch(**lookup).resolve(key)
    [template] = [t for t in manager.templates() if t["id"] == chosen]
    return {"template": chosen, "file": template["file"], "hash": template["hash"], "text": text}


def tool_results(*names: str) -> list[Any]:
    return [json.loads(Path(n).read_text()) for n in names]


# `a` is `step1`; `{{…}}`, `{$stepN…}` and `$stepN…` references, typed and embedded.
TWO_STEPS = """\
- tool: say
  arguments: {message: '{"words": 3, "items": [1, 2]}'}
- id: b
  tool: say
  arguments: {message: "got {{step1.result.words}} and {$step1.items}"}
- id: c
  tool: say
  depends_on: [b]
  arguments: {message: "items: {$step1.items}", n: "{{step1.result.words}}"}
"""

CASES: list[Case] = [
    # ----- tools that run
    Case(
        "run-tool-defaults",
        ["run", "say", "--json"],
        lambda: project().run_tool("say"),
        cli_value=cli_tool_record("say"),
        py_value=py_tool_record,
        exit=0,
    ),
    Case(
        "run-tool-string-param",
        ["run", "say", "-p", "message=two words", "--json"],
        lambda: project().run_tool("say", {"message": "two words"}),
        cli_value=cli_tool_record("say"),
        py_value=py_tool_record,
        exit=0,
    ),
    Case(
        "run-tool-typed-params-json-output",
        ["run", "say", "--params-json", '{"message": "{\\"words\\": 3, \\"big\\": 18446744073709551615}", "n": 7}', "--json"],
        lambda: project().run_tool("say", {"message": '{"words": 3, "big": 18446744073709551615}', "n": 7}),
        cli_value=cli_tool_record("say"),
        py_value=py_tool_record,
        exit=0,
    ),
    Case(
        "run-tool-data-never-rescanned",
        ["run", "say", "--params-json", '{"message": "${HOME} {tool_path} {{a.result.x}} $step1"}', "--json"],
        lambda: project().run_tool("say", {"message": "${HOME} {tool_path} {{a.result.x}} $step1"}),
        cli_value=cli_tool_record("say"),
        py_value=py_tool_record,
        exit=0,
    ),
    Case(
        "run-tool-text-output",
        ["run", "lines", "--json"],
        lambda: project().run_tool("lines"),
        cli_value=cli_tool_record("lines"),
        py_value=py_tool_record,
        exit=0,
    ),
    Case(
        "run-tool-empty-output",
        ["run", "quiet", "--json"],
        lambda: project().run_tool("quiet"),
        cli_value=cli_tool_record("quiet"),
        py_value=py_tool_record,
        exit=0,
    ),
    Case(
        "run-tool-that-fails",
        ["run", "fail", "--json"],
        lambda: project().run_tool("fail"),
        cli_value=cli_tool_record("fail"),
        py_value=py_tool_record,
        exit=3,
    ),
    Case(
        "run-tool-secret-redacted-from-stderr",
        ["run", "leak", "--json"],
        lambda: project().run_tool("leak"),
        files={"tools/leak.yaml": LEAK, ".env": "API_TOKEN=hunter2\n"},
        cli_value=cli_tool_record("leak"),
        py_value=py_tool_record,
        exit=0,
    ),
    Case(
        "run-tool-limit-raised-by-settings",
        ["run", "chain", "--json"],
        lambda: project().run_tool("chain"),
        files={"tools/chain.yaml": CHAIN, "strata.yaml": "limits:\n  param_links: 5\n"},
        cli_value=cli_tool_record("chain"),
        py_value=py_tool_record,
        exit=0,
    ),
    # The whole step record: `plan step` prints it as `run_tool` returns it.
    Case(
        "step-record-completed",
        ["plan", "step", "--step", "s", "p.yaml", "--json"],
        lambda: project().run_tool("req", {"name": "Ann", "colour": "blue"}, step_id="s"),
        files={"p.yaml": "- {id: s, tool: req, arguments: {name: Ann, colour: blue}}\n"},
        cli_value=without_duration,
        py_value=without_duration,
        exit=0,
    ),
    Case(
        "step-record-failed",
        ["plan", "step", "--step", "s", "p.yaml", "--json"],
        lambda: project().run_tool("fail", step_id="s"),
        files={"p.yaml": "- {id: s, tool: fail, arguments: {}}\n"},
        cli_value=without_duration,
        py_value=without_duration,
        exit=1,
    ),
    # ----- refused by the project check
    Case(
        "check-unknown-placeholder-in-command",
        ["run", "typo", "--json"],
        lambda: project().run_tool("typo"),
        files={"tools/typo.yaml": TYPO_COMMAND},
        kind="check",
        message="`typo` was not run: 1 error found",
        cls=strata.CheckError,
        exit=2,
    ),
    Case(
        "check-unknown-placeholder-in-command-plan-step",
        ["plan", "step", "--step", "a", "p.yaml", "--json"],
        lambda: project().plan_step(Path("p.yaml").read_text(), "a", name="p.yaml"),
        files={"tools/typo.yaml": TYPO_COMMAND, "p.yaml": "- {id: a, tool: typo, arguments: {}}\n"},
        kind="check",
        message="`p.yaml` was not run: 1 error found",
        cls=strata.CheckError,
        exit=2,
    ),
    Case(
        "check-unknown-placeholder-in-args",
        ["run", "typo", "--json"],
        lambda: project().run_tool("typo"),
        files={"tools/typo.yaml": TYPO_ARGS},
        kind="check",
        message="`typo` was not run: 1 error found",
        cls=strata.CheckError,
        exit=2,
    ),
    Case(
        "check-runtime-parameter-the-tool-does-not-set",
        ["run", "noscript", "--json"],
        lambda: project().run_tool("noscript"),
        files={"tools/runtimes/shell.yaml": SCRIPT_RUNTIME, "tools/noscript.yaml": NO_SCRIPT},
        kind="check",
        message="`noscript` was not run: 1 error found",
        cls=strata.CheckError,
        exit=2,
    ),
    Case(
        "check-plan-run-calling-a-rejected-tool",
        ["plan", "run", "p.yaml", "--json"],
        lambda: project().run_plan(plan_file("p.yaml")),
        files={"tools/typo.yaml": TYPO_COMMAND, "p.yaml": "- {id: a, tool: say, arguments: {}}\n- {id: b, tool: typo, arguments: {}}\n"},
        kind="check",
        message="`p.yaml` was not run: 1 error found",
        cls=strata.CheckError,
        exit=2,
    ),
    Case(
        "check-graph-action-params",
        ["run", "graphs/bad", "--json"],
        lambda: project().run_graph("graphs/bad"),
        files={"tools/graphs/bad.yaml": GRAPH_BAD_PARAMS},
        kind="check",
        message="`graphs/bad` was not run: 1 error found",
        cls=strata.CheckError,
        exit=2,
    ),
    Case(
        "check-graph-unknown-node",
        ["run", "graphs/lost", "--json"],
        lambda: project().run_graph("graphs/lost"),
        files={"tools/graphs/lost.yaml": GRAPH_UNKNOWN_NODE},
        kind="check",
        message="`graphs/lost` was not run: 1 error found",
        cls=strata.CheckError,
        exit=2,
    ),
    Case(
        "graph-run-completes",
        ["run", "graphs/ok", "--input", "word=${HOME}", "--run-id", "cli", "--json"],
        lambda: project().run_graph("graphs/ok", {"word": "${HOME}"}, run_id="py"),
        files={"tools/graphs/ok.yaml": GRAPH_OK},
        exit=0,
        events=True,
        cli_value=graph_run,
        py_value=graph_run,
    ),
    Case(
        "graph-step-error",
        ["run", "graphs/failing", "--run-id", "cli", "--json"],
        lambda: project().run_graph("graphs/failing", run_id="py"),
        files={"tools/graphs/failing.yaml": GRAPH_FAILING_STEP},
        exit=1,
        events=True,
        cli_value=graph_run,
        py_value=graph_run,
    ),
    Case(
        "graph-limit",
        ["run", "graphs/spin", "--run-id", "cli", "--json"],
        lambda: project().run_graph("graphs/spin", run_id="py"),
        files={"tools/graphs/spin.yaml": GRAPH_SPIN},
        exit=3,
        events=True,
        cli_value=graph_run,
        py_value=graph_run,
    ),
    Case(
        "graph-missing-input",
        ["run", "graphs/ok", "--json"],
        lambda: project().run_graph("graphs/ok"),
        files={"tools/graphs/ok.yaml": GRAPH_OK},
        exit=2,
    ),
    Case(
        "graph-unknown-input",
        ["run", "graphs/ok", "--input", "word=a", "--input", "wrod=b", "--json"],
        lambda: project().run_graph("graphs/ok", {"word": "a", "wrod": "b"}),
        files={"tools/graphs/ok.yaml": GRAPH_OK},
        exit=2,
    ),
    Case(
        "graph-unknown-id",
        ["run", "graphs/nope", "--json"],
        lambda: project().run_graph("graphs/nope"),
        kind="unknown_tool",
        exit=2,
    ),
    # ----- parameters against the schema
    Case(
        "schema-wrong-type",
        ["run", "say", "--params-json", '{"n": "three"}', "--json"],
        lambda: project().run_tool("say", {"n": "three"}),
        kind="invalid",
        message="invalid parameters for `say`: parameter `n` must be an integer, not a string",
        exit=2,
    ),
    Case(
        "schema-unknown-parameter",
        ["run", "say", "--params-json", '{"colour": "red"}', "--json"],
        lambda: project().run_tool("say", {"colour": "red"}),
        kind="invalid",
        message="invalid parameters for `say`: unknown parameter `colour`",
        exit=2,
    ),
    Case(
        "schema-missing-required",
        ["run", "req", "--json"],
        lambda: project().run_tool("req"),
        kind="invalid",
        exit=2,
    ),
    Case(
        "schema-enum",
        ["run", "req", "--params-json", '{"name": "Ann", "colour": "green"}', "--json"],
        lambda: project().run_tool("req", {"name": "Ann", "colour": "green"}),
        kind="invalid",
        exit=2,
    ),
    # ----- tools that cannot run
    Case(
        "unknown-tool",
        ["run", "sya", "--json"],
        lambda: project().run_tool("sya"),
        kind="unknown_tool",
        message="unknown tool `sya`",
        cls=strata.ToolError,
        exit=2,
    ),
    Case(
        "tool-file-syntax",
        ["run", "broken", "--json"],
        lambda: project().run_tool("broken"),
        files={"tools/broken.yaml": 'executor: runtimes/subprocess\nconfig:\n  command: printf\n  args: ["${X"]\n'},
        kind="check",
        message="`broken` was not run: 1 error found",
        cls=strata.CheckError,
        exit=2,
    ),
    Case(
        "unknown-executor",
        ["run", "orphan", "--json"],
        lambda: project().run_tool("orphan"),
        files={"tools/orphan.yaml": "executor: runtimes/nope\nconfig: {command: 'true'}\n"},
        exit=2,
    ),
    Case(
        "executor-cycle",
        ["run", "loop1", "--json"],
        lambda: project().run_tool("loop1"),
        files={
            "tools/loop1.yaml": "executor: loop2\nconfig: {command: 'true'}\n",
            "tools/loop2.yaml": "executor: loop1\nconfig: {}\n",
        },
        exit=2,
    ),
    Case(
        "parameter-cycle",
        ["run", "pcycle", "--json"],
        lambda: project().run_tool("pcycle"),
        files={"tools/pcycle.yaml": PARAM_CYCLE},
        kind="check",
        message="`pcycle` was not run: 1 error found",
        cls=strata.CheckError,
        exit=2,
    ),
    Case(
        "command-not-found",
        ["run", "ghost", "--json"],
        lambda: project().run_tool("ghost"),
        files={"tools/ghost.yaml": "executor: runtimes/subprocess\nconfig: {command: no-such-program-strata-parity}\n"},
        exit=2,
    ),
    # ----- limits
    Case(
        "limit-parameter-chain",
        ["run", "chain", "--json"],
        lambda: project().run_tool("chain"),
        files={"tools/chain.yaml": CHAIN},
        kind="check",
        message="`chain` was not run: 1 error found",
        cls=strata.CheckError,
        exit=2,
    ),
    Case(
        "limit-parameter-chain-env-over-settings",
        ["run", "chain", "--json"],
        lambda: project().run_tool("chain"),
        files={"tools/chain.yaml": CHAIN, "strata.yaml": "limits:\n  param_links: 5\n"},
        env={"STRATA_LIMITS_PARAM_LINKS": "3"},
        kind="check",
        message="`chain` was not run: 1 error found",
        cls=strata.CheckError,
        exit=2,
    ),
    Case(
        "limit-placeholders-per-string",
        ["run", "many", "--json"],
        lambda: project().run_tool("many"),
        files={"tools/many.yaml": MANY, "strata.yaml": "limits: {placeholders_per_string: 3}\n"},
        kind="check",
        message="`many` was not run: 1 error found",
        cls=strata.CheckError,
        exit=2,
    ),
    Case(
        "limit-template-bytes",
        ["run", "many", "--json"],
        lambda: project().run_tool("many"),
        files={"tools/many.yaml": MANY, "strata.yaml": "limits: {template_bytes: 30}\n"},
        kind="check",
        message="`many` was not run: 1 error found",
        cls=strata.CheckError,
        exit=2,
    ),
    # ----- missing values
    Case(
        "strict-missing-variable",
        ["run", "greet", "--strict", "--json"],
        lambda: project().run_tool("greet", strict=True),
        kind="undefined",
        message="environment variable `GREETING` is not set",
        cls=strata.UndefinedError,
        exit=2,
    ),
    Case(
        "strict-by-settings",
        ["run", "greet", "--json"],
        lambda: project().run_tool("greet"),
        files={"strata.yaml": "strict: true\n"},
        kind="undefined",
        cls=strata.UndefinedError,
        exit=2,
    ),
    Case(
        "required-variable-message",
        ["run", "needs", "--json"],
        lambda: project().run_tool("needs"),
        files={"tools/needs.yaml": 'executor: runtimes/subprocess\nconfig:\n  command: printf\n  args: ["${API_TOKEN:?set API_TOKEN first}"]\n'},
        kind="undefined",
        message="required variable `API_TOKEN` is unset or empty: set API_TOKEN first",
        cls=strata.UndefinedError,
        exit=2,
    ),
    # ----- secrets and protected variables
    Case(
        "secret-protected-variable",
        ["run", "ld", "--params-json", '{"preload": "/tmp/evil.so"}', "--json"],
        lambda: project().run_tool("ld", {"preload": "/tmp/evil.so"}),
        files={"tools/ld.yaml": LD_PREFIX},
        kind="invalid",
        message="caller parameter `preload` would be passed as `LD_PRELOAD`, which a caller may not set",
        exit=2,
    ),
    Case(
        "secret-parameter-naming-a-secret-variable",
        ["run", "secretive", "--params-json", '{"token": "mine"}', "--json"],
        lambda: project().run_tool("secretive", {"token": "mine"}),
        files={"tools/secretive.yaml": SECRET_PREFIX, ".env": "API_TOKEN=hunter2\n"},
        kind="invalid",
        message="caller parameter `token` would be passed as `P_TOKEN`, which a caller may not set",
        exit=2,
    ),
    Case(
        "secret-two-parameters-one-variable",
        ["run", "secretive", "--params-json", '{"title": "a", "TITLE": "b"}', "--json"],
        lambda: project().run_tool("secretive", {"title": "a", "TITLE": "b"}),
        files={"tools/secretive.yaml": SECRET_PREFIX, ".env": "API_TOKEN=hunter2\n"},
        kind="invalid",
        message="caller parameters `title` and `TITLE` would both be passed as `P_TITLE`",
        exit=2,
    ),
    Case(
        "secret-prefix-parameter-passes",
        ["run", "secretive", "--params-json", '{"title": "t"}', "--json"],
        lambda: project().run_tool("secretive", {"title": "t"}),
        files={"tools/secretive.yaml": SECRET_PREFIX, ".env": "API_TOKEN=hunter2\n"},
        cli_value=cli_tool_record("secretive"),
        py_value=py_tool_record,
        exit=0,
    ),
    # ----- whole plans
    Case(
        "plan-run-completed",
        ["plan", "run", "p.yaml", "--json", "--quiet"],
        lambda: project().run_plan(plan_file("p.yaml")),
        files={"p.yaml": TWO_STEPS},
        cli_value=plan_report,
        py_value=plan_report,
        exit=0,
    ),
    Case(
        "plan-run-failed-and-skipped",
        ["plan", "run", "p.yaml", "--json", "--quiet"],
        lambda: project().run_plan(plan_file("p.yaml")),
        files={"p.yaml": "- {id: a, tool: fail, arguments: {}}\n- {id: b, tool: say, arguments: {message: '{{a.result}}'}}\n- {id: c, tool: say, arguments: {}}\n"},
        cli_value=plan_report,
        py_value=plan_report,
        exit=1,
    ),
    Case(
        "plan-run-missing-value",
        ["plan", "run", "p.yaml", "--json", "--quiet"],
        lambda: project().run_plan(plan_file("p.yaml")),
        files={"p.yaml": "- {id: a, tool: say, arguments: {}}\n- {id: b, tool: say, arguments: {message: '{{PLACEHOLDER_reply}}'}}\n"},
        cli_value=plan_report,
        py_value=plan_report,
        exit=3,
    ),
    Case(
        "plan-run-value-given",
        ["plan", "run", "p.yaml", "--value", "reply=Thanks, Sarah!", "--json", "--quiet"],
        lambda: project().run_plan(plan_file("p.yaml"), values={"reply": "Thanks, Sarah!"}),
        files={"p.yaml": "- {id: b, tool: say, arguments: {message: 'Re: {{PLACEHOLDER_reply}}'}}\n"},
        cli_value=plan_report,
        py_value=plan_report,
        exit=0,
    ),
    Case(
        "plan-run-typed-value",
        ["plan", "run", "p.yaml", "--value-json", "count=7", "--json", "--quiet"],
        lambda: project().run_plan(plan_file("p.yaml"), values={"count": 7}),
        files={"p.yaml": "- {id: b, tool: say, arguments: {n: '{{PLACEHOLDER_count}}'}}\n"},
        cli_value=plan_report,
        py_value=plan_report,
        exit=0,
    ),
    Case(
        "plan-run-path-not-found",
        ["plan", "run", "p.yaml", "--json", "--quiet"],
        lambda: project().run_plan(plan_file("p.yaml")),
        files={"p.yaml": "- {id: a, tool: say, arguments: {message: '{\"mail\": 1}'}}\n- {id: b, tool: say, arguments: {message: '{{a.result.email}}'}}\n"},
        cli_value=plan_report,
        py_value=plan_report,
        exit=1,
    ),
    Case(
        "plan-run-unknown-tool",
        ["plan", "run", "p.yaml", "--json"],
        lambda: project().run_plan(plan_file("p.yaml")),
        files={"p.yaml": "- {id: a, tool: sya, arguments: {}}\n"},
        kind="unknown_tool",
        message="step `a` calls unknown tool `sya`",
        cls=strata.ToolError,
        exit=2,
    ),
    Case(
        "plan-run-arguments-against-the-schema",
        ["plan", "run", "p.yaml", "--json"],
        lambda: project().run_plan(plan_file("p.yaml")),
        files={"p.yaml": "- id: a\n  tool: say\n  arguments: {n: x, colour: red}\n"},
        kind="invalid",
        message="step `a`: invalid parameters for `say`: parameter `n` must be an integer, not a string; unknown parameter `colour`",
        exit=2,
    ),
    Case(
        "plan-step-arguments-against-the-schema",
        ["plan", "step", "--step", "a", "p.yaml", "--json"],
        lambda: project().run_plan(plan_file("p.yaml")),
        files={"p.yaml": "- id: a\n  tool: say\n  arguments: {n: x}\n"},
        kind="invalid",
        message="step `a`: invalid parameters for `say`: parameter `n` must be an integer, not a string",
        exit=2,
    ),
    Case(
        "plan-run-cycle",
        ["plan", "run", "p.json", "--json"],
        lambda: project().run_plan(plan_file("p.json")),
        files={"p.json": '[{"id":"a","tool":"say","arguments":{"message":"{{b.result}}"}},{"id":"b","tool":"say","arguments":{"message":"{{a.result}}"}}]'},
        kind="cycle",
        message="circular dependency: a -> b -> a",
        cls=strata.CycleError,
        exit=2,
    ),
    # ----- reading plans: `plan show --json` and `strata.Plan`
    Case(
        "plan-show",
        ["plan", "show", "p.yaml", "--json"],
        lambda: plan_shown(plan_file("p.yaml")),
        files={"p.yaml": TWO_STEPS + "- {tool: say, intent: reply, arguments: {message: '{{PLACEHOLDER_note}}'}}\n"},
        exit=0,
    ),
    Case(
        "plan-cycle",
        ["plan", "show", "p.json", "--json"],
        lambda: plan_file("p.json"),
        files={"p.json": '[{"id":"a","tool":"t","arguments":{"x":"{{b.result}}"}},{"id":"b","tool":"t","arguments":{"x":"{{a.result}}"}}]'},
        kind="cycle",
        message="circular dependency: a -> b -> a",
        cls=strata.CycleError,
        exit=2,
    ),
    Case(
        "plan-self-reference",
        ["plan", "show", "p.yaml", "--json"],
        lambda: plan_file("p.yaml"),
        files={"p.yaml": "- {id: a, tool: t, arguments: {x: '{{a.result.count}}'}}\n"},
        kind="cycle",
        cls=strata.CycleError,
        exit=2,
    ),
    Case(
        "plan-unknown-step",
        ["plan", "show", "p.yaml", "--json"],
        lambda: plan_file("p.yaml"),
        files={"p.yaml": "- {id: find_john, tool: t, arguments: {}}\n- {id: send, tool: t, arguments: {to: '{{fnd_john.result.email}}'}}\n"},
        kind="unknown_step",
        message="step `send` refers to unknown step `fnd_john`",
        cls=strata.PlanError,
        exit=2,
    ),
    Case(
        "plan-unknown-step-in-plan-run",
        ["plan", "run", "p.yaml", "--json"],
        lambda: project().run_plan(plan_file("p.yaml")),
        files={"p.yaml": "- {id: a, tool: say, arguments: {message: '$step7.x'}}\n"},
        kind="unknown_step",
        cls=strata.PlanError,
        exit=2,
    ),
    Case(
        "plan-unknown-record-field",
        ["plan", "show", "p.yaml", "--json"],
        lambda: plan_file("p.yaml"),
        files={"p.yaml": "- {id: a, tool: t, arguments: {}}\n- {id: b, tool: t, arguments: {to: '{{a.email}}'}}\n"},
        kind="unknown_field",
        cls=strata.PlanError,
        exit=2,
    ),
    Case(
        "plan-duplicate-id",
        ["plan", "show", "p.yaml", "--json"],
        lambda: plan_file("p.yaml"),
        files={"p.yaml": "- {id: a, tool: t, arguments: {}}\n- {id: a, tool: t, arguments: {}}\n"},
        kind="duplicate_id",
        cls=strata.PlanError,
        exit=2,
    ),
    Case(
        "plan-malformed-dollar-reference",
        ["plan", "show", "p.yaml", "--json"],
        lambda: plan_file("p.yaml"),
        files={"p.yaml": "- {tool: t, arguments: {}}\n- {id: b, tool: t, arguments: {x: '$step1.count and more'}}\n"},
        kind="syntax",
        cls=strata.TemplateSyntaxError,
        exit=2,
    ),
    Case(
        "plan-unknown-step-key",
        ["plan", "show", "p.yaml", "--json"],
        lambda: plan_file("p.yaml"),
        files={"p.yaml": "- {id: a, tol: t, arguments: {}}\n"},
        exit=2,
    ),
    Case(
        "plan-arguments-not-an-object",
        ["plan", "run", "p.yaml", "--json"],
        lambda: project().run_plan(plan_file("p.yaml")),
        files={"p.yaml": "- {id: a, tool: say, arguments: [1, 2]}\n"},
        kind="invalid",
        message="the arguments of step `a` must be a map, not array",
        exit=2,
    ),
    # ----- partial resolution: `plan resolve` (always JSON, SPEC §5.7) and `Plan.resolve`
    Case(
        "plan-resolve-ready-and-blocked",
        ["plan", "resolve", "p.yaml", "--results", '{"step1": {"words": 3, "items": [1, 2]}}'],
        lambda: plan_file("p.yaml").resolve({"step1": {"words": 3, "items": [1, 2]}}),
        files={"p.yaml": TWO_STEPS + "- {id: d, tool: say, arguments: {message: '{{b.result}}'}}\n"},
        cli_value=without_ok,
        exit=0,
    ),
    Case(
        "plan-resolve-failed-and-skipped",
        ["plan", "resolve", "p.yaml", "--results", '{"step1": {"words": 3}}', "--failed", "b"],
        lambda: plan_file("p.yaml").resolve({"step1": {"words": 3}}, failed=["b"]),
        files={"p.yaml": TWO_STEPS + "- {id: d, tool: say, arguments: {message: '{{b.result}}'}}\n"},
        cli_value=without_ok,
        exit=0,
    ),
    Case(
        "plan-resolve-waiting-and-path-not-found",
        ["plan", "resolve", "p.yaml", "--results", '{"step1": {"mail": 1}}', "--value-json", "n=2"],
        lambda: plan_file("p.yaml").resolve({"step1": {"mail": 1}}, values={"n": 2}),
        files={"p.yaml": TWO_STEPS + "- {id: d, tool: say, arguments: {message: '{{PLACEHOLDER_m}}', n: '{{PLACEHOLDER_n}}'}}\n"},
        cli_value=without_ok,
        exit=0,
    ),
    Case(
        "plan-resolve-unknown-result",
        ["plan", "resolve", "p.yaml", "--results", '{"E": 1}'],
        lambda: plan_file("p.yaml").resolve({"E": 1}),
        files={"p.yaml": TWO_STEPS},
        kind="unknown_step",
        message="the plan has no step `E`",
        cls=strata.PlanError,
        exit=2,
        protocol=True,
    ),
    Case(
        "plan-resolve-cycle",
        ["plan", "resolve", "p.json"],
        lambda: plan_file("p.json"),
        files={"p.json": '[{"id":"a","tool":"t","arguments":{"x":"{{b.result}}"}},{"id":"b","tool":"t","arguments":{"x":"{{a.result}}"}}]'},
        kind="cycle",
        message="circular dependency: a -> b -> a",
        cls=strata.CycleError,
        exit=2,
        protocol=True,
    ),
    # ----- prompt templates
    Case(
        "prompt-render",
        ["prompt", "render", "BrowseLink", "--feed", "url=example.org", "--feed", "name=Ann", "--json"],
        lambda: prompt_result(strata.PromptManager("prompts"), "BrowseLink", feed={"url": "example.org", "name": "Ann"}),
        files=PROMPTS,
        exit=0,
    ),
    Case(
        "prompt-render-fallback",
        ["prompt", "render", "Search", "--type", "reflection", "--feed-json", '{"name": [1, null, true]}', "--json"],
        lambda: prompt_result(strata.PromptManager("prompts"), "Search", type="reflection", feed={"name": [1, None, True]}),
        files=PROMPTS,
        exit=0,
    ),
    Case(
        "prompt-miss",
        ["prompt", "render", "Nope", "--type", "planning", "--json"],
        lambda: strata.PromptManager("prompts").render("Nope", type="planning"),
        files={"prompts/main/BrowseLink.j2": "x\n"},
        kind="template_not_found",
        message="no template for key `Nope`: tried planning/Nope, planning/default, default",
        cls=strata.PromptError,
        exit=2,
    ),
    Case(
        "prompt-hash-mismatch",
        ["prompt", "render", "BrowseLink", "--hash", "deadbeef", "--json"],
        lambda: strata.PromptManager("prompts").render("BrowseLink", hash="deadbeef"),
        files=PROMPTS,
        kind="hash_mismatch",
        cls=strata.PromptError,
        exit=2,
    ),
    Case(
        "prompt-strict-undefined",
        ["prompt", "render", "BrowseLink", "--feed", "name=Ann", "--strict", "--json"],
        lambda: strata.PromptManager("prompts").render("BrowseLink", feed={"name": "Ann"}, strict=True),
        files=PROMPTS,
        kind="undefined",
        message="undefined variable `url` in template `main/BrowseLink`",
        cls=strata.UndefinedError,
        exit=2,
    ),
    Case(
        "prompt-syntax-error",
        ["prompt", "render", "Broken", "--json"],
        lambda: strata.PromptManager("prompts").render("Broken"),
        files={**PROMPTS, "prompts/main/Broken.j2": "{% if %}\n"},
        kind="syntax",
        message="template `main/Broken`: unexpected end of block",
        cls=strata.TemplateSyntaxError,
        exit=2,
    ),
    Case(
        "prompt-variants-unpinned",
        ["prompt", "render", "Versioned", "--feed", "name=Ann", "--json"],
        lambda: strata.PromptManager("prompts").render("Versioned", feed={"name": "Ann"}),
        files=VARIANTS,
        kind="request",
        message="template `main/Versioned` has 2 variants (preamble=short; preamble=long)",
        exit=2,
        same_hint=False,
    ),
    Case(
        "prompt-variant-pinned",
        ["prompt", "render", "Versioned", "--feed", "name=Ann", "--pin", "preamble=long", "--json"],
        lambda: prompt_result(strata.PromptManager("prompts"), "Versioned", feed={"name": "Ann"}, pins={"preamble": "long"}),
        files=VARIANTS,
        exit=0,
    ),
    # ----- canned responses
    Case(
        "respond",
        ["respond", "balance.j2", "--std-json", json.dumps(STD), "--tool-result", "checking.json", "--json"],
        lambda: strata.CannedResponse.from_file("balance.j2").respond(std=STD, tools=tool_results("checking.json")),
        files={"balance.j2": BALANCE, "checking.json": CHECKING},
        cli_value=reply_fields,
        py_value=reply_fields,
        exit=0,
    ),
    Case(
        "respond-latest-tool-wins",
        ["respond", "balance.j2", "--std-json", json.dumps(STD), "--tool-result", "checking.json", "--tool-result", "savings.json", "--json"],
        lambda: strata.CannedResponse.from_file("balance.j2").respond(std=STD, tools=tool_results("checking.json", "savings.json")),
        files={"balance.j2": BALANCE, "checking.json": CHECKING, "savings.json": SAVINGS},
        cli_value=reply_fields,
        py_value=reply_fields,
        exit=0,
    ),
    Case(
        "respond-missing-fields",
        ["respond", "balance.j2", "--std-json", json.dumps(STD), "--json"],
        lambda: strata.CannedResponse.from_file("balance.j2").render(std=STD),
        files={"balance.j2": BALANCE},
        kind="missing_fields",
        message=(
            "no source provides `account.type` (tried: tool fields (no tool result has any)), "
            "`account.balance` (tried: tool fields (no tool result has any))"
        ),
        cls=strata.ResponseError,
        exit=2,
    ),
    Case(
        "respond-keyword-field",
        ["respond", "kw.j2", "--json"],
        lambda: strata.CannedResponse.from_file("kw.j2").render(),
        files={"kw.j2": "{{ account.if }}"},
        kind="syntax",
        message="`account.if`: `if` is a Jinja keyword, not a field name",
        cls=strata.TemplateSyntaxError,
        exit=2,
    ),
    Case(
        "respond-unknown-standard-field",
        ["respond", "balance.j2", "--std-json", '{"colour": 1}', "--json"],
        lambda: strata.CannedResponse.from_file("balance.j2").render(std={"colour": 1}),
        files={"balance.j2": BALANCE},
        kind="unknown_field",
        exit=2,
    ),
]


# ---------------------------------------------------------------------------------------------
# Running both sides.


def make_project(root: Path, files: Mapping[str, str]) -> None:
    for name, text in {**BASE, **files}.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def run_cli(binary: Path, case: Case, root: Path, env: Mapping[str, str]) -> Outcome:
    ran = subprocess.run(
        [str(binary), "--color", "never", *case.cli],
        cwd=root,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    detail = f"exit {ran.returncode}\nstdout:\n{ran.stdout}\nstderr:\n{ran.stderr}"
    if case.exit is not None:
        assert ran.returncode == case.exit, detail
    try:
        printed = json.loads(ran.stdout)
        if case.events:
            json.loads(ran.stderr.strip().splitlines()[-1])  # the `finished` event
    except (json.JSONDecodeError, IndexError):
        pytest.fail(f"`strata {' '.join(case.cli)}` printed no JSON: {detail}")
    if isinstance(printed, dict) and printed.get("ok") is False:
        assert ran.returncode == 2, detail
        return Outcome(ok=False, error=common_error(printed["error"]))
    assert ran.returncode in (0, 1, 3) or case.exit is not None, detail
    return Outcome(ok=True, value=case.cli_value(printed))


def run_py(case: Case) -> Outcome:
    try:
        value = case.py()
    except strata.StrataError as e:
        fields = e.to_dict()
        return Outcome(ok=False, error=common_error(fields), cls=type(e).__name__)
    return Outcome(ok=True, value=case.py_value(value))


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The environment of both sides: the process environment without `STRATA_*` variables
    (which would change the settings) and without the variables the cases read."""
    for name in list(os.environ):
        if name.startswith("STRATA_") or name in ("GREETING", "API_TOKEN"):
            monkeypatch.delenv(name)
    return dict(os.environ)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_cli_and_python_agree(
    case: Case,
    strata_bin: Path,
    tmp_path: Path,
    clean_env: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    make_project(tmp_path, case.files)
    for name, value in case.env.items():
        monkeypatch.setenv(name, value)
    env = {**clean_env, **case.env}
    cli = run_cli(strata_bin, case, tmp_path, env)
    monkeypatch.chdir(tmp_path)
    py = run_py(case)

    if case.kind is None and case.exit in (0, 1, 3):
        assert cli.ok, f"the CLI refused what should run: {cli.error}"
    if case.kind is not None:
        assert not cli.ok and cli.error is not None, f"the CLI ran: {cli.value}"
        assert cli.error["kind"] == case.kind, cli.error
    if not py.ok:
        assert py.error is not None
        if case.cls is not None:
            assert py.cls == case.cls.__name__, py.error
        if case.kind is not None:
            assert py.error["kind"] == case.kind, py.error
        if case.message is not None:
            assert py.error["message"] == case.message, py.error

    if case.protocol:
        # `plan resolve`'s reply has SPEC §5.7's error shape: the hint follows the message.
        assert not cli.ok and not py.ok and cli.error is not None and py.error is not None
        hint = py.error.get("hint")
        expected = py.error["message"] + (f"; {hint}" if hint else "")
        assert cli.error["kind"] == py.error["kind"]
        assert cli.error["message"] == expected
        assert cli.error.get("path") == py.error.get("path")
        assert cli.error.get("span") == py.error.get("span")
        return

    if case.message is not None and not cli.ok:
        assert cli.error is not None and cli.error["message"] == case.message, cli.error
    if not case.same_hint:
        for side in (cli, py):
            assert side.error is not None and side.error.pop("hint")
    assert py.comparable() == cli.comparable()


# A rendered document as a Python object (`rendered_to_py`, built without a JSON value)
# against the same document rendered by the binary (written through the JSON value): every
# shape a rendered node takes, whole values of every type, text, escapes, nesting.
RENDER_DOC: dict[str, Any] = {
    "constant": {"n": 1, "f": 1.5, "b": True, "z": None, "list": [1, "two", [3]]},
    "whole": ["{n}", "{f}", "{b}", "{z}", "{obj}", "{arr}", "${state.deep}", "{big}"],
    "text": "n={n} f={f} b={b} z={z} obj={obj} arr={arr} env=${WHO:-nobody} ${state.deep.k}",
    "escapes": ["$${NOT}", "{{kept}}", "$$"],
    "nested": {"a": {"b": ["{n}", {"c": "${state.deep}"}, "x ${WHO}"]}, "empty": {}, "none": []},
    "env": "${WHO}",
}
RENDER_PARAMS: dict[str, Any] = {
    "n": 7,
    "f": 2.5,
    "b": False,
    "z": None,
    "obj": {"k": [1, 2], "s": "v"},
    "arr": ["a", {"b": 1}],
    "big": 18446744073709551617,
}
RENDER_CONTEXT: dict[str, Any] = {"state": {"deep": {"k": "v", "list": [1, 2.0, None]}}}


def test_a_rendered_document_is_the_same_object_in_python_and_in_the_binary(
    strata_bin: Path, tmp_path: Path
) -> None:
    doc = tmp_path / "doc.json"
    doc.write_text(json.dumps(RENDER_DOC))
    out = subprocess.run(
        [
            str(strata_bin),
            "render",
            str(doc),
            "--clean-env",
            "--env",
            "WHO=ann",
            "--params-json",
            json.dumps(RENDER_PARAMS),
            "--context",
            json.dumps(RENDER_CONTEXT),
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    from_binary = json.loads(out.stdout)
    from_python = strata.render(
        RENDER_DOC, env={"WHO": "ann"}, params=RENDER_PARAMS, context=RENDER_CONTEXT
    )
    assert from_python == from_binary
    # Types survive as the binary's JSON says, not only values that compare equal.
    assert json.dumps(from_python, sort_keys=True) == json.dumps(from_binary, sort_keys=True)
    assert from_python["whole"][7] == 18446744073709551617
