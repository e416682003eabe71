"""Values that are not plain JSON-like data: a TypeError or ValueError naming the argument and
the path, never a crash."""

from __future__ import annotations

import collections
import collections.abc
import gc
import sys
from typing import Any, Iterator

import pytest

import strata


def self_containing_dict() -> dict[str, Any]:
    d: dict[str, Any] = {"ok": 1}
    d["again"] = {"inner": d}
    return d


def self_containing_list() -> list[Any]:
    items: list[Any] = [1]
    items.append(items)
    return items


def nested(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("value", "error", "message"),
    [
        ({"s": {1, 2}}, TypeError, "params['s']: a set is not a JSON value (use a list)"),
        ({"s": frozenset()}, TypeError, "params['s']: a set is not a JSON value (use a list)"),
        ({"b": b"x"}, TypeError, "params['b']: bytes are not a JSON value (decode them to str first)"),
        ({"b": [bytearray(b"x")]}, TypeError, "params['b'][0]: bytes are not a JSON value (decode them to str first)"),
        (
            {"o": object()},
            TypeError,
            "params['o']: object is not a JSON value (use dict, list, tuple, str, int, float, bool or None)",
        ),
        (
            {"c": 1j},
            TypeError,
            "params['c']: complex is not a JSON value (use dict, list, tuple, str, int, float, bool or None)",
        ),
        ({"f": float("nan")}, ValueError, "params['f']: NaN is not a JSON value"),
        ({"f": [0, float("inf")]}, ValueError, "params['f'][1]: an infinite float is not a JSON value"),
        ({"f": -float("inf")}, ValueError, "params['f']: an infinite float is not a JSON value"),
        ({1: "x"}, TypeError, "params: keys must be str, not int"),
        ({"a": {("t",): 1}}, TypeError, "params['a']: keys must be str, not tuple"),
        ({"s": "\ud800"}, ValueError, "params['s']: str is not valid Unicode (it holds a lone surrogate)"),
        ({"\udfff": 1}, ValueError, "params: str is not valid Unicode (it holds a lone surrogate)"),
        (self_containing_dict(), ValueError, "params['again']['inner']: the dict contains itself (recursion)"),
        ({"l": self_containing_list()}, ValueError, "params['l'][1]: the list contains itself (recursion)"),
        ({"deep": nested(200)}, ValueError, "params['deep']" + "[0]" * 127 + ": nested deeper than 128 levels"),
        ({"it's": {"q\"": set()}}, TypeError, "params[\"it's\"]['q\"']: a set is not a JSON value (use a list)"),
    ],
)
def test_a_bad_value_names_the_argument_and_path(value: Any, error: type, message: str) -> None:
    with pytest.raises(error) as info:
        strata.render("x", params=value)
    assert type(info.value) is error
    assert str(info.value) == message


def test_every_argument_names_itself() -> None:
    bad = {"x": {1}}
    for arg in ["params", "context", "inputs"]:
        kwargs: dict[str, Any] = {arg: bad}
        with pytest.raises(TypeError, match=rf"^{arg}\['x'\]: a set"):
            strata.render("x", **kwargs)
    with pytest.raises(TypeError, match=r"^template\['a'\]\[0\]: a set"):
        strata.render({"a": [set()]})
    with pytest.raises(TypeError, match=r"^template\['a'\]: a set"):
        strata.Template({"a": set()})
    with pytest.raises(TypeError, match=r"^params\['x'\]: a set"):
        strata.Template("x").render(params=bad)


