// strata view: the runs list, and a run's page (its DAG, live states, step detail and
// timeline) from /api/runs, /api/runs/<id> and the server-sent events of
// /api/runs/<id>/events. Every text of a run is set as text (textContent), never as markup.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const NODE_W = 160, NODE_H = 40;
const MAX_BARS = 300, MAX_MEMBERS = 500, ELEMENTS_SHOWN = 200;
const ELEMENT_STATES = ["pending", "running", "done", "failed"];
const $ = (id) => document.getElementById(id);

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (cls) e.className = cls;
  return e;
}

function svg(tag, attrs, text) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

function when(ms) {
  return ms ? new Date(ms).toISOString().replace("T", " ").slice(0, 19) + " UTC" : "-";
}

function span(ms) {
  if (ms === undefined || ms === null) return "-";
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

function counts(steps) {
  const parts = Object.entries(steps || {}).filter(([, n]) => n > 0).map(([s, n]) => `${n} ${s}`);
  return parts.length ? parts.join(", ") : "no steps";
}

function json(v) {
  return typeof v === "string" ? v : JSON.stringify(v, null, 2);
}

// ---- the runs list ----

let listTimer = null;

function onList() {
  return !location.hash.startsWith("#/run/");
}

async function showList() {
  if (!onList()) return;
  $("run").hidden = true;
  $("list").hidden = false;
  $("where").textContent = "runs";
  const q = new URLSearchParams();
  if ($("f-target").value) q.set("target", $("f-target").value);
  if ($("f-status").value) q.set("status", $("f-status").value);
  const reply = await fetch("/api/runs?" + q.toString());
  const data = await reply.json();
  if (!onList()) return;
  const body = $("runs").tBodies[0];
  body.replaceChildren();
  for (const r of data.runs) {
    const tr = el("tr");
    tr.dataset.run = r.id;
    tr.append(el("td", r.id), el("td", r.status, `status s-${r.status}`), el("td", r.target),
      el("td", when(r.started)), el("td", span(r.duration_ms)), el("td", counts(r.steps)));
    tr.addEventListener("click", () => { location.hash = "#/run/" + encodeURIComponent(r.id); });
    body.append(tr);
  }
  $("no-runs").hidden = data.runs.length > 0;
}

function relist() {
  clearTimeout(listTimer);
  listTimer = setTimeout(showList, 150);
}

// ---- a run's page ----

let run = null;

function freshRun(id, page) {
  return {
    id, page, kind: page.run.kind, status: page.run.status, source: null,
    nodes: new Map(), groupOf: new Map(), elems: new Map(), edges: [], bars: [],
    taken: new Set(), whole: new Map(), loading: new Set(), t0: null, tEnd: null, lastTs: null, selected: null,
    frame: 0, ganttAt: 0, window: null, foreach: new Map(), open: null,
  };
}

function node(id) {
  let n = run.nodes.get(id);
  if (!n) {
    n = { id, state: "pending", visits: 0 };
    run.nodes.set(id, n);
  }
  return n;
}

async function showRun(id) {
  $("list").hidden = true;
  $("run").hidden = false;
  $("where").textContent = `run ${id}`;
  for (const box of ["summary", "dag", "gantt"]) $(box).replaceChildren();
  $("detail").replaceChildren(el("p", "select a node", "muted"));
  const reply = await fetch("/api/runs/" + encodeURIComponent(id));
  const page = await reply.json();
  if (!reply.ok) {
    $("summary").replaceChildren(el("p", `${page.error}${page.hint ? ` (${page.hint})` : ""}`, "s-failed"));
    return;
  }
  run = freshRun(id, page);
  for (const n of page.layout.nodes) {
    for (const m of n.members || []) run.groupOf.set(m, n.id);
  }
  drawDag(page.layout);
  summary();
  const source = new EventSource(`/api/runs/${encodeURIComponent(id)}/events`);
  run.source = source;
  source.onmessage = (e) => { for (const ev of JSON.parse(e.data)) apply(ev); schedule(); };
  source.addEventListener("end", () => { source.close(); settle(); schedule(); });
}

function summary() {
  const r = run.page.run;
  const box = $("summary");
  box.replaceChildren();
  const h = el("h1", `${r.kind} ${r.target} `);
  h.append(el("span", run.status, `status s-${run.status}`));
  box.append(h, el("p", `run ${r.id}, started ${when(r.started)}, ${r.total} steps`, "muted"));
}

function drawDag(layout) {
  const g = $("dag");
  g.replaceChildren();
  g.setAttribute("width", layout.width);
  g.setAttribute("height", layout.height);
  g.setAttribute("viewBox", `0 0 ${layout.width} ${layout.height}`);
  const at = new Map(layout.nodes.map((n) => [n.id, n]));
  for (const e of layout.edges) {
    const a = at.get(e.from), b = at.get(e.to);
    const x1 = a.x + NODE_W, y1 = a.y + NODE_H / 2, x2 = b.x, y2 = b.y + NODE_H / 2;
    let d;
    if (x2 > x1) {
      const mx = (x1 + x2) / 2;
      d = `M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2},${y2}`;
    } else {
      const low = Math.max(a.y, b.y) + NODE_H + 12;
      d = `M${a.x + NODE_W / 2},${a.y + NODE_H} C${a.x + NODE_W / 2},${low} ${b.x + NODE_W / 2},${low} ${b.x + NODE_W / 2},${b.y + NODE_H}`;
    }
    const ge = svg("g", { class: "edge" });
    ge.append(svg("path", { d, "marker-end": "url(#arrow)" }));
    if (e.when) {
      ge.append(svg("text", { x: (x1 + x2) / 2 - 20, y: (y1 + y2) / 2 - 4 }, e.when));
    }
    g.append(ge);
    run.edges.push({ from: e.from, to: e.to, elem: ge });
  }
  const defs = svg("defs");
  const marker = svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: "9", refY: "5", markerWidth: "6", markerHeight: "6", orient: "auto" });
  marker.append(svg("path", { d: "M0,0 L10,5 L0,10 z", fill: "#9aa1ab" }));
  defs.append(marker);
  g.append(defs);
  for (const n of layout.nodes) {
    const gn = svg("g", { class: "node pending", transform: `translate(${n.x},${n.y})` });
    gn.dataset.id = n.id;
    gn.append(svg("rect", { width: NODE_W, height: NODE_H, "data-for": n.id }));
    gn.append(svg("text", { x: 8, y: 16 }, n.kind === "group" ? `${n.members.length} steps` : n.id));
    const sub = svg("text", { x: 8, y: 32, class: "sub" }, n.label);
    gn.append(sub);
    gn.addEventListener("click", () => select(n.id));
    g.append(gn);
    run.elems.set(n.id, { g: gn, sub, placed: n });
  }
}

