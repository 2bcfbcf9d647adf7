import { isAbsolute, relative } from "node:path";
import type { FileDiff, ToolProgress } from "../../core/index.js";
import type { AcpSessionEvent, PermissionAnswered, ToolCallState } from "../client/events.js";

/** What a delegated turn produced so far (a finished `PromptResult` has the same shape). */
export interface DelegatedTurnView {
  text: string;
  toolCalls: ToolCallState[];
  permissions: PermissionAnswered[];
}

/** One tool call of the delegate, as reported to the outer model and hosts. */
export interface DelegatedToolCallSummary {
  title: string;
  kind: string;
  status: string;
  paths: string[];
}

/** Structured `ToolResult.data` of a delegation (hosts read it; the model reads the text). */
export interface DelegationReport {
  delegate: string;
  stopReason: string | null;
  sessionId?: string;
  toolCalls: DelegatedToolCallSummary[];
  filesChanged: string[];
  filesRead: string[];
  permissions: Array<{ title: string; decision: string; reason: string }>;
  error?: { name: string; message: string; exitCode?: number | null; signal?: string | null; stderrTail?: string[] };
}

const CHANGING_KINDS = new Set(["edit", "delete", "move"]);
const MAX_LISTED = 20;

/** Summarizes the delegate's turn: its tool calls, the files it touched, the permission answers. */
export function reportFor(delegate: string, view: DelegatedTurnView, cwd: string, stopReason: string | null): DelegationReport {
  const changed = new Set<string>();
  const read = new Set<string>();
  const toolCalls = view.toolCalls.map((call) => {
    const paths = pathsOf(call).map((p) => shortPath(p, cwd));
    const done = call.status === "completed";
    const changes = done && (CHANGING_KINDS.has(call.kind) || call.content.some((c) => c.type === "diff"));
    for (const path of paths) (changes ? changed : read).add(path);
    return { title: call.title, kind: call.kind, status: call.status, paths };
  });
  for (const path of changed) read.delete(path);
  return {
    delegate,
    stopReason,
    toolCalls,
    filesChanged: [...changed],
    filesRead: [...read],
    permissions: view.permissions.map((p) => ({ title: p.title, decision: p.decision, reason: p.reason })),
  };
}

/** The text the outer model reads: the delegate's answer, then a short account of what it did. */
export function reportText(headline: string, answer: string, report: DelegationReport): string {
  const lines: string[] = [];
  if (answer.trim() !== "") lines.push(answer.trim(), "");
  lines.push(`--- ${headline} ---`);
  if (report.toolCalls.length > 0) {
    const calls = report.toolCalls.map((c) => `${c.title} [${c.kind}, ${c.status}]`);
    lines.push(`Tool calls (${calls.length}): ${capped(calls).join("; ")}`);
  } else {
    lines.push("Tool calls: none");
  }
  if (report.filesChanged.length > 0) lines.push(`Files changed: ${capped(report.filesChanged).join(", ")}`);
  if (report.filesRead.length > 0) lines.push(`Files looked at: ${capped(report.filesRead).join(", ")}`);
  const notAllowed = report.permissions.filter((p) => p.decision !== "allow");
  if (notAllowed.length > 0) lines.push(`Permissions not granted: ${capped(notAllowed.map((p) => `"${p.title}" (${p.decision}: ${p.reason})`)).join("; ")}`);
  return lines.join("\n");
}

/** Diffs of the delegate's completed edits, so an editor shows them on the outer tool call. */
export function diffsOf(toolCalls: ToolCallState[]): FileDiff[] {
  const diffs: FileDiff[] = [];
  for (const call of toolCalls) {
    if (call.status !== "completed") continue;
    for (const c of call.content) if (c.type === "diff") diffs.push({ path: c.path, oldText: c.oldText ?? null, newText: c.newText });
  }
  return diffs;
}

/**
 * Turns the delegate's stream into progress of the outer tool call. Message text is appended
 * as is; each tool call, status change and permission answer becomes its own line, so the
 * editor shows one readable log under the outer call. A run of thought chunks becomes one
 * "is thinking" message, then the whole thought in `data` (not in the shown text).
 */
export class DelegationProgress implements DelegatedTurnView {
  text = "";
  readonly permissions: PermissionAnswered[] = [];
  readonly #calls = new Map<string, ToolCallState>();
  readonly #delegate: string;
  readonly #emit: (progress: ToolProgress) => void;
  #atLineStart = true;
  #open = true;
  #messageId: string | undefined;
  /** Thought text of the current run of thought chunks (sent as one progress event). */
  #thought = "";

