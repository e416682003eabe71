"""strata.PromptManager: prompt templates from a directory or a dict, the lookup with its
fallback, switch, feeds, components and variants, pinning, undefined variables, the trace."""

from __future__ import annotations

import threading
import warnings
from pathlib import Path
from typing import Any, Callable

import pytest

import strata

# Seed 002's dict, as its agent passes it.
SEED: dict[str, Any] = {
    "main": {
        "default": "You are a helpful assistant.\n\nUser: {{ user_input }}",
        "BrowseLink": "You navigated to {{ context }}.\n\nUser: {{ user_input }}",
        "Search": "Search results:\n{{ action_result }}\n\nUser: {{ user_input }}",
    },
    "reflection": {"default": "Review your previous actions.\n{{ previous_states }}\n\n{{ user_input }}"},
}

# Seed 002's components: a plain one and two versioned ones.
COMPONENTS: dict[str, Any] = {
    "main": {
        "default": "{{ system_preamble }}\n\n{{ user_input }}\n\n{{ response_instructions }}",
        "Plain": "{{ footer }}: {{ user_input }}",
        "components": {
            "system_preamble": [
                {"version": "concise", "content": "You are a CFD assistant."},
                {"version": "detailed", "content": "You are a helpful AI assistant specializing in {{ domain }}."},
            ],
            "response_instructions": [
                {"version": "structured", "content": "Use XML tags for your response."},
                {"version": "freeform", "content": "Respond naturally."},
            ],
            "footer": "Question",
        },
    }
}


