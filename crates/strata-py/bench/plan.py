"""From Python: resolve a typical plan step's arguments with strata against the seeds' resolvers.

What an orchestrator does between tool calls: given the results so far, the arguments of the
next step. The typical step is strata-bench's `plan_resolve_step` (11 leaves, 6 references of
both kinds, whole and embedded), in two spellings:

* `{{id.result.path}}` references, against seed 001's `PlaceholderResolver.resolve`, ported
  from its TypeScript as written: the arguments serialised (`JSON.stringify`), every `{{…}}`
  but `PLACEHOLDER_` replaced in the text by a regex (strings as they are, anything else as
  JSON), the text parsed back;
* `$stepN.path` / `{$stepN.path}` references, against seed 000's executor, as written:
  `_resolve_parameters` over the top-level parameters, `_resolve_template_string` (its regex,
  `str()` of each value), `_resolve_reference` walking dicts and lists by `.`.

strata's side is `strata.Plan.resolve(results)` on the plan read once: the results converted
from Python, every step assessed (the producers completed, the typical step ready), its
arguments resolved, the reply built as Python objects. A third line reads the plan on every
call too (`strata.Plan(document).resolve(results)`). Each peer's output is checked against
strata's before timing: seed 000's is equal; seed 001's is equal but for the whole-value
list, which it returns as its JSON text (it cannot return anything but a string there).

    python crates/strata-py/bench/plan.py [--quick]
    python crates/strata-py/bench/plan.py --side strata --iters 1000   # no timing

prints one line per comparison in strata-bench's form (ratio = strata's time / the peer's;
below 1 means strata took less time).
"""

from __future__ import annotations

import argparse
import json
import logging
import re
from typing import Any, Callable, Dict, List, Optional

from timing import header, line, load, mode, profiled, sample

import strata

logger = logging.getLogger(__name__)

# strata-bench's typical step (`typical_plan`): 11 leaves, 6 references.
PLAN_001: List[Dict[str, Any]] = [
    {"id": "find", "tool": "t", "arguments": {}},
    {"id": "boss", "tool": "t", "arguments": {}},
    {"id": "stats", "tool": "t", "arguments": {}},
    {
        "id": "send",
        "tool": "t",
        "arguments": {
            "input": {
                "to": "{{find.result.data[0].email}}",
                "cc": "{{boss.result.email}}",
                "subject": "Re: {{find.result.data[0].subject}}",
                "body": "Hi {{find.result.data[0].name}}, the total is {{stats.result.total}}.",
                "items": "{{stats.result.items}}",
                "count": 3,
                "flags": {"urgent": True, "tags": ["q1", "report"]},
                "priority": "high",
                "attachments": [],
            }
        },
    },
]
RESULTS_001: Dict[str, Any] = {
    "find": {"data": [{"email": "sarah@company.com", "name": "Sarah", "subject": "Q1 Report", "id": "thread_abc123"}]},
    "boss": {"email": "boss@company.com"},
    "stats": {"total": 1234.5, "items": [1, 2, 3]},
}

# The same shape in seed 000's spelling: references in top-level parameters only (its
# resolver looks no deeper), 11 leaves, 6 references.
PLAN_000: List[Dict[str, Any]] = [
    {"tool": "folder_find_duplicates", "parameters": {"folder_path": None}},
    {"tool": "folder_info", "parameters": {}},
    {
        "tool": "reply_to_user",
        "parameters": {
            "message": "Found {$step1.total_duplicate_groups} group(s), wasting {$step1.wasted_space_mb} MB.",
            "details": "$step1.duplicates",
            "folder": "$step2.path",
            "summary": "Largest: {$step1.largest.name} ({$step1.largest.size} bytes)",
            "title": "Duplicates report",
            "count": 3,
            "flags": {"urgent": True, "tags": ["q1", "report"]},
            "priority": "high",
            "attachments": [],
        },
    },
]
RESULTS_000: Dict[str, Any] = {
    "step1": {
        "duplicates": [
            {"hash": "9f86d0", "files": ["a/report.pdf", "b/report (1).pdf"]},
            {"hash": "60303a", "files": ["a/photo.jpg", "b/photo.jpg"]},
        ],
        "total_duplicate_groups": 2,
        "wasted_space_mb": 0.38,
        "largest": {"name": "report.pdf", "size": 199229},
    },
    "step2": {"path": "downloads/ann"},
}