function apply(ev) {
  const ts = ev.ts;
  if (run.t0 === null) run.t0 = ts;
  run.tEnd = ts;
  switch (ev.event) {
    case "run_started":
    case "started":
      run.status = "running";
      if (ev.node) node(ev.node).state = "running";
      break;
    case "step_started": {
      const n = node(ev.id);
      Object.assign(n, { state: "running", start: ts, tool: ev.tool, startAt: ev.at });
      break;
    }
    case "step_finished": {
      const n = node(ev.id);
      Object.assign(n, { state: ev.status, end: ts, ms: ev.ms, tool: ev.tool, endAt: ev.at, exit: ev.exit_code, error: ev.error });
      if (n.start === undefined) n.start = ts - (ev.ms || 0);
      run.bars.push(n);
      break;
    }
    case "action_started": {
      const n = node(ev.id);
      Object.assign(n, { state: "running", start: ts, tool: ev.tool, startAt: ev.at });
      break;
    }
    case "action_finished": {
      const n = node(ev.id);
      Object.assign(n, { state: ev.status, end: ts, ms: ev.elapsed_ms, tool: ev.tool, endAt: ev.at, error: ev.error ? { message: ev.error } : undefined });
      if (n.start === undefined) n.start = ts - (ev.elapsed_ms || 0);
      run.bars.push(n);
      break;
    }
    case "step_waiting":
      Object.assign(node(ev.id), { state: "waiting", needs: ev.needs, tool: ev.tool });
      break;
    case "step": {
      const n = node(ev.node);
      const start = run.lastTs === null ? ts : run.lastTs;
      Object.assign(n, { state: "completed", start, end: ts, ms: ts - start, edge: ev.edge, endAt: ev.at, step: ev.step, kind: ev.kind, error: undefined });
      n.visits += 1;
      run.bars.push({ id: `${ev.node} #${ev.step}`, node: ev.node, state: "completed", start, end: ts });
      if (ev.edge && ev.edge.to) {
        run.taken.add(`${ev.node}->${ev.edge.to}`);
        node(ev.edge.to).state = "running";
      }
      break;
    }
    case "error": {
      const n = node(ev.node);
      const start = run.lastTs === null ? ts : run.lastTs;
      Object.assign(n, { state: "failed", start, end: ts, ms: ts - start, error: ev.error, endAt: ev.at, handling: ev.handling, step: ev.step });
      n.visits += 1;
      run.bars.push({ id: `${ev.node} #${ev.step}`, node: ev.node, state: "failed", start, end: ts });
      break;
    }
    case "action_retrying":
      // A failed attempt of a node's tool, which runs again (an element's stays with the
      // element): the node still runs, and its step's bar starts where the step started.
      if (ev.index === undefined) {
        Object.assign(node(ev.node), { state: "running", retry: `attempt ${ev.attempt} of ${ev.attempts} failed: ${ev.error.message}` });
      }
      return;
    case "foreach_started":
      run.foreach.set(ev.node, foreachOf(ev.step, ev.count));
      break;
    case "element_started":
    case "element_finished":
      element(ev);
      break;
    case "warning":
      break;
    case "run_finished":
    case "finished":
      run.status = ev.status;
      if (ev.failure) run.failure = ev.failure;
      settle();
      break;
  }
  run.lastTs = ts;
}

