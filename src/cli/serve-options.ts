import { resolve } from "node:path";
import type { NetAllowEntry, SandboxLimits, SandboxMode } from "../core/index.js";
import { sandboxModes, type LogLevel } from "../core/index.js";
import { defaultModelTimeouts, providers, type ModelTimeouts } from "../model/index.js";
import { permissionModes, type PermissionMode } from "../tools/index.js";
import { APPROVE_MODES, SERVE_DEFAULTS } from "../serve/defaults.js";
import { CLIENT_MCP_POLICIES, modeCeilingFor, type ClientMcpPolicy } from "../serve/bounds.js";
import { ACP_PROTOCOL_CHOICES } from "../acp/agent/protocol.js";
import { parseQuotas, type QuotaLimits } from "../acp/agent/quota-limits.js";
import { UsageError } from "./usage.js";
import { sandboxNetOption } from "./sandbox-net-flag.js";
import { formatAge, parseAge, storeUrlFrom } from "./store-option.js";
import { DEFAULT_LEASE_TTL_MS } from "../store/leases.js";
import { DEFAULT_PRUNE_BATCH, DEFAULT_RETAIN_INTERVAL_MS } from "../store/retention.js";
import { listOption, parseCommandLine, read, renderHelp, splitList, switchOption, textOption, withDefault, type CommandSchema, type Env, type OptionValues } from "./options.js";

// `agentkit-acp serve`: every flag declared once below (flag, value, help, variable, default,
// reader). Adding a flag: an entry here, and its use where serve runs (a `createServeRuntime`
// option of the same name needs nothing more: the options are passed on whole).

const logLevels: readonly LogLevel[] = ["debug", "info", "warn", "error", "silent"];
const ms = (min: 0 | 1 = 1): ReturnType<typeof read.whole> => read.whole(min, "milliseconds");
const listen = { section: "listen" };
const keyVariables = Object.values(providers).flatMap((p) => (p.keyEnv ? [p.keyEnv] : []));

