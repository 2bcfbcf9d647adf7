import { describe, expect, it } from "vitest";
import {
  capabilitiesFor,
  createModelAdapter,
  credentialStatus,
  hasCredentials,
  ModelError,
  modelNeedsKey,
  parseModelSpec,
  pickDefaultModelSpec,
  resolveBaseUrl,
} from "../../src/model/index.js";

function configError(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ModelError);
    expect((error as ModelError).kind).toBe("config");
    return (error as Error).message;
  }
  throw new Error("expected a config error");
}

describe("parseModelSpec", () => {
  it("parses every provider, keeping colons and slashes in the model id", () => {
    expect(parseModelSpec("anthropic:claude-sonnet-4-5")).toEqual({ provider: "anthropic", model: "claude-sonnet-4-5", spec: "anthropic:claude-sonnet-4-5" });
    expect(parseModelSpec("openai:gpt-4.1").provider).toBe("openai");
    expect(parseModelSpec("openrouter:anthropic/claude-sonnet-4.5").model).toBe("anthropic/claude-sonnet-4.5");
    expect(parseModelSpec(" ollama:qwen2.5:0.5b ")).toEqual({ provider: "ollama", model: "qwen2.5:0.5b", spec: "ollama:qwen2.5:0.5b" });
    expect(parseModelSpec("openai-compatible:local-llama").provider).toBe("openai-compatible");
    expect(parseModelSpec("demo")).toEqual({ provider: "demo", model: "demo", spec: "demo" });
  });

  it("says what to write instead of a bad spec", () => {
    expect(configError(() => parseModelSpec("x:y"))).toBe(
      "unknown provider 'x' in 'x:y'; use one of anthropic, openai, openrouter, ollama, openai-compatible (each as provider:model), or demo",
    );
    expect(configError(() => parseModelSpec("gpt-4.1"))).toContain("model spec 'gpt-4.1' has no provider; use provider:model");
    expect(configError(() => parseModelSpec("anthropic"))).toBe("model spec 'anthropic' names no model; use anthropic:claude-sonnet-4-5");
    expect(configError(() => parseModelSpec("ollama:"))).toBe("model spec 'ollama:' names no model; use ollama:qwen3");
    expect(configError(() => parseModelSpec(""))).toContain("empty model spec");
    expect(configError(() => parseModelSpec("demo:big"))).toContain("the demo model takes no model name");
  });

  it("createModelAdapter rejects a bad spec and openai-compatible without a base URL", () => {
    expect(configError(() => createModelAdapter({ spec: "nope:model", env: {} }))).toContain("unknown provider 'nope'");
    expect(configError(() => createModelAdapter({ spec: "openai-compatible:local", env: {} }))).toContain(
      "openai-compatible:local needs a base URL: pass --base-url or set AGENTKIT_BASE_URL",
    );
    expect(configError(() => createModelAdapter({ spec: "ollama:qwen3", baseUrl: "not a url", env: {} }))).toContain("is not a valid URL");
    expect(createModelAdapter({ spec: "demo" }).id).toBe("demo");
  });
});

describe("pickDefaultModelSpec", () => {
  it("prefers AGENTKIT_MODEL, then the first key present, then the demo model", () => {
    expect(pickDefaultModelSpec({ AGENTKIT_MODEL: "ollama:qwen3", ANTHROPIC_API_KEY: "k" })).toEqual({
      spec: "ollama:qwen3",
      reason: "AGENTKIT_MODEL is set",
    });
    expect(pickDefaultModelSpec({ ANTHROPIC_API_KEY: "k", OPENAI_API_KEY: "k" }).spec).toBe("anthropic:claude-sonnet-4-5");
    expect(pickDefaultModelSpec({ OPENAI_API_KEY: "k", OPENROUTER_API_KEY: "k" })).toEqual({ spec: "openai:gpt-4.1", reason: "OPENAI_API_KEY is set" });
    expect(pickDefaultModelSpec({ OPENROUTER_API_KEY: "k" }).spec).toBe("openrouter:anthropic/claude-sonnet-4.5");
    const none = pickDefaultModelSpec({ ANTHROPIC_API_KEY: "  " });
    expect(none.spec).toBe("demo");
    expect(none.reason).toContain("no API key found");
    expect(none.reason).toContain("using the demo model");
  });
});

