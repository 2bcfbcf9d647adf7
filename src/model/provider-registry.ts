import type { ThinkingLevel } from "./types.js";

// Everything the kit knows about one model provider, in one object; the spec parser, the key
// lookup, the default model choice, capabilities, error hints, thinking options, the library
// that calls it and the ACP `providers/*` protocol all read this map. Adding a provider is one
// entry here (plus, for a wire format of its own, a `library` case in providers.ts).
// No provider library is imported here: this module is on every start-up path.

/** `providerOptions` as `streamText` takes them. */
export type ProviderOptions = Record<string, Record<string, NonNullable<unknown>>>;

/** The AI SDK package a provider is called through (loaded only at its first call). */
export type ProviderLibrary = "anthropic" | "openai" | "openai-compatible";

/** One provider, as registered (its name is its key in the map). */
export type ProviderDefinition<Name extends string = string> = ProviderEntry & { name: Name };

interface ProviderEntry {
  /** Used in messages: "anthropic rejected the API key …". */
  label: string;
  /** Default base URL (none for `openai-compatible`, which needs one). */
  defaultBaseUrl?: string;
  /** The usual environment variable holding its key. */
  keyEnv?: string;
  /** Whether a call without a key cannot succeed (cloud APIs). Local servers need none. */
  needsKey: boolean;
  /** An example spec for messages and docs. */
  example: string;
  /** The model chosen when no model is configured and `keyEnv` is set (in the map's order). */
  defaultModel?: string;
  /** The API protocol it speaks, as the ACP `providers/*` methods name it; none for `demo`. */
  protocol?: "anthropic" | "openai";
  /** The library that calls it; none for `demo`. */
  library?: ProviderLibrary;
  /** Whether the table of well-known models (context window, vision, thinking) applies to its model ids. */
  knownModels: boolean;
  /** Image input when the model is not in the table. */
  imageByDefault: boolean;
  /** Thinking support when the model is not in the table. */
  thinkingByDefault: (model: string) => boolean;
  /** Provider options setting a thinking level (never called with `off`). */
  thinking?: (level: Exclude<ThinkingLevel, "off">) => ProviderOptions;
  /** What to check when the server cannot be reached. */
  connectionHint: string;
  /** What to do when the server has no such model (404). */
  missingModelHint: (model: string) => string;
}

const anthropicBudget: Record<Exclude<ThinkingLevel, "off">, number> = { low: 2_048, medium: 8_192, high: 24_576 };
/** Local model families that accept `reasoning_effort` through an OpenAI-compatible server (e.g. Ollama). */
const localReasoningFamilies = /^(qwen3|deepseek-r1|gpt-oss|magistral)/;
// The URL is in the message; it may come from --base-url or AGENTKIT_BASE_URL, so neither is named.
const cloudConnectionHint = "check your network connection and the base URL";
const checkModelName = (): string => "check the model name and that the base URL ends in /v1";
const never = (): boolean => false;

const definitions = {
  anthropic: {
    label: "anthropic",
    defaultBaseUrl: "https://api.anthropic.com/v1",
    keyEnv: "ANTHROPIC_API_KEY",
    needsKey: true,
    example: "anthropic:claude-sonnet-4-5",
    defaultModel: "anthropic:claude-sonnet-4-5",
    protocol: "anthropic",
    library: "anthropic",
    knownModels: true,
    imageByDefault: true,
    thinkingByDefault: never,
    thinking: (level) => ({ anthropic: { thinking: { type: "enabled", budgetTokens: anthropicBudget[level] } } }),
    connectionHint: cloudConnectionHint,
    missingModelHint: checkModelName,
  },
  openai: {
    label: "openai",
    defaultBaseUrl: "https://api.openai.com/v1",
    keyEnv: "OPENAI_API_KEY",
    needsKey: true,
    example: "openai:gpt-4.1",
    defaultModel: "openai:gpt-4.1",
    protocol: "openai",
    library: "openai",
    knownModels: true,
    imageByDefault: false,
    thinkingByDefault: never,
    thinking: (level) => ({ openai: { reasoningEffort: level } }),
    connectionHint: cloudConnectionHint,
    missingModelHint: checkModelName,
  },
  openrouter: {
    label: "openrouter",
    defaultBaseUrl: "https://openrouter.ai/api/v1",
    keyEnv: "OPENROUTER_API_KEY",
    needsKey: true,
    example: "openrouter:anthropic/claude-sonnet-4.5",
    defaultModel: "openrouter:anthropic/claude-sonnet-4.5",
    protocol: "openai",
    library: "openai-compatible",
    knownModels: true,
    imageByDefault: false,
    thinkingByDefault: () => true,
    // OpenRouter's unified `reasoning` object; unknown keys pass through to the body.
    thinking: (level) => ({ openrouter: { reasoning: { effort: level } } }),
    connectionHint: cloudConnectionHint,
    missingModelHint: checkModelName,
  },
  ollama: {
    label: "ollama",
    defaultBaseUrl: "http://127.0.0.1:11434/v1",
    needsKey: false,
    example: "ollama:qwen3",
    protocol: "openai",
    library: "openai-compatible",
    knownModels: false,
    imageByDefault: false,
    thinkingByDefault: (model) => localReasoningFamilies.test(model.toLowerCase()),
    thinking: (level) => ({ ollama: { reasoningEffort: level } }),
    connectionHint: "is Ollama running? (start it with 'ollama serve')",
    missingModelHint: (model) => `run 'ollama pull ${model}'`,
  },
  "openai-compatible": {
    label: "openai-compatible server",
    needsKey: false,
    example: "openai-compatible:my-model",
    protocol: "openai",
    library: "openai-compatible",
    knownModels: false,
    imageByDefault: false,
    thinkingByDefault: never,
    // `openaiCompatible`, not `openai-compatible`: the dashed key is deprecated and warns.
    thinking: (level) => ({ openaiCompatible: { reasoningEffort: level } }),
    connectionHint: "is the server running, and is the base URL right?",
    missingModelHint: checkModelName,
  },
  demo: {
    label: "demo",
    needsKey: false,
    example: "demo",
    knownModels: false,
    imageByDefault: false,
    thinkingByDefault: never,
    connectionHint: cloudConnectionHint,
    missingModelHint: checkModelName,
  },
} satisfies Record<string, ProviderEntry>;

/** Where a model runs. `openrouter` and `ollama` are `openai-compatible` with known base URLs. */
export type ProviderName = keyof typeof definitions;

/** The registered providers, by name (the map's order is the default-model preference). */
export const providerRegistry = Object.fromEntries(
  (Object.entries(definitions) as Array<[ProviderName, ProviderEntry]>).map(([name, entry]) => [name, { ...entry, name }]),
) as Readonly<Record<ProviderName, ProviderDefinition<ProviderName>>>;

/** The provider keys `pickDefaultModelSpec` looks for, in order: [variable, default spec]. */
export function keyedDefaultModels(): Array<[string, string]> {
  return Object.values(providerRegistry).flatMap((p) => (p.keyEnv && p.defaultModel ? [[p.keyEnv, p.defaultModel] as [string, string]] : []));
}
