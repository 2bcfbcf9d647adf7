import type { SessionConfigOption } from "@agentclientprotocol/sdk";
import { ConfigError } from "../../core/index.js";
import type { ModelAdapter, ThinkingLevel } from "../../model/index.js";

/** One model a session can switch to through the `model` config option. */
export interface AcpModelChoice {
  /** The option value (e.g. the `provider:model` spec). */
  id: string;
  name: string;
  description?: string;
  /** The adapter for one session (called at most once per session; may return a shared adapter). */
  /** `principal`: whose session the model is for (its provider route). */
  create(principal?: string): ModelAdapter;
}

/**
 * Options of `AcpModelCatalog`: the models a session may switch between (the `model` config option) and the initial
 * model and thinking level.
 */
export interface AcpModelOptions {
  choices: AcpModelChoice[];
  /** The model new sessions start with (default: the first choice). */
  initial?: string;
  /** The thinking level new sessions start with, where the model supports one (default `off`). */
  thinking?: ThinkingLevel;
}

/** The id of the session config option that switches models (`session/set_config_option`). */
export const MODEL_CONFIG_ID = "model";
/** The id of the session config option that sets the thinking level, offered when the model supports one. */
export const THINKING_CONFIG_ID = "thinking";
/** The `ThinkingLevel` values the thinking config option offers, in order. */
export const thinkingLevels: readonly ThinkingLevel[] = ["off", "low", "medium", "high"];

/** A session's config values, as stored in the session header's metadata. */
export interface SessionConfigValues {
  model: string;
  thinking: ThinkingLevel;
}

/** The runtime's model catalogue (shared by all sessions). */
export class AcpModelCatalog {
  readonly initial: string;
  readonly thinking: ThinkingLevel;
  readonly #choices: ReadonlyMap<string, AcpModelChoice>;

  constructor(options: AcpModelOptions) {
    if (options.choices.length === 0) throw new ConfigError("models: at least one model choice is needed");
    this.#choices = new Map(options.choices.map((c) => [c.id, c]));
    if (this.#choices.size !== options.choices.length) throw new ConfigError("models: model ids must be unique");
    this.initial = options.initial ?? options.choices[0]!.id;
    if (!this.#choices.has(this.initial)) throw new ConfigError(`models: the initial model "${this.initial}" is not one of the choices`);
    this.thinking = options.thinking ?? "off";
    if (!isThinkingLevel(this.thinking)) throw new ConfigError(`models: thinking must be one of ${thinkingLevels.join(", ")}`);
  }

  has(id: string): boolean {
    return this.#choices.has(id);
  }

  get(id: string): AcpModelChoice | undefined {
    return this.#choices.get(id);
  }

  list(): AcpModelChoice[] {
    return [...this.#choices.values()];
  }
}

export function isThinkingLevel(value: unknown): value is ThinkingLevel {
  return typeof value === "string" && (thinkingLevels as readonly string[]).includes(value);
}

const thinkingNames: Record<ThinkingLevel, string> = { off: "Off", low: "Low", medium: "Medium", high: "High" };

/**
 * The full option list for a session: the model, and the thinking level only while the current
 * model can take one (`capabilities.thinking`).
 */
export function configOptionsFor(catalog: AcpModelCatalog, values: SessionConfigValues, currentModel: ModelAdapter): SessionConfigOption[] {
  const options: SessionConfigOption[] = [
    {
      id: MODEL_CONFIG_ID,
      name: "Model",
      category: "model",
      type: "select",
      currentValue: values.model,
      options: catalog.list().map((c) => ({ value: c.id, name: c.name, ...(c.description ? { description: c.description } : {}) })),
    },
  ];
  if (currentModel.capabilities.thinking) {
    options.push({
      id: THINKING_CONFIG_ID,
      name: "Thinking",
      description: "How much the model reasons before answering",
      category: "thought_level",
      type: "select",
      currentValue: values.thinking,
      options: thinkingLevels.map((level) => ({ value: level, name: thinkingNames[level] })),
    });
  }
  return options;
}
