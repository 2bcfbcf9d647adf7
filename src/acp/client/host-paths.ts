import { proc } from "../../core/process/proc.js";
import { realpath } from "node:fs/promises";
import { isAbsolute, resolve as resolvePath, sep } from "node:path";
import { RequestError } from "@agentclientprotocol/sdk/unstable";
import { PathAccessError, resolvePathInRoots, type ResolvedPath } from "../../tools/paths.js";
import { refusal, shown } from "./host-common.js";
import { pathProblem } from "../../core/path-field.js";

// Path confinement for the client's host services: the syntax a host path must have (absolute,
// a file path not ending in "/"), then the one resolver of src/tools, its refusals turned into
// -32602 errors that name the requested path, never an outside target.

/** A host path accepted inside the approved roots. */
export type ResolvedHostPath = ResolvedPath;

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
  const problem = pathProblem(path);
  if (problem !== undefined) throw refusal("invalid_path", `${what}: the path ${problem}`, { path });
  if (!isAbsolute(path)) throw refusal("not_absolute", `${what}: ${shown(path)} is not an absolute path`, { path });
  if (kind === "file" && path.length > 1 && path.endsWith(sep)) {
    throw refusal("not_a_file", `${what}: ${shown(path)} ends with "/" (names a directory, not a file)`, { path });
  }
  return resolvePath(path);
}

/**
 * Resolves `path` against the canonical `roots` (see `resolvePathInRoots`). Throws a -32602
 * `RequestError` that names the requested path and the reason, never the outside target.
 */
export async function resolveInsideRoots(
  path: string,
  roots: readonly string[],
  what: string,
  kind: "file" | "directory" = "file",
): Promise<ResolvedHostPath> {
  const normalized = checkPathSyntax(path, what, kind);
  if (roots.length === 0) throw refusal("outside_roots", `${what}: ${shown(path)} is refused: no approved roots exist`, { path });
  try {
    return { ...(await resolvePathInRoots(normalized, roots, { mode: "read" })), requested: path };
  } catch (error) {
    if (!(error instanceof PathAccessError)) throw error;
    throw hostRefusal(error, path, what);
  }
}

function hostRefusal(error: PathAccessError, path: string, what: string): RequestError {
  switch (error.code) {
    case "outside_roots": {
      const why = error.viaSymlink ? "resolves (through a symlink) outside the approved roots" : "is outside the approved roots";
      return refusal("outside_roots", `${what}: ${shown(path)} ${why}`, { path });
    }
    case "dangling_symlink":
      return refusal("dangling_symlink", `${what}: ${shown(path)} goes through a symlink whose target does not exist`, { path });
    case "not_a_directory":
      return refusal("not_a_directory", `${what}: a component of ${shown(path)} is not a directory`, { path });
    case "unresolvable":
      if (error.errno === "ELOOP") return refusal("symlink", `${what}: ${shown(path)} runs into a symlink loop`, { path });
      return refusal("invalid_path", `${what}: ${shown(path)} cannot be resolved (${error.errno ?? "error"})`, { path });
    default:
      return refusal("invalid_path", `${what}: ${shown(path)} is not a valid path (${error.code})`, { path });
  }
}

/**
 * Where an open descriptor really points (Linux: /proc/self/fd). Closes the window between
 * the check and the open: a directory swapped for a symlink in between is caught here.
 * Returns undefined where the platform cannot tell.
 */
export function openedPath(fd: number): Promise<string | undefined> {
  return proc.descriptorPath(fd);
}

export function notFound(path: string): RequestError {
  return RequestError.resourceNotFound(path);
}
