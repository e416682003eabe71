"""Times Python's jinja2 on the prompt benchmark's template and feed.

Reads {"template": str, "feed": {...}, "iters": n, "expect": str} as JSON on stdin, renders
the template (compiled once) `iters` times and prints the median nanoseconds per render of
seven samples. Exits 1 when the output differs from `expect`.
"""
import json
import sys
import time

import jinja2

req = json.load(sys.stdin)
env = jinja2.Environment(autoescape=False)
template = env.from_string(req["template"])
feed = req["feed"]
if template.render(**feed) != req["expect"]:
    sys.exit(1)
iters = req["iters"]
samples = []
for _ in range(7):
    start = time.perf_counter_ns()
    for _ in range(iters):
        template.render(**feed)
    samples.append((time.perf_counter_ns() - start) / iters)
samples.sort()
print(samples[len(samples) // 2])
