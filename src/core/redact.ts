export const REDACTED = "[redacted]";

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function redactPairs(list: unknown): unknown {
  if (!Array.isArray(list)) return list;
  return list.map((p: unknown) => (isObject(p) && "value" in p ? { ...p, value: REDACTED } : p));
}

function redactMcpServers(servers: unknown): unknown {
  if (!Array.isArray(servers)) return servers;
  return servers.map((s: unknown) => {
    if (!isObject(s)) return s;
    const out: Json = { ...s };
    if ("env" in out) out.env = redactPairs(out.env);
    if ("headers" in out) out.headers = redactPairs(out.headers);
    return out;
  });
}

const SESSION_METHODS = new Set(["session/new", "session/load", "session/resume", "session/fork"]);

/**
 * A copy of `message` without secrets: values of MCP server `env` and `headers`, every
 * `authenticate` param but `methodId`, and `terminal/create` env values. The wire itself is
 * never changed; this is what the page and the trace keep.
 */
export function redactMessage(message: unknown): unknown {
  if (!isObject(message) || typeof message.method !== "string" || !isObject(message.params)) return message;
  const params = message.params;
  if (SESSION_METHODS.has(message.method) && "mcpServers" in params) {
    return { ...message, params: { ...params, mcpServers: redactMcpServers(params.mcpServers) } };
  }
  if (message.method === "authenticate") {
    const out: Json = {};
    for (const [k, v] of Object.entries(params)) out[k] = k === "methodId" || k === "_meta" ? v : REDACTED;
    return { ...message, params: out };
  }
  if (message.method === "terminal/create" && "env" in params) {
    return { ...message, params: { ...params, env: redactPairs(params.env) } };
  }
  return message;
}

/**
 * Secret-shaped substrings of free text (prompts, model output, tool arguments) replaced by
 * `[redacted]`: bearer/basic credentials, provider API keys (OpenAI/Anthropic `sk-…`, AWS
 * `AKIA…`, GitHub, Slack, Google), JWTs, PEM private keys, and the value of `api_key=`,
 * `token:`, `password=`-style pairs. A heuristic: it errs towards redacting.
 */
export function redactSecrets(text: string): string {
  // One test instead of every pattern for the many strings with nothing secret-shaped (a
  // streamed turn's deltas): each pattern needs one of these words.
  if (!MAYBE_SECRET.test(text)) return text;
  let out = text;
  for (const [pattern, replacement] of SECRET_PATTERNS) out = out.replace(pattern, replacement);
  return out;
}

/** Deeper than this, a value is not walked but replaced (no real ACP message nests so far). */
const MAX_DEPTH = 64;

/**
 * `value` with every string in it (at any depth, not keys) passed through `redactSecrets`: what
 * the inspector keeps of a message or span besides the structural `redactMessage`. Copies only
 * what changed, so a message without secrets comes back as the same object.
 */
export function redactSecretsIn<T>(value: T): T {
  return walk(value, 0) as T;
}

function walk(value: unknown, depth: number): unknown {
  if (typeof value === "string") return redactSecrets(value);
  if (typeof value !== "object" || value === null) return value;
  if (depth >= MAX_DEPTH) return REDACTED;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    value.forEach((item: unknown, i) => {
      const r = walk(item, depth + 1);
      if (r !== item) (out ??= [...value])[i] = r;
    });
    return out ?? value;
  }
  let out: Json | undefined;
  for (const [k, v] of Object.entries(value)) {
    const r = walk(v, depth + 1);
    if (r !== v) (out ??= { ...(value as Json) })[k] = r;
  }
  return out ?? value;
}

const MAYBE_SECRET = /BEGIN|bearer|basic|token|eyJ|sk-|AKIA|ASIA|gh[pousr]_|github_pat_|xox|AIza|api[_-]?key|secret|passw|access[_-]?key/i;

const SECRET_PATTERNS: ReadonlyArray<readonly [RegExp, string]> = [
  [/-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g, REDACTED],
  [/\b(Bearer|Basic|Token)(\s+)[A-Za-z0-9._~+/=-]{8,}/gi, `$1$2${REDACTED}`],
  [/\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g, REDACTED],
  [/\bsk-[A-Za-z0-9_-]{16,}/g, REDACTED],
  [/\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g, REDACTED],
  [/\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})/g, REDACTED],
  [/\bxox[abprs]-[A-Za-z0-9-]{10,}/g, REDACTED],
  [/\bAIza[0-9A-Za-z_-]{30,}/g, REDACTED],
  [/\b((?:api[_-]?key|secret|token|password|passwd|access[_-]?key)\\?["']?\s*[:=]\s*\\?["']?)(?!\[redacted\])[^\s"'\\,;&]{6,}/gi, `$1${REDACTED}`],
];
