import { resolve } from "node:path";
import { parseArgs } from "node:util";
import type { LogLevel, SandboxLimits, SandboxMode } from "../core/index.js";
import { sandboxModes } from "../core/index.js";
import type { ModelTimeouts } from "../model/index.js";
import type { PermissionMode } from "../tools/index.js";
import { permissionModes } from "../tools/index.js";
import { checkStoreUrl } from "../store/backends.js";

import type { ApproveMode } from "../acp/agent/serve.js";
import { CLIENT_MCP_POLICIES, modeCeilingFor, type ClientMcpPolicy } from "../acp/agent/serve-bounds.js";
import { ACP_PROTOCOL_CHOICES, type AcpProtocolChoice } from "../acp/agent/protocol.js";
import { DEFAULT_KEY_PAGE_LIFETIME_MS } from "../acp/agent/credential-elicitation.js";
import { parseQuotas, type QuotaLimits } from "../acp/agent/quota-limits.js";
import { parseDurationMs } from "./duration.js";
import { UsageError, parseArgsUsageError } from "./usage.js";

const approveModes: readonly ApproveMode[] = ["ask", "auto-reads", "auto-all", "deny"];
const logLevels: readonly LogLevel[] = ["debug", "info", "warn", "error", "silent"];

export interface ServeOptions {
  help: boolean;
  /** From --model or AGENTKIT_MODEL; undefined → pickDefaultModelSpec. */
  model: string | undefined;
  baseUrl: string | undefined;
  approve: ApproveMode;
  maxSessions: number;
  logLevel: LogLevel;
  /** --local-tools: run file and shell tools here even when the client offers fs/terminal. */
  localTools: boolean;
  /** --mcp-startup-timeout: bound on each session MCP server's start-up (ms). */
  mcpStartupTimeoutMs: number;
  /** --mcp-call-timeout: bound on each MCP tool call, reset by the server's progress (ms). */
  mcpCallTimeoutMs: number;
  /** --mode: the mode sessions start in (default: implied by --approve). */
  mode: PermissionMode | undefined;
  /** --models (repeatable, comma-separated): further model choices. */
  models: string[];
  /** --state-dir (else the environment's default). */
  stateDir: string | undefined;
  /** false with --no-persist. */
  persist: boolean;
  /** --store or AGENTKIT_STORE_URL: a postgres:// URL; undefined → files under the state dir. */
  storeUrl: string | undefined;
  /** --lease-ttl: the PostgreSQL session lease's time to live (default: the store's, 10 s). */
  leaseTtlMs: number | undefined;
  /** false with --no-approval-memory. */
  approvalMemory: boolean;
  clearApprovalMemory: boolean;
  /** --model-timeout, --model-connect-timeout, --model-first-byte-timeout, --model-idle-timeout (ms). */
  modelTimeouts: ModelTimeouts;
  /** --coalesce-ms: merge consecutive text/thought chunks within this window (0 = off). */
  coalesceMs: number;
  /** --max-message-bytes: longest accepted incoming JSON-RPC message (stdio line, HTTP body, WebSocket message). */
  maxMessageBytes: number;
  /** --client-timeout: bound on each fs/terminal request to the client (ms). */
  clientTimeoutMs: number;
  /** --trace-context: whether a client's `_meta.traceparent` parents our spans (default honor; ignore with --listen). */
  traceContext: "honor" | "ignore";
  /** --key-page-timeout: lifetime of the key page (ms); 0 = no key page (default with --listen). */
  keyPageMs: number;
  /** --listen [HOST:]PORT: serve over HTTP/WebSocket instead of stdio. */
  listen: ListenAddress | undefined;
  /** --token-file: the bearer tokens, `NAME TOKEN` per line or one bare token (else AGENTKIT_ACP_TOKEN). */
  tokenFile: string | undefined;
  /** --jwks FILE|URL with --jwt-issuer, --jwt-audience, --jwt-principal-claim: bearer JWTs. */
  jwt: { jwks: string; issuer: string; audience: string; principalClaim: string } | undefined;
  /** --max-connections (with --listen). */
  maxConnections: number;
  /** --drain-timeout: on SIGTERM, how long running turns may go on (ms, with --listen). */
  drainTimeoutMs: number;
  /** --protocol: ACP versions served (v1 | v2 | auto). */
  protocol: AcpProtocolChoice;
  /** --sandbox[=MODE]: where the agent's commands run (default workspace with --listen, off on stdio). */
  sandboxMode: SandboxMode;
  /** --sandbox-limit NAME=VALUE,…: per-command bounds over the defaults. */
  sandboxLimits: Partial<SandboxLimits>;
  /** --child-env NAME,…: further variables of serve's environment its children get. */
  childEnvNames: string[];
  /** --workspace-root: each principal's sessions confined to DIR/<principal>/. */
  workspaceRoot: string | undefined;
  /** --client-mcp: MCP servers a client may name (default http with --listen, all on stdio). */
  clientMcp: ClientMcpPolicy;
  /** --client-mcp-private (always on stdio): client http/sse MCP URLs may reach non-public addresses. */
  clientMcpPrivate: boolean;
  /** --quota NAME=VALUE,…: per-principal limits across the instances on the store. */
  quotaLimits: QuotaLimits;
  /** --audit-retain: audit records older than this are pruned (ms; 0 keeps them; default 30 days). */
  auditRetainMs: number | undefined;
}

