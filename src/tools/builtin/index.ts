import type { Tool } from "../types.js";
import type { BuiltinToolOptions } from "./common.js";
import { editFileTool } from "./edit-file.js";
import { globTool } from "./glob.js";
import { grepTool } from "./grep.js";
import { listDirTool } from "./list-dir.js";
import { readFileTool } from "./read-file.js";
import { shellTool } from "./shell.js";
import { writeFileTool } from "./write-file.js";

export type { BuiltinToolOptions } from "./common.js";
export { editFileTool, type EditFileInput } from "./edit-file.js";
export { globTool, type GlobInput } from "./glob.js";
export { grepTool, type GrepInput } from "./grep.js";
export { listDirTool, type ListDirInput } from "./list-dir.js";
export { readFileTool, type ReadFileInput } from "./read-file.js";
export { shellTool, type ShellInput } from "./shell.js";
export { writeFileTool, type WriteFileInput } from "./write-file.js";

/** All built-in tools: read_file, write_file, edit_file, list_dir, glob, grep, shell. */
export function builtinTools(options: BuiltinToolOptions = {}): Tool[] {
  return [
    readFileTool(options),
    writeFileTool(),
    editFileTool(),
    listDirTool(options),
    globTool(options),
    grepTool(options),
    shellTool(options),
  ] as Tool[];
}
