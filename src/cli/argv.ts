import { isAbsolute, resolve } from "node:path";

/** A directory option (`--cwd`, `--audit-log`, …) made absolute against `base`. */
export function absolutePath(path: string, base: string): string {
  return isAbsolute(path) ? path : resolve(base, path);
}
