import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ClientPermissionPolicy } from "../acp/client/index.js";
import { EXIT, parsePromptArgs } from "./prompt-args.js";
import { listOption, parseCommandLine, renderHelp, switchOption, textOption, withDefault, type CommandSchema, type OptionValues } from "./options.js";
import { runPromptFlow } from "./prompt.js";
import { processIo, type CliIo } from "./io.js";

const DEMO_NOTE = "agentkit-demo.md";
const DEFAULT_PROMPTS = ["Write a short note about this demo.", "Add a line saying that ACP works."];

const options = {
  keep: switchOption("keep", `keep the temporary workspace (default: remove it at the end)`),
  json: switchOption("json", `print NDJSON events instead of the readable stream`),
  agent: withDefault(textOption("agent", "AGENT", `drive another agent instead (a preset or a command line)`), "self"),
  prompts: listOption("prompt", "TEXT", `send TEXT instead of the demo's prompts (repeatable)`, { split: false }),
  help: switchOption("help", `show this help`, { short: "h" }),
};

export const demoSchema: CommandSchema<typeof options> = {
  command: "demo",
  intro: `Usage: agentkit-acp demo [options]

The zero-key demo: in a temporary workspace, runs \`agentkit-acp prompt\` against this
package's own agent (\`agentkit-acp serve\` with AGENTKIT_MODEL=demo, a fixed script instead
of an LLM). It shows streamed text, a tool call with its permission question, and a diff.
On a terminal you answer the permission questions; otherwise they are answered
"allow once" automatically (and the demo says so).

`,
  options,
  sections: { main: "Options:" },
  column: 19,
  outro: `Exit codes are those of \`agentkit-acp prompt\` (0 = the turns ended normally).
`,
};

export const demoHelp = renderHelp(demoSchema);

export async function runDemo(argv: string[], io: CliIo = processIo()): Promise<number> {
  let demo: OptionValues<typeof options>;
  try {
    demo = parseCommandLine(demoSchema, argv).values;
  } catch (error) {
    io.stderr.write(`agentkit-acp demo: ${(error as Error).message}\nRun \`agentkit-acp demo --help\` for the options.\n`);
    return EXIT.usage;
  }
  if (demo.help) {
    io.stdout.write(demoHelp);
    return EXIT.endTurn;
  }
  const workspace = mkdtempSync(join(tmpdir(), "agentkit-demo-"));
  writeFileSync(join(workspace, "README.md"), "# A throwaway workspace for `agentkit-acp demo`\n");
  const interactive = io.stdin.isTTY === true && io.stderr.isTTY === true;
  const say = (text: string): void => void io.stderr.write(`${text}\n`);
  say(`agentkit-acp demo — driving ${demo.agent === "self" ? "our own agent (agentkit-acp serve, demo model: a fixed script, no API key)" : demo.agent} over ACP`);
  say(`workspace: ${workspace}`);
  if (!interactive) say('(not a terminal: permission requests are answered "allow once" automatically)');
  const args = parsePromptArgs(["--agent", demo.agent, "--cwd", workspace, ...(demo.json ? ["--json"] : [])], io.cwd);
  try {
    const code = await runPromptFlow({
      args,
      prompts: demo.prompts.length > 0 ? demo.prompts : DEFAULT_PROMPTS,
      agentEnv: demo.agent === "self" ? { AGENTKIT_MODEL: "demo" } : {},
      // On a terminal the user answers; otherwise "allow once" is the documented auto-answer.
      policy: interactive ? undefined : ClientPermissionPolicy.custom(() => "allow_once"),
      announce: (prompt) => say(`\n> ${prompt}`),
    }, true, io);
    const note = join(workspace, DEMO_NOTE);
    if (existsSync(note)) say(`\n--- ${DEMO_NOTE} now reads ---\n${readFileSync(note, "utf8").trimEnd()}\n---`);
    return code;
  } finally {
    if (demo.keep) say(`(workspace kept: ${workspace})`);
    else rmSync(workspace, { recursive: true, force: true });
  }
}
