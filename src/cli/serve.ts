import { CommandSandbox, childEnvironment, createStderrLogger, enableOrphanWatchdog, errorMessage, netAllowText, platformLimits, verifySandbox } from "../core/index.js";
import { codeCacheUses } from "../core/code-cache-hint.js";
import { startTracing, type TracingHandle } from "../core/tracing-setup.js";
import type { ServeModels, ServeRuntime } from "../serve/runtime.js";
import type { ListenIdentities } from "./serve-listen.js";
import type { ServeOptions } from "./serve-options.js";
import { parseServeOptions, serveHelp } from "./serve-options.js";
import { routeConsoleToLogger } from "./console-route.js";
import { processIo, type CliIo } from "./io.js";

/**
 * `agentkit-acp serve`: options are checked before the agent's modules load, so mistakes fail fast.
 * Everything uses `io`; only a serve that owns the process (the bin) installs signal handlers,
 * reroutes `console`, starts the orphan watchdog and exits a stuck process. In-process (tests)
 * it serves ACP on `io.stdin`/`io.stdout`, or with `--listen` over HTTP/WebSocket, and resolves
 * when stdin ends.
 */
export async function runServe(argv: string[], io: CliIo = processIo()): Promise<number> {
  let options: ServeOptions;
  try {
    options = parseServeOptions(argv, io.env);
  } catch (error) {
    io.stderr.write(`agentkit-acp serve: ${errorMessage(error)}\nRun \`agentkit-acp serve --help\` for the options.\n`);
    return 2;
  }
  if (options.help) {
    io.stdout.write(serveHelp);
    return 0;
  }
  return serveWith(options, io);
}

