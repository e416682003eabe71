"""Sleeps `ms` milliseconds, then prints {"step", "input", "slept_ms"}."""
import json
import sys
import time

params = json.load(sys.stdin)
time.sleep(params["ms"] / 1000)
print(json.dumps({"step": params["step"], "input": params.get("input"), "slept_ms": params["ms"]}))
