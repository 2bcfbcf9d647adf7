import type { CommandSandbox, Logger, LoopObserver } from "../core/index.js";
import { childEnvironment, createStderrLogger } from "../core/index.js";
import { Agent } from "../loop/index.js";
import type { PermissionMode, PermissionPolicy } from "../tools/index.js";
import { ToolRegistry, builtinTools, permissionPolicyForMode } from "../tools/index.js";
import { AcpIntegration } from "../acp/agent/integration.js";
import { SERVE_DEFAULTS } from "./defaults.js";
import type { AcpAgentFactoryContext, AcpSessionAgent } from "../acp/agent/factory.js";
import { planTool, planToolRule } from "../acp/agent/plan-tool.js";
import { askUserRule, askUserTool } from "../acp/agent/ask-user-tool.js";
import { AcpHeadlessRuntime } from "../acp/agent/runtime.js";
import type { AcpProtocolChoice } from "../acp/agent/protocol.js";
import type { InboundTraceContext } from "../acp/tracing.js";
import { serveModels, type ServeModelInputs, type ServeModels, type ServeModelSource } from "./models.js";
import { sessionMcpServers, sessionOperations, type ServeSessionServices } from "./session.js";
import { modeCeilingFor, type ClientMcpPolicy } from "./bounds.js";
import { approvalResolverFor, initialModeFor, serveState, type ApproveMode, type ServeState, type ServeStateOptions } from "./state.js";
import { serviceHooks, type ServiceHookOptions, type ServiceHooks } from "./service.js";

export type { ApproveMode, ServeState, ServeStateOptions } from "./state.js";
export { SERVE_DEFAULTS } from "./defaults.js";
export type { ServeModelInputs, ServeModelResolver, ServeModels, ServeModelSource } from "./models.js";
export { serveModels } from "./models.js";
export type { ServeSessionServices } from "./session.js";

/** Everything `agentkit-acp serve` is configured with (its flags, as library options). */
export interface ServeRuntimeOptions extends Partial<ServeStateOptions>, Partial<Omit<ServeSessionServices, "sandboxAudit">>, ServeModelInputs, ServiceHookOptions {
  /** Default `ask` (the client answers permission requests). */
  approve?: ApproveMode;
  /** The mode sessions start in; default: what `approve` implies. */
  mode?: PermissionMode | undefined;
  /** Default 32. */
  maxSessions?: number;
  /** Merge text/thought chunks for up to this many ms (`AcpIntegration.builder().coalesceMs`); default 0 (off). */
  coalesceMs?: number;
  /** Bound on each fs/terminal request to the client, ms (default 30 000). */
  clientTimeoutMs?: number;
  /** Whether a client's `_meta` trace context parents our spans (default honor). */
  traceContext?: InboundTraceContext;
  /** Lifetime of the key page (URL elicitation of a missing model key), ms; 0 = off. Default 10 min. */
  keyPageMs?: number;
  /** Models built beforehand with `serveModels` (so configuration errors surface first); else built here. */
  serveModels?: ServeModels;
  logger?: Logger;
  /** Default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** ACP versions served (default `v1`; `auto` also answers v2 clients, `v2` only them). */
  protocol?: AcpProtocolChoice;
  /** Further observers of every session's loop (e.g. the `ServiceMetrics` of `serve --listen`). */
  observers?: LoopObserver[];
  /** Each principal's sessions confined to `<workspaceRoot>/<principal>/` (see the runtime builder's `workspaceRoot`). */
  workspaceRoot?: string | undefined;
  /** MCP servers a client may name in session/new: none, http (http, sse, acp: no commands), all (also stdio). Default all. */
  clientMcp?: ClientMcpPolicy;
  /** Client http/sse MCP URLs may reach loopback, private or link-local addresses (default true). */
  clientMcpPrivate?: boolean;
}

export type { ClientMcpPolicy } from "./bounds.js";
export { prepareWorkspaceRoot } from "../acp/agent/path-params.js";
export { QuotaPolicy } from "../acp/agent/quota-limits.js";

