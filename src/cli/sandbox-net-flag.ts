import { parseNetAllow, type NetAllowEntry } from "../core/sandbox-net.js";
import { UsageError } from "./usage.js";

/** `--sandbox-net allow=…` values (serve and prompt) → entries; a malformed one is a usage error naming it. */
export function sandboxNetOption(values: readonly string[]): NetAllowEntry[] {
  try {
    return parseNetAllow(values);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}
