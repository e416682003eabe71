"""strata.CannedResponse: fields found statically, filled from std, tool results and a Python
callable as the generator, then rendered; values are data; errors name every missing field."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest

import strata

BANK = (
    "Your {{account.type}} account (ending in {{account.last_four}}) has a current balance of "
    "{{account.balance}}."
)

# Seed 004's check_balance result.
CHECK_BALANCE = {
    "data": {"balance": 5432.10, "type": "Checking"},
    "canned_response_fields": {
        "account.balance": "$5,432.10",
        "account.type": "Checking",
        "account.last_four": "1234",
    },
}

MIXED = (
    "Hi {{std.customer.name}}, {{generative.greeting_phrase}}.\n"
    "Your {{account.type}} balance is {{account.balance}}.\n"
    "{{generative.closing_remark}}"
)


class Phrases:
    """A deterministic generator that records its calls."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, dict[str, Any]]] = []

    def __call__(self, template: str, field: str, context: dict[str, Any]) -> Any:
        self.calls.append((template, field, context))
        name = context["std"].get("customer", {}).get("name", "you")
        if field == "generative.greeting_phrase":
            return f"I hope you're having a great day, {name}"
        return "Is there anything else I can help you with?"


def test_the_bank_balance_is_filled_from_the_tool_fields() -> None:
    response = strata.CannedResponse(BANK)
    assert response.fields == ["account.type", "account.last_four", "account.balance"]
    assert response.render(tools=[CHECK_BALANCE]) == (
        "Your Checking account (ending in 1234) has a current balance of $5,432.10."
    )
    assert response.source == BANK
    assert response.file is None
    assert repr(response) == "<strata.CannedResponse fields=['account.type', 'account.last_four', 'account.balance']>"


def test_fields_are_found_through_conditions_and_loops() -> None:
    response = strata.CannedResponse(
        "Balance {{account.balance}}.\n{% if account.overdraft %}Overdrawn by {{account.overdraft_amount}}.{% endif %}"
        "{% for t in transactions %}\n- {{t.date}}: {{t.amount}}{% endfor %}{% set n = 1 %}{{ n }}{{ range(1)|length }}"
    )
    assert response.fields == ["account.balance", "account.overdraft", "account.overdraft_amount", "transactions"]
    fields = {
        "account.balance": "-$10",
        "account": {"overdraft": True, "overdraft_amount": "$10"},
        "transactions": [{"date": "2024-01-15", "amount": "-$4.50"}, {"date": "2024-01-14", "amount": "+$3,000.00"}],
    }
    assert response.render(tools=[{"canned_response_fields": fields}]) == (
        "Balance -$10.\nOverdrawn by $10.\n- 2024-01-15: -$4.50\n- 2024-01-14: +$3,000.0011"
    )


def test_standard_fields_come_from_std() -> None:
    response = strata.CannedResponse(
        "{{std.customer.name}} / {{std.agent.name}} / {{std.variables.tier}} / "
        "{% for p in std.missing_params %}{{p}};{% endfor %}"
    )
    std = {
        "customer": {"name": "Ann"},
        "agent": {"name": "Ada"},
        "variables": {"tier": "gold"},
        "missing_params": ["account_number", "pin"],
    }
    assert response.render(std=std) == "Ann / Ada / gold / account_number;pin;"
    assert strata.CannedResponse("{{ std.customer }}").render(std={"customer": {"name": "Ann", "id": 7}}) == (
        '{"name":"Ann","id":7}'
    )


