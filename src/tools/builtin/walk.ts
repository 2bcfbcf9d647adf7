import type { Dirent } from "node:fs";
import { readdir } from "node:fs/promises";
import path from "node:path";

export interface WalkEntry {
  /** Absolute path (below the real base directory). */
  path: string;
  /** Path relative to the base, with `/` separators (what glob patterns match against). */
  relative: string;
  isSymlink: boolean;
}

export interface WalkOptions {
  signal: AbortSignal;
  maxEntries: number;
  ignoreDirs: readonly string[];
}

export interface WalkStats {
  visited: number;
  limitReached: boolean;
}

/**
 * Depth-first walk yielding files and symlinks in sorted order. Symlinked directories are
 * not followed (no loops, no escape from the roots); unreadable directories are skipped.
 */
export async function* walkFiles(base: string, options: WalkOptions, stats: WalkStats): AsyncGenerator<WalkEntry> {
  const stack: string[] = [""];
  while (stack.length > 0) {
    options.signal.throwIfAborted();
    const relativeDir = stack.pop() ?? "";
    let entries: Dirent[];
    try {
      entries = await readdir(path.join(base, relativeDir), { withFileTypes: true });
    } catch {
      continue;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const subdirs: string[] = [];
    for (const entry of entries) {
      if (stats.visited >= options.maxEntries) {
        stats.limitReached = true;
        return;
      }
      stats.visited += 1;
      const relative = relativeDir === "" ? entry.name : `${relativeDir}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!options.ignoreDirs.includes(entry.name)) subdirs.push(relative);
      } else if (entry.isFile() || entry.isSymbolicLink()) {
        yield { path: path.join(base, ...relative.split("/")), relative, isSymlink: entry.isSymbolicLink() };
      }
    }
    // Reverse so the stack pops subdirectories in sorted order.
    for (let i = subdirs.length - 1; i >= 0; i--) stack.push(subdirs[i] ?? "");
  }
}