@pytest.fixture
def seed() -> strata.PromptManager:
    """The manager of seed 002's dict."""
    return strata.PromptManager(SEED)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A prompts/ tree: template files, a root space, a versioned file, and a dict file."""
    files = {
        "main/default.j2": "Hello {{ user_input }}",
        "main/BrowseLink.j2": "Page {{ context }}",
        "main/BrowseLink.enterprise.md": "Enterprise page {{ context }}",
        "action_agent/main/Search.txt": "Agent search {{ action_result }}",
        "templates.yaml": "reflection:\n  default: |\n    Review: {{ user_input }}\n",
    }
    for name, text in files.items():
        path = tmp_path / "prompts" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path / "prompts"


def test_the_seeds_dict_renders_by_key_with_the_fallback(seed: strata.PromptManager) -> None:
    feed = {"user_input": "Hi", "context": "example.org", "action_result": "3 hits"}
    assert seed.render("BrowseLink", feed=feed) == "You navigated to example.org.\n\nUser: Hi"
    assert seed.render("Search", feed=feed) == "Search results:\n3 hits\n\nUser: Hi"
    # Seed 002's iteration 1: no anchor action yet, so the key is None: main/default.
    assert seed.render(None, feed=feed) == "You are a helpful assistant.\n\nUser: Hi"
    assert seed.render(feed=feed) == "You are a helpful assistant.\n\nUser: Hi"
    assert seed.render("SubmitForm", feed=feed) == "You are a helpful assistant.\n\nUser: Hi"
    assert seed.resolve("SubmitForm") == "main/default"
    assert seed.resolve("BrowseLink") == "main/BrowseLink"


def test_a_directory_loads_files_and_dicts_mixed(tree: Path) -> None:
    prompts = strata.PromptManager(tree)
    assert prompts.render("BrowseLink", feed={"context": "c"}) == "Page c"
    assert prompts.render("reflection/x", feed={"user_input": "u"}) == "Review: u"
    assert prompts.render("BrowseLink", version="enterprise", feed={"context": "c"}) == "Enterprise page c"
    assert prompts.render("Search", root_space="action_agent", feed={"action_result": "r"}) == "Agent search r"
    assert strata.PromptManager(str(tree)).resolve("x") == "main/default"


def test_templates_lists_every_template_with_its_place_and_hash(tree: Path) -> None:
    listed = strata.PromptManager(tree).templates()
    assert [(t["id"], t["namespace"], t["name"], t["version"], t["component"]) for t in listed] == [
        ("action_agent/main/Search", "action_agent/main", "Search", None, False),
        ("main/BrowseLink.enterprise", "main", "BrowseLink", "enterprise", False),
        ("main/BrowseLink", "main", "BrowseLink", None, False),
        ("main/default", "main", "default", None, False),
        ("reflection/default", "reflection", "default", None, False),
    ]
    first = listed[0]
    assert (first["file"], first["line"], first["column"]) == (f"{tree}/action_agent/main/Search.txt", 1, 1)
    assert first["reads"] == ["action_result"]
    assert len(first["hash"]) == 64
    yaml = listed[-1]
    assert (yaml["file"], yaml["line"], yaml["column"]) == (f"{tree}/templates.yaml", 3, 5)
    components = strata.PromptManager(COMPONENTS).templates()
    assert [(t["id"], t["name"], t["version"], t["component"]) for t in components if t["component"]] == [
        ("main/components/system_preamble.concise", "system_preamble", "concise", True),
        ("main/components/system_preamble.detailed", "system_preamble", "detailed", True),
        ("main/components/response_instructions.structured", "response_instructions", "structured", True),
        ("main/components/response_instructions.freeform", "response_instructions", "freeform", True),
        ("main/components/footer", "footer", None, True),
    ]


def test_the_lookup_walks_the_root_space_its_ancestors_the_type_and_the_top() -> None:
    prompts = strata.PromptManager(
        {
            "org": {"team": {"main": {"Search": "team search"}}, "main": {"BrowseLink": "org browse"}},
            "main": {"Answer": "main answer", "Answer.enterprise": "enterprise answer"},
            "default": "top default",
        },
        root_space="org/team",
        default_template="the configured default",
    )
    assert prompts.render("Search") == "team search"
    assert prompts.render("BrowseLink") == "org browse"
    assert prompts.render("Answer") == "main answer"
    assert prompts.render("Answer", version="enterprise") == "enterprise answer"
    assert prompts.render("Other") == "top default"
    assert prompts.render("Other", type="nothing") == "top default"
    no_top = strata.PromptManager({"main": {"Search": "s"}}, default_template="fallback {{ n }}")
    assert no_top.render("Other", feed={"n": 1}) == "fallback 1"


def test_explain_gives_every_candidate_in_order_and_the_winner(seed: strata.PromptManager) -> None:
    trace = seed.explain("BrowseLink", root_space="action_agent", feed={"context": "c", "user_input": "u"})
    assert trace == {
        "key": "BrowseLink",
        "settings": "type main, root space action_agent, version none, default name default, merge feed_only",
        "candidates": [
            {"id": "action_agent/main/BrowseLink", "file": None, "won": False},
            {"id": "action_agent/main/default", "file": None, "won": False},
            {"id": "main/BrowseLink", "file": "templates", "won": True},
            {"id": "main/default", "file": "templates", "won": False},
            {"id": "default", "file": None, "won": False},
        ],
        "variables": [
            {"name": "context", "source": "feed", "value": '"c"'},
            {"name": "user_input", "source": "feed", "value": '"u"'},
        ],
    }
    trace = seed.explain(None, version="v2", feed={"user_input": "u"}, knowledge={"user_input": "k"})
    assert [c["id"] for c in trace["candidates"]] == ["main/default.v2", "main/default", "default.v2", "default"]
    assert [c["won"] for c in trace["candidates"]] == [False, True, False, False]
    assert trace["key"] is None
    assert trace["variables"] == [{"name": "user_input", "source": "feed+knowledge", "value": '"k"'}]


def test_nothing_found_lists_every_candidate_tried() -> None:
    prompts = strata.PromptManager({"main": {"Search": "s"}}, root_space="a/b", version="v1")
    with pytest.raises(strata.PromptError) as info:
        prompts.render("BrowseLink")
    e = info.value
    assert (e.kind, e.layer) == ("template_not_found", "prompt")
    assert e.message == (
        "no template for key `BrowseLink`: tried a/b/main/BrowseLink.v1, a/b/main/BrowseLink, "
        "a/b/main/default.v1, a/b/main/default, a/main/BrowseLink.v1, a/main/BrowseLink, "
        "a/main/default.v1, a/main/default, main/BrowseLink.v1, main/BrowseLink, main/default.v1, "
        "main/default, default.v1, default"
    )
    assert e.hint == "add one of them, or a `default` template at the top of prompts/"
    assert prompts.resolve("BrowseLink") is None


def test_switch_returns_a_new_manager_and_leaves_the_old_one_unchanged(seed: strata.PromptManager) -> None:
    feed = {"user_input": "u", "previous_states": "p"}
    reflect = seed.switch(type="reflection")
    assert reflect.render("BrowseLink", feed=feed) == "Review your previous actions.\np\n\nu"
    assert seed.render("BrowseLink", feed={"context": "c", "user_input": "u"}) == "You navigated to c.\n\nUser: u"
    assert (seed.type, reflect.type) == ("main", "reflection")
    versioned = seed.switch(version="enterprise", root_space="agent", default_name="fallback")
    assert (versioned.version, versioned.root_space, versioned.default_name) == ("enterprise", "agent", "fallback")
    assert (seed.version, seed.root_space, seed.default_name) == (None, None, "default")
    # Left out keeps a setting; None clears an optional one.
    cleared = versioned.switch(version=None)
    assert (cleared.version, cleared.root_space) == (None, "agent")
    assert versioned.switch(root_space=None).root_space is None
    assert repr(versioned) == (
        "<strata.PromptManager type='main' root_space='agent' version='enterprise' default_name='fallback'>"
    )


def test_per_call_settings_apply_to_that_call_only(seed: strata.PromptManager) -> None:
    feed = {"user_input": "u", "previous_states": "p", "context": "c"}
    assert seed.render("BrowseLink", type="reflection", feed=feed) == "Review your previous actions.\np\n\nu"
    assert seed.render("reflection/BrowseLink", feed=feed) == "Review your previous actions.\np\n\nu"
    assert seed.render("BrowseLink", feed=feed) == "You navigated to c.\n\nUser: u"
    versioned = seed.switch(version="v9")
    assert versioned.explain("BrowseLink", version=None, feed=feed)["settings"] == (
        "type main, root space none, version none, default name default, merge feed_only"
    )
    assert versioned.explain("BrowseLink", feed=feed)["settings"] == (
        "type main, root space none, version v9, default name default, merge feed_only"
    )
    named = strata.PromptManager({"main": {"fallback": "F", "default": "D"}})
    assert named.render("x", default_name="fallback") == "F"
    assert named.render("x") == "D"


def test_predefined_variables_sit_below_the_feed_and_knowledge_above_it() -> None:
    prompts = strata.PromptManager(
        {"main": {"default": "{{ a }} {{ b }} {{ c }}"}},
        predefined_variables={"a": "pre-a", "b": "pre-b", "c": "pre-c"},
    )
    assert prompts.render(feed={"b": "feed-b", "c": "feed-c"}, knowledge={"c": "know-c"}) == "pre-a feed-b know-c"
    assert prompts.predefined_variables == {"a": "pre-a", "b": "pre-b", "c": "pre-c"}
    assert prompts.switch(predefined_variables={"a": "new"}).render(warnings=[]) == "new  "
    assert prompts.switch(predefined_variables=None).predefined_variables == {}


def test_the_merge_strategies() -> None:
    prompts = strata.PromptManager({"main": {"default": "{{ s }}|{{ l }}|{{ m }}|{{ only }}"}})
    feed = {"s": "feed", "l": [1], "m": {"x": "a", "y": [1]}}
    knowledge = {"s": "know", "l": [2, 3], "m": {"x": "b", "w": True}, "only": "k"}
    assert prompts.render(feed=feed, knowledge=knowledge) == 'know|[2,3]|{"x":"b","w":true}|k'
    assert prompts.render(feed=feed, knowledge=knowledge, merge="feed_only") == 'know|[2,3]|{"x":"b","w":true}|k'
    assert prompts.render(feed=feed, knowledge=knowledge, merge="attribute_only") == 'feed|[1]|{"x":"a","y":[1]}|k'
    assert prompts.render(feed=feed, knowledge=knowledge, merge="merge") == (
        'feed\n\nknow|[1,2,3]|{"x":"a\\n\\nb","y":[1],"w":true}|k'
    )


def test_feed_values_are_data_never_rendered() -> None:
    prompts = strata.PromptManager({"main": {"default": "<{{ a }}|{{ b }}|{{ c }}|{{ d }}>"}})
    feed = {
        "a": "{{ secret }}",
        "b": "{% include '/etc/passwd' %}",
        "c": "${HOME} {name} {input:k} {{b.result.token}}",
        "d": ["{{ x }}"],
    }
    out = prompts.render(feed=feed, knowledge={"secret": "leaked", "x": "leaked"})
    assert out == '<{{ secret }}|{% include \'/etc/passwd\' %}|${HOME} {name} {input:k} {{b.result.token}}|["{{ x }}"]>'


def test_values_print_as_layer_c_prints_them() -> None:
    prompts = strata.PromptManager({"main": {"default": "{{ n }}|{{ t }}|{{ f }}|{{ big }}|{{ x }}|{{ l }}|{{ m }}|{{ h }}"}})
    feed = {"n": None, "t": True, "f": 0.5, "big": 2**64 - 1, "x": 10000000, "l": [1, "a"], "m": {"k": None}, "h": "<b>"}
    assert prompts.render(feed=feed) == '|true|0.5|18446744073709551615|10000000|[1,"a"]|{"k":null}|<b>'


def test_components_render_with_the_feed_and_versioned_ones_give_every_variant() -> None:
    prompts = strata.PromptManager(COMPONENTS)
    assert prompts.render("Plain", feed={"user_input": "u"}) == "Question: u"
    variants = prompts.variants(feed={"user_input": "u", "domain": "CFD"})
    assert variants == [
        {
            "versions": {"system_preamble": "concise", "response_instructions": "structured"},
            "text": "You are a CFD assistant.\n\nu\n\nUse XML tags for your response.",
        },
        {
            "versions": {"system_preamble": "concise", "response_instructions": "freeform"},
            "text": "You are a CFD assistant.\n\nu\n\nRespond naturally.",
        },
        {
            "versions": {"system_preamble": "detailed", "response_instructions": "structured"},
            "text": "You are a helpful AI assistant specializing in CFD.\n\nu\n\nUse XML tags for your response.",
        },
        {
            "versions": {"system_preamble": "detailed", "response_instructions": "freeform"},
            "text": "You are a helpful AI assistant specializing in CFD.\n\nu\n\nRespond naturally.",
        },
    ]
    assert prompts.variants("Plain", feed={"user_input": "u"}) == [{"versions": {}, "text": "Question: u"}]
    pinned = prompts.variants(feed={"user_input": "u"}, pins={"system_preamble": "concise"})
    assert [v["versions"] for v in pinned] == [
        {"system_preamble": "concise", "response_instructions": "structured"},
        {"system_preamble": "concise", "response_instructions": "freeform"},
    ]
    one = prompts.render(feed={"user_input": "u"}, pins={"system_preamble": "concise", "response_instructions": "freeform"})
    assert one == "You are a CFD assistant.\n\nu\n\nRespond naturally."


def test_render_refuses_several_variants() -> None:
    prompts = strata.PromptManager(COMPONENTS)
    with pytest.raises(strata.StrataError) as info:
        prompts.render(feed={"user_input": "u", "domain": "CFD"}, pins={"response_instructions": "freeform"})
    e = info.value
    assert type(e) is strata.StrataError
    assert (e.kind, e.layer) == ("request", "prompt")
    assert e.message == (
        "template `main/default` has 2 variants "
        "(system_preamble=concise, response_instructions=freeform; system_preamble=detailed, response_instructions=freeform)"
    )
    assert e.hint == "call variants() to get them all, or pin each versioned component with pins={component: version}"


def test_a_pin_must_name_a_component_and_one_of_its_versions() -> None:
    prompts = strata.PromptManager(COMPONENTS)
    with pytest.raises(strata.StrataError) as info:
        prompts.variants(pins={"system_preambel": "concise"}, feed={"user_input": "u"})
    assert (info.value.kind, info.value.message, info.value.hint) == (
        "unknown_name",
        "template `main/default` has no component `system_preambel`",
        "did you mean `system_preamble`?",
    )
    with pytest.raises(strata.StrataError) as info:
        prompts.variants(pins={"system_preamble": "concize"}, feed={"user_input": "u"})
    assert (info.value.message, info.value.hint) == (
        "component `system_preamble` has no version `concize`",
        "did you mean `concise`?",
    )


def test_a_pinned_hash_freezes_the_template(tree: Path) -> None:
    prompts = strata.PromptManager(tree)
    digest = next(t["hash"] for t in prompts.templates() if t["id"] == "main/BrowseLink")
    assert prompts.render("BrowseLink", feed={"context": "c"}, hash=digest) == "Page c"
    assert prompts.render("BrowseLink", feed={"context": "c"}, hash=digest[:8].upper()) == "Page c"
    (tree / "main" / "BrowseLink.j2").write_text("Page {{ context }}!")
    with pytest.raises(strata.PromptError) as info:
        strata.PromptManager(tree).render("BrowseLink", feed={"context": "c"}, hash=digest)
    e = info.value
    assert (e.kind, e.file, e.line, e.column) == ("hash_mismatch", f"{tree}/main/BrowseLink.j2", 1, 1)
    changed = next(t["hash"] for t in strata.PromptManager(tree).templates() if t["id"] == "main/BrowseLink")
    assert e.message == (
        f"template `main/BrowseLink` ({tree}/main/BrowseLink.j2) does not match the pinned hash `{digest}`: "
        f"its content hash is `{changed}`"
    )
    assert e.hint == "the template changed since it was pinned: review the change, then pin the new hash"
    with pytest.raises(strata.StrataError) as bad:
        prompts.render("BrowseLink", hash="xyz")
    assert (bad.value.kind, bad.value.message) == ("request", "`xyz` is not a content hash")


def test_undefined_variables_warn_and_strict_makes_them_errors() -> None:
    prompts = strata.PromptManager({"main": {"default": "Hi {{ name }}{% if title is defined %} {{ title }}{% endif %}"}})
    with pytest.warns(strata.StrataWarning) as caught:
        assert prompts.render() == "Hi "
    assert [str(w.message) for w in caught] == [
        "prompt warning at $: undefined variable `name` in template `main/default` (templates:1:7)"
    ]
    assert caught[0].filename == __file__
    collected: list[strata.StrataWarning] = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert prompts.render(warnings=collected) == "Hi "
    assert [w.to_dict() for w in collected] == [
        {
            "layer": "prompt",
            "message": "undefined variable `name` in template `main/default` (templates:1:7)",
            "path": "$",
            "span": None,
        }
    ]
    assert prompts.render(strict=True, feed={"name": "Ann"}) == "Hi Ann"
    with pytest.raises(strata.UndefinedError) as info:
        prompts.render(strict=True)
    e = info.value
    assert (e.kind, e.layer, e.file, e.line, e.column) == ("undefined", "prompt", "templates", 1, 7)
    assert e.message == "undefined variable `name` in template `main/default`"
    assert e.hint == "strict mode: give the variable a value, or guard it with `{% if x is defined %}`"


def test_secret_variables_never_show_in_the_trace() -> None:
    prompts = strata.PromptManager({"main": {"default": "Token: {{ token }}"}})
    assert prompts.render(feed={"token": "s3cr3t"}, secrets=["token"]) == "Token: s3cr3t"
    trace = prompts.explain(feed={"token": "s3cr3t", "user": "ann"}, secrets=["token"])
    assert trace["variables"] == [
        {"name": "token", "source": "feed", "value": "***"},
        {"name": "user", "source": "feed", "value": '"ann"'},
    ]


def test_template_errors_name_the_file_line_and_column(tree: Path) -> None:
    with pytest.raises(strata.TemplateSyntaxError) as info:
        strata.PromptManager({"main": {"default": "Hi\n{{ name "}})
    e = info.value
    assert (e.kind, e.layer, e.file, e.line, e.column) == ("syntax", "prompt", "templates", 2, 4)
    assert e.message == "template `main/default`: unexpected end of input, expected end of variable block"
    (tree / "main" / "Search.j2").write_text("ok\n  {% if %}")
    with pytest.raises(strata.TemplateSyntaxError) as info:
        strata.PromptManager(tree)
    assert (info.value.file, info.value.line, info.value.column) == (f"{tree}/main/Search.j2", 2, 9)


def test_a_tree_that_does_not_load_is_an_error(tree: Path) -> None:
    (tree / "main" / "more.yaml").write_text("default: again\n")
    with pytest.raises(strata.StrataError) as info:
        strata.PromptManager(tree)
    assert info.value.message == (
        f"template `main/default` is defined twice: in {tree}/main/default.j2 and in {tree}/main/more.yaml:1:10"
    )
    with pytest.raises(strata.StrataError) as info:
        strata.PromptManager(tree / "missing")
    assert (info.value.kind, info.value.message) == (
        "io",
        f"cannot read `{tree}/missing`: No such file or directory (os error 2)",
    )
    with pytest.raises(strata.StrataError) as info:
        strata.PromptManager({"main": {"default": 3}})
    assert (info.value.kind, info.value.path, info.value.message) == (
        "invalid",
        "main.default",
        "`default` must be a template (a string) or a namespace (a map)",
    )


def test_settings_that_lead_out_of_the_tree_are_forbidden(seed: strata.PromptManager) -> None:
    makers: list[Callable[[], object]] = [
        lambda: strata.PromptManager(SEED, root_space="../x"),
        lambda: seed.switch(root_space="../x"),
        lambda: seed.render("x", root_space="../x"),
    ]
    for make in makers:
        with pytest.raises(strata.StrataError) as info:
            make()
        assert (info.value.kind, info.value.message) == (
            "forbidden",
            "root space `../x` would lead outside the prompts tree",
        )


def test_bad_arguments_name_the_argument_and_the_path() -> None:
    # Typed as Any: these calls are wrong on purpose.
    PromptManager: Any = strata.PromptManager
    seed: Any = PromptManager(SEED)
    cases: list[tuple[Callable[[], object], type, str]] = [
        (lambda: PromptManager(3), TypeError, "templates: expected a dict of templates or a directory (str or os.PathLike), got int"),
        (lambda: PromptManager({"main": {"default": b"x"}}), TypeError, "templates['main']['default']: bytes are not a JSON value (decode them to str first)"),
        (lambda: PromptManager(SEED, type=1), TypeError, "type: expected str, got int"),
        (lambda: PromptManager(SEED, predefined_variables=[1]), TypeError, "predefined_variables: expected a dict, got list"),
        (lambda: PromptManager(SEED, default_template=None, version=2.5), TypeError, "version: expected str, got float"),
        (lambda: seed.render(3), TypeError, "key: expected str, got int"),
        (lambda: seed.render(feed={"x": {1}}), TypeError, "feed['x']: a set is not a JSON value (use a list)"),
        (lambda: seed.render(knowledge={"x": [float("nan")]}), ValueError, "knowledge['x'][0]: NaN is not a JSON value"),
        (lambda: seed.render(feed=["x"]), TypeError, "feed: expected a dict, got list"),
        (lambda: seed.render(merge="concat"), ValueError, "merge: unknown strategy `concat` (the strategies are feed_only, attribute_only, merge)"),
        (lambda: seed.render(merge=1), TypeError, "merge: expected str, got int"),
        (lambda: seed.render(pins={"a": 1}), TypeError, "pins['a']: expected str, got int"),
        (lambda: seed.render(pins=[("a", "b")]), TypeError, "pins: expected a dict, got list"),
        (lambda: seed.render(hash=1), TypeError, "hash: expected str, got int"),
        (lambda: seed.render(strict="yes"), TypeError, "strict: expected bool, got str"),
        (lambda: seed.render(secrets="token"), TypeError, "secrets: expected a collection of str, got a str (wrap it in a list)"),
        (lambda: seed.render(warnings=()), TypeError, "warnings: expected a list to append the warnings to"),
        (lambda: seed.render(root_space=1), TypeError, "root_space: expected str or None, got int"),
        (lambda: seed.render(type=None), TypeError, "type: expected str, got NoneType"),
        (lambda: seed.switch(version=[]), TypeError, "version: expected str or None, got list"),
        (lambda: seed.switch(default_name=None), TypeError, "default_name: expected str, got NoneType"),
        (lambda: seed.switch(predefined_variables={"x": {1}}), TypeError, "predefined_variables['x']: a set is not a JSON value (use a list)"),
        (lambda: seed.resolve(1), TypeError, "key: expected str, got int"),
    ]
    for make, error, message in cases:
        with pytest.raises(error) as info:
            make()
        assert (type(info.value), str(info.value)) == (error, message)
    with pytest.raises(TypeError, match="bogus"):
        seed.render(bogus=1)
    with pytest.raises(TypeError, match="positional"):
        seed.switch("reflection")


def test_a_manager_renders_from_many_threads(seed: strata.PromptManager) -> None:
    results: dict[int, str] = {}

    def work(n: int) -> None:
        for _ in range(200):
            results[n] = seed.render("BrowseLink", feed={"context": n, "user_input": "u"})

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {n: f"You navigated to {n}.\n\nUser: u" for n in range(4)}


# Issue 27: seed-fidelity edges.


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / "prompts" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root / "prompts"


def test_a_double_quoted_yaml_template_places_an_undefined_variable_through_its_escapes(tmp_path: Path) -> None:
    prompts = strata.PromptManager(
        write_tree(
            tmp_path,
            {"t.yaml": 'main:\n  default: "Hi\\n\\nUser: {{ user_input }}"\n  Search: "Results:\\n{{ results }}\\n"\n'},
        )
    )
    caught: list[strata.StrataWarning] = []
    assert prompts.render("Search", warnings=caught) == "Results:\n"
    assert [str(w) for w in caught] == [
        f"prompt warning at $: undefined variable `results` in template `main/Search` ({tmp_path}/prompts/t.yaml:3:25)"
    ]
    caught.clear()
    assert prompts.render(warnings=caught) == "Hi\n\nUser: "
    assert [str(w) for w in caught] == [
        f"prompt warning at $: undefined variable `user_input` in template `main/default` ({tmp_path}/prompts/t.yaml:2:28)"
    ]


def test_a_key_no_template_is_named_after_warns_with_a_did_you_mean(seed: strata.PromptManager) -> None:
    caught: list[strata.StrataWarning] = []
    assert seed.render("Serch", feed={"user_input": "Hi"}, warnings=caught) == "You are a helpful assistant.\n\nUser: Hi"
    assert [str(w) for w in caught] == [
        "prompt warning at $: key `Serch` fell back to `main/default`: no template anywhere in prompts/ "
        "is named `Serch` (did you mean `Search`?)"
    ]
    # The default name, no key, and a key some namespace defines are no typos.
    caught.clear()
    seed.render(None, feed={"user_input": "Hi"}, warnings=caught)
    seed.render("default", feed={"user_input": "Hi"}, warnings=caught)
    seed.render("Search", type="reflection", feed={"user_input": "Hi", "previous_states": ""}, warnings=caught)
    assert caught == []
    # `unknown_key` is only there for such a key (`PromptExplain` does not type it yet).
    trace: dict[str, Any] = dict(seed.explain("Serch", feed={"user_input": "Hi"}, warnings=[]))
    assert trace["unknown_key"] == {"name": "Serch", "did_you_mean": "Search"}
    assert "unknown_key" not in seed.explain("Search", feed={"user_input": "Hi"})


def test_feed_keys_in_braces_name_the_variable_inside(seed: strata.PromptManager) -> None:
    # Seed 002 writes its feed this way: {"{{ user_input }}": ...}.
    feed = {"{{ user_input }}": "Hi", "{{context}}": "example.org"}
    assert seed.render("BrowseLink", feed=feed, warnings=[]) == "You navigated to example.org.\n\nUser: Hi"
    assert seed.render(knowledge={"{{ user_input }}": "K"}, warnings=[]) == "You are a helpful assistant.\n\nUser: K"
    with pytest.raises(strata.StrataError, match=r"feed key `\{\{ a\.b \}\}` is not a variable name"):
        seed.render(feed={"{{ a.b }}": 1})
    with pytest.raises(strata.StrataError, match="feed gives variable `user_input` twice"):
        seed.render(feed={"{{ user_input }}": "a", "user_input": "b"})


def test_a_template_files_trailing_newline_is_dropped_as_jinja_does(tmp_path: Path) -> None:
    prompts = strata.PromptManager(
        write_tree(tmp_path, {"main/components/sig.txt": "Bye.\n", "main/default.j2": "{{ sig }}\nEnd.\n"})
    )
    assert prompts.render() == "Bye.\nEnd."


def test_the_configured_default_template_is_the_last_fallback(tmp_path: Path) -> None:
    prompts = strata.PromptManager(
        write_tree(tmp_path, {"main/Search.j2": "Results"}), default_template="Fallback: {{ user_input }}"
    )
    assert prompts.render("Search", type="reflection", feed={"user_input": "q"}, warnings=[]) == "Fallback: q"


def test_main_components_are_not_visible_to_ops_main_templates(tmp_path: Path) -> None:
    prompts = strata.PromptManager(
        write_tree(
            tmp_path,
            {
                "main/components/tone.txt": "Be brief.",
                "components/footer.txt": "Thanks.",
                "main/Ask.j2": "{{ tone }}\nAsk: {{ user_input }}\n{{ footer }}",
                "ops/main/Ask.j2": "{{ tone }}\nOps: {{ user_input }}\n{{ footer }}",
            },
        )
    )
    assert prompts.render("Ask", feed={"user_input": "q"}) == "Be brief.\nAsk: q\nThanks."
    caught: list[strata.StrataWarning] = []
    assert prompts.render("Ask", root_space="ops", feed={"user_input": "q"}, warnings=caught) == "\nOps: q\nThanks."
    assert [str(w) for w in caught] == [
        f"prompt warning at $: undefined variable `tone` in template `ops/main/Ask` ({tmp_path}/prompts/ops/main/Ask.j2:1:4)"
    ]
