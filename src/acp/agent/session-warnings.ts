import type { Logger } from "../../core/index.js";
import { errorMessage } from "../../core/index.js";
import type { AcpClientHandle } from "./client-handle.js";

/**
 * A session's start-up warnings (e.g. an MCP server that did not start), made visible to the
 * user: as `notice` updates right after the session/new answer when the client advertises
 * `session.notices`; otherwise held and sent as agent message text at the start of the first
 * prompt (editors show message text reliably only inside a turn). Always logged too.
 */
export class SessionWarnings {
  readonly #client: AcpClientHandle;
  readonly #sessionId: string;
  readonly #logger: Logger;
  #held: string[] = [];

  constructor(client: AcpClientHandle, sessionId: string, logger: Logger) {
    this.#client = client;
    this.#sessionId = sessionId;
    this.#logger = logger;
  }

  /** Call once the session exists; the notices go out after the answer now being sent. */
  announce(warnings: readonly string[]): void {
    if (warnings.length === 0) return;
    for (const warning of warnings) this.#logger.warn(warning, { sessionId: this.#sessionId });
    if (this.#client.capabilities.session?.notices == null) {
      this.#held.push(...warnings);
      return;
    }
    // The handler's answer is queued for writing within this tick's microtasks; after it, the notices.
    setImmediate(() => {
      for (const warning of warnings) {
        this.#client
          .sessionUpdate(this.#sessionId, { sessionUpdate: "notice", severity: "warning", title: firstSentence(warning), description: warning })
          .catch((error: unknown) => this.#logger.debug("could not send a notice", { error: errorMessage(error) }));
      }
    });
  }

  /** Before a prompt's turn: sends the held warnings as agent message text (once). */
  async beforePrompt(): Promise<void> {
    const held = this.#held.splice(0);
    if (held.length === 0) return;
    const text = held.map((w) => `[agentkit-acp warning] ${w}`).join("\n") + "\n\n";
    try {
      await this.#client.sessionUpdate(this.#sessionId, { sessionUpdate: "agent_message_chunk", content: { type: "text", text } });
    } catch (error) {
      this.#logger.debug("could not send the session warnings", { error: errorMessage(error) });
    }
  }
}

function firstSentence(text: string): string {
  const colon = text.indexOf(": ");
  return colon > 0 ? text.slice(0, colon) : text;
}
