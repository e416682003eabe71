"""Plain Python doing what strata's four layers do, the way the seeds' Python executors do it.

One regular expression per layer (the regexes of seed 003), applied in the documented order
over every string leaf, whole-value placeholders keeping their type, `{param}` repeated until
stable. The peer of the Python benchmarks (`render.py`) and of `strata render --batch`
(`batch.py`).
"""

from __future__ import annotations

import re
from typing import Any, Callable, Dict

# The seed's regexes, one per layer (seed 003); layer C's is kept from matching env names.
INPUT_RE = re.compile(r"\{input:(\w+)(\?|[:|][^}]*)?\}")
CONTEXT_RE = re.compile(r"\$\{([a-z_][^}]*)\}")
ENV_RE = re.compile(r"\$\{([A-Z_][A-Z0-9_]*)(?::-([^}]*))?\}")
PARAM_RE = re.compile(r"\{(\w+)\}")


def text(value: Any) -> str:
    """A value as layer text: null empty, bools lower-case, containers compact JSON."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def substitute(value: Any, pattern: "re.Pattern[str]", lookup: Callable[["re.Match[str]"], Any]) -> Any:
    """Replaces every match in a string leaf; a leaf that is one whole match keeps the type."""
    if isinstance(value, dict):
        return {k: substitute(v, pattern, lookup) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, pattern, lookup) for v in value]
    if not isinstance(value, str):
        return value
    whole = pattern.fullmatch(value)
    if whole is not None:
        return lookup(whole)
    return pattern.sub(lambda m: text(lookup(m)), value)


def resolve_path(context: Dict[str, Any], path: str) -> Any:
    """Walks a dotted path through nested dicts; missing is None."""
    node: Any = context
    for key in path.strip().split("."):
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return node


def python_render(
    config: Dict[str, Any],
    env: Dict[str, str],
    params: Dict[str, Any],
    context: Dict[str, Any],
    inputs: Dict[str, Any],
) -> Any:
    """The four layers in order, the way the seeds' executors do it."""

    def input_value(m: "re.Match[str]") -> Any:
        key, rest = m.group(1), m.group(2)
        if key in inputs:
            return inputs[key]
        if rest == "?":
            return ""
        return rest[1:] if rest else m.group(0)

    def env_value(m: "re.Match[str]") -> Any:
        value = env.get(m.group(1), "")
        default = m.group(2)
        return default if default is not None and value == "" else value

    out = substitute(config, INPUT_RE, input_value)
    out = substitute(out, CONTEXT_RE, lambda m: resolve_path(context, m.group(1)))
    out = substitute(out, ENV_RE, env_value)
    for _ in range(3):
        names = {**params, **{k: v for k, v in out.items()}}
        after = substitute(out, PARAM_RE, lambda m: names.get(m.group(1), m.group(0)))
        if after == out:
            break
        out = after
    return out
