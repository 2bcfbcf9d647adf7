import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import type { AcpApprovalDecision, AcpApprovalResolver } from "../../../src/acp/agent/index.js";
import { ClientPermissionResolver, InMemoryApprovalMemory, defaultApprovalKeyer } from "../../../src/acp/agent/index.js";
import type { ApprovalRequest } from "../../../src/core/index.js";
import { script } from "../../../src/testing/index.js";
import { initialize, startInMemory } from "./fixtures.js";
import { select, tempDir } from "./support.js";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const write = (path: string, content: string, callId: string) => script.toolCall("write_file", { path, content }, { callId });

async function session(env: ReturnType<typeof startInMemory>, cwd: string) {
  const { sessionId } = await env.agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
  const prompt = (text: string) => env.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
  return { sessionId, prompt };
}

function setup(scripts: Parameters<typeof startInMemory>[0]["scripts"], resolver?: AcpApprovalResolver) {
  const memory = new InMemoryApprovalMemory();
  const env = startInMemory({ scripts, memory, ...(resolver ? { resolver } : {}) });
  const dir = tempDir();
  cleanups.push(() => dir.remove(), () => env.close());
  return { env, memory, dir: dir.path };
}

describe("approval memory", () => {
  it("remembered allow: 'Always allow' is not asked again for the same target, even with other content and call ids", async () => {
    const { env, memory, dir } = setup([[write("a.txt", "1", "c1"), script.text("ok"), write("a.txt", "2", "c2"), script.text("ok again")]]);
    env.client.answer = () => select("allow_always");
    await initialize(env.agent);
    const s = await session(env, dir);
    expect((await s.prompt("first")).stopReason).toBe("end_turn");
    expect(env.client.permissionRequests).toHaveLength(1);
    expect(memory.size).toBe(1);
    expect((await s.prompt("second")).stopReason).toBe("end_turn");
    expect(env.client.permissionRequests).toHaveLength(1); // answered from memory
    expect(readFileSync(join(dir, "a.txt"), "utf8")).toBe("2");
  });

  it("remembered deny: 'Always reject' denies later calls without asking; the model is told", async () => {
    const { env, dir } = setup([[write("b.txt", "1", "c1"), script.text("ok"), write("b.txt", "2", "c2"), script.text("ok again")]]);
    env.client.answer = () => select("reject_always");
    await initialize(env.agent);
    const s = await session(env, dir);
    await s.prompt("first");
    await s.prompt("second");
    expect(env.client.permissionRequests).toHaveLength(1);
    expect(existsSync(join(dir, "b.txt"))).toBe(false);
    const lastRequest = env.models[0]!.requests.at(-1)!;
    const result = lastRequest.items.flatMap((i) => i.parts).filter((p) => p.type === "tool_result").at(-1);
    expect(result?.type === "tool_result" && result.result.text).toMatch(/always reject/);
  });

  it("a different target still asks; 'once' answers are not remembered", async () => {
    const { env, memory, dir } = setup([[write("c.txt", "1", "c1"), script.text("ok"), write("d.txt", "1", "c2"), script.text("ok"), write("d.txt", "2", "c3"), script.text("ok")]]);
    const answers = ["allow_always", "allow_once", "allow_once"];
    env.client.answer = () => select(answers.shift()!);
    await initialize(env.agent);
    const s = await session(env, dir);
    await s.prompt("c");
    await s.prompt("d");
    await s.prompt("d again");
    expect(env.client.permissionRequests.map((r) => r.toolCall.toolCallId)).toEqual(["c1", "c2", "c3"]);
    expect(memory.size).toBe(1);
  });

  it("patched input is applied and never remembered", async () => {
    let asked = 0;
    const patcher: AcpApprovalResolver = {
      async resolve(context): Promise<AcpApprovalDecision> {
        asked += 1;
        return { type: "patch_and_allow", input: { ...(context.request.input as object), content: "patched" } };
      },
    };
    const { env, memory, dir } = setup([[write("p.txt", "original", "c1"), script.text("ok"), write("p.txt", "original", "c2"), script.text("ok")]], patcher);
    await initialize(env.agent);
    const s = await session(env, dir);
    await s.prompt("one");
    expect(readFileSync(join(dir, "p.txt"), "utf8")).toBe("patched");
    // The editor is shown the input that actually ran.
    expect(env.client.updates(s.sessionId).find((u) => u.sessionUpdate === "tool_call_update" && u.rawInput !== undefined)).toMatchObject({
      toolCallId: "c1",
      rawInput: { path: "p.txt", content: "patched" },
    });
    await s.prompt("two");
    expect(asked).toBe(2);
    expect(memory.size).toBe(0);
  });

  it("the default key holds kind, tool, root and normalized target — not call ids or model text", () => {
    const base: ApprovalRequest = {
      sessionId: "s1",
      callId: "call_1",
      toolName: "shell",
      title: "Run ls",
      kind: "execute",
      input: { command: "ls   -la" },
      locations: [],
      target: { paths: [], command: "ls   -la" },
      roots: ["/ws/app"],
      reason: "commands need approval",
    };
    const key = defaultApprovalKeyer.key(base);
    expect(defaultApprovalKeyer.key({ ...base, callId: "call_2", sessionId: "s2", title: "other words", reason: "x", target: { paths: [], command: "ls -la" } })).toBe(key);
    expect(defaultApprovalKeyer.key({ ...base, target: { paths: [], command: "rm -rf /" } })).not.toBe(key);
    expect(defaultApprovalKeyer.key({ ...base, roots: ["/ws/other"] })).not.toBe(key);
    expect(defaultApprovalKeyer.key({ ...base, toolName: "shell2" })).not.toBe(key);
    expect(key).not.toContain("call_1");
  });

  it("ClientPermissionResolver without 'always' options offers only once-options", async () => {
    const { env, dir } = setup([[write("o.txt", "1", "c1"), script.text("ok")]], new ClientPermissionResolver({ offerAlways: false }));
    await initialize(env.agent);
    const s = await session(env, dir);
    await s.prompt("go");
    expect(env.client.permissionRequests[0]!.options.map((o) => o.kind)).toEqual(["allow_once", "reject_once"]);
  });
});
