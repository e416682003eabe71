"""Greets `name`; parameters arrive as JSON on stdin, the result is printed as JSON."""
import json
import sys

params = json.load(sys.stdin)
count = params["count"] + 1
print(json.dumps({"greeting": f"Hello, {params['name']}!", "count": count}))
