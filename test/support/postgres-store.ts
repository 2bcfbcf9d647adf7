import pg from "pg";
import { silentLogger } from "../../src/core/index.js";
import type { OpenPostgresStoreOptions, PostgresStore } from "../../src/store/postgres/index.js";
import { openPostgresStore } from "../../src/store/postgres/index.js";

/**
 * Stores on a fresh schema of the test server, for one test: `open()` may be called again for
 * a "restart" (another instance on the same schema); `cleanup()` closes them all and drops the schema.
 */
export function schemaScope(url: string): { schema: string; open(options?: Partial<OpenPostgresStoreOptions>): Promise<PostgresStore>; cleanup(): Promise<void> } {
  const schema = `t_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const opened: PostgresStore[] = [];
  return {
    schema,
    async open(options = {}) {
      const store = await openPostgresStore({ url, schema, logger: silentLogger, poolSize: 4, ...options });
      opened.push(store);
      return store;
    },
    async cleanup() {
      await Promise.all(opened.splice(0).map((s) => s.close()));
      const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
      await client.connect();
      try {
        await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      } finally {
        await client.end();
      }
    },
  };
}
