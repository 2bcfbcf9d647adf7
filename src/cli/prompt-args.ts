import { absolutePath } from "./argv.js";
import { agentPresets } from "../acp/client/index.js";
import { UsageError } from "./usage.js";
import { parseModelSpec } from "../model/model-id.js";
import { errorMessage } from "../core/errors.js";
import { listOption, parseCommandLine, read, renderHelp, switchOption, textOption, withDefault, type CommandSchema, type OptionValues } from "./options.js";

export const EXIT = {
  endTurn: 0,
  error: 1,
  usage: 2,
  cancelled: 3,
  refusal: 4,
  maxTokens: 5,
  /** A second Ctrl-C ended the agent. */
  interrupted: 130,
} as const;

/** `--provider ID=URL` / `ID=off`: providers/set or providers/disable before the session starts. */
function providerRoute(spec: string, flag: string): { providerId: string; baseUrl: string | undefined } {
  const eq = spec.indexOf("=");
  if (eq <= 0 || eq === spec.length - 1) throw new UsageError(`${flag} needs ID=URL or ID=off, got "${spec}"`);
  const target = spec.slice(eq + 1);
  if (target !== "off" && !/^https?:\/\/./.test(target)) throw new UsageError(`${flag} ${spec.slice(0, eq)}: "${target}" is not an http(s) URL or "off"`);
  return { providerId: spec.slice(0, eq), baseUrl: target === "off" ? undefined : target };
}

// Every option of `prompt`, declared once: parsing, --help and defaults come from here.
const options = {
  agent: withDefault(textOption("agent", "AGENT", `a preset (${Object.keys(agentPresets()).join(", ")}), a whole command line,
e.g. --agent "npx -y @agentclientprotocol/claude-agent-acp" (default: self),
or the URL of a served agent (serve --listen): http://HOST:PORT/acp
(Streamable HTTP) or ws://HOST:PORT/acp (WebSocket), with the bearer
token from AGENTKIT_ACP_TOKEN; --cwd is then a directory on its machine.
A dropped connection is re-established and the session re-attached;
a turn that was running is reported as interrupted (exit 1)`), "self"),
  cwd: textOption("cwd", "DIR", `the session's working directory (default: the current directory)`),
  model: textOption("model", "ID", `the model: our own agent (--agent self) is started with serve --model ID
(e.g. anthropic:claude-sonnet-4-5, ollama:qwen3, demo); another agent gets
its "model" session option set to ID (exit 2 if it offers none)`),
  title: textOption("title", "TEXT", `the session's title (session/set_title; the agent must offer it)`),
  permissions: textOption("permissions", "POLICY", `deny | ask | allow-reads | allow-all | FILE.json
(default: ask when stdin and stderr are a terminal, else deny)`),
  session: textOption("session", "ID", `continue a session (session/resume, else session/load); while
another instance's lease on it runs out (a failover), waits up to 30 s`),
  fork: textOption("fork", "ID", `fork a session (session/fork) and send the prompt in the fork;
the original stays as it was`),
  list: switchOption("list", `list the agent's sessions (id, last update, title) and exit`),
  archived: textOption("archived", "include|only", `with --list: also / only archived sessions`, {
    parse: (text, flag) => {
      if (text !== "include" && text !== "only") throw new UsageError(`${flag} must be include or only, got "${text}"`);
      return text;
    },
  }),
  providers: listOption("provider", "ID=URL", `route the agent's provider ID (see providers/list; ours is "main") to
URL first (providers/set, same protocol); ID=off disables it
(providers/disable); repeatable`, { split: false, item: providerRoute }),
  archive: textOption("archive", "ID", `archive a session (hidden from --list) and exit`),
  unarchive: textOption("unarchive", "ID", `bring an archived session back and exit`),
  // Host services (prompt-host.ts reads them from `extra`).
  addDir: listOption("add-dir", "DIR", `another workspace root for the session (repeatable; the agent must
advertise sessionCapabilities.additionalDirectories)`, { split: false }),
  fs: listOption("fs", "MODE", `offer the agent this client's file system (fs/*), confined to --cwd
and the --add-dir folders: off | read | read-write (default read-write)`, { split: false }),
  terminal: listOption("terminal", "on|off", `offer the agent terminals (terminal/*) run here in their own process
group, cwd inside the roots (default on)`, { split: false }),
  protocol: withDefault(textOption("protocol", "v1|v2", `the ACP version to speak (default v1). v2: the v2 draft (serve it with
serve --protocol auto or v2); an agent that answers another version
fails with exit 1 saying so. Over v2 --fs and --terminal do not apply
(v2 agents run their own tools)`, { parse: read.oneOf(["v1", "v2"] as const, "v1 or v2") }), "v1"),
  json: switchOption("json", `print NDJSON events on stdout; the last line carries "stopReason"`),
  verbose: switchOption("verbose", `show the agent's stderr (hidden by default; its last lines are
always part of an error report)`),
  raw: switchOption("raw", `print what the agent sends as is; by default control and escape
sequences (title changes, screen clears, cursor moves …) are removed
from everything the agent sends before it reaches the terminal`),
  auditLog: textOption("audit-log", "FILE", `append every host operation (file reads/writes with path and bytes,
terminal create/exit with command line, cwd, exit code) and every
permission question and answer to FILE as JSONL (--json prints the
same events)`, { parse: read.nonBlank("a file") }),
  sandbox: switchOption("sandbox", `run the agent process in an OS sandbox (bubblewrap; docs/sandbox.md):
--cwd and --add-dir writable, system directories read-only, a scratch
home with only the preset's config (read-only) and caches (writable);
network only to the preset's model provider hosts (a command-line
agent: none) through the sandbox's proxy; the terminals hosted here
run sandboxed too. No bubblewrap → exit 2 naming what to install`),
  sandboxNet: listOption("sandbox-net", "allow=HOST[:PORT],…", `with --sandbox: more destinations for
the agent and its terminals (repeatable; see serve --help)`, { split: false }),
  sandboxRo: listOption("sandbox-ro", "DIR", `with --sandbox: a further directory the agent may read (repeatable;
e.g. where a vendor agent is installed)`, { split: false }),
  help: switchOption("help", `show this help`, { short: "h" }),
};

