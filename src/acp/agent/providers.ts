import { RequestError } from "@agentclientprotocol/sdk/unstable";
import { parseModelSpec } from "../../model/index.js";

/** One configurable LLM provider, as the unstable `providers/list` reports it. */
export interface AcpProviderInfo {
  providerId: string;
  /** Protocols it can speak (`anthropic`, `openai`, …). */
  supported: string[];
  /** Cannot be disabled. */
  required: boolean;
  /** Non-secret routing; `null` = disabled. */
  current: { apiType: string; baseUrl: string } | null;
}

export interface AcpProviderConfig {
  apiType: string;
  baseUrl: string;
  /** Sent with every model request (e.g. a gateway's authorization); never reported back. */
  headers: Record<string, string>;
}

/**
 * The unstable `providers/*` methods (advertised as `providers: {}` when a runtime has one):
 * `set` and `disable` throw a `RequestError` (-32602) for what they refuse.
 */
export interface AcpProviders {
  list(): AcpProviderInfo[];
  set(providerId: string, config: AcpProviderConfig): void | Promise<void>;
  disable(providerId: string): void | Promise<void>;
}

/** The provider id of the session model's provider. */
export const MAIN_PROVIDER_ID = "main";

/** The protocol each of our model providers speaks. */
function protocolOf(provider: string): string | undefined {
  if (provider === "anthropic") return "anthropic";
  if (provider === "openai" || provider === "openrouter" || provider === "openai-compatible" || provider === "ollama") return "openai";
  return undefined;
}

/**
 * Provider routing for one model spec: provider `main` (required) with the spec's protocol.
 * `providers/set main` changes the base URL and headers the model is called with; `current()`
 * is read when a session's model is built, so sessions opened afterwards use it. Undefined
 * for specs without a remote provider (the demo model).
 */
export function modelSpecProviders(spec: string, baseUrl: string): (AcpProviders & { current(): AcpProviderConfig }) | undefined {
  const protocol = protocolOf(parseModelSpec(spec).provider);
  if (protocol === undefined) return undefined;
  let config: AcpProviderConfig = { apiType: protocol, baseUrl, headers: {} };
  const known = (providerId: string): void => {
    if (providerId !== MAIN_PROVIDER_ID) throw RequestError.invalidParams({ providerId }, `unknown provider "${providerId}" (this agent has "${MAIN_PROVIDER_ID}")`);
  };
  return {
    list: () => [{ providerId: MAIN_PROVIDER_ID, supported: [protocol], required: true, current: { apiType: config.apiType, baseUrl: config.baseUrl } }],
    set(providerId, next) {
      known(providerId);
      if (next.apiType !== protocol) throw RequestError.invalidParams({ apiType: next.apiType }, `provider "${providerId}" speaks ${protocol}, not ${next.apiType}`);
      if (!URL.canParse(next.baseUrl) || !/^https?:$/.test(new URL(next.baseUrl).protocol)) {
        throw RequestError.invalidParams({ baseUrl: next.baseUrl }, `baseUrl must be an http(s) URL, got "${next.baseUrl}"`);
      }
      const headers = next.headers ?? {};
      if (typeof headers !== "object" || Object.values(headers).some((v) => typeof v !== "string")) throw RequestError.invalidParams({}, "headers must map names to strings");
      config = { apiType: protocol, baseUrl: next.baseUrl, headers: { ...headers } };
    },
    disable(providerId) {
      known(providerId);
      throw RequestError.invalidParams({ providerId }, `provider "${providerId}" is required (it runs the sessions' model) and cannot be disabled`);
    },
    current: () => ({ ...config, headers: { ...config.headers } }),
  };
}
