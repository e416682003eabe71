"""``python -m strata.ray``: ``strata plan run`` and ``strata run`` (of a graph) on a Ray
cluster, with the flags of the commands they mirror and a few of Ray's own.

    python -m strata.ray plan run PLAN [--value NAME=TEXT]... [--value-json NAME=JSON]...
                                       [--run-id ID | --resume ID] [--json] [-q] [--strict]
                                       [-j N] [-C DIR] [--address ADDR] [--max-retries N]
                                       [--strategy DEFAULT|SPREAD] [--num-cpus N]
    python -m strata.ray run GRAPH [--input K=V]... [--params-json JSON]
                                   [--run-id ID | --resume ID] [--json] [-q] [--strict]
                                   [-C DIR] [--address ADDR] [--max-retries N] ...

Exit codes are strata's: 0 completed, 1 a step failed (or the graph failed), 3 waiting for
values, 2 refused (the error on standard error, or as ``{"ok": false, "error"}`` with
``--json``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Optional, Sequence

import strata
import strata.ray as sray

EXIT_FAILED = 1
EXIT_STRATA = 2
EXIT_WAITING = 3
EXIT_LIMITED = 3


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
    report = sray.run_plan(
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
    )
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
    report = sray.run_graph(
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
    )
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
    except (strata.StrataError, ValueError, OSError) as e:
        return _fail(e, args.json)


if __name__ == "__main__":
    sys.exit(main())
