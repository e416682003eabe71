"""From Python: render a prompt template with strata against Python's jinja2.

The template and the feed are those of strata-bench's `prompt_render` (ten `{{ var }}` in a
prompt of typical shape, ten string variables). strata renders it through a
`strata.PromptManager` built from a dict (the lookup of `Search`, the feed converted from
Python, the render, the text back as a `str`); jinja2 renders the same template compiled once
(`Environment().from_string`, `Template.render(**feed)`). Both must
give the same text, checked before timing. Without jinja2 installed the comparison is skipped
with a notice.

    python crates/strata-py/bench/prompt.py [--quick]
    python crates/strata-py/bench/prompt.py --side strata --iters 1000   # no timing

prints one line in strata-bench's form (ratio = strata's time / jinja2's; below 1 means
strata took less time).
"""

from __future__ import annotations

import argparse
import importlib
from typing import Any, Callable, Dict, List, Optional

from timing import header, line, load, mode, profiled, sample

import strata

TEMPLATE = """You are {{ persona }}, helping {{ user_name }} ({{ user_role }}).
Task: {{ task }}
Context: {{ context }}
Last action: {{ last_action }} -> {{ action_result }}
Memory: {{ memory }}
Constraints: {{ constraints }}
User: {{ user_input }}
"""

FEED: Dict[str, Any] = {
    "persona": "a careful research assistant",
    "user_name": "Ada",
    "user_role": "engineer",
    "task": "summarise the search results",
    "context": "https://example.org/strata",
    "last_action": "Search",
    "action_result": "3 results: docs/prompts.md, README.md, docs/graphs.md",
    "memory": "the user prefers short answers",
    "constraints": "cite the documents you use",
    "user_input": "How does strata choose a prompt?",
}


def jinja2_side() -> Optional[Callable[[], str]]:
    """jinja2 rendering the template compiled once, or ``None`` when jinja2 is not installed."""
    try:
        jinja2: Any = importlib.import_module("jinja2")
    except ImportError:
        return None
    template = jinja2.Environment().from_string(TEMPLATE)
    return lambda: str(template.render(**FEED))


def main(argv: Optional[List[str]] = None) -> None:
    """Checks both sides agree, then times them."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="7 samples of ~15 ms each")
    parser.add_argument(
        "--iters",
        type=int,
        metavar="N",
        help="no timing: make exactly N calls of --side (for a profiler's counts)",
    )
    parser.add_argument("--side", choices=["strata", "jinja2"], default="strata")
    args = parser.parse_args(argv)

    prompts = strata.PromptManager({"main": {"Search": TEMPLATE}})
    sides: Dict[str, Callable[[], str]] = {"strata": lambda: prompts.render("Search", feed=FEED)}
    peer = jinja2_side()
    if peer is None:
        print("# jinja2 is not installed (pip install jinja2): py_prompt_render skipped")
        return
    sides["jinja2"] = peer
    assert sides["strata"]() == sides["jinja2"](), (sides["strata"](), sides["jinja2"]())
    if profiled(sides, args.side, args.iters):
        return

    m = mode(args.quick)
    print(header(m))
    print(load("start"))
    peer_ns = sample(sides["jinja2"], m)
    strata_ns = sample(sides["strata"], m)
    print(line("py_prompt_render", strata_ns, "jinja2", peer_ns))
    print(load("end"))


if __name__ == "__main__":
    main()
