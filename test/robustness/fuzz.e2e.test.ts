import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openServe, writeScript, type ServeProcess } from "../acp/agent/serve-support.js";
import { tempDir } from "../acp/agent/support.js";

// A seeded fuzz run against a real `serve`: malformed JSON, wrong shapes, hostile paths,
// oversized lines and pipelined bursts. Every request with an id gets exactly one answer, stdout
// stays pure JSON-RPC, and the process keeps serving. The seed makes a failure reproducible.

const SEED = 14_2026;
const CASES = 1500;
const LIMIT = 32 * 1024;

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe("robustness: seeded fuzzing of serve's wire", () => {
  const dir = tempDir("agentkit-robust-fuzz-");
  let proc: ServeProcess;
  beforeAll(() => {
    proc = openServe(["--model", `scripted:${writeScript(dir.path, [{ text: "ok" }])}`, "--no-persist", "--max-message-bytes", String(LIMIT)], { cwd: dir.path, process: true });
  });
  afterAll(async () => {
    await proc.end();
    dir.remove();
  });

  it(`${CASES} hostile messages (seed ${SEED}): one answer per request id, pure stdout, still serving`, async () => {
    const random = rng(SEED);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
    const methods = ["initialize", "session/new", "session/load", "session/list", "session/prompt", "session/cancel", "session/close", "authenticate", "session/set_mode", "fs/read_text_file", "_x/y", "", "nope"];
    const paths = (): unknown =>
      pick([dir.path, "/tmp/\u0000x", `/${"a".repeat(256)}`, `/${"é".repeat(200)}/b`, "relative", "", 42, null, ["/"], { p: 1 }, `/${"b/".repeat(3000)}`, "/nonexistent/dir"]);
    const params = (): unknown =>
      pick([
        undefined,
        null,
        [],
        "str",
        { cwd: paths(), mcpServers: pick([[], null, "x", [{ name: "n", command: paths(), args: [], env: [] }]]) },
        { cwd: paths(), additionalDirectories: [paths(), paths()], mcpServers: [] },
        { sessionId: pick(["sess_x", "", 5, null]), prompt: pick([[], [{ type: "text", text: "hi" }], [{ type: "bogus" }], "x"]) },
        { protocolVersion: pick([1, 2, -1, "1", null, 1e308]) },
        { _meta: { pad: "z".repeat(Math.floor(random() * 2) * LIMIT) } },
      ]);
    const ids = new Set<number>();
    let sent = 0;
    let nextId = 1;
    let burst = "";
    for (let i = 0; i < CASES; i++) {
      const kind = random();
      let line: string;
      if (kind < 0.08) {
        line = pick(["{", "}", "[]", "[1,2]", "null", "42", '"x"', "{\"jsonrpc\":\"2.0\"", "\u0000\u0001", "{\"id\":}", "x".repeat(LIMIT + 5)]);
      } else {
        const id = nextId++;
        const message: Record<string, unknown> = { jsonrpc: pick(["2.0", "2.0", "2.0", "1.0", undefined]), method: pick(methods) };
        const withId = random() < 0.85;
        if (withId) message.id = id;
        const p = params();
        if (p !== undefined) message.params = p;
        line = JSON.stringify(message);
        // Requests the SDK answers: a valid jsonrpc envelope with an id and a string method.
        if (withId && message.jsonrpc === "2.0" && line.length <= LIMIT) ids.add(id);
        if (withId && line.length > LIMIT) ids.add(id); // our guard answers these
      }
      burst += `${line}\n`;
      sent++;
      if (random() < 0.2 || i === CASES - 1) {
        proc.child.stdin!.write(burst);
        burst = "";
      }
    }
    // A final valid exchange proves the connection still serves.
    proc.child.stdin!.write(`${JSON.stringify({ jsonrpc: "2.0", id: 999_999, method: "initialize", params: { protocolVersion: 1 } })}\n`);
    const answered = (): Map<unknown, number> => {
      const counts = new Map<unknown, number>();
      for (const line of proc.stdoutLines() as Array<{ id?: unknown; method?: unknown }>) {
        if (line.method === undefined && line.id !== undefined && line.id !== null) counts.set(line.id, (counts.get(line.id) ?? 0) + 1);
      }
      return counts;
    };
    // Handlers run concurrently, so the final answer can overtake slower ones: wait (bounded)
    // until every request has its answer.
    const allAnswered = (): boolean => {
      const counts = answered();
      return counts.has(999_999) && [...ids].every((id) => counts.has(id));
    };
    const deadline = Date.now() + 60_000;
    while (!allAnswered()) {
      if (Date.now() > deadline || proc.child.exitCode !== null) throw new Error(`unanswered requests: ${[...ids].filter((id) => !answered().has(id)).join(", ") || "(the final initialize)"}; stderr:\n${proc.stderr.slice(-2000)}`);
      await new Promise((resolve) => proc.child.stdout!.once("data", resolve));
    }
    const counts = answered();
    for (const id of ids) expect(counts.get(id), `request ${id}`).toBe(1);
    for (const [, n] of counts) expect(n).toBe(1);
    for (const line of proc.stdoutLines()) expect(line).toMatchObject({ jsonrpc: "2.0" });
    expect(proc.child.exitCode).toBeNull();
    expect(sent).toBe(CASES);
  });
});
