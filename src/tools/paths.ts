import { lstat, realpath } from "node:fs/promises";
import path from "node:path";
import { AgentKitError } from "../core/index.js";

/**
 * Path safety for everything that touches the file system on a session's behalf: the built-in
 * tools and the ACP client's fs / terminal hosts share this one resolver. Pure functions of
 * (path, roots, fs state).
 *
 * Guarantee: a path accepted by `resolveInsideRoots` is returned as its canonical real path,
 * and that real path lies inside one of the (realpath'd) roots, compared by whole path
 * segments. Checked and used paths can still differ if someone swaps a directory for a
 * symlink between the check and the use (TOCTOU); callers use the returned real path to
 * keep that window small.
 */

export type PathAccessMode = "read" | "write";

/**
 * Why a path was refused (`PathAccessError.code`): malformed, outside the workspace roots, or
 * through a symbolic link that leaves them.
 */
export type PathAccessErrorCode =
  /** The path is empty. */
  | "empty_path"
  /** The path contains a NUL byte. */
  | "nul_byte"
  /** A relative path was given without an absolute cwd to resolve it against. */
  | "not_absolute"
  /** No approved roots were given. */
  | "no_roots"
  /** The path (after `..` and symlink resolution) lies outside every root. */
  | "outside_roots"
  /** A component on the way is a file, not a directory. */
  | "not_a_directory"
  /** The path, or a directory on it, is a symlink whose target does not exist. */
  | "dangling_symlink"
  /** The path cannot be resolved (a symlink loop, a permission error; `errno` says which). */
  | "unresolvable";

/** A refused path. `code` says why; the message names the path and the roots. */
export class PathAccessError extends AgentKitError {
  declare readonly code: PathAccessErrorCode;
  readonly path: string;
  readonly roots: readonly string[];
  /** The file-system error behind `unresolvable` (e.g. `ELOOP`). */
  readonly errno: string | undefined;
  /** For `outside_roots`: the path lies inside a root by its name, but a symlink on it leads out. */
  readonly viaSymlink: boolean;
  constructor(code: PathAccessErrorCode, message: string, requestedPath: string, roots: readonly string[], details: { errno?: string; viaSymlink?: boolean } = {}) {
    super(code, message);
    this.name = "PathAccessError";
    this.path = requestedPath;
    this.roots = roots;
    this.errno = details.errno;
    this.viaSymlink = details.viaSymlink ?? false;
  }
}

/**
 * How a requested path is resolved inside the roots: for reading (it must exist) or writing (its
 * parent must), relative to `cwd`.
 */
export interface ResolveOptions {
  mode: PathAccessMode;
  /** Absolute directory relative paths are resolved against (the session cwd). */
  cwd?: string;
}

/** A path accepted by `resolvePathInRoots`. */
export interface ResolvedPath {
  /** The path as given. */
  requested: string;
  /** Absolute and lexically normalized (`.`/`..`/duplicate slashes resolved). */
  normalized: string;
  /** Canonical: realpath of the longest existing prefix + the missing segments. */
  resolved: string;
  /** The canonical root it lies in. */
  root: string;
  /** Segments after the longest existing prefix (empty when the path exists). */
  missing: string[];
}

/** Lexical absolute form of a tool path: no fs access, no symlink resolution. */
export function toAbsolutePath(requested: string, cwd: string): string {
  return path.resolve(cwd, requested);
}

/** Whether `child` is `parent` or below it, comparing whole segments (`/ws/app-evil` is not in `/ws/app`). */
export function isPathInside(child: string, parent: string): boolean {
  const relative = path.relative(parent, child);
  if (relative === "") return true;
  if (path.isAbsolute(relative)) return false;
  const first = relative.split(path.sep)[0];
  return first !== "..";
}

/** Shows a path relative to `cwd` when it is inside it (for titles), otherwise absolute. */
export function displayPath(absolute: string, cwd: string): string {
  if (!isPathInside(absolute, cwd)) return absolute;
  const relative = path.relative(cwd, absolute);
  return relative === "" ? "." : relative;
}

/**
 * Resolves `requested` (absolute, or relative to `cwd`) to its real path and checks that it
 * lies inside one of `roots`. Throws PathAccessError when it does not, or when it cannot be
 * checked safely. Paths that do not exist yet (a file to be written) are allowed: the
 * longest existing prefix is realpath'd and the rest appended.
 */
export async function resolveInsideRoots(requested: string, roots: readonly string[], options: ResolveOptions): Promise<string> {
  return (await resolvePathInRoots(requested, roots, options)).resolved;
}

