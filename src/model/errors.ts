import { APICallError, InvalidResponseDataError, JSONParseError, TypeValidationError } from "@ai-sdk/provider";
import { errorMessage } from "../core/index.js";
import type { ModelSpec } from "./model-id.js";
import { providers } from "./model-id.js";
import { ModelError } from "./types.js";

/** What the error mapping needs to say what to fix. */
export interface ErrorContext {
  spec: ModelSpec;
  baseUrl: string;
  /** The variable a user should set or check for the key. */
  envVar: string;
  /** Whether a key was sent. */
  hadKey: boolean;
}

export interface MappedError {
  error: ModelError;
  /** Safe to try again (only ever done before anything was streamed). */
  retryable: boolean;
  /** The server's Retry-After, when it gave one. */
  retryAfterMs?: number;
}

/** Turns whatever the provider library threw into a ModelError whose message says what to fix. */
export function toModelError(error: unknown, context: ErrorContext): MappedError {
  if (error instanceof ModelError) return { error, retryable: false };
  const label = providers[context.spec.provider].label;
  if (APICallError.isInstance(error)) {
    const status = error.statusCode;
    if (status === undefined || error.message.startsWith("Cannot connect to API")) {
      return {
        error: new ModelError("connection", `could not connect to ${context.baseUrl} — ${providers[context.spec.provider].connectionHint} (${explainedCause(error, context.baseUrl)})`, {
          cause: error,
        }),
        retryable: true,
      };
    }
    if (status >= 200 && status < 300) {
      return {
        error: new ModelError(
          "bad_response",
          `${label}'s response stream broke off before the model finished (connection closed: ${causeText(error)}); try again`,
          { status, cause: error },
        ),
        retryable: false,
      };
    }
    return mapStatus(status, error, context);
  }
  if (JSONParseError.isInstance(error) || TypeValidationError.isInstance(error) || InvalidResponseDataError.isInstance(error)) {
    return {
      error: new ModelError(
        "bad_response",
        `${label} sent a malformed response stream (not valid ${providers[context.spec.provider].protocol === "anthropic" ? "Anthropic Messages" : "OpenAI chat-completions"} SSE): check that ${context.baseUrl} is the right API endpoint`,
        { cause: error },
      ),
      retryable: false,
    };
  }
  if (isConnectionLoss(error)) {
    return {
      error: new ModelError("bad_response", `${label}'s response stream broke off before the model finished (connection closed: ${causeText(error)}); try again`, {
        cause: error,
      }),
      retryable: false,
    };
  }
  return {
    error: new ModelError("bad_response", `${label} call failed: ${errorMessage(error)}`, { cause: error }),
    retryable: false,
  };
}

function mapStatus(status: number, error: APICallError, context: ErrorContext): MappedError {
  const { spec, baseUrl, envVar } = context;
  const label = providers[spec.provider].label;
  const said = serverSaid(error);
  const make = (kind: ModelError["kind"], message: string, retryable = false): MappedError => ({
    error: new ModelError(kind, `${message}${said}`, { status, cause: error }),
    retryable,
    ...retryAfter(error),
  });
  if (status === 401) {
    return context.hadKey
      ? make("auth", `${label} rejected the API key (401): check ${envVar}`)
      : make("auth", `${label} at ${baseUrl} requires an API key (401): set ${envVar}`);
  }
  if (status === 403) return make("auth", `${label} refused access (403) to model '${spec.model}': check that the key in ${envVar} may use it`);
  if (status === 404) {
    return make("config", `${label} has no model '${spec.model}' at ${baseUrl} (404): ${providers[spec.provider].missingModelHint(spec.model)}`);
  }
  if (status === 429) return make("rate_limit", `${label} rate limit or quota exceeded (429): wait and try again, or check your plan`, true);
  if (status === 529) return make("server", `${label} is overloaded (529): try again later`, true);
  if (status >= 500) return make("server", `${label} had a server error (${status}): try again later`, true);
  if (status === 408) return make("server", `${label} timed out (408): try again`, true);
  return make("bad_request", `${label} rejected the request (${status})`);
}

/** The server's own message, shortened, e.g. `; server said: "Incorrect API key provided"`. */
function serverSaid(error: APICallError): string {
  const message = error.message.trim();
  if (message === "" || /^(Bad Request|Unauthorized|Forbidden|Not Found|Internal Server Error)$/i.test(message)) return "";
  const short = message.length > 300 ? `${message.slice(0, 300)}…` : message;
  return `; server said: "${short}"`;
}

function retryAfter(error: APICallError): { retryAfterMs?: number } {
  const header = error.responseHeaders?.["retry-after"];
  if (header === undefined) return {};
  const seconds = Number(header);
  return Number.isFinite(seconds) && seconds >= 0 ? { retryAfterMs: seconds * 1000 } : {};
}

/** The cause, with fetch's terse "bad port" explained (it refuses ports browsers block, e.g. 1, 6000, 6665-6669). */
function explainedCause(error: unknown, baseUrl: string): string {
  const cause = causeText(error);
  if (cause !== "bad port") return cause;
  let port = "";
  try {
    port = new URL(baseUrl).port;
  } catch {
    // the URL was checked earlier; keep the plain wording
  }
  return `bad port: fetch refuses to connect to port ${port || "this port"}, one browsers block; serve the model on another port`;
}

function causeText(error: unknown): string {
  let current: unknown = error;
  const seen = new Set<unknown>();
  let text = errorMessage(error);
  while (current instanceof Error && !seen.has(current)) {
    seen.add(current);
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string") return code;
    text = current.message;
    current = current.cause;
  }
  return text;
}

function isConnectionLoss(error: unknown): boolean {
  const text = causeText(error).toLowerCase();
  return text === "terminated" || text.includes("socket") || text.includes("econnreset") || text === "und_err_socket";
}
