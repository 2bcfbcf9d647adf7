import { readFileSync, statSync } from "node:fs";
import type { AcpHeadlessRuntime } from "../acp/agent/index.js";
import { AcpHttpService, ListenError, ServiceMetrics } from "../acp/agent/http.js";
import { jwtVerifier, type JwtVerifier } from "../acp/agent/jwt.js";
import { DEFAULT_PRINCIPAL } from "../acp/agent/principal.js";
import { BearerTokens, parseTokenFile, type BearerToken } from "../acp/agent/principals.js";
import { QuotaPolicy, quotasFromClaim, type QuotaLimits } from "../acp/agent/quota-limits.js";

/** The JWT claim that sets its principal's quotas: `{"sessions": 5, …}` or `"sessions=5,…"`. */
export const JWT_QUOTA_CLAIM = "agentkit_quota";
import type { Logger } from "../core/index.js";
import { errorMessage } from "../core/index.js";
import type { ListenAddress, ServeOptions } from "./serve-options.js";
import { UsageError } from "./usage.js";

/** The counters of /metrics; every session's agent reports to it (model errors, tokens). */
export function newServiceMetrics(): ServiceMetrics {
  return new ServiceMetrics();
}

/** Who may call a `--listen` service: static tokens (rotated on SIGHUP) and/or a JWT verifier. */
export interface ListenIdentities {
  tokens: BearerTokens;
  jwt?: JwtVerifier;
  /** Re-reads `--token-file` (SIGHUP); undefined without one. */
  reload?: (logger: Logger) => void;
}

/**
 * The identities for `--listen`: `--token-file` (principal per line), else AGENTKIT_ACP_TOKEN
 * (principal `default`) unless only `--jwks` is given; plus `--jwks`. A file or key set that
 * cannot be used is a UsageError naming the line or key (exit 2).
 */
export async function listenIdentities(
  options: Pick<ServeOptions, "tokenFile" | "jwt" | "workspaceRoot">,
  env: NodeJS.ProcessEnv,
  logger: Logger,
  quotas: QuotaPolicy = new QuotaPolicy({}),
): Promise<ListenIdentities> {
  let jwt: JwtVerifier | undefined;
  if (options.jwt !== undefined) {
    try {
      // A token's agentkit_quota claim sets its principal's limits (an unusable claim: the operator's).
      jwt = await jwtVerifier({ ...options.jwt, onVerified: (principal, claims) => quotas.noteClaim(principal, quotasFromClaim(claims[JWT_QUOTA_CLAIM])) });
    } catch (error) {
      throw new UsageError(errorMessage(error));
    }
  }
  const file = options.tokenFile;
  if (file !== undefined) {
    const first = readTokenFile(file, logger);
    const tokens = new BearerTokens(first);
    quotas.setFileOverrides(fileQuotas(first));
    const reload = (log: Logger): void => {
      try {
        const next = readTokenFile(file, log);
        // A rotation must not add principals to an instance without workspaces (see requireWorkspaceRoot).
        requireWorkspaceRoot(jwt ? Infinity : new Set(next.map((t) => t.principal)).size, options.workspaceRoot);
        tokens.replace(next);
        quotas.setFileOverrides(fileQuotas(next));
        log.info(`--token-file re-read: ${tokens.size} token(s) for ${tokens.principals().length} principal(s)`);
      } catch (error) {
        log.warn(`--token-file not re-read; the previous tokens stay in use: ${errorMessage(error)}`);
      }
    };
    return { tokens, ...(jwt ? { jwt } : {}), reload };
  }
  const token = env.AGENTKIT_ACP_TOKEN?.trim();
  if (token) return { tokens: new BearerTokens([{ principal: DEFAULT_PRINCIPAL, token }]), ...(jwt ? { jwt } : {}) };
  if (jwt) return { tokens: new BearerTokens([]), jwt };
  throw new UsageError("--listen needs a bearer token: set AGENTKIT_ACP_TOKEN or pass --token-file FILE (or --jwks with --jwt-issuer and --jwt-audience)");
}

/** The quota= column of each principal in a token file. */
function fileQuotas(tokens: readonly BearerToken[]): Map<string, QuotaLimits> {
  return new Map(tokens.flatMap((t) => (t.quota ? [[t.principal, t.quota] as const] : [])));
}

function readTokenFile(file: string, logger: Logger): BearerToken[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
    // Tokens are secrets: a file others can read is worth a warning (not an error: the operator decides).
    if ((statSync(file).mode & 0o077) !== 0) logger.warn(`--token-file ${file} can be read by group or others; chmod 600 it`);
  } catch (error) {
    throw new UsageError(`--token-file ${file}: ${errorMessage(error)}`);
  }
  try {
    return parseTokenFile(text, `--token-file ${file}`);
  } catch (error) {
    throw new UsageError(errorMessage(error));
  }
}

/** How many principals may connect: the token file's names, or unbounded with JWTs. */
export function principalCount(identities: ListenIdentities): number {
  return identities.jwt ? Infinity : identities.tokens.principals().length;
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
  identities: ListenIdentities;
  options: Pick<ServeOptions, "maxConnections" | "maxMessageBytes" | "drainTimeoutMs">;
  metrics: ServiceMetrics;
  /** The store can be used right now (`/readyz`). */
  ready: () => Promise<boolean>;
  /** Releases the store's leases and connections once serving stopped. */
  close: () => Promise<void>;
  logger: Logger;
  /** The command's stderr (an address that cannot be used is said there). */
  stderr: NodeJS.WritableStream;
  /**
   * Set when the command does not own the process (in-process, tests): no signal handlers and no
   * exit timer; serving stops at once, running turns cancelled, when this input ends.
   */
  input?: NodeJS.ReadableStream;
}

/**
 * Serves until SIGTERM/SIGINT, which drain: no new connections or sessions, running turns get
 * `--drain-timeout` to finish, then the rest is cancelled. A second signal stops at once (as the
 * end of `input` does in-process). Returns the exit code (2 when the address cannot be used).
 */
export async function serveListening(context: ListenContext): Promise<number> {
  const { logger, address, options } = context;
  let service: AcpHttpService;
  try {
    service = await AcpHttpService.listen({
      runtime: context.runtime,
      tokens: context.identities.tokens,
      ...(context.identities.jwt ? { jwt: context.identities.jwt } : {}),
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
    context.stderr.write(`agentkit-acp serve: ${error.message}\n`);
    return 2;
  }
  logger.info(`listening on ${service.url} (HTTP and WebSocket; /healthz, /readyz, /metrics)`);
  const stopped = new Promise<void>((resolve) => {
    const input = context.input;
    if (input) {
      input.once("end", () => {
        logger.info("input ended: cancelling running turns and exiting");
        void service.close().finally(resolve);
      });
      input.resume();
      return;
    }
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
    const reload = context.identities.reload;
    // Rotation without restart: new requests use the new tokens; open connections and turns go on.
    if (reload) process.on("SIGHUP", () => reload(logger));
    process.on("SIGTERM", () => stop("SIGTERM"));
    process.on("SIGINT", () => stop("SIGINT"));
  });
  await stopped;
  logger.info("stopped serving; exiting");
  if (!context.input) setTimeout(() => process.exit(0), 2_000).unref();
  // Leases go back at once rather than expiring (another instance can take the sessions now).
  await context.close().catch((error: unknown) => logger.warn("closing the store failed", { error: errorMessage(error) }));
  return 0;
}
