import { errorMessage } from "../core/index.js";
import type { ServeOptions } from "./serve-options.js";
import { parseServeOptions, serveHelp } from "./serve-options.js";

/** `agentkit-acp serve`: options are checked before the agent's modules load, so mistakes fail fast. */
export async function runServe(argv: string[]): Promise<number> {
  let options: ServeOptions;
  try {
    options = parseServeOptions(argv, process.env);
  } catch (error) {
    process.stderr.write(`agentkit-acp serve: ${errorMessage(error)}\nRun \`agentkit-acp serve --help\` for the options.\n`);
    return 2;
  }
  if (options.help) {
    process.stdout.write(serveHelp);
    return 0;
  }
  const { serveWith } = await import("./serve-run.js");
  return serveWith(options);
}