// ---- a foreach's elements: a state per element in typed arrays, and a count per state ----

// The elements of a foreach node's latest step: state codes (indexes of ELEMENT_STATES),
// times and error kinds by element index.
function foreachOf(step, count) {
  return {
    step, count, state: new Uint8Array(count), ms: new Float64Array(count).fill(-1),
    error: new Map(), counts: [count, 0, 0, 0],
  };
}

function element(ev) {
  const f = run.foreach.get(ev.node);
  if (!f || f.step !== ev.step || ev.index >= f.count) return;
  const to = ev.event === "element_started" ? 1 : ev.status === "failed" ? 3 : 2;
  f.counts[f.state[ev.index]] -= 1;
  f.counts[to] += 1;
  f.state[ev.index] = to;
  if (ev.ms !== undefined) f.ms[ev.index] = ev.ms;
  if (ev.error) f.error.set(ev.index, ev.error);
}

function elementCounts(f) {
  return ELEMENT_STATES.map((s, k) => `${f.counts[k]} ${s}`).join(", ");
}

// The counts a foreach node shows in the drawing: only those not zero, failed first.
function elementBadge(f) {
  return [3, 1, 2, 0].filter((k) => f.counts[k] > 0).map((k) => `${f.counts[k]} ${ELEMENT_STATES[k]}`).join(", ") || "no elements";
}

// The elements the open list shows: those in the chosen state, from its offset, at most
// ELEMENTS_SHOWN of them (the DOM holds no more, however long the list).
function elementWindow(f, open) {
  const want = ELEMENT_STATES.indexOf(open.state);
  const shown = [];
  let matching = 0;
  for (let i = 0; i < f.count; i++) {
    if (want >= 0 && f.state[i] !== want) continue;
    if (matching >= open.offset && shown.length < ELEMENTS_SHOWN) shown.push(i);
    matching += 1;
  }
  return { shown, matching };
}

function button(text, onClick, disabled) {
  const b = el("button", text);
  b.type = "button";
  b.disabled = Boolean(disabled);
  b.addEventListener("click", onClick);
  return b;
}