describe("credentials", () => {
  it("cloud providers need their key; local ones need none", () => {
    expect(modelNeedsKey("anthropic:claude-sonnet-4-5", {})).toBe(true);
    expect(modelNeedsKey("anthropic:claude-sonnet-4-5", { ANTHROPIC_API_KEY: "k" })).toBe(false);
    expect(modelNeedsKey("openrouter:x/y", { OPENROUTER_API_KEY: "k" })).toBe(false);
    expect(modelNeedsKey("ollama:qwen3", {})).toBe(false);
    expect(modelNeedsKey("openai-compatible:m", {})).toBe(false);
    expect(modelNeedsKey("demo", {})).toBe(false);
    expect(hasCredentials("openai:gpt-4.1", { env: {} })).toBe(false);
    expect(hasCredentials("openai:gpt-4.1", { apiKey: "explicit", env: {} })).toBe(true);
    expect(credentialStatus("openai:gpt-4.1", { env: {} }).problem).toBe("openai:gpt-4.1 needs an API key: set OPENAI_API_KEY");
  });

  it("key order: apiKey, apiKeyEnv, the provider's variable, AGENTKIT_API_KEY", () => {
    const env = { MY_KEY: "mine", OPENAI_API_KEY: "usual", AGENTKIT_API_KEY: "generic" };
    expect(credentialStatus("openai:gpt-4.1", { apiKey: "explicit", apiKeyEnv: "MY_KEY", env })).toMatchObject({ apiKey: "explicit" });
    expect(credentialStatus("openai:gpt-4.1", { apiKeyEnv: "MY_KEY", env })).toMatchObject({ apiKey: "mine", source: "MY_KEY" });
    expect(credentialStatus("openai:gpt-4.1", { env })).toMatchObject({ apiKey: "usual", source: "OPENAI_API_KEY" });
    expect(credentialStatus("ollama:qwen3", { env: { OPENAI_API_KEY: "not for ollama" } }).apiKey).toBeUndefined();
    expect(credentialStatus("ollama:qwen3", { env: { AGENTKIT_API_KEY: "generic" } }).apiKey).toBe("generic");
    // A configured variable that is empty: the message names that variable.
    expect(credentialStatus("anthropic:claude-sonnet-4-5", { apiKeyEnv: "TEAM_KEY", env: {} }).problem).toContain("set TEAM_KEY");
  });

  it("base URL: option, then AGENTKIT_BASE_URL, then the provider default", () => {
    const ollama = parseModelSpec("ollama:qwen3");
    expect(resolveBaseUrl(ollama, undefined, {})).toBe("http://127.0.0.1:11434/v1");
    expect(resolveBaseUrl(ollama, undefined, { AGENTKIT_BASE_URL: "http://gpu-box:11434/v1/" })).toBe("http://gpu-box:11434/v1");
    expect(resolveBaseUrl(ollama, "http://127.0.0.1:8080/v1", { AGENTKIT_BASE_URL: "http://other/v1" })).toBe("http://127.0.0.1:8080/v1");
    expect(resolveBaseUrl(parseModelSpec("openrouter:a/b"), undefined, {})).toBe("https://openrouter.ai/api/v1");
  });
});

describe("capabilities and context windows", () => {
  const caps = (spec: string, overrides = {}) => capabilitiesFor(parseModelSpec(spec), overrides);

  it("knows the common models", () => {
    expect(caps("anthropic:claude-sonnet-4-5")).toEqual({ image: true, audio: false, embeddedContext: true, thinking: true, contextWindow: 200_000 });
    expect(caps("anthropic:claude-opus-4-1").contextWindow).toBe(200_000);
    expect(caps("anthropic:claude-haiku-4-5").contextWindow).toBe(200_000);
    expect(caps("openai:gpt-4.1")).toMatchObject({ contextWindow: 1_047_576, image: true, thinking: false });
    expect(caps("openai:gpt-4.1-mini").contextWindow).toBe(1_047_576);
    expect(caps("openai:gpt-4o").contextWindow).toBe(128_000);
    expect(caps("openai:o3")).toMatchObject({ contextWindow: 200_000, thinking: true });
    expect(caps("openai:o4-mini").contextWindow).toBe(200_000);
    expect(caps("openrouter:anthropic/claude-sonnet-4.5")).toMatchObject({ contextWindow: 200_000, image: true });
  });

  it("unknown and local models: nothing assumed unless configured", () => {
    expect(caps("ollama:llama3.2")).toEqual({ image: false, audio: false, embeddedContext: true, thinking: false });
    expect(caps("ollama:qwen3").thinking).toBe(true);
    expect(caps("openai-compatible:gpt-4.1").contextWindow).toBeUndefined();
    expect(caps("openai-compatible:llava", { image: true, contextWindow: 8192 })).toMatchObject({ image: true, contextWindow: 8192 });
    expect(caps("openai:some-future-model")).toMatchObject({ image: false, thinking: false });
    expect(caps("openai:some-future-model").contextWindow).toBeUndefined();
    expect(caps("anthropic:claude-sonnet-4-5", { contextWindow: 1_000_000 }).contextWindow).toBe(1_000_000);
  });
});