def test_a_field_is_a_flat_key_first_then_a_nested_path_and_the_latest_result_wins() -> None:
    response = strata.CannedResponse("{{account.balance}} {{account.type}} {{account.last_four}}")
    tools = [
        {"canned_response_fields": {"account.balance": "old", "account.last_four": "1111"}},
        {"data": "no fields here"},
        "a text result",
        {"canned_response_fields": {"account": {"balance": "new", "type": "Savings"}}},
        {"canned_response_fields": {"account.type": "flat", "account": {"type": "nested"}}},
    ]
    assert response.render(tools=tools) == "new flat 1111"
    assert response.respond(tools=tools) == {
        "reply": "new flat 1111",
        "fields": [
            {"field": "account.balance", "source": "tool", "from": "tools[3]", "value": "new"},
            {"field": "account.type", "source": "tool", "from": "tools[4]", "value": "flat"},
            {"field": "account.last_four", "source": "tool", "from": "tools[0]", "value": "1111"},
        ],
    }
    assert response.render(tools=tuple(tools)) == "new flat 1111"


def test_std_wins_over_a_tool_and_a_tool_over_the_generator() -> None:
    response = strata.CannedResponse("{{std.customer.name}} {{generative.greeting_phrase}}")
    phrases = Phrases()
    tools = [{"canned_response_fields": {"std.customer.name": "Tool", "generative.greeting_phrase": "Hello"}}]
    assert response.render(std={"customer": {"name": "Ann"}}, tools=tools, generator=phrases) == "Ann Hello"
    assert response.render(tools=tools, generator=phrases) == "Tool Hello"
    assert phrases.calls == []


def test_a_python_callable_generates_the_generative_fields_after_every_other() -> None:
    response = strata.CannedResponse(MIXED)
    phrases = Phrases()
    reply = response.respond(std={"customer": {"name": "John"}}, tools=[CHECK_BALANCE], generator=phrases)
    assert reply == {
        "reply": (
            "Hi John, I hope you're having a great day, John.\n"
            "Your Checking balance is $5,432.10.\n"
            "Is there anything else I can help you with?"
        ),
        "fields": [
            {"field": "std.customer.name", "source": "std", "value": "John"},
            {
                "field": "generative.greeting_phrase",
                "source": "generative",
                "from": "Phrases",
                "value": "I hope you're having a great day, John",
            },
            {"field": "account.type", "source": "tool", "from": "tools[0]", "value": "Checking"},
            {"field": "account.balance", "source": "tool", "from": "tools[0]", "value": "$5,432.10"},
            {
                "field": "generative.closing_remark",
                "source": "generative",
                "from": "Phrases",
                "value": "Is there anything else I can help you with?",
            },
        ],
    }
    assert phrases.calls == [
        (
            MIXED,
            "generative.greeting_phrase",
            {
                "std": {"customer": {"name": "John"}},
                "fields": {"std.customer.name": "John", "account.type": "Checking", "account.balance": "$5,432.10"},
            },
        ),
        (
            MIXED,
            "generative.closing_remark",
            {
                "std": {"customer": {"name": "John"}},
                "fields": {
                    "std.customer.name": "John",
                    "account.type": "Checking",
                    "account.balance": "$5,432.10",
                    "generative.greeting_phrase": "I hope you're having a great day, John",
                },
            },
        ),
    ]


def test_the_generator_may_be_any_callable_and_return_any_plain_data() -> None:
    response = strata.CannedResponse("{{generative.items}} {{generative.n}} [{{generative.nothing}}]")
    values = {"generative.items": ["a", 1], "generative.n": 2**64 - 1, "generative.nothing": None}
    reply = response.respond(generator=lambda template, field, context: values[field])
    assert reply["reply"] == '["a",1] 18446744073709551615 []'
    lambda_name = "test_the_generator_may_be_any_callable_and_return_any_plain_data.<locals>.<lambda>"
    assert [f.get("from") for f in reply["fields"]] == [lambda_name] * 3

    class Bot:
        def phrase(self, template: str, field: str, context: dict[str, Any]) -> str:
            return field

    assert strata.CannedResponse("{{generative.x}}").respond(generator=Bot().phrase)["fields"][0]["from"] == (
        "test_the_generator_may_be_any_callable_and_return_any_plain_data.<locals>.Bot.phrase"
    )


