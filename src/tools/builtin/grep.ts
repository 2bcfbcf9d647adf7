import { open, stat } from "node:fs/promises";
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
import type { WalkEntry, WalkStats } from "./walk.js";

const input = z.object({
  pattern: z.string().describe("JavaScript regular expression to search for, line by line"),
  path: z.string().optional().describe("File or directory to search; defaults to the working directory"),
  glob: z.string().optional().describe("Only search files matching this glob, e.g. `*.ts` or `src/**/*.ts`"),
});

/** The `grep` tool's input, as validated. */
export type GrepInput = z.output<typeof input>;

const maxLineChars = 300;

/**
 * The `grep` tool: searches file contents by regular expression inside the roots on the local file system, bounded in
 * matches, file size and files walked.
 */
export function grepTool(options: BuiltinToolOptions = {}): Tool<GrepInput> {
  const maxMatches = options.grepMaxMatches ?? defaults.grepMaxMatches;
  const maxFileBytes = options.grepMaxFileBytes ?? defaults.grepMaxFileBytes;
  const maxEntries = options.walkMaxEntries ?? defaults.walkMaxEntries;
  const ignoreDirs = options.ignoreDirs ?? defaults.ignoreDirs;
  return defineTool({
    name: "grep",
    description:
      "Search file contents for a regular expression (JavaScript syntax). Returns `file:line: text`. " +
      "Skips binary files, large files, symlinks" + (ignoreDirs.length > 0 ? ` and ${ignoreDirs.join(", ")}` : "") + ".",
    kind: "search",
    input,
    title: (i, c) => `Search for /${i.pattern}/${i.path === undefined ? "" : ` in ${displayPath(absoluteFor(i.path, c), c.cwd)}`}`,
    locations: (i, c) => [{ path: absoluteFor(i.path ?? ".", c) }],
    target: (i, c) => ({ paths: [absoluteFor(i.path ?? ".", c)] }),
    execute: failuresAsResults("grep", async (i, ctx) => {
      let regex: RegExp;
      try {
        regex = new RegExp(i.pattern);
      } catch (error) {
        return errorResult(`invalid regular expression: ${(error as Error).message}`);
      }
      const base = await resolveToolPath(i.path ?? ".", ctx, "read");
      const shownBase = absoluteFor(i.path ?? ".", ctx);
      const filter = i.glob === undefined ? () => true : picomatch(i.glob, { dot: true, basename: !i.glob.includes("/") });
      const stats: WalkStats = { visited: 0, limitReached: false };
      const kind = await entryKind(base);
      if (kind === "missing") return errorResult(`not found: ${i.path ?? "."}`);
      const singleFile = kind === "file";
      const files: AsyncIterable<WalkEntry> = singleFile
        ? single({ path: base, relative: path.basename(base), isSymlink: false })
        : walkFiles(base, { signal: ctx.signal, maxEntries, ignoreDirs }, stats);

      const lines: string[] = [];
      let skipped = 0;
      let more = false;
      outer: for await (const file of files) {
        if (file.isSymlink || !filter(file.relative)) continue;
        const text = await readSearchable(file.path, maxFileBytes);
        if (text === undefined) {
          skipped += 1;
          continue;
        }
        const shown = singleFile ? displayPath(shownBase, ctx.cwd) : displayPath(path.join(shownBase, file.relative), ctx.cwd);
        const fileLines = text.split(/\r?\n/);
        for (let n = 0; n < fileLines.length; n++) {
          const line = fileLines[n] ?? "";
          if (!regex.test(line)) continue;
          if (lines.length >= maxMatches) {
            more = true;
            break outer;
          }
          const clipped = line.length > maxLineChars ? `${line.slice(0, maxLineChars)}…` : line;
          lines.push(`${shown}:${n + 1}: ${clipped}`);
        }
      }
      const notes: string[] = [];
      if (more) notes.push(`[more than ${maxMatches} matches; narrow the pattern, path or glob]`);
      if (stats.limitReached) notes.push(`[stopped after visiting ${maxEntries} entries; search a smaller directory]`);
      if (skipped > 0) notes.push(`[${skipped} binary or large file${skipped === 1 ? "" : "s"} skipped]`);
      const body = lines.length > 0 ? lines.join("\n") : `No matches for /${i.pattern}/`;
      return {
        text: [body, ...notes].join("\n"),
        isError: false,
        data: { matches: lines.length, truncated: more || stats.limitReached, skipped },
      };
    }),
  });
}

async function* single(entry: WalkEntry): AsyncGenerator<WalkEntry> {
  yield entry;
}

async function entryKind(file: string): Promise<"directory" | "file" | "missing"> {
  try {
    return (await stat(file)).isDirectory() ? "directory" : "file";
  } catch {
    return "missing";
  }
}

/** The file's text, or undefined when it is too large, binary (a NUL byte early on) or unreadable. */
async function readSearchable(file: string, maxBytes: number): Promise<string | undefined> {
  let handle;
  try {
    handle = await open(file, "r");
    const info = await handle.stat();
    if (!info.isFile() || info.size > maxBytes) return undefined;
    const buffer = await handle.readFile();
    if (buffer.subarray(0, 8000).includes(0)) return undefined;
    return buffer.toString("utf8");
  } catch {
    return undefined;
  } finally {
    await handle?.close();
  }
}
