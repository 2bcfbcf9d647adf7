import type { AcpSessionEvent, DiffContent, ToolCallState } from "../acp/client/index.js";
import { AgentExitedError, TurnInterruptedError } from "../acp/client/index.js";
import { sanitizeDeep, stripControls } from "./terminal-safe.js";

export interface Writer {
  write(text: string): unknown;
}

/** NDJSON: one event per line; errors become plain data (name, message, code, exit details). */
export class JsonRenderer {
  readonly #out: Writer;
  constructor(out: Writer) {
    this.#out = out;
  }

  line(value: Record<string, unknown>): void {
    this.#out.write(`${JSON.stringify(value)}\n`);
  }

  event(event: AcpSessionEvent): void {
    if (event.type === "error") return; // the final line reports errors (see `error`)
    this.line(event as unknown as Record<string, unknown>);
  }

  /** The last line when the turn failed: `stopReason` is null. */
  error(error: unknown, exitCode: number): void {
    this.line({ type: "error", stopReason: null, exitCode, error: errorData(error) });
  }
}

export function errorData(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { message: String(error) };
  const data: Record<string, unknown> = { name: error.name, message: error.message };
  const extra = error as unknown as Record<string, unknown>;
  for (const key of ["code", "capability", "exitCode", "signal", "stderrTail", "data"]) if (extra[key] !== undefined) data[key] = extra[key];
  return data;
}

const ansi = (code: string) => (text: string) => `\u001b[${code}m${text}\u001b[0m`;
const plain = (text: string) => text;

/** The readable stream of a turn: text as it comes, thoughts dimmed, tools with status, diffs, plans. */
export class TextRenderer {
  readonly #out: Writer;
  readonly #dim: (t: string) => string;
  readonly #bold: (t: string) => string;
  readonly #red: (t: string) => string;
  readonly #green: (t: string) => string;
  readonly #yellow: (t: string) => string;
  readonly #cyan: (t: string) => string;
  #atLineStart = true;
  #inThought = false;
  readonly #status = new Map<string, string>();
  readonly #terminalOutput: (terminalId: string) => string | undefined;

  readonly #raw: boolean;

