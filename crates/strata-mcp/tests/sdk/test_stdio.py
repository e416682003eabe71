"""`strata mcp` over stdio, driven by the official MCP Python SDK: both negotiations, every
kind of item, errors, a refused tool, prompts, resources, completion, progress, cancellation,
concurrent calls and the canary secret (searched for in every byte received, by the
`project` fixture)."""

import json
import re
import time
from typing import Any

import anyio
import pytest

from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp.types import PromptReference, ResourceTemplateReference

from conftest import Project, stdio_params

pytestmark = pytest.mark.anyio

NAMES = [
    "run_plan",
    "broken",
    "card",
    "echo",
    "leak",
    "leak_fail",
    "slow",
    "directives.hello.md",
    "directives.logged.md",
    "plans.two.yaml",
    "plans.wait.yaml",
]


def client(project: Project, mode: str = "legacy", *extra: str) -> Client:
    return Client(stdio_params(project, *extra), mode=mode)


async def test_initialize_and_list_every_item(project: Project, mode: str) -> None:
    async with client(project, mode) as c:
        tools = {t.name: t for t in (await c.list_tools()).tools}
        assert list(tools) == NAMES
        echo = tools["echo"]
        assert echo.title == "Tool echo"
        assert echo.description == "Prints a message"
        assert echo.input_schema == {
            "type": "object",
            "properties": {
                "message": {"type": "string", "description": "The text to print", "default": "hello"}
            },
        }
        assert echo.annotations is not None and echo.annotations.read_only_hint is True
        assert tools["leak"].annotations is not None
        assert tools["leak"].annotations.read_only_hint is False
        assert tools["card"].output_schema == {
            "type": "object",
            "properties": {"name": {"type": "string"}, "ok": {"type": "boolean"}},
            "required": ["name", "ok"],
        }
        assert tools["directives.hello.md"].input_schema == {
            "type": "object",
            "properties": {"name": {"type": "string", "description": "Who to greet"}},
            "required": ["name"],
        }
        # A plan or directive that calls only read-only tools is read-only; hooks count.
        assert tools["plans.two.yaml"].annotations.read_only_hint is True  # type: ignore[union-attr]
        assert tools["directives.hello.md"].annotations.read_only_hint is True  # type: ignore[union-attr]
        assert tools["directives.logged.md"].annotations.read_only_hint is False  # type: ignore[union-attr]
        assert tools["run_plan"].annotations.read_only_hint is False  # type: ignore[union-attr]


async def test_a_tool_s_text_and_structured_results(project: Project, mode: str) -> None:
    async with client(project, mode) as c:
        r = await c.call_tool("echo", {"message": "hi there"})
        assert (r.is_error, r.content[0].text, r.structured_content) == (False, "hi there", None)  # type: ignore[union-attr]
        r = await c.call_tool("card", {"name": "Ada"})
        assert r.is_error is False
        assert r.structured_content == {"name": "Ada", "ok": True}


async def test_a_caller_s_marker_stays_literal_text(project: Project) -> None:
    forged = "%{secret:CANARY_TOKEN:" + "0" * 64 + "}"
    async with client(project) as c:
        r = await c.call_tool("echo", {"message": forged})
        assert r.content[0].text == forged  # type: ignore[union-attr]


async def test_a_tool_that_fails_and_one_the_check_refuses(project: Project) -> None:
    async with client(project) as c:
        r = await c.call_tool("leak_fail", {})
        assert r.is_error is True
        assert r.structured_content is not None
        assert r.structured_content["error"]["kind"] == "tool_failed"
        assert r.structured_content["record"]["status"] == "failed"
        assert r.structured_content["error"]["message"] == "tool `leak_fail` exited with code 2"
        assert r.structured_content["record"]["run"]["stderr"].endswith("ls: cannot access '***': No such file or directory\n")
        r = await c.call_tool("broken", {"message": "x"})
        assert r.is_error is True
        error = r.structured_content["error"]  # type: ignore[index]
        assert (error["kind"], error["message"]) == ("check", "`broken` was not run: 1 error found")
        assert [d["code"] for d in error["diagnostics"]] == ["R001"]
        assert json.loads(r.content[0].text) == r.structured_content  # type: ignore[union-attr]


