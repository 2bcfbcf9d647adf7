import type { LanguageModelV3 } from "@ai-sdk/provider";
import { anthropicFormat, openAIChatFormat, openAICompatibleFormat, type LeanFormat } from "./lean-formats.js";
import { LeanStreams } from "./lean-stream.js";
import type { ModelSpec } from "./model-id.js";
import type { ThinkingLevel } from "./types.js";

/** A provider instance's model at the provider interface (`doStream`). */
export type ProviderModel = LanguageModelV3;

/** `providerOptions` as `streamText` takes them. */
export type ProviderOptions = Record<string, Record<string, NonNullable<unknown>>>;

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

/** The AI SDK language model for a spec (never `demo`); loads only that provider's package. */
export async function createProviderModel(spec: ModelSpec, connection: ProviderConnection): Promise<ProviderModelHandle> {
  const { baseUrl, apiKey, headers } = connection;
  const base = await proxiedFetch(new URL(baseUrl));
  const leanFor = (format: LeanFormat): LeanStreams | undefined => (connection.leanStream === false ? undefined : new LeanStreams(format, base));
  switch (spec.provider) {
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
    case "openrouter":
    case "ollama":
    case "openai-compatible": {
      const { createOpenAICompatible } = await import("@ai-sdk/openai-compatible");
      // openai-compatible passes reasoning deltas through (`reasoning_content` / `reasoning`);
      // it sends an Authorization header only when there is a key, so local servers need none.
      const lean = leanFor(openAICompatibleFormat);
      const provider = createOpenAICompatible({ name: spec.provider, baseURL: baseUrl, apiKey, headers, includeUsage: true, fetch: lean?.fetch ?? base });
      return { model: provider.chatModel(spec.model), lean };
    }
    case "demo":
      throw new Error("the demo model has no provider library model");
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

const anthropicBudget: Record<Exclude<ThinkingLevel, "off">, number> = { low: 2_048, medium: 8_192, high: 24_576 };

/** Provider options that set a thinking level; undefined when `off` or not supported. */
export function thinkingOptions(spec: ModelSpec, level: ThinkingLevel | undefined): ProviderOptions | undefined {
  if (level === undefined || level === "off") return undefined;
  switch (spec.provider) {
    case "anthropic":
      return { anthropic: { thinking: { type: "enabled", budgetTokens: anthropicBudget[level] } } };
    case "openai":
      return { openai: { reasoningEffort: level } };
    case "openrouter":
      // OpenRouter's unified `reasoning` object; unknown keys pass through to the body.
      return { openrouter: { reasoning: { effort: level } } };
    case "ollama":
    case "openai-compatible":
      // `openaiCompatible`, not `openai-compatible`: the dashed key is deprecated and warns.
      return { [spec.provider === "ollama" ? "ollama" : "openaiCompatible"]: { reasoningEffort: level } };
    case "demo":
      return undefined;
  }
}
