/**
 * Hybrid mode: a host that owns its agent loop and its turn arbitration, and makes its
 * sessions ACP-addressable with AcpIntegration — no AcpHeadlessRuntime involved.
 *
 * The host below has two input sources for the same session: ACP prompts from an editor,
 * and its own "local" input (think: a chat box in the host's UI, or a background job). Both go
 * through the session's turn gate ("queue" policy), and both turns stream to the ACP client,
 * because the integration is the loop's observer. Approvals go to the client
 * (ClientPermissionResolver); session/cancel reaches the running turn.
 *
 * Run: npx tsx examples/hybrid-host.ts   (no API key: it uses the labelled demo model)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { AcpClientHandle, AcpIntegration, ClientPermissionResolver, InMemoryApprovalMemory } from "../src/acp/agent/index.js";
import { newId } from "../src/core/index.js";
import type { LoopDriver } from "../src/loop/index.js";
import { Agent } from "../src/loop/index.js";
import { createModelAdapter } from "../src/model/index.js";
import { ToolRegistry, builtinTools } from "../src/tools/index.js";

/** The host: its own session table and loop; ACP is one more front end. */
export class HybridHost {
  readonly integration = AcpIntegration.builder()
    .name("hybrid-host")
    .version("1.0.0")
    .approvalResolver(new ClientPermissionResolver())
    .approvalMemory(new InMemoryApprovalMemory())
    .build();
  readonly #port = this.integration.inputPort();
  readonly #drivers = new Map<string, LoopDriver>();
  #client: AcpClientHandle | undefined;

  /** The ACP face of the host, to connect to a stream (stdio, a socket, an in-memory pair). */
  acpApp(): acp.AgentApp {
    return acp
      .agent({ name: "hybrid-host" })
      .onRequest(acp.methods.agent.initialize, ({ params, client }) => {
        this.#client = new AcpClientHandle(client, params.clientCapabilities ?? {});
        return { protocolVersion: 1, agentCapabilities: {}, authMethods: [], agentInfo: { name: this.integration.name, version: this.integration.version } };
      })
      .onRequest(acp.methods.agent.session.new, ({ params }) => ({ sessionId: this.openSession(params.cwd) }))
      // ACP prompts queue behind whatever turn the host is running (local input, background work).
      .onRequest(acp.methods.agent.session.prompt, ({ params }) => this.#port.prompt(params.sessionId, this.#driver(params.sessionId), params.prompt, "queue"))
      .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
        this.integration.interruptSession(params.sessionId);
      });
  }

  /** Starts a loop session and binds it to a new ACP session id. */
  openSession(cwd: string): string {
    if (!this.#client) throw acp.RequestError.invalidRequest(undefined, "initialize first");
    const acpSessionId = newId("sess");
    const agentSessionId = newId("host");
    const session = this.integration.bindSession({ acpSessionId, agentSessionId, client: this.#client });
    const agent = Agent.builder()
      .model(createModelAdapter({ spec: "demo" }))
      .tools(new ToolRegistry(builtinTools()))
      .observer(this.integration) // the shared observer: routes by session id
      .cancellation(session.cancellationHandle())
      .build();
    this.#drivers.set(acpSessionId, agent.start({ sessionId: agentSessionId, cwd }));
    return acpSessionId;
  }

  /** Local input (the host's own UI): same turn gate, same stream to the ACP client. */
  async localPrompt(acpSessionId: string, text: string): Promise<string> {
    const lease = await this.#port.beginTurn(acpSessionId, "queue");
    try {
      const driver = this.#driver(acpSessionId);
      driver.submitInput(this.#port.toItems(acpSessionId, [{ type: "text", text }]));
      return (await this.integration.driveTurn(acpSessionId, driver)).stopReason;
    } finally {
      lease.release();
    }
  }

  #driver(acpSessionId: string): LoopDriver {
    const driver = this.#drivers.get(acpSessionId);
    if (!driver) throw acp.RequestError.sessionNotFound(acpSessionId);
    return driver;
  }
}

/** Connects an SDK client to the host over in-memory ndjson pipes and returns what the client saw. */
export async function runHybridDemo(print: (line: string) => void = () => undefined): Promise<{ lines: string[]; stopReasons: string[] }> {
  const workspace = mkdtempSync(join(tmpdir(), "hybrid-host-"));
  const host = new HybridHost();
  const toClient = new TransformStream<Uint8Array, Uint8Array>();
  const toAgent = new TransformStream<Uint8Array, Uint8Array>();
  const agentSide = host.acpApp().connect(acp.ndJsonStream(toClient.writable, toAgent.readable));
  const lines: string[] = [];
  const show = (line: string): void => {
    lines.push(line);
    print(line);
  };
  // Chunks are coalesced per message so the output reads like what an editor renders.
  let open: { kind: string; text: string } | undefined;
  const flush = (): void => {
    if (open) show(`${open.kind}: ${open.text.replace(/\s+/g, " ").trim()}`);
    open = undefined;
  };
  const client = acp
    .client({ name: "example-client" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      const u = params.update;
      if ((u.sessionUpdate === "agent_message_chunk" || u.sessionUpdate === "agent_thought_chunk") && u.content.type === "text") {
        const kind = u.sessionUpdate === "agent_thought_chunk" ? "thought" : "message";
        if (open?.kind !== kind) flush();
        open ??= { kind, text: "" };
        open.text += u.content.text;
        return;
      }
      flush();
      if (u.sessionUpdate === "tool_call") show(`tool_call ${u.toolCallId}: ${u.title} [${u.kind}] ${u.status}`);
      else if (u.sessionUpdate === "tool_call_update") show(`tool_call_update ${u.toolCallId}: ${u.status ?? ""}${u.content?.some((c) => c.type === "diff") ? " (with diff)" : ""}`);
      else if (u.sessionUpdate === "usage_update") show(`usage_update: ${u.used}/${u.size} tokens`);
      else show(u.sessionUpdate);
    })
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
      flush();
      show(`permission asked for ${params.toolCall.title}: choosing "allow_once"`);
      return { outcome: { outcome: "selected", optionId: "allow_once" } };
    });
  const stopReasons: string[] = [];
  try {
    await client.connectWith(acp.ndJsonStream(toAgent.writable, toClient.readable), async (ctx) => {
      await ctx.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
      const { sessionId } = await ctx.request(acp.methods.agent.session.new, { cwd: workspace, mcpServers: [] });
      show(`--- ACP prompt and local input, concurrently; the host runs them one after the other`);
      const [fromEditor, fromHost] = await Promise.all([
        ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "hello from the editor" }] }),
        host.localPrompt(sessionId, "hello from the host's own UI"),
      ]);
      stopReasons.push(fromEditor.stopReason, fromHost);
      flush();
      show(`--- stop reasons: editor prompt ${fromEditor.stopReason}, local input ${fromHost}`);
    });
  } finally {
    await toAgent.writable.close().catch(() => undefined);
    await agentSide.closed;
    rmSync(workspace, { recursive: true, force: true });
  }
  return { lines, stopReasons };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await runHybridDemo((line) => process.stdout.write(`${line}\n`));
}
