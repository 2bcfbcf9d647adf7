import type { AvailableCommand, ContentBlock } from "@agentclientprotocol/sdk";
import { RequestError } from "@agentclientprotocol/sdk/unstable";
import type { AcpModelCatalog } from "./config-options.js";
import { MODEL_CONFIG_ID } from "./config-options.js";
import type { AcpModes } from "./modes.js";
import type { SessionControls } from "./session-controls.js";

/** A slash command typed as a prompt: `/name args`. */
export interface SlashCommand {
  name: string;
  args: string;
}

/** What a command may change; the runtime routes these through set_mode / set_config_option. */
export interface SlashCommandContext {
  controls: SessionControls;
  modes: AcpModes | undefined;
  models: AcpModelCatalog | undefined;
  setMode(modeId: string): Promise<void>;
  setConfig(configId: string, value: string): Promise<void>;
}

/** The commands this runtime answers itself (never sent to the model). */
export function availableCommands(modes: AcpModes | undefined, models: AcpModelCatalog | undefined): AvailableCommand[] {
  const commands: AvailableCommand[] = [{ name: "help", description: "List the commands, modes and models (answered locally, no model call)" }];
  if (modes) commands.push({ name: "mode", description: "Show or switch the session mode", input: { hint: modes.ids().join(" | ") } });
  if (models) commands.push({ name: "model", description: "Show or switch the model", input: { hint: models.list().map((c) => c.id).join(" | ") } });
  return commands;
}

/** The command in a prompt whose text starts with `/` and names a command we handle; else undefined. */
export function parseSlashCommand(prompt: readonly ContentBlock[], commands: readonly AvailableCommand[]): SlashCommand | undefined {
  const first = prompt[0];
  if (prompt.length !== 1 || first?.type !== "text") return undefined;
  const match = /^\/([A-Za-z][\w-]*)(?:\s+([\s\S]*))?$/.exec(first.text.trim());
  if (!match || !commands.some((c) => c.name === match[1])) return undefined;
  return { name: match[1]!, args: (match[2] ?? "").trim() };
}

/** Runs a command; resolves to the reply text. Invalid arguments are answered in text, not as errors. */
export async function runSlashCommand(command: SlashCommand, context: SlashCommandContext): Promise<string> {
  switch (command.name) {
    case "help":
      return helpText(context);
    case "mode":
      return changeOrShow(command.args, () => describeModes(context), async (id) => {
        await context.setMode(id);
        return `Mode is now ${id}.`;
      });
    case "model":
      return changeOrShow(command.args, () => describeModels(context), async (id) => {
        await context.setConfig(MODEL_CONFIG_ID, id);
        return `Model is now ${id}.`;
      });
    default:
      return `Unknown command /${command.name}.`;
  }
}

async function changeOrShow(args: string, show: () => string, change: (value: string) => Promise<string>): Promise<string> {
  if (args === "") return show();
  try {
    return await change(args);
  } catch (error) {
    if (error instanceof RequestError) return `${error.message}.`;
    throw error;
  }
}

function helpText(context: SlashCommandContext): string {
  const lines = ["Commands (answered by the agent itself, not the model):"];
  for (const c of availableCommands(context.modes, context.models)) lines.push(`  /${c.name}${c.input ? ` <${c.input.hint}>` : ""} — ${c.description}`);
  if (context.modes) lines.push("", describeModes(context));
  if (context.models) lines.push("", describeModels(context));
  return lines.join("\n");
}

function describeModes(context: SlashCommandContext): string {
  const state = context.controls.modesState();
  if (!context.modes || !state) return "This agent has no session modes.";
  const lines = [`Mode: ${state.currentModeId}`];
  for (const m of state.availableModes) lines.push(`  ${m.id === state.currentModeId ? "*" : "-"} ${m.id} — ${m.description ?? m.name}`);
  return lines.join("\n");
}

function describeModels(context: SlashCommandContext): string {
  const values = context.controls.values;
  if (!context.models || !values) return "This agent offers no model choice.";
  const lines = [`Model: ${values.model}`];
  for (const c of context.models.list()) lines.push(`  ${c.id === values.model ? "*" : "-"} ${c.id}${c.name !== c.id ? ` (${c.name})` : ""}`);
  const thinking = context.controls.configOptions()?.find((o) => o.category === "thought_level");
  if (thinking && "currentValue" in thinking) lines.push(`Thinking: ${String(thinking.currentValue)}`);
  return lines.join("\n");
}