/** Runs the library's serve runtime on stdio; a model configuration error is reported like a usage error (exit 2). */
async function serveWith(options: ServeOptions, io: CliIo): Promise<number> {
  // The scripted model (tests and benchmarks) is loaded only when a spec names it.
  const scripted = [options.model ?? "", ...options.models].some((spec) => spec.includes("scripted:"));
  const [{ createServeRuntime, prepareWorkspaceRoot, serveModels, QuotaPolicy }, scriptedModelResolver] = await Promise.all([
    import("../serve/runtime.js"),
    scripted ? import("../testing/scripted-script.js").then((m) => m.scriptedModelResolver) : undefined,
  ]);
  const logger = createStderrLogger(options.logLevel, undefined, (line) => io.stderr.write(line));
  const env = io.env;
  // --listen loads the HTTP server (and `ws`) only when asked for: stdio start-up stays lean.
  const listening = options.listen ? await import("./serve-listen.js") : undefined;
  if (listening) codeCacheUses("listen"); // the HTTP service's code, in the bin's code cache too
  let identities: ListenIdentities | undefined;
  // --quota for everyone; a token file's quota= column or a JWT's agentkit_quota claim per principal.
  const quotas = new QuotaPolicy(options.quotaLimits);
  let models: ServeModels;
  let sandbox: CommandSandbox | undefined;
  let tracing: TracingHandle | undefined;
  try {
    // Asked for and not available (or installed but unable to run here): exit 2 saying why, never a run without it.
    if (options.sandboxMode === "workspace") sandbox = await verifySandbox(CommandSandbox.create({ limits: options.sandboxLimits, netAllow: options.sandboxNet }));
    if (listening) {
      identities = await listening.listenIdentities(options, env, logger, quotas);
      // More than one principal (token-file names, JWT subjects): each needs a workspace of its own.
      listening.requireWorkspaceRoot(listening.principalCount(identities), options.workspaceRoot);
    }
    if (options.workspaceRoot !== undefined) prepareWorkspaceRoot(options.workspaceRoot);
    // Off unless the OTEL_* environment asks for it; only then is the OpenTelemetry SDK loaded.
    tracing = await startTracing({ env, logger, serviceName: "agentkit-acp serve", flushTimeoutMs: 1_500 });
    models = serveModels(
      { model: options.model, models: options.models, baseUrl: options.baseUrl, resolver: scriptedModelResolver, timeouts: options.modelTimeouts },
      env,
      logger,
    );
  } catch (error) {
    io.stderr.write(`agentkit-acp serve: ${errorMessage(error)}\n`);
    return 2;
  }
  if (io.ownsProcess) {
    // stdout belongs to ACP: console output of dependencies goes through the logger, one line each.
    routeConsoleToLogger(logger);
    // Commands and MCP servers end with us even when we are SIGKILLed.
    enableOrphanWatchdog();
  }
  // What cannot work on this platform is said once, at start (nothing on Linux).
  for (const limit of platformLimits()) logger.warn(limit);
  // The client went away (EPIPE): the connection closes and we exit normally instead of crashing.
  io.stdout.on("error", (error: Error) => logger.warn("stdout closed", { error: errorMessage(error) }));
  logger.info(`serving ACP on ${options.listen ? "HTTP/WebSocket" : "stdio"} with model ${models.primary.label}`);
  logger.info(sandbox ? `commands run sandboxed (${sandbox.engine}; process bound: ${sandbox.processBound}; network: ${netAllowText(sandbox.netAllow)})` : "commands run unsandboxed (--sandbox off)");
  // Said, not hidden: without perl each allow-listed command starts a node bridge (~50 ms of CPU).
  if (sandbox && sandbox.netAllow.length > 0 && sandbox.bridge === "node") logger.warn("no perl under /usr: each sandboxed command's network bridge is a node process (~50 ms of CPU per command); install perl-base for a ~5 ms one");
  const metrics = listening?.newServiceMetrics();
  // Token-file principals get their own /metrics labels first (JWT subjects take what is left).
  if (metrics && identities) metrics.principals.reserve(identities.tokens.principals());
  let served: ServeRuntime;
  try {
    const childEnv = childEnvironment(env, options.childEnvNames);
    served = await createServeRuntime({
      ...options,
      quotas,
      audit: options.listen !== undefined,
      ...(metrics ? { principalMetrics: metrics.principals } : {}),
      forgetClosed: options.listen !== undefined, serveModels: models, logger, env, observers: metrics ? [metrics] : [], childEnv, ...(sandbox ? { sandbox } : {}) });
  } catch (error) {
    // A store URL that does not work is a configuration mistake (exit 2, saying what to fix).
    if (options.storeUrl !== undefined) {
      io.stderr.write(`agentkit-acp serve: cannot use the session store: ${errorMessage(error)}\n`);
      return 2;
    }
    io.stderr.write(`agentkit-acp serve: cannot use the state directory: ${errorMessage(error)}\n`);
    return 1;
  }
  const { runtime, state } = served;
  logger.info(state.description);
  if (listening && options.listen && metrics && identities) {
    const own = io.ownsProcess ? {} : { input: io.stdin }; // in-process: until stdin ends
    const code = await listening.serveListening({ runtime, address: options.listen, identities, options, metrics, logger, ready: () => state.ready(), close: () => state.close(), stderr: io.stderr, ...own });
    await tracing?.shutdown(); // bounded: a collector that is down does not hold the exit
    return code;
  }

  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info(`${signal}: cancelling running turns and exiting`);
    runtime.shutdown().catch((error: unknown) => logger.error("shutdown failed", { error: errorMessage(error) }));
  };
  if (io.ownsProcess) for (const signal of ["SIGTERM", "SIGINT"] as const) process.once(signal, () => stop(signal));

  await runtime.serveStdio({ input: io.stdin, output: io.stdout, maxMessageBytes: options.maxMessageBytes });
  await new Promise<void>((resolve) => io.stdout.write("", () => resolve()));
  logger.info("the ACP connection closed; exiting");
  await tracing?.shutdown(); // the turn's spans leave before we do (bounded flush)
  // Anything left (a stuck MCP server, a provider socket) must not keep the editor's agent alive.
  if (io.ownsProcess) setTimeout(() => process.exit(0), 2_000).unref();
  await state.close(); // gives back this instance's session leases at once rather than letting them expire
  return 0;
}
