"""Counts the words and characters of the `text` parameter; parameters arrive as JSON on stdin."""
import json
import sys

text = json.load(sys.stdin)["text"]
print(json.dumps({"words": len(text.split()), "characters": len(text)}, separators=(",", ":")))
