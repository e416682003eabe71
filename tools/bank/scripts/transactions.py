"""Recent transactions of a demo account; parameters arrive as JSON on stdin."""
import json
import sys

HISTORY = {
    "1234": [
        ("2024-01-15", "Coffee Shop", -4.50),
        ("2024-01-14", "Salary Deposit", 3000.00),
    ],
    "5678": [],
}


def money(amount):
    sign = "-" if amount < 0 else "+"
    return f"{sign}${abs(amount):,.2f}"


last_four = json.load(sys.stdin)["account_last_four"]
rows = HISTORY.get(last_four, [])
print(
    json.dumps(
        {
            "data": {
                "count": len(rows),
                "transactions": [{"date": d, "description": t, "amount": a} for d, t, a in rows],
            },
            "canned_response_fields": {
                "transactions": [
                    {"date": d, "description": t, "amount": money(a)} for d, t, a in rows
                ]
            },
        }
    )
)
