"""`strata view` in a real browser (Debian's Chromium driven by Playwright for Python).

Seeds runs with the strata binary in a scratch project (a plan that completes, one that
fails, a resumed one, a 2,000-step plan, a graph with a 10,000-element foreach), starts
`strata view`, and asserts what the page shows; then measures the goals of docs/view.md
(how soon a node's state shows after its event is written, first paint of the large runs,
long tasks, DOM size, the page's weight) and prints them. With --screenshots DIR it saves
the screenshots docs/ shows.

Prints `N passed, N failed` last; exits 1 when a case failed.
"""

import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

from playwright.sync_api import sync_playwright

REPO = pathlib.Path(__file__).resolve().parents[2]
STRATA = os.path.abspath(os.environ.get("STRATA_BIN", str(REPO / "target" / "debug" / "strata")))
CHROMIUM = os.environ.get("CHROMIUM") or shutil.which("chromium")
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
CANARY = "c4n4ry-v13w-t0k3n"

SLEEP_TOOL = """description: sleeps, after the step it names
executor: runtimes/subprocess
parameters:
  type: object
  properties:
    seconds: {type: number}
    after: {}
config:
  command: sleep
  args: ["{seconds}"]
"""

OK_PLAN = """- {id: a, tool: t/json, arguments: {n: 1}}
- {id: b, tool: t/json, arguments: {n: '{{a.result.n}}'}}
- {id: c, tool: t/json, arguments: {text: x}}
- {id: d, tool: t/json, arguments: {n: '{{b.result.n}}', text: '{{c.result.text}}'}}
"""

FAIL_PLAN = """- {id: a, tool: t/json, arguments: {text: 'key {{PLACEHOLDER_key}}'}}
- {id: b, tool: t/fail, arguments: {text: '{{a.result.text}}'}}
- {id: c, tool: t/json, arguments: {n: '{{b.result}}'}}
"""

WAIT_PLAN = """- {id: a, tool: t/json, arguments: {n: 1}}
- {id: b, tool: t/json, arguments: {text: '{{PLACEHOLDER_who}}'}}
"""

DIRECTIVE = """---
name: d
actions:
  - {id: a, tool: t/json, params: {n: 1}}
  - {id: b, tool: t/fail}
  - {id: c, tool: t/json}
---
Done.
"""

# The id `strata run` gave the directive's run (the seed finds it in `strata runs --json`).
DIRECTIVE_RUN = []

FOREACH = 10_000
BIG = 2_000

# A foreach of five elements, one by one: the third's text is a number, which the tool's
# parameters refuse, so it fails and the last two never start.
FAILING_FOREACH = """kind: graph
start: each
nodes:
  each:
    kind: foreach
    over: [a, b, 3, d, e]
    as: item
    do:
      kind: action
      tool: t/json
      params: {text: "${item}"}
    next: done
  done:
    kind: return
    output: 1
"""


def foreach_graph(n):
    return f"""kind: graph
state: {{items: {json.dumps(list(range(n)))}}}
max_steps: 10
start: each
nodes:
  each:
    kind: foreach
    over: "${{state.items}}"
    as: item
    do:
      kind: gate
      assign: {{last: "${{item}}"}}
    collect: seen
    next: done
  done:
    kind: return
    output: "${{length(state.seen)}}"
"""


def chain_plan(n, secs):
    steps = [{"id": "s0", "tool": "t/sleep", "arguments": {"seconds": secs}}]
    for i in range(1, n):
        steps.append({"id": f"s{i}", "tool": "t/sleep",
                      "arguments": {"seconds": secs, "after": f"{{{{s{i - 1}.result}}}}"}})
    return json.dumps(steps)


