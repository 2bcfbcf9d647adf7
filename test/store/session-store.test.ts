import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { silentLogger } from "../../src/core/index.js";
import { InMemorySessionStore, JsonlSessionStore } from "../../src/store/index.js";
import { sessionStoreContract } from "./session-store.contract.js";

sessionStoreContract("InMemorySessionStore", async (clock) => {
  const store = new InMemorySessionStore({ clock });
  return { store, reopen: async () => store, cleanup: async () => {} };
});

sessionStoreContract("JsonlSessionStore", async (clock) => {
  const stateDir = await mkdtemp(join(tmpdir(), "agentkit-store-"));
  return {
    store: new JsonlSessionStore({ stateDir, clock, logger: silentLogger }),
    reopen: async () => new JsonlSessionStore({ stateDir, clock, logger: silentLogger }),
    cleanup: () => rm(stateDir, { recursive: true, force: true }),
  };
});