  /**
   * `terminalOutput`: a client terminal's final output by id (the CLI's own terminal host keeps it).
   * Everything from the agent is stripped of control and escape sequences unless `raw`.
   */
  constructor(out: Writer, color: boolean, terminalOutput: (terminalId: string) => string | undefined = () => undefined, raw = false) {
    this.#out = out;
    this.#raw = raw;
    this.#terminalOutput = raw ? terminalOutput : (id) => {
      const text = terminalOutput(id);
      return text === undefined ? undefined : stripControls(text);
    };
    this.#dim = color ? ansi("2") : plain;
    this.#bold = color ? ansi("1") : plain;
    this.#red = color ? ansi("31") : plain;
    this.#green = color ? ansi("32") : plain;
    this.#yellow = color ? ansi("33") : plain;
    this.#cyan = color ? ansi("36") : plain;
  }

  #write(text: string): void {
    if (text === "") return;
    this.#out.write(text);
    this.#atLineStart = text.endsWith("\n");
  }

  /** Starts a block on its own line. */
  #block(text: string): void {
    this.#inThought = false;
    if (!this.#atLineStart) this.#write("\n");
    this.#write(text.endsWith("\n") ? text : `${text}\n`);
  }

  event(received: AcpSessionEvent): void {
    const event = this.#raw ? received : sanitizeDeep(received);
    switch (event.type) {
      case "message_chunk":
        if (this.#inThought) this.#block("");
        this.#inThought = false;
        this.#write(event.text);
        break;
      case "thought_chunk":
        if (!this.#inThought) {
          if (!this.#atLineStart) this.#write("\n");
          this.#write(this.#dim("thinking: "));
        }
        this.#inThought = true;
        this.#write(this.#dim(event.text));
        break;
      case "tool_call":
        this.#status.set(event.toolCall.toolCallId, event.toolCall.status);
        this.#block(`${this.#cyan("⏺")} ${this.#bold(event.toolCall.title || event.toolCall.toolCallId)} ${this.#dim(`[${event.toolCall.kind}] ${event.toolCall.status}`)}`);
        break;
      case "tool_call_update":
        this.#toolUpdate(event.toolCall, event.diffs, event.terminalIds);
        break;
      case "plan":
        this.#block(
          [this.#bold("Plan:"), ...event.entries.map((e) => `  ${e.status === "completed" ? this.#green("[x]") : e.status === "in_progress" ? this.#yellow("[~]") : "[ ]"} ${e.content}`)].join("\n"),
        );
        break;
      case "mode_changed":
        this.#block(this.#dim(`(mode: ${event.modeId})`));
        break;
      case "notice":
        this.#block(`${event.severity === "error" ? this.#red("!") : this.#yellow("!")} ${event.title}${event.description ? ` — ${event.description}` : ""}`);
        break;
      case "permission_answered": {
        const a = event.answer;
        const verdict = a.decision === "allow" ? this.#green("allowed") : a.decision === "deny" ? this.#red("denied") : this.#yellow("cancelled");
        const how = a.optionKind ? `${a.optionKind.replace("_", " ")}; ` : "";
        this.#block(`  ${this.#dim("permission:")} ${verdict} ${this.#dim(`(${how}${a.reason})`)}`);
        break;
      }
      case "done":
        this.#block(this.#dim(`[done] ${event.stopReason}${event.result.usage ? ` · context ${event.result.usage.used}/${event.result.usage.size} tokens` : ""}`));
        break;
      case "error":
        // Every error event ends the turn with a rejection, which the command reports once, on stderr.
        break;
      default:
        break;
    }
  }

  #toolUpdate(state: ToolCallState, diffs: DiffContent[], terminalIds: string[]): void {
    const previous = this.#status.get(state.toolCallId);
    if (previous !== state.status) {
      this.#status.set(state.toolCallId, state.status);
      const mark = state.status === "completed" ? this.#green("✓") : state.status === "failed" ? this.#red("✗") : this.#dim("…");
      this.#block(`  ${mark} ${state.title || state.toolCallId} ${this.#dim(state.status)}`);
    }
    for (const diff of diffs) this.#block(this.#diff(diff));
    const finished = state.status === "completed" || state.status === "failed";
    for (const id of terminalIds) {
      const output = finished ? this.#terminalOutput(id) : undefined;
      if (output === undefined) this.#block(this.#dim(`  [terminal ${id}]`));
      else if (output.trim() !== "") this.#block(this.#dim(indent(truncateLines(output, 8))));
    }
    if (finished) {
      for (const c of state.content) {
        if (c.type === "content" && c.content.type === "text" && c.content.text.trim() !== "") {
          this.#block(this.#dim(indent(truncateLines(c.content.text, 8))));
        }
      }
    }
  }

  #diff(diff: DiffContent): string {
    const header = this.#bold(`  ${diff.oldText == null ? "new file" : "diff"} ${diff.path}`);
    const oldLines = diff.oldText == null ? [] : lines(diff.oldText);
    const newLines = lines(diff.newText);
    // Trim the common prefix and suffix so only the changed region is shown.
    let start = 0;
    while (start < oldLines.length && start < newLines.length && oldLines[start] === newLines[start]) start++;
    let endOld = oldLines.length;
    let endNew = newLines.length;
    while (endOld > start && endNew > start && oldLines[endOld - 1] === newLines[endNew - 1]) {
      endOld--;
      endNew--;
    }
    const removed = oldLines.slice(start, endOld).map((l) => this.#red(`  - ${l}`));
    const added = newLines.slice(start, endNew).map((l) => this.#green(`  + ${l}`));
    return [header, ...limit(removed, 40), ...limit(added, 40)].join("\n");
  }
}

/** Lines of a text; a final newline does not make an extra empty line. */
function lines(text: string): string[] {
  const all = text.split("\n");
  if (all.length > 1 && all.at(-1) === "") all.pop();
  return all;
}

function indent(text: string): string {
  return text.split("\n").map((l) => `    ${l}`).join("\n");
}

function truncateLines(text: string, max: number): string {
  const lines = text.trimEnd().split("\n");
  return lines.length <= max ? lines.join("\n") : [...lines.slice(0, max), `… (${lines.length - max} more lines)`].join("\n");
}

function limit(lines: string[], max: number): string[] {
  return lines.length <= max ? lines : [...lines.slice(0, max), `  … (${lines.length - max} more lines)`];
}

/** One line about a failure, for stderr. */
export function describeFailure(error: unknown): string {
  if (error instanceof AgentExitedError) return error.message;
  // The library's wording promises a re-attach on reconnect; prompt exits instead, and the session line follows.
  if (error instanceof TurnInterruptedError && error.cause instanceof Error) {
    return `the turn was interrupted: ${error.cause.message}; what it did before is kept, its outcome is unknown: continue the session with --session (below)`;
  }
  // The message says what happened; class names (RequestError, AgentConnectionError) mean nothing to a user.
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}
