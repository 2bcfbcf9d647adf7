import { AgentKitError } from "../core/index.js";
import type { OpenedStore, OpenStoreOptions, StoreBackend } from "./backend.js";
import { postgresBackend } from "./postgres/backend.js";
import { redactStoreUrl } from "./store-url.js";

export type { OpenedStore, OpenStoreOptions, StoreBackend } from "./backend.js";

export { redactStoreUrl } from "./store-url.js";

// Shared stores are chosen by the URL's scheme (`--store URL`, AGENTKIT_STORE_URL): the CLI and
// `serve` name no backend. A backend's driver loads only in `open` (start-up without a store
// URL never pays for it). Adding a backend: one `StoreBackend` and one entry in `storeBackends`.

/** The registered backends. */
export const storeBackends: readonly StoreBackend[] = [postgresBackend];

/** The backend for a store URL; throws an `AgentKitError` (`invalid_store_url`) saying what a good URL looks like. */
export function storeBackendFor(url: string): StoreBackend {
  const use = storeBackends.map((b) => b.example).join(" or ");
  let protocol: string;
  try {
    protocol = new URL(url).protocol;
  } catch {
    throw new AgentKitError("invalid_store_url", `store URL ${JSON.stringify(redactStoreUrl(url))} is not a URL; use ${use}`);
  }
  const backend = storeBackends.find((b) => b.schemes.includes(protocol.slice(0, -1)));
  if (!backend) {
    const schemes = storeBackends.flatMap((b) => b.schemes.map((s) => `${s}://`)).join(" or ");
    throw new AgentKitError("invalid_store_url", `store URL must start with ${schemes}, got ${JSON.stringify(protocol)}; use ${use}`);
  }
  return backend;
}

/** Checks a store URL without connecting or loading a driver (for command-line checks). */
export function checkStoreUrl(url: string): void {
  storeBackendFor(url).check(url);
}

/** Opens the store a URL names, through its backend. */
export function openStore(options: OpenStoreOptions): Promise<OpenedStore> {
  return storeBackendFor(options.url).open(options);
}