const options = {
  model: textOption("model", "provider:model", `the model, e.g. anthropic:claude-sonnet-4-5, openai:gpt-4.1,
openrouter:anthropic/claude-sonnet-4.5, ollama:qwen3,
openai-compatible:NAME (with --base-url), or demo.
Default: AGENTKIT_MODEL, else the first provider whose key is set
(${keyVariables.join(", ")}), else the
labelled demo model (no LLM; its first reply says how to configure one).`, {
    parse: read.nonBlank("a value such as anthropic:claude-sonnet-4-5 or demo"),
    env: { name: "AGENTKIT_MODEL", help: "model spec when --model is not given" },
  }),
  baseUrl: textOption("base-url", "URL", `provider base URL (default: AGENTKIT_BASE_URL, else the provider's)`, {
    parse: (text, flag) => {
      if (text.trim() !== "" && !URL.canParse(text.trim())) throw new UsageError(`${flag} must be a URL such as http://127.0.0.1:11434/v1 (got "${text.trim()}")`);
      return text.trim() === "" ? undefined : text.trim();
    },
    env: { name: "AGENTKIT_BASE_URL", help: "base URL when --base-url is not given", fallback: false },
  }),
  approve: withDefault(textOption("approve", "WHO", `who answers what the session's mode asks about (default: {default}):
  ask         the editor (session/request_permission; "always"
              answers are remembered per workspace)
  auto-reads  the same as ask (older name)
  auto-all    approved without asking; sessions start in auto-edit
  deny        refused without asking; sessions start in read-only
              and cannot leave it (--mode above read-only: exit 2)`, { parse: read.oneOf(APPROVE_MODES) }), SERVE_DEFAULTS.approve),
  mode: textOption<PermissionMode>("mode", "MODE", `the mode new sessions start in (default: as --approve implies)
and, when given, the most the editor may switch to (modes above it
are not offered; session/set_mode or /mode to one is refused):
  ask         reads inside the workspace run; edits and commands ask
  auto-edit   edits inside the workspace run too; commands ask
  read-only   reads run; edits and commands are refused
Paths outside the session's workspace roots are refused in every mode.`, { parse: read.oneOf(permissionModes) }),
  models: listOption("models", "SPEC[,SPEC]", `further models the editor may switch to (the "model" config option;
repeatable). A provider whose key is not set is left out (warning).`),
  stateDir: textOption("state-dir", "DIR", `where sessions and remembered approvals are kept (default:
AGENTKIT_STATE_DIR, else $XDG_STATE_HOME/agentkit-acp, else
~/.local/state/agentkit-acp)`, { parse: (text, flag) => resolve(read.nonBlank("a directory")(text, flag)) }),
  noPersist: switchOption("no-persist", `keep sessions and approvals in memory only (nothing is written;
sessions cannot be loaded after a restart; with --listen a session
is forgotten once no connection has it open)`),
  store: textOption("store", "URL", `keep sessions, remembered approvals and session leases in PostgreSQL:
postgres://USER:PASSWORD@HOST:PORT/DATABASE (default:
AGENTKIT_STORE_URL, else files under the state directory). Tables are
created/migrated at start; instances sharing a database share
sessions, and a session is open on one instance at a time`, {
    env: { name: "AGENTKIT_STORE_URL", help: "PostgreSQL store URL when --store, --state-dir and --no-persist are not given", fallback: false },
  }),
  leaseTtlMs: withDefault(textOption("lease-ttl", "MS", `with --store: how long an instance's hold on an open session lasts
unless renewed (renewed every third of it; default {default}). A session
of an instance that died is free again within this time`, { parse: ms() }), DEFAULT_LEASE_TTL_MS),
  retainMs: textOption("retain", "AGE", `delete sessions not updated for AGE (30d, 12h, 90m; a bare number is
days): a sweep at start-up, then every --retain-interval, at most
${DEFAULT_PRUNE_BATCH} sessions a run. Sessions open on any instance are kept; archived
ones age like the others. Each deletion is logged (docs/sessions.md;
\`agentkit-acp sessions prune\` does it by hand)`, { parse: parseAge }),
  retainIntervalMs: textOption("retain-interval", "MS", `with --retain: time between sweeps (default ${DEFAULT_RETAIN_INTERVAL_MS}, an hour)`, {
    parse: ms(),
    env: { name: "AGENTKIT_RETAIN_INTERVAL_MS", help: "--retain-interval when it is not given" },
  }),
  noApprovalMemory: switchOption("no-approval-memory", `do not offer "always allow / always reject"; remember nothing`),
  clearApprovalMemory: switchOption("clear-approval-memory", `forget every remembered approval at start-up, then serve`),
  maxSessions: withDefault(textOption("max-sessions", "N", `open sessions allowed at once (default {default})`, { parse: read.whole(1) }), SERVE_DEFAULTS.maxSessions),
  localTools: switchOption("local-tools", `run the file and shell tools on this machine even when the editor
offers its file system (fs/*) or terminals (terminal/*); by default
they are used when offered (unsaved buffers, the editor's terminal)`),
  mcpStartupTimeoutMs: withDefault(textOption("mcp-startup-timeout", "MS", `bound on each MCP server's start-up from session/new (default {default});
a server that fails or hangs is skipped with a warning`, { parse: ms() }), SERVE_DEFAULTS.mcpStartupTimeoutMs),
  mcpCallTimeoutMs: withDefault(textOption("mcp-call-timeout", "MS", `bound on each MCP tool call, reset by the server's progress
(default {default}); then the call fails with a tool error saying so
(for acp servers the request is cancelled with $/cancel_request)`, { parse: read.whole(1) }), SERVE_DEFAULTS.mcpCallTimeoutMs),
  modelTimeout: withDefault(textOption("model-timeout", "MS", `budget for getting a model reply going, retries included
(default {default}); then the turn ends with an error naming the bound`, { parse: ms() }), defaultModelTimeouts.totalMs),
  modelConnectTimeout: withDefault(textOption("model-connect-timeout", "MS", `request sent → response headers (default {default})`, { parse: ms(), label: "--model-connect-timeout MS   " }), defaultModelTimeouts.connectMs),
  modelFirstByteTimeout: withDefault(textOption("model-first-byte-timeout", "MS", `response headers → first streamed data (default {default})`, { parse: ms() }), defaultModelTimeouts.firstByteMs),
  modelIdleTimeout: withDefault(textOption("model-idle-timeout", "MS", `longest silence between two streamed chunks (default {default})`, { parse: ms() }), defaultModelTimeouts.idleMs),
  coalesceMs: withDefault(textOption("coalesce-ms", "MS", `merge consecutive text/thought chunks of one message for up to MS
(default {default} = one update per model delta); fewer, larger updates
for fast models; tool calls, plans and permission requests are
never held back`, { parse: ms(0) }), SERVE_DEFAULTS.coalesceMs),
  maxMessageBytes: withDefault(textOption("max-message-bytes", "N", `longest incoming JSON-RPC message in bytes (default {default} = 32 MiB);
over stdio a longer line is answered with a -32600 error and the
connection goes on; with --listen a larger request body gets HTTP 413
and a larger WebSocket message closes that socket (1009)`, { parse: read.whole(1, "bytes") }), SERVE_DEFAULTS.maxMessageBytes),
  clientTimeoutMs: withDefault(textOption("client-timeout", "MS", `bound on each file or terminal request to the editor (fs/*,
terminal/create, output, kill, release; default {default}): a late answer
fails that tool call with a clear message and the turn goes on.
A command's own timeout is kept however slow the editor is;
permission questions wait for the human (cancel ends them)`, { parse: ms() }), SERVE_DEFAULTS.clientTimeoutMs),
  protocol: withDefault(textOption("protocol", "v1|v2|auto", `ACP versions served (default {default}). auto: the v2 draft to a client whose
initialize asks for 2, v1 to the others; v2: only the v2 draft (a v1
client's initialize gets -32022). Over stdio and --listen alike`, { parse: read.oneOf(ACP_PROTOCOL_CHOICES) }), "v1"),
  keyPageMs: textOption("key-page-timeout", "MS", `when the model's key is missing and the editor can show a URL
(elicitation.url), a prompt opens a one-shot page on 127.0.0.1 where
the human pastes the key (kept in memory; logout forgets it); the
page closes after MS (default ${SERVE_DEFAULTS.keyPageMs}; 0 = off: such prompts answer
"auth required"). Off by default with --listen (the human is
usually on another machine)`, { parse: ms(0) }),
  sandboxMode: textOption<SandboxMode>("sandbox", "MODE", `where the commands the agent runs (the shell tool on this machine, stdio
MCP servers it starts) run: workspace = in an OS sandbox (bubblewrap on
Linux, sandbox-exec on macOS): the session's cwd and additionalDirectories
writable, system directories read-only, nothing else visible (no home
directories, other workspaces, state directory), a private /tmp, no
network, own process namespace (nothing outlives the call; the server
cannot be signalled), the --sandbox-limit bounds. off = as the server's
user. Default: workspace with --listen, off on stdio; --sandbox alone
means workspace. No engine installed → exit 2 naming what to install.
See docs/sandbox.md`, { label: "--sandbox[=MODE]", parse: read.oneOf(sandboxModes), bare: { value: "workspace", choices: sandboxModes } }),
  sandboxLimits: listOption("sandbox-limit", "NAME=VALUE[,NAME=VALUE]", `per-command bounds in the sandbox: cpu=SECONDS (300),
memory=MIB address space per process (4096), processes=N at once (256),
tmp=MIB of /tmp (256), file=MIB largest file written (1024)`),
  sandboxNet: listOption("sandbox-net", "allow=HOST[:PORT],…", `what sandboxed commands may reach
(repeatable; *.domain = its sub-domains; no port = any port), through a
proxy outside the sandbox (HTTP_PROXY/HTTPS_PROXY are set for them).
Loopback and private addresses only when named as an address or
localhost; this server's own listeners never. Default: no network`, { split: false }),
  childEnvNames: listOption("child-env", "NAME[,NAME]", `variables of serve's environment that commands and MCP servers get too
(repeatable). By default they get only PATH, HOME, USER, LOGNAME, SHELL,
LANG, LANGUAGE, LC_*, TERM, TZ, TMPDIR and colour settings: never the
bearer token, the store URL or provider keys unless named here`, {
    item: (name, flag) => {
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new UsageError(`${flag} takes variable names such as NODE_OPTIONS,GOPATH (got "${name}")`);
      return name;
    },
  }),
  workspaceRoot: textOption("workspace-root", "DIR", `confine sessions: each principal's cwd and additionalDirectories must
be inside DIR/<principal>/ after symlinks (made 0700 on first use;
the stdio and single-token principal is "default"); anything else
is refused (-32602 naming the field). /proc, /sys and /dev are never
a workspace, with or without it. Required with --listen when more
than one principal can connect`, { parse: (text, flag) => resolve(read.nonBlank("a directory")(text, flag)) }),
  clientMcp: textOption<ClientMcpPolicy>("client-mcp", "none|http|all", `
MCP servers the client may name in session/new: none; http (http,
sse and acp servers; a stdio server is refused with -32602, so no
client names a command this machine runs); all (stdio too).
Default: http with --listen, all on stdio`, { parse: read.oneOf(CLIENT_MCP_POLICIES) }),
  clientMcpPrivate: switchOption("client-mcp-private", `with --listen: let client http/sse MCP URLs reach loopback, private
(RFC 1918, ULA, CGNAT), link-local, multicast or unspecified addresses
(refused by default: the host is resolved and any such address
refuses it). Always allowed on stdio (the editor is the operator's)`),
  quota: listOption("quota", "NAME=VALUE[,NAME=VALUE]", `per-principal limits shared by every instance on the store:
sessions (open at once), turns (running at once), prompts-per-minute,
tokens-per-day (model tokens, UTC day). Over one: JSON-RPC -32600 with
data.reason "quota_exceeded", data.limit and data.retryAfterMs; a
running turn is never cut. A token file's "quota=…" column or a JWT's
"agentkit_quota" claim replaces these for its principal (docs/service.md)`, {
    split: false,
    item: (text, flag) => {
      try {
        return parseQuotas(text, flag);
      } catch (error) {
        throw new UsageError((error as Error).message);
      }
    },
  }),
  logLevel: withDefault(textOption("log-level", "LEVEL", `debug | info | warn | error | silent (default {default}; stderr)`, { parse: read.oneOf(logLevels) }), "info"),
  traceContext: textOption("trace-context", "honor|ignore", `whether a client's _meta.traceparent parents this agent's spans
(default honor over stdio, ignore with --listen: a remote client
cannot then join or steer the operator's traces). Tracing itself is
off unless OTEL_EXPORTER_OTLP_ENDPOINT / OTEL_TRACES_EXPORTER=otlp
is set (docs/tracing.md)`, { parse: read.oneOf(["honor", "ignore"] as const, "honor or ignore") }),
  help: switchOption("help", `show this help`, { short: "h" }),
  listen: textOption("listen", "[HOST:]PORT", `serve ACP over HTTP and WebSocket at http://HOST:PORT/acp
(HOST default 127.0.0.1; 0.0.0.0 for every interface; PORT 0 picks
a free one, logged at start-up). Every request to /acp and /metrics
needs "Authorization: Bearer TOKEN"; GET /healthz and /readyz do not.`, { ...listen, parse: (text) => parseListen(text) }),
  tokenFile: textOption("token-file", "FILE", `bearer tokens: one "NAME TOKEN" pair per line (# comments), each
NAME a principal owning its sessions, approvals, provider routes;
a file with one bare token acts for principal "default". Re-read on
SIGHUP (default: AGENTKIT_ACP_TOKEN, principal "default")`, {
    ...listen,
    parse: (text, flag) => resolve(read.nonBlank("a file")(text, flag)),
    env: { name: "AGENTKIT_ACP_TOKEN", help: "the bearer token for --listen (when --token-file is not given)", fallback: false },
  }),
  jwks: textOption("jwks", "FILE|URL", `also accept bearer JWTs (RS256, ES256, EdDSA) signed by these keys
(a URL is cached and refetched on an unknown kid); needs:`, { ...listen, parse: (text) => text.trim() }),
  jwtIssuer: textOption("jwt-issuer", "ISS", `the required "iss"`, { ...listen, parse: (text) => text.trim() }),
  jwtAudience: textOption("jwt-audience", "AUD", `the required "aud"`, { ...listen, parse: (text) => text.trim() }),
  jwtPrincipalClaim: textOption("jwt-principal-claim", "C", `the claim naming the principal (default sub)`, { ...listen, parse: (text) => text.trim() }),
  maxConnections: withDefault(textOption("max-connections", "N", `open ACP connections allowed at once; more get HTTP 503 (default {default})`, { ...listen, parse: read.whole(1) }), SERVE_DEFAULTS.maxConnections),
  auditRetainMs: textOption("audit-retain", "AGE", `audit records older than AGE (30d, 12h, 90m; 0 keeps them) are deleted at
start and hourly (default ${formatAge(SERVE_DEFAULTS.auditRetainMs)}). The audit trail is recorded in the
store with --listen; read it with agentkit-acp audit`, { ...listen, parse: (text, flag) => (text.trim() === "0" ? 0 : parseAge(text, flag)) }),
  drainTimeoutMs: withDefault(textOption("drain-timeout", "MS", `on SIGTERM: no new connections or sessions, running turns may finish
for this long, then they are cancelled and serve exits (default {default})`, { ...listen, parse: read.whole(1) }), SERVE_DEFAULTS.drainTimeoutMs),
};