async def test_an_unknown_tool_is_a_protocol_error(project: Project) -> None:
    async with client(project) as c:
        with pytest.raises(MCPError) as e:
            await c.call_tool("nope", {})
        assert e.value.error.code == -32602
        assert e.value.error.message == "unknown tool `nope`"


async def test_a_secret_printed_by_a_tool_comes_back_as_a_marker(project: Project) -> None:
    async with client(project) as c:
        r = await c.call_tool("leak", {})
        assert r.is_error is False
        assert re.fullmatch(r"%\{secret:CANARY_TOKEN:[0-9a-f]+\}\n?", r.content[0].text)  # type: ignore[union-attr]


async def test_a_directive_and_a_plan_file_with_progress(project: Project, mode: str) -> None:
    async with client(project, mode) as c:
        notes: list[str] = []

        async def progress(done: float, total: float | None, message: str | None) -> None:
            notes.append(re.sub(r"\d+ ms", "N ms", message or ""))

        r = await c.call_tool("directives.hello.md", {"name": "Ada"}, progress_callback=progress)
        assert r.is_error is False
        report = r.structured_content
        assert report is not None
        assert (report["status"], report["prompt"]) == ("completed", "Said: Hello, Ada!\n")
        assert notes == ["step say started", "step say completed in N ms"]
        notes.clear()
        r = await c.call_tool("plans.two.yaml", {}, progress_callback=progress)
        assert r.is_error is False
        report = r.structured_content
        assert report is not None
        assert report["status"] == "completed"
        assert [s["result"] for s in report["steps"]] == ["first", "after first"]
        assert notes == [
            "step A started",
            "step A completed in N ms",
            "step B started",
            "step B completed in N ms",
        ]
        # The run is recorded and readable as a resource.
        record = await c.read_resource(f"strata://runs/{report['run_id']}")
        checkpoint = json.loads(record.contents[0].text)  # type: ignore[union-attr]
        assert (checkpoint["status"], checkpoint["plan"]) == ("completed", "plans/two.yaml")


async def test_run_plan_takes_a_plan_the_agent_writes_in_both_reference_syntaxes(project: Project) -> None:
    plan = {
        "steps": [
            {"id": 1, "tool": "card", "arguments": {"name": "Ada"}},
            {"id": 2, "tool": "echo", "arguments": {"message": "$step1.name"}},
            {"id": 3, "tool": "echo", "arguments": {"message": "{{step1.result.name}} and {$step1.name}"}},
        ]
    }
    async with client(project) as c:
        r = await c.call_tool("run_plan", {"plan": plan, "jobs": 2})
        assert r.is_error is False
        report = r.structured_content
        assert report is not None
        assert report["levels"] == [["step1"], ["step2", "step3"]]
        assert [s["result"] for s in report["steps"]] == [{"name": "Ada", "ok": True}, "Ada", "Ada and Ada"]
        # YAML text works too; a plan that does not load is the --json error shape.
        r = await c.call_tool("run_plan", {"plan": "steps:\n  - {id: x, tool: echo, arguments: {message: y}}\n"})
        assert r.structured_content["status"] == "completed"  # type: ignore[index]
        r = await c.call_tool("run_plan", {"plan": {"steps": [{"id": "x", "tool": "nosuch", "arguments": {}}]}})
        assert r.is_error is True
        assert r.structured_content["ok"] is False  # type: ignore[index]
        r = await c.call_tool("run_plan", {"plan": {"steps": []}, "bogus": 1})
        assert r.structured_content["error"]["message"] == "unknown argument `bogus`"  # type: ignore[index]


