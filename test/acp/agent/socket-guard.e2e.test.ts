import { connect, type Socket } from "node:net";
import * as acp from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { CONNECTIONS_CHECK_MS, HEADERS_TIMEOUT_MS } from "../../../src/acp/agent/socket-guard.js";
import { startListening, connectOver } from "./http-support.js";
import { tempDir } from "./support.js";
import { sandboxOrSkip } from "../../support/sandbox-engine.js";

const engine = await sandboxOrSkip("serve --listen's socket bounds");

const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const SLOW_SOCKETS = 1_000;
const init = { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: "socket-test", version: "1" } };

interface Slow {
  socket: Socket;
  openedAt: number;
  closedAt?: number;
  answer: string;
}

/** A socket sending a request's headers one byte every 2 s; it stops when closed (or after `stopAfterMs`). */
function slowSocket(port: number, stopAfterMs: number): Slow {
  const request = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + "a".repeat(200) + "\r\n\r\n";
  const socket = connect({ host: "127.0.0.1", port });
  const slow: Slow = { socket, openedAt: performance.now(), answer: "" };
  let sent = 0;
  const tick = (): void => {
    if (socket.writable && sent < request.length) socket.write(request[sent++]!);
  };
  socket.once("connect", tick);
  const timer = setInterval(tick, 2_000);
  const stop = setTimeout(() => socket.destroy(), stopAfterMs);
  socket.setEncoding("utf8");
  socket.on("data", (chunk: string) => (slow.answer += chunk));
  socket.on("error", () => undefined);
  socket.once("close", () => {
    slow.closedAt = performance.now();
    clearInterval(timer);
    clearTimeout(stop);
  });
  return slow;
}

/** Sends raw bytes and resolves with whatever comes back before the socket closes ("" on a reset with nothing). */
function rawExchange(port: number, bytes: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port }, () => socket.write(bytes));
    let answer = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => (answer += chunk));
    socket.on("error", () => undefined);
    socket.once("close", () => resolve(answer));
    setTimeout(() => socket.destroy(), 15_000).unref();
  });
}

describe.skipIf(!engine.available)("serve --listen: raw sockets are bounded", () => {
  it(
    `${SLOW_SOCKETS} slow-header sockets are closed within the header timeout; /healthz and session/new still work under --nofile=256; oversized headers get 431`,
    async () => {
      const dir = tempDir("agentkit-sockets-");
      cleanups.push(() => dir.remove());
      const proc = startListening(["--model", "demo"], { cwd: dir.path, process: true, prefix: ["prlimit", "--nofile=256:256"] });
      cleanups.push(() => proc.kill());
      const url = await proc.url;
      const port = Number(new URL(url).port);

      // Every slow socket is also ended by the test itself after 40 s, so the loop stops regardless.
      // Measured from the client's connect(): the server accepts 1,000 sockets later on a busy machine (Node's defaults: 60 s + a 30 s check).
      const bound = HEADERS_TIMEOUT_MS + CONNECTIONS_CHECK_MS + 9_000;
      const slow: Slow[] = [];
      for (let i = 0; i < SLOW_SOCKETS; i++) slow.push(slowSocket(port, 40_000));
      cleanups.push(() => slow.forEach((s) => s.socket.destroy()));
      await Promise.all(slow.map((s) => new Promise((resolve) => (s.socket.connecting ? s.socket.once("connect", resolve).once("close", resolve) : resolve(null)))));

      // While the strangers trickle: health and an authenticated ACP connection over HTTP.
      const health = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(5_000) });
      expect(await health.text()).toBe("ok\n");
      const { agent, connection } = connectOver("http", url);
      cleanups.push(() => connection.close());
      await agent.request(acp.methods.agent.initialize, init);
      const { sessionId } = await agent.request(acp.methods.agent.session.new, { cwd: dir.path, mcpServers: [] });
      expect(sessionId).toMatch(/\S/);

      await new Promise<void>((resolve) => {
        const check = (): void => {
          if (slow.every((s) => s.closedAt !== undefined)) resolve();
        };
        for (const s of slow) s.socket.once("close", check);
        check();
      });
      const lifetimes = slow.map((s) => s.closedAt! - s.openedAt);
      const longest = Math.max(...lifetimes);
      const timedOut = slow.filter((s) => s.answer.startsWith("HTTP/1.1 408")).length;
      process.stderr.write(`slow sockets: ${SLOW_SOCKETS} closed, longest lived ${Math.round(longest)} ms (bound ${bound} ms), ${timedOut} answered 408\n`);
      expect(longest).toBeLessThan(bound);
      expect(timedOut).toBeGreaterThan(0);

      // Headers over 16 KiB: a 431 answer, not a silent reset.
      const huge = await rawExchange(port, `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${"b".repeat(20_000)}\r\n\r\n`);
      expect(huge).toMatch(/^HTTP\/1\.1 431 /);
      // And the instance is still fine.
      expect(await (await fetch(`http://127.0.0.1:${port}/healthz`)).text()).toBe("ok\n");
      await agent.request(acp.methods.agent.session.new, { cwd: dir.path, mcpServers: [] });
    },
    90_000,
  );
});
