import type { Entry, PendingAsk, ReplayDiffLine, ServerEvent, StatusInfo, TraceNote, TraceSpan } from "../types.js";
import { clear, h, ms } from "./dom.js";
import { buildSessions, turnTimings, type SessionView } from "./model.js";
import { renderConversation } from "./render-conv.js";
import { renderTurnSpans } from "./render-spans.js";
import { messagesBySpan, traceparentOf, turnSpans } from "./spans.js";

type View = "conversation" | "messages" | "timing" | "replay";

const token = new URLSearchParams(location.search).get("t") ?? "";
const state = {
  status: undefined as StatusInfo | undefined,
  entries: [] as Entry[],
  notes: [] as TraceNote[],
  asks: [] as PendingAsk[],
  spans: [] as TraceSpan[],
  replay: undefined as ReplayDiffLine[] | undefined,
  session: undefined as string | undefined,
  view: "conversation" as View,
  selected: undefined as number | undefined,
  connected: false,
};

/** Span rows whose details the reader opened (kept across re-renders). */
const openSpans = new Set<string>();

// ---- static skeleton (inputs are created once so typing is never interrupted) ----
const statusEl = h("div", { class: "status", role: "status", "aria-live": "polite" });
const notesEl = h("div", { class: "notes" });
const tabs = (["conversation", "messages", "timing", "replay"] as View[]).map((v, i) =>
  h("button", { class: "tab", role: "tab", "data-view": v, title: `${v} (${i + 1})`, onclick: () => setView(v) }, v[0]!.toUpperCase() + v.slice(1)),
);
const sessionsEl = h("nav", { class: "sessions", "aria-label": "sessions" });
const driveSide = h("div", { class: "drive-side" });
const convEl = h("div", { class: "panel-body", id: "conversation" });
const timingEl = h("div", { class: "panel-body", id: "timing" });
const replayEl = h("div", { class: "panel-body", id: "replay" });
const promptInput = h("textarea", { id: "prompt", rows: 3, placeholder: "Prompt (Ctrl+Enter to send)", "aria-label": "prompt" });
const sendBtn = h("button", { id: "send", onclick: () => void sendPrompt() }, "Send");
const cancelBtn = h("button", { id: "cancel", onclick: () => void post("cancel", { sessionId: state.session }) }, "Cancel");
const controlsEl = h("div", { class: "session-controls" });
const composer = h("div", { class: "composer" }, promptInput, h("div", { class: "composer-buttons" }, sendBtn, cancelBtn), controlsEl);
const mainPanel = h("section", { class: "main-panel" }, h("div", { class: "tabs", role: "tablist" }, ...tabs), convEl, timingEl, replayEl, composer);
const dirFilter = h("select", { id: "f-dir", "aria-label": "direction", onchange: () => schedule() }, h("option", { value: "" }, "both ways"), h("option", { value: "client" }, "client → agent"), h("option", { value: "agent" }, "agent → client"));
const methodFilter = h("select", { id: "f-method", "aria-label": "method", onchange: () => schedule() }, h("option", { value: "" }, "all methods"));
const searchInput = h("input", { id: "f-search", type: "search", placeholder: "search (/)", "aria-label": "search messages", oninput: () => schedule() });
const issuesOnly = h("input", { id: "f-issues", type: "checkbox", onchange: () => schedule() });
const sessionOnly = h("input", { id: "f-session", type: "checkbox", onchange: () => schedule() });
const listEl = h("div", { class: "list", role: "listbox", "aria-label": "messages", tabindex: 0 });
const detailEl = h("div", { class: "detail", "aria-live": "polite" });
const rawPanel = h(
  "section",
  { class: "raw-panel" },
  h("div", { class: "filters" }, dirFilter, methodFilter, searchInput, h("label", {}, issuesOnly, " issues only"), h("label", {}, sessionOnly, " this session")),
  listEl,
  detailEl,
);
const app = document.getElementById("app") as HTMLElement;
app.append(h("header", {}, h("h1", {}, "ACP inspect"), statusEl), notesEl, h("div", { class: "layout" }, h("aside", {}, sessionsEl, driveSide), mainPanel, rawPanel));

