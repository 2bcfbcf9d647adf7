/**
 * Which ACP protocol versions a runtime serves: `v1` (default) only v1, as before; `v2` only the
 * v2 draft (a v1 client's initialize gets -32022); `auto` v2 to a client asking for 2 or more and
 * v1 otherwise (the SDK's `agentProtocolRouter`). v2 goes through a thin bridge to the same
 * runtime (v2-bridge.ts). No imports: the CLI parses `--protocol` before loading the SDK.
 */
export type AcpProtocolChoice = "v1" | "v2" | "auto";
/** The `AcpProtocolChoice` values, for option parsers (`serve --protocol`). */
export const ACP_PROTOCOL_CHOICES: readonly AcpProtocolChoice[] = ["v1", "v2", "auto"];

/** One served connection (see `AcpHeadlessRuntime.serve`). */
export interface AcpServedConnection {
  /** Resolves when the connection has closed and its sessions are shut down. */
  readonly closed: Promise<void>;
  /** Cancels running turns (their prompts answer `cancelled`), then closes the connection. */
  close(): Promise<void>;
}
