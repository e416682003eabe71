"""strata.Plan: the plan document, levels, dependencies, user values and partial resolution
(SPEC §5), with seed 000's test cases and seed 001's examples and exercise."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

import strata

# Seed 000's flow: find duplicates, then reply with `$stepN` references.
DUPLICATES = [
    {"tool": "folder_find_duplicates", "parameters": {"folder_path": None}},
    {
        "tool": "reply_to_user",
        "parameters": {
            "message": "Found {$step1.total_duplicate_groups} groups, wasting {$step1.wasted_space_mb} MB",
            "details": "$step1.duplicates",
        },
    },
]
DUPLICATES_RESULT = {
    "duplicates": [
        {"hash": "9f86d0", "files": ["a/report.pdf", "b/report (1).pdf"], "size": 199229},
        {"hash": "60303a", "files": ["a/photo.jpg", "b/photo.jpg"], "size": 199229},
    ],
    "total_duplicate_groups": 2,
    "total_duplicate_files": 4,
    "wasted_space_mb": 0.38,
}

# Seed 001's example: find John, then e-mail him.
FIND_JOHN = [
    {
        "id": "find_john",
        "tool": "fetch_entity",
        "arguments": {"input": {"entityType": "Contact", "filters": {"name": "John"}}},
    },
    {
        "id": "send_email",
        "tool": "send_email",
        "arguments": {
            "input": {
                "to": "{{find_john.result.data[0].email}}",
                "subject": "Hello",
                "body": "Hi {{find_john.result.data[0].name}}!",
            }
        },
    },
]

# Seed 001's real example: Sarah's e-mails, and a reply whose body the user writes.
SARAH = [
    {
        "id": "fetch_sarah_emails",
        "intent": "Find emails from Sarah",
        "tool": "fetch_emails",
        "arguments": {"input": {"operation": "fetch", "filters": {"sender": "sarah"}}},
    },
    {
        "id": "reply_to_email",
        "intent": "Reply to Sarah's most recent email",
        "tool": "reply_email",
        "arguments": {
            "input": {
                "threadId": "{{fetch_sarah_emails.result.data[0].id}}",
                "to": "{{fetch_sarah_emails.result.data[0].from.email}}",
                "subject": "Re: {{fetch_sarah_emails.result.data[0].subject}}",
                "body": "{{PLACEHOLDER_reply_message}}",
            }
        },
    },
]
SARAH_RESULT = {
    "data": [
        {
            "id": "thread_abc123",
            "from": {"email": "sarah@company.com", "name": "Sarah"},
            "subject": "Q1 Report",
            "date": "2024-01-15T10:30:00Z",
        }
    ]
}

# Seed 001's exercise.
EXERCISE = [
    {"id": "A", "tool": "fetch_contacts", "arguments": {"input": {}}},
    {"id": "B", "tool": "fetch_emails", "arguments": {"input": {"from": "{{A.result.data[0].email}}"}}},
    {"id": "C", "tool": "summarize", "arguments": {"input": {"text": "{{B.result.data[0].body}}"}}},
    {
        "id": "D",
        "tool": "send_email",
        "arguments": {"input": {"to": "{{A.result.data[0].email}}", "body": "{{C.result.summary}}"}},
    },
]
A_RESULT = {"data": [{"name": "John Smith", "email": "john@example.com"}]}


def step_two(message: Any, result: Any) -> Any:
    """The resolved arguments of step 2 of a seed-000 plan whose step 1 returned `result`."""
    plan = strata.Plan([{"tool": "t", "parameters": {}}, {"tool": "reply_to_user", "parameters": message}])
    reply = plan.resolve({"step1": result})
    assert [s["state"] for s in reply["steps"]] == ["completed", "ready"]
    return reply["steps"][1]["arguments"]


# Seed 000, "Test Cases": 1 simple template, 2 several placeholders, 3 a nested field path,
# 4 a direct reference passing the whole array.
@pytest.mark.parametrize(
    ("parameters", "result", "expected"),
    [
        ({"message": "Found {$step1.count} items"}, {"count": 5}, {"message": "Found 5 items"}),
        (
            {"message": "Found {$step1.count} groups, wasting {$step1.space} MB"},
            {"count": 2, "space": 0.38},
            {"message": "Found 2 groups, wasting 0.38 MB"},
        ),
        (
            {"message": "Size: {$step1.metadata.file_size} bytes"},
            {"metadata": {"file_size": 1024}},
            {"message": "Size: 1024 bytes"},
        ),
        (
            {"details": "$step1.duplicates"},
            {"duplicates": [{"files": ["a", "b"]}, {"files": ["c", "d"]}]},
            {"details": [{"files": ["a", "b"]}, {"files": ["c", "d"]}]},
        ),
    ],
    ids=["simple_template", "multiple_placeholders", "nested_field_path", "direct_reference"],
)
def test_seed_000_test_cases(parameters: dict[str, Any], result: Any, expected: dict[str, Any]) -> None:
    assert step_two(parameters, result) == expected


def test_seed_000_data_flow() -> None:
    plan = strata.Plan(DUPLICATES)
    assert plan.levels == [["step1"], ["step2"]]
    assert plan.resolve() == {
        "levels": [["step1"], ["step2"]],
        "steps": [
            {"id": "step1", "depends_on": [], "state": "ready", "arguments": {"folder_path": None}},
            {"id": "step2", "depends_on": ["step1"], "state": "blocked", "waiting_for": ["step1"]},
        ],
        "missing_values": [],
    }
    assert plan.resolve({"step1": DUPLICATES_RESULT})["steps"][1] == {
        "id": "step2",
        "depends_on": ["step1"],
        "state": "ready",
        "arguments": {
            "message": "Found 2 groups, wasting 0.38 MB",
            "details": DUPLICATES_RESULT["duplicates"],
        },
    }


def test_seed_001_find_john() -> None:
    plan = strata.Plan(FIND_JOHN)
    after_step_1 = {"data": [{"name": "John Smith", "email": "john.smith@example.com"}]}
    assert plan.resolve({"find_john": after_step_1}) == {
        "levels": [["find_john"], ["send_email"]],
        "steps": [
            {"id": "find_john", "depends_on": [], "state": "completed"},
            {
                "id": "send_email",
                "depends_on": ["find_john"],
                "state": "ready",
                "arguments": {
                    "input": {"to": "john.smith@example.com", "subject": "Hello", "body": "Hi John Smith!"}
                },
            },
        ],
        "missing_values": [],
    }


def test_seed_001_sarah_waits_for_the_reply_then_resolves() -> None:
    plan = strata.Plan(SARAH)
    assert plan.placeholders == ["reply_message"]
    assert plan.resolve({"fetch_sarah_emails": SARAH_RESULT}) == {
        "levels": [["fetch_sarah_emails"], ["reply_to_email"]],
        "steps": [
            {"id": "fetch_sarah_emails", "depends_on": [], "state": "completed"},
            {
                "id": "reply_to_email",
                "depends_on": ["fetch_sarah_emails"],
                "state": "waiting",
                "waiting_for": ["reply_message"],
            },
        ],
        "missing_values": ["reply_message"],
    }
    reply = plan.resolve({"fetch_sarah_emails": SARAH_RESULT}, values={"reply_message": "Thanks, Sarah!"})
    assert reply["steps"][1] == {
        "id": "reply_to_email",
        "depends_on": ["fetch_sarah_emails"],
        "state": "ready",
        "arguments": {
            "input": {
                "threadId": "thread_abc123",
                "to": "sarah@company.com",
                "subject": "Re: Q1 Report",
                "body": "Thanks, Sarah!",
            }
        },
    }
    assert reply["missing_values"] == []


def test_seed_001_exercise_graph_and_order() -> None:
    plan = strata.Plan(EXERCISE)
    assert plan.dependencies == {"A": [], "B": ["A"], "C": ["B"], "D": ["A", "C"]}
    assert plan.levels == [["A"], ["B"], ["C"], ["D"]]
    assert plan.steps == [
        {"id": "A", "tool": "fetch_contacts", "depends_on": [], "level": 0, "intent": None},
        {"id": "B", "tool": "fetch_emails", "depends_on": ["A"], "level": 1, "intent": None},
        {"id": "C", "tool": "summarize", "depends_on": ["B"], "level": 2, "intent": None},
        {"id": "D", "tool": "send_email", "depends_on": ["A", "C"], "level": 3, "intent": None},
    ]
    states = [(s["id"], s["state"]) for s in plan.resolve()["steps"]]
    assert states == [("A", "ready"), ("B", "blocked"), ("C", "blocked"), ("D", "blocked")]
    assert plan.resolve({"A": A_RESULT})["steps"][1:] == [
        {"id": "B", "depends_on": ["A"], "state": "ready", "arguments": {"input": {"from": "john@example.com"}}},
        {"id": "C", "depends_on": ["B"], "state": "blocked", "waiting_for": ["B"]},
        {"id": "D", "depends_on": ["A", "C"], "state": "blocked", "waiting_for": ["C"]},
    ]


def test_seed_001_exercise_if_b_fails_c_and_d_are_skipped() -> None:
    assert strata.Plan(EXERCISE).resolve({"A": A_RESULT}, failed=["B"]) == {
        "levels": [["A"], ["B"], ["C"], ["D"]],
        "steps": [
            {"id": "A", "depends_on": [], "state": "completed"},
            {"id": "B", "depends_on": ["A"], "state": "failed"},
            {
                "id": "C",
                "depends_on": ["B"],
                "state": "skipped",
                "error": {"kind": "run_state", "message": "step `B` failed"},
            },
            {
                "id": "D",
                "depends_on": ["A", "C"],
                "state": "skipped",
                "error": {"kind": "run_state", "message": "step `C` was skipped"},
            },
        ],
        "missing_values": [],
    }


def test_a_diamond_has_three_levels() -> None:
    plan = strata.Plan(
        {
            "steps": [
                {"id": "A", "tool": "t", "arguments": {}},
                {"id": "B", "tool": "t", "arguments": {"x": "{{A.result}}"}},
                {"id": "C", "tool": "t", "arguments": {"x": "{{A.result}}"}},
                {"id": "D", "tool": "t", "arguments": {"x": "{{B.result}}"}, "depends_on": ["C"]},
            ]
        }
    )
    assert plan.levels == [["A"], ["B", "C"], ["D"]]
    assert plan.dependencies["D"] == ["B", "C"]
    ready = plan.resolve({"A": 1, "B": 2})["steps"]
    assert [(s["id"], s["state"]) for s in ready] == [
        ("A", "completed"),
        ("B", "completed"),
        ("C", "ready"),
        ("D", "blocked"),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "{{b.result.token}}",
        "$step2",
        "${HOME}",
        "{$step1.x} {{PLACEHOLDER_x}} {input:k} {param}",
        'quote " backslash \\ newline \n tab \t',
    ],
)
def test_resolved_values_are_never_scanned_again(text: str) -> None:
    plan = strata.Plan(
        [
            {"tool": "t", "arguments": {}},
            {"id": "b", "tool": "t", "arguments": {"token": "secret"}},
            {
                "id": "c",
                "tool": "t",
                "arguments": {
                    "whole": "{{step1.result.text}}",
                    "embedded": "<{{step1.result.text}}>",
                    "legacy": "$step1.text",
                    "legacy_embedded": "<{$step1.text}>",
                    "value": "{{PLACEHOLDER_note}}",
                    "after": "{{b.result.token}}",
                },
            },
        ]
    )
    reply = plan.resolve({"step1": {"text": text}, "b": {"token": "t0k3n"}}, values={"note": text})
    assert reply["steps"][2]["arguments"] == {
        "whole": text,
        "embedded": f"<{text}>",
        "legacy": text,
        "legacy_embedded": f"<{text}>",
        "value": text,
        "after": "t0k3n",
    }


def test_map_keys_and_escapes_are_not_references() -> None:
    plan = strata.Plan(
        [
            {"id": "a", "tool": "t", "arguments": {}},
            {"id": "b", "tool": "t", "arguments": {"{{a.result}}": "$$step1 {{{{a.result}}", "n": "{{a.result}}"}},
        ]
    )
    assert plan.resolve({"a": 7})["steps"][1]["arguments"] == {"{{a.result}}": "$step1 {{a.result}}", "n": 7}


def test_integers_beyond_2_53_stay_exact() -> None:
    big = [2**53 + 1, 2**63 - 1, 2**64 - 1, -(2**63), 2**64 + 1, -(2**63) - 1, 10**39 + 7]
    plan = strata.Plan(
        [
            {"tool": "t", "arguments": {}},
            {"tool": "t", "arguments": {"whole": "{{step1.result}}", "text": "{{step1.result[0]}} {$step1[2]}", "n": "{{PLACEHOLDER_n}}"}},
        ]
    )
    args = plan.resolve({"step1": big}, values={"n": 2**64 - 2})["steps"][1]["arguments"]
    assert args == {"whole": big, "text": "9007199254740993 18446744073709551615", "n": 2**64 - 2}
    assert all(type(v) is int for v in args["whole"])


def test_embedded_values_render_as_text() -> None:
    plan = strata.Plan(
        [
            {"id": "a", "tool": "t", "arguments": {}},
            {"id": "b", "tool": "t", "arguments": {"m": "{{a.result.f}}|{{a.result.n}}|{{a.result.t}}|{{a.result.l}}|{{a.result.o}}|{{a.result.s}}"}},
        ]
    )
    result = {"f": 0.38, "n": None, "t": True, "l": [1, "x"], "o": {"k": [None]}, "s": "text"}
    assert plan.resolve({"a": result})["steps"][1]["arguments"] == {"m": '0.38||true|[1,"x"]|{"k":[null]}|text'}


def test_a_path_a_result_does_not_have_fails_that_step_only() -> None:
    plan = strata.Plan(
        [
            {"id": "a", "tool": "t", "arguments": {}},
            {"id": "b", "tool": "t", "arguments": {"x": "{{a.result.data[0].emial}}"}},
            {"id": "c", "tool": "t", "arguments": {"x": "{{b.result}}"}},
            {"id": "d", "tool": "t", "arguments": {"x": "{{a.result.data[0].email}}"}},
        ]
    )
    assert plan.resolve({"a": {"data": [{"email": "e@x", "name": "E"}]}})["steps"] == [
        {"id": "a", "depends_on": [], "state": "completed"},
        {
            "id": "b",
            "depends_on": ["a"],
            "state": "failed",
            "error": {
                "kind": "path_not_found",
                "message": "`{{a.result.data[0].emial}}`: step `a` has no `result.data[0].emial`; "
                "`result.data[0]` has `email`, `name`",
            },
        },
        {"id": "c", "depends_on": ["b"], "state": "skipped", "error": {"kind": "run_state", "message": "step `b` failed"}},
        {"id": "d", "depends_on": ["a"], "state": "ready", "arguments": {"x": "e@x"}},
    ]


def test_missing_values_are_listed_once_in_plan_order() -> None:
    plan = strata.Plan(
        [
            {"id": "meet", "tool": "t", "arguments": {"title": "{{PLACEHOLDER_title}}", "who": ["{{PLACEHOLDER_attendee}}"]}},
            {"id": "mail", "tool": "t", "arguments": {"to": "{{PLACEHOLDER_attendee}}", "at": "{{meet.result.time}}"}},
            {"id": "note", "tool": "t", "arguments": {"text": "{{PLACEHOLDER_note}}"}},
        ]
    )
    assert plan.placeholders == ["title", "attendee", "note"]
    reply = plan.resolve(values={"note": "hi"})
    assert [(s["id"], s["state"], s.get("waiting_for")) for s in reply["steps"]] == [
        ("meet", "waiting", ["title", "attendee"]),
        ("mail", "waiting", ["attendee"]),
        ("note", "ready", None),
    ]
    assert reply["missing_values"] == ["title", "attendee"]
    typed = plan.resolve(values={"title": {"text": "Q1"}, "attendee": ["ann@example.com"], "note": None})
    assert typed["steps"][0]["arguments"] == {"title": {"text": "Q1"}, "who": [["ann@example.com"]]}


def test_a_plan_is_immutable_sized_and_shown() -> None:
    plan = strata.Plan(EXERCISE)
    assert len(plan) == 4
    assert repr(plan) == "<strata.Plan steps=['A', 'B', 'C', 'D']>"
    many = strata.Plan([{"tool": "t", "arguments": {}} for _ in range(12)])
    assert repr(many) == (
        "<strata.Plan steps=['step1', 'step2', 'step3', 'step4', 'step5', 'step6', 'step7', "
        "'step8', 'step9', 'step10', ...]>"
    )
    with pytest.raises(AttributeError):
        plan.levels = []  # type: ignore[misc]
    # The document the plan was read from can change; the plan does not.
    document: list[Any] = [{"id": "x", "tool": "t", "arguments": {}}]
    copy = strata.Plan(document)
    document.append({"id": "y", "tool": "t", "arguments": {}})
    assert copy.levels == [["x"]]


def test_numeric_and_missing_ids_name_steps_by_position() -> None:
    plan = strata.Plan(
        [
            {"tool": "t", "arguments": {}},
            {"id": 7, "tool": "t", "arguments": {"x": "$step1"}, "intent": "seven"},
            {"tool": "t", "arguments": {"x": "{{step7.status}}"}},
        ]
    )
    assert plan.steps == [
        {"id": "step1", "tool": "t", "depends_on": [], "level": 0, "intent": None},
        {"id": "step7", "tool": "t", "depends_on": ["step1"], "level": 1, "intent": "seven"},
        {"id": "step3", "tool": "t", "depends_on": ["step7"], "level": 2, "intent": None},
    ]
    assert plan.resolve({"step1": "r", "step7": None})["steps"][2]["arguments"] == {"x": "completed"}


def plan_error(document: Any) -> strata.StrataError:
    with pytest.raises(strata.StrataError) as info:
        strata.Plan(document)
    return info.value


def test_an_unknown_step_is_a_plan_error_with_a_did_you_mean() -> None:
    e = plan_error(
        [
            {"id": "find_john", "tool": "t", "arguments": {}},
            {"id": "send", "tool": "t", "arguments": {"input": {"to": "{{fnd_john.result.email}}"}}},
        ]
    )
    assert type(e) is strata.PlanError
    assert e.to_dict() == {
        "kind": "unknown_step",
        "layer": "plan",
        "message": "step `send` refers to unknown step `fnd_john`",
        "path": "[1].arguments.input.to",
        "span": [0, 25],
        "hint": "did you mean `find_john`?",
    }
    assert str(e) == (
        "plan error at [1].arguments.input.to 0..25: step `send` refers to unknown step `fnd_john` "
        "(hint: did you mean `find_john`?)"
    )


@pytest.mark.parametrize(
    ("document", "family", "kind", "path", "span", "message", "hint"),
    [
        (
            [
                {"id": "a", "tool": "t", "arguments": {"x": "{{c.result}}"}},
                {"id": "b", "tool": "t", "arguments": {"x": "{{a.result}}"}},
                {"id": "c", "tool": "t", "arguments": {"x": "{{b.result}}"}},
            ],
            strata.CycleError,
            "cycle",
            "[0].arguments.x",
            (0, 12),
            "circular dependency: a -> b -> c -> a",
            "a step cannot depend on itself, directly or through others",
        ),
        (
            {"steps": [{"id": "a", "tool": "t", "arguments": {}}, {"id": "a", "tool": "u", "arguments": {}}]},
            strata.PlanError,
            "duplicate_id",
            "steps[1].id",
            None,
            "duplicate step id `a`: steps 1 and 2",
            "every step needs its own id",
        ),
        (
            [{"id": "a", "tool": "t", "arguments": {}}, {"tool": "t", "arguments": {"to": "Hi {{a.email}}"}}],
            strata.PlanError,
            "unknown_field",
            "[1].arguments.to",
            (3, 14),
            "`email` is not a field of step `a`'s record (id, status, result, error, run)",
            "did you mean `{{a.result.email}}`?",
        ),
        (
            [{"tool": "t", "arguments": {"text": "$step1.text and more"}}],
            strata.TemplateSyntaxError,
            "syntax",
            "[0].arguments.text",
            (0, 20),
            "a string starting with `$step` must be exactly one reference (`$stepN` or `$stepN.path`)",
            "embed with `{$stepN.path}`; write `$$step` for the literal text `$step`",
        ),
        (
            [{"tool": "t", "argumnts": {}}],
            strata.PlanError,
            "unknown_name",
            "[0].argumnts",
            None,
            "unknown key `argumnts` in step 1",
            "did you mean `arguments`?",
        ),
        (
            {"steps": [], "version": 2},
            strata.PlanError,
            "invalid",
            "version",
            None,
            "unknown top-level key `version`",
            "a plan object has only `steps`",
        ),
    ],
    ids=["cycle", "duplicate_id", "unknown_field", "syntax", "unknown_key", "top_level_key"],
)
def test_plan_errors_carry_their_kind_path_span_and_hint(
    document: Any,
    family: type,
    kind: str,
    path: str,
    span: Any,
    message: str,
    hint: str,
) -> None:
    e = plan_error(document)
    assert type(e) is family
    assert (e.kind, e.layer, e.path, e.span, e.message, e.hint) == (kind, "plan", path, span, message, hint)


def test_plan_errors_are_strata_errors_and_pickle() -> None:
    e = plan_error([{"tool": "t", "arguments": {"x": "{{nope.result}}"}}])
    assert isinstance(e, strata.PlanError) and isinstance(e, strata.StrataError)
    assert type(e).__module__ == "strata"
    copy = pickle.loads(pickle.dumps(e))
    assert (type(copy), str(copy), copy.to_dict()) == (strata.PlanError, str(e), e.to_dict())
    assert e.hint is None


def test_results_and_failures_must_name_steps_of_the_plan() -> None:
    plan = strata.Plan(EXERCISE)
    with pytest.raises(strata.PlanError) as unknown:
        plan.resolve({"a": A_RESULT})
    assert unknown.value.to_dict() == {
        "kind": "unknown_step",
        "layer": "request",
        "message": "the plan has no step `a`",
        "path": "results.a",
        "span": None,
    }
    with pytest.raises(strata.PlanError) as unknown_failed:
        plan.resolve(failed=["A", "E"])
    assert (unknown_failed.value.path, unknown_failed.value.message) == ("failed[1]", "the plan has no step `E`")
    with pytest.raises(strata.StrataError) as both:
        plan.resolve({"A": A_RESULT}, failed=("A",))
    assert (type(both.value), both.value.kind, both.value.path, both.value.message) == (
        strata.StrataError,
        "request",
        "failed[0]",
        "step `A` is both in `results` and in `failed`",
    )


def loop() -> dict[str, Any]:
    d: dict[str, Any] = {}
    d["again"] = [d]
    return d


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (
            lambda: strata.Plan('[{"tool": "t"}]'),  # type: ignore[arg-type]
            TypeError,
            "plan: expected a list of steps or a dict {'steps': [...]}, got str "
            "(for a plan's JSON or YAML text, use Plan.from_text)",
        ),
        (lambda: strata.Plan(None), TypeError, "plan: expected a list of steps or a dict {'steps': [...]}, got NoneType"),  # type: ignore[arg-type]
        (
            lambda: strata.Plan([{"tool": "t", "arguments": {"x": {1, 2}}}]),
            TypeError,
            "plan[0]['arguments']['x']: a set is not a JSON value (use a list)",
        ),
        (
            lambda: strata.Plan([{"tool": "t", "arguments": {"x": b"bytes"}}]),
            TypeError,
            "plan[0]['arguments']['x']: bytes are not a JSON value (decode them to str first)",
        ),
        (
            lambda: strata.Plan([{"tool": "t", "arguments": loop()}]),
            ValueError,
            "plan[0]['arguments']['again'][0]: the dict contains itself (recursion)",
        ),
        (lambda: strata.Plan.from_text(b"[]"), TypeError, "text: expected str, got bytes"),  # type: ignore[arg-type]
        (lambda: strata.Plan.from_text("[]", file=3), TypeError, "file: expected str, got int"),  # type: ignore[arg-type]
        (lambda: strata.Plan.from_file(None), TypeError, "path: expected str or os.PathLike, got NoneType"),  # type: ignore[arg-type]
        (lambda: strata.Plan(EXERCISE).resolve([A_RESULT]), TypeError, "results: expected a dict, got list"),  # type: ignore[arg-type]
        (
            lambda: strata.Plan(EXERCISE).resolve({"A": {"ratio": float("nan")}}),
            ValueError,
            "results['A']['ratio']: NaN is not a JSON value",
        ),
        (
            lambda: strata.Plan(EXERCISE).resolve({"A": {"at": object()}}),
            TypeError,
            "results['A']['at']: object is not a JSON value (use dict, list, tuple, str, int, float, bool or None)",
        ),
        (lambda: strata.Plan(EXERCISE).resolve({1: A_RESULT}), TypeError, "results: keys must be str, not int"),  # type: ignore[dict-item]
        (
            lambda: strata.Plan(EXERCISE).resolve(failed="B"),
            TypeError,
            "failed: expected a collection of str, got a str (wrap it in a list)",
        ),
        (lambda: strata.Plan(EXERCISE).resolve(failed=[2]), TypeError, "failed[0]: expected str, got int"),  # type: ignore[list-item]
        (lambda: strata.Plan(EXERCISE).resolve(failed=3), TypeError, "failed: expected a collection of str, got int"),  # type: ignore[arg-type]
        (lambda: strata.Plan(EXERCISE).resolve(values=["x"]), TypeError, "values: expected a dict, got list"),  # type: ignore[arg-type]
        (
            lambda: strata.Plan(EXERCISE).resolve(values={"x": float("inf")}),
            ValueError,
            "values['x']: an infinite float is not a JSON value",
        ),
    ],
)
def test_bad_input_names_the_argument_and_the_path(call: Any, error: type, message: str) -> None:
    with pytest.raises(error) as info:
        call()
    assert (type(info.value), str(info.value)) == (error, message)


def test_a_plan_from_tuples_and_mappings() -> None:
    from types import MappingProxyType

    plan = strata.Plan(MappingProxyType({"steps": ({"id": "a", "tool": "t", "arguments": {"x": ("{{PLACEHOLDER_v}}",)}},)}))
    assert plan.resolve(values=MappingProxyType({"v": 1}))["steps"][0]["arguments"] == {"x": [1]}
    assert plan.resolve(failed=iter(["a"]))["steps"][0]["state"] == "failed"


# The plan's own text, as an LLM writes it: seed 001's exercise in JSON, seed 000's flow in
# YAML.
EXERCISE_JSON = """[
  { "id": "A", "tool": "fetch_contacts", "arguments": { "input": {} } },
  { "id": "B", "tool": "fetch_emails", "arguments": { "input": { "from": "{{A.result.data[0].email}}" } } },
  { "id": "C", "tool": "summarize", "arguments": { "input": { "text": "{{B.result.data[0].body}}" } } },
  { "id": "D", "tool": "send_email", "arguments": { "input": { "to": "{{A.result.data[0].email}}", "body": "{{C.result.summary}}" } } }
]
"""
DUPLICATES_YAML = """\
steps:
  - tool: folder_find_duplicates
    parameters: {folder_path: null}
  - tool: reply_to_user
    parameters:
      message: "Found {$step1.total_duplicate_groups} groups, wasting {$step1.wasted_space_mb} MB"
      details: $step1.duplicates