// ---- data ----
function apply(e: ServerEvent): void {
  switch (e.type) {
    case "hello":
      Object.assign(state, { status: e.status, entries: e.entries, notes: e.notes, asks: e.asks, spans: e.spans, replay: e.replay });
      break;
    case "spans":
      state.spans.push(...e.spans);
      break;
    case "entry":
      state.entries[e.entry.seq - 1] = e.entry;
      break;
    case "patch": {
      const x = state.entries[e.seq - 1];
      if (x) Object.assign(x, { pairSeq: e.pairSeq, latencyMs: e.latencyMs });
      break;
    }
    case "note":
      state.notes.push(e.note);
      break;
    case "status":
      state.status = e.status;
      break;
    case "asks":
      state.asks = e.asks;
      break;
    case "replay":
      state.replay = e.diff;
      break;
  }
  schedule();
}

const events = new EventSource(`/events?t=${encodeURIComponent(token)}`);
events.onmessage = (m: MessageEvent<string>) => apply(JSON.parse(m.data) as ServerEvent);
events.onopen = () => ((state.connected = true), schedule());
events.onerror = () => ((state.connected = false), schedule());

async function post(action: string, body: Record<string, unknown>): Promise<void> {
  const res = await fetch(`/api/${action}`, { method: "POST", headers: { "content-type": "application/json", "x-inspect-token": token }, body: JSON.stringify(body) });
  const answer = (await res.json()) as { ok?: boolean; error?: string; result?: { sessionId?: string } };
  if (!res.ok) {
    state.notes.push({ ts: Date.now(), note: { level: "error", text: `${action}: ${answer.error ?? res.statusText}` } });
  } else if (answer.result?.sessionId) {
    state.session = answer.result.sessionId;
  }
  schedule();
}

async function sendPrompt(): Promise<void> {
  const text = promptInput.value.trim();
  if (!text || !state.session) return;
  promptInput.value = "";
  await post("prompt", { sessionId: state.session, text });
}

// ---- rendering (at most once per frame) ----
let pending = false;
function schedule(): void {
  if (pending) return;
  pending = true;
  requestAnimationFrame(() => {
    pending = false;
    render();
  });
}

function setView(v: View): void {
  state.view = v;
  schedule();
}

function selectSession(id: string): void {
  state.session = id;
  schedule();
}

function select(seq: number | undefined, focus = false): void {
  state.selected = seq;
  render();
  if (focus && seq !== undefined) listEl.querySelector<HTMLElement>(`[data-seq="${seq}"]`)?.scrollIntoView({ block: "nearest" });
}

function filtered(): Entry[] {
  const dir = dirFilter.value;
  const method = methodFilter.value;
  const q = searchInput.value.toLowerCase();
  return state.entries.filter(
    (e) =>
      (!dir || e.from === dir) &&
      (!method || e.method === method) &&
      (!issuesOnly.checked || e.issues.length > 0) &&
      (!sessionOnly.checked || e.sessionId === state.session) &&
      (!q || JSON.stringify(e.message).toLowerCase().includes(q)),
  );
}

function render(): void {
  const st = state.status;
  const { sessions, terminals } = buildSessions(state.entries);
  if (!state.session || !sessions.some((s) => s.sessionId === state.session)) state.session = sessions[0]?.sessionId ?? state.session;
  const current = sessions.find((s) => s.sessionId === state.session);
  const issues = state.entries.filter((e) => e.issues.length > 0).length;
  document.body.dataset.view = state.view;
  document.body.dataset.mode = st?.mode ?? "";
  clear(
    statusEl,
    h("span", { class: "badge mode" }, st?.mode ?? "…"),
    h("span", { class: `badge state-${st?.state ?? "starting"}`, id: "state" }, st?.state ?? "connecting"),
    h("span", { class: "agent", title: "agent" }, st?.agent ?? ""),
    h("span", {}, `${state.entries.length} messages`),
    h("button", { class: `issues ${issues ? "has" : ""}`, onclick: () => ((issuesOnly.checked = true), setView("messages")) }, `${issues} flagged`),
    st?.trace ? h("span", { class: "trace", title: "trace file" }, st.trace) : null,
    state.connected ? null : h("span", { class: "badge state-failed" }, "disconnected"),
  );
  clear(notesEl, ...[...(st?.detail && st.state === "failed" ? [{ ts: 0, note: { level: "error" as const, text: st.detail } }] : []), ...state.notes].map((n) => h("div", { class: `note note-${n.note.level}`, role: n.note.level === "error" ? "alert" : undefined }, n.note.text)));
  for (const t of tabs) {
    const active = t.dataset.view === state.view;
    t.setAttribute("aria-selected", String(active));
    t.hidden = t.dataset.view === "replay" && !state.replay;
  }
  renderSessions(sessions);
  renderDrive(current);
  // Follow a streaming turn unless the reader scrolled up.
  const follow = [convEl, listEl].map((el) => el.scrollHeight - el.scrollTop - el.clientHeight < 40);
  const timeline = state.spans.length > 0 ? (answer: number) => showTiming(`tr.turn-spans[data-turn="${state.entries[answer - 1]?.pairSeq ?? 0}"]`) : undefined;
  clear(convEl, renderConversation(current, terminals, state.asks, { answer: (a, optionId) => void post("permission", { key: a.key, optionId }), jump: (seq) => (setView("messages"), select(seq, true)), ...(timeline ? { timeline } : {}) }));
  renderMessages();
  renderTiming();
  renderReplay();
  [convEl, listEl].forEach((el, i) => {
    if (follow[i] && !(el === listEl && state.selected !== undefined)) el.scrollTop = el.scrollHeight;
  });
}

