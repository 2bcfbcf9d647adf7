import { lstatSync, mkdirSync, realpathSync, statSync } from "node:fs";
import { isAbsolute, join, resolve, sep } from "node:path";
import { RequestError } from "@agentclientprotocol/sdk/unstable";
import { ConfigError, errorMessage, pathProblem } from "../../core/index.js";

/** -32602 naming the field for a path no file system accepts (NUL byte, component over 255 bytes). */
export function checkPathField(path: string, field: string): void {
  const problem = pathProblem(path);
  if (problem !== undefined) throw RequestError.invalidParams({ field, path: shownPath(path) }, `${field} ${problem}`);
}

/** Where a client's session may work: `workspaceRoot` (real path) confines each principal to `<root>/<principal>/`. */
export interface WorkspaceScope {
  principal: string;
  workspaceRoot: string | undefined;
}

/** Trees of the kernel's view of this process and machine: never a workspace, whoever asks. */
const systemTrees = ["/proc", "/sys", "/dev"];

/**
 * -32602 naming the field unless `path` is an absolute, existing directory a client may work in:
 * after symlinks, never in /proc, /sys or /dev; with a workspace root, inside the principal's
 * `<root>/<principal>/` (made 0700 on first use). Returns the path the session uses: as given,
 * or under a workspace root its real path (a symlink changed later cannot move the session out).
 */
export function checkWorkspaceDirectory(path: string, field: string, scope: WorkspaceScope): string {
  checkPathField(path, field);
  const shown = shownPath(path);
  if (!isAbsolute(path)) throw RequestError.invalidParams({ [field]: shown }, `${field} must be an absolute path, got "${shown}"`);
  const home = scope.workspaceRoot === undefined ? undefined : principalWorkspace(scope.workspaceRoot, scope.principal);
  const outside = (): RequestError =>
    RequestError.invalidParams({ [field]: shown, workspace: home }, `${field} "${shown}" is outside your workspace ${home}; use ${home} or a directory inside it`);
  // Outside the workspace by its name alone: refused before anything is looked at (no existence oracle).
  if (home !== undefined && !isWithin(resolve(path), home)) throw outside();
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat?.isDirectory()) throw RequestError.invalidParams({ [field]: shown }, `${field} "${shown}" is not an existing directory`);
  let real: string;
  try {
    real = realpathSync(path);
  } catch (error) {
    throw RequestError.invalidParams({ [field]: shown }, `${field} "${shown}" cannot be resolved: ${errorMessage(error)}`);
  }
  const tree = systemTrees.find((t) => isWithin(real, t));
  if (tree !== undefined) throw RequestError.invalidParams({ [field]: shown }, `${field} "${shown}" is in ${tree}, which is never a workspace`);
  if (home === undefined) return path;
  if (!isWithin(real, home)) throw outside();
  return real;
}

/** A principal name usable as one directory name: letters, digits, `._@+=-`, not starting with a dot, 1–128 characters. */
export function isSafePrincipalName(name: string): boolean {
  return /^[A-Za-z0-9_@+=-][A-Za-z0-9._@+=-]{0,127}$/.test(name);
}

/** Makes the workspace root (0700, with parents) and returns its real path; ConfigError saying why not. */
export function prepareWorkspaceRoot(dir: string): string {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const real = realpathSync(dir);
    if (!statSync(real).isDirectory()) throw new Error("not a directory");
    const tree = systemTrees.find((t) => isWithin(real, t));
    if (tree !== undefined) throw new Error(`it is in ${tree}`);
    return real;
  } catch (error) {
    throw new ConfigError(`the workspace root ${dir} cannot be used: ${errorMessage(error)}`);
  }
}

/** `<root>/<principal>`, made 0700 on first use; -32600 for a principal whose name cannot be a directory. */
function principalWorkspace(root: string, principal: string): string {
  if (!isSafePrincipalName(principal)) {
    throw RequestError.invalidRequest(undefined, "your principal name cannot name a workspace directory (letters, digits and ._@+=- only); ask the operator");
  }
  const home = join(root, principal);
  try {
    mkdirSync(home, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw RequestError.internalError(undefined, "your workspace directory cannot be made");
  }
  // The operator's tree: a workspace replaced by a symlink would lead anywhere.
  if (!lstatSync(home).isDirectory()) throw RequestError.internalError(undefined, "your workspace is not a directory; ask the operator");
  return home;
}

function isWithin(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith(sep) ? dir : dir + sep);
}

/** A path as echoed in an error: short enough to read, NULs visible. */
function shownPath(path: string): string {
  const text = path.length > 240 ? `${path.slice(0, 160)}…${path.slice(-60)}` : path;
  return JSON.stringify(text).slice(1, -1);
}
