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
