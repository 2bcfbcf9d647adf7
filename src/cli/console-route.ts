import { inspect } from "node:util";
import type { Logger } from "../core/index.js";
import { stripControls } from "./terminal-safe.js";

/**
 * Dependencies (the ACP SDK logs "Error handling notification", "Invalid message" …) write
 * with `console.*`. In the CLI those calls go through our logger instead: one readable stderr
 * line each (objects as compact JSON, newlines folded, control characters removed), and never
 * stdout, which belongs to the protocol (serve) or to the turn's output (prompt --json).
 */
export function routeConsoleToLogger(logger: Logger, source = "the ACP SDK"): void {
  const line = (args: unknown[]): string =>
    stripControls(
      args
        .map((a) => (typeof a === "string" ? a : a instanceof Error ? a.message : compact(a)))
        .join(" ")
        .replace(/\s*\n\s*/g, " | "),
    );
  /* eslint-disable no-console -- redirecting console is the point */
  console.error = (...args: unknown[]) => logger.warn(`${source}: ${line(args)}`);
  console.warn = (...args: unknown[]) => logger.warn(`${source}: ${line(args)}`);
  console.log = (...args: unknown[]) => logger.info(`${source}: ${line(args)}`);
  console.info = (...args: unknown[]) => logger.info(`${source}: ${line(args)}`);
  console.debug = (...args: unknown[]) => logger.debug(`${source}: ${line(args)}`);
  /* eslint-enable no-console */
}

function compact(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return inspect(value, { breakLength: Infinity, depth: 4 });
  }
}
