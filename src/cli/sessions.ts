import { resolve } from "node:path";
import { parseArgs } from "node:util";
import type { Logger } from "../core/index.js";
import { createStderrLogger, errorMessage } from "../core/index.js";
import type { SessionLeases, SessionStore, SessionSummary } from "../store/index.js";
import { JsonlSessionStore, defaultStateDir, openSessionReader, openStore, pruneSessions } from "../store/index.js";
import { processIo, type CliIo } from "./io.js";
import { exportSession, type ExportFormat } from "./sessions-export.js";
import { parseAge, storeUrlFrom } from "./store-option.js";
import { stripControls } from "./terminal-safe.js";
import { UsageError, parseArgsUsageError } from "./usage.js";

export const sessionsHelp = `Usage: agentkit-acp sessions <list|show|export|prune> [options]

The stored sessions of every principal, for the operator (not over ACP: no ownership applies;
the owner is shown and --principal filters). Works on the store serve uses: files under the
state directory (default) or PostgreSQL (--store / AGENTKIT_STORE_URL).

  sessions list [--archived include|only] [--limit N] [--json]
      newest first (pages of the store's own order; --limit, default 100, caps the total)
  sessions show ID [--json]
      the header (owner, cwd, times, title, archived, fork) and the transcript's size by role
  sessions export ID [--format jsonl|markdown]
      the session on stdout: jsonl is the session file format (a header line, then one
      record per item; copy it to another state directory's sessions/ to move it), markdown
      a readable transcript
  sessions prune --older-than AGE [--dry-run] [--keep-archived] [--limit N] [--json]
      deletes the sessions not updated for AGE (30d, 12h, 90m; a bare number is days).
      Archived sessions age like the others unless --keep-archived. A session open on an
      instance (its lease is held) is kept and reported; on PostgreSQL that covers every
      instance, on files only this process (serve --retain skips its own open sessions).
      --limit bounds the sessions examined in one run (default 1000; run again for more).
      Every deletion is listed; --dry-run lists what would go and deletes nothing.

Options (every subcommand):
  --state-dir DIR       the state directory (default: AGENTKIT_STATE_DIR, XDG_STATE_HOME/agentkit-acp,
                        ~/.local/state/agentkit-acp)
  --store URL           a shared store, e.g. postgres://USER:PASSWORD@HOST:5432/DATABASE (else
                        AGENTKIT_STORE_URL)
  --principal NAME      only this principal's sessions
  -h, --help            show this help

Exit codes: 0 done   1 no such session (show, export)   2 usage error   3 the store failed
`;

interface SessionsArgs {
  action: "list" | "show" | "export" | "prune";
  id: string | undefined;
  stateDir: string | undefined;
  storeUrl: string | undefined;
  principal: string | undefined;
  json: boolean;
  archived: "include" | "only" | undefined;
  limit: number | undefined;
  format: ExportFormat;
  olderThanMs: number | undefined;
  dryRun: boolean;
  keepArchived: boolean;
}

const ACTIONS = ["list", "show", "export", "prune"] as const;

