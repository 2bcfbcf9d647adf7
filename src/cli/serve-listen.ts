import { readFileSync } from "node:fs";
import type { AcpHeadlessRuntime } from "../acp/agent/index.js";
import { AcpHttpService, ListenError, ServiceMetrics } from "../acp/agent/http.js";
import type { Logger } from "../core/index.js";
import { errorMessage } from "../core/index.js";
import type { ListenAddress, ServeOptions } from "./serve-options.js";
import { UsageError } from "./usage.js";

/** The counters of /metrics; every session's agent reports to it (model errors, tokens). */
export function newServiceMetrics(): ServiceMetrics {
  return new ServiceMetrics();
}

/** The bearer token for `--listen`: the first line of `--token-file`, else AGENTKIT_ACP_TOKEN. */
export function listenToken(options: Pick<ServeOptions, "tokenFile">, env: NodeJS.ProcessEnv): string {
  if (options.tokenFile !== undefined) {
    let text: string;
    try {
      text = readFileSync(options.tokenFile, "utf8");
    } catch (error) {
      throw new UsageError(`--token-file ${options.tokenFile}: ${errorMessage(error)}`);
    }
    const token = (text.split(/\r?\n/, 1)[0] ?? "").trim();
    if (token === "") throw new UsageError(`--token-file ${options.tokenFile} is empty; put the bearer token on its first line`);
    return token;
  }
  const token = env.AGENTKIT_ACP_TOKEN?.trim();
  if (!token) throw new UsageError("--listen needs a bearer token: set AGENTKIT_ACP_TOKEN or pass --token-file FILE");
  return token;
}

/**
 * `--listen` with more than one possible principal (several token-file names, or JWTs: pass
 * `Infinity`) needs `--workspace-root`: without it every principal could open sessions in any
 * directory of this machine, each other's included. The identities feed `principals`.
 */
export function requireWorkspaceRoot(principals: number, workspaceRoot: string | undefined): void {
  if (principals > 1 && workspaceRoot === undefined) {
    const who = Number.isFinite(principals) ? `${principals} principals` : "any number of principals (JWT)";
    throw new UsageError(`--listen with ${who} needs --workspace-root DIR, so that each principal's sessions stay inside DIR/<principal>/`);
  }
}

export interface ListenContext {
  runtime: AcpHeadlessRuntime;
  address: ListenAddress;
  token: string;
  options: Pick<ServeOptions, "maxConnections" | "maxMessageBytes" | "drainTimeoutMs">;
  metrics: ServiceMetrics;
  /** The store can be used right now (`/readyz`). */
  ready: () => Promise<boolean>;
  /** Releases the store's leases and connections once serving stopped. */
  close: () => Promise<void>;
  logger: Logger;
}

/**
 * Serves until SIGTERM/SIGINT, which drain: no new connections or sessions, running turns get
 * `--drain-timeout` to finish, then the rest is cancelled. A second signal stops at once.
 * Returns the exit code (2 when the address cannot be used).
 */
export async function serveListening(context: ListenContext): Promise<number> {
  const { logger, address, options } = context;
  let service: AcpHttpService;
  try {
    service = await AcpHttpService.listen({
      runtime: context.runtime,
      token: context.token,
      host: address.host,
      port: address.port,
      maxConnections: options.maxConnections,
      maxMessageBytes: options.maxMessageBytes,
      metrics: context.metrics,
      logger,
      ready: async () => {
        if (!(await context.ready())) throw new Error("the session store cannot be reached");
      },
    });
  } catch (error) {
    await context.close().catch(() => undefined);
    if (!(error instanceof ListenError)) throw error;
    process.stderr.write(`agentkit-acp serve: ${error.message}\n`);
    return 2;
  }
  logger.info(`listening on ${service.url} (HTTP and WebSocket; /healthz, /readyz, /metrics)`);
  const stopped = new Promise<void>((resolve) => {
    let signals = 0;
    const stop = (signal: string): void => {
      signals += 1;
      if (signals === 1) {
        logger.info(`${signal}: draining (no new connections or sessions; running turns get ${options.drainTimeoutMs} ms)`);
        void service.drain(options.drainTimeoutMs).then(
          (finished) => {
            if (!finished) logger.warn("running turns did not finish within --drain-timeout; they were cancelled");
            resolve();
          },
          (error: unknown) => {
            logger.error("draining failed", { error: errorMessage(error) });
            resolve();
          },
        );
      } else {
        logger.info(`${signal} again: cancelling running turns and exiting`);
        void service.close().finally(resolve);
      }
    };
    process.on("SIGTERM", () => stop("SIGTERM"));
    process.on("SIGINT", () => stop("SIGINT"));
  });
  await stopped;
  logger.info("stopped serving; exiting");
  setTimeout(() => process.exit(0), 2_000).unref();
  // Leases go back at once rather than expiring (another instance can take the sessions now).
  await context.close().catch((error: unknown) => logger.warn("closing the store failed", { error: errorMessage(error) }));
  return 0;
}
