import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { ReplayStream } from "../../../../src/acp/agent/replay.js";
import { INTERRUPTED_TOOL_TEXT, repairDanglingToolCalls, replayUpdates } from "../../../../src/acp/agent/index.js";
import type { Item } from "../../../../src/core/index.js";
import { silentLogger } from "../../../../src/core/index.js";
import type { SessionReader, SessionStore, StoredItem } from "../../../../src/store/index.js";
import { JsonlSessionStore } from "../../../../src/store/index.js";
import { newHeader } from "../../../../src/store/header.js";
import { headerLine, itemLine } from "../../../../src/store/records.js";
import { initialize, startInMemory } from "../fixtures.js";
import { tempDir } from "../support.js";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const at = "2026-01-01T00:00:00.000Z";
const text = (n: number): string => `message ${n}: ${"lorem ipsum ".repeat(8)}`;

/** A long conversation: text turns, every 10th a tool call answered in the next item, calls left dangling at `danglingAt` and at the end. */
function conversation(count: number, danglingAt = -1): Item[] {
  const items: Item[] = [];
  for (let n = 0; items.length < count; n++) {
    if (n % 10 === 9 || n === danglingAt) {
      const callId = `call_${n % 3}`; // local models reuse ids
      const dangling = n === danglingAt;
      items.push({ id: `a${n}`, role: "assistant", parts: [{ type: "tool_call", callId, toolName: "read_file", input: { path: `f${n}` } }], createdAt: at });
      if (!dangling) {
        items.push({ id: `t${n}`, role: "tool", parts: [{ type: "tool_result", callId, toolName: "read_file", result: { text: text(n), isError: false } }], createdAt: at, meta: { calls: [{ callId, title: `Read f${n}`, kind: "read", locations: [] }] } });
      }
      continue;
    }
    items.push({ id: `i${n}`, role: n % 2 === 0 ? "user" : "assistant", parts: [{ type: "text", text: text(n) }], createdAt: at });
  }
  items.push({ id: "last", role: "assistant", parts: [{ type: "tool_call", callId: "call_end", toolName: "read_file", input: { path: "end" } }], createdAt: at });
  return items;
}

/** An update without its random message id, for comparing replays. */
const stable = (u: SessionUpdate): unknown => ({ ...u, messageId: undefined });

describe("session/load of a long session streams the replay", () => {
  const describe = (toolName: string, input: unknown) => ({ title: `${toolName} ${(input as { path: string }).path}`, kind: "read" as const, locations: [] });

  /** The streamed replay, and the longest run of items that released nothing. */
  function streamed(items: Item[]): { updates: SessionUpdate[]; maxHeld: number } {
    const stream = new ReplayStream();
    const updates: SessionUpdate[] = [];
    let maxHeld = 0;
    let held = 0;
    for (const item of items) {
      const ready = stream.push(item);
      held = ready.length > 0 ? 0 : held + 1;
      maxHeld = Math.max(maxHeld, held);
      updates.push(...ready);
    }
    updates.push(...stream.finish(describe));
    return { updates, maxHeld };
  }

  it("ReplayStream gives exactly the whole-transcript replay, holding back only from a call to its answer (one item)", () => {
    const items = conversation(3000);
    const { updates, maxHeld } = streamed(items);
    expect(updates.map(stable)).toEqual(replayUpdates(repairDanglingToolCalls(items), describe).map(stable));
    expect(maxHeld).toBeLessThanOrEqual(1);
    expect(updates.at(-1)).toMatchObject({ sessionUpdate: "tool_call", toolCallId: "call_end", title: "read_file end", status: "failed" });
    expect(JSON.stringify(updates.at(-1))).toContain(INTERRUPTED_TOOL_TEXT);
  });

  it("a call left dangling mid-transcript (its id reused later) is repaired in its place, as by the whole-transcript replay", () => {
    const items = conversation(1000, 500);
    const { updates } = streamed(items);
    expect(updates.map(stable)).toEqual(replayUpdates(repairDanglingToolCalls(items), describe).map(stable));
    expect(updates.filter((u) => u.sessionUpdate === "tool_call" && u.status === "failed")).toHaveLength(2);
  });

  it("10,000 items: the first update reaches the client before the transcript is read to its end; the replay is whole and in order", async () => {
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    const stateDir = join(dir.path, "state");
    mkdirSync(join(stateDir, "sessions"), { recursive: true });
    const items = conversation(10_000);
    const header = newHeader({ sessionId: "long", cwd: dir.path }, new Date(at));
    writeFileSync(join(stateDir, "sessions", "long.jsonl"), headerLine(header) + items.map((i) => itemLine(i, at)).join(""), { mode: 0o600 });
    const files = new JsonlSessionStore({ stateDir, logger: silentLogger });
    // The store as the runtime sees it, counting the items its reader has given out.
    let read = 0;
    const counted: SessionStore = Object.assign(Object.create(files) as SessionStore, {
      read: async (id: string): Promise<SessionReader | undefined> => {
        const reader = await files.read(id);
        if (!reader) return undefined;
        const items = reader.items.bind(reader);
        return Object.assign(reader, {
          items: async function* (): AsyncIterable<StoredItem> {
            for await (const i of items()) {
              read += 1;
              yield i;
            }
          },
        });
      },
    });
    const env = startInMemory({ scripts: [], store: counted });
    cleanups.push(() => env.close());
    await initialize(env.agent);
    let readAtFirstUpdate = -1;
    const first = env.client.waitFor(() => env.client.notifications.length > 0, "the first replayed update").then(() => (readAtFirstUpdate = read));
    const started = performance.now();
    const loading = env.agent.request(acp.methods.agent.session.load, { sessionId: "long", cwd: dir.path, mcpServers: [] });
    await first;
    const firstMs = performance.now() - started;
    await loading;
    expect(read).toBe(items.length);
    expect(readAtFirstUpdate).toBeGreaterThan(0);
    expect(readAtFirstUpdate).toBeLessThan(items.length / 2);
    const replayed = env.client.updates("long").filter((u) => u.sessionUpdate !== "available_commands_update" && u.sessionUpdate !== "session_info_update");
    const expected = replayUpdates(repairDanglingToolCalls(items));
    expect(replayed.map((u) => [u.sessionUpdate, "toolCallId" in u ? u.toolCallId : undefined])).toEqual(expected.map((u) => [u.sessionUpdate, "toolCallId" in u ? u.toolCallId : undefined]));
    // Loose on a shared machine; bench/store-scale.ts measures it (target 200 ms).
    expect(firstMs).toBeLessThan(5_000);
  });
});
