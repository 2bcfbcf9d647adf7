import { resolve } from "node:path";
import { createStderrLogger, errorMessage } from "../core/index.js";
import type { AuditLog, AuditRecord } from "../store/index.js";
import { DEFAULT_AUDIT_QUERY_LIMIT, FileAuditLog, defaultStateDir, openStore } from "../store/index.js";
import { parseSince } from "./duration.js";
import { processIo, type CliIo } from "./io.js";
import { formatAge, storeUrlFrom } from "./store-option.js";
import { SERVE_DEFAULTS } from "../serve/defaults.js";
import { parseCommandLine, read, renderHelp, switchOption, textOption, withDefault, type CommandSchema, type Env } from "./options.js";
import { UsageError } from "./usage.js";

const options = {
  store: textOption("store", "URL", `the shared store (default AGENTKIT_STORE_URL)`, { env: { name: "AGENTKIT_STORE_URL", help: "the store when --store and --state-dir are not given", fallback: false } }),
  stateDir: textOption("state-dir", "DIR", `the state directory of a file store (default: serve's default state dir)`, { parse: (text, flag) => resolve(read.nonBlank("a directory")(text, flag)) }),
  principal: textOption("principal", "NAME", `only this principal's records`, { parse: read.nonBlank("a name") }),
  since: textOption("since", "AGE|ISO", `only records from the last AGE (30d, 12h, 90m) or since an ISO time`, { parse: (text, flag) => parseSince(text, flag) }),
  limit: withDefault(textOption("limit", "N", `at most N records (default {default})`, { parse: read.whole(1) }), DEFAULT_AUDIT_QUERY_LIMIT),
  json: switchOption("json", `one JSON record per line`),
  help: switchOption("help", `show this help`, { short: "h" }),
};

export const auditSchema: CommandSchema<typeof options> = {
  command: "audit",
  intro: `Usage: agentkit-acp audit [--store URL | --state-dir DIR] [--principal NAME] [--since AGE|ISO] [--limit N] [--json]

Prints the audit trail serve --listen records in its store: sessions opened, loaded, resumed,
forked, deleted and closed, prompts (with their stop reason), tool calls with their permission
outcome, every refused request (workspace, client MCP, ceiling, quota, unknown or another
principal's session), and what the command sandbox refused (network destinations, bounds hit)
with principal, session, instance and time, oldest first.

`,
  options,
  sections: { main: "Options:" },
  column: 23,
  outro: `Retention: serve --audit-retain AGE (default ${formatAge(SERVE_DEFAULTS.auditRetainMs)}) deletes older records.
`,
};

export const auditHelp = renderHelp(auditSchema);

interface AuditArgs {
  help: boolean;
  storeUrl: string | undefined;
  stateDir: string | undefined;
  principal: string | undefined;
  since: Date | undefined;
  limit: number;
  json: boolean;
}

export function parseAuditArgs(argv: string[], env: Env): AuditArgs {
  const { values: v, given } = parseCommandLine(auditSchema, argv, env);
  if (given.has("store") && given.has("stateDir")) throw new UsageError("--store and --state-dir exclude each other: the audit trail is in one store");
  return { help: v.help, storeUrl: storeUrlFrom({ store: v.store, storeGiven: given.has("store"), stateDirGiven: given.has("stateDir") }, env), stateDir: v.stateDir, principal: v.principal, since: v.since, limit: v.limit, json: v.json };
}

/** One line per record: time, principal, session, action, details (key=value), instance. */
export function formatAuditRecord(r: AuditRecord): string {
  const detail = Object.entries(r.detail)
    .map(([k, v]) => `${k}=${typeof v === "string" ? (/^[^\s"=]+$/.test(v) ? v : JSON.stringify(v)) : JSON.stringify(v)}`)
    .join(" ");
  return [r.at, r.principal, r.sessionId ?? "-", r.action, detail, `(${r.instance})`].filter((f) => f !== "").join("  ");
}

/** `agentkit-acp audit`: exit 0 with the records, 2 for a bad command line or a store that cannot be used. */
export async function runAudit(argv: string[], io: CliIo = processIo()): Promise<number> {
  let args: AuditArgs;
  try {
    args = parseAuditArgs(argv, io.env);
  } catch (error) {
    io.stderr.write(`agentkit-acp audit: ${errorMessage(error)}\nRun \`agentkit-acp audit --help\` for the options.\n`);
    return 2;
  }
  if (args.help) {
    io.stdout.write(auditHelp);
    return 0;
  }
  let log: AuditLog;
  let close = async (): Promise<void> => {};
  try {
    if (args.storeUrl !== undefined) {
      const store = await openStore({ url: args.storeUrl, logger: createStderrLogger("warn") });
      log = store.audit;
      close = () => store.close();
    } else {
      log = new FileAuditLog(args.stateDir ?? defaultStateDir(io.env));
    }
  } catch (error) {
    io.stderr.write(`agentkit-acp audit: cannot use the store: ${errorMessage(error)}\n`);
    return 2;
  }
  try {
    const records = await log.query({ ...(args.principal !== undefined ? { principal: args.principal } : {}), ...(args.since ? { since: args.since } : {}), limit: args.limit });
    io.stdout.write(records.map((r) => `${args.json ? JSON.stringify(r) : formatAuditRecord(r)}\n`).join(""));
    return 0;
  } catch (error) {
    io.stderr.write(`agentkit-acp audit: reading the audit trail failed: ${errorMessage(error)}\n`);
    return 1;
  } finally {
    await close();
  }
}
