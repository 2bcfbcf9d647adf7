import { absolutePath, argWords } from "./argv.js";
import { agentPresets } from "../acp/client/index.js";
import { UsageError } from "./usage.js";

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

export interface PromptArgs {
  help: boolean;
  /** A preset name or a whole command line. */
  agent: string;
  cwd: string;
  /** deny | ask | allow-reads | allow-all, or a JSON file path; undefined = `ask` on a TTY, else `deny`. */
  permissions: string | undefined;
  session: string | undefined;
  /** Fork this session (session/fork) and prompt in the fork. */
  fork: string | undefined;
  /** List the agent's sessions (with titles) instead of prompting. */
  list: boolean;
  /** `session/list` archive filter for `--list`. */
  archived: "include" | "only" | undefined;
  /** Archive / un-archive this session instead of prompting. */
  archive: string | undefined;
  unarchive: string | undefined;
  /** `--provider ID=URL` / `ID=off`: providers/set or providers/disable before the session starts. */
  providers: { providerId: string; baseUrl: string | undefined }[];
  json: boolean;
  /** Show the agent's stderr (hidden by default; its last lines still appear in error reports). */
  verbose: boolean;
  /** --raw: print the agent's text as received, control and escape sequences included. */
  raw: boolean;
  /** --protocol v1|v2: the ACP version to speak (v2 = the draft; fails if the agent does not speak it). */
  protocol: "v1" | "v2";
  /** --audit-log FILE: append the audit trail (host operations, permission decisions) as JSONL. */
  auditLog: string | undefined;
  /** --sandbox: the agent process (and hosted terminals) in an OS sandbox. */
  sandbox: boolean;
  /** --model ID: our own agent (self) is started with `serve --model ID`; another agent gets its "model" config option set. */
  model: string | undefined;
  /** --title TEXT: the session's title (session/set_title) before the prompt. */
  title: string | undefined;
  /** The prompt text; `-` (or none with piped stdin) reads stdin. */
  text: string | undefined;
  /** Options of other areas (host services …) keyed by flag, collected for them. */
  extra: Map<string, string[]>;
}

/**
 * Flags of other areas: `--add-dir DIR` (repeatable), `--fs off|read|read-write`,
 * `--terminal on|off`. Parsed here so the command line stays one grammar; the host-services
 * wiring reads them from `PromptArgs.extra`.
 */
const EXTRA_FLAGS = new Set(["--add-dir", "--fs", "--terminal", "--sandbox-ro", "--sandbox-net"]);

export const promptHelp = `Usage: agentkit-acp prompt [options] [TEXT | -]

Send one prompt to an ACP agent and stream the turn.

Options:
  --agent AGENT          a preset (${Object.keys(agentPresets()).join(", ")}), a whole command line,
                         e.g. --agent "npx -y @agentclientprotocol/claude-agent-acp" (default: self),
                         or the URL of a served agent (serve --listen): http://HOST:PORT/acp
                         (Streamable HTTP) or ws://HOST:PORT/acp (WebSocket), with the bearer
                         token from AGENTKIT_ACP_TOKEN; --cwd is then a directory on its machine.
                         A dropped connection is re-established and the session re-attached;
                         a turn that was running is reported as interrupted (exit 1)
  --cwd DIR              the session's working directory (default: the current directory)
  --model ID             the model: our own agent (--agent self) is started with serve --model ID
                         (e.g. anthropic:claude-sonnet-4-5, ollama:qwen3, demo); another agent gets
                         its "model" session option set to ID (exit 2 if it offers none)
  --title TEXT           the session's title (session/set_title; the agent must offer it)
  --permissions POLICY   deny | ask | allow-reads | allow-all | FILE.json
                         (default: ask when stdin and stderr are a terminal, else deny)
  --session ID           continue a session (session/resume, else session/load); while
                         another instance's lease on it runs out (a failover), waits up to 30 s
  --fork ID              fork a session (session/fork) and send the prompt in the fork;
                         the original stays as it was
  --list                 list the agent's sessions (id, last update, title) and exit
  --archived include|only  with --list: also / only archived sessions
  --provider ID=URL      route the agent's provider ID (see providers/list; ours is "main") to
                         URL first (providers/set, same protocol); ID=off disables it
                         (providers/disable); repeatable
  --archive ID           archive a session (hidden from --list) and exit
  --unarchive ID         bring an archived session back and exit
  --add-dir DIR          another workspace root for the session (repeatable; the agent must
                         advertise sessionCapabilities.additionalDirectories)
  --fs MODE              offer the agent this client's file system (fs/*), confined to --cwd
                         and the --add-dir folders: off | read | read-write (default read-write)
  --terminal on|off      offer the agent terminals (terminal/*) run here in their own process
                         group, cwd inside the roots (default on)
  --protocol v1|v2       the ACP version to speak (default v1). v2: the v2 draft (serve it with
                         serve --protocol auto or v2); an agent that answers another version
                         fails with exit 1 saying so. Over v2 --fs and --terminal do not apply
                         (v2 agents run their own tools)
  --json                 print NDJSON events on stdout; the last line carries "stopReason"
  --verbose              show the agent's stderr (hidden by default; its last lines are
                         always part of an error report)
  --raw                  print what the agent sends as is; by default control and escape
                         sequences (title changes, screen clears, cursor moves …) are removed
                         from everything the agent sends before it reaches the terminal
  --audit-log FILE       append every host operation (file reads/writes with path and bytes,
                         terminal create/exit with command line, cwd, exit code) and every
                         permission question and answer to FILE as JSONL (--json prints the
                         same events)
  --sandbox              run the agent process in an OS sandbox (bubblewrap; docs/sandbox.md):
                         --cwd and --add-dir writable, system directories read-only, a scratch
                         home with only the preset's config (read-only) and caches (writable);
                         network only to the preset's model provider hosts (a command line
                         agent: none) through the sandbox's proxy; the terminals hosted here
                         run sandboxed too. No bubblewrap → exit 2 naming what to install
  --sandbox-net allow=HOST[:PORT][,…]  with --sandbox: further destinations for the agent
                         and its terminals (repeatable; see serve --help)
  --sandbox-ro DIR       with --sandbox: a further directory the agent may read (repeatable;
                         e.g. where a vendor agent is installed)
  -h, --help             show this help

TEXT is the prompt; "-" (or no TEXT with piped stdin) reads it from stdin.

Ctrl-C cancels the turn (session/cancel) and waits for the agent to stop; a second Ctrl-C
ends the agent. SIGTERM and SIGHUP end the agent's whole process group and the terminals
hosted here within 5 s (exit 143 / 129); so does SIGKILL, through a small watchdog process.

Exit codes:
  0  end_turn            3  cancelled           5  max_tokens / max_turn_requests
  1  error               4  refusal             130  agent ended by a second Ctrl-C
                                                 143 / 129  ended by SIGTERM / SIGHUP
  2  usage error
`;

