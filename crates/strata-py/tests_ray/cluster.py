"""A two-node Ray cluster on loopback for the tests and the benchmark of ``strata.ray``.

Both nodes are started with ``ray start --block`` (a head and one worker node, each in a
process group of its own) bound to 127.0.0.1, with a temporary ``HOME`` (Ray writes
``~/.ray/``) and a ``--temp-dir`` per node, and token authentication with a token made for the process
(set when this module is imported, before Ray is) and shared by every node and the driver. ``stop`` ends every process the cluster started —
the two process groups, then anything else still running from its temporary directory —
whatever happened.

The cluster must run in a network namespace of its own that has only loopback (Ray binds its
servers to every interface): ``.ci/python-ray`` runs the tests under ``unshare --net``, and
``require_loopback_only`` refuses to start otherwise.
"""

from __future__ import annotations

import importlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Optional

RAY = str(Path(sys.executable).with_name("ray"))

# Ray reads the token once, the first time it is imported, in any process: the driver (this
# process) has it before anything imports Ray. One token for the clusters of the process.
os.environ.setdefault("RAY_AUTH_MODE", "token")
os.environ.setdefault("RAY_AUTH_TOKEN", secrets.token_hex(32))
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")


def _ray() -> Any:
    """The `ray` module (untyped: imported as a value)."""
    return importlib.import_module("ray")


def require_loopback_only() -> None:
    """Raises unless this process's network namespace has no interface but loopback."""
    others = [name for _, name in socket.if_nameindex() if name != "lo"]
    if others:
        raise RuntimeError(
            f"the Ray tests need a network namespace with loopback only (interfaces: {others}); "
            "run them through .ci/python-ray (unshare --net)"
        )


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Cluster:
    """A head node and one worker node, ``num_cpus`` task slots each."""

    def __init__(self, num_cpus: int = 4, env: Optional[dict[str, str]] = None) -> None:
        self.num_cpus = num_cpus
        self.base = Path(tempfile.mkdtemp(prefix="/tmp/sr-"))
        self.temp = self.base / "t"
        self.home = self.base / "home"
        self.home.mkdir()
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.client_port = free_port()
        #: The Ray Client address of the head node.
        self.client_address = f"ray://127.0.0.1:{self.client_port}"
        self.env = dict(os.environ)
        self.env.update(env or {})
        self.env["HOME"] = str(self.home)
        # gRPC's fork handlers off in the nodes: Ray Client's proxy forks each client's server
        # while its other threads are in gRPC, and the new server sometimes died at once
        # ("Starting Ray client server failed"; docs/scale-out.md).
        self.env.setdefault("GRPC_ENABLE_FORK_SUPPORT", "0")
        self.procs: list[subprocess.Popen[bytes]] = []


    def _start(self, args: list[str], log: str) -> subprocess.Popen[bytes]:
        out = open(self.base / log, "wb")
        self.procs.append(
            subprocess.Popen(
                [RAY, "start", "--block", "--node-ip-address", "127.0.0.1", "--num-cpus", str(self.num_cpus),
                 "--disable-usage-stats", *args],
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        )
        return self.procs[-1]

    def start(self, timeout: float = 90.0) -> "Cluster":
        require_loopback_only()
        self._start(["--head", "--port", str(self.port), "--include-dashboard=false",
                     "--ray-client-server-port", str(self.client_port), "--temp-dir", str(self.temp)], "head.log")
        self._wait_port(timeout)
        # A temporary directory of its own, as on another machine: two nodes unpacking the
        # same package into one directory would replace it under each other's tasks.
        # Its custom resource `strata_worker` lets a step ask for this node.
        self._start(["--address", self.address, "--temp-dir", str(self.base / "t2"),
                     "--resources", '{"strata_worker": 4}'], "worker.log")
        ray = _ray()
        ray.init(address=self.address, log_to_driver=False)
        deadline = time.monotonic() + timeout
        while sum(1 for n in ray.nodes() if n["Alive"]) < 2:
            if time.monotonic() > deadline:
                raise RuntimeError("the worker node never joined:\n" + self.log_tail())
            time.sleep(0.2)
        return self

    def add_node(self, name: str, timeout: float = 90.0) -> tuple[subprocess.Popen[bytes], str]:
        """Starts one more worker node (temp dir ``name``) and returns its process and its
        node id once it is alive."""
        before = set(self.node_ids())
        proc = self._start(["--address", self.address, "--temp-dir", str(self.base / name)], f"{name}.log")
        deadline = time.monotonic() + timeout
        while True:
            added = set(self.node_ids()) - before
            if added:
                return proc, added.pop()
            if time.monotonic() > deadline:
                raise RuntimeError(f"node {name} never joined:\n" + self.log_tail())
            time.sleep(0.2)

    def _wait_port(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.procs[0].poll() is not None:
                raise RuntimeError("the head node stopped:\n" + self.log_tail())
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    pass
                # The port opens before the head is ready for another node; give it a moment.
                time.sleep(1.0)
                return
            except OSError:
                time.sleep(0.2)
        raise RuntimeError("the head node never listened:\n" + self.log_tail())

    def log_tail(self) -> str:
        out = []
        for name in ("head.log", "worker.log"):
            path = self.base / name
            if path.exists():
                out.append(f"--- {name}\n" + path.read_text(errors="replace")[-3000:])
        return "\n".join(out)

    def client_server_log(self) -> str:
        """The end of the Ray Client servers' error logs (each client's own server), to show
        why a client could not connect."""
        out = []
        for path in sorted(Path(self.temp).glob("**/ray_client_server*.err")):
            out.append(f"\n--- {path.name}\n" + path.read_text(errors="replace")[-3000:])
        return "".join(out)

    def node_ids(self) -> list[str]:
        ray = _ray()
        return [n["NodeID"] for n in ray.nodes() if n["Alive"]]

    def stop(self) -> None:
        """Stops everything the cluster started, whatever state it is in."""
        try:
            ray = _ray()
            if ray.is_initialized():
                ray.shutdown()
        except Exception:  # noqa: BLE001 - stopping goes on
            pass
        for proc in self.procs:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 5
        for proc in self.procs:
            try:
                proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
        # Anything still running from the cluster's directory (a worker that left the group).
        for pid in _pids_mentioning(str(self.base)):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if not os.environ.get("STRATA_RAY_KEEP"):
            shutil.rmtree(self.base, ignore_errors=True)


def _pids_mentioning(text: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if text.encode() in cmdline:
            found.append(int(entry))
    return found


def walk_bytes(root: Path) -> Any:
    """Every regular file under ``root`` with its bytes."""
    for dirpath, _, filenames in os.walk(root):
        for name in filenames:
            path = Path(dirpath) / name
            try:
                if path.is_file() and not path.is_symlink():
                    yield path, path.read_bytes()
            except OSError:
                continue
