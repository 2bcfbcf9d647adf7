import type { SessionMode, SessionModeState } from "@agentclientprotocol/sdk";
import { ConfigError } from "../../core/index.js";
import type { PermissionPolicy, PermissionRule } from "../../tools/index.js";
import { permissionPolicyForMode } from "../../tools/index.js";
import { planToolRule } from "./plan-tool.js";
import { askUserRule } from "./ask-user-tool.js";

/** One session mode: what the editor shows, and the permission policy the session runs under. */
export interface AcpModeDefinition {
  id: string;
  name: string;
  description?: string;
  policy: PermissionPolicy;
}

/**
 * Options of `AcpModes`: the modes offered (session modes and the `mode` config option), the initial one, and modes
 * withheld from clients.
 */
export interface AcpModesOptions {
  /** The mode new sessions start in (default: the first mode, `ask` for the defaults). */
  initial?: string;
  /** The modes offered (default: `defaultModes()`). */
  modes?: AcpModeDefinition[];
  /**
   * Modes of `modes` kept from clients, e.g. above the operator's ceiling: not advertised, and
   * session/set_mode or `/mode` to one answers -32602 with `reason`; a stored session in one
   * opens in `initial`.
   */
  withheld?: { modes: readonly string[]; reason: string };
}

/**
 * The built-in modes, each a `permissionPolicyForMode` policy with `rules` checked first (the
 * plan tool is always allowed):
 * - `ask`: reads inside the roots run; edits and commands ask.
 * - `auto-edit`: edits inside the roots run too; deletes, moves and commands ask.
 * - `read-only`: reads run; edits and commands are refused (the model is told).
 * Paths outside the session's roots are refused in every mode.
 */
export function defaultModes(rules: PermissionRule[] = []): AcpModeDefinition[] {
  const withRules = [planToolRule, askUserRule, ...rules];
  return [
    { id: "ask", name: "Ask", description: "Reads run; edits and commands ask first", policy: permissionPolicyForMode("ask", { rules: withRules }) },
    {
      id: "auto-edit",
      name: "Auto-edit",
      description: "Edits inside the workspace run without asking; commands ask first",
      policy: permissionPolicyForMode("auto-edit", { rules: withRules }),
    },
    { id: "read-only", name: "Read-only", description: "Reads only: no edits, no commands", policy: permissionPolicyForMode("read-only", { rules: withRules }) },
  ];
}

/** The runtime's mode catalogue (shared by all sessions). */
export class AcpModes {
  readonly initial: string;
  readonly #modes: ReadonlyMap<string, AcpModeDefinition>;
  readonly #withheld: ReadonlySet<string>;
  readonly #withheldReason: string;

  constructor(options: AcpModesOptions = {}) {
    const all = options.modes ?? defaultModes();
    if (new Set(all.map((m) => m.id)).size !== all.length) throw new ConfigError("modes: mode ids must be unique");
    const withheld = options.withheld?.modes ?? [];
    const unknown = withheld.find((id) => !all.some((m) => m.id === id));
    if (unknown !== undefined) throw new ConfigError(`modes: the withheld mode "${unknown}" is not one of ${all.map((m) => m.id).join(", ")}`);
    this.#withheld = new Set(withheld);
    this.#withheldReason = options.withheld?.reason ?? "not offered";
    const list = all.filter((m) => !this.#withheld.has(m.id));
    if (list.length === 0) throw new ConfigError("modes: at least one mode is needed");
    this.#modes = new Map(list.map((m) => [m.id, m]));
    this.initial = options.initial ?? list[0]!.id;
    if (!this.#modes.has(this.initial)) throw new ConfigError(`modes: the initial mode "${this.initial}" is not one of ${this.ids().join(", ")}`);
  }

  has(id: string): boolean {
    return this.#modes.has(id);
  }

  /** Why a mode is kept from clients (see `AcpModesOptions.withheld`); undefined for others. */
  withheldReason(id: string): string | undefined {
    return this.#withheld.has(id) ? this.#withheldReason : undefined;
  }

  ids(): string[] {
    return [...this.#modes.keys()];
  }

  get(id: string): AcpModeDefinition | undefined {
    return this.#modes.get(id);
  }

  /** The `modes` field of new/load/resume answers. */
  state(currentModeId: string): SessionModeState {
    const availableModes: SessionMode[] = [...this.#modes.values()].map((m) => ({ id: m.id, name: m.name, ...(m.description ? { description: m.description } : {}) }));
    return { currentModeId, availableModes };
  }
}