"""


def test_a_plan_from_its_json_text_is_the_plan_from_its_value() -> None:
    plan = strata.Plan.from_text(EXERCISE_JSON)
    assert plan.levels == [["A"], ["B"], ["C"], ["D"]]
    assert plan.dependencies == {"A": [], "B": ["A"], "C": ["B"], "D": ["A", "C"]}
    assert plan.resolve({"A": A_RESULT}, failed=["B"]) == strata.Plan(EXERCISE).resolve({"A": A_RESULT}, failed=["B"])


def test_a_plan_from_yaml_text_and_from_files(tmp_path: Any) -> None:
    expected = {
        "message": "Found 2 groups, wasting 0.38 MB",
        "details": DUPLICATES_RESULT["duplicates"],
    }
    from_text = strata.Plan.from_text(DUPLICATES_YAML, file="plan.yaml")
    assert from_text.resolve({"step1": DUPLICATES_RESULT})["steps"][1]["arguments"] == expected
    yaml_file = tmp_path / "plan.yaml"
    yaml_file.write_text(DUPLICATES_YAML)
    assert strata.Plan.from_file(yaml_file).resolve({"step1": DUPLICATES_RESULT})["steps"][1]["arguments"] == expected
    json_file = tmp_path / "exercise.json"
    json_file.write_text(EXERCISE_JSON)
    assert strata.Plan.from_file(str(json_file)).levels == [["A"], ["B"], ["C"], ["D"]]


def test_errors_in_a_plan_text_carry_the_file_line_and_column(tmp_path: Any) -> None:
    with pytest.raises(strata.PlanError) as unknown:
        strata.Plan.from_text(EXERCISE_JSON.replace("{{C.result.summary}}", "{{c.result.summary}}"))
    assert unknown.value.to_dict() == {
        "kind": "unknown_step",
        "layer": "plan",
        "message": "step `D` refers to unknown step `c`",
        "path": "[3].arguments.input.body",
        "span": [0, 20],
        "hint": "the other steps are `A`, `B`, `C`",
        "file": "<string>",
        "line": 5,
        "column": 109,
    }
    with pytest.raises(strata.TemplateSyntaxError) as syntax:
        strata.Plan.from_text("steps:\n  - tool: t\n    arguments: {a: [1, 2}\n", file="plans/bad.yaml")
    assert str(syntax.value) == (
        "plans/bad.yaml:3:25: request error at $: YAML syntax error: while parsing a flow sequence, expected ',' or ']'"
    )
    with pytest.raises(strata.CycleError) as cycle:
        strata.Plan.from_text("- id: a\n  tool: t\n  arguments: {x: '{{a.status}}'}\n")
    assert (cycle.value.message, cycle.value.line, cycle.value.column) == ("circular dependency: a -> a", 3, 19)
    with pytest.raises(strata.StrataError) as missing:
        strata.Plan.from_file(tmp_path / "nope.yaml")
    assert (type(missing.value), missing.value.kind, missing.value.message) == (
        strata.StrataError,
        "io",
        f"cannot read `{tmp_path}/nope.yaml`: No such file or directory (os error 2)",
    )


def test_dollar_references_keep_their_type_and_name_unknown_steps() -> None:
    plan = strata.Plan(
        [
            {"tool": "t", "parameters": {}},
            {
                "tool": "t",
                "parameters": {
                    "count": "$step1.count",
                    "first": "$step1.items[0]",
                    "last": "$step1.items[-1]",
                    "quoted": '$step1["odd key"]',
                    "all": "$step1",
                },
            },
        ]
    )
    result = {"count": 2, "items": [{"n": 1}, {"n": 2}], "odd key": None}
    assert plan.resolve({"step1": result})["steps"][1]["arguments"] == {
        "count": 2,
        "first": {"n": 1},
        "last": {"n": 2},
        "quoted": None,
        "all": result,
    }
    e = plan_error([{"tool": "t", "parameters": {}}, {"tool": "t", "parameters": {"m": "Found {$step3.count} items"}}])
    assert (type(e), e.kind, e.path, e.span, e.message, e.hint) == (
        strata.PlanError,
        "unknown_step",
        "[1].parameters.m",
        (6, 20),
        "step `step2` refers to unknown step `step3`",
        "did you mean `step1`?",
    )


def test_seed_001_dependency_detection_example() -> None:
    plan = strata.Plan(
        [
            {"id": "find_john", "tool": "t", "arguments": {}},
            {"id": "find_manager", "tool": "t", "arguments": {}},
            {
                "id": "mail",
                "tool": "send_email",
                "arguments": {"input": {"to": "{{find_john.result.email}}", "cc": "{{find_manager.result.email}}"}},
            },
        ]
    )
    assert plan.dependencies["mail"] == ["find_john", "find_manager"]
    assert plan.levels == [["find_john", "find_manager"], ["mail"]]


def test_seed_000_unresolved_placeholder_is_a_failed_step_not_literal_text() -> None:
    # Seed 000 keeps "Found {$step1.missing_field} items" as it is; strata fails the step
    # and says what step 1's result has.
    plan = strata.Plan(
        [
            {"tool": "folder_find_duplicates", "parameters": {}},
            {"tool": "reply_to_user", "parameters": {"message": "Found {$step1.missing_field} items"}},
            {"tool": "reply_to_user", "parameters": {"message": "after {{step2.status}}"}},
        ]
    )
    assert plan.resolve({"step1": {"count": 2, "space": 0.38}})["steps"][1:] == [
        {
            "id": "step2",
            "depends_on": ["step1"],
            "state": "failed",
            "error": {
                "kind": "path_not_found",
                "message": "`{$step1.missing_field}`: step `step1` has no `result.missing_field`; "
                "`result` has `count`, `space`",
            },
        },
        {
            "id": "step3",
            "depends_on": ["step2"],
            "state": "skipped",
            "error": {"kind": "run_state", "message": "step `step2` failed"},
        },
    ]


# ----- issue 27: arguments that are not a map, number wording, `$stepN` naming (SPEC §5.1, §5.3)

ARGS_HINT = (
    "give the tool's parameters as a map `{name: value, ...}`, "
    'or as one whole-value reference to a map (`"$step1"`, `"{{a.result}}"`)'
)


@pytest.mark.parametrize(
    ("arguments", "named"),
    [([1, 2], "array"), ("text", "string"), ("see {$step1.n}", "string"), (7, "integer"), (2.5, "number"), (None, "null")],
    ids=["list", "text", "embedded", "integer", "number", "null"],
)
def test_literal_arguments_that_are_not_a_map_are_refused_when_the_plan_loads(arguments: Any, named: str) -> None:
    e = plan_error([{"id": "z", "tool": "t", "arguments": {}}, {"id": "a", "tool": "t", "arguments": arguments}])
    assert type(e) is strata.PlanError
    assert (e.kind, e.layer, e.path, e.span, e.message, e.hint) == (
        "invalid",
        "plan",
        "[1].arguments",
        None,
        f"the arguments of step `a` must be a map, not {named}",
        ARGS_HINT,
    )


def test_literal_arguments_that_are_not_a_map_are_refused_in_a_plan_text() -> None:
    with pytest.raises(strata.PlanError) as info:
        strata.Plan.from_text("- {id: z, tool: t, arguments: {}}\n- {id: a, tool: t, parameters: [1, 2]}\n")
    assert info.value.message == "the arguments of step `a` must be a map, not array"
    assert info.value.path == "[1].parameters"


def test_a_whole_value_reference_that_yields_a_non_map_fails_that_step() -> None:
    plan = strata.Plan(
        [
            {"id": "a", "tool": "t", "arguments": {}},
            {"id": "b", "tool": "t", "arguments": "{{a.result.list}}"},
            {"id": "c", "tool": "t", "arguments": {"x": "{{b.result}}"}},
            {"id": "d", "tool": "t", "arguments": "$step5"},
            {"id": 5, "tool": "t", "arguments": {}},
        ]
    )
    steps = plan.resolve({"a": {"list": [1, 2]}, "step5": {"n": 1}})["steps"]
    assert steps[1:4] == [
        {
            "id": "b",
            "depends_on": ["a"],
            "state": "failed",
            "error": {"kind": "invalid", "message": "the arguments of step `b` must be a map, not array"},
        },
        {"id": "c", "depends_on": ["b"], "state": "skipped", "error": {"kind": "run_state", "message": "step `b` failed"}},
        {"id": "d", "depends_on": ["step5"], "state": "ready", "arguments": {"n": 1}},
    ]


@pytest.mark.parametrize(
    ("value", "named"),
    [(2.0, "a number"), (-0.0, "a number"), (2.5, "a number"), (1e300, "a number"), (2, "an integer"), (-7, "an integer"), (True, "a boolean")],
)
def test_path_not_found_names_the_type_as_written(value: Any, named: str) -> None:
    plan = strata.Plan([{"id": "a", "tool": "t", "arguments": {}}, {"id": "b", "tool": "t", "arguments": {"x": "{{a.result.f.k}}"}}])
    assert plan.resolve({"a": {"f": value}})["steps"][1]["error"] == {
        "kind": "path_not_found",
        "message": f"`{{{{a.result.f.k}}}}`: step `a` has no `result.f.k`; `result.f` is {named}",
    }


def test_dollar_step_n_names_the_step_whose_id_is_step_n_not_the_nth_step() -> None:
    plan = strata.Plan(
        [
            {"id": "step01", "tool": "t", "arguments": {}},
            {"id": "step1", "tool": "t", "arguments": {}},
            {"tool": "t", "arguments": {"x": "{$step01.n}", "n": "$step1.n"}},
        ]
    )
    assert plan.resolve({"step01": {"n": "zero-one"}, "step1": {"n": "one"}})["steps"][2] == {
        "id": "step3",
        "depends_on": ["step01", "step1"],
        "state": "ready",
        "arguments": {"x": "zero-one", "n": "one"},
    }
    e = plan_error([{"id": "a", "tool": "t", "arguments": {}}, {"id": "b", "tool": "t", "arguments": {"x": "$step1.n"}}])
    assert (e.kind, e.message, e.hint) == ("unknown_step", "step `b` refers to unknown step `step1`", "the other steps are `a`")
