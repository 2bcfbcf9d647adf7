import { diffLines } from "../diff.js";
import type { PendingAsk } from "../types.js";
import { h, ms } from "./dom.js";
import { markdown } from "./markdown.js";
import { isObject, blockText, type ConvItem, type SessionView, type Terminal, type ToolItem } from "./model.js";

const DIFF_LIMIT = 2_000_000;

function renderDiff(c: Record<string, unknown>): HTMLElement {
  const path = String(c.path ?? "");
  const oldText = typeof c.oldText === "string" ? c.oldText : "";
  const newText = typeof c.newText === "string" ? c.newText : "";
  const split = (t: string): string[] => (t === "" ? [] : t.replace(/\n$/, "").split("\n"));
  const a = split(oldText);
  const b = split(newText);
  const lines = a.length * b.length > DIFF_LIMIT ? [...a.map((t) => ({ op: "removed" as const, text: t })), ...b.map((t) => ({ op: "added" as const, text: t }))] : diffLines(a, b);
  const mark = { same: " ", removed: "-", added: "+" } as const;
  return h(
    "div",
    { class: "diff" },
    h("div", { class: "diff-path" }, c.oldText == null ? `new file ${path}` : path),
    h("pre", {}, ...lines.map((l) => h("span", { class: `d-${l.op}` }, `${mark[l.op]} ${l.text}\n`))),
  );
}

function renderToolContent(content: unknown[], terminals: Map<string, Terminal>): Node[] {
  return content.filter(isObject).map((c) => {
    if (c.type === "diff") return renderDiff(c);
    if (c.type === "terminal") {
      const t = terminals.get(String(c.terminalId));
      return h("div", { class: "terminal" }, h("div", { class: "terminal-head" }, `$ ${t?.command ?? String(c.terminalId)}`, t?.exit ? `  (${t.exit})` : ""), h("pre", {}, t?.output ?? "(no output seen yet)"));
    }
    if (c.type === "content") return h("pre", { class: "tool-text" }, blockText(c.content));
    return h("pre", { class: "tool-text" }, JSON.stringify(c));
  });
}

function renderTool(t: ToolItem, terminals: Map<string, Terminal>): HTMLElement {
  return h(
    "details",
    { class: `tool status-${t.status}`, open: true, "data-seq": t.seq, "data-tool": t.toolCallId },
    h("summary", {}, h("span", { class: `badge st-${t.status}` }, t.status), " ", h("span", { class: "kind" }, t.kind), " ", t.title),
    ...renderToolContent(t.content, terminals),
    t.rawInput !== undefined && t.content.length === 0 ? h("pre", { class: "tool-text" }, JSON.stringify(t.rawInput, null, 1)) : null,
  );
}

export interface ConvHandlers {
  answer(ask: PendingAsk, optionId: string): void;
  jump(seq: number): void;
  /** With spans received: show the span timeline of the turn a prompt answer (seq) ended. */
  timeline?: (seq: number) => void;
}

function item(i: ConvItem, terminals: Map<string, Terminal>, handlers: ConvHandlers): HTMLElement {
  const jump = h("button", { class: "seq", title: "show this message", onclick: () => handlers.jump(i.seq) }, `#${i.seq}`);
  switch (i.type) {
    case "user":
      return h("div", { class: "msg user" }, h("div", { class: "who" }, "user ", jump), h("div", { class: "text" }, i.text));
    case "agent":
      return h("div", { class: "msg agent" }, h("div", { class: "who" }, "agent ", jump), h("div", { class: "text md" }, markdown(i.text)));
    case "thought":
      return h("details", { class: "msg thought" }, h("summary", {}, "thought ", jump), h("div", { class: "text" }, i.text));
    case "tool":
      return renderTool(i, terminals);
    case "plan":
      return h("div", { class: "plan" }, h("div", { class: "who" }, "plan ", jump), h("ol", {}, ...i.entries.map((p) => h("li", { class: `plan-${p.status}` }, h("span", { class: `badge st-${p.status}` }, p.status), " ", p.content))));
    case "permission":
      return h(
        "div",
        { class: "permission", "data-seq": i.seq },
        h("div", { class: "who" }, "permission asked ", jump),
        h("div", { class: "text" }, i.title),
        h("ul", { class: "options" }, ...i.options.map((o) => h("li", { class: o.optionId === i.answer ? "chosen" : "" }, `${o.name} (${o.kind})`, o.optionId === i.answer ? " ✓ chosen" : ""))),
        h("div", { class: "answer" }, i.answer === undefined ? "waiting for the answer…" : i.answer === "cancelled" ? "answered: cancelled" : i.answer === "error" ? "answered with an error" : `answered: ${i.answer}`, i.waitedMs !== undefined ? ` after ${ms(i.waitedMs)}` : ""),
      );
    case "stop":
      return h(
        "div",
        { class: "stop" },
        `turn ended: ${i.stopReason}`,
        i.latencyMs !== undefined ? ` · ${ms(i.latencyMs)}` : "",
        " ",
        jump,
        handlers.timeline ? h("button", { class: "to-timeline", onclick: () => handlers.timeline?.(i.seq) }, "timeline") : null,
      );
    case "error":
      return h("div", { class: "stop error" }, `prompt failed: ${i.text} `, jump);
    case "cancel":
      return h("div", { class: "stop" }, "cancel sent ", jump);
    case "meta":
      return h("div", { class: "meta" }, i.text, " ", jump);
  }
}

export function renderConversation(s: SessionView | undefined, terminals: Map<string, Terminal>, asks: PendingAsk[], handlers: ConvHandlers): HTMLElement {
  if (!s) return h("div", { class: "empty" }, "No session yet. Sessions appear here when the client creates or loads one.");
  const pending = asks.filter((a) => a.sessionId === s.sessionId);
  return h(
    "div",
    { class: "conversation" },
    h(
      "div",
      { class: "conv-head" },
      h("strong", {}, s.title ?? "session"),
      " ",
      h("code", {}, s.sessionId),
      s.cwd ? h("span", { class: "cwd" }, ` ${s.cwd}`) : null,
      s.usage ? h("span", { class: "usage", title: "context tokens used / window" }, ` context ${s.usage.used.toLocaleString()} / ${s.usage.size.toLocaleString()}${s.usage.cost ? ` · ${s.usage.cost}` : ""}`) : null,
    ),
    ...s.items.map((i) => item(i, terminals, handlers)),
    ...pending.map((a) =>
      h(
        "div",
        { class: "ask", role: "group", "aria-label": `permission: ${a.title}` },
        h("div", { class: "who" }, "your answer is needed"),
        h("div", { class: "text" }, a.title),
        h("div", { class: "ask-buttons" }, ...a.options.map((o) => h("button", { class: `opt opt-${o.kind}`, "data-option-id": o.optionId, onclick: () => handlers.answer(a, o.optionId) }, o.name))),
      ),
    ),
  );
}
