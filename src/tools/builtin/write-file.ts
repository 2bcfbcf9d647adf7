import { z } from "zod";
import { defineTool } from "../define.js";
import { displayPath } from "../paths.js";
import type { Tool } from "../types.js";
import { absoluteFor, failuresAsResults, isNotFound, resolveToolPath } from "./common.js";

const input = z.object({
  path: z.string().describe("File to write, relative to the working directory or absolute inside the workspace"),
  content: z.string().describe("The complete new content of the file"),
});

/** The `write_file` tool's input, as validated. */
export type WriteFileInput = z.output<typeof input>;

/** The `write_file` tool: creates a file or replaces its whole content through the session's `FileOperations`. */
export function writeFileTool(): Tool<WriteFileInput> {
  return defineTool({
    name: "write_file",
    description: "Create a file or replace its whole content. Missing parent directories are created.",
    kind: "edit",
    input,
    title: (i, c) => `Write ${displayPath(absoluteFor(i.path, c), c.cwd)}`,
    locations: (i, c) => [{ path: absoluteFor(i.path, c) }],
    target: (i, c) => ({ paths: [absoluteFor(i.path, c)] }),
    execute: failuresAsResults("write_file", async (i, ctx) => {
      const real = await resolveToolPath(i.path, ctx, "write");
      const shown = absoluteFor(i.path, ctx);
      let oldText: string | null = null;
      try {
        oldText = await ctx.files.readTextFile(real, { signal: ctx.signal });
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
      await ctx.files.writeTextFile(real, i.content, { signal: ctx.signal });
      const lines = i.content.length === 0 ? 0 : i.content.split("\n").length - (i.content.endsWith("\n") ? 1 : 0);
      const verb = oldText === null ? "Created" : "Wrote";
      return {
        text: `${verb} ${displayPath(shown, ctx.cwd)} (${lines} line${lines === 1 ? "" : "s"})`,
        isError: false,
        data: { path: real, created: oldText === null, bytes: Buffer.byteLength(i.content, "utf8") },
        diffs: [{ path: shown, oldText, newText: i.content }],
      };
    }),
  });
}
