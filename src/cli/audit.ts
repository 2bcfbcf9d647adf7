import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { createStderrLogger, errorMessage } from "../core/index.js";
import type { AuditLog, AuditRecord } from "../store/index.js";
import { DEFAULT_AUDIT_QUERY_LIMIT, FileAuditLog, defaultStateDir, openStore } from "../store/index.js";
import { parseSince } from "./duration.js";
import { processIo, type CliIo } from "./io.js";
import { storeUrlFrom } from "./serve-options.js";
import { UsageError, parseArgsUsageError } from "./usage.js";

export const auditHelp = `Usage: agentkit-acp audit [--store URL | --state-dir DIR] [--principal NAME] [--since AGE|ISO] [--limit N] [--json]

Prints the audit trail serve --listen records in its store: sessions opened, loaded, resumed,
forked, deleted and closed, prompts (with their stop reason), tool calls with their permission
outcome, and every refused request (workspace, client MCP, ceiling, quota, unknown or another
principal's session) with principal, session, instance and time, oldest first.

Options:
  --store URL        the PostgreSQL store (default AGENTKIT_STORE_URL)
  --state-dir DIR    the state directory of a JSONL store (default: serve's default state dir)
  --principal NAME   only this principal's records
  --since AGE|ISO    only records from the last AGE (30d, 12h, 90m, 45s) or since an ISO time
  --limit N          at most N records (default 10000)
  --json             one JSON record per line
  -h, --help         show this help

Retention: serve --audit-retain AGE (default 30d) deletes older records.
`;

interface AuditArgs {
  help: boolean;
  storeUrl: string | undefined;
  stateDir: string | undefined;
  principal: string | undefined;
  since: Date | undefined;
  limit: number;
  json: boolean;
}

export function parseAuditArgs(argv: string[], env: NodeJS.ProcessEnv): AuditArgs {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        store: { type: "string" },
        "state-dir": { type: "string" },
        principal: { type: "string" },
        since: { type: "string" },
        limit: { type: "string" },
        json: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (error) {
    throw parseArgsUsageError(error);
  }
  const limitText = values.limit as string | undefined;
  if (limitText !== undefined && !/^[1-9]\d{0,6}$/.test(limitText)) throw new UsageError(`--limit takes a whole number from 1 to 9999999 (got "${limitText}")`);
  const stateDir = values["state-dir"] as string | undefined;
  if (stateDir !== undefined && stateDir.trim() === "") throw new UsageError("--state-dir needs a directory");
  const principal = values.principal as string | undefined;
  if (principal !== undefined && principal.trim() === "") throw new UsageError("--principal needs a name");
  return {
    help: values.help === true,
    storeUrl: storeUrlFrom(values, env),
    stateDir: stateDir === undefined ? undefined : resolve(stateDir),
    principal,
    since: values.since === undefined ? undefined : parseSince(values.since as string, "--since"),
    limit: limitText === undefined ? DEFAULT_AUDIT_QUERY_LIMIT : Number(limitText),
    json: values.json === true,
  };
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
