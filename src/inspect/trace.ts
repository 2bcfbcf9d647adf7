import { closeSync, fchmodSync, openSync, readFileSync, writeSync } from "node:fs";
import type { Direction, TraceHeader, TraceLine, TraceMessage, TraceNote, TraceSpan, TraceSpans } from "./types.js";

/**
 * Appends one JSONL line per message, synchronously, so a crash keeps everything up to the
 * crash (the OS holds the written bytes even if this process dies right after).
 */
export class TraceWriter {
  #fd: number | undefined;

  constructor(readonly path: string, header: TraceHeader) {
    // The whole ACP traffic: for this user's eyes only (also a file that was there before, when it is ours to chmod).
    this.#fd = openSync(path, "w", 0o600);
    try {
      fchmodSync(this.#fd, 0o600);
    } catch {
      // another user's file that --trace named and we may write: its owner decides its mode
    }
    this.#write(header);
  }

  message(ts: number, from: Direction, message: unknown): void {
    this.#write({ ts, from, message } satisfies TraceMessage);
  }

  note(note: TraceNote): void {
    this.#write(note);
  }

  spans(ts: number, spans: TraceSpan[]): void {
    this.#write({ ts, spans } satisfies TraceSpans);
  }

  close(): void {
    if (this.#fd === undefined) return;
    closeSync(this.#fd);
    this.#fd = undefined;
  }

  #write(value: unknown): void {
    if (this.#fd === undefined) return;
    writeSync(this.#fd, `${JSON.stringify(value)}\n`);
  }
}

export interface ReadTrace {
  header: TraceHeader | undefined;
  lines: TraceLine[];
  /** What was wrong with the file (torn last line, unreadable lines); empty when clean. */
  warnings: string[];
}

function isTraceLine(v: unknown): v is TraceLine {
  if (typeof v !== "object" || v === null) return false;
  const o = v as Record<string, unknown>;
  if (typeof o.ts !== "number") return false;
  if ("note" in o) return typeof o.note === "object" && o.note !== null;
  if ("spans" in o) return Array.isArray(o.spans);
  return (o.from === "client" || o.from === "agent") && "message" in o;
}

/**
 * Reads a trace up to its last whole line. A torn last line (a crash mid-write) and lines
 * that are not trace records are skipped with a warning; a missing or unreadable file throws.
 */
export function readTrace(path: string): ReadTrace {
  const text = readFileSync(path, "utf8");
  const warnings: string[] = [];
  const raw = text.split("\n");
  const last = raw.pop() ?? "";
  if (last.trim() !== "") warnings.push(`the last line (${last.length} bytes) is torn (no newline): ignored`);
  let header: TraceHeader | undefined;
  const lines: TraceLine[] = [];
  raw.forEach((line, i) => {
    if (line.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      warnings.push(`line ${i + 1} is not JSON: ignored`);
      return;
    }
    if (i === 0 && typeof value === "object" && value !== null && (value as Record<string, unknown>).agentkitInspect === 1) {
      header = value as TraceHeader;
    } else if (isTraceLine(value)) {
      lines.push(value);
    } else {
      warnings.push(`line ${i + 1} is not a trace record: ignored`);
    }
  });
  if (!header) warnings.push("no trace header (not written by agentkit-acp inspect?)");
  return { header, lines, warnings };
}