_UNDEFINED = object()
# The resolver's regex literals (compiled once, as a JavaScript engine compiles them).
PLACEHOLDER = re.compile(r"\{\{(?!PLACEHOLDER_)([^}]+)\}\}")
ARRAY_NOTATION = re.compile(r"^(\w+)\[(\d+)\]$")


class PlaceholderResolver:
    """Seed 001's `src/services/PlaceholderResolver.ts`, line for line in Python
    (`JSON.stringify` is compact JSON without ASCII escapes; `undefined` is a sentinel)."""

    def resolve(self, obj: Any, executed_steps: List[Dict[str, Any]]) -> Any:
        """Resolve all placeholders in an object."""
        text = json.dumps(obj, separators=(",", ":"), ensure_ascii=False)

        # Find all {{...}} patterns (but not PLACEHOLDER_)
        def replace(match: "re.Match[str]") -> str:
            value = self.resolve_path(match.group(1), executed_steps)
            # Handle different value types
            if isinstance(value, str):
                return value
            # For objects/arrays, stringify (but will be re-parsed)
            return json.dumps(value, separators=(",", ":"), ensure_ascii=False)

        resolved = PLACEHOLDER.sub(replace, text)
        return json.loads(resolved)

    def resolve_path(self, path: str, executed_steps: List[Dict[str, Any]]) -> Any:
        """Resolve a single path like "step_1.result.data[0].email"."""
        parts = path.split(".")
        step_id = parts[0]
        # Find the step result
        step = next((s for s in executed_steps if s["stepId"] == step_id), None)
        if step is None:
            raise ValueError(f"Step not found: {step_id}")
        if step["status"] != "completed":
            raise ValueError(f"Step {step_id} not completed yet")
        # Navigate the path starting from step object
        value: Any = step
        for part in parts[1:]:  # Skip stepId
            value = self.access_property(value, part)
            if value is _UNDEFINED:
                raise ValueError(f"Path not found: {path}")
        return value

    def access_property(self, obj: Any, key: str) -> Any:
        """Access a property, handling array notation."""
        # Handle array notation: data[0], items[2]
        array_match = ARRAY_NOTATION.match(key)
        if array_match:
            prop, index_str = array_match.group(1), array_match.group(2)
            index = int(index_str)
            items = obj.get(prop, _UNDEFINED) if isinstance(obj, dict) else _UNDEFINED
            return items[index] if isinstance(items, list) and index < len(items) else _UNDEFINED
        return obj.get(key, _UNDEFINED) if isinstance(obj, dict) else _UNDEFINED


class Executor:
    """Seed 000's `src/orchestrator/executor.py` resolution, as written there;
    `_resolve_reference` as the seed describes it (the step's result from
    `state["step_results"][step_id]`, nested fields by splitting on ".", dicts and lists)."""

    def _resolve_parameters(self, parameters: Dict[str, Any], state: Dict[str, Any]) -> Dict[str, Any]:
        resolved = {}
        for key, value in parameters.items():
            if isinstance(value, str):
                # Check for direct reference: "$step1.field"
                if value.startswith("$step"):
                    resolved[key] = self._resolve_reference(value, state)
                # Check for template string: "Found {$step1.count} items"
                elif "{$step" in value:
                    resolved[key] = self._resolve_template_string(value, state)
                else:
                    resolved[key] = value
            else:
                resolved[key] = value
        return resolved

    def _resolve_template_string(self, template: str, state: Dict[str, Any]) -> str:
        """
        Resolve template string with embedded references like "Found {$step1.count} items".

        Uses regex to find all {$step...} patterns and substitutes them with actual values.
        """
        import re

        # Find all {$stepN.field} patterns
        pattern = r"\{\$step(\d+)\.([^}]+)\}"

        def replace_placeholder(match: "re.Match[str]") -> str:
            step_id = int(match.group(1))
            field_path = match.group(2)

            # Build full reference
            reference = f"$step{step_id}.{field_path}"
            resolved_value = self._resolve_reference(reference, state)

            # Convert to string for template substitution
            if resolved_value is None:
                logger.warning(f"Template placeholder {match.group(0)} resolved to None")
                return match.group(0)  # Keep original if resolution fails
            else:
                return str(resolved_value)

        # Replace all placeholders
        resolved = re.sub(pattern, replace_placeholder, template)

        # Log if any placeholders remain unresolved
        remaining = re.findall(r"\{\$step\d+\.[^}]+\}", resolved)
        if remaining:
            logger.warning(f"Template has unresolved placeholders: {remaining}")

        return resolved

    def _resolve_reference(self, reference: str, state: Dict[str, Any]) -> Any:
        step_part, _, field_path = reference[len("$step") :].partition(".")
        value = state["step_results"].get(int(step_part))
        if not field_path:
            return value
        for part in field_path.split("."):
            if isinstance(value, dict):
                value = value.get(part)
            elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
                value = value[int(part)]
            else:
                return None
        return value