export const serveSchema: CommandSchema<typeof options> = {
  command: "serve",
  intro: `Usage: agentkit-acp serve [options]

Serves the agentkit agent over the Agent Client Protocol on stdin/stdout — the command an
editor (Zed, JetBrains, acpx, …) launches. stdout carries only ACP messages; logs go to stderr.
When stdin closes it answers the requests already read (running turns are cancelled and
answer "cancelled"; at most 3 s), then exits 0; SIGTERM/SIGINT cancel running turns
(their prompts answer "cancelled") and exit.

`,
  options,
  sections: { main: "Options:", listen: "Serving over the network (instead of stdio):" },
  environment: [
    "OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_TRACES_EXPORTER, OTEL_EXPORTER_OTLP_PROTOCOL, OTEL_SERVICE_NAME,",
    "OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER   OpenTelemetry traces over OTLP/HTTP (docs/tracing.md)",
    `${[...keyVariables, "AGENTKIT_API_KEY"].join(", ")}   provider keys`,
  ],
  outro: `Testing only: --model scripted:FILE.json plays a fixed JSON script instead of a model
(see src/testing/scripted-script.ts); it exists for the test suite and bench/stream.ts.
`,
};

export const serveHelp = renderHelp(serveSchema);

export interface ListenAddress {
  host: string;
  port: number;
}

