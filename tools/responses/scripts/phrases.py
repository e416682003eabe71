"""Fills a `generative.*` field: reads {template, field, context} on stdin, prints JSON."""
import json
import sys

request = json.load(sys.stdin)
name = request["context"]["std"].get("customer", {}).get("name", "there")
PHRASES = {
    "generative.greeting_phrase": "I hope you're having a great day",
    "generative.closing_remark": "Is there anything else I can help you with?",
    "generative.sign_off": f"Take care, {name}",
}
field = request["field"]
if field not in PHRASES:
    sys.exit(f"no phrase for `{field}`")
print(json.dumps(PHRASES[field]))
