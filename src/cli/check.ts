import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { agentPresets } from "../acp/client/index.js";
import { UsageError } from "./usage.js";
import { parseCommandLine, read, renderHelp, switchOption, textOption, withDefault, type CommandSchema } from "./options.js";
import { agentEnvFor, processIo, type CliIo } from "./io.js";
import { DEFAULT_CHECK_TIMEOUT_MS, DEFAULT_PROMPTS, conformanceChecks, formatConformanceMarkdown, formatConformanceReport, runConformance, type AgentLaunch, type CheckResult, type ConformanceOptions } from "../testing/conformance/index.js";

const EXIT = { conformant: 0, failed: 1, usage: 2, interrupted: 130 } as const;

const options = {
  agent: withDefault(textOption("agent", "AGENT", `a preset (${Object.keys(agentPresets()).join(", ")}) or a whole command line, e.g.
--agent "node ./my-agent.js" (default: self = agentkit-acp serve
with the demo model)`, { parse: read.nonBlank("a preset name or a command line") }), "self"),
  cwd: textOption("cwd", "DIR", `the sessions' working directory (default: a fresh temporary
directory, removed afterwards)`),
  skipPrompts: switchOption("skip-prompts", `run no prompt turn: no tokens are spent (prompt, cancel and
content checks are skipped)`),
  changeState: switchOption("change-state", `also run the checks that change the agent's state: logout,
providers/set, providers/disable (each when advertised). They run
last, in a launch of their own, and restore provider routes; after
logout the agent may need a new login. Skipped (and listed) otherwise`),
  only: textOption("only", "ID,ID", `run only these checks (see --list)`, { parse: (text) => checkIds(text) }),
  timeoutMs: textOption("timeout", "MS", `bound for each request and prompt turn (default ${DEFAULT_CHECK_TIMEOUT_MS})`, {
    parse: (text, flag) => {
      if (!/^\d+$/.test(text) || Number(text) < 100) throw new UsageError(`${flag} must be a number of milliseconds >= 100 (got "${text}")`);
      return Number(text);
    },
  }),
  prompt: textOption("prompt", "TEXT", `the harmless prompt (default ${JSON.stringify(DEFAULT_PROMPTS.text)})`),
  cancelPrompt: textOption("cancel-prompt", "TEXT", `a prompt that keeps the agent busy long enough to be cancelled`),
  permissionPrompt: textOption("permission-prompt", "TEXT", `a prompt that makes the agent ask permission for a tool call`),
  authMethod: textOption("auth-method", "ID", `call authenticate with this method before creating sessions`),
  json: switchOption("json", `print the report as JSON`),
  report: textOption("report", "FILE", `also write the report to FILE.json and a Markdown table to
FILE.md (a .json or .md ending of FILE is dropped first)`),
  verbose: switchOption("verbose", `show the agent's stderr and the spec reference of passed checks`),
  list: switchOption("list", `list the checks and exit`),
  help: switchOption("help", `show this help`, { short: "h" }),
};

export const checkSchema: CommandSchema<typeof options> = {
  command: "check",
  intro: `Usage: agentkit-acp check [options]

Runs the ACP v1 conformance suite against an agent launched over stdio and reports, check
by check, where it breaks the spec (as bundled in @agentclientprotocol/sdk 2.4.0), with the
spec reference and what to fix.

`,
  options,
  sections: { main: "Options:" },
  outro: `Prompt checks send real prompts (about ten short turns): an agent backed by a paid model
spends tokens. Permission requests are answered "reject" (or "cancelled"), never "allow".

Levels come from the sentence each check quotes: a failed MUST check is a spec violation,
a failed SHOULD check a recommendation not followed; info checks report behaviour the spec
leaves open (rules that bind the client, definitions, common practice) and never fail.

Exit codes:
  0  every MUST check passed    1  a MUST check failed    2  usage error
  130  interrupted (Ctrl-C); the agent's process group is ended
`,
};

export const checkHelp = renderHelp(checkSchema);

/** `--only a,b`: known check ids only. */
function checkIds(text: string): string[] {
  const only = text.split(",").map((s) => s.trim()).filter(Boolean);
  const unknown = only.filter((id) => !conformanceChecks.some((c) => c.id === id));
  if (unknown.length > 0) throw new UsageError(`unknown check id(s): ${unknown.join(", ")} (see --list)`);
  return only;
}

interface CheckArgs {
  options: ConformanceOptions;
  json: boolean;
  /** `--report FILE`: where to write FILE.json and FILE.md (without the ending). */
  reportBase: string | undefined;
  verbose: boolean;
  list: boolean;
  help: boolean;
  /** The temporary state directory of the `self` preset, removed afterwards. */
  stateDir: string | undefined;
}

