"""strata.StrataError: one class carrying SPEC's error fields, a subclass per family."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

import strata


def test_a_syntax_error_carries_every_field() -> None:
    with pytest.raises(strata.TemplateSyntaxError) as info:
        strata.render({"args": ["ok", "x ${state.x"]})
    e = info.value
    assert isinstance(e, strata.StrataError)
    assert (e.kind, e.layer, e.path, e.span) == ("syntax", "context", "args[1]", (2, 11))
    assert e.message == "unclosed `${`: no matching `}`"
    assert e.hint == "close the placeholder with `}`, or write `$${` for a literal `${`"
    assert (e.file, e.line, e.column) == (None, None, None)
    assert str(e) == (
        "context error at args[1] 2..11: unclosed `${`: no matching `}` "
        "(hint: close the placeholder with `}`, or write `$${` for a literal `${`)"
    )
    assert e.to_dict() == {
        "kind": "syntax",
        "layer": "context",
        "message": "unclosed `${`: no matching `}`",
        "path": "args[1]",
        "span": [2, 11],
        "hint": "close the placeholder with `}`, or write `$${` for a literal `${`",
    }


def test_an_error_in_a_file_names_the_file_line_and_column(project: strata.Project) -> None:
    with pytest.raises(strata.CheckError) as info:
        project.run_tool("broken")
    assert info.value.message == "`broken` was not run: 1 error found"
    [d] = info.value.diagnostics
    assert (d["file"], d["line"], d["column"]) == ("tools/broken.yaml", 4, 11)
    assert (d["code"], d["path"], d["span"]) == ("S001", "config.args[0]", [0, 3])
    assert d["message"] == "unclosed `${X`: no matching `}`"


@pytest.mark.parametrize(
    ("template", "family", "kind", "message"),
    [
        ("${state.x", strata.TemplateSyntaxError, "syntax", "unclosed `${`: no matching `}`"),
        ("${X:?set X}", strata.UndefinedError, "undefined", "required variable `X` is unset or empty: set X"),
        ({"a": "{b}", "b": "{a}"}, strata.CycleError, "cycle", "parameter cycle: a -> b -> a"),
        (
            {"a": "{b}", "b": "{c}", "c": "{d}", "d": "{e}", "e": "x"},
            strata.LimitError,
            "limit",
            "parameter chain is longer than 3 links: a -> b -> c -> d -> e",
        ),
        ("${'a' + 1}", strata.StrataError, "type", "`+` cannot combine a string and a number"),
    ],
)
def test_each_family_has_its_class(template: object, family: type, kind: str, message: str) -> None:
    with pytest.raises(strata.StrataError) as info:
        strata.render(template)
    assert type(info.value) is family
    assert (info.value.kind, info.value.message) == (kind, message)


def test_a_limit_carries_its_setting_and_value() -> None:
    with pytest.raises(strata.LimitError) as info:
        strata.render({"a": "{b}", "b": "{c}", "c": "{d}", "d": "{e}", "e": "x"})
    assert info.value.data == {"limit": {"setting": "limits.param_links", "limit": 3}}
    assert info.value.to_dict()["data"] == info.value.data
    with pytest.raises(strata.CycleError) as cycle:
        strata.render({"a": "{b}", "b": "{a}"})
    assert cycle.value.data is None


def test_a_tool_that_cannot_run_is_a_tool_error(project: strata.Project) -> None:
    with pytest.raises(strata.ToolError) as info:
        project.run_tool("gret")
    e = info.value
    assert (e.kind, e.layer, e.message) == ("unknown_tool", "request", "unknown tool `gret`")
    assert e.hint == "did you mean `greet`?"


def test_secrets_never_reach_an_error() -> None:
    env = {"TOKEN": "s3cr3t-value"}
    for template in ["${TOKEN} ${state.missing}", {"a": "${TOKEN}", "b": "${NOPE:?unset}"}]:
        with pytest.raises(strata.StrataError) as info:
            strata.render(template, env=env, secrets=["TOKEN"], strict=True)
        e = info.value
        assert "s3cr3t" not in str(e)
        assert all("s3cr3t" not in str(v) for v in e.to_dict().values())


def test_prompt_and_response_errors_have_their_families() -> None:
    prompts = strata.PromptManager({"main": {"Search": "s"}})
    with pytest.raises(strata.PromptError) as prompt:
        prompts.render("Other")
    assert (type(prompt.value), prompt.value.kind) == (strata.PromptError, "template_not_found")
    with pytest.raises(strata.PromptError) as pinned:
        prompts.render("Search", hash="0" * 64)
    assert pinned.value.kind == "hash_mismatch"
    with pytest.raises(strata.ResponseError) as missing:
        strata.CannedResponse("{{a}}").render()
    assert (type(missing.value), missing.value.kind) == (strata.ResponseError, "missing_fields")

    def broken(template: str, field: str, context: dict[str, object]) -> str:
        raise RuntimeError("down")

    with pytest.raises(strata.ResponseError) as generator:
        strata.CannedResponse("{{generative.g}}").render(generator=broken)
    assert generator.value.kind == "generator"
    for error in [prompt.value, pinned.value, missing.value, generator.value]:
        assert isinstance(error, strata.StrataError)
        assert type(error).__module__ == "strata"
        copy = pickle.loads(pickle.dumps(error))
        assert (type(copy), str(copy), copy.to_dict()) == (type(error), str(error), error.to_dict())


def test_errors_and_warnings_pickle_with_their_fields() -> None:
    with pytest.raises(strata.StrataError) as info:
        strata.render("${state.x}", strict=True)
    copy = pickle.loads(pickle.dumps(info.value))
    assert type(copy) is strata.UndefinedError
    assert (str(copy), copy.to_dict()) == (str(info.value), info.value.to_dict())
    collected: list[strata.StrataWarning] = []
    strata.render("${state.x}", warnings=collected)
    w = pickle.loads(pickle.dumps(collected[0]))
    assert (str(w), w.to_dict()) == (str(collected[0]), collected[0].to_dict())


def test_a_project_needs_a_tools_directory(tmp_path: Path) -> None:
    with pytest.raises(strata.StrataError) as info:
        strata.Project(tmp_path)
    assert info.value.kind == "request"
    assert info.value.message == f"`{tmp_path}` has no `tools/` directory"
    assert info.value.hint == "a project is a directory holding tools/"
