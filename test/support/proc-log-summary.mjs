// Summary of an AGENTKIT_TEST_PROC_LOG file: per test file, how many node processes of each kind
// it started and their CPU (exit records; a SIGKILLed process has none). Usage:
//   node test/support/proc-log-summary.mjs FILE [--kind serve]   (kind: a substring of the arguments)
import { readFileSync } from "node:fs";

const [path, flag, kindFilter] = process.argv.slice(2);
if (!path) throw new Error("usage: proc-log-summary.mjs FILE [--kind SUBSTRING]");
const starts = new Map();
const cpu = new Map();
for (const line of readFileSync(path, "utf8").split("\n")) {
  if (!line) continue;
  const r = JSON.parse(line);
  if (r.exit) cpu.set(r.pid, r.cpuMs);
  else starts.set(r.pid, r); // a reused pid: the later start wins (its exit follows it)
}
const kindOf = (argv) => {
  const [script = "", first = ""] = argv;
  if (script.endsWith("agentkit-acp.js")) return `cli ${first}`;
  if (script === "" || script.startsWith("-")) return "node -e";
  return script.replace(/^.*\/(node_modules|test|dist)\//, "$1/");
};
const byFile = new Map();
const totals = new Map();
for (const [pid, r] of starts) {
  const kind = kindOf(r.argv);
  if (flag === "--kind" && !kind.includes(kindFilter ?? "")) continue;
  const file = r.file.replace(/^.*\/test\//, "") || "(no file)";
  const entry = byFile.get(file) ?? { count: 0, cpuMs: 0, kinds: new Map() };
  entry.count++;
  entry.cpuMs += cpu.get(pid) ?? 0;
  entry.kinds.set(kind, (entry.kinds.get(kind) ?? 0) + 1);
  byFile.set(file, entry);
  const t = totals.get(kind) ?? { count: 0, cpuMs: 0 };
  t.count++;
  t.cpuMs += cpu.get(pid) ?? 0;
  totals.set(kind, t);
}
console.log("per kind: count, CPU-s");
for (const [kind, t] of [...totals].sort((a, b) => b[1].cpuMs - a[1].cpuMs).slice(0, 25)) console.log(`${String(t.count).padStart(5)} ${(t.cpuMs / 1000).toFixed(1).padStart(7)}  ${kind}`);
console.log("\nper test file: processes, CPU-s, kinds");
for (const [file, e] of [...byFile].sort((a, b) => b[1].cpuMs - a[1].cpuMs)) {
  const kinds = [...e.kinds].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${n}× ${k}`).join(", ");
  console.log(`${String(e.count).padStart(4)} ${(e.cpuMs / 1000).toFixed(1).padStart(6)}  ${file}  (${kinds})`);
}