export function parsePromptArgs(argv: string[], cwd = process.cwd()): PromptArgs {
  const args: PromptArgs = {
    help: false,
    agent: "self",
    cwd,
    permissions: undefined,
    session: undefined,
    fork: undefined,
    list: false,
    archived: undefined,
    archive: undefined,
    unarchive: undefined,
    providers: [],
    json: false,
    verbose: false,
    raw: false,
    protocol: "v1",
    auditLog: undefined,
    sandbox: false,
    model: undefined,
    title: undefined,
    text: undefined,
    extra: new Map(),
  };
  const words: string[] = [];
  for (const { arg, flag, value, rest } of argWords(argv)) {
    switch (flag) {
      case "-h":
      case "--help":
        args.help = true;
        break;
      case "--agent":
        args.agent = value();
        break;
      case "--cwd":
        args.cwd = absolutePath(value(), cwd);
        break;
      case "--permissions":
        args.permissions = value();
        break;
      case "--model":
        args.model = value();
        break;
      case "--title":
        args.title = value();
        break;
      case "--session":
        args.session = value();
        break;
      case "--fork":
        args.fork = value();
        break;
      case "--list":
        args.list = true;
        break;
      case "--archived": {
        const filter = value();
        if (filter !== "include" && filter !== "only") throw new UsageError(`--archived must be include or only, got "${filter}"`);
        args.archived = filter;
        break;
      }
      case "--archive":
        args.archive = value();
        break;
      case "--unarchive":
        args.unarchive = value();
        break;
      case "--provider": {
        const spec = value();
        const eq = spec.indexOf("=");
        if (eq <= 0 || eq === spec.length - 1) throw new UsageError(`--provider needs ID=URL or ID=off, got "${spec}"`);
        const target = spec.slice(eq + 1);
        if (target !== "off" && !/^https?:\/\/./.test(target)) throw new UsageError(`--provider ${spec.slice(0, eq)}: "${target}" is not an http(s) URL or "off"`);
        args.providers.push({ providerId: spec.slice(0, eq), baseUrl: target === "off" ? undefined : target });
        break;
      }
      case "--json":
        args.json = true;
        break;
      case "--verbose":
        args.verbose = true;
        break;
      case "--raw":
        args.raw = true;
        break;
      case "--sandbox":
        args.sandbox = true;
        break;
      case "--protocol": {
        const version = value();
        if (version !== "v1" && version !== "v2") throw new UsageError(`--protocol must be v1 or v2 (got "${version}")`);
        args.protocol = version;
        break;
      }
      case "--audit-log": {
        const file = value();
        if (file.trim() === "") throw new UsageError("--audit-log needs a file");
        args.auditLog = absolutePath(file, cwd);
        break;
      }
      case "--":
        words.push(...rest());
        break;
      default:
        if (EXTRA_FLAGS.has(flag)) {
          args.extra.set(flag, [...(args.extra.get(flag) ?? []), value()]);
        } else if (flag.startsWith("-") && flag !== "-") {
          throw new UsageError(`unknown option ${flag}`);
        } else {
          words.push(arg);
        }
    }
  }
  if (words.length > 0) args.text = words.join(" ");
  const actions = [args.list, args.archive !== undefined, args.unarchive !== undefined].filter(Boolean).length;
  if (actions > 1) throw new UsageError("use one of --list, --archive, --unarchive at a time");
  if (args.fork !== undefined && args.session !== undefined) throw new UsageError("--fork and --session exclude each other (--fork already names the session)");
  if (args.archived !== undefined && !args.list) throw new UsageError("--archived only goes with --list");
  if (actions > 0 && (args.fork !== undefined || args.session !== undefined || args.text !== undefined)) {
    throw new UsageError("--list, --archive and --unarchive take no prompt, --session or --fork");
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
