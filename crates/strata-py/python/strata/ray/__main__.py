"""``python -m strata.ray``: ``strata plan run`` and ``strata run`` (of a graph) on a Ray
cluster, with the flags of the commands they mirror and a few of Ray's own.

    python -m strata.ray plan run PLAN [--value NAME=TEXT]... [--value-json NAME=JSON]...
                                       [--run-id ID | --resume ID] [--json] [-q] [--strict]
                                       [-j N] [-C DIR] [--address ADDR] [--max-retries N]
                                       [--strategy DEFAULT|SPREAD] [--num-cpus N]
    python -m strata.ray run GRAPH [--input K=V]... [--params-json JSON]
                                   [--run-id ID | --resume ID] [--json] [-q] [--strict]
                                   [-C DIR] [--address ADDR] [--max-retries N] ...

Progress goes to standard error as ``strata plan run`` prints it (``strata.progress_line``:
``start``/``end`` lines of each step, ``retry`` lines, a failed tool's last lines of standard
error), or with ``--json`` as one JSON object per event (``step_started``, ``step_finished``,
``step_retrying``, ``step_waiting``; a graph's ``part_finished``).

Exit codes are strata's: 0 completed, 1 a step failed (or the graph failed), 3 waiting for
values, 2 refused (the error on standard error, or as ``{"ok": false, "error"}`` with
``--json``), 4 the cluster's head node lost (kind ``cluster_lost``: resume the run once it is
back), 128+N stopped by signal N (Ctrl-C, SIGTERM: the steps are cancelled and the run
recorded as cancelled, to resume).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any, Optional, Sequence

import strata
import strata.ray as sray

EXIT_FAILED = 1
EXIT_STRATA = 2
EXIT_WAITING = 3
EXIT_LIMITED = 3
EXIT_CLUSTER_LOST = 4


class _Signalled(BaseException):
    """The driver received a signal that stops the run."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _stop_on_signals() -> None:
    """SIGTERM (and SIGHUP) stop the run as Ctrl-C does, instead of killing the driver."""

    def stop(signum: int, frame: Any) -> None:
        raise _Signalled(signum)

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, stop)


def _wait(handle: sray.RunHandle, resume_with: str) -> Any:
    """The run's report; on Ctrl-C or SIGTERM its steps are cancelled, the run recorded, a
    line says how to resume it and the driver exits with 128 + the signal."""
    try:
        return handle.wait()
    except (KeyboardInterrupt, _Signalled) as e:
        signum = e.signum if isinstance(e, _Signalled) else signal.SIGINT
        run_id = handle.run_id
        try:
            report = handle.result()
            run_id = report.get("run_id", run_id)
        except BaseException:  # noqa: BLE001 - the run's own end is not the news here
            pass
        if run_id:
            print(f"strata: run {run_id} interrupted: resume it with `{resume_with} --resume {run_id}`", file=sys.stderr)
        else:
            print("strata: run interrupted: `strata runs` lists it", file=sys.stderr)
        raise SystemExit(128 + int(signum))


def _progress(args: argparse.Namespace) -> Optional[Any]:
    """The ``on_event`` of a plan run: its progress lines, or its events with ``--json``."""
    if args.quiet:
        return None

    def line(event: dict[str, Any]) -> None:
        if args.json:
            print(json.dumps(event), file=sys.stderr, flush=True)
            return
        text = strata.progress_line(event)
        if text is not None:
            print(text, file=sys.stderr, flush=True)

    return line


def _pair(text: str, flag: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise ValueError(f"{flag} `{text}`: expected NAME=VALUE")
    return name, value


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--run-id", metavar="RUN_ID", help="the id of the new run")
    p.add_argument("--resume", metavar="RUN_ID", help="continue the run with this id")
    p.add_argument("--json", action="store_true", help="print the final report as JSON")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    p.add_argument("--strict", action="store_true", default=None, help="missing variables are errors")
    p.add_argument("-C", "--project-dir", metavar="DIR", default=".", help="the project (default: .)")
    p.add_argument("--address", metavar="ADDR", help="the Ray cluster (default: RAY_ADDRESS, else a local one)")
    p.add_argument("--max-retries", type=int, default=3, metavar="N", help="retries of a step whose worker dies")
    p.add_argument("--strategy", default="DEFAULT", choices=["DEFAULT", "SPREAD"], help="Ray's placement")
    p.add_argument("--num-cpus", type=float, default=1, metavar="N", help="CPUs each task takes")


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="python -m strata.ray", description=__doc__.split("\n\n")[0])
    commands = top.add_subparsers(dest="command", required=True)
    plan = commands.add_parser("plan", help="plans").add_subparsers(dest="plan_command", required=True)
    run_plan = plan.add_parser("run", help="run a plan on the cluster, as `strata plan run`")
    run_plan.add_argument("plan", nargs="?", help="the plan file (optional with --resume)")
    run_plan.add_argument("-j", "--jobs", type=int, metavar="N", help="the most steps in flight")
    run_plan.add_argument("--value", action="append", default=[], metavar="NAME=TEXT")
    run_plan.add_argument("--value-json", action="append", default=[], metavar="NAME=JSON")
    _common(run_plan)
    run_graph = commands.add_parser("run", help="run a graph on the cluster, as `strata run`")
    run_graph.add_argument("graph", help="the graph's id (graphs/words) or file")
    run_graph.add_argument("--input", action="append", default=[], metavar="K=V", help="an input, typed by its declaration")
    run_graph.add_argument("--params-json", metavar="JSON", help="the inputs as a JSON object")
    _common(run_graph)
    return top


