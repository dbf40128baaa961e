// agentctx web view: one page over the JSON API (/api/...). Text from the store is only ever
// set as textContent, never parsed as HTML.
"use strict";

const TOKEN = document.querySelector('meta[name="agentctx-token"]').content;
const PAGE = 50;
const state = {
  project: "", view: "records", offset: 0, selected: null, marked: false,
  changes: null, receipt: null, editing: false, seq: 0, listed: false,
};

// ------------------------------------------------------------------ helpers

function $(id) { return document.getElementById(id); }

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "class") node.className = value;
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function showError(message) {
  const box = $("error");
  box.textContent = message || "";
  box.hidden = !message;
}

async function api(path, params) {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params || {})) {
    if (value !== "" && value !== null && value !== undefined && value !== false) {
      query.set(key, value === true ? "1" : value);
    }
  }
  const url = path + (query.toString() ? "?" + query : "");
  const response = await fetch(url, { credentials: "omit" });
  const data = await response.json();
  if (!response.ok) throw new Error(data.error || response.statusText);
  return data;
}

async function post(path, body) {
  const response = await fetch(path, {
    method: "POST", credentials: "omit",
    headers: { "Content-Type": "application/json", "X-Agentctx-Token": TOKEN },
    body: JSON.stringify(body),
  });
  const data = await response.json();
  if (!response.ok) throw new Error(data.error || response.statusText);
  return data;
}

function plural(n, word) { return `${n.toLocaleString()} ${word}${n === 1 ? "" : "s"}`; }

function pad(n) { return String(n).padStart(2, "0"); }

// A stored time (UTC, ISO 8601 with milliseconds) as the reader's local time, to the minute.
function when(iso) {
  if (!iso) return "";
  const t = new Date(iso);
  if (isNaN(t)) return iso;
  return `${t.getFullYear()}-${pad(t.getMonth() + 1)}-${pad(t.getDate())} ${pad(t.getHours())}:${pad(t.getMinutes())}`;
}

// The local date of a stored time.
function day(iso) { return when(iso).slice(0, 10); }

// A stored time shown locally, the stored value in its tooltip.
function time(iso) { return iso ? el("time", { datetime: iso, title: iso }, when(iso)) : null; }

// ``text`` on one line, cut at a word boundary with "…" past ``n`` characters.
function clip(text, n) {
  const line = String(text ?? "").split(/\s+/).join(" ").trim();
  if (line.length <= n) return line;
  const cut = line.slice(0, n - 1);
  const space = cut.lastIndexOf(" ");
  return (space > n / 2 ? cut.slice(0, space) : cut) + "…";
}

const NARROW = window.matchMedia("(max-width: 899px)");

function debounce(fn, ms) {
  let timer = null;
  return (...args) => { clearTimeout(timer); timer = setTimeout(() => fn(...args), ms); };
}

// ------------------------------------------------------------------ records

function recordRow(record) {
  const row = el("li", {
    class: "row" + (record.current ? "" : " old") + (record.id === state.selected ? " selected" : ""),
    "data-id": record.id, tabindex: "0", "aria-selected": record.id === state.selected ? "true" : "false",
    onclick: () => openRecord(record.id),
    onkeydown: (event) => { if (event.key === "Enter") openRecord(record.id); },
  },
  el("span", { class: "muted" }, record.short_id),
  el("span", {}, el("span", { class: "badge" }, record.type)),
  el("span", { class: "title", title: record.title },
    record.pinned ? el("span", { class: "pin", title: "pinned" }, "● ") : null,
    record.title, " ", el("span", { class: "muted" }, day(record.valid_from)),
    record.possibly_stale && record.possibly_stale.length
      ? el("span", { class: "badge stale", title: record.possibly_stale.join(", ") + " no longer exist" }, "possibly stale")
      : null));
  return row;
}

function filters() {
  return {
    project: state.project, q: $("q").value.trim(), type: $("type").value,
    state: $("state").value, order: $("order").value, pinned: $("pinned").checked,
  };
}

