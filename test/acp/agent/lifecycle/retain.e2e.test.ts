import * as acp from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../../../src/core/index.js";
import type { SessionStore } from "../../../../src/store/index.js";
import { FileAuditLog, JsonlSessionStore } from "../../../../src/store/index.js";
import { openPostgresStore } from "../../../../src/store/postgres/index.js";
import { createTestDatabase, postgresOrSkip } from "../../../support/postgres.js";
import { until } from "../../../support/until.js";
import { cleanEnv } from "../serve-support.js";
import { cleanUp, onCleanup, startServe, workspace } from "./support.js";

// serve --retain in a running serve: the first sweep at start-up, then every
// AGENTKIT_RETAIN_INTERVAL_MS (short here, so the test waits on the log lines, never on time).

afterEach(cleanUp);
const pg = await postgresOrSkip("serve --retain on PostgreSQL");

/** Sessions last written in 2024 (loaded in the same cwd, a session is not written to: it stays old). */
async function oldSessions(store: SessionStore, ids: string[], cwd: string): Promise<void> {
  for (const id of ids) await store.create({ sessionId: id, cwd, createdAt: "2024-01-01T00:00:00.000Z" });
}

const deleted = (stderr: string, id: string): boolean => stderr.includes(`retention: session deleted {"sessionId":"${id}"`);
const env = cleanEnv({ AGENTKIT_RETAIN_INTERVAL_MS: "150" });

describe("serve --retain", () => {
  it("files: the start-up sweep deletes what is older than the age, later sweeps what grew old since; newer sessions stay", { timeout: 60_000 }, async () => {
    const { ws, state } = workspace();
    const files = new JsonlSessionStore({ stateDir: state, logger: silentLogger });
    await oldSessions(files, ["old-1", "old-2"], ws);
    await files.create({ sessionId: "fresh", cwd: ws });
    const s = await startServe(["--model", "demo", "--state-dir", state, "--retain", "30d"], ws, { env });
    expect(s.proc.stderr).toMatch(/sessions not updated for 30 days are deleted \(--retain\)/);
    await until(() => deleted(s.proc.stderr, "old-1") && deleted(s.proc.stderr, "old-2"), 20_000);
    // Another process writes an old session into the same state directory: the next sweep finds it.
    await oldSessions(files, ["old-3"], ws);
    await until(() => deleted(s.proc.stderr, "old-3"), 20_000);
    const listed = await s.agent.request(acp.methods.agent.session.list, {});
    expect(listed.sessions.map((x) => x.sessionId)).toEqual(["fresh"]);
    expect(await files.exists("old-3")).toBe(false);
    const audited = (await new FileAuditLog(state).query()).filter((r) => r.action === "retention/delete");
    expect(audited.map((r) => r.sessionId).sort()).toEqual(["old-1", "old-2", "old-3"]);
    expect(audited[0]).toMatchObject({ principal: "default", detail: { by: "serve --retain" } });
  });

  it.runIf(pg.url)("PostgreSQL: a session open on another instance is kept (and said so) until it is closed there, then deleted by a later sweep", { timeout: 90_000 }, async () => {
    const db = await createTestDatabase(pg.url!);
    onCleanup(() => db.drop());
    const { ws } = workspace();
    const seeded = await openPostgresStore({ url: db.url, logger: silentLogger });
    await oldSessions(seeded.sessions, ["old-open", "old-idle"], ws);
    await seeded.close();
    // Instance A (no retention) opens the old session: it holds its lease from now on.
    const a = await startServe(["--model", "demo", "--store", db.url], ws);
    await a.agent.request(acp.methods.agent.session.load, { sessionId: "old-open", cwd: ws, mcpServers: [] });
    const b = await startServe(["--model", "demo", "--store", db.url, "--retain", "7"], ws, { env });
    // The first run ends having deleted one and kept one.
    await until(() => b.proc.stderr.includes("retention: run done"), 20_000);
    expect(deleted(b.proc.stderr, "old-idle")).toBe(true);
    expect(b.proc.stderr).toMatch(/retention: session kept, it is open on an instance \(leased\) \{"sessionId":"old-open"/);
    expect(deleted(b.proc.stderr, "old-open")).toBe(false);
    await a.agent.request(acp.methods.agent.session.close, { sessionId: "old-open" });
    await until(() => deleted(b.proc.stderr, "old-open"), 20_000);
    expect((await b.agent.request(acp.methods.agent.session.list, {})).sessions).toEqual([]);
  });

  it("a bad age or interval exits 2 saying what to fix", async () => {
    const { ws } = workspace();
    for (const [args, extra, message] of [
      [["--retain", "forever"], {}, /--retain takes an age such as 30d, 12h or 90m/],
      [["--retain", "30"], { AGENTKIT_RETAIN_INTERVAL_MS: "often" }, /AGENTKIT_RETAIN_INTERVAL_MS must be a positive number of milliseconds/],
    ] as const) {
      const { runCli } = await import("../../../support/cli.js");
      const r = await runCli(["serve", ...args], { cwd: ws, env: cleanEnv(extra) });
      expect([r.code, r.stdout]).toEqual([2, ""]);
      expect(r.stderr).toMatch(message);
    }
  });
});