export interface ListenAddress {
  host: string;
  port: number;
}

export const serveHelp = `Usage: agentkit-acp serve [options]

Serves the agentkit agent over the Agent Client Protocol on stdin/stdout — the command an
editor (Zed, JetBrains, acpx, …) launches. stdout carries only ACP messages; logs go to stderr.
When stdin closes it answers the requests already read (running turns are cancelled and
answer "cancelled"; at most 3 s), then exits 0; SIGTERM/SIGINT cancel running turns
(their prompts answer "cancelled") and exit.

Options:
  --model provider:model   the model, e.g. anthropic:claude-sonnet-4-5, openai:gpt-4.1,
                           openrouter:anthropic/claude-sonnet-4.5, ollama:qwen3,
                           openai-compatible:NAME (with --base-url), or demo.
                           Default: AGENTKIT_MODEL, else the first provider whose key is set
                           (ANTHROPIC_API_KEY, OPENAI_API_KEY, OPENROUTER_API_KEY), else the
                           labelled demo model (no LLM; its first reply says how to configure one).
  --base-url URL           provider base URL (default: AGENTKIT_BASE_URL, else the provider's)
  --approve WHO            who answers what the session's mode asks about (default: ask):
                             ask         the editor (session/request_permission; "always"
                                         answers are remembered per workspace)
                             auto-reads  the same as ask (older name)
                             auto-all    approved without asking; sessions start in auto-edit
                             deny        refused without asking; sessions start in read-only
                                         and cannot leave it (--mode above read-only: exit 2)
  --mode MODE              the mode new sessions start in (default: as --approve implies)
                           and, when given, the most the editor may switch to (modes above it
                           are not offered; session/set_mode or /mode to one is refused):
                             ask         reads inside the workspace run; edits and commands ask
                             auto-edit   edits inside the workspace run too; commands ask
                             read-only   reads run; edits and commands are refused
                           Paths outside the session's workspace roots are refused in every mode.
  --models SPEC[,SPEC]     further models the editor may switch to (the "model" config option;
                           repeatable). A provider whose key is not set is left out (warning).
  --state-dir DIR          where sessions and remembered approvals are kept (default:
                           AGENTKIT_STATE_DIR, else $XDG_STATE_HOME/agentkit-acp, else
                           ~/.local/state/agentkit-acp)
  --no-persist             keep sessions and approvals in memory only (nothing is written;
                           sessions cannot be loaded after a restart; with --listen a session
                           is forgotten once no connection has it open)
  --store URL              keep sessions, remembered approvals and session leases in PostgreSQL:
                           postgres://USER:PASSWORD@HOST:PORT/DATABASE (default:
                           AGENTKIT_STORE_URL, else files under the state directory). Tables are
                           created/migrated at start; instances sharing a database share
                           sessions, and a session is open on one instance at a time
  --lease-ttl MS           with --store: how long an instance's hold on an open session lasts
                           unless renewed (renewed every third of it; default 10000). A session
                           of an instance that died is free again within this time
  --no-approval-memory     do not offer "always allow / always reject"; remember nothing
  --clear-approval-memory  forget every remembered approval at start-up, then serve
  --max-sessions N         open sessions allowed at once (default 32)
  --local-tools            run the file and shell tools on this machine even when the editor
                           offers its file system (fs/*) or terminals (terminal/*); by default
                           they are used when offered (unsaved buffers, the editor's terminal)
  --mcp-startup-timeout MS bound on each MCP server's start-up from session/new (default 10000);
                           a server that fails or hangs is skipped with a warning
  --mcp-call-timeout MS    bound on each MCP tool call, reset by the server's progress
                           (default 600000); then the call fails with a tool error saying so
                           (for acp servers the request is cancelled with $/cancel_request)
  --model-timeout MS       budget for getting a model reply going, retries included
                           (default 120000); then the turn ends with an error naming the bound
  --model-connect-timeout MS     request sent → response headers (default 30000)
  --model-first-byte-timeout MS  response headers → first streamed data (default 90000)
  --model-idle-timeout MS  longest silence between two streamed chunks (default 90000)
  --coalesce-ms MS         merge consecutive text/thought chunks of one message for up to MS
                           (default 0 = one update per model delta); fewer, larger updates
                           for fast models; tool calls, plans and permission requests are
                           never held back
  --max-message-bytes N    longest incoming JSON-RPC message in bytes (default 33554432 = 32 MiB);
                           over stdio a longer line is answered with a -32600 error and the
                           connection goes on; with --listen a larger request body gets HTTP 413
                           and a larger WebSocket message closes that socket (1009)
  --client-timeout MS      bound on each file or terminal request to the editor (fs/*,
                           terminal/create, output, kill, release; default 30000): a late answer
                           fails that tool call with a clear message and the turn goes on.
                           A command's own timeout is kept however slow the editor is;
                           permission questions wait for the human (cancel ends them)
  --protocol v1|v2|auto    ACP versions served (default v1). auto: the v2 draft to a client whose
                           initialize asks for 2, v1 to the others; v2: only the v2 draft (a v1
                           client's initialize gets -32022). Over stdio and --listen alike
  --key-page-timeout MS    when the model's key is missing and the editor can show a URL
                           (elicitation.url), a prompt opens a one-shot page on 127.0.0.1 where
                           the human pastes the key (kept in memory; logout forgets it); the
                           page closes after MS (default 600000; 0 = off: such prompts answer
                           "auth required"). Off by default with --listen (the human is
                           usually on another machine)
  --sandbox[=MODE]         where the commands the agent runs (the shell tool on this machine, stdio
                           MCP servers it starts) run: workspace = in an OS sandbox (bubblewrap on
                           Linux, sandbox-exec on macOS): the session's cwd and additionalDirectories
                           writable, system directories read-only, nothing else visible (no home
                           directories, other workspaces, state directory), a private /tmp, no
                           network, own process namespace (nothing outlives the call; the server
                           cannot be signalled), the --sandbox-limit bounds. off = as the server's
                           user. Default: workspace with --listen, off on stdio; --sandbox alone
                           means workspace. No engine installed → exit 2 naming what to install.
                           See docs/sandbox.md
  --sandbox-limit NAME=VALUE[,NAME=VALUE]  per-command bounds in the sandbox: cpu=SECONDS (300),
                           memory=MIB address space per process (4096), processes=N at once (256),
                           tmp=MIB of /tmp (256), file=MIB largest file written (1024)
  --child-env NAME[,NAME]  variables of serve's environment that commands and MCP servers get too
                           (repeatable). By default they get only PATH, HOME, USER, LOGNAME, SHELL,
                           LANG, LANGUAGE, LC_*, TERM, TZ, TMPDIR and colour settings: never the
                           bearer token, the store URL or provider keys unless named here
  --workspace-root DIR     confine sessions: each principal's cwd and additionalDirectories must
                           be inside DIR/<principal>/ after symlinks (made 0700 on first use;
                           the stdio and single-token principal is "default"); anything else
                           is refused (-32602 naming the field). /proc, /sys and /dev are never
                           a workspace, with or without it. Required with --listen when more
                           than one principal can connect
  --client-mcp none|http|all
                           MCP servers the client may name in session/new: none; http (http,
                           sse and acp servers; a stdio server is refused with -32602, so no
                           client names a command this machine runs); all (stdio too).
                           Default: http with --listen, all on stdio
  --client-mcp-private     with --listen: let client http/sse MCP URLs reach loopback, private
                           (RFC 1918, ULA, CGNAT), link-local, multicast or unspecified addresses
                           (refused by default: the host is resolved and any such address
                           refuses it). Always allowed on stdio (the editor is the operator's)
  --quota NAME=VALUE[,NAME=VALUE]  per-principal limits shared by every instance on the store:
                           sessions (open at once), turns (running at once), prompts-per-minute,
                           tokens-per-day (model tokens, UTC day). Over one: JSON-RPC -32600 with
                           data.reason "quota_exceeded", data.limit and data.retryAfterMs; a
                           running turn is never cut. A token file's "quota=…" column or a JWT's
                           "agentkit_quota" claim replaces these for its principal (docs/service.md)
  --log-level LEVEL        debug | info | warn | error | silent (default info; stderr)
  --trace-context honor|ignore  whether a client's _meta.traceparent parents this agent's spans
                           (default honor over stdio, ignore with --listen: a remote client
                           cannot then join or steer the operator's traces). Tracing itself is
                           off unless OTEL_EXPORTER_OTLP_ENDPOINT / OTEL_TRACES_EXPORTER=otlp
                           is set (docs/tracing.md)
  -h, --help               show this help

Serving over the network (instead of stdio):
  --listen [HOST:]PORT     serve ACP over HTTP and WebSocket at http://HOST:PORT/acp
                           (HOST default 127.0.0.1; 0.0.0.0 for every interface; PORT 0 picks
                           a free one, logged at start-up). Every request to /acp and /metrics
                           needs "Authorization: Bearer TOKEN"; GET /healthz and /readyz do not.
  --token-file FILE        bearer tokens: one "NAME TOKEN" pair per line (# comments), each
                           NAME a principal owning its sessions, approvals, provider routes;
                           a file with one bare token acts for principal "default". Re-read on
                           SIGHUP (default: AGENTKIT_ACP_TOKEN, principal "default")
  --jwks FILE|URL          also accept bearer JWTs (RS256, ES256, EdDSA) signed by these keys
                           (a URL is cached and refetched on an unknown kid); needs:
  --jwt-issuer ISS         the required "iss"
  --jwt-audience AUD       the required "aud"
  --jwt-principal-claim C  the claim naming the principal (default sub)
  --max-connections N      open ACP connections allowed at once; more get HTTP 503 (default 256)
  --audit-retain AGE       audit records older than AGE (30d, 12h …; 0 keeps them) are deleted at
                           start and hourly (default 30d). The audit trail is recorded in the
                           store with --listen; read it with agentkit-acp audit
  --drain-timeout MS       on SIGTERM: no new connections or sessions, running turns may finish
                           for this long, then they are cancelled and serve exits (default 30000)

Environment:
  AGENTKIT_MODEL           model spec when --model is not given
  AGENTKIT_BASE_URL        base URL when --base-url is not given
  AGENTKIT_STORE_URL       PostgreSQL store URL when --store, --state-dir and --no-persist are not given
  AGENTKIT_ACP_TOKEN       the bearer token for --listen (when --token-file is not given)
  OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_TRACES_EXPORTER, OTEL_EXPORTER_OTLP_PROTOCOL, OTEL_SERVICE_NAME,
  OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER   OpenTelemetry traces over OTLP/HTTP (docs/tracing.md)
  ANTHROPIC_API_KEY, OPENAI_API_KEY, OPENROUTER_API_KEY, AGENTKIT_API_KEY   provider keys

Testing only: --model scripted:FILE.json plays a fixed JSON script instead of a model
(see src/testing/scripted-script.ts); it exists for the test suite and bench/stream.ts.
`;