/** What `serve` runs: the runtime (serve it over stdio or any stream) and where its state lives. */
export interface ServeRuntime {
  /** `runtime.serveStdio()`, or `runtime.serve(stream)` for any ACP byte stream (a socket, a memory pipe). */
  readonly runtime: AcpHeadlessRuntime;
  readonly state: ServeState;
  /** The starting model, for the start-up log line. */
  readonly model: ServeModelSource;
}

/**
 * Builds exactly the agent `agentkit-acp serve` runs: built-in tools plus the plan tool, the
 * client's fs/terminal when offered, per-session MCP servers, durable sessions and approvals,
 * modes, model choices and slash commands. Throws when the models cannot be configured, the
 * state directory cannot be made, or the PostgreSQL store (`storeUrl`) cannot be used
 * (`PostgresStoreError`). Call `state.close()` when done (it gives back the session leases).
 */
export async function createServeRuntime(options: ServeRuntimeOptions = {}): Promise<ServeRuntime> {
  const env = options.env ?? process.env;
  const logger = options.logger ?? createStderrLogger("info");
  const models = options.serveModels ?? serveModels(options, env, logger);
  const approve = options.approve ?? SERVE_DEFAULTS.approve;
  const initialMode = initialModeFor(approve, options.mode);
  const ceiling = modeCeilingFor(approve, options.mode);
  const state = await serveState(
    {
      stateDir: options.stateDir,
      persist: options.persist ?? true,
      forgetClosed: options.forgetClosed,
      approvalMemory: options.approvalMemory ?? true,
      clearApprovalMemory: options.clearApprovalMemory ?? false,
      storeUrl: options.storeUrl,
      leaseTtlMs: options.leaseTtlMs,
      retainMs: options.retainMs,
      retainIntervalMs: options.retainIntervalMs,
    },
    env,
    logger,
  );
  const hooks = serviceHooks(state, options, logger);
  const services: ServeSessionServices = {
    localTools: options.localTools ?? false,
    mcpStartupTimeoutMs: options.mcpStartupTimeoutMs ?? SERVE_DEFAULTS.mcpStartupTimeoutMs,
    mcpCallTimeoutMs: options.mcpCallTimeoutMs ?? SERVE_DEFAULTS.mcpCallTimeoutMs,
    // Nothing of the server's environment (its token, store URL, provider keys) reaches a child unless named.
    childEnv: options.childEnv ?? childEnvironment(env),
    ...(options.sandbox ? { sandbox: options.sandbox } : {}),
    ...(hooks.audit ? { sandboxAudit: hooks.audit } : {}),
  };
  const integration = AcpIntegration.builder()
    .name("agentkit-acp")
    .approvalResolver(approvalResolverFor(approve, state.offerAlways))
    .approvalMemory(state.approvalMemory)
    .logger(logger)
    .coalesceMs(options.coalesceMs ?? SERVE_DEFAULTS.coalesceMs)
    .infoMeta({ agentkit: { sandbox: sandboxMeta(options.sandbox, ["<session cwd>", "<additionalDirectories>"]) } })
    .build();
  const probe = models.primary.create();
  const policy = permissionPolicyForMode(initialMode, { rules: [planToolRule, askUserRule] });
  const builder = AcpHeadlessRuntime.builder()
    .integration(integration)
    .maxSessions(options.maxSessions ?? SERVE_DEFAULTS.maxSessions)
    .clientRequestTimeout(options.clientTimeoutMs ?? SERVE_DEFAULTS.clientTimeoutMs)
    .inboundTraceContext(options.traceContext ?? "honor")
    .logger(logger)
    // Advertise only what the model takes; embedded text resources always become text.
    .promptCapabilities({ image: probe.capabilities.image, audio: probe.capabilities.audio, embeddedContext: probe.capabilities.embeddedContext })
    // Client-provided services: http/sse MCP servers per session, MCP servers the client serves
    // over the ACP connection itself (unstable `acp`), and the model's key from the environment.
    .mcpTransports({ ...clientMcpTransports(options.clientMcp ?? "all"), privateAddresses: options.clientMcpPrivate ?? true })
    .authentication(models.primary.authentication)
    .keyPage(options.keyPageMs === 0 ? false : { lifetimeMs: options.keyPageMs ?? SERVE_DEFAULTS.keyPageMs })
    // Durable sessions, modes (the permission policy per session), model choices, /help /mode /model.
    .sessionStore(state.sessions)
    .sessionLeases(state.leases)
    .modes({ initial: initialMode, ...(ceiling ? { withheld: { modes: ceiling.withheld, reason: ceiling.reason } } : {}) })
    .models(models.options)
    .slashCommands()
    // The session's first update says what its commands may do, with its own roots.
    .sessionInfoMeta((roots) => ({ agentkit: { sandbox: sandboxMeta(options.sandbox, [roots.cwd, ...roots.additionalDirectories]) } }))
    .protocol(options.protocol ?? "v1");
  if (models.primary.providers) builder.providers(models.primary.providers);
  if (options.workspaceRoot !== undefined) builder.workspaceRoot(options.workspaceRoot);
  if (hooks.quotas) builder.quotas(hooks.quotas);
  if (hooks.audit) builder.audit(hooks.audit);
  const runtime = builder.agentFactory((context) => sessionAgent(context, models.primary, policy, logger, services, sessionObservers(context, hooks, options.observers ?? []))).build();
  // Queued audit records and token counts are written before the store closes.
  const close = async (): Promise<void> => {
    await hooks.close();
    await state.close();
  };
  return { runtime, state: { ...state, close }, model: models.primary };
}

