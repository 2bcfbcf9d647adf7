import { basename } from "node:path";
import type { Logger } from "../core/index.js";
import type { ModelAdapter, ModelTimeouts } from "../model/index.js";
import { createModelAdapter, credentialStatus, parseModelSpec, pickDefaultModelSpec, resolveBaseUrl } from "../model/index.js";
import { envApiKeyAuthentication, type AcpAuthentication, type ApiKeySlot } from "../acp/agent/auth.js";
import { DEFAULT_PRINCIPAL } from "../acp/agent/principal.js";
import { modelSpecProviders, type AcpProviders, type ProviderRoute } from "../acp/agent/providers.js";

/** The API key placeholder on a client-set route (never a server credential). */
const CLIENT_ROUTE_KEY = "client-route";
import type { AcpModelChoice, AcpModelOptions } from "../acp/agent/config-options.js";

/** Where the models of a served session come from. */
export interface ServeModelSource {
  /** For the start-up log line. */
  label: string;
  /** Shown beside the choice in the `model` config option. */
  description?: string;
  /** A model for one of `principal`'s sessions (its provider route; a scripted model restarts per session). */
  create(principal?: string): ModelAdapter;
  /** `env-api-key` for providers that need a key; nothing for demo, local and scripted models. */
  authentication: AcpAuthentication;
  /** providers/* routing of the model's provider (base URL, headers); none for demo and scripted. */
  providers?: AcpProviders;
}

/**
 * Resolves a spec the library does not know itself (the CLI's `scripted:FILE.json`), or
 * returns undefined to let the provider specs handle it.
 */
export type ServeModelResolver = (spec: string) => ServeModelSource | undefined;

/**
 * The model part of `ServeRuntimeOptions`: the starting model, the further choices, the base URL
 * and time bounds, and a resolver for specs the library does not know.
 */
export interface ServeModelInputs {
  /** The starting model (`provider:model` or `demo`); default: `pickDefaultModelSpec(env)`. */
  model?: string | undefined;
  /** Further choices offered through the `model` config option. */
  models?: string[];
  baseUrl?: string | undefined;
  resolver?: ServeModelResolver | undefined;
  /** Time bounds of every model call (defaults: see `ModelTimeouts`). */
  timeouts?: ModelTimeouts | undefined;
}

/** The starting model and the `model` config option of a served agent. */
export interface ServeModels {
  primary: ServeModelSource;
  options: AcpModelOptions;
}

/**
 * Builds the models `serve` offers. Throws (a ConfigError or ModelError) when the starting model
 * cannot be configured; an extra spec without a key in the environment is left out, with a warning.
 */
export function serveModels(inputs: ServeModelInputs, env: NodeJS.ProcessEnv, logger: Logger): ServeModels {
  const primary = primarySource(inputs, env, logger);
  const primarySpec = inputs.model ?? pickDefaultModelSpec(env).spec;
  const choices: AcpModelChoice[] = [{ id: primarySpec, name: nameFor(primarySpec), create: (principal) => primary.create(principal) }];
  for (const spec of inputs.models ?? []) {
    if (choices.some((c) => c.id === spec)) continue;
    const choice = extraChoice(spec, inputs, env, logger);
    if (choice) choices.push(choice);
  }
  return { primary, options: { choices, initial: primarySpec } };
}

function primarySource(inputs: ServeModelInputs, env: NodeJS.ProcessEnv, logger: Logger): ServeModelSource {
  const custom = inputs.model === undefined ? undefined : inputs.resolver?.(inputs.model);
  if (custom) return custom;
  const choice = inputs.model === undefined ? pickDefaultModelSpec(env) : { spec: inputs.model, reason: "--model / AGENTKIT_MODEL" };
  const parsed = parseModelSpec(choice.spec);
  const providers = parsed.provider === "demo" ? undefined : modelSpecProviders(choice.spec, resolveBaseUrl(parsed, inputs.baseUrl, env));
  // A key typed on the key page (URL elicitation) lives here, in memory, per principal; logout clears it.
  const slots = new Map<string, ApiKeySlot>();
  const slot = (principal = DEFAULT_PRINCIPAL): ApiKeySlot => slots.get(principal) ?? slots.set(principal, { value: undefined }).get(principal)!;
  const key = (principal?: string): string | undefined => credentialStatus(parsed, { env, apiKey: slot(principal).value }).apiKey;
  const make = (apiKey: string | undefined, route: ProviderRoute | undefined): ModelAdapter => {
    const baseUrl = route?.baseUrl ?? inputs.baseUrl;
    const common = { spec: choice.spec, ...(baseUrl ? { baseUrl } : {}), ...(route ? { headers: route.headers } : {}), timeouts: inputs.timeouts, logger };
    // A route a client set never receives the server's credentials (neither the environment's key
    // nor one typed on the key page): the client authenticates through its own headers.
    if (route && !route.operator) return createModelAdapter({ ...common, apiKey: CLIENT_ROUTE_KEY, env: {} });
    return createModelAdapter({ ...common, ...(apiKey ? { apiKey } : {}), env });
  };
  const adapters = new Map<string, { adapter: ModelAdapter; routed: string }>();
  const label = make(key(), providers?.current()).id;
  return {
    label: `${label} (${choice.reason})`,
    create: (principal = DEFAULT_PRINCIPAL) => {
      const route = providers?.current(principal);
      const routed = JSON.stringify(route ?? null);
      // After providers/set changed the principal's route, its sessions opened from now on use it.
      let entry = adapters.get(principal);
      if (entry?.routed !== routed) adapters.set(principal, (entry = { adapter: make(key(principal), route), routed }));
      if (route && !route.operator) return entry.adapter;
      return followKey(entry.adapter, () => key(principal), (apiKey) => make(apiKey, route));
    },
    authentication: envApiKeyAuthentication(choice.spec, { env: () => env, keySlot: slot }),
    ...(providers ? { providers } : {}),
  };
}

/**
 * The session's model on its route, rebuilt when the key changes (typed on the key page, or
 * forgotten at logout) so an open session uses the key the human just gave.
 */
function followKey(initial: ModelAdapter, key: () => string | undefined, make: (apiKey: string | undefined) => ModelAdapter): ModelAdapter {
  let current = initial;
  let used = key();
  return {
    id: initial.id,
    capabilities: initial.capabilities,
    preload: () => current.preload?.(),
    stream(request, signal) {
      const now = key();
      if (now !== used) [current, used] = [make(now), now];
      return current.stream(request, signal);
    },
  };
}

function extraChoice(spec: string, inputs: ServeModelInputs, env: NodeJS.ProcessEnv, logger: Logger): AcpModelChoice | undefined {
  const custom = inputs.resolver?.(spec);
  if (custom) return { id: spec, name: nameFor(spec), ...(custom.description ? { description: custom.description } : {}), create: () => custom.create() };
  const credentials = credentialStatus(parseModelSpec(spec), { env });
  if (credentials.problem !== undefined) {
    logger.warn(`--models ${spec} is not offered: ${credentials.problem}`);
    return undefined;
  }
  const adapter = createModelAdapter({ spec, ...(inputs.baseUrl ? { baseUrl: inputs.baseUrl } : {}), timeouts: inputs.timeouts, env, logger });
  return { id: spec, name: nameFor(spec), create: () => adapter };
}

function nameFor(spec: string): string {
  if (spec.startsWith("scripted:")) return `scripted ${basename(spec.slice("scripted:".length))}`;
  return spec === "demo" ? "demo (not an LLM)" : spec;
}