export async function runCheck(argv: string[], io: CliIo = processIo()): Promise<number> {
  let args: CheckArgs;
  try {
    args = parseCheckArgs(argv, io);
  } catch (error) {
    io.stderr.write(`agentkit-acp check: ${error instanceof Error ? error.message : String(error)}\nRun \`agentkit-acp check --help\` for the options.\n`);
    return EXIT.usage;
  }
  if (args.help) {
    io.stdout.write(checkHelp);
    return EXIT.conformant;
  }
  if (args.list) {
    io.stdout.write(listChecks());
    return EXIT.conformant;
  }
  const progress = !args.json && io.stderr.isTTY === true;
  const options: ConformanceOptions = {
    ...args.options,
    ...(progress ? { onResult: (r: CheckResult) => void io.stderr.write(`  ${symbol(r)} ${r.id}\n`) } : {}),
    ...(args.verbose ? { onStderr: (line: string) => void io.stderr.write(`[agent] ${line}\n`) } : {}),
  };
  // Agents run in their own process groups; exiting lets the exit hook end them all.
  const interrupt = (): void => {
    io.stderr.write("\nagentkit-acp check: interrupted; ending the agent\n");
    if (args.stateDir) rmSync(args.stateDir, { recursive: true, force: true });
    process.exit(EXIT.interrupted);
  };
  if (io.ownsProcess) {
    process.once("SIGINT", interrupt);
    process.once("SIGTERM", interrupt);
  }
  try {
    const report = await runConformance(options);
    if (args.reportBase !== undefined) {
      writeFileSync(`${args.reportBase}.json`, `${JSON.stringify(report, null, 2)}\n`);
      writeFileSync(`${args.reportBase}.md`, formatConformanceMarkdown(report));
      io.stderr.write(`agentkit-acp check: report written to ${args.reportBase}.json and ${args.reportBase}.md\n`);
    }
    if (args.json) io.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    else io.stdout.write(formatConformanceReport(report, { color: io.stdout.isTTY === true && !io.env.NO_COLOR, verbose: args.verbose }));
    return report.ok ? EXIT.conformant : EXIT.failed;
  } finally {
    process.off("SIGINT", interrupt);
    process.off("SIGTERM", interrupt);
    if (args.stateDir) rmSync(args.stateDir, { recursive: true, force: true });
  }
}

function parseCheckArgs(argv: string[], io: CliIo): CheckArgs {
  const { values: v } = parseCommandLine(checkSchema, argv);
  const reportBase = reportBaseOf(v.report, io.cwd);
  const { launch, env: launchEnv, stateDir } = launchFor(v.agent, v.help || v.list);
  // The conformance runner always starts from this process's environment.
  const { env } = agentEnvFor(io, launchEnv);
  const prompts = { text: v.prompt, cancel: v.cancelPrompt, permission: v.permissionPrompt };
  const options: ConformanceOptions = {
    ...launch,
    ...(v.cwd !== undefined ? { cwd: isAbsolute(v.cwd) ? v.cwd : resolve(io.cwd, v.cwd) } : {}),
    ...(env ? { env } : {}),
    ...(v.timeoutMs !== undefined ? { timeoutMs: v.timeoutMs } : {}),
    skipPrompts: v.skipPrompts,
    changeState: v.changeState,
    ...(v.only ? { only: v.only } : {}),
    prompts: Object.fromEntries(Object.entries(prompts).filter(([, value]) => value !== undefined)),
    ...(v.authMethod !== undefined ? { authMethod: v.authMethod } : {}),
  };
  return { options, json: v.json, reportBase, verbose: v.verbose, list: v.list, help: v.help, stateDir };
}

/** `--report FILE` → the path without a .json/.md ending; its folder must exist (checked before the run, not after). */
function reportBaseOf(file: string | undefined, cwd: string): string | undefined {
  if (file === undefined) return undefined;
  if (file.trim() === "") throw new UsageError("--report needs a file name, e.g. --report conformance (writes conformance.json and conformance.md)");
  const base = resolve(cwd, file.replace(/\.(json|md)$/i, ""));
  const folder = dirname(base);
  if (!existsSync(folder) || !statSync(folder).isDirectory()) throw new UsageError(`--report: the folder ${folder} does not exist; create it first`);
  return base;
}

/** `self` is our own serve with the demo model and a throw-away state directory; other presets launch as configured. */
function launchFor(agent: string, dryRun: boolean): { launch: AgentLaunch; env?: Record<string, string>; stateDir?: string } {
  const preset = agentPresets()[agent];
  if (!preset) return { launch: { shellLine: agent } };
  if (agent !== "self") return { launch: { command: preset.command, args: preset.args } };
  const stateDir = dryRun ? undefined : mkdtempSync(join(tmpdir(), "agentkit-check-state-"));
  return {
    launch: { command: preset.command, args: [...preset.args, "--model", "demo"] },
    ...(stateDir ? { env: { AGENTKIT_STATE_DIR: stateDir }, stateDir } : {}),
  };
}

function listChecks(): string {
  const width = Math.max(...conformanceChecks.map((c) => c.id.length));
  const lines = conformanceChecks.map((c) => `${c.id.padEnd(width)}  ${c.severity.padEnd(6)}  ${c.prompts ? "prompt" : "      "}  ${c.title}  [${c.spec.section}]`);
  return `${"id".padEnd(width)}  ${"level".padEnd(6)}  ${"needs".padEnd(6)}  what it verifies  [spec section quoted]\n${lines.join("\n")}\n`;
}

function symbol(result: CheckResult): string {
  return { pass: "✓", fail: "✗", warn: "!", skip: "–" }[result.status];
}
