import type * as acp from "@agentclientprotocol/sdk/unstable";
import type { Logger } from "../../core/logger.js";
import { silentLogger } from "../../core/logger.js";
import { errorMessage } from "../../core/errors.js";
import { readConfined, tooLarge, writeConfined, type HardLinkPolicy } from "./fs-disk.js";
import { noFollowFlag } from "../../core/process/platform.js";
import {
  checkAuthorized,
  notifyObserver,
  refusal,
  refusalReason,
  sessionRoots,
  throwIfAborted,
  type HostAuditEvent,
  type HostAuthorize,
  type HostObserver,
  type HostRootsOption,
  shown,
} from "./host-common.js";
import { canonicalRoots, resolveInsideRoots, type ResolvedHostPath } from "./host-paths.js";
import type { FileSystemHostService, HostSessionInfo } from "./host-services.js";
import { sliceLines } from "../../tools/text-window.js";

/** "read": reads only (writes refused and not advertised); "read-write"; or each flag separately. */
export type FileSystemAccess = "read" | "read-write" | { read: boolean; write: boolean };

/** What the host tells the `EditorBuffers` hooks about a checked path: the session and the canonical path. */
export interface EditorBufferInfo {
  sessionId: string;
  /** The canonical path the host checked (the first argument is the normalized requested path). */
  resolvedPath: string;
}

/** Unsaved editor buffers: consulted after the path passed every check. */
export interface EditorBuffers {
  /** The buffer's text when one is open for `path`, else undefined (the disk is read). */
  read(path: string, info: EditorBufferInfo): string | undefined | Promise<string | undefined>;
  /** Return true when the buffer took the write (the disk is then not touched). */
  write?(path: string, content: string, info: EditorBufferInfo): boolean | Promise<boolean>;
}

/** The roots, access and limits of the file-system host service. */
export interface FileSystemHostOptions {
  access: FileSystemAccess;
  /** Approved roots added to the session's cwd + additionalDirectories (or a function of the session). */
  roots?: HostRootsOption;
  /** When true, only `roots` are approved (the session's cwd and additional directories are not). */
  replaceSessionRoots?: boolean;
  /** Largest text a read may return, in UTF-8 bytes (default 10 MiB). */
  maxReadBytes?: number;
  /** Largest content a write may carry, in UTF-8 bytes (default 10 MiB). */
  maxWriteBytes?: number;
  /** Create missing parent directories of a write (only below an approved root). Default true. */
  createDirectories?: boolean;
  /**
   * Files with more than one hard link (another name, possibly outside the roots, for the same
   * content): "refuse" (default) refuses reads and writes (pnpm-style hard-linked stores then read
   * as refused), "refuse-writes" refuses writes only, "allow" allows both.
   */
  hardLinks?: HardLinkPolicy;
  buffers?: EditorBuffers;
  /** Gate asked after the path resolved inside the roots (e.g. the client's permission policy). */
  authorize?: HostAuthorize;
  /** Sees every call and its verdict. */
  onRequest?: HostObserver;
  logger?: Logger;
}

export type { HardLinkPolicy } from "./fs-disk.js";

/** The largest read answered whole by default (10 MiB; use line/limit for more). */
export const DEFAULT_MAX_READ_BYTES = 10 * 1024 * 1024;
/** The largest write accepted by default (10 MiB). */
export const DEFAULT_MAX_WRITE_BYTES = 10 * 1024 * 1024;

/** The host's `fs/*` service, confined to its roots (throws `PlatformFeatureError` where no-follow opens do not exist). */
export function createFileSystemHost(options: FileSystemHostOptions): FileSystemHostService {
  return new FileSystemHost(options);
}

/** The client's file system offered to the agent, confined to approved roots. */
export class FileSystemHost implements FileSystemHostService {
  readonly canRead: boolean;
  readonly canWrite: boolean;
  private readonly logger: Logger;
  private readonly maxReadBytes: number;
  private readonly maxWriteBytes: number;

  constructor(private readonly options: FileSystemHostOptions) {
    // Symlink-race safety rests on no-follow opens: refused where the platform lacks them.
    noFollowFlag("the file-system host service");
    const access = options.access;
    this.canRead = access === "read" || access === "read-write" || (typeof access === "object" && access.read);
    this.canWrite = access === "read-write" || (typeof access === "object" && access.write);
    this.logger = options.logger ?? silentLogger;
    this.maxReadBytes = positive(options.maxReadBytes, DEFAULT_MAX_READ_BYTES, "maxReadBytes");
    this.maxWriteBytes = positive(options.maxWriteBytes, DEFAULT_MAX_WRITE_BYTES, "maxWriteBytes");
  }