  constructor(delegate: string, emit: (progress: ToolProgress) => void) {
    this.#delegate = delegate;
    this.#emit = emit;
  }

  get toolCalls(): ToolCallState[] {
    return [...this.#calls.values()];
  }

  /** After this nothing more is emitted (the outer tool call has its result). */
  stop(): void {
    this.#flushThought();
    this.#open = false;
  }

  started(info: { pid: number | undefined; sessionId: string; cwd: string; resumed: boolean }): void {
    const how = info.resumed ? "continuing its session" : `started${info.pid === undefined ? "" : ` (pid ${info.pid})`}`;
    this.#send({ message: `${this.#delegate} ${how}`, data: { delegate: this.#delegate, type: "started", ...info } });
  }

  line(text: string, data: Record<string, unknown>): void {
    this.#send({ text: `${this.#atLineStart ? "" : "\n"}${text}\n`, data: { delegate: this.#delegate, ...data } });
    this.#atLineStart = true;
  }

  handle(event: AcpSessionEvent): void {
    if (event.type === "thought_chunk") {
      if (this.#thought === "") this.#send({ message: `${this.#delegate} is thinking` });
      this.#thought += event.text;
      return;
    }
    this.#flushThought();
    switch (event.type) {
      case "message_chunk": {
        if (event.text === "") return;
        // A new message after text of another one: keep them apart in the answer.
        const newMessage = event.messageId !== undefined && this.#messageId !== undefined && event.messageId !== this.#messageId;
        this.#messageId = event.messageId ?? this.#messageId;
        this.text += newMessage && this.text !== "" && !this.text.endsWith("\n") ? `\n\n${event.text}` : event.text;
        this.#send({ text: event.text, data: { delegate: this.#delegate, type: "message", text: event.text } });
        this.#atLineStart = event.text.endsWith("\n");
        return;
      }
      case "tool_call": {
        this.#calls.set(event.toolCall.toolCallId, event.toolCall);
        const status = event.toolCall.status;
        // Some agents report a call only once it is over.
        const mark = status === "completed" ? "✓" : status === "failed" ? "✗" : "→";
        this.line(`${mark} ${event.toolCall.title}${status === "failed" ? " (failed)" : ""}`, { type: "tool_call", toolCall: brief(event.toolCall) });
        return;
      }
      case "tool_call_update": {
        const before = this.#calls.get(event.toolCall.toolCallId)?.status;
        this.#calls.set(event.toolCall.toolCallId, event.toolCall);
        const status = event.toolCall.status;
        if (status === before || (status !== "completed" && status !== "failed")) return;
        const mark = status === "completed" ? "✓" : "✗";
        this.line(`${mark} ${event.toolCall.title}${status === "failed" ? " (failed)" : ""}`, { type: "tool_call_update", toolCall: brief(event.toolCall) });
        return;
      }
      case "permission_requested":
        this.line(`? ${this.#delegate} asks permission: ${event.request.title}`, { type: "permission_requested", title: event.request.title, kind: event.request.kind });
        return;
      case "permission_answered":
        this.permissions.push(event.answer);
        this.line(`  permission ${event.answer.decision === "allow" ? "granted" : event.answer.decision === "deny" ? "denied" : "cancelled"}: ${event.answer.reason}`, {
          type: "permission_answered",
          title: event.answer.title,
          decision: event.answer.decision,
        });
        return;
      case "plan":
        this.#send({ message: `${this.#delegate} plan: ${event.entries.map((e) => `${e.content} (${e.status})`).join("; ")}`, data: { delegate: this.#delegate, type: "plan", entries: event.entries } });
        return;
      default:
        return;
    }
  }

  #flushThought(): void {
    if (this.#thought === "") return;
    this.#send({ data: { delegate: this.#delegate, type: "thought", text: this.#thought } });
    this.#thought = "";
  }

  #send(progress: ToolProgress): void {
    if (this.#open) this.#emit(progress);
  }
}

function brief(call: ToolCallState): Record<string, unknown> {
  return { toolCallId: call.toolCallId, title: call.title, kind: call.kind, status: call.status, locations: call.locations };
}

function pathsOf(call: ToolCallState): string[] {
  const paths = new Set<string>(call.locations.map((l) => l.path));
  for (const c of call.content) if (c.type === "diff") paths.add(c.path);
  return [...paths];
}

function shortPath(path: string, cwd: string): string {
  if (!isAbsolute(path)) return path;
  const rel = relative(cwd, path);
  return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel) ? rel : path;
}

function capped(items: string[]): string[] {
  return items.length > MAX_LISTED ? [...items.slice(0, MAX_LISTED), `… and ${items.length - MAX_LISTED} more`] : items;
}
