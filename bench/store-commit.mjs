// What a durable append costs the process, all threads (the fdatasync runs on the thread pool),
// as the JSONL store makes them under bench/service-floor.ts load (b) — SESSIONS session files,
// one append each at once, each its own fdatasync — against one log shared by every session
// whose appends share fdatasyncs (a group commit: 1, 10 or all SESSIONS per fdatasync). What a
// store with one shared log could save per item (issue #28); nothing here is the store's code.
// Usage: node bench/store-commit.mjs [SESSIONS=100] [ROUNDS=20] [DIR=a new temp dir]
import { closeSync, fdatasync, fstatSync, mkdirSync, mkdtempSync, openSync, readSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const [sessions = 100, rounds = 20] = process.argv.slice(2, 4).map(Number);
const dir = process.argv[4] ?? mkdtempSync(join(tmpdir(), "agentkit-store-commit-"));
mkdirSync(dir, { recursive: true });
const sync = promisify(fdatasync);
const line = Buffer.from(`${JSON.stringify({ type: "item", item: { role: "assistant", parts: [{ type: "text", text: "word, ".repeat(400) }] } })}\n`);
const files = Array.from({ length: sessions }, (_, i) => join(dir, `s${i}.jsonl`));
const log = join(dir, "shared.log");
for (const file of [...files, log]) closeSync(openSync(file, "w", 0o600));
const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

/** As the store appends today: open, stat, the last byte, write, fdatasync, close — every session at once. */
const perSessionFiles = () =>
  Promise.all(files.map(async (file) => {
    const fd = openSync(file, "r+");
    const { size } = fstatSync(fd);
    if (size > 0) readSync(fd, Buffer.alloc(1), 0, 1, size - 1);
    writeSync(fd, line, 0, line.length, size);
    await sync(fd);
    closeSync(fd);
  }));

/** One log for every session: `group` appends, then one fdatasync for them. */
async function sharedLog(group) {
  const fd = openSync(log, "a");
  for (let i = 0; i < sessions; i += group) {
    for (let j = i; j < Math.min(i + group, sessions); j++) writeSync(fd, line);
    await sync(fd);
  }
  closeSync(fd);
}

const cases = [["a file per session (the store)", perSessionFiles], ["one log, 1 append per fdatasync", () => sharedLog(1)], ["one log, 10 per fdatasync", () => sharedLog(10)], [`one log, ${sessions} per fdatasync`, () => sharedLog(sessions)]];
try {
  for (const [name, run] of cases) {
    await run(); // warm-up
    const cpu = cpuMs();
    const started = performance.now();
    for (let r = 0; r < rounds; r++) await run();
    process.stdout.write(`${name}: ${(((cpuMs() - cpu) / (sessions * rounds)) * 1000).toFixed(0)} µs CPU per append, ${((performance.now() - started) / rounds).toFixed(1)} ms wall per ${sessions} appends\n`);
  }
} finally {
  if (process.argv[4] === undefined) rmSync(dir, { recursive: true, force: true });
}
