import { RequestError } from "@agentclientprotocol/sdk/unstable";
import type { Logger } from "../../core/logger.js";
import { errorMessage } from "../../core/errors.js";
import type { HostSessionInfo } from "./host-services.js";

/** What the client's permission policy is asked before a host service acts. */
/** `roots` are the canonical approved roots of the session (cwd first). */
export type HostAccessRequest =
  | { kind: "fs_read"; sessionId: string; path: string; resolvedPath: string; roots: string[] }
  | { kind: "fs_write"; sessionId: string; path: string; resolvedPath: string; roots: string[] }
  | { kind: "terminal"; sessionId: string; command: string; args: string[]; cwd: string; roots: string[] };

/** `{ deny: reason }` refuses with the reason in the message (e.g. which preset or rule said no). */
export type HostVerdict = "allow" | "deny" | { deny: string };

/** Optional gate (e.g. the client's permission policy); "deny" refuses the request with -32602. */
export type HostAuthorize = (request: HostAccessRequest) => HostVerdict | Promise<HostVerdict>;

/** Why a request was refused; stable strings, also sent as `error.data.reason`. */
export type HostRefusalReason =
  | "disabled"
  | "invalid_path"
  | "not_absolute"
  | "outside_roots"
  | "symlink"
  | "dangling_symlink"
  | "not_a_file"
  | "not_a_directory"
  | "hard_link"
  | "too_large"
  | "not_text"
  | "no_parent"
  | "denied"
  | "invalid_argument"
  | "unknown_terminal"
  | "limit_reached"
  | "spawn_failed"
  | "disposed";

/** One observed host call and its verdict (audit log, tests). */
export interface HostAuditEvent {
  /** `terminal_exit` is not a request: the command of a terminal ended (exit code or signal). */
  kind: "fs_read" | "fs_write" | "terminal_create" | "terminal_output" | "terminal_wait" | "terminal_kill" | "terminal_release" | "terminal_exit";
  sessionId: string;
  /** As the agent sent it (fs) or the cwd (terminal/create). */
  path?: string;
  /** The canonical path the host checked and used. */
  resolvedPath?: string;
  command?: string;
  args?: string[];
  terminalId?: string;
  verdict: "allowed" | "refused" | "failed";
  reason?: HostRefusalReason | "not_found" | "cancelled" | "error";
  message?: string;
  /** fs: where the content came from / went to. */
  source?: "disk" | "buffer";
  bytes?: number;
  /** terminal_exit: how the command ended. */
  exitCode?: number | null;
  signal?: string | null;
}

/** Told every host-service call and its verdict (the audit trail of `prompt --audit`, tests); it must not throw. */
export type HostObserver = (event: HostAuditEvent) => void;

/** Roots a request may touch: session cwd + additional directories, plus extras (all absolute). */
export type HostRootsOption = string[] | ((session: HostSessionInfo) => string[] | Promise<string[]>);

export async function sessionRoots(session: HostSessionInfo, extra: HostRootsOption | undefined, replaceDefaults: boolean): Promise<string[]> {
  const base = replaceDefaults ? [] : [session.cwd, ...session.additionalDirectories];
  if (extra === undefined) return base;
  const more = typeof extra === "function" ? await extra(session) : extra;
  return [...base, ...more];
}

/** A refusal the agent can act on: -32602 with `{ reason, path? }` as data; never file contents. */
export function refusal(reason: HostRefusalReason, message: string, data: Record<string, unknown> = {}): RequestError {
  return RequestError.invalidParams({ reason, ...data }, message);
}

/** A path as quoted in error messages: JSON-escaped (NUL, newlines) and shortened when huge. */
export function shown(path: string): string {
  const text = path.length > 240 ? `${path.slice(0, 160)}…${path.slice(-60)}` : path;
  return JSON.stringify(text);
}

export function refusalReason(error: unknown): HostAuditEvent["reason"] {
  if (error instanceof RequestError) {
    if (error.code === -32002) return "not_found";
    if (error.code === -32800) return "cancelled";
    const data = error.data as { reason?: unknown } | undefined;
    if (typeof data?.reason === "string") return data.reason as HostRefusalReason;
  }
  return "error";
}

/** Observers must never break a request. */
export function notifyObserver(observer: HostObserver | undefined, event: HostAuditEvent, logger: Logger): void {
  if (!observer) return;
  try {
    observer(event);
  } catch (error) {
    logger.warn("host service observer threw", { error: errorMessage(error) });
  }
}

export async function checkAuthorized(authorize: HostAuthorize | undefined, request: HostAccessRequest, what: string): Promise<void> {
  if (!authorize) return;
  const verdict = await authorize(request);
  if (verdict === "allow") return;
  const why = typeof verdict === "object" ? verdict.deny : "the client's permission policy";
  throw refusal("denied", `${what}: denied by ${why}`, { rule: why });
}

export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw RequestError.requestCancelled(undefined, "the request was cancelled");
}

export function errnoCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}
