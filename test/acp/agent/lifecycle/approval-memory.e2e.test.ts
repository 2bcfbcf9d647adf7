import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import type { AcpApprovalResolver } from "../../../../src/acp/agent/index.js";
import { DurableApprovalMemory } from "../../../../src/acp/agent/index.js";
import type { ApprovalRequest } from "../../../../src/core/index.js";
import { FileApprovalMemoryStore, InMemoryApprovalMemoryStore } from "../../../../src/store/index.js";
import { script } from "../../../../src/testing/index.js";
import { initialize, startInMemory } from "../fixtures.js";
import { tempDir } from "../support.js";
import { cleanUp, onCleanup, select, startServe, textOf, workspace, writeScriptFile } from "./support.js";

afterEach(cleanUp);

const steps = (calls: Array<[string, string, unknown]>) => [
  ...calls.map(([callId, name, input]) => ({ toolCall: { name, input, callId } })),
  { echo: "last_tool_result" as const },
];

describe("durable approval memory through serve (FileApprovalMemoryStore under --state-dir)", () => {
  it("always allow / always reject survive a restart; a different target still asks; --clear-approval-memory forgets", async () => {
    const { root, ws, state } = workspace();
    const first = writeScriptFile(root, "first.json", {
      steps: steps([
        ["call_a1", "write_file", { path: "a.txt", content: "one\n" }],
        ["call_r1", "shell", { command: "touch rejected.txt" }],
      ]),
    });
    const a = await startServe(["--model", `scripted:${first}`, "--state-dir", state], ws);
    a.client.answer = (request) => select(request.toolCall.toolCallId === "call_a1" ? "allow_always" : "reject_always");
    const one = await a.agent.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
    await a.agent.request(acp.methods.agent.session.prompt, { sessionId: one.sessionId, prompt: [{ type: "text", text: "go" }] });
    expect(a.client.permissionRequests.map((r) => [r.toolCall.toolCallId, r.options.map((o) => o.kind)])).toEqual([
      ["call_a1", ["allow_once", "allow_always", "reject_once", "reject_always"]],
      ["call_r1", ["allow_once", "allow_always", "reject_once", "reject_always"]],
    ]);
    expect(readFileSync(join(ws, "a.txt"), "utf8")).toBe("one\n");
    expect(existsSync(join(ws, "rejected.txt"))).toBe(false);
    expect((await a.end()).code).toBe(0);
    expect(readdirSync(join(state, "approvals")).filter((n) => n.endsWith(".json"))).toHaveLength(1);

    // A new process on the same state dir: the remembered answers apply without asking.
    const second = writeScriptFile(root, "second.json", {
      steps: steps([
        ["call_a2", "write_file", { path: "a.txt", content: "two\n" }],
        ["call_r2", "shell", { command: "touch   rejected.txt" }], // same command, other spacing
        ["call_b2", "write_file", { path: "b.txt", content: "b\n" }], // another target: asks
      ]),
    });
    const b = await startServe(["--model", `scripted:${second}`, "--state-dir", state], ws);
    b.client.answer = () => select("reject_once");
    const two = await b.agent.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
    await b.agent.request(acp.methods.agent.session.prompt, { sessionId: two.sessionId, prompt: [{ type: "text", text: "again" }] });
    expect(b.client.permissionRequests.map((r) => r.toolCall.toolCallId)).toEqual(["call_b2"]);
    expect(readFileSync(join(ws, "a.txt"), "utf8")).toBe("two\n"); // remembered allow
    expect(existsSync(join(ws, "rejected.txt"))).toBe(false); // remembered reject
    expect(existsSync(join(ws, "b.txt"))).toBe(false); // asked, rejected once
    const toolResults = b.client.updates(two.sessionId).filter((u) => u.sessionUpdate === "tool_call_update" && u.status === "failed");
    expect(JSON.stringify(toolResults)).toContain("always reject");
    await b.end();

    // --clear-approval-memory: asked again.
    const c = await startServe(["--model", `scripted:${second}`, "--state-dir", state, "--clear-approval-memory"], ws);
    c.client.answer = () => select("reject_once");
    const three = await c.agent.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
    await c.agent.request(acp.methods.agent.session.prompt, { sessionId: three.sessionId, prompt: [{ type: "text", text: "once more" }] });
    expect(c.client.permissionRequests.map((r) => r.toolCall.toolCallId)).toEqual(["call_a2", "call_r2", "call_b2"]);
    expect(c.proc.stderr).toMatch(/cleared the remembered approvals/);
  });

  it("--no-approval-memory offers no “always” options and remembers nothing", async () => {
    const { root, ws, state } = workspace();
    const file = writeScriptFile(root, "s.json", { steps: steps([["call_1", "write_file", { path: "x.txt", content: "x" }]]) });
    const s = await startServe(["--model", `scripted:${file}`, "--state-dir", state, "--no-approval-memory"], ws);
    const { sessionId } = await s.agent.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
    await s.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "go" }] });
    expect(s.client.permissionRequests[0]!.options.map((o) => o.kind)).toEqual(["allow_once", "reject_once"]);
    expect(existsSync(join(state, "approvals"))).toBe(false);
  });
});

