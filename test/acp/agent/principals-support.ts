import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const ALICE = "alice-token-0123456789abcdef";
export const BOB = "bob-token-0123456789abcdef01";

/** A token file for alice and bob (mode 600). */
export function tokenFile(dir: string, lines = `# team\nalice ${ALICE}\n\nbob ${BOB}\n`): string {
  const path = join(dir, "tokens");
  writeFileSync(path, lines);
  chmodSync(path, 0o600);
  return path;
}

