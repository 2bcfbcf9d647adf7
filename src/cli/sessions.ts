import { resolve } from "node:path";
import type { Logger } from "../core/index.js";
import { createStderrLogger, errorMessage } from "../core/index.js";
import type { AuditLog, SessionLeases, SessionStore, SessionSummary } from "../store/index.js";
import { DEFAULT_PRUNE_BATCH, FileAuditLog, JsonlSessionStore, retentionAudit, defaultStateDir, openSessionReader, openStore, pruneSessions } from "../store/index.js";
import { processIo, type CliIo } from "./io.js";
import { exportSession, type ExportFormat } from "./sessions-export.js";
import { parseAge, storeUrlFrom } from "./store-option.js";
import { stripControls } from "./terminal-safe.js";
import { UsageError } from "./usage.js";
import { parseCommandLine, read, renderHelp, switchOption, textOption, withDefault, type CommandSchema, type Env, type OptionValues } from "./options.js";

// `agentkit-acp sessions`: the options declared once (options.ts); which subcommand takes which is checked below.
/** `sessions list` shows at most this many unless `--limit` says otherwise. */
const LIST_LIMIT = 100;

const options = {
  stateDir: textOption("state-dir", "DIR", `the state directory (default: AGENTKIT_STATE_DIR, else
$XDG_STATE_HOME/agentkit-acp, else ~/.local/state/agentkit-acp)`, { parse: read.nonBlank("a directory") }),
  store: textOption("store", "URL", `a shared store, e.g. postgres://USER:PASSWORD@HOST:5432/DATABASE`, {
    env: { name: "AGENTKIT_STORE_URL", help: "the store when --store and --state-dir are not given", fallback: false },
  }),
  principal: textOption("principal", "NAME", `only this principal's sessions`, { parse: read.nonBlank("a name") }),
  archived: textOption("archived", "include|only", `list: archived sessions too, or only them`, { parse: read.oneOf(["include", "only"] as const, "include or only") }),
  limit: textOption("limit", "N", `list: at most N sessions (default ${LIST_LIMIT}); prune: at most N examined
in this run (default ${DEFAULT_PRUNE_BATCH}; run again for the rest)`, { parse: read.whole(1) }),
  format: withDefault(textOption<ExportFormat>("format", "jsonl|markdown", `export: the session file format (default) or a readable transcript`, { parse: read.oneOf(["jsonl", "markdown"] as const, "jsonl or markdown") }), "jsonl"),
  olderThanMs: textOption("older-than", "AGE", `prune: sessions not updated for AGE (30d, 12h, 90m; a bare number is days)`, { parse: parseAge }),
  dryRun: switchOption("dry-run", `prune: list what would be deleted; delete nothing`),
  keepArchived: switchOption("keep-archived", `prune: keep archived sessions whatever their age`),
  json: switchOption("json", `list, show, prune: JSON (list: one session per line)`),
  help: switchOption("help", `show this help`, { short: "h" }),
};

const sessionsSchema: CommandSchema<typeof options> = {
  command: "sessions",
  intro: `Usage: agentkit-acp sessions <list|show|export|prune> [options]

The stored sessions of every principal, for the operator (not over ACP: no ownership applies;
the owner is shown and --principal filters). Works on the store serve uses: files under the
state directory (default) or a shared store (--store / AGENTKIT_STORE_URL).

  sessions list [--archived include|only] [--limit N] [--json]
      newest first
  sessions show ID [--json]
      the header (owner, cwd, times, title, archived, fork) and the transcript's size by role
  sessions export ID [--format jsonl|markdown]
      the session on stdout, read item by item: jsonl is the session file format (copy it to
      another state directory's sessions/ID.jsonl to move it), markdown a readable transcript
  sessions prune --older-than AGE [--dry-run] [--keep-archived] [--limit N] [--json]
      deletes the sessions not updated for AGE; archived ones age like the others unless
      --keep-archived. A session open on an instance (its lease is held) is kept and
      reported: on PostgreSQL that covers every instance; file-store leases live inside the
      serve process that holds them (its own --retain skips them), so this command cannot see
      them. Each deletion is listed and logged on stderr.

`,
  options,
  sections: { main: "Options:" },
  column: 27,
  outro: `Exit codes: 0 done   1 no such session (show, export)   2 usage error   3 the store failed
`,
  positionals: "words",
};

