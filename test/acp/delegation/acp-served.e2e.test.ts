import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import type { SessionUpdate, ToolCallContent } from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { AcpHeadlessRuntime, AcpIntegration, AutoDenyResolver } from "../../../src/acp/agent/index.js";
import { AcpAgentTool, acpClientApprovals, type AcpAgentLaunch } from "../../../src/acp/delegation/index.js";
import { silentLogger } from "../../../src/core/index.js";
import { Agent } from "../../../src/loop/index.js";
import { demoNotePath } from "../../../src/model/demo.js";
import { ScriptedModel, script, serveInMemory } from "../../../src/testing/index.js";
import { RulePermissionPolicy, ToolRegistry } from "../../../src/tools/index.js";
import { select, waitForAbort } from "../agent/support.js";
import { expectGroupGone, onCleanup, serveLaunch, tempDir, trackGroup, writeScript } from "./support.js";

/**
 * The outer agent served over ACP (in memory, real ndjson framing) to the official SDK client.
 * Its one tool delegates to `agentkit-acp serve` over stdio, forwarding permission questions
 * to the SDK client through `acpClientApprovals`.
 */
function servedCoordinator(delegate: { name: string; config: AcpAgentLaunch }) {
  const integration = AcpIntegration.builder().approvalResolver(new AutoDenyResolver("the test allows by policy")).logger(silentLogger).build();
  const runtime = AcpHeadlessRuntime.builder()
    .integration(integration)
    .logger(silentLogger)
    .agentFactory((context) => {
      const tool = new AcpAgentTool({ ...delegate, description: "A delegate.", askOuter: acpClientApprovals(context.client, context.acpSessionId) });
      const agent = Agent.builder()
        .model(new ScriptedModel([script.toolCall(delegate.name, { task: "write the note" }, { callId: "outer-call" }), script.text("The delegate is done.")]))
        .tools(new ToolRegistry([tool]))
        .permissions(new RulePermissionPolicy({ rules: [], fallback: { verdict: "allow", reason: "test" } }))
        .observer(context.integration)
        .cancellation(context.cancellation)
        .logger(silentLogger)
        .build();
      return { agent, close: () => tool.close() };
    })
    .build();
  const { client, connection, close } = serveInMemory(runtime);
  onCleanup(close);
  return { client, agent: connection.agent };
}

async function openSession(agent: acp.ClientContext, cwd: string): Promise<string> {
  await agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: "test", version: "1" } });
  return (await agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] })).sessionId;
}

function outerCallUpdates(updates: SessionUpdate[]): Array<Extract<SessionUpdate, { sessionUpdate: "tool_call_update" }>> {
  return updates.flatMap((u) => (u.sessionUpdate === "tool_call_update" && u.toolCallId === "outer-call" ? [u] : []));
}

function textContent(content: ToolCallContent[] | null | undefined): string {
  return (content ?? []).map((c) => (c.type === "content" && c.content.type === "text" ? c.content.text : "")).join("");
}

function progressPid(updates: SessionUpdate[]): number | undefined {
  for (const u of outerCallUpdates(updates)) {
    const message = (u._meta?.agentkit as { progress?: string } | undefined)?.progress;
    const match = message?.match(/\(pid (\d+)\)/);
    if (match) return Number(match[1]);
  }
  return undefined;
}

describe("delegation seen from the editor (outer agent served over ACP)", () => {
  it("shows the nested agent's text and tool calls as tool_call_update content, and forwards its permission question", async () => {
    const ws = tempDir();
    const { client, agent } = servedCoordinator({ name: "writer", config: serveLaunch(["--model", "demo"]) });
    client.answer = (request) => select(request.options.find((o) => o.kind === "allow_once")!.optionId);
    const sessionId = await openSession(agent, ws);
    const response = await agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "delegate it" }] });
    expect(response.stopReason).toBe("end_turn");

    // The forwarded question is attached to the outer call and offers the inner agent's options.
    expect(client.permissionRequests).toHaveLength(1);
    const asked = client.permissionRequests[0]!;
    expect(asked.sessionId).toBe(sessionId);
    expect(asked.toolCall.toolCallId).toBe("outer-call");
    expect(textContent(asked.toolCall.content)).toContain(`writer asks permission: Write ${demoNotePath} (edit)`);
    expect(asked.options.map((o) => o.kind)).toEqual(["allow_once", "allow_always", "reject_once", "reject_always"]);
    expect(readFileSync(join(ws, demoNotePath), "utf8")).toContain("demo model");

    const updates = outerCallUpdates(client.updates(sessionId));
    trackGroup(progressPid(client.updates(sessionId)));
    const progress = updates.filter((u) => u.status === "in_progress" && u.content);
    const lastProgress = textContent(progress.at(-1)?.content);
    expect(lastProgress).toContain("I am the built-in **demo model**");
    expect(lastProgress).toContain(`→ Write ${demoNotePath}`);
    expect(lastProgress).toContain("permission granted");
    expect(lastProgress).toContain(`✓ Write ${demoNotePath}`);
    expect(lastProgress).toContain(`Done: I wrote ${demoNotePath}`);

    const final = updates.at(-1)!;
    expect(final.status).toBe("completed");
    expect(final.content?.find((c) => c.type === "diff")).toEqual(expect.objectContaining({ type: "diff", path: join(ws, demoNotePath), oldText: null }));
    expect(textContent(final.content)).toContain("writer finished (end_turn)");
  });

  it("session/cancel from the editor cancels the nested prompt and ends the delegate's process group", async () => {
    const ws = tempDir();
    const inner = writeScript(ws, [{ hang: true, text: "nested work in progress" }]);
    const { client, agent } = servedCoordinator({ name: "slow", config: serveLaunch(["--model", `scripted:${inner}`]) });
    client.answer = (_request, signal) => waitForAbort(signal);
    const sessionId = await openSession(agent, ws);
    const prompt = agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "go" }] });
    await client.waitFor(() => outerCallUpdates(client.updates(sessionId)).some((u) => textContent(u.content).includes("nested work in progress")), "nested text");
    const pid = progressPid(client.updates(sessionId));
    expect(pid).toBeTypeOf("number");
    trackGroup(pid);

    await agent.notify(acp.methods.agent.session.cancel, { sessionId });
    expect((await prompt).stopReason).toBe("cancelled");
    await expectGroupGone(pid!);
    const final = outerCallUpdates(client.updates(sessionId)).at(-1)!;
    expect(final.status).toBe("failed");
    expect(textContent(final.content)).toContain("The slow task was cancelled by the user.");
  });
});
