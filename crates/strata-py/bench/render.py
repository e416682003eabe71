"""From Python: render a typical tool config with strata against plain Python doing the same.

The config is the one of strata-bench's `config` workload (23 string leaves, 10 placeholders
across the four layers). The peer is what the seeds' Python executors do: one regular
expression per layer (the regexes of seed 003), applied in the documented order over every
string leaf, whole-value placeholders keeping their type, `{param}` repeated until stable.
Both sides get the same arguments and must return the same value (checked before timing).

    python crates/strata-py/bench/render.py [--quick]
    python crates/strata-py/bench/render.py --side compiled --iters 1000   # no timing

prints one line per comparison in strata-bench's form (ratio = strata's time / the peer's;
below 1 means strata took less time).
"""

from __future__ import annotations

import argparse
from typing import Any, Callable, Dict, List, Optional

from reference import python_render
from timing import header, line, load, mode, profiled, sample

import strata

CONFIG: Dict[str, Any] = {
    "tool_id": "python/lint",
    "executor": "subprocess",
    "version": "1.4.2",
    "description": "Lints Python sources with ruff",
    "python": "${PYTHON:-python3}",
    "workdir": "{project_path}/src",
    "command": "{python}",
    "args": [
        "-m", "ruff", "check", "{input:target}",
        "--config", "{tool_dir}/ruff.toml", "--output-format", "json",
    ],
    "cwd": "${state.workspace}",
    "timeout": "${TIMEOUT:-30}",
    "env": {
        "HOME": "${HOME}",
        "RUFF_CACHE_DIR": "${state.cache_dir}/ruff",
        "LANG": "C.UTF-8",
    },
    "input_data": "{input:stdin?}",
    "retries": 2,
    "capture": True,
    "labels": {"team": "platform", "tier": "ci"},
}

ENV = {"HOME": "/home/ada", "PYTHON": "/usr/bin/python3"}
PARAMS = {
    "tool_path": "/srv/app/tools/python/lint.yaml",
    "tool_dir": "/srv/app/tools/python",
    "project_path": "/srv/app",
}
CONTEXT = {"state": {"workspace": "/srv/app", "cache_dir": "/tmp/cache"}}
INPUTS = {"target": "src/", "stdin": ""}

def main(argv: Optional[List[str]] = None) -> None:
    """Checks both sides agree, then times them."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="7 samples of ~15 ms each")
    parser.add_argument(
        "--iters",
        type=int,
        metavar="N",
        help="no timing: make exactly N calls of --side (for a profiler's counts)",
    )
    parser.add_argument("--side", choices=["compiled", "once", "python_regex"], default="compiled")
    args = parser.parse_args(argv)

    template = strata.Template(CONFIG)
    kwargs: Dict[str, Any] = {"env": ENV, "params": PARAMS, "context": CONTEXT, "inputs": INPUTS}
    sides: Dict[str, Callable[[], Any]] = {
        "compiled": lambda: template.render(**kwargs),
        "once": lambda: strata.render(CONFIG, **kwargs),
        "python_regex": lambda: python_render(CONFIG, ENV, PARAMS, CONTEXT, INPUTS),
    }
    expected = sides["python_regex"]()
    assert sides["compiled"]() == expected, (sides["compiled"](), expected)
    assert sides["once"]() == expected
    if profiled(sides, args.side, args.iters):
        return

    m = mode(args.quick)
    print(header(m))
    print(load("start"))
    peer_ns = sample(sides["python_regex"], m)
    compiled_ns = sample(sides["compiled"], m)
    once_ns = sample(sides["once"], m)
    print(line("py_config_render", compiled_ns, "python_regex", peer_ns))
    print(line("py_config_compile_render", once_ns, "python_regex", peer_ns))
    print(load("end"))

if __name__ == "__main__":
    main()
