import type { ContentBlock } from "@agentclientprotocol/sdk";
import { RequestError } from "@agentclientprotocol/sdk/unstable";
import type { Item, Part } from "../../core/index.js";
import { newId } from "../../core/index.js";

/** Which optional prompt content a session takes: advertised AND supported by its model. */
export interface AcceptedContent {
  image: boolean;
  audio: boolean;
  embeddedContext: boolean;
}

export const TEXT_ONLY: AcceptedContent = { image: false, audio: false, embeddedContext: false };

/**
 * Converts an ACP prompt into one user item. `text` and `resource_link` are always taken;
 * `image`, `audio` and `resource` only when accepted. Anything else is a -32602 error naming
 * the block — user input is never dropped silently.
 */
export function promptToItems(blocks: readonly ContentBlock[], accepted: AcceptedContent): Item[] {
  if (blocks.length === 0) throw RequestError.invalidParams({ prompt: [] }, "the prompt is empty");
  const parts = blocks.map((block, index) => blockToPart(block, index, accepted));
  return [{ id: newId("item"), role: "user", parts, createdAt: new Date().toISOString() }];
}

function blockToPart(block: ContentBlock, index: number, accepted: AcceptedContent): Part {
  const type = String((block as { type?: unknown }).type);
  const refuse = (why: string): never => {
    throw RequestError.invalidParams({ index, type }, `prompt[${index}]: content block type "${type}" ${why}`);
  };
  switch (block.type) {
    case "text":
      return { type: "text", text: block.text };
    case "resource_link":
      return {
        type: "resource_link",
        uri: block.uri,
        name: block.name,
        ...(block.title ? { title: block.title } : {}),
        ...(block.mimeType ? { mimeType: block.mimeType } : {}),
        ...(block.description ? { description: block.description } : {}),
      };
    case "image":
      if (!accepted.image) return refuse("is not supported by this agent (promptCapabilities.image is false)");
      return { type: "media", mediaType: block.mimeType, data: block.data, ...(block.uri ? { uri: block.uri } : {}) };
    case "audio":
      if (!accepted.audio) return refuse("is not supported by this agent (promptCapabilities.audio is false)");
      return { type: "media", mediaType: block.mimeType, data: block.data };
    case "resource": {
      if (!accepted.embeddedContext) return refuse("is not supported by this agent (promptCapabilities.embeddedContext is false)");
      const resource = block.resource;
      if (!("text" in resource)) return refuse("with binary (blob) content is not supported; send text or a resource_link");
      return { type: "resource", uri: resource.uri, text: resource.text, ...(resource.mimeType ? { mimeType: resource.mimeType } : {}) };
    }
    default:
      return refuse("is not supported");
  }
}

/** What to do with a prompt that arrives while the session is running a turn. */
export type BusyPolicy =
  /** Answer with an error (the headless runtime's behaviour). */
  | "reject"
  /** Wait until the running turn ends, then run. */
  | "queue"
  /** Cancel the running turn, wait for it to end, then run. */
  | "cancel_and_restart";

/** The right to run one turn, from `TurnGate`; `release()` lets the next waiter run (idempotent). */
export interface TurnLease {
  release(): void;
}

/**
 * One session's turn arbiter: at most one turn at a time, whoever submits input (ACP prompts,
 * a host's local UI, background work). Waiters are served in arrival order.
 */
export class TurnGate {
  #held = false;
  readonly #waiters: Array<() => void> = [];

  get busy(): boolean {
    return this.#held;
  }

  /** Takes the turn now, or returns undefined when one is running. */
  tryAcquire(): TurnLease | undefined {
    if (this.#held) return undefined;
    this.#held = true;
    return this.#lease();
  }

  /** Waits for the turn; rejects with the signal's reason when `signal` aborts first. */
  acquire(signal?: AbortSignal): Promise<TurnLease> {
    const now = this.tryAcquire();
    if (now) return Promise.resolve(now);
    return new Promise<TurnLease>((resolve, reject) => {
      const grant = (): void => {
        signal?.removeEventListener("abort", onAbort);
        resolve(this.#lease());
      };
      const onAbort = (): void => {
        const i = this.#waiters.indexOf(grant);
        if (i >= 0) this.#waiters.splice(i, 1);
        reject(signal?.reason instanceof Error ? signal.reason : new Error("aborted while waiting for the session's turn"));
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#waiters.push(grant);
    });
  }

  #lease(): TurnLease {
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        const next = this.#waiters.shift();
        if (next) next();
        else this.#held = false;
      },
    };
  }
}