// The elements part of a foreach node's detail: the count per state, and on demand the
// elements themselves, a window at a time, with one element's detail on click.
function elementsPart(id, f) {
  const box = el("section", null, "elements");
  box.append(el("p", `${f.count} elements: ${elementCounts(f)}`, "element-counts"));
  const open = run.open && run.open.node === id ? run.open : null;
  if (!open) {
    box.append(button("show elements", () => { run.open = { node: id, state: "", offset: 0, picked: null }; detail(id); }));
    return box;
  }
  const pick = el("select");
  for (const s of ["", ...ELEMENT_STATES]) {
    const o = el("option", s || "every state");
    o.value = s;
    o.selected = s === open.state;
    pick.append(o);
  }
  pick.addEventListener("change", () => { open.state = pick.value; open.offset = 0; detail(id); });
  const { shown, matching } = elementWindow(f, open);
  const last = Math.min(open.offset + shown.length, matching);
  const bar = el("div", null, "element-bar");
  bar.append(pick,
    button("previous", () => { open.offset = Math.max(0, open.offset - ELEMENTS_SHOWN); detail(id); }, open.offset === 0),
    el("span", matching ? `${open.offset + 1}–${last} of ${matching}` : "none", "muted"),
    button("next", () => { open.offset += ELEMENTS_SHOWN; detail(id); }, last >= matching),
    button("hide elements", () => { run.open = null; detail(id); }));
  const list = el("ul", null, "members element-list");
  for (const i of shown) {
    const s = ELEMENT_STATES[f.state[i]];
    const ms = f.ms[i] >= 0 ? `, ${span(f.ms[i])}` : "";
    const li = el("li", `element ${i}: ${s}${ms}`, `s-${s === "done" ? "completed" : s}`);
    li.dataset.index = i;
    li.addEventListener("click", () => { open.picked = i; detail(id); });
    list.append(li);
  }
  box.append(bar, list);
  if (open.picked !== null && open.picked < f.count) {
    const i = open.picked;
    const dl = el("dl", null, "element-detail");
    field(dl, "element", i);
    field(dl, "state", ELEMENT_STATES[f.state[i]]);
    field(dl, "step", f.step);
    field(dl, "duration", f.ms[i] >= 0 ? `${f.ms[i]} ms` : undefined);
    field(dl, "error", f.error.get(i));
    box.append(dl);
  }
  return box;
}

// A run that ended leaves no node running.
function settle() {
  if (run.status === "running") return;
  for (const n of run.nodes.values()) if (n.state === "running") n.state = "pending";
}

function schedule() {
  if (run.frame) return;
  run.frame = requestAnimationFrame(render);
}

function render() {
  run.frame = 0;
  const groups = new Map();
  for (const n of run.nodes.values()) {
    const gid = run.groupOf.get(n.id);
    if (gid) {
      const c = groups.get(gid) || {};
      c[n.state] = (c[n.state] || 0) + 1;
      groups.set(gid, c);
    }
  }
  const shown = visibleNodes();
  for (const [id, e] of run.elems) {
    let state;
    if (e.placed.kind === "group") {
      const c = groups.get(id) || {};
      const known = Object.values(c).reduce((a, b) => a + b, 0);
      c.pending = (c.pending || 0) + e.placed.members.length - known;
      state = c.failed ? "failed" : c.running ? "running" : c.waiting ? "waiting"
        : c.completed === e.placed.members.length ? "completed" : "pending";
      e.sub.textContent = counts(c);
    } else {
      state = (run.nodes.get(id) || { state: "pending" }).state;
      const f = run.foreach.get(id);
      if (f) e.sub.textContent = elementBadge(f);
    }
    const cls = `node ${state}${run.selected === id ? " selected" : ""}${shown.has(id) ? "" : " hidden"}`;
    if (e.g.getAttribute("class") !== cls) e.g.setAttribute("class", cls);
  }
  for (const ed of run.edges) {
    const cls = `edge${run.taken.has(`${ed.from}->${ed.to}`) ? " taken" : ""}${shown.has(ed.from) && shown.has(ed.to) ? "" : " hidden"}`;
    if (ed.elem.getAttribute("class") !== cls) ed.elem.setAttribute("class", cls);
  }
  const h = $("summary").querySelector("h1 .status");
  if (h) { h.textContent = run.status; h.className = `status s-${run.status}`; }
  const now = performance.now();
  if (now - run.ganttAt > 250 || run.status !== "running") {
    run.ganttAt = now;
    gantt();
  }
  if (run.selected) detail(run.selected);
}

