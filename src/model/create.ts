import { createStderrLogger, type Logger } from "../core/index.js";
import type { AiSdkAdapterConfig, RetryOptions } from "./ai-sdk-adapter.js";
import { capabilitiesFor } from "./capabilities.js";
import { createDemoModel, type DemoModelOptions } from "./demo.js";
import { credentialStatus, parseModelSpec, resolveBaseUrl, type Env } from "./model-id.js";
import { defaultModelTimeouts, type ModelAdapter, type ModelCapabilities, type ModelEvent, type ModelRequest, type ModelTimeouts } from "./types.js";

/**
 * Options of `createModelAdapter`: the spec, and where its key, base URL, limits and time bounds come from when not
 * from the environment.
 */
export interface ModelAdapterOptions {
  /** `provider:model` (e.g. `anthropic:claude-sonnet-4-5`, `ollama:qwen3`, `openai-compatible:NAME`) or `demo`. */
  spec: string;
  /** Overrides AGENTKIT_BASE_URL and the provider default; required for `openai-compatible`. */
  baseUrl?: string;
  /** An explicit key; otherwise read from `apiKeyEnv`, the provider's variable, or AGENTKIT_API_KEY. */
  apiKey?: string;
  /** Name of the environment variable that holds the key. */
  apiKeyEnv?: string;
  /** Context window in tokens, for models the built-in table does not know. */
  contextWindow?: number;
  /** Output token limit per model call (default 8192); a request's own value wins. */
  maxOutputTokens?: number;
  /** Declare what an unknown (e.g. local) model can take. */
  image?: boolean;
  thinking?: boolean;
  /** Extra HTTP headers (e.g. OpenRouter attribution). */
  headers?: Record<string, string>;
  retry?: RetryOptions;
  /** Time bounds: connect 30 s, first byte 90 s, idle gap 90 s, all attempts 120 s by default. */
  timeouts?: ModelTimeouts;
  /** Defaults to `process.env`. */
  env?: Env;
  /** Where warnings and retries are logged (stderr by default; never stdout). */
  logger?: Logger;
  /**
   * Read successful streamed answers (every provider: chat completions, OpenAI, Anthropic
   * Messages) without the provider's per-chunk stream stages and zod parse for plain text and
   * reasoning deltas; everything else still goes through the provider. Default true.
   */
  leanStream?: boolean;
  /** Options of the demo model (spec `demo`). */
  demo?: DemoModelOptions;
}

/** Output tokens a model step may produce unless `maxOutputTokens` says otherwise. */
export const defaultMaxOutputTokens = 8192;

/**
 * Creates the adapter for a spec. Configuration errors (bad spec, missing base URL) throw a
 * ModelError of kind `config` here; a missing key is reported at the first call (kind `auth`),
 * so a host can create the adapter and ask `hasCredentials` / `modelNeedsKey` first.
 */
export function createModelAdapter(options: ModelAdapterOptions): ModelAdapter {
  const spec = parseModelSpec(options.spec);
  if (spec.provider === "demo") return createDemoModel(options.demo);
  const env = options.env ?? process.env;
  const logger = options.logger ?? createStderrLogger("warn");
  const baseUrl = resolveBaseUrl(spec, options.baseUrl, env);
  const credentials = credentialStatus(spec, { apiKey: options.apiKey, apiKeyEnv: options.apiKeyEnv, env });
  const capabilities = capabilitiesFor(spec, {
    contextWindow: options.contextWindow,
    image: options.image,
    thinking: options.thinking,
  });
  return new LazyAiSdkAdapter(spec.spec, capabilities, async () => ({
    spec,
    ...(await (await import("./providers.js")).createProviderModel(spec, {
      baseUrl,
      apiKey: credentials.apiKey,
      headers: options.headers,
      leanStream: options.leanStream,
    })),
    capabilities,
    baseUrl,
    missingKey: credentials.problem,
    envVar: credentials.envVar ?? "AGENTKIT_API_KEY",
    hadKey: credentials.apiKey !== undefined,
    maxOutputTokens: options.maxOutputTokens ?? defaultMaxOutputTokens,
    retry: {
      maxRetries: options.retry?.maxRetries ?? 2,
      initialDelayMs: options.retry?.initialDelayMs ?? 500,
      maxDelayMs: options.retry?.maxDelayMs ?? 8_000,
    },
    timeouts: { ...defaultModelTimeouts, ...definedOnly(options.timeouts) },
    logger,
  }));
}

/**
 * Loads the provider package and the adapter at the first call (or `preload`), not at
 * start-up: an editor launches `serve` often, and those modules cost most of its start-up time.
 */
class LazyAiSdkAdapter implements ModelAdapter {
  readonly id: string;
  readonly capabilities: ModelCapabilities;
  #adapter: Promise<ModelAdapter> | undefined;
  readonly #config: () => Promise<AiSdkAdapterConfig>;

  constructor(id: string, capabilities: ModelCapabilities, config: () => Promise<AiSdkAdapterConfig>) {
    this.id = id;
    this.capabilities = capabilities;
    this.#config = config;
  }

  preload(): void {
    // A failure here is reported by the first call, which tries again.
    this.#load().then(warmFetch, () => (this.#adapter = undefined));
  }

  stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelEvent> {
    // The loaded adapter's own iterator once it is there (a `yield*` wrapper costs a few
    // promise hops per streamed delta).
    return {
      [Symbol.asyncIterator]: () => {
        let inner: AsyncIterator<ModelEvent> | undefined;
        const open = async (): Promise<AsyncIterator<ModelEvent>> => (inner ??= (await this.#load()).stream(request, signal)[Symbol.asyncIterator]());
        return {
          next: () => (inner ? inner.next() : open().then((it) => it.next())),
          return: async (value?: unknown) => (inner?.return ? inner.return(value) : { done: true as const, value: undefined }),
        };
      },
    };
  }

  #load(): Promise<ModelAdapter> {
    return (this.#adapter ??= (async () => {
      const [module, config] = await Promise.all([import("./ai-sdk-adapter.js"), this.#config()]);
      return new module.AiSdkModelAdapter(config);
    })());
  }
}

/**
 * Node's `fetch` loads its HTTP client (undici) on first use: 25-40 ms of CPU here. Touching one
 * of its classes while the session is idle takes that off the first model request.
 */
function warmFetch(): void {
  void new Headers();
}

function definedOnly(timeouts: ModelTimeouts | undefined): ModelTimeouts {
  return Object.fromEntries(Object.entries(timeouts ?? {}).filter(([, value]) => value !== undefined));
}
