import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { tempDir } from "../support/temp.js";

const run = promisify(execFile);
const script = new URL("../../scripts/internal-types.mjs", import.meta.url).pathname;

// `npm run build` runs scripts/internal-types.mjs after tsc (stripInternal): the published
// declarations must hold nothing tagged @internal, as the API reference shows nothing of it.
// Here on a small package of its own (src/ and the dist/ tsc would emit), in one run of the script.
const source = `
export class Session {
  /** @internal — sessions come from \`open\`. */
  constructor(readonly id: string) {}
  /** @internal */
  receive(): void {}
  close(): void {}
}
/** @internal */
export function helper(): number { return 1; }
export interface Options {
  /** @internal tests only */
  bridge?: "node";
  path?: string;
}
`;

async function check(root: string): Promise<{ code: number; stderr: string }> {
  return run(process.execPath, [script, root], { cwd: root }).then(
    ({ stderr }) => ({ code: 0, stderr }),
    (error: { code: number; stderr: string }) => ({ code: error.code, stderr: error.stderr }),
  );
}

describe("scripts/internal-types.mjs (run by npm run build)", () => {
  // One run of the script (a type check of its own): the package's own dist/ passes it in every build.
  it("seals the class whose constructor is internal, passes what stripInternal emits, and names each kind of leak", async () => {
    const root = tempDir();
    mkdirSync(join(root, "src"));
    mkdirSync(join(root, "dist"));
    for (const name of ["stripped", "leaky"]) writeFileSync(join(root, `src/${name}.ts`), source);
    // What tsc emits with stripInternal: the class has no constructor left (a public `new Session()` for a user).
    writeFileSync(join(root, "dist/stripped.d.ts"), "export declare class Session {\n    readonly id: string;\n    close(): void;\n}\nexport interface Options {\n    path?: string;\n}\n");
    // Without stripInternal: every internal declaration is there, with its comment.
    writeFileSync(
      join(root, "dist/leaky.d.ts"),
      'export declare class Session {\n    readonly id: string;\n    /** @internal */\n    constructor(id: string);\n    receive(): void;\n    close(): void;\n}\nexport declare function helper(): number;\nexport interface Options {\n    bridge?: "node";\n    path?: string;\n}\n',
    );
    // An export by name of a stripped declaration: the published index no longer type-checks.
    writeFileSync(join(root, "dist/index.d.ts"), 'export { Session, helper } from "./stripped.js";\n');

    const { code, stderr } = await check(root);
    expect(code).toBe(1);
    expect(stderr.trim().split("\n").slice(1).map((line) => line.trim()).sort()).toEqual([
      `dist/index.d.ts: Module '"./stripped.js"' has no exported member 'helper'.`,
      "dist/leaky.d.ts: Options.bridge is @internal in src/leaky.ts but published",
      "dist/leaky.d.ts: Session.constructor is @internal in src/leaky.ts but published",
      "dist/leaky.d.ts: Session.receive is @internal in src/leaky.ts but published",
      "dist/leaky.d.ts: helper is @internal in src/leaky.ts but published",
      "dist/leaky.d.ts: still says @internal (tsc strips only a declaration's leading comment; is stripInternal set?)",
    ]);
    // Sealed: `new Session("x")` and `class X extends Session` no longer type-check for a user.
    expect(readFileSync(join(root, "dist/stripped.d.ts"), "utf8")).toContain("export declare class Session {\n    private constructor();\n    readonly id: string;");
  });
});
