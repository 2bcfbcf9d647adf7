import { constants as fsConstants } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { lstat, mkdir, open, unlink } from "node:fs/promises";
import { sep } from "node:path";
import { RequestError } from "@agentclientprotocol/sdk/unstable";
import { errnoCode, refusal, throwIfAborted, shown } from "./host-common.js";
import { isPathInside } from "../../tools/paths.js";
import { notFound, openedPath, type ResolvedHostPath } from "./host-paths.js";
import { LineWindow } from "../../tools/text-window.js";

// The disk half of the fs host: opens only the canonical path, never follows a symlink in
// the last component (O_NOFOLLOW), accepts only regular files, and re-checks where the open
// descriptor really points before reading or changing anything.

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK } = fsConstants;
const CHUNK = 64 * 1024;

/** Files with more than one hard link: the other names may lie outside the roots (undetectable by path). */
export type HardLinkPolicy = "refuse-writes" | "refuse" | "allow";

export interface ReadWindow {
  line: number;
  limit: number | undefined;
  maxBytes: number;
  hardLinks: HardLinkPolicy;
}

export function tooLarge(path: string, what: string): (maxBytes: number) => RequestError {
  return (maxBytes) =>
    refusal("too_large", `${what}: ${shown(path)} is larger than the ${maxBytes}-byte limit (use line/limit to read part of it)`, {
      path,
      maxBytes,
    });
}

export async function readConfined(target: ResolvedHostPath, roots: readonly string[], window: ReadWindow, signal: AbortSignal): Promise<string> {
  const what = "fs/read_text_file";
  if (target.missing.length > 0) throw notFound(target.requested);
  const handle = await openChecked(target, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, what);
  try {
    const stat = await checkOpened(handle, target, roots, what);
    if (stat.nlink > 1 && window.hardLinks === "refuse") throw hardLinked(target.requested, what);
    const whole = window.line === 1 && window.limit === undefined;
    if (whole && stat.size > window.maxBytes) throw tooLarge(target.requested, what)(window.maxBytes);
    const collector = new LineWindow(window.line, window.limit, window.maxBytes, tooLarge(target.requested, what));
    const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
    const buffer = Buffer.allocUnsafe(CHUNK);
    try {
      while (!collector.done) {
        throwIfAborted(signal);
        const { bytesRead } = await handle.read(buffer, 0, CHUNK, null);
        if (bytesRead === 0) {
          collector.push(decoder.decode());
          break;
        }
        collector.push(decoder.decode(buffer.subarray(0, bytesRead), { stream: true }));
      }
    } catch (error) {
      if (error instanceof TypeError) throw refusal("not_text", `${what}: ${shown(target.requested)} is not valid UTF-8 text`, { path: target.requested });
      throw error;
    }
    return collector.result();
  } finally {
    await handle.close();
  }
}

export interface WriteOptions {
  createDirectories: boolean;
  hardLinks: HardLinkPolicy;
}

export async function writeConfined(target: ResolvedHostPath, roots: readonly string[], content: string, options: WriteOptions): Promise<void> {
  const what = "fs/write_text_file";
  if (target.missing.length > 1) await createParents(target, options.createDirectories, what);
  let handle: FileHandle;
  let created = false;
  try {
    handle = await openChecked(target, O_WRONLY | O_NOFOLLOW | O_NONBLOCK, what);
  } catch (error) {
    if (!(error instanceof RequestError && error.code === -32002)) throw error;
    // O_EXCL: if anything (a symlink included) appeared meanwhile, fail instead of following it.
    handle = await openChecked(target, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, what);
    created = true;
  }
  try {
    try {
      const stat = await checkOpened(handle, target, roots, what);
      if (stat.nlink > 1 && options.hardLinks !== "allow") throw hardLinked(target.requested, what);
    } catch (error) {
      if (created) await removeCreated(handle);
      throw error;
    }
    await handle.truncate(0);
    await handle.writeFile(content, "utf8");
  } finally {
    await handle.close();
  }
}

/** Creates the missing parent directories one at a time, below the checked canonical prefix. */
async function createParents(target: ResolvedHostPath, allowed: boolean, what: string): Promise<void> {
  if (!allowed) throw refusal("no_parent", `${what}: the parent directory of ${shown(target.requested)} does not exist`, { path: target.requested });
  const base = target.resolved.slice(0, target.resolved.length - target.missing.join(sep).length);
  let dir = base.endsWith(sep) ? base.slice(0, -1) : base;
  for (const segment of target.missing.slice(0, -1)) {
    dir = `${dir}${sep}${segment}`;
    try {
      await mkdir(dir);
    } catch (error) {
      if (errnoCode(error) !== "EEXIST") throw mapOpenError(error, target.requested, what);
    }
    const stat = await lstat(dir);
    if (!stat.isDirectory() || stat.isSymbolicLink()) {
      throw refusal("not_a_directory", `${what}: a parent of ${shown(target.requested)} changed while it was being created`, { path: target.requested });
    }
  }
}

async function openChecked(target: ResolvedHostPath, flags: number, what: string): Promise<FileHandle> {
  try {
    return await open(target.resolved, flags, 0o666);
  } catch (error) {
    throw mapOpenError(error, target.requested, what);
  }
}

async function checkOpened(handle: FileHandle, target: ResolvedHostPath, roots: readonly string[], what: string) {
  const stat = await handle.stat();
  if (!stat.isFile()) throw refusal("not_a_file", `${what}: ${shown(target.requested)} is not a regular file`, { path: target.requested });
  const real = await openedPath(handle.fd);
  if (real !== undefined && !roots.some((root) => isPathInside(real, root))) {
    throw refusal("outside_roots", `${what}: ${shown(target.requested)} changed to point outside the approved roots while it was opened`, {
      path: target.requested,
    });
  }
  return stat;
}

/** Undo a create that landed somewhere unexpected (the path was swapped between check and open). */
async function removeCreated(handle: FileHandle): Promise<void> {
  const real = await openedPath(handle.fd);
  if (real !== undefined) await unlink(real).catch(() => undefined);
}

function hardLinked(path: string, what: string): RequestError {
  return refusal("hard_link", `${what}: ${shown(path)} has other hard links (which may lie outside the approved roots)`, { path });
}

function mapOpenError(error: unknown, path: string, what: string): RequestError {
  if (error instanceof RequestError) return error;
  switch (errnoCode(error)) {
    case "ENOENT":
      return notFound(path);
    case "ELOOP":
      return refusal("symlink", `${what}: ${shown(path)} is a symlink (refused: it changed after the path was checked)`, { path });
    case "EEXIST":
      return refusal("symlink", `${what}: ${shown(path)} appeared while it was being created; try again`, { path });
    case "EISDIR":
    case "ENXIO":
      return refusal("not_a_file", `${what}: ${shown(path)} is not a regular file`, { path });
    case "ENOTDIR":
      return refusal("not_a_directory", `${what}: a component of ${shown(path)} is not a directory`, { path });
    case "EACCES":
    case "EPERM":
      return refusal("denied", `${what}: ${shown(path)}: permission denied by the operating system`, { path });
    case "EROFS":
      return refusal("denied", `${what}: ${shown(path)} is on a read-only file system`, { path });
    default:
      return RequestError.internalError({ path }, `${what}: ${shown(path)}: ${errnoCode(error) ?? "unexpected error"}`);
  }
}