def _fail(error: Any, as_json: bool) -> int:
    if isinstance(error, strata.StrataError):
        shown = {"kind": error.kind, "message": error.message}
        text = str(error)
    else:
        shown = {"kind": "request", "message": str(error)}
        text = f"error: {error}"
    if as_json:
        print(json.dumps({"ok": False, "error": shown}, indent=2))
    else:
        print(text, file=sys.stderr)
    return EXIT_STRATA


def _sinks(report: Any, plan: Optional[strata.Plan]) -> dict[str, Any]:
    """The results of the completed steps no other step depends on."""
    used: set[str] = set()
    if plan is not None:
        for deps in plan.dependencies.values():
            used.update(deps)
    return {s["id"]: s["result"] for s in report["steps"] if s["status"] == "completed" and s["id"] not in used}


def _plan_run(args: argparse.Namespace) -> int:
    root = Path(args.project_dir)
    values: dict[str, Any] = {}
    for text in args.value:
        name, value = _pair(text, "--value")
        values[name] = value
    for text in args.value_json:
        name, value = _pair(text, "--value-json")
        values[name] = json.loads(value)
    plan: Optional[strata.Plan] = None
    if args.plan is not None:
        path = Path(args.plan)
        if not path.is_absolute() and not path.exists():
            path = root / path
        plan = strata.Plan.from_file(path)
    elif args.resume is None:
        raise ValueError("no plan given: name a plan file, or --resume a run")
    handle = sray.submit_plan(
        root,
        plan,
        values,
        address=args.address,
        max_retries=args.max_retries,
        run_id=args.run_id,
        resume=args.resume,
        strict=args.strict,
        jobs=args.jobs,
        strategy=args.strategy,
        num_cpus=args.num_cpus,
        on_event=_progress(args),
    )
    _stop_on_signals()
    report = _wait(handle, "python -m strata.ray plan run")
    if plan is None:
        kept = root / ".strata" / "runs" / report["run_id"] / "plan.json"
        plan = strata.Plan(json.loads(kept.read_text()))
    if not args.quiet:
        counts: dict[str, int] = {}
        for s in report["steps"]:
            counts[s["status"]] = counts.get(s["status"], 0) + 1
        shown = ", ".join(f"{n} {k}" for k, n in counts.items()) or "no steps"
        print(f"run {report['run_id']}: {report['status']} ({shown}) on Ray", file=sys.stderr)
    if args.json:
        print(json.dumps({k: v for k, v in report.items() if k != "placements"}, indent=2))
    else:
        print(json.dumps(_sinks(report, plan), indent=2))
    if report["missing_values"]:
        names = ", ".join(f"`{n}`" for n in report["missing_values"])
        print(f"waiting for values: {names}", file=sys.stderr)
        flags = " ".join(f"--value {n}=…" for n in report["missing_values"])
        print(f"  resume with: python -m strata.ray plan run --resume {report['run_id']} {flags}", file=sys.stderr)
    return {"completed": 0, "waiting": EXIT_WAITING}.get(report["status"], EXIT_FAILED)


def _graph_run(args: argparse.Namespace) -> int:
    root = Path(args.project_dir)
    graph = args.graph
    if graph.endswith((".yaml", ".yml")):
        rel = Path(graph)
        if rel.is_absolute():
            rel = rel.relative_to((root / "tools").resolve())
        elif rel.parts and rel.parts[0] == "tools":
            rel = Path(*rel.parts[1:])
        graph = str(rel.with_suffix(""))
    inputs = json.loads(args.params_json) if args.params_json else {}
    texts = dict(_pair(t, "--input") for t in args.input)
    on_part = None
    if args.json and not args.quiet:

        def on_part(event: dict[str, Any]) -> None:
            print(json.dumps(event), file=sys.stderr, flush=True)

    handle = sray.submit_graph(
        root,
        graph,
        inputs,
        address=args.address,
        max_retries=args.max_retries,
        run_id=args.run_id,
        resume=args.resume,
        strict=args.strict,
        inputs_text=texts,
        strategy=args.strategy,
        num_cpus=args.num_cpus,
        on_part=on_part,
    )
    _stop_on_signals()
    report = _wait(handle, f"python -m strata.ray run {graph}")
    if not args.quiet:
        print(f"run {report['run_id']}: {report['status']} after {report['steps']} steps on Ray", file=sys.stderr)
    if args.json:
        shown = {"ok": report["status"] == "completed", **{k: v for k, v in report.items() if k != "placements"}}
        print(json.dumps(shown, indent=2))
    elif report["status"] == "completed":
        print(json.dumps(report["result"], indent=2))
    if report.get("failure"):
        print(f"error: {report['failure'].get('message')}", file=sys.stderr)
    return {"completed": 0, "limited": EXIT_LIMITED}.get(report["status"], EXIT_FAILED)


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parser().parse_args(argv)
    try:
        if args.command == "plan":
            return _plan_run(args)
        return _graph_run(args)
    except sray.ClusterLost as e:
        resume = f"resume it with --resume {e.run_id} once the cluster is back" if e.run_id else "resume it once the cluster is back"
        message = f"{e}; {resume}"
        if args.json:
            print(json.dumps({"ok": False, "error": {"kind": "cluster_lost", "message": message, "run_id": e.run_id}}, indent=2))
        else:
            print(f"error: {message}", file=sys.stderr)
        # Ray's own shutdown at exit would wait for the lost head: leave now.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(EXIT_CLUSTER_LOST)
    except (strata.StrataError, ValueError, OSError) as e:
        return _fail(e, args.json)


if __name__ == "__main__":
    sys.exit(main())
