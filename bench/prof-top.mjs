// Summarises V8 CPU profiles (node --cpu-prof): top functions and top packages by self time.
// Usage: node bench/prof-top.mjs FILE.cpuprofile... [--top N] [--warm|--first [--agent NAME]]
// --warm / --first: only the samples of each process's warm / first prompt (the windows
// bench/agents.ts writes to warm-windows.json next to the profiles; file names end in
// .PID.TID.SEQ.cpuprofile); --agent: only the agents whose bench name contains NAME (e.g.
// "serve anthropic", "bare-openai (openai").
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";

const args = process.argv.slice(2);
const valueOf = (flag) => (args.includes(flag) ? args[args.indexOf(flag) + 1] : undefined);
const top = Number(valueOf("--top") ?? 15);
const agent = valueOf("--agent");
const firstOnly = args.includes("--first");
const warm = args.includes("--warm") || firstOnly;
const files = args.filter((a, i) => !a.startsWith("--") && !["--top", "--agent"].includes(args[i - 1]));
const windowOf = (file) => {
  const windows = join(dirname(file), "warm-windows.json");
  if (!existsSync(windows)) throw new Error(`--warm/--first: no ${windows} (written by BENCH_CPU_PROF=DIR npx tsx bench/agents.ts)`);
  const window = JSON.parse(readFileSync(windows, "utf8"))[/\.(\d+)\.\d+\.\d+\.cpuprofile$/.exec(file)?.[1] ?? ""];
  return window && firstOnly ? { agent: window.agent, ...window.first } : window;
};
const byFunction = new Map();
const byPackage = new Map();
let total = 0;
let counted = 0;
for (const file of files) {
  const profile = JSON.parse(readFileSync(file, "utf8"));
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  const window = warm ? windowOf(file) : undefined;
  if (warm && (window === undefined || (agent !== undefined && !window.agent.includes(agent)))) continue; // not measured (e.g. the idle-sessions serve), or another agent
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = profile.timeDeltas[i] ?? 0;
    at += dt;
    if (window && (at < window.from || at > window.to)) continue;
    self.set(profile.samples[i], (self.get(profile.samples[i]) ?? 0) + dt);
  }
  counted += 1;
  for (const [id, us] of self) {
    const { functionName, url, lineNumber } = nodes.get(id).callFrame;
    total += us;
    const where = url.replace(/^file:\/\//, "").replace(/.*node_modules\//, "nm:").replace(/.*\/(dist|src)\//, "$1/");
    const fn = `${functionName || "(anonymous)"} ${where}:${lineNumber + 1}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + us);
    const pkg = url === "" ? functionName.startsWith("(") ? functionName : "(native)" : url.startsWith("node:") ? "node:*" : /node_modules\/((@[^/]+\/)?[^/]+)/.exec(url)?.[1] ?? (/\/(dist|src)\/([^/]+)/.exec(url)?.slice(1).join("/") ?? url);
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + us);
  }
}
const show = (title, map) => {
  process.stdout.write(`${title} (total ${(total / 1000).toFixed(0)} ms over ${counted} profile(s))\n`);
  for (const [name, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) process.stdout.write(`  ${((100 * us) / total).toFixed(1).padStart(5)} %  ${(us / 1000 / counted).toFixed(1).padStart(7)} ms  ${name}\n`);
};
show("self time by function", byFunction);
show("self time by package", byPackage);