async function loadRecords(append) {
  const seq = ++state.seq;
  state.offset = append ? state.offset + PAGE : 0;
  const data = await api("/api/records", { ...filters(), limit: PAGE, offset: state.offset });
  if (seq !== state.seq) return; // a newer search is under way
  const list = $("records");
  if (!append) list.replaceChildren();
  list.append(...data.items.map(recordRow));
  if (!append && state.selected && state.listed && !data.items.some((r) => r.id === state.selected)) {
    clearDetail(); // the record on show was one of the results and left them: do not keep it
  }
  const shown = list.children.length;
  $("count").textContent = data.total === 0
    ? (data.project ? "No records match." : "No project yet: run agentctx init and use Claude Code.")
    : `${shown} of ${data.total} record${data.total === 1 ? "" : "s"}` + (data.q ? ` for “${data.q}”` : "") + (data.matched_by === "substring" ? " (no whole-word match; substring matches)" : "");
  $("more").hidden = shown >= data.total;
  if (!state.marked && shown > 0) {
    state.marked = true;
    performance.mark("first-record-row");
  }
}

function field(label, value) {
  return value ? el("div", {}, el("span", { class: "muted" }, label + " "), value) : null;
}

async function openRecord(id) {
  state.selected = id;
  // Opened from the list (not from the graph, a chain or another view): it leaves with it.
  state.listed = [...document.querySelectorAll("#records .row")].some((row) => row.dataset.id === id);
  for (const row of document.querySelectorAll(".row")) {
    row.classList.toggle("selected", row.dataset.id === id);
    row.setAttribute("aria-selected", row.dataset.id === id ? "true" : "false");
  }
  if (state.view !== "records") { location.hash = "#records"; }
  const data = await api("/api/records/" + encodeURIComponent(id));
  if (state.selected !== id) return; // another record was picked meanwhile
  renderDetail(data);
  if (NARROW.matches) $("detail").scrollIntoView({ block: "start" });
}

function clearDetail() {
  state.selected = null;
  state.editing = false;
  const box = $("detail");
  box.classList.add("empty");
  box.replaceChildren(el("p", { class: "muted" }, "Pick a record to see it in full."));
}

// How the audit trail names a changed field.
const FIELD_NAMES = { title: "title", body: "body", confidence: "confidence",
  reinforce_count: "reinforcement count", valid_from: "valid from", scope: "scope", key: "key" };

function editLine(e, shorts) {
  const what = (() => {
    if (e.field === "pinned") return e.new_value === "1" ? "pinned" : "unpinned";
    if (e.field === "superseded_by") return `superseded by ${shorts[e.new_value] || e.new_value}`;
    if (e.field === "superseded_at") return "retired";
    const name = FIELD_NAMES[e.field] || e.field.replace(/_/g, " ");
    if (e.old_value === null || e.old_value === undefined) return `${name} set to “${clip(e.new_value, 60)}”`;
    return `${name}: “${clip(e.old_value, 60)}” → “${clip(e.new_value, 60)}”`;
  })();
  return el("li", {}, time(e.changed_at), ` ${e.actor}: ${what}`);
}

function renderDetail(data) {
  const r = data.record;
  const box = $("detail");
  const status = r.current ? "current"
    : (r.superseded_by ? `superseded on ${day(r.superseded_at)}` : `retired on ${day(r.superseded_at)}`);
  const shorts = Object.fromEntries(data.chain.map((v) => [v.id, v.short_id]));
  const chain = data.chain.length > 1 ? [
    el("h3", {}, "Chain (oldest first)"),
    el("ol", { class: "chain" }, data.chain.map((v) => el("li", {},
      v.id === r.id ? el("strong", {}, v.title) : el("a", { onclick: () => openRecord(v.id) }, v.title),
      " ", el("span", { class: "muted" }, `${v.short_id} · ${day(v.valid_from)}`),
      v.rationale ? el("div", { class: "why" }, "↓ " + v.rationale) : null))),
  ] : [];
  box.classList.remove("empty");
  box.replaceChildren(...[
    el("h2", { id: "detail-title" }, r.title),
    el("div", { class: "actions" },
      el("span", { class: "badge" }, r.type), el("span", { class: "badge" }, r.confidence),
      el("span", { class: "badge" }, status), r.pinned ? el("span", { class: "badge pin" }, "pinned") : null,
      r.archived ? el("span", { class: "badge" }, "archived") : null,
      data.possibly_stale.length ? el("span", { class: "badge stale" }, "possibly stale") : null),
    el("p", { class: "body" }, r.body || "(no body)"),
    field("id", r.id), field("valid from", time(r.valid_from)), field("recorded", time(r.recorded_at)),
    field("source", r.source), field("session", r.session_id),
    data.retired_because ? field("retired because", data.retired_because) : null,
    data.files.length ? field("files", data.files.join(", ")) : null,
    data.possibly_stale.length ? field("possibly stale",
      data.possibly_stale.join(", ") + " no longer exist" + (data.possibly_stale.length === 1 ? "s" : "")
      + " (agentctx verify resolves it)") : null,
    ...chain,
    data.edits.length ? el("h3", {}, "Audit trail") : null,
    data.edits.length ? el("ul", { class: "edits" }, data.edits.map((e) => editLine(e, shorts))) : null,
    r.current && !r.archived ? actions(r) : null,
  ].filter(Boolean));
}

