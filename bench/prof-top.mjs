// Summarises V8 CPU profiles (node --cpu-prof): top functions and top packages by self time.
// Usage: node bench/prof-top.mjs FILE.cpuprofile... [--top N]
import { readFileSync } from "node:fs";

const args = process.argv.slice(2);
const topAt = args.indexOf("--top");
const top = topAt === -1 ? 15 : Number(args[topAt + 1]);
const files = args.filter((a, i) => !a.startsWith("--") && i !== topAt + 1);
const byFunction = new Map();
const byPackage = new Map();
let total = 0;
for (const file of files) {
  const profile = JSON.parse(readFileSync(file, "utf8"));
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = profile.timeDeltas[i] ?? 0;
    self.set(profile.samples[i], (self.get(profile.samples[i]) ?? 0) + dt);
  }
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
  process.stdout.write(`${title} (total ${(total / 1000).toFixed(0)} ms over ${files.length} profile(s))\n`);
  for (const [name, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) process.stdout.write(`  ${((100 * us) / total).toFixed(1).padStart(5)} %  ${(us / 1000 / files.length).toFixed(1).padStart(7)} ms  ${name}\n`);
};
show("self time by function", byFunction);
show("self time by package", byPackage);
