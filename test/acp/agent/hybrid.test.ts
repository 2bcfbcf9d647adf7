import * as acp from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { runHybridDemo } from "../../../examples/hybrid-host.js";
import { AcpClientHandle, AcpIntegration, AutoApproveResolver } from "../../../src/acp/agent/index.js";
import { silentLogger } from "../../../src/core/index.js";
import { Agent } from "../../../src/loop/index.js";
import { ScriptedModel, script, type ScriptStep } from "../../../src/testing/index.js";
import type { Tool } from "../../../src/tools/index.js";
import { ToolRegistry, builtinTools, defaultPermissionPolicy, defineTool } from "../../../src/tools/index.js";
import { z } from "zod";
import { deferred, memoryPipes, RecordingClient, tempDir, textOf } from "./support.js";

const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A host-owned loop session bound to the integration, streaming to a recording SDK client. */
function hostSession(steps: ScriptStep[], extraTools: Tool[] = []) {
  const integration = AcpIntegration.builder().approvalResolver(new AutoApproveResolver()).logger(silentLogger).build();
  const pipes = memoryPipes();
  const agentSide = acp.agent({ name: "host" }).connect(pipes.agent);
  const client = new RecordingClient();
  const clientSide = client.connect(pipes.client);
  const dir = tempDir();
  cleanups.push(
    () => dir.remove(),
    async () => {
      clientSide.close();
      agentSide.close();
      await agentSide.closed;
    },
  );
  const session = integration.bindSession({ acpSessionId: "acp_1", agentSessionId: "loop_1", client: new AcpClientHandle(agentSide.client) });
  const model = new ScriptedModel(steps);
  const driver = Agent.builder()
    .model(model)
    .tools(new ToolRegistry([...builtinTools(), ...extraTools]))
    .permissions(defaultPermissionPolicy())
    .observer(integration)
    .cancellation(session.cancellationHandle())
    .logger(silentLogger)
    .build()
    .start({ sessionId: "loop_1", cwd: dir.path });
  return { integration, port: integration.inputPort(), client, driver, model, session };
}

const text = (t: string): acp.ContentBlock[] => [{ type: "text", text: t }];

describe("hybrid mode: the host owns the loop, the integration makes it ACP-addressable", () => {
  it("examples/hybrid-host.ts: an editor prompt and the host's local input share one session and both stream to the client", async () => {
    const { lines, stopReasons } = await runHybridDemo();
    expect(stopReasons).toEqual(["end_turn", "end_turn"]);
    expect(lines.filter((l) => l.startsWith("permission asked"))).toHaveLength(2);
    expect(lines.filter((l) => l.includes("completed (with diff)"))).toHaveLength(2);
    expect(lines.some((l) => l.includes("demo model"))).toBe(true);
  });

  it("busy policy `queue`: a second prompt waits for the running turn, then runs", async () => {
    const h = hostSession([script.hang([{ type: "text_delta", text: "first…" }]), script.text("second")]);
    const first = h.port.prompt("acp_1", h.driver, text("one"), "queue");
    await h.client.waitFor(() => textOf(h.client.updates("acp_1"), "agent_message_chunk") === "first…", "the first turn to stream");
    const second = h.port.prompt("acp_1", h.driver, text("two"), "queue");
    await expect(h.port.beginTurn("acp_1", "reject")).rejects.toMatchObject({ code: -32600 });
    h.integration.interruptSession("acp_1");
    expect((await first).stopReason).toBe("cancelled");
    expect((await second).stopReason).toBe("end_turn");
    expect(textOf(h.client.updates("acp_1"), "agent_message_chunk")).toBe("first…second");
  });

  it("busy policy `cancel_and_restart`: a new prompt cancels the running turn and runs next", async () => {
    const h = hostSession([script.hang(), script.text("restarted")]);
    const first = h.port.prompt("acp_1", h.driver, text("one"), "reject");
    await h.client.waitFor(() => h.client.updates("acp_1").length > 0, "the first turn to stream");
    const second = await h.port.prompt("acp_1", h.driver, text("two"), "cancel_and_restart");
    expect((await first).stopReason).toBe("cancelled");
    expect(second.stopReason).toBe("end_turn");
    expect(h.model.requests[1]!.items.filter((i) => i.role === "user")).toHaveLength(2);
  });

  it("interjection: input queued during a tool call reaches the model at the after-tool-result point", async () => {
    const release = deferred<void>();
    const gateTool = defineTool({
      name: "wait_gate",
      description: "waits until the test releases it",
      kind: "read",
      input: z.object({}),
      async execute() {
        await release.promise;
        return { text: "released", isError: false };
      },
    });
    const h = hostSession([script.toolCall("wait_gate", {}), script.text("noted")], [gateTool]);
    const turn = h.port.prompt("acp_1", h.driver, text("look around"), "reject");
    await h.client.waitFor(() => h.client.updates("acp_1").some((u) => u.sessionUpdate === "tool_call_update" && u.status === "in_progress"), "the tool to run");
    h.port.interject("acp_1", text("also: be brief"));
    release.resolve();
    expect((await turn).stopReason).toBe("end_turn");
    const second = h.model.requests[1]!;
    const lastUser = second.items.filter((i) => i.role === "user").at(-1)!;
    expect(lastUser.parts).toEqual([{ type: "text", text: "also: be brief" }]);
  });
});