function renderSessions(sessions: SessionView[]): void {
  clear(
    sessionsEl,
    h("h2", {}, "Sessions"),
    ...(sessions.length === 0 ? [h("p", { class: "empty" }, "none yet")] : []),
    ...sessions.map((s) =>
      h(
        "button",
        { class: "session", "aria-current": s.sessionId === state.session ? "true" : undefined, onclick: () => selectSession(s.sessionId) },
        h("span", { class: "s-title" }, s.title ?? s.sessionId),
        h("span", { class: "s-meta" }, `${s.messageCount} msgs`, s.issueCount ? ` · ${s.issueCount} flagged` : "", s.promptInFlight ? " · running" : ""),
      ),
    ),
  );
}

function renderDrive(current: SessionView | undefined): void {
  const driving = state.status?.mode === "drive" && state.status.state === "running";
  composer.hidden = !driving || !current;
  cancelBtn.disabled = !current?.promptInFlight;
  sendBtn.disabled = !!current?.promptInFlight;
  if (!driving) return clear(driveSide);
  if (!driveSide.firstChild) {
    const cwd = h("input", { id: "new-cwd", value: state.status?.drive?.cwd ?? "", "aria-label": "session cwd" });
    const loadId = h("input", { id: "load-id", placeholder: "session id", "aria-label": "session id to load" });
    driveSide.append(
      h("h2", {}, "Drive"),
      h("label", { for: "new-cwd" }, "cwd"),
      cwd,
      h("button", { id: "new-session", onclick: () => void post("new", { cwd: cwd.value }) }, "New session"),
      ...(state.status?.drive?.loadSession ? [loadId, h("button", { id: "load-session", onclick: () => void post("load", { sessionId: loadId.value, cwd: cwd.value }) }, "Load session")] : []),
    );
  }
  const controls: Node[] = [];
  if (current?.modes && current.modes.availableModes.length > 0) {
    const sel = h("select", { "aria-label": "mode", onchange: () => void post("mode", { sessionId: current.sessionId, modeId: sel.value }) }, ...current.modes.availableModes.map((m) => h("option", { value: m.id, selected: m.id === current.modes?.currentModeId }, m.name)));
    controls.push(h("label", {}, "mode ", sel));
  }
  for (const o of current?.configOptions ?? []) {
    if (o.type !== "select") continue;
    const sel = h("select", { "aria-label": o.name, onchange: () => void post("config", { sessionId: current?.sessionId, configId: o.id, value: sel.value }) }, ...o.options.map((x) => h("option", { value: x.value, selected: x.value === o.currentValue }, x.name)));
    controls.push(h("label", {}, `${o.name} `, sel));
  }
  // Rebuilt unless the reader is using one of them (an open select would close).
  if (!controlsEl.contains(document.activeElement)) clear(controlsEl, ...controls);
}

function updateKind(e: Entry): string | undefined {
  if (e.method !== "session/update" || typeof e.message !== "object" || e.message === null) return undefined;
  const params = (e.message as { params?: { update?: { sessionUpdate?: unknown } } }).params;
  return typeof params?.update?.sessionUpdate === "string" ? params.update.sessionUpdate : undefined;
}

function arrow(e: Entry): string {
  return e.from === "client" ? "C→A" : "A→C";
}

