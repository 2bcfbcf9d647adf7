import type { AcpAgentFactoryContext, AcpAuthentication, AcpModelOptions, AcpSessionAgent } from "../acp/agent/index.js";
import { AcpHeadlessRuntime, AcpIntegration, envApiKeyAuthentication, noAuthentication, planTool, planToolRule } from "../acp/agent/index.js";
import type { Logger } from "../core/index.js";
import { createStderrLogger, errorMessage } from "../core/index.js";
import { Agent } from "../loop/index.js";
import type { ModelAdapter } from "../model/index.js";
import { createModelAdapter, hasCredentials, pickDefaultModelSpec } from "../model/index.js";
import type { PermissionPolicy } from "../tools/index.js";
import { ToolRegistry, builtinTools, permissionPolicyForMode } from "../tools/index.js";
import { loadScriptFile, scriptedModelFrom } from "./scripted-script.js";
import type { ServeOptions } from "./serve-options.js";
import { serveModelOptions } from "./serve-models.js";
import type { ServeState } from "./serve-state.js";
import { approvalResolverFor, initialModeFor, serveState } from "./serve-state.js";
import type { ServeSessionServices } from "./serve-session.js";
import { sessionMcpServers, sessionOperations } from "./serve-session.js";

/** Runs `serve` with parsed options; a model configuration error is reported like a usage error (exit 2). */
export async function serveWith(options: ServeOptions): Promise<number> {
  let models: ModelSource;
  let modelOptions: AcpModelOptions;
  try {
    const early = createStderrLogger(options.logLevel);
    models = modelSource(options, early);
    const primary = models;
    modelOptions = serveModelOptions({ model: options.model, models: options.models, baseUrl: options.baseUrl }, () => primary.create(), process.env, early);
  } catch (error) {
    process.stderr.write(`agentkit-acp serve: ${errorMessage(error)}\n`);
    return 2;
  }
  keepStdoutForProtocol();
  const logger = createStderrLogger(options.logLevel);
  // The client went away (EPIPE): the connection closes and we exit normally instead of crashing.
  process.stdout.on("error", (error) => logger.warn("stdout closed", { error: errorMessage(error) }));
  logger.info(`serving ACP on stdio with model ${models.label}`);
  let state: ServeState;
  try {
    state = await serveState(options, process.env, logger);
  } catch (error) {
    process.stderr.write(`agentkit-acp serve: cannot use the state directory: ${errorMessage(error)}\n`);
    return 1;
  }
  logger.info(state.stateDir === undefined ? "sessions are kept in memory only (--no-persist)" : `sessions and approvals are kept in ${state.stateDir}`);
  const initialMode = initialModeFor(options.approve, options.mode);

  const integration = AcpIntegration.builder()
    .name("agentkit-acp")
    .approvalResolver(approvalResolverFor(options.approve, state.offerAlways))
    .approvalMemory(state.approvalMemory)
    .logger(logger)
    .build();
  const probe = models.create();
  const runtime = AcpHeadlessRuntime.builder()
    .integration(integration)
    .maxSessions(options.maxSessions)
    .logger(logger)
    // Advertise only what the model takes; embedded text resources always become text.
    .promptCapabilities({ image: probe.capabilities.image, audio: probe.capabilities.audio, embeddedContext: probe.capabilities.embeddedContext })
    // Client-provided services: http/sse MCP servers per session, and the model's key from the environment.
    .mcpTransports({ http: true, sse: true })
    .authentication(models.authentication)
    // Durable sessions, modes (the permission policy per session), model choices, /help /mode /model.
    .sessionStore(state.sessions)
    .modes({ initial: initialMode })
    .models(modelOptions)
    .slashCommands()
    .agentFactory((context) => sessionAgent(context, models, permissionPolicyForMode(initialMode, { rules: [planToolRule] }), logger, { localTools: options.localTools, mcpStartupTimeoutMs: options.mcpStartupTimeoutMs }))
    .build();

  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info(`${signal}: cancelling running turns and exiting`);
    runtime.shutdown().catch((error: unknown) => logger.error("shutdown failed", { error: errorMessage(error) }));
  };
  process.once("SIGTERM", () => stop("SIGTERM"));
  process.once("SIGINT", () => stop("SIGINT"));

  await runtime.serveStdio();
  await new Promise<void>((resolve) => process.stdout.write("", () => resolve()));
  logger.info("the ACP connection closed; exiting");
  // Anything left (a stuck MCP server, a provider socket) must not keep the editor's agent alive.
  setTimeout(() => process.exit(0), 2_000).unref();
  return 0;
}

interface ModelSource {
  label: string;
  /** A model for one session (scripted scripts restart per session; real adapters are shared). */
  create(): ModelAdapter;
  /** `env-api-key` for providers that need a key; nothing for demo, local and scripted models. */
  authentication: AcpAuthentication;
}

function modelSource(options: ServeOptions, logger: Logger): ModelSource {
  if (options.model?.startsWith("scripted:")) {
    const path = options.model.slice("scripted:".length);
    const file = loadScriptFile(path);
    return { label: `scripted:${path} (testing only)`, create: () => scriptedModelFrom(file), authentication: noAuthentication() };
  }
  const choice = options.model === undefined ? pickDefaultModelSpec(process.env) : { spec: options.model, reason: "--model / AGENTKIT_MODEL" };
  const make = (): ModelAdapter => createModelAdapter({ spec: choice.spec, ...(options.baseUrl ? { baseUrl: options.baseUrl } : {}), logger });
  let adapter = make();
  let keyed = hasCredentials(choice.spec);
  return {
    label: `${adapter.id} (${choice.reason})`,
    create: () => {
      // Built without a key: once the environment has one (authenticate re-checks it), rebuild.
      if (!keyed && hasCredentials(choice.spec)) [adapter, keyed] = [make(), true];
      return adapter;
    },
    authentication: envApiKeyAuthentication(choice.spec),
  };
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
  models: ModelSource,
  policy: PermissionPolicy,
  logger: Logger,
  services: ServeSessionServices,
): Promise<AcpSessionAgent> {
  const mcp = await sessionMcpServers(context, services, logger);
  const ops = sessionOperations(context, services);
  logger.debug("session tools", { sessionId: context.acpSessionId, tools: ops.label });
  const tools = new ToolRegistry([...builtinTools(), planTool()]).with(mcp.tools);
  const builder = Agent.builder()
    .model(models.create())
    .tools(tools)
    .permissions(policy)
    .observer(context.integration)
    .cancellation(context.cancellation)
    .logger(logger)
    .systemPrompt(systemPrompt(context.cwd));
  if (ops.files) builder.fileOperations(ops.files);
  if (ops.commands) builder.commandRunner(ops.commands);
  return { agent: builder.build(), close: () => mcp.close(), warnings: mcp.warnings };
}

/** Library code never writes to stdout; this keeps stray console output of dependencies off it too. */
function keepStdoutForProtocol(): void {
  const toStderr = (...args: unknown[]): void => {
    process.stderr.write(`${args.map((a) => (typeof a === "string" ? a : safeInspect(a))).join(" ")}\n`);
  };
  /* eslint-disable no-console -- redirecting console is the point: stdout belongs to ACP */
  console.log = toStderr;
  console.info = toStderr;
  console.debug = toStderr;
  /* eslint-enable no-console */
}

function safeInspect(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}