async def test_cancelling_a_call_stops_its_run_and_the_record_says_so(project: Project) -> None:
    async with client(project) as c:
        started = time.monotonic()
        with anyio.move_on_after(3):
            await c.call_tool("plans.wait.yaml", {})
        # The server killed the sleep: it answers the next call at once.
        r = await c.call_tool("echo", {"message": "still here"})
        assert r.content[0].text == "still here"  # type: ignore[union-attr]
        runs = [r.uri for r in (await c.list_resources()).resources if str(r.uri).startswith("strata://runs/")]
        assert len(runs) == 1
        for _ in range(100):
            checkpoint = json.loads((await c.read_resource(str(runs[0]))).contents[0].text)  # type: ignore[union-attr]
            if checkpoint["status"] != "running":
                break
            await anyio.sleep(0.1)
        assert checkpoint["status"] == "cancelled"
        nap = checkpoint["records"][0]
        assert (nap["id"], nap["status"], nap["error"]["kind"]) == ("nap", "failed", "cancelled")
        assert time.monotonic() - started < 25


async def test_a_second_call_does_not_wait_for_a_first(project: Project) -> None:
    async with client(project) as c:
        order: list[str] = []

        async def slow() -> None:
            await c.call_tool("slow", {"seconds": "3"})
            order.append("slow")

        async with anyio.create_task_group() as tg:
            tg.start_soon(slow)
            await anyio.sleep(0.5)
            r = await c.call_tool("echo", {"message": "quick"})
            order.append(r.content[0].text)  # type: ignore[union-attr]
        assert order == ["quick", "slow"]


async def test_prompts_with_their_fallback_chain(project: Project, mode: str) -> None:
    async with client(project, mode) as c:
        prompts = (await c.list_prompts()).prompts
        assert [(p.name, p.description) for p in prompts] == [
            ("greet", "Renders template main/greet, looked up through main/greet")
        ]
        assert [a.name for a in prompts[0].arguments or []] == ["name"]
        got = await c.get_prompt("greet", {"name": "Ada"})
        assert got.messages[0].content.text == "Hello Ada!"  # type: ignore[union-attr]
        with pytest.raises(MCPError) as e:
            await c.get_prompt("nope", {})
        assert e.value.error.message == "unknown prompt `nope`"


async def test_resources_templates_and_completion(project: Project) -> None:
    async with client(project) as c:
        resources = {str(r.uri): r for r in (await c.list_resources()).resources}
        assert "strata://source/echo" in resources
        source = await c.read_resource("strata://source/echo")
        assert source.contents[0].text == (project.root / "tools" / "echo.yaml").read_text()  # type: ignore[union-attr]
        templates = [t.uri_template for t in (await c.list_resource_templates()).resource_templates]
        assert templates == ["strata://runs/{run_id}", "strata://source/{name}"]
        with pytest.raises(MCPError):
            await c.read_resource("strata://runs/../../etc")
        done = await c.complete(ResourceTemplateReference(type="ref/resource", uri="strata://source/{name}"), {"name": "name", "value": "le"})
        assert done.completion.values == ["leak", "leak_fail"]
        done = await c.complete(PromptReference(type="ref/prompt", name="greet"), {"name": "key", "value": "g"})
        assert done.completion.values == ["greet"]


async def test_the_tool_list_changes_when_a_file_does(project: Project) -> None:
    seen: list[Any] = []

    async def handler(message: Any) -> None:
        seen.append(message)

    async with Client(stdio_params(project), mode="legacy", message_handler=handler) as c:
        assert "late" not in [t.name for t in (await c.list_tools()).tools]
        (project.root / "tools" / "late.yaml").write_text((project.root / "tools" / "echo.yaml").read_text())
        with anyio.fail_after(15):
            while not any("ToolListChanged" in type(m).__name__ or "tools/list_changed" in str(m) for m in seen):
                await anyio.sleep(0.2)
        assert "late" in [t.name for t in (await c.list_tools(cache_mode="refresh")).tools]


async def test_read_only_and_globs_choose_what_is_exposed(project: Project) -> None:
    async with client(project, "legacy", "--read-only") as c:
        names = [t.name for t in (await c.list_tools()).tools]
        assert names == ["card", "echo", "slow", "directives.hello.md", "plans.two.yaml", "plans.wait.yaml"]
    async with client(project, "legacy", "--tools", "plans.*", "--tools", "echo", "--exclude", "*wait*") as c:
        assert [t.name for t in (await c.list_tools()).tools] == ["echo", "plans.two.yaml"]
