import { ModelError } from "./types.js";

import { keyedDefaultModels, providerRegistry, type ProviderDefinition, type ProviderName } from "./provider-registry.js";

export type { ProviderName } from "./provider-registry.js";

/** A parsed `provider:model` string. */
export interface ModelSpec {
  provider: ProviderName;
  /** The provider's model id (may itself contain `:` or `/`, e.g. `qwen2.5:0.5b`). */
  model: string;
  /** The normalized spec string, e.g. `anthropic:claude-sonnet-4-5` or `demo`. */
  spec: string;
}

/** A provider's definition (see provider-registry.ts). */
export type ProviderInfo = ProviderDefinition<ProviderName>;

/** The provider registry, by name. */
export const providers: Readonly<Record<ProviderName, ProviderInfo>> = providerRegistry;

const providerNames = Object.keys(providers) as ProviderName[];
const choices = `${providerNames.filter((n) => n !== "demo").join(", ")} (each as provider:model), or demo`;

function isProviderName(name: string): name is ProviderName {
  return (providerNames as string[]).includes(name);
}

/** Parses `provider:model` (or `demo`); throws a ModelError (kind `config`) that says how to fix it. */
export function parseModelSpec(spec: string): ModelSpec {
  const text = spec.trim();
  if (text === "") throw new ModelError("config", `empty model spec; use provider:model (e.g. anthropic:claude-sonnet-4-5) or demo`);
  if (text === "demo") return { provider: "demo", model: "demo", spec: "demo" };
  const colon = text.indexOf(":");
  if (colon < 0) {
    if (isProviderName(text)) {
      throw new ModelError("config", `model spec '${text}' names no model; use ${providers[text].example}`);
    }
    throw new ModelError("config", `model spec '${text}' has no provider; use provider:model with one of ${choices}`);
  }
  const provider = text.slice(0, colon).trim().toLowerCase();
  const model = text.slice(colon + 1).trim();
  if (!isProviderName(provider)) throw new ModelError("config", `unknown provider '${provider}' in '${text}'; use one of ${choices}`);
  if (provider === "demo") throw new ModelError("config", `the demo model takes no model name; use 'demo'`);
  if (model === "") throw new ModelError("config", `model spec '${text}' names no model; use ${providers[provider].example}`);
  return { provider, model, spec: `${provider}:${model}` };
}

/**
 * An environment to read keys and base URLs from (`process.env` or a copy), so that hosts and tests need not change
 * the process's own.
 */
export type Env = Readonly<Record<string, string | undefined>>;

/**
 * Where `credentialStatus` and `hasCredentials` look for a provider's key, in order: the
 * explicit key, the named variable, the provider's usual variable.
 */
export interface CredentialOptions {
  /** An explicit key (wins over every variable). */
  apiKey?: string;
  /** Name of an environment variable that holds the key (checked before the provider's usual one). */
  apiKeyEnv?: string;
  /** Defaults to `process.env`. */
  env?: Env;
}

/** What `credentialStatus` found: whether a key is needed, the key and where it came from, or the variable to set. */
export interface CredentialStatus {
  /** Whether the provider cannot work without a key. */
  needsKey: boolean;
  /** The key to send, if any. */
  apiKey?: string;
  /** Where the key came from (`apiKey option` or a variable name). */
  source?: string;
  /** The variable a user should set when a key is missing. */
  envVar?: string;
  /** Set when a needed key is missing: what to do about it. */
  problem?: string;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value.trim();
}

/**
 * Finds the key for a spec: `apiKey`, then `apiKeyEnv`, then the provider's usual variable
 * (ANTHROPIC_API_KEY, OPENAI_API_KEY, OPENROUTER_API_KEY), then AGENTKIT_API_KEY. Local
 * providers (ollama, openai-compatible) send a key only when one of these gives one.
 */
export function credentialStatus(spec: string | ModelSpec, options: CredentialOptions = {}): CredentialStatus {
  const parsed = typeof spec === "string" ? parseModelSpec(spec) : spec;
  const info = providers[parsed.provider];
  const env = options.env ?? process.env;
  const candidates: Array<[string, string | undefined]> = [
    ["apiKey option", options.apiKey],
    ...(options.apiKeyEnv ? [[options.apiKeyEnv, env[options.apiKeyEnv]] as [string, string | undefined]] : []),
    ...(info.keyEnv ? [[info.keyEnv, env[info.keyEnv]] as [string, string | undefined]] : []),
    ["AGENTKIT_API_KEY", env.AGENTKIT_API_KEY],
  ];
  const found = candidates.find(([, value]) => nonEmpty(value) !== undefined);
  const envVar = options.apiKeyEnv ?? info.keyEnv ?? "AGENTKIT_API_KEY";
  if (found) return { needsKey: info.needsKey, apiKey: nonEmpty(found[1]), source: found[0], envVar };
  if (!info.needsKey) return { needsKey: false, envVar };
  return {
    needsKey: true,
    envVar,
    problem: `${parsed.spec} needs an API key: set ${envVar}`,
  };
}

/** True when the provider of `spec` needs a key and none is available (the ACP "auth required" case). */
export function modelNeedsKey(spec: string | ModelSpec, env?: Env, apiKeyEnv?: string): boolean {
  return credentialStatus(spec, { env, apiKeyEnv }).problem !== undefined;
}

/** True when `spec` can be called: it needs no key, or a key is available. */
export function hasCredentials(spec: string | ModelSpec, options: CredentialOptions = {}): boolean {
  return credentialStatus(spec, options).problem === undefined;
}

/**
 * The base URL to call: `baseUrl` (e.g. from `--base-url`), then AGENTKIT_BASE_URL, then the
 * provider's default. Throws for `openai-compatible` without one.
 */
export function resolveBaseUrl(spec: ModelSpec, baseUrl: string | undefined, env: Env = process.env): string {
  const url = nonEmpty(baseUrl) ?? nonEmpty(env.AGENTKIT_BASE_URL) ?? providers[spec.provider].defaultBaseUrl;
  if (url === undefined) {
    throw new ModelError(
      "config",
      `${spec.spec} needs a base URL: pass --base-url or set AGENTKIT_BASE_URL (e.g. http://127.0.0.1:8080/v1 for llama-server, http://127.0.0.1:1234/v1 for LM Studio)`,
    );
  }
  try {
    new URL(url);
  } catch {
    throw new ModelError("config", `base URL '${url}' for ${spec.spec} is not a valid URL (e.g. http://127.0.0.1:11434/v1)`);
  }
  return url.replace(/\/+$/, "");
}

/** The model `pickDefaultModelSpec` chose from the environment, and why. */
export interface DefaultModelChoice {
  spec: string;
  /** Why this model was chosen, for logs and `--help` output. */
  reason: string;
}

const keyedDefaults = keyedDefaultModels();

/** AGENTKIT_MODEL if set; else the first provider whose key is present; else the demo model. */
export function pickDefaultModelSpec(env: Env = process.env): DefaultModelChoice {
  const configured = nonEmpty(env.AGENTKIT_MODEL);
  if (configured !== undefined) return { spec: configured, reason: "AGENTKIT_MODEL is set" };
  for (const [variable, spec] of keyedDefaults) {
    if (nonEmpty(env[variable]) !== undefined) return { spec, reason: `${variable} is set` };
  }
  return {
    spec: "demo",
    reason: `no API key found (${keyedDefaults.map(([variable]) => variable).join(", ")}); using the demo model, which is not an LLM`,
  };
}
