"""Answers seed 001's four tools from fixed data, after `ms` milliseconds."""
import json
import sys
import time

params = json.load(sys.stdin)
time.sleep(params["ms"] / 1000)
op, given = params["op"], params["input"]
if op == "fetch_contacts":
    out = {"data": [{"name": "John Smith", "email": "john.smith@example.com"}]}
elif op == "fetch_emails":
    out = {"data": [{"from": given["from"], "subject": "Q1 report",
                     "body": "The Q1 report is ready. Revenue grew 12%."}]}
elif op == "summarize":
    first = given["text"].split(". ")[0]
    out = {"summary": first.rstrip(".") + "."}
else:
    out = {"sent": True, "to": given["to"], "body": given["body"]}
print(json.dumps(out))
