import type { LanguageModelV3 } from "@ai-sdk/provider";
import { codeCacheUses } from "../core/code-cache-hint.js";
import { anthropicFormat, openAIChatFormat, openAICompatibleFormat, type LeanFormat } from "./lean-formats.js";
import { LeanStreams } from "./lean-stream.js";
import type { ModelSpec } from "./model-id.js";
import { providerRegistry, type ProviderOptions } from "./provider-registry.js";
import type { ThinkingLevel } from "./types.js";

/** A provider instance's model at the provider interface (`doStream`). */
export type ProviderModel = LanguageModelV3;

export type { ProviderOptions } from "./provider-registry.js";

export interface ProviderConnection {
  baseUrl: string;
  apiKey: string | undefined;
  headers?: Record<string, string>;
  /** Read successful SSE answers with the lean path (see lean-stream.ts). Default true. */
  leanStream?: boolean;
}

export interface ProviderModelHandle {
  model: ProviderModel;
  /** Set when the model's streams are read with the lean path. */
  lean?: LeanStreams;
}

/** The AI SDK language model for a spec (never `demo`); loads only its provider's library. */
export async function createProviderModel(spec: ModelSpec, connection: ProviderConnection): Promise<ProviderModelHandle> {
  const { baseUrl, apiKey, headers } = connection;
  const base = await proxiedFetch(new URL(baseUrl));
  const leanFor = (format: LeanFormat): LeanStreams | undefined => (connection.leanStream === false ? undefined : new LeanStreams(format, base));
  const library = providerRegistry[spec.provider].library;
  // The bin's code cache learns that this run compiles this library (cli/bundles.ts).
  codeCacheUses(`model:${library ?? spec.provider}`);
  switch (library) {
    case "anthropic": {
      const { createAnthropic } = await import("@ai-sdk/anthropic");
      const lean = leanFor(anthropicFormat);
      return { model: createAnthropic({ baseURL: baseUrl, apiKey: apiKey ?? "", headers, fetch: lean?.fetch ?? base })(spec.model), lean };
    }
    case "openai": {
      const { createOpenAI } = await import("@ai-sdk/openai");
      // Chat Completions, not the Responses API (the SDK default): one wire format for every
      // OpenAI-style endpoint, stateless requests (the whole transcript each call, like the
      // loop's other providers), and the same loopback mock covers it.
      const lean = leanFor(openAIChatFormat);
      return { model: createOpenAI({ baseURL: baseUrl, apiKey: apiKey ?? "", headers, fetch: lean?.fetch ?? base }).chat(spec.model), lean };
    }
    case "openai-compatible": {
      const { createOpenAICompatible } = await import("@ai-sdk/openai-compatible");
      // openai-compatible passes reasoning deltas through (`reasoning_content` / `reasoning`);
      // it sends an Authorization header only when there is a key, so local servers need none.
      const lean = leanFor(openAICompatibleFormat);
      const provider = createOpenAICompatible({ name: spec.provider, baseURL: baseUrl, apiKey, headers, includeUsage: true, fetch: lean?.fetch ?? base });
      return { model: provider.chatModel(spec.model), lean };
    }
    case undefined:
      throw new Error(`the ${spec.provider} model has no provider library model`);
  }
}

/**
 * With HTTP(S)_PROXY set (as in a sandbox whose network is an allow-list, docs/sandbox.md), calls
 * go through that proxy: Node's own fetch ignores those variables before Node 24
 * (NODE_USE_ENV_PROXY), so undici's EnvHttpProxyAgent carries them (NO_PROXY honoured). Loaded
 * only then; otherwise the global fetch.
 */
async function proxiedFetch(target: URL, env: NodeJS.ProcessEnv = process.env): Promise<typeof fetch | undefined> {
  const proxy = target.protocol === "https:" ? (env.HTTPS_PROXY ?? env.https_proxy) : (env.HTTP_PROXY ?? env.http_proxy);
  if (!proxy) return undefined;
  const { EnvHttpProxyAgent, fetch: undiciFetch } = await import("undici");
  const dispatcher = new EnvHttpProxyAgent();
  const proxied = (input: Parameters<typeof fetch>[0], init?: RequestInit): Promise<Response> =>
    undiciFetch(input as Parameters<typeof undiciFetch>[0], { ...(init as Parameters<typeof undiciFetch>[1]), dispatcher }) as unknown as Promise<Response>;
  return proxied as typeof fetch;
}

/** Provider options that set a thinking level; undefined when `off` or not supported. */
export function thinkingOptions(spec: ModelSpec, level: ThinkingLevel | undefined): ProviderOptions | undefined {
  if (level === undefined || level === "off") return undefined;
  return providerRegistry[spec.provider].thinking?.(level);
}
