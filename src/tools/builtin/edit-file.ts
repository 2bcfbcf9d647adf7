import { z } from "zod";
import { defineTool } from "../define.js";
import { displayPath } from "../paths.js";
import type { Tool } from "../types.js";
import { absoluteFor, failuresAsResults, isNotFound, resolveToolPath } from "./common.js";
import { errorResult } from "../define.js";

const input = z.object({
  path: z.string().describe("File to edit, relative to the working directory or absolute inside the workspace"),
  old_text: z.string().describe("Exact text to replace (including whitespace); must occur exactly once unless replace_all"),
  new_text: z.string().describe("Replacement text"),
  replace_all: z.boolean().optional().describe("Replace every occurrence instead of exactly one"),
});

/** The `edit_file` tool's input, as validated. */
export type EditFileInput = z.output<typeof input>;

/**
 * The `edit_file` tool: replaces one exact piece of text in a file (or every occurrence with `replace_all`), through
 * the session's `FileOperations`.
 */
export function editFileTool(): Tool<EditFileInput> {
  return defineTool({
    name: "edit_file",
    description:
      "Replace an exact piece of text in a file. `old_text` must match the file exactly and occur once " +
      "(add surrounding lines to make it unique), or set `replace_all` to replace every occurrence.",
    kind: "edit",
    input,
    title: (i, c) => `Edit ${displayPath(absoluteFor(i.path, c), c.cwd)}`,
    locations: (i, c) => [{ path: absoluteFor(i.path, c) }],
    target: (i, c) => ({ paths: [absoluteFor(i.path, c)] }),
    execute: failuresAsResults("edit_file", async (i, ctx) => {
      if (i.old_text.length === 0) return errorResult("old_text is empty; use write_file to create or replace a whole file");
      if (i.old_text === i.new_text) return errorResult("old_text and new_text are identical; nothing to change");
      const real = await resolveToolPath(i.path, ctx, "write");
      const shown = absoluteFor(i.path, ctx);
      let oldText: string;
      try {
        oldText = await ctx.files.readTextFile(real, { signal: ctx.signal });
      } catch (error) {
        if (isNotFound(error)) return errorResult(`file not found: ${i.path} (use write_file to create it)`);
        throw error;
      }
      const count = countOccurrences(oldText, i.old_text);
      if (count === 0) {
        return errorResult(`old_text was not found in ${i.path}; it must match the file exactly, including whitespace and indentation`);
      }
      if (count > 1 && i.replace_all !== true) {
        return errorResult(
          `old_text occurs ${count} times in ${i.path}; include more surrounding text to make it unique, or set replace_all: true`,
        );
      }
      // split/join, not String.replace: `$&`-style patterns in new_text must stay literal.
      const newText = i.replace_all === true ? oldText.split(i.old_text).join(i.new_text) : replaceOnce(oldText, i.old_text, i.new_text);
      await ctx.files.writeTextFile(real, newText, { signal: ctx.signal });
      const replaced = i.replace_all === true ? count : 1;
      return {
        text: `Edited ${displayPath(shown, ctx.cwd)}: replaced ${replaced} occurrence${replaced === 1 ? "" : "s"}`,
        isError: false,
        data: { path: real, replacements: replaced },
        diffs: [{ path: shown, oldText, newText }],
      };
    }),
  });
}

function countOccurrences(haystack: string, needle: string): number {
  let count = 0;
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length)) count += 1;
  return count;
}

function replaceOnce(text: string, find: string, replacement: string): string {
  const at = text.indexOf(find);
  return text.slice(0, at) + replacement + text.slice(at + find.length);
}
