import { ConfigError } from "../../core/index.js";
import { AcpAgentTool, type AcpAgentLaunch, type AcpAgentToolOptions } from "./agent-tool.js";

/** One named specialist of a toolset. */
export interface AcpSpecialist extends Partial<Omit<AcpAgentToolOptions, "name" | "description" | "config">> {
  /** Tool name (e.g. "reviewer"). */
  name: string;
  /** Its purpose, in a sentence or two (e.g. "Reviews diffs for bugs and risky changes"). */
  description: string;
  /** When the model should pick it (e.g. "after code was changed, before reporting back"). */
  whenToUse?: string;
  config: AcpAgentLaunch;
}

/** Options every specialist shares unless its own entry overrides them. */
export type AcpToolsetDefaults = Partial<Omit<AcpAgentToolOptions, "name" | "description" | "config">>;

/**
 * Several named ACP agents as tools, e.g. a reviewer, a tester and a migrator for one
 * coordinator. Each tool's description names its purpose, when to use it, and the other
 * specialists, so the model can route each task. Register `toolset.tools`; call
 * `closeSession(id)` when an outer session ends and `close()` at shutdown.
 */
export class AcpToolset {
  readonly tools: AcpAgentTool[];

  constructor(specialists: AcpSpecialist[], defaults: AcpToolsetDefaults = {}) {
    if (specialists.length === 0) throw new ConfigError("AcpToolset needs at least one specialist");
    const names = new Set<string>();
    for (const s of specialists) {
      if (names.has(s.name)) throw new ConfigError(`AcpToolset: two specialists are named "${s.name}"`);
      names.add(s.name);
    }
    this.tools = specialists.map((specialist) => {
      const { whenToUse, description, ...own } = specialist;
      const others = specialists.filter((o) => o !== specialist).map((o) => `${o.name} (${firstSentence(o.description)})`);
      const text = [
        `Specialist "${specialist.name}": ${description.trim()}`,
        ...(whenToUse ? [`Use it when: ${whenToUse.trim()}`] : []),
        ...(others.length > 0 ? [`Other specialists: ${others.join("; ")}. Pick the one whose purpose fits; split work that spans several.`] : []),
      ].join("\n");
      return new AcpAgentTool({ ...defaults, ...own, description: text });
    });
  }

  get names(): string[] {
    return this.tools.map((t) => t.name);
  }

  get(name: string): AcpAgentTool | undefined {
    return this.tools.find((t) => t.name === name);
  }

  /** Ends the processes persistent specialists keep for this outer session. */
  async closeSession(sessionId: string): Promise<void> {
    await Promise.all(this.tools.map((t) => t.closeSession(sessionId)));
  }

  /** Ends every kept process. */
  async close(): Promise<void> {
    await Promise.all(this.tools.map((t) => t.close()));
  }
}

function firstSentence(text: string): string {
  const flat = text.trim().replace(/\s+/g, " ");
  const end = flat.search(/[.!?](\s|$)/);
  const sentence = end >= 0 ? flat.slice(0, end) : flat;
  return sentence.length > 100 ? `${sentence.slice(0, 100)}…` : sentence;
}