type Given = OptionValues<typeof options>;
/** The flags that are read together into one field below. */
type Grouped = "quota" | "noPersist" | "store" | "noApprovalMemory" | "modelTimeout" | "modelConnectTimeout" | "modelFirstByteTimeout" | "modelIdleTimeout" | "jwks" | "jwtIssuer" | "jwtAudience" | "jwtPrincipalClaim" | "sandboxLimits" | "sandboxNet";

/** What `serve` runs with: each flag's typed value, with the defaults that depend on other flags (`--listen`) filled in. */
export interface ServeOptions extends Omit<Given, Grouped | "keyPageMs" | "sandboxMode" | "clientMcp" | "traceContext"> {
  /** false with --no-persist. */
  persist: boolean;
  /** --store or AGENTKIT_STORE_URL (a URL a store backend takes); undefined → files under the state dir. */
  storeUrl: string | undefined;
  /** false with --no-approval-memory. */
  approvalMemory: boolean;
  /** --model-timeout, --model-connect-timeout, --model-first-byte-timeout, --model-idle-timeout (ms). */
  modelTimeouts: ModelTimeouts;
  /** --jwks FILE|URL with --jwt-issuer, --jwt-audience, --jwt-principal-claim: bearer JWTs. */
  jwt: { jwks: string; issuer: string; audience: string; principalClaim: string } | undefined;
  /** --sandbox-limit NAME=VALUE,…: per-command bounds over the defaults. */
  sandboxLimits: Partial<SandboxLimits>;
  /** --sandbox-net allow=HOST[:PORT],…: destinations sandboxed commands may reach (through the proxy). */
  sandboxNet: NetAllowEntry[];
  /** --key-page-timeout: 0 = no key page (default with --listen). */
  keyPageMs: number;
  /** --sandbox: default workspace with --listen, off on stdio. */
  sandboxMode: SandboxMode;
  /** --client-mcp: default http with --listen, all on stdio. */
  clientMcp: ClientMcpPolicy;
  /** --trace-context: default honor; ignore with --listen. */
  traceContext: "honor" | "ignore";
  /** Every --quota merged (a later name wins): per-principal limits across the instances on the store. */
  quotaLimits: QuotaLimits;
}