function renderMessages(): void {
  const methods = [...new Set(state.entries.map((e) => e.method).filter((m): m is string => !!m))].sort();
  if (methodFilter.options.length - 1 !== methods.length) {
    const keep = methodFilter.value;
    clear(methodFilter, h("option", { value: "" }, "all methods"), ...methods.map((m) => h("option", { value: m, selected: m === keep }, m)));
  }
  const t0 = state.entries[0]?.ts ?? 0;
  const rows = filtered();
  clear(
    listEl,
    ...rows.map((e) =>
      h(
        "div",
        { class: `row from-${e.from} kind-${e.kind} ${e.issues.length ? "flagged" : ""} ${e.seq === state.selected ? "selected" : ""}`, role: "option", "aria-selected": String(e.seq === state.selected), "data-seq": e.seq, onclick: () => select(e.seq) },
        h("span", { class: "c-seq" }, `#${e.seq}`),
        h("span", { class: "c-time" }, `+${((e.ts - t0) / 1000).toFixed(3)}s`),
        h("span", { class: "c-dir" }, arrow(e)),
        h("span", { class: "c-method" }, e.kind === "response" ? `↩ ${e.method ?? "?"}` : (e.method ?? e.kind), updateKind(e) ? h("span", { class: "c-kind" }, ` ${updateKind(e)}`) : null),
        h("span", { class: "c-id" }, e.id !== undefined ? `id ${String(e.id)}` : ""),
        h("span", { class: "c-lat" }, e.latencyMs !== undefined ? ms(e.latencyMs) : e.kind === "request" ? "pending" : ""),
        h("span", { class: "c-flag" }, e.issues.length ? `⚠ ${e.issues.map((i) => i.rule).join(", ")}` : ""),
      ),
    ),
  );
  const sel = state.selected !== undefined ? state.entries[state.selected - 1] : undefined;
  if (!sel) return clear(detailEl, h("p", { class: "empty" }, "Select a message (j/k, arrows)."));
  clear(
    detailEl,
    h("div", { class: "d-head" }, `#${sel.seq} ${arrow(sel)} ${sel.kind} ${sel.method ?? ""}`, sel.pairSeq !== undefined ? h("button", { class: "pair", onclick: () => select(sel.pairSeq, true) }, sel.kind === "request" ? `answer #${sel.pairSeq} (${ms(sel.latencyMs)})` : `request #${sel.pairSeq}`) : null),
    traceLine(sel.message),
    ...sel.issues.map((i) => h("div", { class: `issue issue-${i.severity}`, role: "note" }, h("strong", {}, i.rule), `: ${i.detail}`)),
    h("pre", { class: "json" }, typeof sel.message === "string" ? sel.message : JSON.stringify(sel.message, null, 2)),
  );
}

/** A message's trace id and sender's span (`_meta.traceparent`); with spans of that trace, a link to its timeline. */
function traceLine(message: unknown): HTMLElement | null {
  const tp = traceparentOf(message);
  if (!tp) return null;
  const timeline = state.spans.some((x) => x.traceId === tp.traceId) ? h("button", { class: "to-timeline", onclick: () => showTrace(tp.traceId) }, "timeline") : null;
  return h("div", { class: "d-trace", title: "W3C trace context (_meta.traceparent)" }, "trace ", h("code", { class: "trace-id" }, tp.traceId), " · sender's span ", h("code", {}, tp.spanId), " ", timeline);
}

/** The Timing view, scrolled to the turn whose timeline has this trace. */
function showTrace(traceId: string): void {
  showTiming(`.spans[data-traces~="${traceId}"]`);
}

/** The Timing view, scrolled to what `selector` finds (a turn's timeline). */
function showTiming(selector: string): void {
  state.view = "timing";
  render();
  timingEl.querySelector<HTMLElement>(selector)?.scrollIntoView({ block: "start" });
}

/** CSP forbids style attributes; CSSOM custom properties are fine. */
function bar(widthPct: number, humanPct: number): HTMLElement {
  const el = h("div", { class: "bar" });
  el.style.setProperty("--w", `${widthPct.toFixed(1)}%`);
  el.style.setProperty("--h", `${humanPct.toFixed(1)}%`);
  return el;
}

