import path from "node:path";
import picomatch from "picomatch";
import { z } from "zod";
import { defineTool } from "../define.js";
import { displayPath } from "../paths.js";
import type { Tool } from "../types.js";
import { absoluteFor, defaults, failuresAsResults, resolveToolPath } from "./common.js";
import { errorResult } from "../define.js";
import type { BuiltinToolOptions } from "./common.js";
import { walkFiles } from "./walk.js";
import type { WalkStats } from "./walk.js";

const input = z.object({
  pattern: z.string().describe("Glob pattern relative to `path`, e.g. `**/*.ts` or `src/*.json`"),
  path: z.string().optional().describe("Directory to search in; defaults to the working directory"),
});

/** The `glob` tool's input, as validated. */
export type GlobInput = z.output<typeof input>;

/**
 * The `glob` tool: finds files by pattern inside the roots on the local file system, bounded by `globMaxResults` and
 * `walkMaxEntries`.
 */
export function globTool(options: BuiltinToolOptions = {}): Tool<GlobInput> {
  const maxResults = options.globMaxResults ?? defaults.globMaxResults;
  const maxEntries = options.walkMaxEntries ?? defaults.walkMaxEntries;
  const ignoreDirs = options.ignoreDirs ?? defaults.ignoreDirs;
  return defineTool({
    name: "glob",
    description: `Find files whose path (relative to \`path\`) matches a glob pattern. Skips ${ignoreDirs.join(", ") || "nothing"}.`,
    kind: "search",
    input,
    title: (i, c) => `Find ${i.pattern}${i.path === undefined ? "" : ` in ${displayPath(absoluteFor(i.path, c), c.cwd)}`}`,
    locations: (i, c) => [{ path: absoluteFor(i.path ?? ".", c) }],
    target: (i, c) => ({ paths: [absoluteFor(i.path ?? ".", c)] }),
    execute: failuresAsResults("glob", async (i, ctx) => {
      if (i.pattern.length === 0) return errorResult("pattern is empty");
      if (path.isAbsolute(i.pattern)) return errorResult("pattern must be relative; pass the directory as `path`");
      const base = await resolveToolPath(i.path ?? ".", ctx, "read");
      const shownBase = absoluteFor(i.path ?? ".", ctx);
      const matches = picomatch(i.pattern, { dot: true });
      const stats: WalkStats = { visited: 0, limitReached: false };
      const found: string[] = [];
      let more = false;
      for await (const entry of walkFiles(base, { signal: ctx.signal, maxEntries, ignoreDirs }, stats)) {
        if (!matches(entry.relative)) continue;
        if (found.length >= maxResults) {
          more = true;
          break;
        }
        found.push(displayPath(path.join(shownBase, entry.relative), ctx.cwd));
      }
      const notes: string[] = [];
      if (more) notes.push(`[more than ${maxResults} matches; narrow the pattern]`);
      if (stats.limitReached) notes.push(`[stopped after visiting ${maxEntries} entries; search a smaller directory]`);
      const body = found.length > 0 ? found.join("\n") : `No files match ${i.pattern}`;
      return {
        text: [body, ...notes].join("\n"),
        isError: false,
        data: { matches: found, truncated: more || stats.limitReached },
      };
    }),
  });
}
