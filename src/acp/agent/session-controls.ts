import type { SessionConfigOption, SessionModeState } from "@agentclientprotocol/sdk";
import { RequestError } from "@agentclientprotocol/sdk/unstable";
import type { Logger } from "../../core/index.js";
import type { LoopDriver } from "../../loop/index.js";
import type { ModelAdapter } from "../../model/index.js";
import type { AcpModelCatalog, SessionConfigValues } from "./config-options.js";
import { MODEL_CONFIG_ID, THINKING_CONFIG_ID, configOptionsFor, isThinkingLevel, thinkingLevels } from "./config-options.js";
import type { AcpModes } from "./modes.js";

/** What the runtime offers every session: modes and/or model choices (each optional). */
export interface SessionControlCatalog {
  /** Whose session it is: models are built on that principal's provider route. */
  principal?: string;
  modes: AcpModes | undefined;
  models: AcpModelCatalog | undefined;
}

/** Header metadata keys (so a loaded session gets its mode and config back). */
export const MODE_METADATA_KEY = "modeId";
export const CONFIG_METADATA_KEY = "configValues";

/**
 * One session's mode, model and thinking level. Changes go straight to the driver
 * (`driver.configure`), so they apply from the next model call / tool call on, even mid-turn.
 */
export class SessionControls {
  readonly #catalog: SessionControlCatalog;
  readonly #adapters = new Map<string, ModelAdapter>();
  #driver: LoopDriver | undefined;
  #modeId: string | undefined;
  #values: SessionConfigValues | undefined;

  /** `stored`: a loaded session's header metadata (unknown or stale values fall back to the defaults). */
  constructor(catalog: SessionControlCatalog, stored: Record<string, unknown> = {}, logger?: Logger) {
    this.#catalog = catalog;
    const { modes, models } = catalog;
    if (modes) {
      const saved = stored[MODE_METADATA_KEY];
      this.#modeId = typeof saved === "string" && modes.has(saved) ? saved : modes.initial;
      if (typeof saved === "string" && saved !== this.#modeId) logger?.warn(`stored mode "${saved}" is not offered any more; using "${this.#modeId}"`);
    }
    if (models) {
      const saved = (stored[CONFIG_METADATA_KEY] ?? {}) as Record<string, unknown>;
      const model = typeof saved.model === "string" && models.has(saved.model) ? saved.model : models.initial;
      if (typeof saved.model === "string" && saved.model !== model) logger?.warn(`stored model "${saved.model}" is not offered any more; using "${model}"`);
      this.#values = { model, thinking: isThinkingLevel(saved.thinking) ? saved.thinking : models.thinking };
    }
  }

  get modeId(): string | undefined {
    return this.#modeId;
  }

  get values(): SessionConfigValues | undefined {
    return this.#values && { ...this.#values };
  }

  /** Applies the current mode and config to the session's driver (once it exists). */
  attach(driver: LoopDriver): void {
    this.#driver = driver;
    this.#apply();
  }

  /** `modes` for new/load/resume answers (undefined when the runtime offers none). */
  modesState(): SessionModeState | undefined {
    return this.#catalog.modes && this.#modeId !== undefined ? this.#catalog.modes.state(this.#modeId) : undefined;
  }

  /** The full config option list (undefined when the runtime offers no model choices). */
  configOptions(): SessionConfigOption[] | undefined {
    const models = this.#catalog.models;
    if (!models || !this.#values) return undefined;
    return configOptionsFor(models, this.#values, this.#currentModel());
  }

  /** The new/load/resume answer fields. */
  sessionState(): { modes?: SessionModeState; configOptions?: SessionConfigOption[] } {
    const modes = this.modesState();
    const configOptions = this.configOptions();
    return { ...(modes ? { modes } : {}), ...(configOptions ? { configOptions } : {}) };
  }

  /** What goes into the header metadata. */
  metadata(): Record<string, unknown> {
    return {
      ...(this.#modeId !== undefined ? { [MODE_METADATA_KEY]: this.#modeId } : {}),
      ...(this.#values ? { [CONFIG_METADATA_KEY]: { ...this.#values } } : {}),
    };
  }

  /** Switches mode; -32602 for an unknown id. Returns false when it was already current. */
  setMode(modeId: string): boolean {
    const modes = this.#catalog.modes;
    if (!modes) throw RequestError.invalidParams({ modeId }, "this agent offers no session modes");
    const withheld = modes.withheldReason(modeId);
    if (withheld !== undefined) throw RequestError.invalidParams({ modeId, withheld: true }, `mode "${modeId}" is not allowed: ${withheld}; the modes are ${modes.ids().join(", ")}`);
    if (!modes.has(modeId)) throw RequestError.invalidParams({ modeId }, `unknown mode "${modeId}"; the modes are ${modes.ids().join(", ")}`);
    if (modeId === this.#modeId) return false;
    this.#modeId = modeId;
    this.#apply();
    return true;
  }

  /**
   * Sets a config option; -32602 for an unknown option or value. `shapeChanged` is true when the
   * set of options changed (e.g. the thinking option appeared or went with the model).
   */
  setConfig(configId: string, value: unknown): { options: SessionConfigOption[]; shapeChanged: boolean } {
    const models = this.#catalog.models;
    const before = this.configOptions();
    if (!models || !this.#values || !before) throw RequestError.invalidParams({ configId }, "this agent offers no config options");
    if (!before.some((o) => o.id === configId)) {
      throw RequestError.invalidParams({ configId }, `unknown config option "${configId}"; the options are ${before.map((o) => o.id).join(", ")}`);
    }
    if (typeof value !== "string") throw RequestError.invalidParams({ configId, value }, `config option "${configId}" takes a string value`);
    if (configId === MODEL_CONFIG_ID) {
      if (!models.has(value)) throw RequestError.invalidParams({ configId, value }, `unknown model "${value}"; the choices are ${models.list().map((c) => c.id).join(", ")}`);
      this.#values.model = value;
    } else if (configId === THINKING_CONFIG_ID) {
      if (!isThinkingLevel(value)) throw RequestError.invalidParams({ configId, value }, `thinking must be one of ${thinkingLevels.join(", ")}`);
      this.#values.thinking = value;
    }
    this.#apply();
    const options = this.configOptions()!;
    const ids = (list: SessionConfigOption[]): string => list.map((o) => o.id).join("\n");
    return { options, shapeChanged: ids(before) !== ids(options) };
  }

  #currentModel(): ModelAdapter {
    const id = this.#values!.model;
    let adapter = this.#adapters.get(id);
    if (!adapter) {
      adapter = this.#catalog.models!.get(id)!.create(this.#catalog.principal);
      this.#adapters.set(id, adapter);
    }
    return adapter;
  }

  #apply(): void {
    const driver = this.#driver;
    if (!driver) return;
    const mode = this.#modeId === undefined ? undefined : this.#catalog.modes?.get(this.#modeId);
    driver.configure({
      ...(mode ? { permissions: mode.policy } : {}),
      ...(this.#values ? { model: this.#currentModel(), thinking: this.#values.thinking } : {}),
    });
  }
}