function renderTiming(): void {
  if (state.view !== "timing") return;
  const turns = turnTimings(state.entries).filter((t) => !state.session || t.sessionId === state.session);
  const longest = Math.max(1, ...turns.map((t) => t.durationMs ?? 0));
  const sentBy = messagesBySpan(state.entries);
  const jump = (seq: number): void => (setView("messages"), select(seq, true));
  clear(
    timingEl,
    turns.length === 0
      ? h("p", { class: "empty" }, "No prompt turns yet.")
      : h(
          "table",
          { class: "timing" },
          h("thead", {}, h("tr", {}, ...["turn", "first update", "duration", "deltas", "deltas/s", "longest gap", "waiting on human", "stop", ""].map((c) => h("th", {}, c)))),
          h(
            "tbody",
            {},
            ...turns.flatMap((t) => {
              const spans = turnSpans(t, state.entries, state.spans);
              const row = h(
                "tr",
                {},
                h("td", {}, `#${t.seq}`),
                h("td", {}, ms(t.firstUpdateMs)),
                h("td", {}, ms(t.durationMs)),
                h("td", {}, t.chunks),
                h("td", {}, t.chunksPerSecond !== undefined ? t.chunksPerSecond.toFixed(1) : "–"),
                h("td", {}, ms(t.longestGapMs)),
                h("td", {}, ms(t.humanMs)),
                h("td", {}, t.stopReason ?? "running"),
                h("td", { class: "bar-cell", title: "duration; the waiting-on-human part first" }, bar(((t.durationMs ?? 0) / longest) * 100, t.durationMs ? (t.humanMs / t.durationMs) * 100 : 0)),
              );
              // The agent's spans of this turn (when it traced to our receiver), under its row.
              return spans ? [row, h("tr", { class: "turn-spans", "data-turn": t.seq }, h("td", { colspan: 9 }, renderTurnSpans(spans, sentBy, jump, openSpans)))] : [row];
            }),
          ),
        ),
  );
}

function renderReplay(): void {
  if (!state.replay) return clear(replayEl, h("p", { class: "empty" }, "Not a replay."));
  const changed = state.replay.filter((d) => d.op !== "same").length;
  const mark = { same: " ", removed: "−", added: "+" } as const;
  clear(
    replayEl,
    h("p", {}, changed === 0 ? "The agent answered the same (ids and timestamps ignored)." : `${changed} line(s) differ: − recorded, + now.`),
    h("pre", { class: "diff replay-diff" }, ...state.replay.map((d) => h("span", { class: `d-${d.op}` }, `${mark[d.op]} ${d.text}\n`))),
  );
}

// ---- keyboard ----
document.addEventListener("keydown", (ev) => {
  const target = ev.target as HTMLElement;
  const typing = target.tagName === "INPUT" || target.tagName === "TEXTAREA" || target.tagName === "SELECT";
  if (target === promptInput && ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) {
    ev.preventDefault();
    void sendPrompt();
    return;
  }
  if (ev.key === "Escape") {
    (document.activeElement as HTMLElement | null)?.blur();
    return;
  }
  if (typing || ev.ctrlKey || ev.metaKey || ev.altKey) return;
  const views: View[] = ["conversation", "messages", "timing", "replay"];
  const rows = filtered();
  const at = rows.findIndex((e) => e.seq === state.selected);
  switch (ev.key) {
    case "/":
      ev.preventDefault();
      searchInput.focus();
      break;
    case "1":
    case "2":
    case "3":
    case "4":
      setView(views[Number(ev.key) - 1]!);
      break;
    case "j":
    case "ArrowDown":
      if (target !== listEl && ev.key === "ArrowDown") return;
      ev.preventDefault();
      select(rows[Math.min(rows.length - 1, at + 1)]?.seq, true);
      break;
    case "k":
    case "ArrowUp":
      if (target !== listEl && ev.key === "ArrowUp") return;
      ev.preventDefault();
      select(rows[Math.max(0, at - 1)]?.seq, true);
      break;
    case "p": {
      const pair = state.selected !== undefined ? state.entries[state.selected - 1]?.pairSeq : undefined;
      if (pair !== undefined) select(pair, true);
      break;
    }
    case "[":
    case "]": {
      const ids = buildSessions(state.entries).sessions.map((s) => s.sessionId);
      const i = ids.indexOf(state.session ?? "");
      const next = ids[(i + (ev.key === "]" ? 1 : ids.length - 1)) % Math.max(1, ids.length)];
      if (next) selectSession(next);
      break;
    }
  }
});

render();