// Which form field a refusal is about (the first word it names); else it shows at the top.
const FIELD_WORDS = [["rationale", "rationale"], ["why", "rationale"], ["title", "title"],
  ["body", "body"]];

// A write form: a heading, each field with its own error line below it, and the buttons. A
// refusal shows beside the field it names (or at the top of the form), never in the page's
// banner far from it.
function writeForm(heading, inputs, submit, onSubmit, onCancel) {
  const errors = {};
  const top = el("p", { class: "field-error", "data-for": "" });
  const rows = inputs.flatMap(([name, node]) => {
    errors[name] = el("p", { class: "field-error", "data-for": name });
    return [node, errors[name]];
  });
  const show = (message) => {
    top.textContent = "";
    for (const box of Object.values(errors)) box.textContent = "";
    const lowered = String(message).toLowerCase();
    const hit = FIELD_WORDS.find(([word, name]) => lowered.includes(word) && errors[name]);
    (hit ? errors[hit[1]] : top).textContent = message;
  };
  return el("form", { class: "write", onsubmit: (e) => { e.preventDefault(); onSubmit(show); } },
    el("strong", {}, heading), top, ...rows,
    el("div", { class: "actions" }, el("button", { class: "primary", type: "submit" }, submit),
      el("button", { type: "button", onclick: onCancel }, "Cancel")));
}

function actions(r) {
  const forms = el("div", {});
  const cancel = () => { state.editing = false; forms.replaceChildren(); };
  const edit = () => {
    const title = el("input", { value: r.title, "aria-label": "Title" });
    const body = el("textarea", { "aria-label": "Body" });
    body.value = r.body;
    forms.replaceChildren(writeForm("Correct in place (the id is kept; old values are audited)",
      [["title", title], ["body", body]], "Save",
      (show) => write(`/api/records/${r.id}/edit`, { title: title.value, body: body.value }, r.id, show),
      cancel));
    state.editing = true;
  };
  const supersede = () => {
    const title = el("input", { placeholder: "New title (default: the same)", "aria-label": "New title" });
    const body = el("textarea", { placeholder: "What holds now", "aria-label": "New body", required: true });
    const why = el("input", { placeholder: "Why the old record no longer holds", "aria-label": "Rationale", required: true });
    forms.replaceChildren(writeForm("Supersede with a new record (the old one stays in history)",
      [["title", title], ["body", body], ["rationale", why]], "Supersede",
      async (show) => {
        const data = await write(`/api/records/${r.id}/supersede`,
          { title: title.value, body: body.value, rationale: why.value }, null, show);
        if (data) openRecord(data.record.id);
      }, cancel));
    state.editing = true;
  };
  return el("div", {},
    el("div", { class: "actions" },
      el("button", { type: "button", onclick: () => write(`/api/records/${r.id}/pin`, { pinned: !r.pinned }, r.id) },
        r.pinned ? "Unpin" : "Pin"),
      el("button", { type: "button", onclick: edit }, "Edit"),
      el("button", { type: "button", onclick: supersede }, "Supersede")),
    forms);
}

// A write through the API; a refusal goes to ``show`` (the form's own error lines) when given,
// else to the page's banner.
async function write(path, body, reopen, show) {
  try {
    const data = await post(path, body);
    state.editing = false;
    // The write holds; a note says why the project's team file could not follow it.
    showError(data.note ? `Saved, but the team file was not updated: ${data.note}` : "");
    await loadRecords(false);
    if (reopen) await openRecord(reopen);
    return data;
  } catch (error) {
    if (show) show(error.message); else showError(error.message);
    return null;
  }
}

// ------------------------------------------------------------------ other views

