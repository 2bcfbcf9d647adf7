/** Longest file-name component Linux, macOS and Windows file systems accept, in bytes (NAME_MAX). */
export const MAX_PATH_COMPONENT_BYTES = 255;

/**
 * What is wrong with a path a peer sent, before any file-system call sees it (the OS would
 * answer ERR_INVALID_ARG_VALUE or ENAMETOOLONG, which is the peer's error, not ours);
 * undefined when it passes. Does not check that it is absolute or exists.
 */
export function pathProblem(path: string): string | undefined {
  if (path.length === 0) return "is empty";
  if (path.includes("\0")) return "contains a NUL byte";
  for (const part of path.split(/[/\\]/)) {
    const bytes = Buffer.byteLength(part, "utf8");
    if (bytes > MAX_PATH_COMPONENT_BYTES) return `has a component of ${bytes} bytes (the limit is ${MAX_PATH_COMPONENT_BYTES})`;
  }
  return undefined;
}