def test_no_generation_is_spent_on_a_response_that_cannot_render() -> None:
    phrases = Phrases()
    with pytest.raises(strata.ResponseError) as info:
        strata.CannedResponse(MIXED).render(std={"customer": {"name": "John"}}, generator=phrases)
    assert info.value.kind == "missing_fields"
    assert phrases.calls == []


def test_every_missing_field_is_named_at_once_with_the_sources_tried() -> None:
    response = strata.CannedResponse("Hi {{std.customer.name}}\n{{account.type}} {{generative.closing}}")
    with pytest.raises(strata.ResponseError) as info:
        response.render(std={"agent": {"name": "Ada"}}, tools=[{"canned_response_fields": {"x": 1}}, {"data": 1}])
    e = info.value
    assert (e.kind, e.layer, e.path, e.span) == ("missing_fields", "response", "$", (5, 22))
    assert e.message == (
        "no source provides `std.customer.name` (tried: std (no `customer.name`); tool fields of tools[0]), "
        "`account.type` (tried: tool fields of tools[0]), "
        "`generative.closing` (tried: tool fields of tools[0]; generator (none configured))"
    )
    assert e.hint == (
        "`std.*` come from the caller, other fields from the `canned_response_fields` of tool results, "
        "`generative.*` from the generator"
    )
    with pytest.raises(strata.ResponseError) as info:
        strata.CannedResponse("{{a}}").render()
    assert info.value.message == "no source provides `a` (tried: tool fields (no tool result has any))"


def test_a_generator_that_raises_is_a_response_error_naming_the_field() -> None:
    def broken(template: str, field: str, context: dict[str, Any]) -> str:
        raise ValueError("the model is down; token=s3cr3t")

    response = strata.CannedResponse("x\n{{generative.greeting_phrase}}")
    with pytest.raises(strata.ResponseError) as info:
        response.render(generator=broken)
    e = info.value
    assert (e.kind, e.layer, e.span) == ("generator", "response", (4, 30))
    assert e.message == "the generator of `generative.greeting_phrase` failed: it raised ValueError"
    assert e.hint == (
        "the generator is called as generator(template, field, context) and returns the field's value as "
        "plain data (str, int, float, bool, None, list, dict)"
    )
    assert isinstance(e.__cause__, ValueError)
    assert str(e.__cause__) == "the model is down; token=s3cr3t"
    assert "s3cr3t" not in str(e)


def test_a_generator_returning_something_that_is_not_plain_data_is_a_response_error() -> None:
    response = strata.CannedResponse("{{generative.g}}")
    cases: list[tuple[Any, str]] = [
        ({1, 2}, "value: a set is not a JSON value (use a list)"),
        ({"a": [b"x"]}, "value['a'][0]: bytes are not a JSON value (decode them to str first)"),
        (float("nan"), "value: NaN is not a JSON value"),
        (object(), "value: object is not a JSON value (use dict, list, tuple, str, int, float, bool or None)"),
    ]
    for value, why in cases:

        def generator(template: str, field: str, context: dict[str, Any], value: Any = value) -> Any:
            return value

        with pytest.raises(strata.ResponseError) as info:
            response.render(generator=generator)
        e = info.value
        assert e.kind == "generator"
        assert e.message == f"the generator of `generative.g` failed: it returned a value that is not plain data: {why}"
        assert isinstance(e.__cause__, (TypeError, ValueError))


def test_an_interrupt_in_the_generator_goes_through_unchanged() -> None:
    def interrupted(template: str, field: str, context: dict[str, Any]) -> str:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        strata.CannedResponse("{{generative.g}}").render(generator=interrupted)


