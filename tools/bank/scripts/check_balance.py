"""The balance of a demo account; parameters arrive as JSON on stdin."""
import json
import sys

ACCOUNTS = {
    "1234": ("Checking", 5432.10),
    "5678": ("Savings", 12000.00),
    "0000": ("Checking", -20.50),
}


def money(amount):
    sign = "-" if amount < 0 else ""
    return f"{sign}${abs(amount):,.2f}"


last_four = json.load(sys.stdin)["account_last_four"]
if last_four not in ACCOUNTS:
    sys.exit(f"no account ends in {last_four}")
kind, balance = ACCOUNTS[last_four]
print(
    json.dumps(
        {
            "data": {"balance": balance, "type": kind},
            "canned_response_fields": {
                "account.balance": money(balance),
                "account.type": kind,
                "account.last_four": last_four,
                "account.overdraft": balance < 0,
                "account.overdraft_amount": money(max(-balance, 0)),
            },
        }
    )
)