class Project:
    """A scratch project with the test tools, and runs made by the binary."""

    def __init__(self, root):
        self.root = pathlib.Path(root)
        shutil.copytree(REPO / "tools" / "runtimes", self.root / "tools" / "runtimes")
        fixtures = REPO / "tests" / "fixtures" / "events"
        self.write("tools/t/json.yaml", (fixtures / "json.yaml").read_text())
        self.write("tools/t/fail.yaml", (fixtures / "fail.yaml").read_text())
        self.write("tools/t/fail.sh", (fixtures / "fail.sh").read_text())
        self.write("tools/t/sleep.yaml", SLEEP_TOOL)
        self.write("plans/ok.yaml", OK_PLAN)
        self.write("plans/fail.yaml", FAIL_PLAN)
        self.write("plans/wait.yaml", WAIT_PLAN)
        self.write("plans/big.json", json.dumps(
            [{"id": f"s{i}", "tool": "t/json", "arguments": {"n": i}} for i in range(BIG)]))
        self.write("tools/graphs/each.yaml", foreach_graph(FOREACH))
        self.write("tools/graphs/eachfail.yaml", FAILING_FOREACH)
        self.write("directives/d.md", DIRECTIVE)
        self.env = dict(os.environ, API_TOKEN=CANARY)

    def write(self, rel, text):
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    def strata(self, *args, code=0):
        done = subprocess.run([STRATA, *args], cwd=self.root, env=self.env,
                              capture_output=True, text=True, timeout=600)
        if done.returncode != code:
            raise AssertionError(f"strata {' '.join(args)}: exit {done.returncode}: {done.stderr}")
        return done

    def seed(self):
        self.strata("plan", "run", "plans/ok.yaml", "--run-id", "ok", "--quiet")
        self.strata("plan", "run", "plans/fail.yaml", "--run-id", "fail", "--quiet",
                    "--value", f"key={CANARY}", code=1)
        self.strata("plan", "run", "plans/wait.yaml", "--run-id", "resumed", "--quiet", code=3)
        self.strata("plan", "run", "--resume", "resumed", "--value", "who=Ann", "--quiet")
        self.strata("run", "graphs/each", "--run-id", "each", "--quiet")
        self.strata("run", "graphs/eachfail", "--run-id", "eachfail", "--quiet", code=1)
        self.strata("plan", "run", "plans/big.json", "--run-id", "big", "--quiet", "--jobs", "8")
        self.strata("run", "directives/d.md", "--quiet", code=1)
        runs = json.loads(self.strata("runs", "--json").stdout)
        DIRECTIVE_RUN.extend(r["run_id"] for r in runs if r.get("directive"))


