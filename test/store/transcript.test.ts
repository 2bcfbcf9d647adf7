import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { Item, ToolResult } from "../../src/core/index.js";
import { newId, silentLogger } from "../../src/core/index.js";
import type { LoopDriver } from "../../src/loop/index.js";
import { Agent } from "../../src/loop/index.js";
import type { SessionStore } from "../../src/store/index.js";
import { InMemorySessionStore, JsonlSessionStore, SessionStoreError, snapshotFromSession, storeTranscriptObserver } from "../../src/store/index.js";
import type { PermissionPolicy } from "../../src/tools/index.js";
import { ToolRegistry, defineTool } from "../../src/tools/index.js";
import { ScriptedModel, script } from "../../src/testing/index.js";

const user = (text: string): Item => ({ id: newId("item"), role: "user", parts: [{ type: "text", text }], createdAt: new Date().toISOString() });
const allowAll: PermissionPolicy = { evaluate: () => ({ verdict: "allow", reason: "test" }) };

async function driveToEnd(driver: LoopDriver): Promise<string> {
  for (;;) {
    const step = await driver.next();
    if (step.type === "finished") return step.result.finishReason;
    if (step.interrupt.type !== "after_tool_result") throw new Error(`unexpected interrupt ${step.interrupt.type}`);
  }
}

describe("storeTranscriptObserver + snapshotFromSession", () => {
  let stateDir: string;
  beforeEach(async () => {
    stateDir = await mkdtemp(join(tmpdir(), "agentkit-transcript-"));
  });
  afterEach(() => rm(stateDir, { recursive: true, force: true }));

  it("persists each committed item before the turn goes on, and a restarted agent continues the transcript", async () => {
    const cwd = "/tmp/project";
    const store = new JsonlSessionStore({ stateDir, logger: silentLogger });
    await store.create({ sessionId: "acp-1", cwd });
    // The tool looks at the disk (through a separate store instance) while it runs.
    const seenOnDisk: string[][] = [];
    const probe = defineTool({
      name: "probe",
      description: "reports what the session file holds",
      kind: "read",
      input: z.object({}),
      execute: async (): Promise<ToolResult> => {
        const onDisk = await new JsonlSessionStore({ stateDir, logger: silentLogger }).load("acp-1");
        seenOnDisk.push(onDisk!.items.map((i) => i.role));
        return { text: `items: ${onDisk!.items.length}`, isError: false };
      },
    });
    const model = new ScriptedModel([script.toolCall("probe", {}, { callId: "c1", text: "checking" }), script.text("all good")]);
    const driver = Agent.builder()
      .model(model)
      .tools(new ToolRegistry([probe]))
      .permissions(allowAll)
      .transcriptObserver(storeTranscriptObserver(store, { sessionId: "acp-1" }))
      .build()
      .start({ cwd, sessionId: "loop-1" });
    driver.submitInput([user("first prompt")]);
    expect(await driveToEnd(driver)).toBe("completed");
    // The user item and the assistant's tool call were durable before the tool ran.
    expect(seenOnDisk).toEqual([["user", "assistant"]]);

    const stored = (await new JsonlSessionStore({ stateDir, logger: silentLogger }).load("acp-1"))!;
    expect(stored.items).toEqual(driver.transcript);
    expect(stored.items.map((i) => i.role)).toEqual(["user", "assistant", "tool", "assistant"]);

    // "Restart": a new store and agent resume from the file; the model sees the earlier turns.
    const reopened = new JsonlSessionStore({ stateDir, logger: silentLogger });
    await reopened.updateHeader("acp-1", { metadata: { modeId: "read-only" } });
    const loaded = (await reopened.load("acp-1"))!;
    const snapshot = snapshotFromSession(loaded, { sessionId: "loop-2" });
    expect(snapshot).toEqual({ version: 1, sessionId: "loop-2", items: stored.items, metadata: { modeId: "read-only" } });
    const model2 = new ScriptedModel([script.text("second answer")]);
    const resumed = Agent.builder()
      .model(model2)
      .permissions(allowAll)
      .transcriptObserver(storeTranscriptObserver(reopened, { sessionId: () => "acp-1" }))
      .build()
      .start({ cwd, snapshot });
    expect(resumed.sessionId).toBe("loop-2");
    resumed.submitInput([user("second prompt")]);
    expect(await driveToEnd(resumed)).toBe("completed");
    expect(model2.requests[0]!.items.slice(0, stored.items.length)).toEqual(stored.items);
    const final = (await reopened.load("acp-1"))!;
    expect(final.items.map((i) => i.role)).toEqual(["user", "assistant", "tool", "assistant", "user", "assistant"]);
    expect(final.items).toEqual(resumed.transcript);
  });

  it("defaults to the loop session id, and a missing store session fails the turn instead of dropping items", async () => {
    const store: SessionStore = new InMemorySessionStore();
    await store.create({ sessionId: "same", cwd: "/w" });
    const ok = Agent.builder()
      .model(new ScriptedModel([script.text("hi")]))
      .permissions(allowAll)
      .transcriptObserver(storeTranscriptObserver(store))
      .build()
      .start({ cwd: "/w", sessionId: "same" });
    ok.submitInput([user("hello")]);
    expect(await driveToEnd(ok)).toBe("completed");
    expect((await store.load("same"))!.items).toEqual(ok.transcript);

    const orphan = Agent.builder()
      .model(new ScriptedModel([script.text("never")]))
      .permissions(allowAll)
      .transcriptObserver(storeTranscriptObserver(store))
      .logger(silentLogger)
      .build()
      .start({ cwd: "/w", sessionId: "not-created" });
    orphan.submitInput([user("hello")]);
    const error = await orphan.next().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SessionStoreError);
    expect((error as SessionStoreError).code).toBe("session_not_found");
  });
});