export const promptSchema: CommandSchema<typeof options> = {
  command: "prompt",
  intro: `Usage: agentkit-acp prompt [options] [TEXT | -]

Send one prompt to an ACP agent and stream the turn.

`,
  options,
  sections: { main: "Options:" },
  column: 25,
  positionals: "words",
  outro: `TEXT is the prompt; "-" (or no TEXT with piped stdin) reads it from stdin.

Ctrl-C cancels the turn (session/cancel) and waits for the agent to stop; a second Ctrl-C
ends the agent. SIGTERM and SIGHUP end the agent's whole process group and the terminals
hosted here within 5 s (exit 143 / 129); so does SIGKILL, through a small watchdog process.

Exit codes:
  0  end_turn            3  cancelled           5  max_tokens / max_turn_requests
  1  error               4  refusal             130  agent ended by a second Ctrl-C
                                                 143 / 129  ended by SIGTERM / SIGHUP
  2  usage error
`,
};

export const promptHelp = renderHelp(promptSchema);

type Values = OptionValues<typeof options>;

export interface PromptArgs extends Omit<Values, "cwd" | "addDir" | "fs" | "terminal" | "sandboxRo" | "sandboxNet"> {
  /** The session's working directory (absolute; default the current directory). */
  cwd: string;
  /** The prompt text; `-` (or none with piped stdin) reads stdin. */
  text: string | undefined;
  /** Options of other areas (host services: `--add-dir`, `--fs`, `--terminal`, `--sandbox-ro`, `--sandbox-net`) keyed by flag. */
  extra: Map<string, string[]>;
}

export function parsePromptArgs(argv: string[], cwd = process.cwd()): PromptArgs {
  const { values, words } = parseCommandLine(promptSchema, argv);
  const { addDir, fs, terminal, sandboxRo, sandboxNet, ...rest } = values;
  const extra = new Map(Object.entries({ "--add-dir": addDir, "--fs": fs, "--terminal": terminal, "--sandbox-ro": sandboxRo, "--sandbox-net": sandboxNet }).filter(([, v]) => v.length > 0));
  const args: PromptArgs = {
    ...rest,
    cwd: values.cwd === undefined ? cwd : absolutePath(values.cwd, cwd),
    auditLog: values.auditLog === undefined ? undefined : absolutePath(values.auditLog, cwd),
    text: words.length > 0 ? words.join(" ") : undefined,
    extra,
  };
  const actions = [args.list, args.archive !== undefined, args.unarchive !== undefined].filter(Boolean).length;
  if (actions > 1) throw new UsageError("use one of --list, --archive, --unarchive at a time");
  if (args.fork !== undefined && args.session !== undefined) throw new UsageError("--fork and --session exclude each other (--fork already names the session)");
  if (args.archived !== undefined && !args.list) throw new UsageError("--archived only goes with --list");
  if (actions > 0 && (args.fork !== undefined || args.session !== undefined || args.text !== undefined)) {
    throw new UsageError("--list, --archive and --unarchive take no prompt, --session or --fork");
  }
  // Our own agent would refuse a bad spec only once started: exit 1, its message in the agent's stderr tail.
  // (serve alone resolves the tests' scripted:FILE.json.)
  if (args.model !== undefined && args.agent === "self" && !args.model.startsWith("scripted:")) {
    try {
      parseModelSpec(args.model);
    } catch (error) {
      throw new UsageError(`--model: ${errorMessage(error)}`);
    }
  }
  return args;
}

/** Exit code for a stop reason (see the table in `promptHelp`). */
export function exitCodeFor(stopReason: string): number {
  switch (stopReason) {
    case "end_turn":
      return EXIT.endTurn;
    case "cancelled":
      return EXIT.cancelled;
    case "refusal":
      return EXIT.refusal;
    case "max_tokens":
    case "max_turn_requests":
      return EXIT.maxTokens;
    default:
      return EXIT.error;
  }
}
