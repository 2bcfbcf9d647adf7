import { describe, expect, it } from "vitest";
import { checkStoreUrl, redactStoreUrl, storeBackendFor, storeBackends } from "../../src/store/index.js";

describe("store registry", () => {
  it("picks the backend by URL scheme and says what a good URL looks like otherwise", () => {
    expect(storeBackendFor("postgres://u:p@h/db").name).toBe("PostgreSQL");
    expect(storeBackendFor("postgresql://u@h:5432/db").name).toBe("PostgreSQL");
    expect(() => storeBackendFor("mysql://u@h/db")).toThrow(/^store URL must start with postgres:\/\/ or postgresql:\/\/, got "mysql:"; use postgres:\/\/USER:PASSWORD@HOST:PORT\/DATABASE$/);
    expect(() => storeBackendFor("no url at all")).toThrow(/is not a URL; use postgres:\/\//);
    // The backend's own check runs without loading its driver.
    expect(() => checkStoreUrl("postgres:///db")).toThrow(/names no host/);
    expect(storeBackends.flatMap((b) => b.schemes)).toEqual(["postgres", "postgresql"]);
  });

  it("never shows a password", () => {
    expect(redactStoreUrl("postgres://u:secret@h/db")).toBe("postgres://u:***@h/db");
    expect(() => storeBackendFor("x:secret@@")).not.toThrow(/secret/);
  });
});