function sessionObservers(context: AcpAgentFactoryContext, hooks: ServiceHooks, observers: LoopObserver[]): LoopObserver[] {
  const own = hooks.observer(context.principal, context.acpSessionId);
  return own ? [...observers, own] : observers;
}

/** `_meta.agentkit.sandbox` (initialize, the session's first update): off, or what the sandbox allows. */
function sandboxMeta(sandbox: CommandSandbox | undefined, writable: readonly string[]): Record<string, unknown> {
  return sandbox ? { mode: "workspace", ...sandbox.describe(writable) } : { mode: "off" };
}

function clientMcpTransports(policy: ClientMcpPolicy): { http: boolean; sse: boolean; acp: boolean; stdio: boolean } {
  const remote = policy !== "none";
  return { http: remote, sse: remote, acp: remote, stdio: policy === "all" };
}

function systemPrompt(cwd: string): string {
  return [
    "You are agentkit-acp, a coding agent working inside the user's editor.",
    `The workspace is ${cwd}; relative paths are resolved there.`,
    "Use the tools to read, search and edit files and to run commands. Keep answers short and say what you changed.",
  ].join("\n");
}

async function sessionAgent(
  context: AcpAgentFactoryContext,
  model: ServeModelSource,
  policy: PermissionPolicy,
  logger: Logger,
  services: ServeSessionServices,
  observers: LoopObserver[],
): Promise<AcpSessionAgent> {
  const mcp = await sessionMcpServers(context, services, logger);
  const ops = sessionOperations(context, services);
  logger.debug("session tools", { sessionId: context.acpSessionId, tools: ops.label });
  // ask_user only where the client can show a form (elicitation.form).
  const ask = context.client.canElicitForms ? [askUserTool(context.client, context.acpSessionId)] : [];
  const tools = new ToolRegistry([...builtinTools(), planTool(), ...ask]).with(mcp.tools);
  const builder = Agent.builder()
    .model(model.create(context.principal))
    .tools(tools)
    .permissions(policy)
    .observer(context.integration)
    .cancellation(context.cancellation)
    .logger(logger)
    .systemPrompt(systemPrompt(context.cwd));
  for (const observer of observers) builder.observer(observer);
  if (ops.files) builder.fileOperations(ops.files);
  if (ops.commands) builder.commandRunner(ops.commands);
  return { agent: builder.build(), close: () => mcp.close(), warnings: mcp.warnings };
}