describe("DurableApprovalMemory", () => {
  const request = (overrides: Partial<ApprovalRequest> = {}): ApprovalRequest => ({
    sessionId: "s",
    callId: "call_1",
    toolName: "write_file",
    title: "Write a.txt",
    kind: "edit",
    input: { path: "a.txt", content: "x" },
    locations: [],
    target: { paths: ["/ws/a.txt"] },
    roots: ["/ws"],
    reason: "file changes need approval",
    ...overrides,
  });

  it("keys by tool, root and normalized target — never by call id or input text; patched input is never stored", async () => {
    const store = new InMemoryApprovalMemoryStore();
    const memory = new DurableApprovalMemory(store);
    await memory.remember(request(), { type: "patch_and_allow", input: { path: "a.txt", content: "patched" } });
    await memory.remember(request(), { type: "allow_once" });
    expect(await store.list("/ws")).toEqual([]);
    expect(await memory.lookup(request())).toBeUndefined();

    await memory.remember(request(), { type: "allow_always" });
    expect(await memory.lookup(request({ callId: "call_other", input: { path: "a.txt", content: "different text" } }))).toEqual({ type: "allow_always" });
    expect(await memory.lookup(request({ target: { paths: ["/ws/b.txt"] } }))).toBeUndefined();
    expect(await memory.lookup(request({ roots: ["/other"] }))).toBeUndefined();
    expect(await memory.lookup(request({ toolName: "edit_file" }))).toBeUndefined();
    const [record] = await store.list("/ws");
    expect(record!.entry).toMatchObject({ decision: "allow", toolName: "write_file", target: "/ws/a.txt" });

    await memory.remember(request({ toolName: "shell", kind: "execute", target: { paths: ["/ws"], command: "rm -rf build" } }), { type: "reject_always", reason: "never" });
    expect(await memory.lookup(request({ toolName: "shell", kind: "execute", target: { paths: ["/ws"], command: "rm  -rf   build" } }))).toEqual({ type: "reject_always", reason: "never" });
  });

  it("in a runtime: a resolver's patched approval is not remembered, so the same call asks again", async () => {
    const dir = tempDir("agentkit-approvals-");
    onCleanup(() => dir.remove());
    let asked = 0;
    const patching: AcpApprovalResolver = {
      async resolve(context) {
        asked += 1;
        return { type: "patch_and_allow", input: { ...(context.request.input as object), content: "patched\n" } };
      },
    };
    const env = startInMemory({
      scripts: [[script.toolCall("write_file", { path: "p.txt", content: "model\n" }), script.toolCall("write_file", { path: "p.txt", content: "model\n" }), script.text("ok")]],
      resolver: patching,
      memory: new DurableApprovalMemory(new FileApprovalMemoryStore({ stateDir: join(dir.path, "state") })),
    });
    onCleanup(() => env.close());
    await initialize(env.agent);
    const { sessionId } = await env.agent.request(acp.methods.agent.session.new, { cwd: dir.path, mcpServers: [] });
    await env.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "write twice" }] });
    expect(asked).toBe(2);
    expect(readFileSync(join(dir.path, "p.txt"), "utf8")).toBe("patched\n");
    expect(existsSync(join(dir.path, "state", "approvals"))).toBe(false);
    expect(textOf(env.client.updates(sessionId), "agent_message_chunk")).toBe("ok");
  });
});
