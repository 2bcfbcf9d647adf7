import { RequestError } from "@agentclientprotocol/sdk/unstable";
import { parseModelSpec, providers } from "../../model/index.js";
import { DEFAULT_PRINCIPAL } from "./principal.js";

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

/**
 * A provider route set through the unstable `providers/set`: the protocol, base URL and headers model requests then
 * use.
 */
export interface AcpProviderConfig {
  apiType: string;
  baseUrl: string;
  /** Sent with every model request (e.g. a gateway's authorization); never reported back. */
  headers: Record<string, string>;
}

/**
 * The unstable `providers/*` methods (advertised as `providers: {}` when a runtime has one):
 * `set` and `disable` throw a `RequestError` (-32602) for what they refuse. `principal` is the
 * calling connection's: a route one principal sets is never another's.
 */
export interface AcpProviders {
  list(principal?: string): AcpProviderInfo[];
  set(providerId: string, config: AcpProviderConfig, principal?: string): void | Promise<void>;
  disable(providerId: string, principal?: string): void | Promise<void>;
}

/** The route in use for a principal; `operator` when it is the one the operator configured. */
export type ProviderRoute = AcpProviderConfig & { operator: boolean };

/** The provider id of the session model's provider. */
export const MAIN_PROVIDER_ID = "main";

/**
 * Provider routing for one model spec: provider `main` (required) with the spec's protocol.
 * `providers/set main` changes the base URL and headers the model is called with, for the
 * calling principal only; `current(principal)` is read when a session's model is built, so that
 * principal's sessions opened afterwards use it. A route a client set is marked `operator:
 * false`: the server's own credentials are never sent on it. Undefined for specs without a
 * remote provider (the demo model).
 */
export function modelSpecProviders(spec: string, baseUrl: string): (AcpProviders & { current(principal?: string): ProviderRoute }) | undefined {
  const protocol = providers[parseModelSpec(spec).provider].protocol;
  if (protocol === undefined) return undefined;
  const operator: AcpProviderConfig = { apiType: protocol, baseUrl, headers: {} };
  // Bounded by the principals that can authenticate (token file, JWT subjects).
  const routes = new Map<string, AcpProviderConfig>();
  const route = (principal = DEFAULT_PRINCIPAL): AcpProviderConfig => routes.get(principal) ?? operator;
  const known = (providerId: string): void => {
    if (providerId !== MAIN_PROVIDER_ID) throw RequestError.invalidParams({ providerId }, `unknown provider "${providerId}" (this agent has "${MAIN_PROVIDER_ID}")`);
  };
  return {
    list: (principal) => [{ providerId: MAIN_PROVIDER_ID, supported: [protocol], required: true, current: { apiType: route(principal).apiType, baseUrl: route(principal).baseUrl } }],
    set(providerId, next, principal = DEFAULT_PRINCIPAL) {
      known(providerId);
      if (next.apiType !== protocol) throw RequestError.invalidParams({ apiType: next.apiType }, `provider "${providerId}" speaks ${protocol}, not ${next.apiType}`);
      if (!URL.canParse(next.baseUrl) || !/^https?:$/.test(new URL(next.baseUrl).protocol)) {
        throw RequestError.invalidParams({ baseUrl: next.baseUrl }, `baseUrl must be an http(s) URL, got "${next.baseUrl}"`);
      }
      const headers = next.headers ?? {};
      if (typeof headers !== "object" || Object.values(headers).some((v) => typeof v !== "string")) throw RequestError.invalidParams({}, "headers must map names to strings");
      routes.set(principal, { apiType: protocol, baseUrl: next.baseUrl, headers: { ...headers } });
    },
    disable(providerId) {
      known(providerId);
      throw RequestError.invalidParams({ providerId }, `provider "${providerId}" is required (it runs the sessions' model) and cannot be disabled`);
    },
    current: (principal) => {
      const config = route(principal);
      return { ...config, headers: { ...config.headers }, operator: config === operator };
    },
  };
}
