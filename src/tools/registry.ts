import type { ModelToolSpec } from "../model/types.js";
import type { Tool } from "./types.js";

/** Named tools offered to the model. Names are unique; a clash is an error, not a silent override. */
export class ToolRegistry {
  readonly #tools = new Map<string, Tool>();

  constructor(tools: Iterable<Tool> = []) {
    for (const tool of tools) this.register(tool);
  }

  register<I>(tool: Tool<I>): this {
    if (this.#tools.has(tool.name)) throw new Error(`a tool named "${tool.name}" is already registered`);
    this.#tools.set(tool.name, tool as Tool);
    return this;
  }

  unregister(name: string): boolean {
    return this.#tools.delete(name);
  }

  get(name: string): Tool | undefined {
    return this.#tools.get(name);
  }

  has(name: string): boolean {
    return this.#tools.has(name);
  }

  list(): Tool[] {
    return [...this.#tools.values()];
  }

  /** A new registry with this one's tools plus `others` (e.g. a session's MCP tools). */
  with(others: Iterable<Tool>): ToolRegistry {
    const merged = new ToolRegistry(this.list());
    for (const tool of others) merged.register(tool);
    return merged;
  }

  specs(): ModelToolSpec[] {
    return this.list().map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema }));
  }
}
