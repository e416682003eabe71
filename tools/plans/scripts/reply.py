"""Prints {"message": …, "details": …} exactly as received."""
import json
import sys

params = json.load(sys.stdin)
print(json.dumps({"message": params["message"], "details": params.get("details")}))
