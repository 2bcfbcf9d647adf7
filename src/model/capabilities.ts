import type { ModelSpec } from "./model-id.js";
import { providerRegistry } from "./provider-registry.js";
import type { ModelCapabilities } from "./types.js";

interface KnownModel {
  /** Matched against the model id without any `vendor/` prefix (OpenRouter ids). */
  match: RegExp;
  contextWindow: number;
  image: boolean;
  thinking: boolean;
}

// A small table of widely used models; anything else has an unknown context window unless
// configured. Dots and dashes are both accepted (`claude-sonnet-4.5` on OpenRouter).
const known: KnownModel[] = [
  { match: /^claude-(opus|sonnet|haiku)-4/, contextWindow: 200_000, image: true, thinking: true },
  { match: /^claude-(3[.-]7-sonnet|sonnet-3[.-]7)/, contextWindow: 200_000, image: true, thinking: true },
  { match: /^claude-/, contextWindow: 200_000, image: true, thinking: false },
  { match: /^gpt-4\.1/, contextWindow: 1_047_576, image: true, thinking: false },
  { match: /^gpt-4o/, contextWindow: 128_000, image: true, thinking: false },
  { match: /^gpt-5/, contextWindow: 400_000, image: true, thinking: true },
  { match: /^o1-mini/, contextWindow: 128_000, image: false, thinking: true },
  { match: /^o[134](-|$)/, contextWindow: 200_000, image: true, thinking: true },
  { match: /^gpt-4-turbo/, contextWindow: 128_000, image: true, thinking: false },
  { match: /^gpt-3\.5-turbo/, contextWindow: 16_385, image: false, thinking: false },
];

function lookupKnownModel(model: string): KnownModel | undefined {
  const bare = model.slice(model.lastIndexOf("/") + 1).toLowerCase();
  return known.find((entry) => entry.match.test(bare));
}

/**
 * Capabilities a host knows better than the known-model table (a local model's context window, a vision model the
 * table does not list); each one given wins.
 */
export interface CapabilityOverrides {
  contextWindow?: number;
  image?: boolean;
  audio?: boolean;
  thinking?: boolean;
}

/**
 * What a model can take: vision for known Anthropic/OpenAI models, nothing assumed for
 * unknown OpenAI-compatible ones (configure `image`/`contextWindow` for those); audio off.
 */
export function capabilitiesFor(spec: ModelSpec, overrides: CapabilityOverrides = {}): ModelCapabilities {
  const provider = providerRegistry[spec.provider];
  const entry = provider.knownModels ? lookupKnownModel(spec.model) : undefined;
  const capabilities: ModelCapabilities = {
    image: overrides.image ?? entry?.image ?? provider.imageByDefault,
    audio: overrides.audio ?? false,
    embeddedContext: true,
    thinking: overrides.thinking ?? entry?.thinking ?? provider.thinkingByDefault(spec.model),
  };
  const contextWindow = overrides.contextWindow ?? entry?.contextWindow;
  if (contextWindow !== undefined) capabilities.contextWindow = contextWindow;
  return capabilities;
}
