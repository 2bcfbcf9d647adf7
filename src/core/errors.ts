/** Base class of every error this toolkit throws on purpose. `code` is stable for matching. */
export class AgentKitError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "AgentKitError";
    this.code = code;
  }
}

/** A configuration that cannot work (code `config`), thrown before anything runs; the message says what to change. */
export class ConfigError extends AgentKitError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("config", message, options);
    this.name = "ConfigError";
  }
}

/**
 * A call made in the wrong state (code `state`), such as prompting a closed session or a driver already running a
 * turn.
 */
export class StateError extends AgentKitError {
  constructor(message: string) {
    super("state", message);
    this.name = "StateError";
  }
}

/** An error's message, or the value as text when it is not an Error. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
