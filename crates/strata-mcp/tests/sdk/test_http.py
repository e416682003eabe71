"""`strata mcp --http` driven by the official MCP Python SDK over Streamable HTTP: list and
call, Origin and Host checks, the bearer token, and the canary in every byte received."""

import subprocess

import httpx2
import pytest

from conftest import STRATA, Project, Server, http_client

pytestmark = pytest.mark.anyio

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


async def test_list_and_call_over_http(project: Project, server: Server, mode: str) -> None:
    async with http_client(project, server.url, mode=mode) as c:
        names = [t.name for t in (await c.list_tools()).tools]
        assert names[0] == "run_plan" and "echo" in names
        r = await c.call_tool("card", {"name": "Ada"})
        assert r.structured_content == {"name": "Ada", "ok": True}
        r = await c.call_tool("leak", {})
        assert r.content[0].text.startswith("%{secret:CANARY_TOKEN:")  # type: ignore[union-attr]
        r = await c.call_tool("broken", {})
        assert r.is_error is True


async def test_another_origin_is_refused(project: Project, server: Server) -> None:
    async with httpx2.AsyncClient() as h:
        r = await h.post(server.url, json=INIT, headers={**ACCEPT, "origin": "http://evil.example"})
        assert r.status_code == 403
        r = await h.post(server.url, json=INIT, headers={**ACCEPT, "host": "evil.example"})
        assert r.status_code == 403
        r = await h.post(server.url, json=INIT, headers={**ACCEPT, "origin": "http://localhost:3000"})
        assert r.status_code == 200
        with open(project.log, "ab") as log:
            log.write(r.content)


async def test_a_token_is_required_when_given(project: Project, tmp_path: object) -> None:
    token = project.root.parent / "token"
    token.write_text("s3cret-token\n")
    server = Server(project, "--token-file", str(token))
    try:
        async with httpx2.AsyncClient() as h:
            r = await h.post(server.url, json=INIT, headers=ACCEPT)
            assert (r.status_code, r.text) == (401, "a bearer token is required")
        async with http_client(project, server.url, headers={"authorization": "Bearer s3cret-token"}) as c:
            r2 = await c.call_tool("echo", {"message": "in"})
            assert r2.content[0].text == "in"  # type: ignore[union-attr]
    finally:
        server.stop()


def test_an_address_that_is_not_loopback_needs_a_token(project: Project) -> None:
    r = subprocess.run([STRATA, "-C", str(project.root), "mcp", "--http", "0.0.0.0:0"], capture_output=True, text=True)
    assert r.returncode == 2
    assert "--http `0.0.0.0:0` is not loopback: anyone who reaches it could run the project's tools" in r.stderr
    project.log.write_bytes(r.stdout.encode() + b" ")