export function parseServeOptions(argv: string[], env: Env): ServeOptions {
  const { values: v, given } = parseCommandLine(serveSchema, argv, env);
  const listening = v.listen !== undefined;
  if (!listening) {
    for (const key of ["tokenFile", "jwks", "maxConnections", "drainTimeoutMs", "auditRetainMs"] as const) {
      if (given.has(key)) throw new UsageError(`--${options[key].flag} only applies with --listen`);
    }
  }
  const storeUrl = storeUrlFrom({ store: v.store, storeGiven: given.has("store"), stateDirGiven: given.has("stateDir"), noPersist: v.noPersist }, env);
  if (given.has("leaseTtlMs") && storeUrl === undefined) throw new UsageError("--lease-ttl only applies with --store (PostgreSQL): leases of one process need no expiry");
  if (given.has("retainIntervalMs") && v.retainMs === undefined) throw new UsageError("--retain-interval only applies with --retain");
  if (v.leaseTtlMs < 1_000) throw new UsageError(`--lease-ttl must be at least 1000 ms (got "${v.leaseTtlMs}"): renewals must fit in it`);
  try {
    modeCeilingFor(v.approve, v.mode);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { quota, noPersist, store: _store, noApprovalMemory, modelTimeout, modelConnectTimeout, modelFirstByteTimeout, modelIdleTimeout, jwks: _jwks, jwtIssuer: _i, jwtAudience: _a, jwtPrincipalClaim: _c, sandboxLimits, sandboxNet, ...rest } = v;
  const sandboxMode = v.sandboxMode ?? (listening ? "workspace" : "off");
  const netAllow = sandboxNetOption(sandboxNet);
  if (netAllow.length > 0 && sandboxMode === "off") throw new UsageError("--sandbox-net applies to sandboxed commands: it needs --sandbox (workspace)");
  return {
    ...rest,
    persist: !noPersist,
    storeUrl,
    approvalMemory: !noApprovalMemory,
    modelTimeouts: { totalMs: modelTimeout, connectMs: modelConnectTimeout, firstByteMs: modelFirstByteTimeout, idleMs: modelIdleTimeout },
    jwt: jwtOptions(v, given),
    sandboxLimits: parseSandboxLimits(sandboxLimits),
    sandboxNet: netAllow,
    keyPageMs: v.keyPageMs ?? (listening ? 0 : SERVE_DEFAULTS.keyPageMs),
    sandboxMode,
    clientMcp: v.clientMcp ?? (listening ? "http" : "all"),
    clientMcpPrivate: v.clientMcpPrivate || !listening,
    traceContext: v.traceContext ?? (listening ? "ignore" : "honor"),
    quotaLimits: Object.assign({}, ...quota) as QuotaLimits,
  };
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
  for (const pair of splitList(values)) {
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
function jwtOptions(v: Given, given: ReadonlySet<keyof Given>): ServeOptions["jwt"] {
  const nonEmpty = (text: string | undefined): string | undefined => (text === "" ? undefined : text);
  const jwks = nonEmpty(v.jwks);
  if (jwks === undefined) {
    const stray = (["jwtIssuer", "jwtAudience", "jwtPrincipalClaim"] as const).find((key) => given.has(key));
    if (stray !== undefined || given.has("jwks")) throw new UsageError(stray ? `--${options[stray].flag} only applies with --jwks` : "--jwks needs a file or an http(s) URL");
    return undefined;
  }
  const issuer = nonEmpty(v.jwtIssuer);
  const audience = nonEmpty(v.jwtAudience);
  if (issuer === undefined || audience === undefined) throw new UsageError("--jwks needs --jwt-issuer ISS and --jwt-audience AUD (tokens are checked against both)");
  return { jwks: /^https?:\/\//i.test(jwks) ? jwks : resolve(jwks), issuer, audience, principalClaim: nonEmpty(v.jwtPrincipalClaim) ?? "sub" };
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