export const sessionsHelp = renderHelp(sessionsSchema);

type Values = OptionValues<typeof options>;

interface SessionsArgs extends Omit<Values, "store" | "help"> {
  action: (typeof ACTIONS)[number];
  id: string | undefined;
  storeUrl: string | undefined;
}

const ACTIONS = ["list", "show", "export", "prune"] as const;

/** Which subcommands take an option (the others refuse it). */
const TAKEN_BY: Partial<Record<keyof Values, readonly string[]>> = {
  archived: ["list"],
  format: ["export"],
  olderThanMs: ["prune"],
  dryRun: ["prune"],
  keepArchived: ["prune"],
  limit: ["list", "prune"],
  json: ["list", "show", "prune"],
};

export function parseSessionsArgs(argv: string[], env: Env, cwd: string): SessionsArgs | "help" {
  const { values, given, words } = parseCommandLine(sessionsSchema, argv, env);
  if (values.help) return "help";
  const [action, id, ...extra] = words;
  if (action === undefined || !(ACTIONS as readonly string[]).includes(action)) throw new UsageError(`sessions needs one of ${ACTIONS.join(", ")}${action === undefined ? "" : ` (got "${action}")`}`);
  const needsId = action === "show" || action === "export";
  if (needsId && id === undefined) throw new UsageError(`sessions ${action} needs a session id`);
  if ((!needsId && id !== undefined) || extra.length > 0) throw new UsageError(`unexpected argument "${needsId ? extra[0] : id}"`);
  for (const [key, actions] of Object.entries(TAKEN_BY) as Array<[keyof Values, readonly string[]]>) {
    if (given.has(key) && !actions.includes(action)) throw new UsageError(`--${options[key].flag} only applies to sessions ${actions.join(" / ")}`);
  }
  if (action === "prune" && values.olderThanMs === undefined) throw new UsageError("sessions prune needs --older-than AGE (e.g. 30d): nothing is deleted without an age");
  const { store, help: _help, ...rest } = values;
  return {
    ...rest,
    action: action as SessionsArgs["action"],
    id,
    stateDir: values.stateDir === undefined ? undefined : resolve(cwd, values.stateDir),
    storeUrl: storeUrlFrom({ store, storeGiven: given.has("store"), stateDirGiven: given.has("stateDir") }, env),
  };
}

interface SessionsStore {
  store: SessionStore;
  leases: SessionLeases | undefined;
  audit: AuditLog;
  close(): Promise<void>;
}

async function openSessionsStore(args: SessionsArgs, env: NodeJS.ProcessEnv, logger: Logger): Promise<SessionsStore> {
  if (args.storeUrl !== undefined) {
    const opened = await openStore({ url: args.storeUrl, logger });
    return { store: opened.sessions, leases: opened.leases, audit: opened.audit, close: () => opened.close() };
  }
  const stateDir = args.stateDir ?? defaultStateDir(env);
  return { store: new JsonlSessionStore({ stateDir, logger }), leases: undefined, audit: new FileAuditLog(stateDir), close: async () => {} };
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

async function runAction(args: SessionsArgs, { store, leases, audit }: SessionsStore, io: CliIo, logger: Logger): Promise<number> {
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
        // Recorded in the audit trail like serve's own deletions (`agentkit-acp audit`).
        onDeleted: (session) => audit.append([retentionAudit(session, leases?.holder ?? `sessions-prune:${process.pid}`, "agentkit-acp sessions prune")]),
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
      if (report.more) out(`stopped after ${args.limit ?? DEFAULT_PRUNE_BATCH} sessions (--limit): run again for the rest\n`);
      return 0;
    }
  }
}

async function listAll(store: SessionStore, args: SessionsArgs): Promise<SessionSummary[]> {
  const total = args.limit ?? LIST_LIMIT;
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
