"""A plain-Python `strata render --batch`: JSON Lines requests on stdin, one reply per line.

Each request is `{"id"?, "template", "env"?, "params"?, "context"?, "inputs"?}`; its reply is
`{"id"?, "ok": true, "value", "warnings": []}`, the value rendered by `reference.python_render`.
No error handling, no limits, output written at the end: the cheapest Python can serve the
protocol, the peer of strata-bench's `batch_cli` workload.

    python3 crates/strata-py/bench/batch.py < requests.jsonl
"""

from __future__ import annotations

import json
import sys

from reference import python_render


def main() -> None:
    """Answers every line of stdin."""
    replies = []
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        value = python_render(
            request["template"],
            request.get("env", {}),
            request.get("params", {}),
            request.get("context", {}),
            request.get("inputs", {}),
        )
        reply = {"ok": True, "value": value, "warnings": []}
        if "id" in request:
            reply = {"id": request["id"], **reply}
        replies.append(json.dumps(reply, separators=(",", ":")))
    sys.stdout.write("\n".join(replies) + "\n")


if __name__ == "__main__":
    main()
