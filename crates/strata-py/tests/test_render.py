"""strata.render and strata.Template: the four layers, typing, warnings, redaction."""

from __future__ import annotations

import os
import threading
import types
import warnings
from typing import Any

import pytest

import strata

TOOL_CONFIG = {
    "command": "${BIN:-run}",
    "args": ["{input:f}", "${state.n}", "{x}"],
    "cwd": "${state.dir}/work",
}


def test_render_runs_every_layer_in_order() -> None:
    out = strata.render(
        TOOL_CONFIG,
        env={"BIN": "tool"},
        params={"x": 1},
        context={"state": {"n": 3, "dir": "/srv"}},
        inputs={"f": "a.txt"},
    )
    assert out == {"command": "tool", "args": ["a.txt", 3, 1], "cwd": "/srv/work"}


def test_a_string_template_renders_to_a_string() -> None:
    assert (
        strata.render("Hello {name} from ${HOME}", params={"name": "Ann"}, env={"HOME": "/home/ann"})
        == "Hello Ann from /home/ann"
    )


def test_a_whole_value_placeholder_keeps_the_values_type() -> None:
    context = {"state": {"items": [1, {"a": None}], "f": 0.1, "t": True, "none": None}}
    assert strata.render("${state.items}", context=context) == [1, {"a": None}]
    assert strata.render("${state.f}", context=context) == 0.1
    assert strata.render("${state.t}", context=context) is True
    assert strata.render("${state.none}", context=context) is None
    assert strata.render("n=${state.items}", context=context) == 'n=[1,{"a":null}]'


def test_integers_beyond_2_53_stay_exact_both_ways() -> None:
    big = 2**64 - 1
    small = -(2**63)
    odd = 2**53 + 1
    out = strata.render(
        {"max_u64": "{u}", "min_i64": "{i}", "odd": "{o}", "text": "{u} {i} {o}"},
        params={"u": big, "i": small, "o": odd},
    )
    assert out == {
        "max_u64": big,
        "min_i64": small,
        "odd": odd,
        "text": "18446744073709551615 -9223372036854775808 9007199254740993",
    }
    assert type(out["max_u64"]) is int
    assert strata.render("{f}", params={"f": 1e300}) == 1e300
    assert strata.render("[{f}]", params={"f": 0.1}) == "[0.1]"


def test_values_are_never_scanned_again() -> None:
    # A value that holds any layer's syntax arrives byte for byte.
    nasty = "{{b.result.token}} ${HOME} {input:f} ${state.n} {x} $${ {tool_path}"
    out = strata.render(
        {"pv": "{p}", "cv": "${state.c}", "iv": "{input:i}", "mixed": "<{p}|${state.c}|{input:i}>"},
        env={"HOME": "/home/ann"},
        params={"p": nasty, "x": "X"},
        context={"state": {"c": nasty, "n": 1}},
        inputs={"i": nasty, "f": "F"},
    )
    assert out == {"pv": nasty, "cv": nasty, "iv": nasty, "mixed": f"<{nasty}|{nasty}|{nasty}>"}


def test_map_keys_are_never_templated_and_non_strings_pass_through() -> None:
    doc = {"${HOME}": ["{x}", 1, 2.5, None, False, {"{x}": "{x}"}]}
    assert strata.render(doc, params={"x": "y"}, env={"HOME": "h"}) == {
        "${HOME}": ["y", 1, 2.5, None, False, {"{x}": "y"}]
    }


def test_config_keys_are_parameters_and_caller_params_cannot_override_them() -> None:
    doc = {"user": "${USER}", "greeting": "Hello {user}"}
    out = strata.render(doc, env={"USER": "ann"}, params={"user": "mallory"})
    assert out == {"user": "ann", "greeting": "Hello ann"}


def test_layers_choose_the_stages() -> None:
    doc = "{input:f} ${state.n} ${HOME} {x}"
    scope: dict[str, Any] = {
        "env": {"HOME": "h"},
        "params": {"x": "X"},
        "context": {"state": {"n": 1}},
        "inputs": {"f": "F"},
    }
    assert strata.render(doc, layers=["env"], **scope) == "{input:f} ${state.n} h {x}"
    assert strata.render(doc, layers=("params", "inputs"), **scope) == "F ${state.n} ${HOME} X"
    assert strata.Template(doc, layers=["context"]).layers == ["context"]
    assert strata.Template(doc).layers == ["inputs", "context", "env", "params"]


