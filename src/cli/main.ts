import { packageVersion } from "../core/package-files.js";
import { processIo, type CliIo } from "./io.js";

export { processIo, type CliIo } from "./io.js";

/** One subcommand: runs with its arguments, resolves with the exit code. */
export type CliCommand = (argv: string[], io?: CliIo) => Promise<number>;

/**
 * How a command's module is loaded: the bin loads its bundle (dist/bin/NAME.cjs, see bundles.ts);
 * in-process callers import the module itself. The bundle is built from that same module.
 */
export type CommandModuleLoader = <M>(bundle: string, importModule: () => Promise<M>) => Promise<M>;

const importDirectly: CommandModuleLoader = (_bundle, importModule) => importModule();

interface CommandEntry {
  summary: string;
  load: (from: CommandModuleLoader) => Promise<CliCommand>;
}

const commands: Record<string, CommandEntry> = {
  serve: { summary: "serve the agent over ACP on stdio (what an editor launches)", load: async (from) => (await from("serve", () => import("./serve.js"))).runServe },
  prompt: { summary: "drive any ACP agent: send a prompt, stream the turn", load: async (from) => (await from("prompt", () => import("./prompt.js"))).runPrompt },
  demo: { summary: "zero-key demo: `prompt` against our own `serve` in a temp workspace", load: async (from) => (await from("demo", () => import("./demo.js"))).runDemo },
  inspect: { summary: "see, record and replay any ACP conversation in the browser (tap, drive, view)", load: async (from) => (await from("inspect", () => import("./inspect.js"))).runInspect },
  sessions: { summary: "the stored sessions: list, show, export (JSONL / Markdown), prune by age", load: async (from) => (await from("sessions", () => import("./sessions.js"))).runSessions },
  audit: { summary: "who did what on a serve --listen service: sessions, prompts, tool calls, refusals", load: async (from) => (await from("audit", () => import("./audit.js"))).runAudit },
  check: { summary: "ACP v1 conformance check of any agent: where it breaks the spec, and what to fix", load: async (from) => (await from("check", () => import("./check.js"))).runCheck },
};

/** The commands; each has its bundle, dist/bin/NAME.cjs, built from ./NAME.js. */
export const commandNames: readonly string[] = Object.keys(commands);

export function usage(): string {
  const width = Math.max(...Object.keys(commands).map((c) => c.length));
  const lines = Object.entries(commands).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`);
  return [
    "Usage: agentkit-acp <command> [options]",
    "",
    "Commands:",
    ...lines,
    "",
    "Run `agentkit-acp <command> --help` (or `agentkit-acp help <command>`) for a command's options;",
    "`agentkit-acp --version` (-v, -V) prints the version. NO_COLOR=1 turns colours off.",
    "",
  ].join("\n");
}

/** Runs one command line; `io` defaults to this process's streams and environment (the bin). */
export async function main(argv: string[], io: CliIo = processIo(), loader: CommandModuleLoader = importDirectly): Promise<number> {
  const [name, ...rest] = argv;
  if (name === "help" && rest[0] !== undefined && commands[rest[0]]) return main([rest[0], "--help"], io, loader);
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    io.stdout.write(usage());
    return name === undefined ? 2 : 0;
  }
  if (name === "--version" || name === "-v" || name === "-V") {
    io.stdout.write(`${packageVersion()}\n`);
    return 0;
  }
  const entry = commands[name];
  if (!entry) {
    io.stderr.write(`agentkit-acp: unknown command "${name}"\n\n${usage()}`);
    return 2;
  }
  const run = await entry.load(loader);
  return run(rest, io);
}
