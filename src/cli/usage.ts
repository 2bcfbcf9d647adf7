import { AgentKitError } from "../core/index.js";

/** A bad command line: the message says what to fix; the command exits 2. */
export class UsageError extends AgentKitError {
  constructor(message: string) {
    super("usage", message);
    this.name = "UsageError";
  }
}

/**
 * A `node:util` parseArgs failure in the words every command uses (`unknown option --x`,
 * `--x needs a value`), so serve and check say the same as prompt, demo and inspect.
 */
export function parseArgsUsageError(error: unknown): UsageError {
  const { code, message } = error as { code?: string; message: string };
  const quoted = /'([^']*)'/.exec(message)?.[1] ?? "";
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") return new UsageError(`unknown option ${quoted}`);
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE" && / argument missing$/.test(message)) return new UsageError(`${quoted.split(" ")[0] ?? quoted} needs a value`);
  if (code === "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL") return new UsageError(`unexpected argument ${quoted}: this command takes options only`);
  return new UsageError(message);
}
