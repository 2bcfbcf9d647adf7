import { closeSync, openSync, writeSync } from "node:fs";
import type { AcpSessionEvent, HostAuditEvent } from "../acp/client/index.js";

/** One line of the audit trail: what the agent did on this machine through our host services, or a permission decision. */
export type AuditLine = { type: string } & Record<string, unknown>;

/**
 * The audit trail of a `prompt` run: every host-service operation (fs read/write with path and
 * byte count, terminal create/exit with command line, cwd and exit code, kill, release, refusals)
 * and every permission question and answer. `--json` prints the host lines among the events
 * (permission lines are events already); `--audit-log FILE` appends all of them as JSONL, in
 * text mode too. Writes are synchronous appends, so the file is complete even if we are killed.
 */
export class AuditTrail {
  readonly #json: ((line: Record<string, unknown>) => void) | undefined;
  readonly #fd: number | undefined;

  /** Throws (a usage error for the caller) when the log file cannot be opened for appending. */
  constructor(json: ((line: Record<string, unknown>) => void) | undefined, file: string | undefined) {
    this.#json = json;
    this.#fd = file === undefined ? undefined : openSync(file, "a", 0o600);
  }

  /** For the host services' `onRequest`. */
  readonly host = (event: HostAuditEvent): void => {
    const line = hostLine(event);
    this.#json?.(line);
    this.#append(line);
  };

  /** Session events: permission questions and answers go to the log (`--json` prints them as events). */
  session(event: AcpSessionEvent): void {
    if (event.type === "permission_requested" || event.type === "permission_answered") {
      this.#append({ ...event, time: new Date().toISOString() });
    }
  }

  close(): void {
    if (this.#fd !== undefined) closeSync(this.#fd);
  }

  #append(line: AuditLine): void {
    if (this.#fd === undefined) return;
    try {
      writeSync(this.#fd, `${JSON.stringify(line)}\n`);
    } catch {
      // A full disk must not end the turn; the JSON stream (if any) still has the line.
    }
  }
}

function hostLine(event: HostAuditEvent): AuditLine {
  const line: AuditLine = { type: "host", time: new Date().toISOString(), op: event.kind, sessionId: event.sessionId, verdict: event.verdict };
  const terminal = event.kind.startsWith("terminal_");
  if (event.terminalId !== undefined) line.terminalId = event.terminalId;
  if (terminal && event.command !== undefined) line.commandLine = [event.command, ...(event.args ?? [])].join(" ");
  if (terminal && event.path !== undefined) line.cwd = event.resolvedPath ?? event.path;
  if (!terminal && event.path !== undefined) line.path = event.path;
  if (!terminal && event.resolvedPath !== undefined && event.resolvedPath !== event.path) line.resolvedPath = event.resolvedPath;
  if (event.bytes !== undefined) line.bytes = event.bytes;
  if (event.source !== undefined) line.source = event.source;
  if (event.kind === "terminal_exit") {
    line.exitCode = event.exitCode ?? null;
    line.signal = event.signal ?? null;
  }
  if (event.reason !== undefined) line.reason = event.reason;
  if (event.message !== undefined) line.message = event.message;
  return line;
}
