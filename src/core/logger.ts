import { activeTraceIds } from "./tracing.js";

/** Library code logs only through this; the default writes to stderr (stdout belongs to ACP). */
export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";

/** Where library code logs (never stdout, which belongs to the protocol). */
export interface Logger {
  debug(message: string, data?: Record<string, unknown>): void;
  info(message: string, data?: Record<string, unknown>): void;
  warn(message: string, data?: Record<string, unknown>): void;
  error(message: string, data?: Record<string, unknown>): void;
}

const order: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

/** Lines `[name] level: message {data}` on stderr (or through `write`, e.g. a CLI run's own stream). */
export function createStderrLogger(level: LogLevel = "info", name = "agentkit-acp", write: (line: string) => void = (line) => process.stderr.write(line)): Logger {
  const emit = (at: LogLevel, message: string, data?: Record<string, unknown>): void => {
    if (order[at] < order[level]) return;
    // Inside a recording span (tracing on) a line names its trace and span, to join it with the trace.
    const ids = activeTraceIds();
    if (ids) data = { ...data, ...ids };
    const suffix = data && Object.keys(data).length > 0 ? ` ${safeJson(data)}` : "";
    write(`[${name}] ${at}: ${message}${suffix}\n`);
  };
  return {
    debug: (m, d) => emit("debug", m, d),
    info: (m, d) => emit("info", m, d),
    warn: (m, d) => emit("warn", m, d),
    error: (m, d) => emit("error", m, d),
  };
}

/** A logger that drops everything. */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch {
    return "[unserializable]";
  }
}
