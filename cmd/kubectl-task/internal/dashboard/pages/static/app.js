// kubectl task dashboard: the live parts of its pages. The pages work
// without this script; it keeps them current, over server-sent events.
// Every piece of HTML it swaps in was rendered and escaped by the server;
// every log line goes in as text, never as HTML.
"use strict";

// fromHTML parses one element of HTML the server rendered.
function fromHTML(html) {
  const t = document.createElement("template");
  t.innerHTML = html.trim();
  return t.content.firstElementChild;
}

// follow opens url's event stream with handlers by event name; onReopen runs
// when the stream opens again after it was lost (changes may have been missed).
function follow(url, handlers, onReopen) {
  const source = new EventSource(url);
  let lost = false;
  source.addEventListener("open", () => {
    if (lost && onReopen) onReopen();
    lost = false;
    setLiveState("Changes appear as they happen.");
  });
  source.addEventListener("error", () => {
    if (source.readyState !== EventSource.CLOSED) {
      lost = true;
      setLiveState("Connection lost; reconnecting…");
    }
  });
  for (const [name, handle] of Object.entries(handlers)) {
    source.addEventListener(name, (e) => handle(e.data, source));
  }
  return source;
}

function setLiveState(text) {
  const el = document.getElementById("live-state");
  if (el && el.textContent !== text) el.textContent = text;
}

// The runs list: rows change in place; on the first page, new rows come in
// at their place, newest first, and the page keeps its size.
function followRuns(table) {
  const body = table.tBodies[0];
  const first = table.dataset.first === "true";
  const size = parseInt(table.dataset.pageSize, 10) || 50;

  // count adds n to the number of runs the page says the filter selects.
  function count(n) {
    const total = document.getElementById("runs-total");
    if (!total) return;
    const runs = (parseInt(total.dataset.total, 10) || 0) + n;
    total.dataset.total = String(runs);
    total.textContent = runs + (runs === 1 ? " run" : " runs");
  }

  function place(row, isNew) {
    if (isNew) count(1);
    const old = document.getElementById(row.id);
    if (old && old.dataset.order === row.dataset.order) {
      old.replaceWith(row);
      return;
    }
    if (old) old.remove();
    if (!first && !old) return;
    let before = null;
    for (const r of body.rows) {
      if (r.dataset.order < row.dataset.order) { before = r; break; }
    }
    if (!before && body.rows.length >= size) return;
    body.insertBefore(row, before);
    while (body.rows.length > size) body.rows[body.rows.length - 1].remove();
    const empty = document.getElementById("runs-empty");
    if (empty) empty.hidden = true;
  }

  async function resync() {
    const res = await fetch(window.location.href, { headers: { Accept: "text/html" } });
    if (!res.ok) return;
    const doc = new DOMParser().parseFromString(await res.text(), "text/html");
    const fresh = doc.getElementById("runs-body");
    if (fresh) body.replaceChildren(...fresh.children);
    const total = doc.getElementById("runs-total");
    if (total) document.getElementById("runs-total").replaceWith(total);
  }

  follow(table.dataset.live, {
    run: (html) => place(fromHTML(html), false),
    "new": (html) => place(fromHTML(html), true),
    gone: (id) => { count(-1); const r = document.getElementById(id); if (r) r.remove(); },
    resync: () => resync(),
  }, resync);
}

// A run's page: its state, Events and logs follow the run until it has
// finished and its logs were read.
function followRun(run) {
  const panels = document.getElementById("log-panels");
  const logState = document.getElementById("log-state");

  // panel is the log panel of key: a step's name, or "sidecar.NAME" for a
  // sidecar's (a step's name holds no dot), headed title.
  function panel(key, title) {
    let pre = document.getElementById("log-" + key);
    if (pre) return pre;
    const div = document.createElement("div");
    div.className = "log-panel";
    const h = document.createElement("h3");
    h.id = "log-h-" + key;
    h.textContent = title || key;
    pre = document.createElement("pre");
    pre.className = "log";
    pre.id = "log-" + key;
    pre.tabIndex = 0;
    pre.setAttribute("aria-labelledby", h.id);
    div.append(h, pre);
    panels.append(div);
    return pre;
  }

  function appendLine(pre, text, className) {
    const line = document.createElement("span");
    line.className = className || "line";
    line.textContent = text + "\n";
    pre.append(line);
  }

  let lastStep = null;
  follow(run.dataset.live, {
    live: (html) => {
      const fresh = fromHTML(html);
      document.getElementById("run-live").replaceWith(fresh);
      if (fresh.dataset.finished === "true") {
        const cancel = document.getElementById("cancel-form");
        if (cancel) cancel.hidden = true;
      }
    },
    outcome: (html) => document.getElementById("run-outcome").replaceWith(fromHTML(html)),
    events: (html) => document.getElementById("run-events").replaceWith(fromHTML(html)),
    "log-reset": () => {
      for (const pre of panels.querySelectorAll("pre.log")) pre.replaceChildren();
      lastStep = null;
      logState.textContent = "Following the steps' logs…";
    },
    log: (data) => {
      const line = JSON.parse(data);
      if (line.sidecar) {
        appendLine(panel("sidecar." + line.sidecar, "sidecar " + line.sidecar), line.text);
      } else if (line.step) {
        lastStep = line.step;
        appendLine(panel(line.step), line.text);
      } else {
        // A line that marks an attempt goes before the next step's lines.
        for (const pre of panels.querySelectorAll("pre.log")) appendLine(pre, line.text, "mark");
      }
    },
    "log-end": (data) => {
      const end = JSON.parse(data);
      logState.textContent = end.error ? "The logs stopped: " + end.error : "The logs were read to their end.";
    },
    deleted: (_, source) => {
      source.close();
      logState.textContent = "This run was deleted.";
      const live = document.getElementById("run-status");
      if (live) live.textContent = "Deleted";
    },
    done: (_, source) => source.close(),
  });
}

document.addEventListener("DOMContentLoaded", () => {
  const table = document.getElementById("runs");
  if (table && table.dataset.live) followRuns(table);
  const run = document.getElementById("run");
  if (run && run.dataset.live) followRun(run);
});
