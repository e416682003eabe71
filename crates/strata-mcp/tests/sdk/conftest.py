"""Fixtures of the MCP tests: a copy of the fixture project with a `.env` holding a random
canary secret, the `strata` binary, and clients of the official SDK over stdio and over
Streamable HTTP whose every received byte is kept, to search for the canary."""

import os
import re
import secrets
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, AsyncIterator, Iterator

import httpx2
import pytest

from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

HERE = Path(__file__).parent
STRATA = os.environ.get("STRATA_BIN", str(HERE.parents[3] / "target" / "debug" / "strata"))


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Project:
    """A copy of the fixture project, its canary and the bytes clients received."""

    def __init__(self, root: Path, log: Path) -> None:
        self.root = root
        self.canary = "canary-" + secrets.token_hex(12)
        self.log = log
        (root / ".env").write_text(f"CANARY_TOKEN={self.canary}\n")

    def received(self) -> bytes:
        return self.log.read_bytes() if self.log.exists() else b""

    def assert_no_canary(self) -> None:
        data = self.received()
        assert data, "nothing was received"
        assert self.canary.encode() not in data


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Project]:
    root = tmp_path / "project"
    shutil.copytree(HERE / "project", root)
    p = Project(root, tmp_path / "received.bin")
    yield p
    p.assert_no_canary()


def stdio_params(project: Project, *extra: str) -> StdioServerParameters:
    """`strata -C ROOT mcp EXTRA…` under tee.py, which logs every byte it sends."""
    return StdioServerParameters(
        command=sys.executable,
        args=[str(HERE / "tee.py"), str(project.log), STRATA, "-C", str(project.root), "mcp", *extra],
        env={"PATH": os.environ.get("PATH", "")},
    )


@pytest.fixture(params=["legacy", "auto"])
def mode(request: pytest.FixtureRequest) -> str:
    """Both negotiations: the initialize handshake (2025-11-25) and server/discover
    (2026-07-28)."""
    return str(request.param)


class Server:
    """`strata mcp --http 127.0.0.1:0` for one test: its URL, stopped by PID."""

    def __init__(self, project: Project, *extra: str) -> None:
        self.process = subprocess.Popen(
            [STRATA, "-C", str(project.root), "mcp", "--http", "127.0.0.1:0", *extra],
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.process.stderr is not None
        line = self.process.stderr.readline()
        found = re.search(r"at (http://127\.0\.0\.1:\d+/mcp)$", line.strip())
        assert found, line
        self.url = found.group(1)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


@pytest.fixture
def server(project: Project) -> Iterator[Server]:
    s = Server(project)
    yield s
    s.stop()


class Tee(httpx2.AsyncBaseTransport):
    """An HTTP transport that appends every byte of every response body to a log."""

    def __init__(self, log: Path, headers: dict[str, str] | None = None) -> None:
        self.inner = httpx2.AsyncHTTPTransport()
        self.log = log

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self.inner.handle_async_request(request)
        response.stream = TeeStream(response.stream, self.log)  # type: ignore[arg-type]
        return response


class TeeStream(httpx2.AsyncByteStream):
    def __init__(self, inner: Any, log: Path) -> None:
        self.inner = inner
        self.log = log

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self.inner:
            with open(self.log, "ab") as f:
                f.write(chunk)
            yield chunk

    async def aclose(self) -> None:
        await self.inner.aclose()


def http_client(project: Project, url: str, headers: dict[str, str] | None = None, mode: str = "auto") -> Client:
    """A client of `url` whose received bytes go to the project's log."""
    client = httpx2.AsyncClient(transport=Tee(project.log), headers=headers or {}, timeout=60)
    return Client(streamable_http_client(url, http_client=client), mode=mode)  # type: ignore[arg-type]
