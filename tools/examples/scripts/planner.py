"""Picks the next action of the agent loop: BrowseLink, Search, then Answer.

Parameters arrive as JSON on stdin; the plan is printed as JSON: the action, its argument,
what it observed, the last anchor action after it, and the length of the prompt it read.
"""
import json
import sys

ANCHORS = ("BrowseLink", "Search")
PLAN = [
    ("BrowseLink", "https://example.org/strata",
     "strata renders layered configs and prompt templates."),
    ("Search", "strata prompt fallback",
     "1. docs/prompts.md  2. README.md  3. docs/graphs.md"),
    ("Answer", "strata picks the prompt from the last anchor action.", ""),
]

params = json.load(sys.stdin)
action, argument, observation = PLAN[min(params["turn"], len(PLAN) - 1)]
last = params.get("last_anchor_action_type")
print(json.dumps({
    "action": action,
    "argument": argument,
    "observation": observation,
    "anchor": action if action in ANCHORS else last,
    "prompt_chars": len(params.get("prompt") or ""),
}))
