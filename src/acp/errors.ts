import { RequestError } from "@agentclientprotocol/sdk/unstable";
import { AgentKitError, CancelledError, errorMessage } from "../core/index.js";

/**
 * Codes of the AgentKitError family that mean "the peer sent something we refuse" (-32602);
 * every other failure of ours is an internal error (-32603) to the peer.
 */
const INVALID_PARAMS_CODES = new Set([
  // tools: bad tool input, refused paths
  "tool_input",
  "empty_path",
  "nul_byte",
  "not_absolute",
  "no_roots",
  "outside_roots",
  "not_a_directory",
  "dangling_symlink",
  // store: bad ids and cursors
  "invalid_session_id",
  "invalid_argument",
  "invalid_cursor",
  "config",
  "usage",
]);

/**
 * The JSON-RPC error a peer receives for a failure of ours: the one mapping from the
 * AgentKitError family (and anything else thrown) to the wire. A RequestError passes through;
 * `CancelledError` becomes -32800; an AgentKitError keeps its `code` as `data.reason`.
 * `context` prefixes the message ("session store: …").
 */
export function toRequestError(error: unknown, context?: string): RequestError {
  if (error instanceof RequestError) return error;
  const message = context === undefined ? errorMessage(error) : `${context}: ${errorMessage(error)}`;
  if (error instanceof CancelledError) return RequestError.requestCancelled({ reason: error.code }, message);
  if (error instanceof AgentKitError && INVALID_PARAMS_CODES.has(error.code)) return RequestError.invalidParams({ reason: error.code }, message);
  // Ours carry a message that says what failed (a provider unreachable, a store down): not "Internal error: …".
  if (error instanceof AgentKitError) return new RequestError(-32603, message, { reason: error.code, details: errorMessage(error) });
  return RequestError.internalError({ details: errorMessage(error) }, message);
}
