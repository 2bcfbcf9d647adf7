import { readdir } from "node:fs/promises";
import { z } from "zod";
import { defineTool } from "../define.js";
import { displayPath } from "../paths.js";
import type { Tool } from "../types.js";
import { absoluteFor, defaults, failuresAsResults, resolveToolPath } from "./common.js";
import { errorResult } from "../define.js";
import type { BuiltinToolOptions } from "./common.js";

const input = z.object({
  path: z.string().describe("Directory to list, relative to the working directory or absolute inside the workspace"),
});

/** The `list_dir` tool's input, as validated. */
export type ListDirInput = z.output<typeof input>;

/** Lists a directory on the local file system (ACP's fs/* has no listing, so this never goes through the client). */
export function listDirTool(options: BuiltinToolOptions = {}): Tool<ListDirInput> {
  const maxEntries = options.listMaxEntries ?? defaults.listMaxEntries;
  return defineTool({
    name: "list_dir",
    description: "List the entries of a directory. Directories end with `/`, symlinks with `@`.",
    kind: "read",
    input,
    title: (i, c) => `List ${displayPath(absoluteFor(i.path, c), c.cwd)}`,
    locations: (i, c) => [{ path: absoluteFor(i.path, c) }],
    target: (i, c) => ({ paths: [absoluteFor(i.path, c)] }),
    execute: failuresAsResults("list_dir", async (i, ctx) => {
      const real = await resolveToolPath(i.path, ctx, "read");
      let entries;
      try {
        entries = await readdir(real, { withFileTypes: true });
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        if (code === "ENOENT") return errorResult(`directory not found: ${i.path}`);
        if (code === "ENOTDIR") return errorResult(`${i.path} is not a directory; use read_file to read it`);
        throw error;
      }
      const names = entries
        .map((e) => (e.isDirectory() ? `${e.name}/` : e.isSymbolicLink() ? `${e.name}@` : e.name))
        .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      const shown = names.slice(0, maxEntries);
      const lines = shown.length > 0 ? shown.join("\n") : "(empty directory)";
      const note = names.length > shown.length ? `\n[${names.length - shown.length} more entries not shown]` : "";
      return { text: lines + note, isError: false, data: { path: real, entries: shown, total: names.length } };
    }),
  });
}
