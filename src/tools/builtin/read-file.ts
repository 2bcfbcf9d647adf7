import { z } from "zod";
import { defineTool } from "../define.js";
import { displayPath } from "../paths.js";
import type { Tool } from "../types.js";
import { absoluteFor, defaults, failuresAsResults, isNotFound, resolveToolPath, truncateUtf8 } from "./common.js";
import { errorResult } from "../define.js";
import type { BuiltinToolOptions } from "./common.js";

const input = z.object({
  path: z.string().describe("File to read, relative to the working directory or absolute inside the workspace"),
  line: z.number().int().min(1).optional().describe("First line to read (1-based)"),
  limit: z.number().int().min(1).optional().describe("Number of lines to read"),
});

/** The `read_file` tool's input, as validated. */
export type ReadFileInput = z.output<typeof input>;

/**
 * The `read_file` tool: reads a text file (or a window of its lines) through the session's `FileOperations`, so an
 * ACP client's unsaved buffers are what the model sees.
 */
export function readFileTool(options: BuiltinToolOptions = {}): Tool<ReadFileInput> {
  const maxBytes = options.readMaxBytes ?? defaults.readMaxBytes;
  return defineTool({
    name: "read_file",
    description:
      "Read a text file. Optionally pass `line` (1-based) and `limit` (line count) to read part of a large file.",
    kind: "read",
    input,
    title: (i, c) => `Read ${displayPath(absoluteFor(i.path, c), c.cwd)}`,
    locations: (i, c) => [i.line === undefined ? { path: absoluteFor(i.path, c) } : { path: absoluteFor(i.path, c), line: i.line }],
    target: (i, c) => ({ paths: [absoluteFor(i.path, c)] }),
    execute: failuresAsResults("read_file", async (i, ctx) => {
      const real = await resolveToolPath(i.path, ctx, "read");
      let content: string;
      try {
        content = await ctx.files.readTextFile(real, { line: i.line, limit: i.limit, signal: ctx.signal });
      } catch (error) {
        if (isNotFound(error)) return errorResult(`file not found: ${i.path}`);
        if ((error as { code?: unknown }).code === "EISDIR") return errorResult(`${i.path} is a directory; use list_dir to see its entries`);
        throw error;
      }
      const first = i.line ?? 1;
      const cut = truncateUtf8(content, maxBytes);
      if (!cut.truncated) {
        const text = content.length > 0 ? content : i.line === undefined && i.limit === undefined ? "(empty file)" : "(no lines in the requested range)";
        return { text, isError: false, data: { path: real, line: first, truncated: false } };
      }
      // Cut at the last whole line so `line` can continue exactly where this read stopped.
      const lastNewline = cut.text.lastIndexOf("\n");
      const shown = lastNewline >= 0 ? cut.text.slice(0, lastNewline + 1) : cut.text;
      const linesShown = shown.split("\n").length - 1;
      const next = first + Math.max(1, linesShown);
      const note = `\n[truncated at ${maxBytes} bytes after ${linesShown} lines; continue with line: ${next}]`;
      return { text: shown + note, isError: false, data: { path: real, line: first, truncated: true, nextLine: next } };
    }),
  });
}
