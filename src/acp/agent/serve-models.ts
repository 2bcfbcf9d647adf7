import { basename } from "node:path";
import type { Logger } from "../../core/index.js";
import type { ModelAdapter, ModelTimeouts } from "../../model/index.js";
import { createModelAdapter, credentialStatus, parseModelSpec, pickDefaultModelSpec, resolveBaseUrl } from "../../model/index.js";
import { envApiKeyAuthentication, type AcpAuthentication, type ApiKeySlot } from "./auth.js";
import { modelSpecProviders, type AcpProviders } from "./providers.js";
import type { AcpModelChoice, AcpModelOptions } from "./config-options.js";

/** Where the models of a served session come from. */
export interface ServeModelSource {
  /** For the start-up log line. */
  label: string;
  /** Shown beside the choice in the `model` config option. */
  description?: string;
  /** A model for one session (a scripted model restarts per session; real adapters are shared). */
  create(): ModelAdapter;
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
  const choices: AcpModelChoice[] = [{ id: primarySpec, name: nameFor(primarySpec), create: () => primary.create() }];
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
  const routing = (): string => JSON.stringify(providers?.current() ?? null);
  // A key typed on the key page (URL elicitation) lives here, in memory; logout clears it.
  const slot: ApiKeySlot = { value: undefined };
  const key = (): string | undefined => credentialStatus(parsed, { env, apiKey: slot.value }).apiKey;
  const make = (apiKey: string | undefined, route = providers?.current()): ModelAdapter => {
    const baseUrl = route?.baseUrl ?? inputs.baseUrl;
    return createModelAdapter({ spec: choice.spec, ...(baseUrl ? { baseUrl } : {}), ...(route ? { headers: route.headers } : {}), ...(apiKey ? { apiKey } : {}), timeouts: inputs.timeouts, env, logger });
  };
  let adapter = make(key());
  let routed = routing();
  return {
    label: `${adapter.id} (${choice.reason})`,
    create: () => {
      // After providers/set changed the route, sessions opened from now on use it.
      if (routing() !== routed) [adapter, routed] = [make(key()), routing()];
      const route = providers?.current();
      return followKey(adapter, key, (apiKey) => make(apiKey, route));
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
