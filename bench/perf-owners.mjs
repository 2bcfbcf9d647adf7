// Where an agent's CPU goes, by owner, from `perf record` profiles of the measured phase
// (bench/service-floor.ts BENCH_PERF_PHASE=DIR). Main thread: each sample goes to the nearest
// frame on its stack that belongs to a package or to our dist/ (Node's own frames count only when
// nothing else is on the stack), so a builtin or GC step is charged to the code that called it.
// Other threads: V8's compiler, its GC (scavenge, mark, sweep), fdatasync and the rest.
// Usage: node bench/perf-owners.mjs TURNS A.data [B.data] — ms per turn (2,000 Hz samples); with
// two profiles (e.g. floor, serve) a third column gives B − A, rows sorted by it.
import { execFileSync } from "node:child_process";

const [turnsArg, ...files] = process.argv.slice(2);
const turns = Number(turnsArg);
if (!(turns > 0) || files.length === 0 || files.length > 2) {
  process.stderr.write("usage: node bench/perf-owners.mjs TURNS A.data [B.data]\n");
  process.exit(2);
}
const SAMPLE_MS = 0.5;

/** [owner, pattern] in order: the first that matches a frame names it ("ours" only outside node_modules). */
const OWNERS = [
  ["ours: store", "/dist/store/"], ["ours: model", "/dist/model/"], ["ours: loop", "/dist/loop/"], ["ours: acp", "/dist/acp/"],
  ["ours: serve", "/dist/serve/"], ["ours: core", "/dist/core/"], ["ours: other", "/dist/"],
  ["floor agent", "/bench/bare-"], ["ai-sdk", "/@ai-sdk/"], ["zod", "/zod/"], ["eventsource-parser", "/eventsource-parser/"],
  ["sdk: node adapter", "sdk/dist/transports/node-"], ["sdk: server", "sdk/dist/transports/server"], ["sdk: connection", "sdk/dist/transports/connection"],
  ["sdk: core", "sdk/dist/core/"], ["sdk: other", "@agentclientprotocol/sdk/"], ["ws", "/node_modules/ws/"], ["undici", "undici"],
];
const NODE_OWNERS = [["node: web streams", "node:internal/webstreams"], ["node: http", "node:_http"], ["node: streams", "node:internal/streams"], ["node: other", "node:"]];

function ownerOf(frames) {
  let node;
  for (const frame of frames) {
    const ours = !frame.includes("/node_modules/");
    for (const [name, pattern] of OWNERS) if ((ours || !name.startsWith("ours")) && frame.includes(pattern)) return name;
    if (node === undefined && frame.includes(" JS:")) for (const [name, pattern] of NODE_OWNERS) if (frame.includes(pattern)) { node = name; break; }
  }
  return node ?? "no JS frame (GC, microtasks, libuv, kernel)";
}

function threadKind(frames) {
  const stack = frames.join(" ");
  if (stack.includes("fdatasync") || stack.includes("fsync")) return "thread: fdatasync/fsync";
  if (stack.includes("compiler::") || stack.includes("Compile")) return "thread: V8 compiler";
  if (/Scaveng/.test(stack)) return "thread: GC scavenge";
  if (/Mark/.test(stack)) return "thread: GC mark";
  if (/Sweep/.test(stack)) return "thread: GC sweep";
  return "thread: other";
}

/** ms per turn by owner, plus totals. */
function profile(file) {
  const text = execFileSync("perf", ["script", "-i", file, "-F", "tid,ip,sym"], { encoding: "utf8", maxBuffer: 1 << 30, stdio: ["ignore", "pipe", "ignore"] });
  const samples = text.split("\n\n").map((s) => s.trim().split("\n").map((l) => l.trim())).filter((l) => l[0]);
  const perThread = new Map();
  for (const [head] of samples) perThread.set(head.split(/\s+/)[0], (perThread.get(head.split(/\s+/)[0]) ?? 0) + 1);
  const main = [...perThread].sort((a, b) => b[1] - a[1])[0][0];
  const by = new Map();
  const add = (key) => by.set(key, (by.get(key) ?? 0) + SAMPLE_MS / turns);
  for (const [head, ...frames] of samples) {
    const isMain = head.split(/\s+/)[0] === main;
    add(isMain ? "= main thread" : "= other threads");
    add(isMain ? ownerOf(frames) : threadKind(frames));
  }
  return by;
}

const [a, b] = files.map(profile);
const keys = [...new Set([...a.keys(), ...(b?.keys() ?? [])])];
const value = (m, k) => m?.get(k) ?? 0;
keys.sort((x, y) => (x.startsWith("=") === y.startsWith("=") ? (b ? value(b, y) - value(a, y) - (value(b, x) - value(a, x)) : value(a, y) - value(a, x)) : x.startsWith("=") ? -1 : 1));
const lines = [`ms per turn (${turns} turns)${b ? `: ${files[0]} | ${files[1]} | difference` : ""}`];
for (const key of keys) {
  const cells = [value(a, key).toFixed(2)];
  if (b) cells.push(value(b, key).toFixed(2), `${value(b, key) >= value(a, key) ? "+" : ""}${(value(b, key) - value(a, key)).toFixed(2)}`);
  lines.push(`${cells.join("  ").padStart(b ? 20 : 6)}  ${key}`);
}
process.stdout.write(`${lines.join("\n")}\n`);