// The placed nodes the filters leave: failed path only (the failed nodes and every node
// before them), hide completed, running or waiting only.
function visibleNodes() {
  const failedOnly = $("f-failed").checked, hideDone = $("f-hide-done").checked, active = $("f-active").checked;
  const ids = [...run.elems.keys()];
  const stateOf = (id) => {
    const e = run.elems.get(id);
    return e.g.classList.contains("failed") ? "failed" : (run.nodes.get(id) || { state: "pending" }).state;
  };
  let keep = new Set(ids);
  if (failedOnly) {
    const before = new Map();
    for (const e of run.edges) {
      if (!before.has(e.to)) before.set(e.to, []);
      before.get(e.to).push(e.from);
    }
    const path = new Set();
    const todo = ids.filter((id) => stateOf(id) === "failed");
    while (todo.length) {
      const id = todo.pop();
      if (path.has(id)) continue;
      path.add(id);
      for (const p of before.get(id) || []) todo.push(p);
    }
    keep = path;
  }
  for (const id of [...keep]) {
    const s = stateOf(id);
    if (hideDone && s === "completed") keep.delete(id);
    if (active && s !== "running" && s !== "waiting") keep.delete(id);
  }
  return keep;
}

function gantt() {
  const box = $("gantt");
  if (run.t0 === null) { box.replaceChildren(el("p", "no events yet", "muted")); return; }
  const whole = Math.max(1, run.tEnd - run.t0);
  const from = $("t-from").value === "" ? 0 : Number($("t-from").value);
  const to = $("t-to").value === "" ? whole : Math.max(from + 1, Number($("t-to").value));
  $("t-range").textContent = `${from}–${to} ms of ${whole} ms`;
  const shown = visibleNodes();
  // A bar of a step the drawing does not have (steps streamed in) is always shown.
  const placed = (b) => run.groupOf.get(b.node || b.id) || b.node || b.id;
  const bars = run.bars.filter((b) => !run.elems.has(placed(b)) || shown.has(placed(b)))
    .filter((b) => b.end - run.t0 >= from && b.start - run.t0 <= to);
  const width = Math.max(200, box.clientWidth - 170);
  const rows = bars.slice(0, MAX_BARS).map((b) => {
    const row = el("div", null, "bar-row");
    const label = el("span", `${b.id} ${span(b.end - b.start)}`, "label");
    const left = 160 + Math.max(0, (b.start - run.t0 - from) / (to - from)) * width;
    const right = 160 + Math.min(1, (b.end - run.t0 - from) / (to - from)) * width;
    const bar = el("div", null, `bar ${b.state}`);
    bar.style.left = `${left}px`;
    bar.style.width = `${Math.max(2, right - left)}px`;
    bar.title = `${b.id}: +${b.start - run.t0} ms to +${b.end - run.t0} ms`;
    row.append(label, bar);
    return row;
  });
  if (bars.length > MAX_BARS) rows.push(el("p", `${bars.length - MAX_BARS} more steps: narrow the timeline`, "muted"));
  box.replaceChildren(...rows);
}

function select(id) {
  run.selected = id;
  schedule();
}

function field(dl, name, value, pre) {
  if (value === undefined || value === null || value === "") return;
  dl.append(el("dt", name));
  const dd = el("dd");
  dd.append(pre ? el("pre", json(value)) : document.createTextNode(String(value)));
  dl.append(dd);
}

// The whole events of a node shown in detail (its start's and its end's), loaded once
// each from /api/runs/<id>/event?at=…; the detail is drawn again when they arrive.
function whole(id, n) {
  const out = {};
  for (const [key, at] of [["start", n.startAt], ["end", n.endAt]]) {
    if (at === undefined) continue;
    const cached = run.whole.get(at);
    if (cached) { out[key] = cached; continue; }
    if (run.loading.has(at)) continue;
    run.loading.add(at);
    const forRun = run;
    fetch(`/api/runs/${encodeURIComponent(run.id)}/event?at=${at}`)
      .then((r) => r.json())
      .then((event) => {
        forRun.whole.set(at, event);
        if (run === forRun && run.selected === id) detail(id);
      });
  }
  return out;
}