def test_field_values_are_data_never_rendered_again() -> None:
    response = strata.CannedResponse("[{{std.customer.name}}] [{{a}}] [{{b}}] [{{generative.c}}]")
    tools = [{"canned_response_fields": {"a": "{{ secret }}", "b": "${HOME} {% include '/etc/passwd' %}"}}]
    out = response.render(
        std={"customer": {"name": "{{ std.agent.name }}"}, "agent": {"name": "Ada"}},
        tools=tools,
        generator=lambda template, field, context: "{{ a }} {input:k} {{b.result.token}}",
    )
    assert out == (
        "[{{ std.agent.name }}] [{{ secret }}] [${HOME} {% include '/etc/passwd' %}] "
        "[{{ a }} {input:k} {{b.result.token}}]"
    )


def test_values_print_as_layer_c_prints_them() -> None:
    response = strata.CannedResponse("{{a}}|{{b}}|{{c}}|{{d}}|{{e}}|{{f}}|{{g}}")
    fields = {"a": None, "b": True, "c": 0.38, "d": 10000000, "e": [1, "x"], "f": {"z": 1, "a": None}, "g": "<b>&"}
    assert response.render(tools=[{"canned_response_fields": fields}]) == '|true|0.38|10000000|[1,"x"]|{"z":1,"a":null}|<b>&'


def test_a_missing_attribute_of_a_value_is_an_error_not_a_blank() -> None:
    response = strata.CannedResponse("{% for t in transactions %}{{ t.dat }}{% endfor %}")
    with pytest.raises(strata.UndefinedError) as info:
        response.render(tools=[{"canned_response_fields": {"transactions": [{"date": "d"}]}}])
    assert info.value.layer == "response"


def test_templates_are_checked_when_compiled(tmp_path: Path) -> None:
    with pytest.raises(strata.TemplateSyntaxError) as info:
        strata.CannedResponse("Hello\n  {{ account. }}")
    e = info.value
    assert (e.kind, e.layer, e.file) == ("syntax", "response", None)
    assert e.message == "response template: unexpected end of variable block, expected identifier or integer"
    with pytest.raises(strata.TemplateSyntaxError) as info:
        strata.CannedResponse("a\n{{ account.if }}", file="reply.j2")
    e = info.value
    assert (e.file, e.line, e.column, e.span) == ("reply.j2", 2, 4, (5, 15))
    assert e.message == "`account.if`: `if` is a Jinja keyword, not a field name"


def test_a_response_from_a_file_names_it_in_errors(tmp_path: Path) -> None:
    path = tmp_path / "bank.j2"
    path.write_text("Balance:\n  {{account.balance}}\n")
    response = strata.CannedResponse.from_file(path)
    assert response.file == str(path)
    assert response.fields == ["account.balance"]
    with pytest.raises(strata.ResponseError) as info:
        response.render()
    e = info.value
    assert (e.file, e.line, e.column, e.span) == (str(path), 2, 5, (13, 28))
    assert str(e).startswith(f"{path}:2:5: response error at $ 13..28: no source provides `account.balance`")
    # The file's final newline is not kept, as Jinja does (keep_trailing_newline off).
    assert strata.CannedResponse.from_file(str(path)).render(tools=[CHECK_BALANCE]) == "Balance:\n  $5,432.10"
    with pytest.raises(strata.StrataError) as missing:
        strata.CannedResponse.from_file(tmp_path / "nope.j2")
    assert (missing.value.kind, missing.value.message) == (
        "io",
        f"cannot read `{tmp_path}/nope.j2`: No such file or directory (os error 2)",
    )


def test_std_is_checked() -> None:
    response = strata.CannedResponse("{{std.customer.name}}")
    cases: list[tuple[dict[str, Any], str, str, str]] = [
        ({"custmer": {"name": "Ann"}}, "unknown_field", "custmer", "unknown standard field `custmer`"),
        ({"customer": "Ann"}, "invalid", "customer", "standard field `customer` must be an object"),
        (
            {"missing_params": "pin"},
            "invalid",
            "missing_params",
            "standard field `missing_params` must be a list of parameter names",
        ),
    ]
    for std, kind, path, message in cases:
        with pytest.raises(strata.StrataError) as info:
            response.render(std=std)
        assert (info.value.kind, info.value.path, info.value.message) == (kind, path, message)
    with pytest.raises(strata.StrataError) as info:
        response.render(std={"custmer": {}})
    assert info.value.hint == "did you mean `customer`?"


