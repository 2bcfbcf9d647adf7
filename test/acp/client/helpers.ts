import { expect } from "vitest";
import { afterEachTest } from "../../support/after-each.js";
import type { AcpSession} from "../../../src/acp/client/index.js";
import { AcpClient, ClientPermissionPolicy, type AcpAgentConfig } from "../../../src/acp/client/index.js";
import { livePidsInGroup } from "../../../src/core/process/group.js";
import { pidAlive } from "../../support/processes.js";
import { agentFixture } from "../../support/fixture-agents.js";
export { pidAlive };

export const fixture = agentFixture("fixture-agent.mjs");
export const repoRoot = new URL("../../..", import.meta.url).pathname;

/** Agent process groups started by the current test; each must be empty afterwards. */
const groups = new Set<number>();
const closers: (() => Promise<void>)[] = [];

export { tempDir } from "../../support/temp.js";

export function fixtureConfig(flags: string[] = [], extra: Partial<AcpAgentConfig> = {}): AcpAgentConfig {
  return { command: process.execPath, args: [fixture, ...flags], cwd: repoRoot.replace(/\/$/, ""), stderr: "ignore", ...extra };
}

export function trackPid(pid: number | undefined): void {
  if (pid !== undefined) groups.add(pid);
}

/** Starts an agent; after the test it is closed and its process group must be empty. */
export async function startAgent(config: AcpAgentConfig, policy?: ClientPermissionPolicy): Promise<AcpClient> {
  const client = await AcpClient.start(config, policy);
  trackPid(client.pid);
  closers.push(() => client.close());
  return client;
}

export function startClient(flags: string[] = [], policy?: ClientPermissionPolicy, extra: Partial<AcpAgentConfig> = {}): Promise<AcpClient> {
  return startAgent(fixtureConfig(flags, extra), policy);
}

/** Signing out refuses the session's prompts (-32000) until `authenticate(methodId)`; the client hears both auth/status_updates. */
export async function expectSignOutAndIn(client: AcpClient, session: AcpSession, methodId: string): Promise<void> {
  const states: string[] = [];
  let seen: () => void = () => undefined;
  client.onAuthStatus((s) => {
    states.push(s.state);
    seen();
  });
  const twoUpdates = new Promise<void>((resolve) => (seen = () => states.length === 2 && resolve()));
  await client.logout();
  await expect(session.prompt("x")).rejects.toMatchObject({ code: -32000 });
  await client.authenticate(methodId);
  await twoUpdates;
  expect(states).toEqual(["unauthenticated", "authenticated"]);
}

export async function startSession(flags: string[] = [], policy?: ClientPermissionPolicy, extra: Partial<AcpAgentConfig> = {}): Promise<AcpSession> {
  const client = await startClient(flags, policy, extra);
  const session = await client.newSession();
  // As AcpClient.startSession does: closing the session ends the agent.
  session.onClose = () => client.close();
  return session;
}

/** Polls (on a busy machine) until the group has no live member, up to `ms`. */
export async function expectGroupGone(pgid: number, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (livePidsInGroup(pgid).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
  expect(livePidsInGroup(pgid), `processes left in group ${pgid}`).toEqual([]);
}

afterEachTest(async () => {
  for (const close of closers.splice(0)) await close().catch(() => undefined);
  for (const pgid of [...groups]) await expectGroupGone(pgid);
  groups.clear();
});

export const allowAll = (): ClientPermissionPolicy => ClientPermissionPolicy.allowAll();