class Viewer:
    """`strata view` in the project, stopped by its pid."""

    def __init__(self, project):
        self.proc = subprocess.Popen([STRATA, "view"], cwd=project.root, env=project.env,
                                     stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        assert line.startswith("strata view: http://127.0.0.1:"), line
        self.url = line.split(": ", 1)[1].strip()

    def stop(self):
        os.kill(self.proc.pid, signal.SIGTERM)
        self.proc.wait(timeout=10)


RESULTS = []
MEASURED = {}


def case(fn):
    def run(*args):
        try:
            fn(*args)
            RESULTS.append((fn.__name__, None))
            print(f"ok {fn.__name__}")
        except Exception as e:  # noqa: BLE001 - every failure is reported by name
            RESULTS.append((fn.__name__, e))
            print(f"FAILED {fn.__name__}: {e!r}")
    return run


def detail_shows(page, text):
    page.wait_for_function("(t) => document.querySelector('#detail').textContent.includes(t)",
                           arg=text, timeout=10_000)
    return page.text_content("#detail")


def node_class(page, node_id):
    return page.get_attribute(f'g.node[data-id="{node_id}"]', "class")


def open_run(page, viewer, run_id, done_status):
    page.goto(f"{viewer.url}#/run/{run_id}")
    page.wait_for_function(
        "(s) => { const e = document.querySelector('#summary h1 .status');"
        " return e && e.textContent === s; }", arg=done_status, timeout=20_000)
    page.wait_for_timeout(300)


@case
def the_list_shows_every_run_and_filters_by_status_and_target(page, viewer, shots):
    page.goto(viewer.url)
    page.wait_for_selector("#runs tbody tr")
    rows = page.locator("#runs tbody tr")
    assert rows.count() == 7, [rows.nth(i).get_attribute("data-run") for i in range(rows.count())]
    fail = page.locator('#runs tbody tr[data-run="fail"] td')
    cells = [fail.nth(i).text_content() for i in range(6)]
    assert cells[1:3] == ["failed", "plans/fail.yaml"], cells
    assert cells[5] == "1 completed, 1 failed, 1 skipped", cells
    if shots:
        page.screenshot(path=f"{shots}/view-runs.png")
    page.select_option("#f-status", "failed")
    page.wait_for_function("() => document.querySelectorAll('#runs tbody tr').length === 3")
    shown = sorted(page.locator("#runs tbody tr").nth(i).get_attribute("data-run") for i in range(3))
    assert shown == sorted(["fail", "eachfail", *DIRECTIVE_RUN]), shown
    page.select_option("#f-status", "")
    page.fill("#f-target", "graphs/")
    page.wait_for_function("() => document.querySelectorAll('#runs tbody tr').length === 2 && document.querySelector('#runs tbody tr').dataset.run !== 'fail'")
    shown = sorted(page.locator("#runs tbody tr").nth(i).get_attribute("data-run") for i in range(2))
    assert shown == ["each", "eachfail"], shown


@case
def a_completed_plan_shows_every_step_completed_with_its_detail(page, viewer, shots):
    open_run(page, viewer, "ok", "completed")
    for n in "abcd":
        assert node_class(page, n) == "node completed", (n, node_class(page, n))
    page.click('g.node rect[data-for="d"]')
    text = detail_shows(page, "arguments")
    assert "arguments" in text and '"text": "x"' in text, text
    assert "exit code0" in text, text
    assert page.locator("#gantt .bar").count() == 4


@case
def a_failed_plan_shows_the_failure_its_stderr_redacted_and_the_failed_path(page, viewer, shots):
    open_run(page, viewer, "fail", "failed")
    assert node_class(page, "a") == "node completed"
    assert node_class(page, "b") == "node failed"
    assert node_class(page, "c") == "node skipped"
    page.click('g.node rect[data-for="b"]')
    text = detail_shows(page, "stderr")
    assert "token was ***" in text, text
    assert "exit code3" in text, text
    assert "key ***" in text, text
    if shots:
        page.screenshot(path=f"{shots}/view-plan-failed.png", full_page=True)
    page.check("#f-failed")
    page.wait_for_timeout(200)
    assert "hidden" in node_class(page, "c")
    assert "hidden" not in node_class(page, "a")
    page.uncheck("#f-failed")
    page.check("#f-hide-done")
    page.wait_for_timeout(200)
    assert "hidden" in node_class(page, "a")
    assert "hidden" not in node_class(page, "b")
    page.uncheck("#f-hide-done")
    assert CANARY not in page.content()


@case
def a_resumed_plan_shows_both_parts(page, viewer, shots):
    open_run(page, viewer, "resumed", "completed")
    assert node_class(page, "a") == "node completed"
    assert node_class(page, "b") == "node completed"
    page.click('g.node rect[data-for="b"]')
    detail_shows(page, '"text": "Ann"')


@case
def a_foreach_graph_shows_its_nodes_edges_and_steps(page, viewer, shots):
    open_run(page, viewer, "each", "completed")
    # Its elements' events come first: the node completes once they are read.
    element_counts(page, "each", f"{FOREACH} done")
    page.wait_for_function("() => document.querySelector('g.node[data-id=\"done\"]').classList.contains('completed')",
                           timeout=20_000)
    assert node_class(page, "each") == "node completed", node_class(page, "each")
    assert node_class(page, "done") == "node completed", node_class(page, "done")
    assert page.locator(".edge.taken").count() == 1, page.locator(".edge.taken").count()
    page.click('g.node rect[data-for="each"]')
    page.wait_for_selector("#detail h2")
    text = page.text_content("#detail")
    assert "edge taken→ done (next)" in text, text
    if shots:
        page.screenshot(path=f"{shots}/view-graph.png", full_page=True)


def element_counts(page, node_id, text):
    page.wait_for_function(
        "([id, t]) => document.querySelector(`g.node[data-id=\"${id}\"] .sub`).textContent === t",
        arg=[node_id, text], timeout=20_000)


@case
def a_foreach_shows_its_elements_by_state_and_each_on_demand(page, viewer, shots):
    open_run(page, viewer, "eachfail", "failed")
    element_counts(page, "each", "1 failed, 2 done, 2 pending")
    assert node_class(page, "each") == "node failed"
    page.click('g.node rect[data-for="each"]')
    detail_shows(page, "5 elements: 2 pending, 0 running, 2 done, 1 failed")
    assert page.locator("#detail .element-list li").count() == 0
    page.click("#detail button:has-text('show elements')")
    page.wait_for_selector("#detail .element-list li")
    shown = [t.split(",")[0] for t in page.locator("#detail .element-list li").all_text_contents()]
    assert shown == ["element 0: done", "element 1: done", "element 2: failed",
                     "element 3: pending", "element 4: pending"], shown
    page.select_option("#detail select", "failed")
    page.wait_for_function("() => document.querySelectorAll('#detail .element-list li').length === 1")
    page.click('#detail .element-list li[data-index="2"]')
    text = detail_shows(page, "element2")
    assert re.search(r"element2statefailedstep1duration\d+ mserrorinvalid$", text), text
    if shots:
        page.screenshot(path=f"{shots}/view-foreach.png", full_page=True)


@case
def ten_thousand_elements_show_a_window_at_a_time(page, viewer, shots):
    open_run(page, viewer, "each", "completed")
    element_counts(page, "each", f"{FOREACH} done")
    page.click('g.node rect[data-for="each"]')
    page.click("#detail button:has-text('show elements')")
    page.wait_for_selector("#detail .element-list li")
    assert page.locator("#detail .element-list li").count() == 200
    assert page.text_content("#detail .element-bar span") == f"1–200 of {FOREACH}"
    page.click("#detail button:has-text('next')")
    page.wait_for_function("() => document.querySelector('#detail .element-bar span').textContent.startsWith('201–')")
    assert page.locator("#detail .element-list li").count() == 200
    assert page.text_content("#detail .element-list li >> nth=0").startswith("element 200: done")


@case
def a_directive_run_shows_its_actions_and_the_failed_ones_stderr_redacted(page, viewer, shots):
    open_run(page, viewer, DIRECTIVE_RUN[0], "failed")
    assert node_class(page, "a") == "node completed"
    assert node_class(page, "b") == "node failed"
    assert node_class(page, "c") == "node skipped", node_class(page, "c")
    page.click('g.node rect[data-for="b"]')
    text = detail_shows(page, "stderr")
    assert "token was ***" in text, text
    assert page.locator("#gantt .bar").count() == 3
    assert CANARY not in page.content()


@case
def a_level_of_two_thousand_steps_is_one_group_that_expands(page, viewer, shots):
    open_run(page, viewer, "big", "completed")
    assert page.locator("g.node").count() == 1, page.locator("g.node").count()
    # The group's counts are drawn once its events are read (a busy machine takes a while).
    page.wait_for_function(
        "(s) => document.querySelector('g.node[data-id=\"level:0\"] .sub').textContent === s",
        arg=f"{BIG} completed", timeout=20_000)
    page.click('g.node rect[data-for="level:0"]')
    page.wait_for_selector("#detail .members li")
    assert page.locator("#detail .members li").count() == 501, page.locator("#detail .members li").count()
    page.click("#detail .members li >> nth=7")
    page.wait_for_selector("#detail button")
    assert page.text_content("#detail h2") == "s7"


def first_paint(page, viewer, run_id, status):
    page.goto("about:blank")
    start = time.monotonic()
    open_run(page, viewer, run_id, status)
    took = time.monotonic() - start - 0.3
    long_tasks = page.evaluate("() => (window.__long || []).map((t) => t.duration)")
    dom = page.evaluate("() => document.getElementsByTagName('*').length")
    return took, long_tasks, dom


@case
def large_runs_paint_fast_with_no_long_task_and_a_small_dom(page, viewer, shots):
    for run_id, what in [("big", f"{BIG}-step plan"), ("each", f"{FOREACH}-element foreach")]:
        took, long_tasks, dom = first_paint(page, viewer, run_id, "completed")
        MEASURED[f"first paint, {what}"] = f"{took * 1000:.0f} ms, longest task {max(long_tasks, default=0):.0f} ms, {dom} DOM nodes"
        assert took <= 2.0, took
        assert max(long_tasks, default=0) <= 200, long_tasks
        assert dom <= 5000, dom


@case
def the_page_and_its_assets_are_small(page, viewer, shots):
    total = 0
    for path in ["", "app.js", "app.css"]:
        req = urllib.request.Request(viewer.url + path)
        with urllib.request.urlopen(req) as reply:
            total += len(reply.read())
    MEASURED["page and assets"] = f"{total} bytes"
    assert total <= 200 * 1024, total


@case
def a_live_run_shows_each_state_soon_after_its_event(page, viewer, project):
    steps, secs = 10, 0.3
    project.write("plans/chain.json", chain_plan(steps, secs))
    run = subprocess.Popen([STRATA, "plan", "run", "plans/chain.json", "--run-id", "live",
                            "--quiet"], cwd=project.root, env=project.env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        log = project.root / ".strata" / "runs" / "live" / "events.jsonl"
        deadline = time.monotonic() + 20
        while not (log.exists() and log.stat().st_size > 0) and time.monotonic() < deadline:
            time.sleep(0.02)
        page.goto(f"{viewer.url}#/run/live")
        page.wait_for_selector('g.node[data-id="s0"]')
        page.evaluate("""() => {
            window.__seen = {};
            new MutationObserver((list) => {
              for (const m of list) {
                const g = m.target;
                if (g.dataset && g.dataset.id && !(g.dataset.id + g.getAttribute('class') in window.__seen))
                  window.__seen[g.dataset.id + ' ' + g.getAttribute('class')] = Date.now();
              }
            }).observe(document.getElementById('dag'), {attributes: true, subtree: true, attributeFilter: ['class']});
        }""")
        page.wait_for_function(
            "() => document.querySelector('#summary h1 .status').textContent === 'completed'",
            timeout=60_000)
        seen = page.evaluate("() => window.__seen")
    finally:
        run.wait(timeout=60)
    delays = []
    for line in log.read_text().splitlines():
        ev = json.loads(line)
        if ev["event"] != "step_finished":
            continue
        at = seen.get(f"{ev['id']} node completed")
        if at is not None:
            delays.append(at - ev["ts"])
    assert len(delays) >= steps - 2, (len(delays), seen)
    delays.sort()
    p95 = delays[min(len(delays) - 1, int(round(0.95 * (len(delays) - 1))))]
    MEASURED["state shown after its event (p95)"] = f"{p95} ms over {len(delays)} steps (median {delays[len(delays) // 2]} ms)"
    assert p95 <= 500, delays


def main():
    shots = None
    if "--screenshots" in sys.argv:
        shots = sys.argv[sys.argv.index("--screenshots") + 1]
        os.makedirs(shots, exist_ok=True)
    assert CHROMIUM, "no chromium: install Debian's chromium package"
    with tempfile.TemporaryDirectory() as tmp:
        project = Project(pathlib.Path(tmp) / "project")
        started = time.monotonic()
        project.seed()
        print(f"seeded in {time.monotonic() - started:.1f} s")
        viewer = Viewer(project)
        try:
            with sync_playwright() as pw:
                context = pw.chromium.launch_persistent_context(
                    user_data_dir=str(pathlib.Path(tmp) / "profile"),
                    executable_path=CHROMIUM, headless=True, args=FLAGS,
                    viewport={"width": 1280, "height": 800})
                context.add_init_script("""
                    window.__long = [];
                    try {
                      new PerformanceObserver((l) => { window.__long.push(...l.getEntries()); })
                        .observe({type: 'longtask', buffered: true});
                    } catch (e) {}
                """)
                page = context.new_page()
                for test in [the_list_shows_every_run_and_filters_by_status_and_target,
                             a_completed_plan_shows_every_step_completed_with_its_detail,
                             a_failed_plan_shows_the_failure_its_stderr_redacted_and_the_failed_path,
                             a_resumed_plan_shows_both_parts,
                             a_foreach_graph_shows_its_nodes_edges_and_steps,
                             a_foreach_shows_its_elements_by_state_and_each_on_demand,
                             ten_thousand_elements_show_a_window_at_a_time,
                             a_directive_run_shows_its_actions_and_the_failed_ones_stderr_redacted,
                             a_level_of_two_thousand_steps_is_one_group_that_expands,
                             large_runs_paint_fast_with_no_long_task_and_a_small_dom,
                             the_page_and_its_assets_are_small]:
                    test(page, viewer, shots)
                a_live_run_shows_each_state_soon_after_its_event(page, viewer, project)
                context.close()
        finally:
            viewer.stop()
        for events in (project.root / ".strata" / "runs").glob("*/events.jsonl"):
            if CANARY in events.read_text():
                RESULTS.append(("canary_in_event_logs", AssertionError(str(events))))
    for name, value in MEASURED.items():
        print(f"measured: {name}: {value}")
    failed = [n for n, e in RESULTS if e is not None]
    print(f"{len(RESULTS) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
