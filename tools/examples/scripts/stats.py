"""Summary statistics of the `numbers` parameter; parameters arrive as JSON on stdin."""
import json
import sys

params = json.load(sys.stdin)
numbers = params["numbers"]
print(
    json.dumps(
        {
            "label": params["label"],
            "count": len(numbers),
            "sum": sum(numbers),
            "mean": sum(numbers) / len(numbers),
            "min": min(numbers),
            "max": max(numbers),
        }
    )
)
