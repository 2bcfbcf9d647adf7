import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";
import { commandNames } from "../../src/cli/main.js";
import { runCli } from "../support/cli.js";

// docs/cli.md shows each command's `--help` verbatim: the option schema generates the help, and
// this keeps the reference page from drifting from it (a new flag fails here until it is copied).
const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const page = readFileSync(resolve(root, "docs/cli.md"), "utf8");

function blockOf(command: string): string | undefined {
  const heading = `## \`agentkit-acp${command === "" ? "" : ` ${command}`}\`\n`;
  const at = page.indexOf(heading);
  if (at === -1) return undefined;
  const open = page.indexOf("```\n", at);
  const close = page.indexOf("```\n", open + 4);
  return open === -1 || close === -1 ? undefined : page.slice(open + 4, close);
}

it.each(["", ...commandNames])("docs/cli.md shows `agentkit-acp %s --help` as the CLI prints it", async (command) => {
  const run = await runCli(command === "" ? ["--help"] : [command, "--help"], { cwd: root });
  expect(run.code).toBe(0);
  expect(blockOf(command), `docs/cli.md has no block for "${command}"`).toBe(run.stdout);
});