function detail(id) {
  const box = $("detail");
  const e = run.elems.get(id);
  const dl = el("dl");
  const head = el("h2", id);
  if (e && e.placed.kind === "group") {
    field(dl, "steps", e.placed.members.length);
    field(dl, "states", e.sub.textContent);
    const list = el("ul", null, "members");
    for (const m of e.placed.members.slice(0, MAX_MEMBERS)) {
      const n = run.nodes.get(m) || { state: "pending" };
      const li = el("li", `${m}: ${n.state}`, `s-${n.state}`);
      li.addEventListener("click", () => select(m));
      list.append(li);
    }
    if (e.placed.members.length > MAX_MEMBERS) list.append(el("li", `${e.placed.members.length - MAX_MEMBERS} more`, "muted"));
    box.replaceChildren(head, dl, list);
    return;
  }
  const n = run.nodes.get(id) || { state: "pending" };
  const full = whole(id, n);
  field(dl, "state", n.state);
  field(dl, "runs", (e && e.placed.label) || n.tool);
  if (run.kind === "directive") {
    field(dl, "duration", n.ms === undefined ? undefined : `${n.ms} ms`);
    field(dl, "error", n.error && n.error.message);
    field(dl, "stderr", full.end && full.end.stderr, true);
  } else if (run.kind === "plan") {
    const r = (full.end && full.end.record) || {};
    field(dl, "arguments", full.start && full.start.arguments, true);
    field(dl, "waiting for", n.needs && n.needs.join(", "));
    field(dl, "duration", n.ms === undefined ? undefined : `${n.ms} ms`);
    field(dl, "exit code", n.exit);
    field(dl, "result", r.result, true);
    field(dl, "error", n.error && n.error.message);
    field(dl, "stderr", r.run && r.run.stderr, true);
  } else {
    field(dl, "inputs", full.end && full.end.inputs, true);
    field(dl, "visits", n.visits);
    field(dl, "step", n.step);
    field(dl, "duration", n.ms === undefined ? undefined : `${n.ms} ms`);
    if (n.edge) {
      const to = n.edge.to === null ? n.edge.why : `→ ${n.edge.to}`;
      field(dl, "edge taken", n.edge.when ? `${to} (when ${n.edge.when})` : `${to} (${n.edge.why})`);
    }
    const changes = full.end && full.end.changes;
    field(dl, "state changes", changes && changes.length ? changes : undefined, true);
    field(dl, "last retry", n.retry);
    field(dl, "error", n.error && n.error.message);
    field(dl, "on_error", n.handling);
    field(dl, "stderr", full.end && full.end.stderr, true);
  }
  const f = run.foreach.get(id);
  const parts = [head, dl];
  if (f) parts.push(elementsPart(id, f));
  if (run.groupOf.has(id)) {
    const back = el("button", `back to ${run.groupOf.get(id)}`);
    back.type = "button";
    back.addEventListener("click", () => select(run.groupOf.get(id)));
    box.replaceChildren(...parts, back);
  } else {
    box.replaceChildren(...parts);
  }
}

// ---- routing ----

function route() {
  clearTimeout(listTimer);
  if (run && run.source) run.source.close();
  run = null;
  const m = location.hash.match(/^#\/run\/(.+)$/);
  if (m) showRun(decodeURIComponent(m[1])); else showList();
}

$("f-target").addEventListener("input", relist);
$("f-status").addEventListener("change", relist);
$("list-filters").addEventListener("submit", (e) => e.preventDefault());
for (const id of ["f-failed", "f-hide-done", "f-active", "t-from", "t-to"]) {
  $(id).addEventListener("input", () => { if (run) { run.ganttAt = 0; schedule(); } });
}
$("t-reset").addEventListener("click", () => { $("t-from").value = ""; $("t-to").value = ""; if (run) { run.ganttAt = 0; schedule(); } });
window.addEventListener("hashchange", route);
route();