export function parseSessionsArgs(argv: string[], env: Readonly<Record<string, string | undefined>>, cwd: string): SessionsArgs | "help" {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: true,
      options: {
        "state-dir": { type: "string" },
        store: { type: "string" },
        principal: { type: "string" },
        json: { type: "boolean" },
        archived: { type: "string" },
        limit: { type: "string" },
        format: { type: "string" },
        "older-than": { type: "string" },
        "dry-run": { type: "boolean" },
        "keep-archived": { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (error) {
    throw parseArgsUsageError(error);
  }
  const { values, positionals } = parsed;
  if (values.help === true) return "help";
  const [action, id, ...extra] = positionals;
  if (action === undefined || !(ACTIONS as readonly string[]).includes(action)) throw new UsageError(`sessions needs one of ${ACTIONS.join(", ")}${action === undefined ? "" : ` (got "${action}")`}`);
  const needsId = action === "show" || action === "export";
  if (needsId && id === undefined) throw new UsageError(`sessions ${action} needs a session id`);
  if ((!needsId && id !== undefined) || extra.length > 0) throw new UsageError(`unexpected argument "${needsId ? extra[0] : id}"`);
  const only = (flag: string, actions: readonly string[]): void => {
    if (values[flag] !== undefined && !actions.includes(action)) throw new UsageError(`--${flag} only applies to sessions ${actions.join(" / ")}`);
  };
  only("archived", ["list"]);
  only("format", ["export"]);
  only("older-than", ["prune"]);
  only("dry-run", ["prune"]);
  only("keep-archived", ["prune"]);
  only("limit", ["list", "prune"]);
  only("json", ["list", "show", "prune"]);
  if (action === "prune" && values["older-than"] === undefined) throw new UsageError("sessions prune needs --older-than AGE (e.g. 30d): nothing is deleted without an age");
  const archived = values.archived as string | undefined;
  if (archived !== undefined && archived !== "include" && archived !== "only") throw new UsageError(`--archived must be include or only (got "${archived}")`);
  const format = (values.format as string | undefined) ?? "jsonl";
  if (format !== "jsonl" && format !== "markdown") throw new UsageError(`--format must be jsonl or markdown (got "${format}")`);
  const stateDir = values["state-dir"] as string | undefined;
  if (stateDir !== undefined && stateDir.trim() === "") throw new UsageError("--state-dir needs a directory");
  const principal = values.principal as string | undefined;
  if (principal !== undefined && principal.trim() === "") throw new UsageError("--principal needs a name");
  const limitText = values.limit as string | undefined;
  if (limitText !== undefined && !(/^\d+$/.test(limitText) && Number(limitText) >= 1)) throw new UsageError(`--limit must be a positive integer (got "${limitText}")`);
  return {
    action: action as SessionsArgs["action"],
    id,
    stateDir: stateDir === undefined ? undefined : resolve(cwd, stateDir),
    storeUrl: storeUrlFrom(values, env),
    principal,
    json: values.json === true,
    archived: archived as SessionsArgs["archived"],
    limit: limitText === undefined ? undefined : Number(limitText),
    format,
    olderThanMs: values["older-than"] === undefined ? undefined : parseAge(values["older-than"] as string, "--older-than"),
    dryRun: values["dry-run"] === true,
    keepArchived: values["keep-archived"] === true,
  };
}


interface SessionsStore {
  store: SessionStore;
  leases: SessionLeases | undefined;
  close(): Promise<void>;
}

async function openSessionsStore(args: SessionsArgs, env: NodeJS.ProcessEnv, logger: Logger): Promise<SessionsStore> {
  if (args.storeUrl !== undefined) {
    const opened = await openStore({ url: args.storeUrl, logger });
    return { store: opened.sessions, leases: opened.leases, close: () => opened.close() };
  }
  const stateDir = args.stateDir ?? defaultStateDir(env);
  return { store: new JsonlSessionStore({ stateDir, logger }), leases: undefined, close: async () => {} };
}

export async function runSessions(argv: string[], io: CliIo = processIo()): Promise<number> {
  let args: SessionsArgs | "help";
  try {
    args = parseSessionsArgs(argv, io.env, io.cwd);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.stderr.write(`agentkit-acp sessions: ${error.message}\n\nRun \`agentkit-acp sessions --help\` for the options.\n`);
    return 2;
  }
  if (args === "help") {
    io.stdout.write(sessionsHelp);
    return 0;
  }
  const toStderr = (line: string): void => void io.stderr.write(line);
  const logger = createStderrLogger("warn", "agentkit-acp sessions", toStderr);
  let opened: SessionsStore | undefined;
  try {
    opened = await openSessionsStore(args, io.env, logger);
    return await runAction(args, opened, io, createStderrLogger("info", "agentkit-acp sessions", toStderr));
  } catch (error) {
    io.stderr.write(`agentkit-acp sessions: ${stripControls(errorMessage(error))}\n`);
    return 3;
  } finally {
    await opened?.close();
  }
}

async function runAction(args: SessionsArgs, { store, leases }: SessionsStore, io: CliIo, logger: Logger): Promise<number> {
  const out = (text: string): boolean => io.stdout.write(text);
  switch (args.action) {
    case "list": {
      const sessions = await listAll(store, args);
      out(args.json ? sessions.map((s) => `${JSON.stringify(s)}\n`).join("") : table(sessions));
      return 0;
    }
    case "show":
    case "export": {
      const reader = await openSessionReader(store, args.id!);
      if (!reader || (args.principal !== undefined && reader.created.owner !== args.principal)) {
        await reader?.close();
        io.stderr.write(`agentkit-acp sessions: no session ${JSON.stringify(args.id)}${args.principal !== undefined ? ` of principal ${args.principal}` : ""}\n`);
        return 1;
      }
      try {
        if (args.action === "export") await exportSession(reader, args.format, out);
        else await show(reader, args.json, out);
      } finally {
        await reader.close();
      }
      return 0;
    }
    case "prune": {
      const before = new Date(Date.now() - args.olderThanMs!).toISOString();
      // Deletions are logged on stderr as they happen; the summary goes to stdout.
      const report = await pruneSessions(store, {
        before,
        dryRun: args.dryRun,
        keepArchived: args.keepArchived,
        ...(args.principal !== undefined ? { owner: args.principal } : {}),
        ...(leases ? { leases } : {}),
        ...(args.limit !== undefined ? { limit: args.limit } : {}),
        logger,
      });
      if (args.json) {
        out(`${JSON.stringify({ before, dryRun: args.dryRun, ...report })}\n`);
        return 0;
      }
      const n = report.deleted.length;
      out(`${args.dryRun ? "would delete" : "deleted"} ${n} session${n === 1 ? "" : "s"} not updated since ${before}${n > 0 ? ":" : ""}\n`);
      if (n > 0) out(table(report.deleted));
      for (const { session, holder, expiresAt } of report.leased) out(`kept ${session.sessionId} (owner ${session.owner}): open on an instance (lease held by ${holder}${expiresAt ? ` until ${expiresAt}` : ""})\n`);
      for (const { session, error } of report.failed) out(`not deleted ${session.sessionId}: ${error}\n`);
      if (report.more) out(`stopped after ${args.limit ?? 1000} sessions (--limit): run again for the rest\n`);
      return 0;
    }
  }
}

async function listAll(store: SessionStore, args: SessionsArgs): Promise<SessionSummary[]> {
  const total = args.limit ?? 100;
  const sessions: SessionSummary[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.list({
      limit: Math.min(500, total - sessions.length),
      ...(cursor !== undefined ? { cursor } : {}),
      ...(args.archived !== undefined ? { archived: args.archived } : {}),
      ...(args.principal !== undefined ? { owner: args.principal } : {}),
    });
    sessions.push(...page.sessions);
    cursor = page.nextCursor;
  } while (cursor !== undefined && sessions.length < total);
  return sessions;
}

/** One line of untrusted text for a terminal: control sequences removed, whitespace runs folded. */
function cell(text: string): string {
  return stripControls(text).replace(/\s+/g, " ");
}

/** Aligned columns; titles and paths cleaned of terminal control characters. */
function table(sessions: SessionSummary[]): string {
  if (sessions.length === 0) return "no sessions\n";
  const rows = [["ID", "OWNER", "UPDATED", "ARCHIVED", "TITLE", "CWD"], ...sessions.map((s) => [s.sessionId, s.owner, s.updatedAt, s.archived ? "yes" : "", s.title ?? "", s.cwd].map(cell))];
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows.map((r) => r.map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]!))).join("  ").trimEnd()).join("\n") + "\n";
}

async function show(reader: Awaited<ReturnType<typeof openSessionReader>> & object, json: boolean, out: (text: string) => void): Promise<void> {
  const byRole: Record<string, number> = {};
  let count = 0;
  for await (const { item } of reader.items()) {
    count += 1;
    byRole[item.role] = (byRole[item.role] ?? 0) + 1;
  }
  const { header, warnings } = reader.result();
  if (json) {
    out(`${JSON.stringify({ header, items: count, byRole, warnings })}\n`);
    return;
  }
  const line = (name: string, value: string | undefined): void => {
    if (value !== undefined) out(`${`${name}:`.padEnd(14)}${cell(value)}\n`);
  };
  line("session", header.sessionId);
  line("owner", header.owner);
  line("title", header.title);
  line("cwd", header.cwd);
  if (header.additionalDirectories.length > 0) line("directories", header.additionalDirectories.join(", "));
  line("created", header.createdAt);
  line("updated", header.updatedAt);
  if (header.archived) line("archived", "yes");
  line("forked from", header.forkedFrom);
  line("items", `${count}${count > 0 ? ` (${Object.entries(byRole).map(([role, n]) => `${role} ${n}`).join(", ")})` : ""}`);
  for (const warning of warnings) line("warning", warning);
}
