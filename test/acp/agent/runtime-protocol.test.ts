import type { AnyMessage } from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { AcpHeadlessRuntime, AcpIntegration, AutoApproveResolver, type AcpProtocolChoice } from "../../../src/acp/agent/index.js";
import { silentLogger } from "../../../src/core/index.js";
import { ConfigError } from "../../../src/core/index.js";

/** A runtime on a message-level pipe: what the client writes, what the agent answers. */
function served(protocol: AcpProtocolChoice) {
  const integration = AcpIntegration.builder().approvalResolver(new AutoApproveResolver()).logger(silentLogger).build();
  const runtime = AcpHeadlessRuntime.builder()
    .integration(integration)
    .agentFactory(() => Promise.reject(new Error("no sessions in this test")))
    .logger(silentLogger)
    .protocol(protocol)
    .build();
  const toAgent = new TransformStream<AnyMessage, AnyMessage>();
  const fromAgent = new TransformStream<AnyMessage, AnyMessage>();
  const connection = runtime.serve({ readable: toAgent.readable, writable: fromAgent.writable });
  const writer = toAgent.writable.getWriter();
  const reader = fromAgent.readable.getReader();
  return {
    runtime,
    connection,
    send: (message: AnyMessage) => writer.write(message),
    next: async () => (await reader.read()).value as { id?: unknown; result?: { protocolVersion?: unknown; info?: unknown; agentInfo?: unknown }; error?: { code: number; data?: unknown } },
    end: () => writer.close(),
  };
}

const v2Init = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 2, info: { name: "t", version: "1" }, capabilities: {} } } as AnyMessage;
const v1Init = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } } as AnyMessage;

describe("AcpHeadlessRuntime.protocol", () => {
  it("auto: v2 to a client asking for 2 (v2 shape), v1 to a client asking for 1", async () => {
    const a = served("auto");
    await a.send(v2Init);
    expect((await a.next()).result).toMatchObject({ protocolVersion: 2, info: { name: "agentkit-acp" } });
    const b = served("auto");
    await b.send(v1Init);
    expect((await b.next()).result).toMatchObject({ protocolVersion: 1, agentInfo: { name: "agentkit-acp" } });
    await Promise.all([a.runtime.shutdown(), b.runtime.shutdown()]);
  });

  it("v1 (the default) answers 1 to a client asking for 2; v2 refuses 1 with -32022 and keeps the connection for a v2 initialize", async () => {
    const v1 = served("v1");
    await v1.send(v2Init);
    expect((await v1.next()).result).toMatchObject({ protocolVersion: 1 });
    const v2 = served("v2");
    await v2.send(v1Init);
    expect((await v2.next()).error).toMatchObject({ code: -32022, data: { requested: 1, supported: [2] } });
    await v2.send(v2Init);
    expect((await v2.next()).result).toMatchObject({ protocolVersion: 2 });
    await Promise.all([v1.runtime.shutdown(), v2.runtime.shutdown()]);
  });

  it("shutdown before any initialize ends a routed connection (the router's wait included)", async () => {
    const a = served("auto");
    await a.runtime.shutdown();
    await expect(a.connection.closed).resolves.toBeUndefined();
  });

  it("refuses an unknown choice", () => {
    expect(() => AcpHeadlessRuntime.builder().protocol("v3" as AcpProtocolChoice)).toThrow(ConfigError);
  });
});
