import { RequestError } from "@agentclientprotocol/sdk/unstable";
import { pathProblem } from "../../core/index.js";

/** -32602 naming the field for a path no file system accepts (NUL byte, component over 255 bytes). */
export function checkPathField(path: string, field: string): void {
  const problem = pathProblem(path);
  if (problem !== undefined) throw RequestError.invalidParams({ field, path: shownPath(path) }, `${field} ${problem}`);
}

/** A path as echoed in an error: short enough to read, NULs visible. */
function shownPath(path: string): string {
  const text = path.length > 240 ? `${path.slice(0, 160)}…${path.slice(-60)}` : path;
  return JSON.stringify(text).slice(1, -1);
}
