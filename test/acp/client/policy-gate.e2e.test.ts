import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { RequestError } from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { ClientPermissionPolicy, createFileSystemHost, createTerminalHost, type TerminalHost } from "../../../src/acp/client/index.js";
import { buildLayout, type Layout } from "./host-support.js";

// The client's permission policy gating host calls through the hosts' `authorize` option.

let layout: Layout | undefined;
let terminals: TerminalHost | undefined;
afterEach(async () => {
  await terminals?.dispose();
  layout?.cleanup();
});

const signal = new AbortController().signal;

async function reason(promise: Promise<unknown>): Promise<string | undefined> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  return error instanceof RequestError ? (error.data as { reason?: string }).reason : undefined;
}

describe("ClientPermissionPolicy as the hosts' authorize gate", () => {
  it("denies writes outside a sub-tree and commands by prefix, allows the rest", async () => {
    layout = buildLayout();
    const l = layout;
    const policy = new ClientPermissionPolicy({
      rules: [
        { name: "writes only under sub/", kind: "edit", path: "sub/**", action: "allow" },
        { name: "no other writes", kind: "edit", action: "deny" },
        { name: "no rm", command: "rm", action: "deny" },
      ],
      default: "allow",
    });
    const session = { sessionId: "s1", cwd: l.cwd, additionalDirectories: [] };
    const fs = createFileSystemHost({ access: "read-write", authorize: policy.hostAuthorizer() });
    await fs.writeTextFile({ sessionId: "s1", path: join(l.cwd, "sub", "ok.txt"), content: "allowed" }, session, signal);
    expect(readFileSync(join(l.cwd, "sub", "ok.txt"), "utf8")).toBe("allowed");
    expect(await reason(fs.writeTextFile({ sessionId: "s1", path: join(l.cwd, "top.txt"), content: "no" }, session, signal))).toBe("denied");
    expect(existsSync(join(l.cwd, "top.txt"))).toBe(false);
    expect((await fs.readTextFile({ sessionId: "s1", path: join(l.cwd, "ok.txt") }, session, signal)).content).toContain("inside ok");

    terminals = createTerminalHost({ authorize: policy.hostAuthorizer() });
    expect(await reason(terminals.create({ sessionId: "s1", command: "rm -rf sub" }, session, signal))).toBe("denied");
    expect(await reason(terminals.create({ sessionId: "s1", command: "rm", args: ["-rf", "sub"] }, session, signal))).toBe("denied");
    expect(existsSync(join(l.cwd, "sub"))).toBe(true);
    const { terminalId } = await terminals.create({ sessionId: "s1", command: "echo fine" }, session, signal);
    expect(await terminals.waitForExit({ sessionId: "s1", terminalId }, session, signal)).toEqual({ exitCode: 0, signal: null });
  });
});
