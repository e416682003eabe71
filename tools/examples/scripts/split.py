"""Prints the words of the `text` parameter as a JSON list; parameters arrive on stdin."""
import json
import sys

params = json.load(sys.stdin)
print(json.dumps(params["text"].split()))
