import { rmSync } from "node:fs";
import { tempDir as scratchDir } from "../../support/temp.js";
import type { RequestPermissionResponse, SessionUpdate } from "@agentclientprotocol/sdk";

// The in-memory pair is public API (src/testing); tests use it as users would.
export { memoryPipes, RecordingClient, selectOption as select } from "../../../src/testing/index.js";

/** A promise with its resolver, for permission answers a test releases later. */
export function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** Resolves with `{ cancelled }` when the permission request is cancelled by the agent. */
export function waitForAbort(signal: AbortSignal): Promise<RequestPermissionResponse> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve({ outcome: { outcome: "cancelled" } });
    else signal.addEventListener("abort", () => resolve({ outcome: { outcome: "cancelled" } }), { once: true });
  });
}

/** A scratch directory (test/support/temp.ts removes it after the test); `remove` ends it sooner. */
export function tempDir(prefix = "agentkit-agent-"): { path: string; remove(): void } {
  const path = scratchDir(prefix);
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

export function textOf(updates: SessionUpdate[], kind: "agent_message_chunk" | "agent_thought_chunk"): string {
  return updates
    .map((u) => (u.sessionUpdate === kind && u.content.type === "text" ? u.content.text : ""))
    .join("");
}

/** Every capability turned on: `true` leaves and `{}` support markers, as dotted paths. */
export function advertised(capabilities: object): string[] {
  const out: string[] = [];
  const walk = (value: unknown, path: string): void => {
    if (value === true) out.push(path);
    else if (value && typeof value === "object") {
      const entries = Object.entries(value).filter(([k]) => k !== "_meta");
      if (entries.length === 0 && path.includes(".")) out.push(path);
      for (const [k, v] of entries) walk(v, path ? `${path}.${k}` : k);
    }
  };
  walk(capabilities, "");
  return out.sort();
}