export function parseServeOptions(argv: string[], env: Readonly<Record<string, string | undefined>>): ServeOptions {
  let values: Record<string, string | boolean | string[] | undefined>;
  try {
    ({ values } = parseArgs({
      args: bareSandboxFlag(argv),
      strict: true,
      allowPositionals: false,
      options: {
        model: { type: "string" },
        "base-url": { type: "string" },
        approve: { type: "string" },
        "max-sessions": { type: "string" },
        "log-level": { type: "string" },
        "local-tools": { type: "boolean" },
        "mcp-startup-timeout": { type: "string" },
        "mcp-call-timeout": { type: "string" },
        mode: { type: "string" },
        models: { type: "string", multiple: true },
        "state-dir": { type: "string" },
        "no-persist": { type: "boolean" },
        store: { type: "string" },
        "lease-ttl": { type: "string" },
        "no-approval-memory": { type: "boolean" },
        "clear-approval-memory": { type: "boolean" },
        "model-timeout": { type: "string" },
        "model-connect-timeout": { type: "string" },
        "model-first-byte-timeout": { type: "string" },
        "model-idle-timeout": { type: "string" },
        "coalesce-ms": { type: "string" },
        listen: { type: "string" },
        protocol: { type: "string" },
        "token-file": { type: "string" },
        jwks: { type: "string" },
        "jwt-issuer": { type: "string" },
        "jwt-audience": { type: "string" },
        "jwt-principal-claim": { type: "string" },
        "max-connections": { type: "string" },
        "drain-timeout": { type: "string" },
        "max-message-bytes": { type: "string" },
        "client-timeout": { type: "string" },
        "key-page-timeout": { type: "string" },
        sandbox: { type: "string" },
        "sandbox-limit": { type: "string", multiple: true },
        "child-env": { type: "string", multiple: true },
        "workspace-root": { type: "string" },
        "client-mcp": { type: "string" },
        "client-mcp-private": { type: "boolean" },
        quota: { type: "string", multiple: true },
        "audit-retain": { type: "string" },
        "trace-context": { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (error) {
    throw parseArgsUsageError(error);
  }
  const approve = (values.approve as string | undefined) ?? "ask";
  if (!approveModes.includes(approve as ApproveMode)) throw new UsageError(`--approve must be one of ${approveModes.join(", ")} (got "${approve}")`);
  const logLevel = (values["log-level"] as string | undefined) ?? "info";
  if (!logLevels.includes(logLevel as LogLevel)) throw new UsageError(`--log-level must be one of ${logLevels.join(", ")} (got "${logLevel}")`);
  const number = (flag: string, min: 0 | 1, unit?: "milliseconds" | "bytes"): number | undefined => wholeNumber(values[flag] as string | undefined, flag, min, unit);
  const ms = (flag: string, min: 0 | 1): number | undefined => number(flag, min, "milliseconds");
  const maxSessions = number("max-sessions", 1) ?? 32;
  const mcpStartupTimeoutMs = ms("mcp-startup-timeout", 1) ?? 10_000;
  const maxMessageBytes = number("max-message-bytes", 1, "bytes") ?? 33_554_432;
  const mode = values.mode as string | undefined;
  if (mode !== undefined && !permissionModes.includes(mode as PermissionMode)) throw new UsageError(`--mode must be one of ${permissionModes.join(", ")} (got "${mode}")`);
  const stateDir = values["state-dir"] as string | undefined;
  if (stateDir !== undefined && stateDir.trim() === "") throw new UsageError("--state-dir needs a directory");
  const model = nonEmpty(values.model as string | undefined) ?? nonEmpty(env.AGENTKIT_MODEL);
  if (values.model !== undefined && nonEmpty(values.model as string) === undefined) throw new UsageError("--model needs a value such as anthropic:claude-sonnet-4-5 or demo");
  const storeUrl = storeUrlFrom(values, env);
  const baseUrl = nonEmpty(values["base-url"] as string | undefined);
  if (baseUrl !== undefined && !URL.canParse(baseUrl)) throw new UsageError(`--base-url must be a URL such as http://127.0.0.1:11434/v1 (got "${baseUrl}")`);
  const clientTimeoutMs = ms("client-timeout", 1) ?? 30_000;
  const leaseTtlMs = ms("lease-ttl", 1);
  if (leaseTtlMs !== undefined && storeUrl === undefined) throw new UsageError("--lease-ttl only applies with --store (PostgreSQL): leases of one process need no expiry");
  if (leaseTtlMs !== undefined && leaseTtlMs < 1_000) throw new UsageError(`--lease-ttl must be at least 1000 ms (got "${leaseTtlMs}"): renewals must fit in it`);
  const modelTimeouts: ModelTimeouts = {
    totalMs: ms("model-timeout", 1),
    connectMs: ms("model-connect-timeout", 1),
    firstByteMs: ms("model-first-byte-timeout", 1),
    idleMs: ms("model-idle-timeout", 1),
  };
  const listenText = values.listen as string | undefined;
  const listen = listenText === undefined ? undefined : parseListen(listenText);
  if (listen === undefined) {
    for (const flag of ["token-file", "jwks", "max-connections", "drain-timeout", "audit-retain"]) {
      if (values[flag] !== undefined) throw new UsageError(`--${flag} only applies with --listen`);
    }
  }
  const tokenFile = values["token-file"] as string | undefined;
  if (tokenFile !== undefined && tokenFile.trim() === "") throw new UsageError("--token-file needs a file");
  const workspaceRoot = values["workspace-root"] as string | undefined;
  if (workspaceRoot !== undefined && workspaceRoot.trim() === "") throw new UsageError("--workspace-root needs a directory");
  const clientMcp = (values["client-mcp"] as string | undefined) ?? (listen ? "http" : "all");
  if (!CLIENT_MCP_POLICIES.includes(clientMcp as ClientMcpPolicy)) throw new UsageError(`--client-mcp must be one of ${CLIENT_MCP_POLICIES.join(", ")} (got "${clientMcp}")`);
  try {
    modeCeilingFor(approve as ApproveMode, mode as PermissionMode | undefined);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const traceContext = (values["trace-context"] as string | undefined) ?? (listen ? "ignore" : "honor");
  if (traceContext !== "honor" && traceContext !== "ignore") throw new UsageError(`--trace-context must be honor or ignore (got "${traceContext}")`);
  const jwt = jwtOptions(values);
  const protocol = (values.protocol as string | undefined) ?? "v1";
  if (!(ACP_PROTOCOL_CHOICES as readonly string[]).includes(protocol)) throw new UsageError(`--protocol must be one of ${ACP_PROTOCOL_CHOICES.join(", ")} (got "${protocol}")`);
  const sandboxMode = (values.sandbox as string | undefined) ?? (listen ? "workspace" : "off");
  if (!sandboxModes.includes(sandboxMode as SandboxMode)) throw new UsageError(`--sandbox must be one of ${sandboxModes.join(", ")} (got "${sandboxMode}")`);
  const childEnvNames = splitModelSpecs((values["child-env"] as string[] | undefined) ?? []);
  for (const name of childEnvNames) if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new UsageError(`--child-env takes variable names such as NODE_OPTIONS,GOPATH (got "${name}")`);
  return {
    sandboxMode: sandboxMode as SandboxMode,
    sandboxLimits: parseSandboxLimits((values["sandbox-limit"] as string[] | undefined) ?? []),
    childEnvNames,
    protocol: protocol as AcpProtocolChoice,
    listen,
    tokenFile: tokenFile === undefined ? undefined : resolve(tokenFile),
    jwt,
    maxConnections: number("max-connections", 1) ?? 256,
    drainTimeoutMs: number("drain-timeout", 1) ?? 30_000,
    help: values.help === true,
    modelTimeouts,
    coalesceMs: ms("coalesce-ms", 0) ?? 0,
    model,
    baseUrl,
    approve: approve as ApproveMode,
    maxSessions,
    logLevel: logLevel as LogLevel,
    localTools: values["local-tools"] === true,
    mcpStartupTimeoutMs,
    mcpCallTimeoutMs: number("mcp-call-timeout", 1) ?? 600_000,
    mode: mode as PermissionMode | undefined,
    models: splitModelSpecs((values.models as string[] | undefined) ?? []),
    stateDir: stateDir === undefined ? undefined : resolve(stateDir),
    persist: values["no-persist"] !== true,
    storeUrl,
    leaseTtlMs,
    approvalMemory: values["no-approval-memory"] !== true,
    clearApprovalMemory: values["clear-approval-memory"] === true,
    maxMessageBytes,
    clientTimeoutMs,
    traceContext,
    keyPageMs: ms("key-page-timeout", 0) ?? (listen ? 0 : DEFAULT_KEY_PAGE_LIFETIME_MS),
    workspaceRoot: workspaceRoot === undefined ? undefined : resolve(workspaceRoot),
    clientMcp: clientMcp as ClientMcpPolicy,
    clientMcpPrivate: values["client-mcp-private"] === true || listen === undefined,
    quotaLimits: quotaOptions((values.quota as string[] | undefined) ?? []),
    auditRetainMs: values["audit-retain"] === undefined ? undefined : parseDurationMs(values["audit-retain"] as string, "--audit-retain"),
  };
}

/** Every --quota, later ones overriding earlier names. */
function quotaOptions(values: readonly string[]): QuotaLimits {
  try {
    return Object.assign({}, ...values.map((v) => parseQuotas(v))) as QuotaLimits;
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** `--sandbox` without a value means `--sandbox=workspace` (parseArgs wants a value for a string option). */
function bareSandboxFlag(argv: string[]): string[] {
  return argv.map((arg, i) => (arg === "--sandbox" && !(sandboxModes as readonly string[]).includes(argv[i + 1] ?? "") ? "--sandbox=workspace" : arg));
}

const limitUnits: Record<string, { key: keyof SandboxLimits; scale: number }> = {
  cpu: { key: "cpuSeconds", scale: 1 },
  memory: { key: "memoryBytes", scale: 1024 * 1024 },
  processes: { key: "processes", scale: 1 },
  tmp: { key: "tmpBytes", scale: 1024 * 1024 },
  file: { key: "fileBytes", scale: 1024 * 1024 },
};

/** `cpu=60,memory=2048` → { cpuSeconds: 60, memoryBytes: 2 GiB }. */
export function parseSandboxLimits(values: readonly string[]): Partial<SandboxLimits> {
  const limits: Partial<SandboxLimits> = {};
  for (const pair of splitModelSpecs(values)) {
    const [name = "", text = ""] = pair.split("=", 2);
    const unit = limitUnits[name];
    if (!unit || !/^\d+$/.test(text) || Number(text) < 1) {
      throw new UsageError(`--sandbox-limit takes NAME=VALUE with NAME one of ${Object.keys(limitUnits).join(", ")} and a positive whole number (got "${pair}")`);
    }
    limits[unit.key] = Number(text) * unit.scale;
  }
  return limits;
}

/** `--jwks` and its companions: all three of jwks, issuer and audience, or none. */
function jwtOptions(values: Record<string, unknown>): ServeOptions["jwt"] {
  const get = (flag: string): string | undefined => nonEmpty(values[flag] as string | undefined);
  const jwks = get("jwks");
  const companions = ["jwt-issuer", "jwt-audience", "jwt-principal-claim"];
  if (jwks === undefined) {
    const stray = companions.find((f) => values[f] !== undefined);
    if (stray !== undefined || values.jwks !== undefined) throw new UsageError(stray ? `--${stray} only applies with --jwks` : "--jwks needs a file or an http(s) URL");
    return undefined;
  }
  const issuer = get("jwt-issuer");
  const audience = get("jwt-audience");
  if (issuer === undefined || audience === undefined) throw new UsageError("--jwks needs --jwt-issuer ISS and --jwt-audience AUD (tokens are checked against both)");
  return { jwks: /^https?:\/\//i.test(jwks) ? jwks : resolve(jwks), issuer, audience, principalClaim: get("jwt-principal-claim") ?? "sub" };
}

/** `--listen PORT`, `HOST:PORT` or `[IPv6]:PORT`. */
export function parseListen(text: string): ListenAddress {
  const bad = (why: string): UsageError => new UsageError(`--listen "${text}": ${why}; use PORT, HOST:PORT or [IPv6]:PORT, e.g. --listen 127.0.0.1:8080`);
  const match = /^(?:\[([0-9a-fA-F:.]+)\]:|([^:[\]\s]+):)?(\d+)$/.exec(text.trim());
  if (!match) throw bad("not an address");
  const port = Number(match[3]);
  if (!Number.isInteger(port) || port > 65_535) throw bad("the port must be 0–65535");
  return { host: match[1] ?? match[2] ?? "127.0.0.1", port };
}

/** A whole-number flag's value (undefined when absent); `unit` words the message, else "integer". */
function wholeNumber(text: string | undefined, flag: string, min: 0 | 1, unit?: "milliseconds" | "bytes"): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < min || !Number.isSafeInteger(value)) {
    const sign = min > 0 ? "a positive" : "a non-negative";
    throw new UsageError(`--${flag} must be ${unit ? `${sign} number of ${unit}` : `${sign} integer`} (got "${text}")`);
  }
  return value;
}

/** --store wins; AGENTKIT_STORE_URL applies unless --state-dir or --no-persist chose otherwise. */
export function storeUrlFrom(values: Record<string, unknown>, env: Readonly<Record<string, string | undefined>>): string | undefined {
  const flag = values.store as string | undefined;
  if (flag !== undefined) {
    if (values["no-persist"] === true) throw new UsageError("--store and --no-persist exclude each other: choose where sessions are kept");
    if (values["state-dir"] !== undefined) throw new UsageError("--store and --state-dir exclude each other: sessions go to PostgreSQL or to files, not both");
  }
  const url = nonEmpty(flag) ?? (values["no-persist"] === true || values["state-dir"] !== undefined ? undefined : nonEmpty(env.AGENTKIT_STORE_URL));
  if (flag !== undefined && url === undefined) throw new UsageError("--store needs a URL such as postgres://USER:PASSWORD@HOST:5432/DATABASE");
  if (url === undefined) return undefined;
  try {
    checkStoreUrl(url);
  } catch (error) {
    throw new UsageError(`${flag !== undefined ? "--store" : "AGENTKIT_STORE_URL"}: ${(error as Error).message}`);
  }
  return url;
}

/** `--models a,b --models c` → ["a", "b", "c"] (trimmed, empty entries dropped). */
function splitModelSpecs(values: readonly string[]): string[] {
  return values.flatMap((v) => v.split(",")).map((s) => s.trim()).filter((s) => s.length > 0);
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value.trim();
}