  async readTextFile(params: acp.ReadTextFileRequest, session: HostSessionInfo, signal: AbortSignal): Promise<acp.ReadTextFileResponse> {
    const event: HostAuditEvent = { kind: "fs_read", sessionId: session.sessionId, path: params.path, verdict: "allowed" };
    return this.observed(event, async () => {
      const what = "fs/read_text_file";
      if (!this.canRead) throw refusal("disabled", `${what}: this client does not offer file reads`, { path: params.path });
      checkSession(params.sessionId, session, what);
      const line = lineNumber(params.line, what);
      const limit = lineLimit(params.limit, what);
      const roots = await this.roots(session);
      const target = await resolveInsideRoots(params.path, roots, what);
      event.resolvedPath = target.resolved;
      await checkAuthorized(this.options.authorize, { kind: "fs_read", sessionId: session.sessionId, path: target.normalized, resolvedPath: target.resolved, roots }, what);
      throwIfAborted(signal);
      const buffered = await this.options.buffers?.read(target.normalized, { sessionId: session.sessionId, resolvedPath: target.resolved });
      let content: string;
      if (buffered !== undefined) {
        event.source = "buffer";
        content = sliceLines(buffered, line, limit, this.maxReadBytes, tooLarge(params.path, what));
      } else {
        event.source = "disk";
        content = await readConfined(target, roots, { line, limit, maxBytes: this.maxReadBytes, hardLinks: this.options.hardLinks ?? "refuse" }, signal);
      }
      event.bytes = Buffer.byteLength(content, "utf8");
      return { content };
    });
  }

  async writeTextFile(params: acp.WriteTextFileRequest, session: HostSessionInfo, signal: AbortSignal): Promise<acp.WriteTextFileResponse> {
    const event: HostAuditEvent = { kind: "fs_write", sessionId: session.sessionId, path: params.path, verdict: "allowed" };
    return this.observed(event, async () => {
      const what = "fs/write_text_file";
      if (!this.canWrite) throw refusal("disabled", `${what}: this client offers read-only file access`, { path: params.path });
      checkSession(params.sessionId, session, what);
      if (typeof params.content !== "string") throw refusal("invalid_argument", `${what}: content must be a string`, { path: params.path });
      const bytes = Buffer.byteLength(params.content, "utf8");
      event.bytes = bytes;
      if (bytes > this.maxWriteBytes) {
        throw refusal("too_large", `${what}: content for ${shown(params.path)} is ${bytes} bytes, over the ${this.maxWriteBytes}-byte limit`, {
          path: params.path,
          maxBytes: this.maxWriteBytes,
        });
      }
      const roots = await this.roots(session);
      const target: ResolvedHostPath = await resolveInsideRoots(params.path, roots, what);
      event.resolvedPath = target.resolved;
      await checkAuthorized(this.options.authorize, { kind: "fs_write", sessionId: session.sessionId, path: target.normalized, resolvedPath: target.resolved, roots }, what);
      throwIfAborted(signal);
      const info = { sessionId: session.sessionId, resolvedPath: target.resolved };
      if (this.options.buffers?.write && (await this.options.buffers.write(target.normalized, params.content, info))) {
        event.source = "buffer";
        return {};
      }
      throwIfAborted(signal);
      event.source = "disk";
      await writeConfined(target, roots, params.content, {
        createDirectories: this.options.createDirectories ?? true,
        hardLinks: this.options.hardLinks ?? "refuse",
      });
      return {};
    });
  }

  private async roots(session: HostSessionInfo): Promise<string[]> {
    return canonicalRoots(await sessionRoots(session, this.options.roots, this.options.replaceSessionRoots ?? false));
  }

  private async observed<T>(event: HostAuditEvent, run: () => Promise<T>): Promise<T> {
    try {
      const result = await run();
      notifyObserver(this.options.onRequest, event, this.logger);
      return result;
    } catch (error) {
      const reason = refusalReason(error);
      const refused = reason !== "error" && reason !== "not_found" && reason !== "cancelled";
      const message = errorMessage(error);
      notifyObserver(this.options.onRequest, { ...event, verdict: refused ? "refused" : "failed", reason, message }, this.logger);
      this.logger.debug("fs host request not served", { kind: event.kind, path: event.path, reason, message });
      throw error;
    }
  }
}

function checkSession(requested: string, session: HostSessionInfo, what: string): void {
  if (requested !== session.sessionId) throw refusal("invalid_argument", `${what}: sessionId "${requested}" does not match this session`);
}

function lineNumber(value: number | null | undefined, what: string): number {
  if (value === undefined || value === null) return 1;
  if (!Number.isInteger(value) || value < 1) throw refusal("invalid_argument", `${what}: line must be an integer >= 1 (1-based), got ${value}`);
  return value;
}

function lineLimit(value: number | null | undefined, what: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Number.isInteger(value) || value < 0) throw refusal("invalid_argument", `${what}: limit must be an integer >= 0, got ${value}`);
  return value;
}

function positive(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value < 0) throw new RangeError(`${name} must be a non-negative number`);
  return value;
}
