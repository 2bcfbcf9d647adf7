import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { silentLogger } from "../../src/core/index.js";
import { InMemorySessionStore, InProcessSessionLeases, JsonlSessionStore } from "../../src/store/index.js";
import { describe } from "vitest";
import { postgresOrSkip } from "../support/postgres.js";
import { schemaScope } from "../support/postgres-store.js";
import { sessionStoreContract } from "./session-store.contract.js";
import { sessionRetentionContract } from "./session-retention.contract.js";

/** Leases of two instances in this process (file and memory stores lease within one process). */
const inProcessLeases = async () => ({ mine: new InProcessSessionLeases("mine"), theirs: new InProcessSessionLeases("theirs") });

sessionStoreContract("InMemorySessionStore", async (clock) => {
  const store = new InMemorySessionStore({ clock });
  return { store, reopen: async () => store, cleanup: async () => {} };
});

sessionRetentionContract("InMemorySessionStore", async (clock) => {
  const store = new InMemorySessionStore({ clock });
  return { store, reopen: async () => store, cleanup: async () => {}, leases: inProcessLeases };
});

sessionRetentionContract("JsonlSessionStore", async (clock) => {
  const stateDir = await mkdtemp(join(tmpdir(), "agentkit-store-"));
  return {
    store: new JsonlSessionStore({ stateDir, clock, logger: silentLogger }),
    reopen: async () => new JsonlSessionStore({ stateDir, clock, logger: silentLogger }),
    cleanup: () => rm(stateDir, { recursive: true, force: true }),
    leases: inProcessLeases,
  };
});

sessionStoreContract("JsonlSessionStore", async (clock) => {
  const stateDir = await mkdtemp(join(tmpdir(), "agentkit-store-"));
  return {
    store: new JsonlSessionStore({ stateDir, clock, logger: silentLogger }),
    reopen: async () => new JsonlSessionStore({ stateDir, clock, logger: silentLogger }),
    cleanup: () => rm(stateDir, { recursive: true, force: true }),
  };
});

const pg = await postgresOrSkip("the SessionStore contract on PostgreSQL");
describe.runIf(pg.url)("on PostgreSQL", () => {
  sessionStoreContract("PostgresSessionStore", async (clock) => {
    const scope = schemaScope(pg.url!);
    const first = await scope.open({ clock });
    return {
      store: first.sessions,
      reopen: async () => (await scope.open({ clock })).sessions,
      cleanup: () => scope.cleanup(),
    };
  });
  sessionRetentionContract("PostgresSessionStore", async (clock) => {
    const scope = schemaScope(pg.url!);
    const first = await scope.open({ clock });
    const second = await scope.open({ clock });
    return {
      store: first.sessions,
      reopen: async () => (await scope.open({ clock })).sessions,
      cleanup: () => scope.cleanup(),
      leases: async () => ({ mine: first.leases, theirs: second.leases }),
    };
  });
});
