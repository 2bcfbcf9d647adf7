import * as acp from "@agentclientprotocol/sdk";
import type { ClientContext } from "@agentclientprotocol/sdk";
import type { CancellationHandle } from "../../../src/core/index.js";
import { Agent } from "../../../src/loop/index.js";
import type { PermissionPolicy, Tool } from "../../../src/tools/index.js";
import { ToolRegistry, builtinTools, defaultPermissionPolicy } from "../../../src/tools/index.js";
import { ScriptedModel, type ScriptStep, type ScriptedModelOptions } from "../../../src/testing/index.js";
import type { AcpApprovalMemory, AcpApprovalResolver, AcpHeadlessRuntime, AcpHeadlessRuntimeBuilder, AcpIntegration } from "../../../src/acp/agent/index.js";
import { AcpHeadlessRuntime as Runtime, AcpIntegration as Integration, ClientPermissionResolver } from "../../../src/acp/agent/index.js";
import { silentLogger } from "../../../src/core/index.js";
import type { SessionStore } from "../../../src/store/index.js";
import { serveInMemory } from "../../../src/testing/index.js";

export interface AgentSetup {
  /** Script for each new session, in order (session 1 gets scripts[0] …). */
  scripts: ScriptStep[][];
  modelOptions?: ScriptedModelOptions;
  tools?: Tool[];
  policy?: PermissionPolicy;
  resolver?: AcpApprovalResolver;
  memory?: AcpApprovalMemory;
  promptCapabilities?: { image?: boolean; audio?: boolean; embeddedContext?: boolean };
  maxSessions?: number;
  store?: SessionStore;
  unstable?: Parameters<AcpHeadlessRuntimeBuilder["unstable"]>[0];
  mcpTransports?: Parameters<AcpHeadlessRuntimeBuilder["mcpTransports"]>[0];
}

/** An in-memory runtime with scripted models, served to a recording SDK client over ndjson pipes. */
export function startInMemory(setup: AgentSetup) {
  const models: ScriptedModel[] = [];
  const cancellations: CancellationHandle[] = [];
  const builder = Integration.builder().name("test-agent").version("9.9.9").approvalResolver(setup.resolver ?? new ClientPermissionResolver()).logger(silentLogger);
  if (setup.memory) builder.approvalMemory(setup.memory);
  const integration: AcpIntegration = builder.build();
  const runtimeBuilder = Runtime.builder()
    .integration(integration)
    .logger(silentLogger)
    .agentFactory((ctx) => {
      const model = new ScriptedModel(setup.scripts[models.length] ?? [], setup.modelOptions);
      models.push(model);
      cancellations.push(ctx.cancellation);
      return Agent.builder()
        .model(model)
        .tools(new ToolRegistry(setup.tools ?? builtinTools()))
        .permissions(setup.policy ?? defaultPermissionPolicy())
        .observer(ctx.integration)
        .cancellation(ctx.cancellation)
        .logger(silentLogger)
        .build();
    });
  if (setup.promptCapabilities) runtimeBuilder.promptCapabilities(setup.promptCapabilities);
  if (setup.maxSessions) runtimeBuilder.maxSessions(setup.maxSessions);
  if (setup.store) runtimeBuilder.sessionStore(setup.store);
  if (setup.unstable !== undefined) runtimeBuilder.unstable(setup.unstable);
  if (setup.mcpTransports) runtimeBuilder.mcpTransports(setup.mcpTransports);
  const runtime: AcpHeadlessRuntime = runtimeBuilder.build();
  return { runtime, integration, models, ...serveInMemory(runtime) };
}

export function initialize(agent: ClientContext) {
  return agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: "test", version: "1" } });
}
