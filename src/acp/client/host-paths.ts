import { existsSync } from "node:fs";
import { lstat, readlink, realpath } from "node:fs/promises";
import { isAbsolute, resolve as resolvePath, sep } from "node:path";
import { RequestError } from "@agentclientprotocol/sdk";
import { errnoCode, refusal, shown } from "./host-common.js";

// Path confinement for the client's host services. The agent's own tools have a similar
// resolver in src/tools; this one also returns what the fs host needs to create and open
// files safely (missing segments, canonical path).

export interface ResolvedHostPath {
  /** The path as the agent sent it. */
  requested: string;
  /** Lexically normalized (`.`/`..`/duplicate slashes resolved). */
  normalized: string;
  /** Canonical: realpath of the longest existing prefix + the missing segments. */
  resolved: string;
  /** The canonical root it lies in. */
  root: string;
  /** Segments after the longest existing prefix (empty when the path exists). */
  missing: string[];
}

/** True when `path` equals `root` or lies below it, compared by whole segments. */
export function isInsideRoot(path: string, root: string): boolean {
  if (path === root) return true;
  const prefix = root.endsWith(sep) ? root : root + sep;
  return path.startsWith(prefix);
}

/** Canonical forms of the approved roots; roots that do not exist are dropped. */
export async function canonicalRoots(roots: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const root of roots) {
    if (!isAbsolute(root) || root.includes("\0")) continue;
    try {
      const real = await realpath(root);
      if (!out.includes(real)) out.push(real);
    } catch {
      // A root that does not exist approves nothing.
    }
  }
  return out;
}

/** Syntactic checks every host path must pass before it touches the disk. */
export function checkPathSyntax(path: string, what: string, kind: "file" | "directory" = "file"): string {
  if (typeof path !== "string" || path.length === 0) throw refusal("invalid_path", `${what}: the path is empty`, { path });
  if (path.includes("\0")) throw refusal("invalid_path", `${what}: the path contains a NUL byte`, { path });
  if (!isAbsolute(path)) throw refusal("not_absolute", `${what}: ${shown(path)} is not an absolute path`, { path });
  if (kind === "file" && path.length > 1 && path.endsWith(sep)) {
    throw refusal("not_a_file", `${what}: ${shown(path)} ends with "/" (names a directory, not a file)`, { path });
  }
  return resolvePath(path);
}

/**
 * Resolves `path` against the canonical `roots`: realpath of the longest existing prefix,
 * checked by segments. A dangling symlink anywhere on the way is refused (the OS would follow
 * it to an unchecked place on write). Throws a -32602 `RequestError` that names the requested
 * path and the reason, never the outside target.
 */
export async function resolveInsideRoots(
  path: string,
  roots: readonly string[],
  what: string,
  kind: "file" | "directory" = "file",
): Promise<ResolvedHostPath> {
  const normalized = checkPathSyntax(path, what, kind);
  if (roots.length === 0) throw refusal("outside_roots", `${what}: ${shown(path)} is refused: no approved roots exist`, { path });
  const segments = normalized.split(sep).filter((s) => s.length > 0);
  let existing = segments.length;
  let real: string | undefined;
  while (real === undefined) {
    const prefix = sep + segments.slice(0, existing).join(sep);
    try {
      real = await realpath(prefix);
    } catch (error) {
      const code = errnoCode(error);
      if (code === "ELOOP") throw refusal("symlink", `${what}: ${shown(path)} runs into a symlink loop`, { path });
      if (code === "ENOTDIR") throw refusal("not_a_directory", `${what}: a component of ${shown(path)} is not a directory`, { path });
      if (code !== "ENOENT" || existing === 0) throw refusal("invalid_path", `${what}: ${shown(path)} cannot be resolved (${code ?? "error"})`, { path });
      existing -= 1;
    }
  }
  const missing = segments.slice(existing);
  if (missing.length > 0) {
    // realpath failed one level down: either nothing is there, or a symlink pointing nowhere.
    const next = joinSegments(real, missing.slice(0, 1));
    const stat = await lstat(next).catch(() => undefined);
    if (stat?.isSymbolicLink()) throw refusal("dangling_symlink", `${what}: ${shown(path)} goes through a symlink whose target does not exist`, { path });
  }
  const resolved = joinSegments(real, missing);
  const root = roots.find((r) => isInsideRoot(resolved, r));
  if (root === undefined) {
    const viaLink = real !== sep + segments.slice(0, existing).join(sep);
    const why = viaLink ? "resolves (through a symlink) outside the approved roots" : "is outside the approved roots";
    throw refusal("outside_roots", `${what}: ${shown(path)} ${why}`, { path });
  }
  return { requested: path, normalized, resolved, root, missing };
}

function joinSegments(base: string, segments: readonly string[]): string {
  if (segments.length === 0) return base;
  return (base.endsWith(sep) ? base : base + sep) + segments.join(sep);
}

const procFd = process.platform === "linux" && existsSync("/proc/self/fd");

/**
 * Where an open descriptor really points (Linux: /proc/self/fd). Closes the window between
 * the check and the open: a directory swapped for a symlink in between is caught here.
 * Returns undefined where the platform cannot tell.
 */
export async function openedPath(fd: number): Promise<string | undefined> {
  if (!procFd) return undefined;
  try {
    return await readlink(`/proc/self/fd/${fd}`);
  } catch {
    return undefined;
  }
}

export function notFound(path: string): RequestError {
  return RequestError.resourceNotFound(path);
}