def test_arguments_of_the_wrong_type() -> None:
    cases: list[tuple[dict[str, Any], type, str]] = [
        ({"params": [1]}, TypeError, "params: expected a dict, got list"),
        ({"context": "state"}, TypeError, "context: expected a dict, got str"),
        ({"inputs": 3}, TypeError, "inputs: expected a dict, got int"),
        ({"env": {"HOME": 1}}, TypeError, "env['HOME']: expected str, got int"),
        ({"env": {"HOME": None}}, TypeError, "env['HOME']: expected str, got None"),
        ({"env": ["HOME"]}, TypeError, "env: expected a dict, got list"),
        ({"secrets": "TOKEN"}, TypeError, "secrets: expected a collection of str, got a str (wrap it in a list)"),
        ({"secrets": [b"TOKEN"]}, TypeError, "secrets[0]: expected str, got bytes"),
        ({"secrets": 5}, TypeError, "secrets: expected a collection of str, got int"),
        ({"layers": "env"}, TypeError, "layers: expected a collection of str, got a str (wrap it in a list)"),
        ({"layers": ["env", 2]}, TypeError, "layers[1]: expected str, got int"),
        (
            {"layers": ["env", "envv"]},
            ValueError,
            "layers: unknown layer `envv` (the layers are inputs, context, env, params)",
        ),
        ({"warnings": ()}, TypeError, "warnings: expected a list to append the warnings to"),
    ]
    for kwargs, error, message in cases:
        with pytest.raises(error) as info:
            strata.render("x", **kwargs)
        assert (type(info.value), str(info.value)) == (error, message), kwargs


def test_flags_must_be_bools() -> None:
    for arg in ["strict", "redacted"]:
        kwargs: dict[str, Any] = {arg: "yes"}
        with pytest.raises(TypeError) as info:
            strata.render("x", **kwargs)
        assert str(info.value) == f"{arg}: expected bool, got str"
        kwargs = {arg: 1}
        with pytest.raises(TypeError) as info:
            strata.Template("x").render(**kwargs)
        assert str(info.value) == f"{arg}: expected bool, got int"


def test_call_mistakes_are_type_errors() -> None:
    with pytest.raises(TypeError, match="positional"):
        strata.render("x", {"x": 1})  # type: ignore[call-arg, dict-item]
    with pytest.raises(TypeError, match="bogus"):
        strata.render("x", bogus=1)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="template"):
        strata.Template()  # type: ignore[call-arg]


def test_int_and_str_subclasses_and_tuples_are_plain_data() -> None:
    class Level(int):
        pass

    class Name(str):
        pass

    Pair = collections.namedtuple("Pair", "a b")
    out = strata.render("{v}", params={"v": [Level(3), Name("ann"), Pair(1, 2), True]})
    assert out == [3, "ann", [1, 2], True]
    assert [type(x) for x in out] == [int, str, list, bool]


class Meddling(collections.abc.Mapping[str, Any]):
    """A mapping whose items() changes the containers holding it."""

    def __init__(self, victims: list[Any]) -> None:
        self.victims = victims

    def __getitem__(self, key: str) -> Any:
        return 1

    def __iter__(self) -> Iterator[str]:
        return iter(["a"])

    def __len__(self) -> int:
        return 1

    def items(self) -> Any:
        for victim in self.victims:
            if isinstance(victim, dict):
                victim[f"new{len(victim)}"] = 1
            else:
                victim.append(Meddling([]))
        return [("a", 1)]


def test_a_container_changed_while_it_is_converted_is_read_as_it_was() -> None:
    outer: dict[str, Any] = {"z": 0}
    outer["m"] = Meddling([outer])
    assert strata.render("{m}", params=outer) == {"a": 1}
    assert list(outer) == ["z", "m", "new2"]
    items: list[Any] = [0]
    items.append(Meddling([items]))
    assert strata.render("{items}", params={"items": items}) == [0, {"a": 1}]
    assert len(items) == 3


def test_a_mapping_whose_items_are_not_pairs_is_a_type_error() -> None:
    class Odd(Meddling):
        def items(self) -> Any:
            return [1]

    with pytest.raises(TypeError) as info:
        strata.render("x", params={"o": Odd([])})
    assert str(info.value) == "params['o']: the mapping's items() must be (key, value) pairs"


def test_nothing_leaks_when_conversion_fails() -> None:
    bad = {"a": [1, 2, {"b": float("nan")}]}
    gc.collect()
    before = sys.getrefcount(bad)
    for _ in range(1000):
        with pytest.raises(ValueError):
            strata.render("x", params=bad)
    assert sys.getrefcount(bad) == before


def test_the_deepest_accepted_nesting_renders() -> None:
    assert strata.render("${state.v}", context={"state": {"v": nested(125)}}) == nested(125)