def test_canned_response_fields_must_be_an_object() -> None:
    with pytest.raises(strata.StrataError) as info:
        strata.CannedResponse("{{a}}").render(tools=[{}, {"canned_response_fields": [1]}])
    e = info.value
    assert (e.kind, e.path) == ("invalid", "canned_response_fields")
    assert e.message == "`canned_response_fields` of tools[1] is an array, not an object"


def test_bad_arguments_name_the_argument_and_the_path() -> None:
    # Typed as Any: these calls are wrong on purpose.
    CannedResponse: Any = strata.CannedResponse
    response: Any = CannedResponse("{{a}}")
    cases: list[tuple[Callable[[], object], type, str]] = [
        (lambda: CannedResponse(3), TypeError, "template: expected str, got int"),
        (lambda: CannedResponse("x", file=Path("f")), TypeError, "file: expected str, got PosixPath"),
        (lambda: CannedResponse.from_file(3), TypeError, "path: expected str or os.PathLike, got int"),
        (lambda: response.render(std=[1]), TypeError, "std: expected a dict, got list"),
        (lambda: response.render(std={"customer": {"name": {1}}}), TypeError, "std['customer']['name']: a set is not a JSON value (use a list)"),
        (lambda: response.render(tools={"a": 1}), TypeError, "tools: expected a list of tool results, got dict"),
        (lambda: response.render(tools="results"), TypeError, "tools: expected a list of tool results, got str"),
        (
            lambda: response.render(tools=[{}, {"canned_response_fields": {"a": float("inf")}}]),
            ValueError,
            "tools[1]['canned_response_fields']['a']: an infinite float is not a JSON value",
        ),
        (lambda: response.render(generator="gen/phrases"), TypeError, "generator: expected a callable, got str"),
    ]
    for make, error, message in cases:
        with pytest.raises(error) as info:
            make()
        assert (type(info.value), str(info.value)) == (error, message)
    with pytest.raises(TypeError, match="positional"):
        response.render({"customer": {}})


# Seed 004's templates, as the seed writes them (SPEC §7: the fields a render *needs*).
OVERDRAFT = """Your account balance is {{account.balance}}.
{% if account.overdraft %}
WARNING: Your account is overdrawn by {{account.overdraft_amount}}.
{% endif %}"""

TRANSACTIONS = """Recent transactions:
{% for t in transactions %}
- {{t.date}}: {{t.description}} {{t.amount}}
{% endfor %}"""


def test_the_seeds_balance_and_greeting_examples() -> None:
    assert strata.CannedResponse(BANK).render(tools=[CHECK_BALANCE]) == (
        "Your Checking account (ending in 1234) has a current balance of $5,432.10."
    )
    assert strata.CannedResponse(MIXED).render(
        std={"customer": {"name": "John"}}, tools=[CHECK_BALANCE], generator=Phrases()
    ) == (
        "Hi John, I hope you're having a great day, John.\n"
        "Your Checking balance is $5,432.10.\n"
        "Is there anything else I can help you with?"
    )


def test_the_seeds_overdraft_warning_renders_for_a_normal_account_without_the_amount() -> None:
    response = strata.CannedResponse(OVERDRAFT)
    # `strata check`'s list: every field the template may read.
    assert response.fields == ["account.balance", "account.overdraft", "account.overdraft_amount"]
    overdrawn = {
        "canned_response_fields": {
            "account.balance": "-$20.50",
            "account.overdraft": True,
            "account.overdraft_amount": "$20.50",
        }
    }
    assert response.render(tools=[overdrawn]) == (
        "Your account balance is -$20.50.\n\nWARNING: Your account is overdrawn by $20.50.\n"
    )
    normal = {"canned_response_fields": {"account.balance": "$5,432.10", "account.overdraft": False}}
    assert response.respond(tools=[normal]) == {
        "reply": "Your account balance is $5,432.10.\n",
        "fields": [
            {"field": "account.balance", "source": "tool", "from": "tools[0]", "value": "$5,432.10"},
            {"field": "account.overdraft", "source": "tool", "from": "tools[0]", "value": False},
        ],
    }