async function loadGraph() {
  const data = await api("/api/graph", { project: state.project });
  const counts = { record: 0, file: 0 };
  for (const node of data.nodes) counts[node.kind] += 1;
  const colors = window.AgentctxGraph.COLORS;
  const types = [...new Set(data.nodes.filter((n) => n.kind === "record" && n.current).map((n) => n.type))];
  const swatch = (color, cls) => {  // the colour set through CSSOM: the page's CSP allows no style attribute
    const node = el("span", { class: "swatch" + (cls ? " " + cls : "") });
    node.style.background = color;
    return node;
  };
  $("graph-legend").replaceChildren(
    el("span", {}, `${plural(counts.record, "record")}, ${plural(counts.file, "file")}, ${plural(data.edges.length, "link")}`),
    ...types.map((t) => el("span", { class: "key" }, swatch(colors[t] || "#555"), t)),
    el("span", { class: "key" }, swatch(colors.superseded), "superseded"),
    counts.file ? el("span", { class: "key" }, swatch(colors.file, "file"), "file") : null,
    el("span", {}, "→ supersedes (newer → older)"), el("span", {}, "┄ applies to a file"));
  window.AgentctxGraph.draw($("graph"), data, (node) => { if (node.kind === "record") openRecord(node.id); });
}

function table(headers, rows) {
  return el("table", {},
    el("thead", {}, el("tr", {}, headers.map(([text, cls]) => el("th", { class: cls }, text)))),
    el("tbody", {}, rows));
}

async function loadProfile() {
  const data = await api("/api/profile", { project: state.project });
  const item = (r) => el("tr", {}, el("td", {}, el("a", { href: "#records", onclick: () => openRecord(r.id) }, r.short_id)),
    el("td", {}, r.key || r.category || ""), el("td", {}, r.title), el("td", {}, r.confidence));
  $("view-profile").replaceChildren(
    el("h2", {}, "Project profile" + (data.project ? ` — ${data.project.name}` : "")),
    data.profile.length ? table([["id"], ["key"], ["value"], ["confidence"]], data.profile.map(item))
      : el("p", { class: "muted" }, "No profile detected yet."),
    el("h2", {}, "Developer preferences (every project)"),
    data.preferences.length ? table([["id"], ["category"], ["preference"], ["confidence"]], data.preferences.map(item))
      : el("p", { class: "muted" }, "No preferences yet."));
}

const SVG = "http://www.w3.org/2000/svg";
function svg(tag, attrs, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  if (text !== undefined) node.textContent = text;
  return node;
}