/** `resolveInsideRoots` with everything a caller needs to create or open the file safely. */
export async function resolvePathInRoots(requested: string, roots: readonly string[], options: ResolveOptions): Promise<ResolvedPath> {
  const verb = options.mode === "write" ? "write" : "read";
  const refuse: Refuse = (code, why, details) =>
    new PathAccessError(code, `cannot ${verb} ${JSON.stringify(requested)}: ${why}`, requested, roots, details);

  if (requested.length === 0) throw refuse("empty_path", "the path is empty");
  if (requested.includes("\0") || options.cwd?.includes("\0")) throw refuse("nul_byte", "the path contains a NUL byte");
  if (roots.length === 0) throw refuse("no_roots", "no approved roots are configured");
  let normalized: string;
  if (path.isAbsolute(requested)) normalized = path.normalize(requested);
  else if (options.cwd !== undefined && path.isAbsolute(options.cwd)) normalized = path.resolve(options.cwd, requested);
  else throw refuse("not_absolute", "a relative path needs an absolute working directory");
  if (normalized.length > 1 && normalized.endsWith(path.sep)) normalized = normalized.slice(0, -1);

  const realRoots = await realRootsOf(roots);
  const lexicalInside = roots.some((root) => isPathInside(normalized, path.normalize(root)));
  const { real, missing } = await realPathOf(normalized, refuse);
  const resolved = missing.length === 0 ? real : path.join(real, ...missing);
  const root = realRoots.find((r) => isPathInside(resolved, r));
  if (root !== undefined) return { requested, normalized, resolved, root, missing };

  const rootList = roots.join(", ");
  if (!lexicalInside) throw refuse("outside_roots", `it is outside the approved roots (${rootList})`);
  throw refuse("outside_roots", `it resolves through a symlink to ${resolved}, outside the approved roots (${rootList})`, { viaSymlink: true });
}

/** Boolean form of resolveInsideRoots, for permission policies. */
export async function isInsideRoots(requested: string, roots: readonly string[], options: ResolveOptions): Promise<boolean> {
  try {
    await resolveInsideRoots(requested, roots, options);
    return true;
  } catch (error) {
    if (error instanceof PathAccessError) return false;
    throw error;
  }
}

/** Roots are realpath'd too; a root that cannot be resolved contains nothing. */
async function realRootsOf(roots: readonly string[]): Promise<string[]> {
  const refuseRoot: Refuse = (code, why) => new PathAccessError(code, why, "", roots);
  const resolved = await Promise.all(
    roots
      .filter((root) => path.isAbsolute(root) && !root.includes("\0"))
      .map((root) =>
        realPathOf(path.normalize(root), refuseRoot).then(
          ({ real, missing }) => (missing.length === 0 ? real : path.join(real, ...missing)),
          () => undefined,
        ),
      ),
  );
  return resolved.filter((root): root is string => root !== undefined);
}

type Refuse = (code: PathAccessErrorCode, why: string, details?: { errno?: string; viaSymlink?: boolean }) => PathAccessError;

/** realpath of the longest existing prefix, plus the non-existing rest (which must not start at a dangling symlink). */
async function realPathOf(absolute: string, refuse: Refuse): Promise<{ real: string; missing: string[] }> {
  const missing: string[] = [];
  let current = absolute;
  for (;;) {
    try {
      const real = await realpath(current);
      if (missing.length > 0) await refuseDanglingEntry(path.join(real, missing[0] ?? ""), refuse);
      return { real, missing };
    } catch (error) {
      if (error instanceof PathAccessError) throw error;
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOTDIR") throw refuse("not_a_directory", "a component of it is not a directory");
      if (code !== "ENOENT") throw refuse("unresolvable", `it cannot be resolved (${code ?? String(error)})`, code === undefined ? {} : { errno: code });
      const parent = path.dirname(current);
      if (parent === current) throw refuse("unresolvable", "no part of it exists");
      missing.unshift(path.basename(current));
      current = parent;
    }
  }
}

/** The first missing component exists as an entry only if it is a symlink to nowhere. */
async function refuseDanglingEntry(entry: string, refuse: Refuse): Promise<void> {
  try {
    const stats = await lstat(entry);
    if (stats.isSymbolicLink()) throw refuse("dangling_symlink", `${entry} is a symlink whose target does not exist`);
  } catch (error) {
    if (error instanceof PathAccessError) throw error;
    // ENOENT / ENOTDIR: the entry really does not exist, which is fine.
  }
}