def ready_arguments(reply: Any, step: int) -> Any:
    """The resolved arguments of step `step` of a resolution, which must be ready."""
    assert reply["steps"][step]["state"] == "ready", reply["steps"][step]
    return reply["steps"][step]["arguments"]


def main(argv: Optional[List[str]] = None) -> None:
    """Checks every side against strata, then times them."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="7 samples of ~15 ms each")
    parser.add_argument(
        "--iters",
        type=int,
        metavar="N",
        help="no timing: make exactly N calls of --side (for a profiler's counts)",
    )
    parser.add_argument(
        "--side",
        choices=["strata", "strata_load", "seed001", "strata_dollar", "seed000"],
        default="strata",
    )
    args = parser.parse_args(argv)

    plan_001 = strata.Plan(PLAN_001)
    plan_000 = strata.Plan(PLAN_000)
    executed_steps = [{"stepId": k, "status": "completed", "result": v} for k, v in RESULTS_001.items()]
    state = {"step_results": {int(k[len("step") :]): v for k, v in RESULTS_000.items()}}
    resolver = PlaceholderResolver()
    executor = Executor()
    step_001 = PLAN_001[3]["arguments"]
    step_000 = PLAN_000[2]["parameters"]
    sides: Dict[str, Callable[[], Any]] = {
        "strata": lambda: plan_001.resolve(RESULTS_001),
        "strata_load": lambda: strata.Plan(PLAN_001).resolve(RESULTS_001),
        "seed001": lambda: resolver.resolve(step_001, executed_steps),
        "strata_dollar": lambda: plan_000.resolve(RESULTS_000),
        "seed000": lambda: executor._resolve_parameters(step_000, state),
    }

    expected_001 = ready_arguments(sides["strata"](), 3)
    assert ready_arguments(sides["strata_load"](), 3) == expected_001
    # Seed 001 returns the whole-value list as its JSON text; everything else agrees.
    as_seed_001 = {"input": {**expected_001["input"], "items": "[1,2,3]"}}
    assert sides["seed001"]() == as_seed_001, (sides["seed001"](), as_seed_001)
    expected_000 = ready_arguments(sides["strata_dollar"](), 2)
    assert sides["seed000"]() == expected_000, (sides["seed000"](), expected_000)
    if profiled(sides, args.side, args.iters):
        return

    m = mode(args.quick)
    print(header(m))
    print(load("start"))
    seed001_ns = sample(sides["seed001"], m)
    strata_ns = sample(sides["strata"], m)
    load_ns = sample(sides["strata_load"], m)
    seed000_ns = sample(sides["seed000"], m)
    dollar_ns = sample(sides["strata_dollar"], m)
    print(line("py_plan_resolve_step", strata_ns, "seed001_serialise_parse", seed001_ns))
    print(line("py_plan_load_resolve_step", load_ns, "seed001_serialise_parse", seed001_ns))
    print(line("py_plan_resolve_step_dollar", dollar_ns, "seed000_regex", seed000_ns))
    print(load("end"))


if __name__ == "__main__":
    main()