def test_a_template_compiles_once_and_renders_many_times() -> None:
    template = strata.Template({"cmd": "${BIN}", "n": "${state.n}"})
    for n in range(3):
        assert template.render(env={"BIN": "b"}, context={"state": {"n": n}}) == {"cmd": "b", "n": n}
    assert not template.is_constant
    assert strata.Template({"a": [1, "plain"]}).is_constant
    assert repr(template) == "<strata.Template layers=['inputs', 'context', 'env', 'params']>"


def test_each_render_returns_fresh_objects() -> None:
    template = strata.Template({"list": [1, 2], "x": "${state.v}"})
    first = template.render(context={"state": {"v": [1]}})
    first["list"].append(3)
    first["x"].append(2)
    assert template.render(context={"state": {"v": [1]}}) == {"list": [1, 2], "x": [1]}


def test_the_environment_is_only_what_env_says() -> None:
    assert strata.render("${HOME}", warnings=[]) == ""
    assert strata.render("${HOME}", env=os.environ) == os.environ["HOME"]


def test_any_mapping_is_accepted_where_a_dict_is() -> None:
    proxy = types.MappingProxyType({"n": types.MappingProxyType({"m": 1})})
    assert strata.render("${state.n.m}", context={"state": proxy}) == 1
    assert strata.render("{x}", params=types.MappingProxyType({"x": (1, 2)})) == [1, 2]


def test_missing_values_warn_through_the_warnings_module() -> None:
    with pytest.warns(strata.StrataWarning) as caught:
        assert strata.render({"a": "${state.x}", "b": "${NOPE}"}) == {"a": "", "b": ""}
    assert [str(w.message) for w in caught] == [
        "context warning at a 0..10: context path `state.x` not found",
        "env warning at b 0..7: environment variable `NOPE` is not set",
    ]
    first = caught[0].message
    assert isinstance(first, strata.StrataWarning)
    assert (first.layer, first.message, first.path, first.span) == (
        "context",
        "context path `state.x` not found",
        "a",
        (0, 10),
    )
    assert caught[0].filename == __file__


def test_warnings_go_to_a_list_when_one_is_given() -> None:
    collected: list[strata.StrataWarning] = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = strata.Template("{input:k} ${state.x}").render(warnings=collected)
    assert out == "{input:k} "
    assert [w.to_dict() for w in collected] == [
        {"layer": "inputs", "message": "input `k` is not set; the reference is kept as written", "path": "$", "span": [0, 9]},
        {"layer": "context", "message": "context path `state.x` not found", "path": "$", "span": [10, 20]},
    ]


def test_warnings_can_be_turned_into_errors() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", strata.StrataWarning)
        with pytest.raises(strata.StrataWarning, match="context path `state.x` not found"):
            strata.render("${state.x}")


def test_strict_makes_a_missing_value_an_error() -> None:
    with pytest.raises(strata.UndefinedError) as info:
        strata.render({"args": ["ok", "${state.x}"]}, strict=True)
    assert info.value.path == "args[1]"
    assert info.value.message == "context path `state.x` not found"


def test_secrets_are_redacted_on_request_and_never_in_warnings() -> None:
    env = {"TOKEN": "s3cr3t", "USER": "ann"}
    doc = {"auth": "Bearer ${TOKEN}", "token": "${TOKEN}", "user": "${USER}", "m": "${state.m}"}
    collected: list[strata.StrataWarning] = []
    plain = strata.render(doc, env=env, secrets=["TOKEN"], warnings=collected)
    assert plain == {"auth": "Bearer s3cr3t", "token": "s3cr3t", "user": "ann", "m": ""}
    redacted = strata.render(doc, env=env, secrets={"TOKEN"}, redacted=True, warnings=collected)
    assert redacted == {"auth": "Bearer ***", "token": "***", "user": "ann", "m": ""}
    assert all("s3cr3t" not in str(w) for w in collected)


def test_templates_render_from_many_threads() -> None:
    template = strata.Template({"n": "${state.n}", "s": "n={x}"})
    results: dict[int, Any] = {}

    def work(n: int) -> None:
        for _ in range(200):
            results[n] = template.render(params={"x": n}, context={"state": {"n": n}})

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {n: {"n": n, "s": f"n={n}"} for n in range(4)}


def test_integers_past_64_bits_cross_the_boundary_exact() -> None:
    big = 2**64 + 1
    small = -(2**63) - 1
    forty = 10**39 + 7
    rendered = strata.render({"x": "{a}", "y": "n={b}"}, params={"a": big, "b": forty}, layers=["params"])
    assert rendered == {"x": big, "y": f"n={forty}"}
    assert isinstance(rendered["x"], int)
    assert strata.render("{x}", params={"x": small}, layers=["params"]) == small