def test_the_seeds_transactions_with_and_without_rows() -> None:
    response = strata.CannedResponse(TRANSACTIONS)
    rows = [
        {"date": "2024-01-15", "description": "Coffee Shop", "amount": "-$4.50"},
        {"date": "2024-01-14", "description": "Salary Deposit", "amount": "+$3,000.00"},
    ]
    assert response.render(tools=[{"canned_response_fields": {"transactions": rows}}]) == (
        "Recent transactions:\n\n- 2024-01-15: Coffee Shop -$4.50\n\n- 2024-01-14: Salary Deposit +$3,000.00\n"
    )
    assert response.render(tools=[{"canned_response_fields": {"transactions": []}}]) == "Recent transactions:\n"


def test_a_field_only_tested_with_is_defined_or_given_a_default_is_optional() -> None:
    response = strata.CannedResponse(
        "{% if account.nickname is defined %}{{account.nickname}}{% else %}Your account{% endif %} "
        "({{account.tier | default('standard')}}) has {{account.balance}}."
    )
    assert response.render(tools=[CHECK_BALANCE]) == "Your account (standard) has $5,432.10."
    named = {"canned_response_fields": {"account": {"nickname": "Rainy day", "tier": "gold", "balance": "$9"}}}
    assert response.render(tools=[named]) == "Rainy day (gold) has $9."


def test_a_generative_field_a_condition_reads_is_generated_and_the_untaken_branch_is_not() -> None:
    response = strata.CannedResponse(
        "{% if generative.vip %}{{generative.vip_offer}}{% else %}{{generative.standard_offer}}{% endif %}."
    )
    asked: list[str] = []

    def table(template: str, field: str, context: dict[str, Any]) -> Any:
        asked.append(field)
        tier = context["std"].get("variables", {}).get("tier")
        return {"generative.vip": tier == "gold", "generative.vip_offer": "Free transfers"}.get(field, "Ask about gold")

    assert response.render(std={"variables": {"tier": "gold"}}, generator=table) == "Free transfers."
    assert asked == ["generative.vip", "generative.vip_offer"]
    asked.clear()
    assert response.render(std={"variables": {"tier": "silver"}}, generator=table) == "Ask about gold."
    assert asked == ["generative.vip", "generative.standard_offer"]


def test_a_needed_field_no_source_provides_is_still_the_error_naming_it() -> None:
    response = strata.CannedResponse(OVERDRAFT)
    overdrawn = {"canned_response_fields": {"account.balance": "-$20.50", "account.overdraft": True}}
    with pytest.raises(strata.ResponseError) as info:
        response.render(tools=[overdrawn])
    assert info.value.kind == "missing_fields"
    assert info.value.message == "no source provides `account.overdraft_amount` (tried: tool fields of tools[0])"
    with pytest.raises(strata.ResponseError) as info:
        response.render(tools=[{"canned_response_fields": {"account.balance": "$1"}}])
    assert info.value.message == "no source provides `account.overdraft` (tried: tool fields of tools[0])"
    # Comparing a field in a condition reads it; testing it with `is defined` first does not.
    with pytest.raises(strata.ResponseError) as info:
        strata.CannedResponse("{% if account.status == 'closed' %}Closed{% endif %}").render()
    assert info.value.message == "no source provides `account.status` (tried: tool fields (no tool result has any))"
    guarded = "{% if account.status is defined and account.status == 'closed' %}Closed{% else %}Open{% endif %}"
    assert strata.CannedResponse(guarded).render() == "Open"