function chart(days) {
  const box = $("chart");
  if (!days.length) { box.replaceChildren(el("p", { class: "muted" }, "Nothing injected in the last 30 days.")); return; }
  const width = 900, height = 200, left = 44, bottom = 22;
  const most = Math.max(...days.map((d) => d.tokens), 1);
  const step = Math.min(40, (width - left) / days.length);
  const root = svg("svg", { viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": "Tokens injected per day" });
  root.append(svg("text", { x: 0, y: 12 }, `${most.toLocaleString()} tokens`));
  days.forEach((d, i) => {
    const h = ((height - bottom - 16) * d.tokens) / most;
    const bar = svg("rect", { class: "bar", x: left + i * step + 1, y: height - bottom - h,
      width: Math.max(1, step - 2), height: h });
    bar.append(svg("title", {}, `${d.day}: ${plural(d.tokens, "token")} in ${plural(d.injections, "injection")}`));
    root.append(bar);
    if (i === 0 || i === days.length - 1 || days.length <= 10) {
      root.append(svg("text", { x: left + i * step, y: height - 6 }, d.day.slice(5)));
    }
  });
  box.replaceChildren(root);
}

async function loadSessions() {
  const data = await api("/api/sessions", { project: state.project, limit: 50 });
  chart(data.days);
  const rows = data.items.map((s) => el("tr", {},
    el("td", { title: s.session_id }, s.session_id.slice(0, 8)), el("td", {}, time(s.started_at)),
    el("td", { class: "num" }, s.session_start_tokens.toLocaleString()),
    el("td", { class: "num" }, `${s.prompt_tokens.toLocaleString()} (${s.prompt_injections})`),
    el("td", { class: "num" }, s.records_injected),
    el("td", { class: "num" }, "$" + s.extraction_usd.toFixed(4))));
  $("sessions").replaceChildren(rows.length
    ? table([["session"], ["started"], ["SessionStart tokens", "num"], ["prompt tokens (injections)", "num"],
      ["records", "num"], ["extraction", "num"]], rows)
    : el("p", { class: "muted" }, "No sessions yet."),
  el("p", { class: "muted" }, `${data.items.length} of ${plural(data.total, "session")}`));
}

async function loadDrift() {
  const view = $("view-drift");
  view.replaceChildren(el("p", { class: "muted" }, "Scanning CLAUDE.md…"));
  const data = await api("/api/drift", { project: state.project });
  const rows = data.candidates.map((c) => el("tr", {},
    el("td", {}, c.class), el("td", {}, el("a", { href: "#records", onclick: () => openRecord(c.id) }, c.short_id || c.id)),
    el("td", { class: "num" }, c.score.toFixed(2)), el("td", {}, c.title),
    el("td", {}, c.file ? `${c.file}${c.line ? ":" + c.line : ""}` : c.note || "")));
  const diff = el("pre", { class: "diff" }, data.diff.split("\n").map((line) =>
    el("span", { class: line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : "" }, line + "\n")));
  view.replaceChildren(
    el("p", { class: "muted" }, `Memory files of ${data.root || "the project"}: ${data.files.join(", ") || "none"}. ` +
      "This view only reads; run agentctx sync --apply to write."),
    rows.length ? table([["class"], ["id"], ["score", "num"], ["record"], ["where"]], rows)
      : el("p", {}, "No drift: CLAUDE.md says what the store knows."),
    data.diff ? el("h2", {}, "Proposed diff") : null, data.diff ? diff : null,
    data.problems.length ? el("ul", {}, data.problems.map((p) => el("li", { class: "muted" }, p))) : null);
}

// ------------------------------------------------------------------ navigation and live updates

const LOADERS = { records: () => loadRecords(false), graph: loadGraph, profile: loadProfile,
  sessions: loadSessions, drift: loadDrift };

function showOnly(view) {
  state.view = view;
  for (const section of document.querySelectorAll(".view")) section.hidden = section.id !== "view-" + view;
  for (const tab of document.querySelectorAll("#tabs a")) tab.classList.toggle("active", tab.dataset.view === view);
}

function show(view) {
  if (!LOADERS[view]) view = "records";
  showOnly(view);
  return run(LOADERS[view]);
}

async function run(fn) {
  try { await fn(); showError(""); } catch (error) { showError(error.message); }
}

async function poll() {
  try {
    const s = await api("/api/status", { project: state.project });
    const moved = state.changes !== null && (s.changes !== state.changes || s.last_receipt !== state.receipt);
    state.changes = s.changes; state.receipt = s.last_receipt;
    $("live").textContent = `agentctx ${s.version} · live`;
    if (moved && !state.editing && state.view !== "drift") await show(state.view);
  } catch (error) {
    $("live").textContent = "server stopped";
  }
}

async function start() {
  // The first page of records asks for the server's default project, so all three requests
  // go out at once.
  const initial = location.hash.slice(1) || "records";
  const first = initial === "records" ? run(() => loadRecords(false)) : null;
  const [status, projects] = await Promise.all([api("/api/status"), api("/api/projects")]);
  state.project = status.project ? status.project.id : "";
  state.changes = status.changes; state.receipt = status.last_receipt;
  $("live").textContent = `agentctx ${status.version} · live`;
  $("project").replaceChildren(...projects.items.map((p) =>
    el("option", { value: p.id, selected: p.id === state.project }, `${p.name} (${p.records})`)));
  $("type").append(...status.types.map((t) => el("option", { value: t }, t)));
  $("order").replaceChildren(...status.orders.map((o) => el("option", { value: o }, o)));
  $("project").addEventListener("change", () => { state.project = $("project").value; clearDetail(); show(state.view); });
  const reload = debounce(() => run(() => loadRecords(false)), 120);
  $("q").addEventListener("input", reload);
  for (const id of ["type", "state", "order", "pinned"]) $(id).addEventListener("change", reload);
  $("filters").addEventListener("submit", (e) => { e.preventDefault(); run(() => loadRecords(false)); });
  $("more").addEventListener("click", () => run(() => loadRecords(true)));
  window.addEventListener("hashchange", () => show(location.hash.slice(1)));
  if (first) { await first; showOnly("records"); } else await show(initial);
  $("q").focus();
  setInterval(poll, 4000);
}

run(start);
