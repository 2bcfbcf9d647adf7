import { basename } from "node:path";
import type { AcpModelChoice, AcpModelOptions } from "../acp/agent/index.js";
import type { Logger } from "../core/index.js";
import type { ModelAdapter } from "../model/index.js";
import { createModelAdapter, credentialStatus, parseModelSpec, pickDefaultModelSpec } from "../model/index.js";
import { loadScriptFile, scriptedModelFrom } from "./scripted-script.js";

/** What the `model` config option offers: --model (or the default) first, then each --models spec. */
export interface ServeModelInputs {
  model: string | undefined;
  models: string[];
  baseUrl: string | undefined;
}

/**
 * The model choices of `serve`. The session's starting model is `primary` (the --model / default
 * adapter, built elsewhere); each extra spec is offered only when it can be called: a provider
 * that needs a key without one in the environment is left out, with a warning on stderr.
 */
export function serveModelOptions(inputs: ServeModelInputs, primary: () => ModelAdapter, env: NodeJS.ProcessEnv, logger: Logger): AcpModelOptions {
  const primarySpec = inputs.model ?? pickDefaultModelSpec(env).spec;
  const choices: AcpModelChoice[] = [{ id: primarySpec, name: nameFor(primarySpec), create: primary }];
  for (const spec of inputs.models) {
    if (choices.some((c) => c.id === spec)) continue;
    const choice = extraChoice(spec, inputs.baseUrl, env, logger);
    if (choice) choices.push(choice);
  }
  return { choices, initial: primarySpec };
}

function extraChoice(spec: string, baseUrl: string | undefined, env: NodeJS.ProcessEnv, logger: Logger): AcpModelChoice | undefined {
  if (spec.startsWith("scripted:")) {
    const file = loadScriptFile(spec.slice("scripted:".length));
    // One scripted model per session, so every session plays its own script.
    return { id: spec, name: nameFor(spec), description: "scripted (testing only)", create: () => scriptedModelFrom(file) };
  }
  const credentials = credentialStatus(parseModelSpec(spec), { env });
  if (credentials.problem !== undefined) {
    logger.warn(`--models ${spec} is not offered: ${credentials.problem}`);
    return undefined;
  }
  const adapter = createModelAdapter({ spec, ...(baseUrl ? { baseUrl } : {}), env, logger });
  return { id: spec, name: nameFor(spec), create: () => adapter };
}

function nameFor(spec: string): string {
  if (spec.startsWith("scripted:")) return `scripted ${basename(spec.slice("scripted:".length))}`;
  return spec === "demo" ? "demo (not an LLM)" : spec;
}
