import { AgentKitError } from "../core/index.js";

/** A bad command line: the message says what to fix; the command exits 2. */
export class UsageError extends AgentKitError {
  constructor(message: string) {
    super("usage", message);
    this.name = "UsageError";
  }
}
