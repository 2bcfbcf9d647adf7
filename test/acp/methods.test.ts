import * as acp from "@agentclientprotocol/sdk/unstable";
import * as V2 from "@agentclientprotocol/sdk/experimental/v2/unstable";
import { describe, expect, it } from "vitest";
import { AGENT_METHODS, advertisedCapabilities, capabilityOf, hasCapability, registerAgentMethods, type AgentMethod } from "../../src/acp/methods.js";
import { requireCapability } from "../../src/acp/client/capabilities.js";
import { CapabilityError } from "../../src/acp/client/errors.js";

const allV1 = [...Object.values(acp.AGENT_METHODS)].sort();
const v2Methods = new Set<string>(Object.values(V2.AGENT_METHODS));
/** v2 methods no v1 method stands for (the runtime has no cancellable tool calls or terminals of its own). */
const V2_ONLY = ["terminal/cancel", "tool_call/cancel"];

describe("the ACP method table (src/acp/methods.ts)", () => {
  it("lists every v1 agent method of the SDK once, with the SDK's unstable split", () => {
    expect(AGENT_METHODS.map((e) => e.method).sort()).toEqual(allV1);
    // Stable methods are in the stable entrypoint's schema too; unstable ones are not.
    for (const entry of AGENT_METHODS) {
      const stable = entry.method === acp.methods.agent.mcp.message ? false : !["logout", "auth/status", "providers/list", "providers/set", "providers/disable", "session/fork", "session/set_title", "session/status", "session/archive", "session/unarchive"].includes(entry.method);
      expect(entry.unstable, entry.method).toBe(!stable);
    }
  });

  it("names a real v2 method for each v1 method that has one, and every v2 method is reached from v1 (but the v2-only ones)", () => {
    const reached = new Set<string>();
    for (const entry of AGENT_METHODS) {
      if (entry.v2 === null) continue;
      expect(v2Methods.has(entry.v2.method), `${entry.method} → ${entry.v2.method}`).toBe(true);
      reached.add(entry.v2.method);
    }
    expect([...v2Methods].filter((m) => !reached.has(m)).sort()).toEqual(V2_ONLY);
  });

  it("advertises the capability of each served method, which the client's check then accepts", () => {
    for (const entry of AGENT_METHODS) {
      const path = capabilityOf(entry.method);
      const caps = advertisedCapabilities(new Set<AgentMethod>([entry.method]));
      if (path === undefined) {
        expect(caps, entry.method).toEqual({ loadSession: false });
        expect(() => requireCapability({}, entry.method)).not.toThrow();
        continue;
      }
      expect(hasCapability(caps, path), entry.method).toBe(true);
      expect(() => requireCapability(caps, entry.method)).not.toThrow();
      expect(() => requireCapability(advertisedCapabilities(new Set()), entry.method)).toThrow(CapabilityError);
    }
  });

  it("loadSession and mcpCapabilities.acp are booleans; the rest are objects, and a null one is not advertised", () => {
    expect(advertisedCapabilities(new Set<AgentMethod>(["session/load", "mcp/message", "session/fork", "logout", "providers/list"]))).toEqual({
      loadSession: true,
      mcpCapabilities: { acp: true },
      sessionCapabilities: { fork: {} },
      auth: { logout: {} },
      providers: {},
    });
    expect(hasCapability({ sessionCapabilities: { fork: null } }, "sessionCapabilities.fork")).toBe(false);
    expect(hasCapability({ loadSession: false }, "loadSession")).toBe(false);
    expect(() => requireCapability({ sessionCapabilities: {} }, "session/unarchive")).toThrow(/sessionCapabilities\.archive/);
  });

  it("registers exactly the handlers the groups give, requests and notifications apart, in table order", () => {
    const calls: string[] = [];
    const app = { onRequest: (method: string) => calls.push(`request ${method}`), onNotification: (method: string) => calls.push(`notification ${method}`) };
    const served = registerAgentMethods(app, {
      connection: { [acp.methods.agent.session.cancel]: () => undefined, [acp.methods.agent.initialize]: () => ({ protocolVersion: 1 }) },
      account: {},
      lifecycle: {},
      stored: { [acp.methods.agent.session.status]: () => ({ status: "open" as const }) },
    });
    expect(calls).toEqual(["request initialize", "request session/status", "notification session/cancel"]);
    expect([...served]).toEqual(["initialize", "session/status", "session/cancel"]);
  });
});
