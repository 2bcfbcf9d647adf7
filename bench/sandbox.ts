/**
 * What the command sandbox costs per command: the `shell` tool's runner (LocalCommandRunner)
 * running the same command line with and without `--sandbox workspace` (bubblewrap + prlimit,
 * plus the pids cgroup when run as root), interleaved, many times. Reports the median and p90
 * wall time of each and the difference, and the CPU time the command's processes used (reaped
 * children's user+sys from /proc/self/stat: on a loaded machine wall time is mostly waiting for a
 * core). Target (issue #23): ≤ 15 ms added per command. A third side runs the sandbox with a
 * `--sandbox-net` allow-list: its own proxy (in this process) and the in-sandbox bridge.
 *
 * CPU: when a cpuacct cgroup (v1) can be made (root), this process moves into one and the column
 * is its `cpuacct.usage` delta — this process (the runner, the proxy) and every descendant,
 * including those killed with bwrap's pid namespace, which no `cutime` ever sees. Otherwise it
 * falls back to this process's own CPU plus its reaped children's (`cutime`), which misses them.
 *
 * Run: npx tsx bench/sandbox.ts [runs=40] ["command"="true"]
 */
import { accessSync, constants, mkdirSync, mkdtempSync, readFileSync, rmdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CommandSandbox, parseNetAllow } from "../src/core/index.js";
import { LocalCommandRunner } from "../src/tools/index.js";
import { proc } from "../src/core/process/proc.js";

const runs = Number(process.argv[2] ?? 40);
const command = process.argv[3] ?? "true";
const workspace = mkdtempSync(join(tmpdir(), "agentkit-bench-sandbox-"));
const sandbox = CommandSandbox.create();
const plain = new LocalCommandRunner({ drainMs: 0 });
const boxed = new LocalCommandRunner({ drainMs: 0, sandbox: { sandbox, writable: [workspace] } });
const netSandbox = CommandSandbox.create({ netAllow: parseNetAllow(["allow=registry.npmjs.org:443"]) });
const netted = new LocalCommandRunner({ drainMs: 0, sandbox: { sandbox: netSandbox, writable: [workspace] } });
// The same allow-list with node's bridge (what runs where no perl is), side by side.
const nodeNetSandbox = CommandSandbox.create({ netAllow: parseNetAllow(["allow=registry.npmjs.org:443"]), bridge: "node" });
const nodeNetted = new LocalCommandRunner({ drainMs: 0, sandbox: { sandbox: nodeNetSandbox, writable: [workspace] } });

type Side = "plain" | "sandboxed" | "allowList" | "allowListNode";
const cpu: Record<Side, number> = { plain: 0, sandboxed: 0, allowList: 0, allowListNode: 0 };

/** A cpuacct cgroup holding this process and its descendants, or undefined (not root, no v1 cpuacct). */
function cpuacctGroup(): string | undefined {
  const root = "/sys/fs/cgroup/cpuacct";
  try {
    accessSync(join(root, "cgroup.procs"), constants.W_OK);
    const dir = join(root, `agentkit-bench-sandbox-${process.pid}`);
    mkdirSync(dir);
    writeFileSync(join(dir, "cgroup.procs"), String(process.pid));
    return dir;
  } catch {
    return undefined;
  }
}
const group = cpuacctGroup();
const ownCpuMs = () => {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
};
/** CPU so far, ms: the cgroup's total, else this process's plus its reaped children's. */
const cpuNow = group ? () => Number(readFileSync(join(group, "cpuacct.usage"), "utf8")) / 1e6 : () => ownCpuMs() + (proc.reapedChildrenCpuMs() ?? 0);

async function time(runner: LocalCommandRunner, side?: Side): Promise<number> {
  const cpuBefore = cpuNow();
  const started = performance.now();
  const result = await runner.run({ command, cwd: workspace, timeoutMs: 60_000, outputByteLimit: 65_536, signal: new AbortController().signal });
  if (result.exitCode !== 0) throw new Error(`"${command}" failed (exit ${result.exitCode}): ${result.output}`);
  const wall = performance.now() - started;
  if (side) cpu[side] += cpuNow() - cpuBefore;
  return wall;
}

const stats = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  return { median: at(0.5), p90: at(0.9) };
};

const samples: Record<Side, number[]> = { plain: [], sandboxed: [], allowList: [], allowListNode: [] };
await time(plain); // warm-up: page cache, first spawn
await time(boxed);
await time(netted);
await time(nodeNetted);
for (let i = 0; i < runs; i++) {
  // Interleaved, so all see the same machine load.
  samples.plain.push(await time(plain, "plain"));
  samples.sandboxed.push(await time(boxed, "sandboxed"));
  samples.allowList.push(await time(netted, "allowList"));
  samples.allowListNode.push(await time(nodeNetted, "allowListNode"));
}
rmSync(workspace, { recursive: true, force: true });
if (group) {
  writeFileSync("/sys/fs/cgroup/cpuacct/cgroup.procs", String(process.pid));
  rmdirSync(group);
}
const p = stats(samples.plain);
const s = stats(samples.sandboxed);
const n = stats(samples.allowList);
const nn = stats(samples.allowListNode);
const f = (ms: number) => `${ms.toFixed(1)} ms`;
process.stdout.write(
  [
    `command: ${command}   runs: ${runs} each, interleaved   engine: ${sandbox.engine} (process bound: ${sandbox.processBound})   bridge: ${netSandbox.bridge}`,
    `CPU: ${group ? "cpuacct cgroup (this process, its proxy and every descendant)" : "this process + reaped children (misses processes ended with bwrap's pid namespace)"}`,
    `unsandboxed  median ${f(p.median)}  p90 ${f(p.p90)}  CPU per command ${f(cpu.plain / runs)}`,
    `sandboxed    median ${f(s.median)}  p90 ${f(s.p90)}  CPU per command ${f(cpu.sandboxed / runs)}`,
    `added        median ${f(s.median - p.median)}  p90 ${f(s.p90 - p.p90)}  CPU per command ${f((cpu.sandboxed - cpu.plain) / runs)}`,
    `allow-list (${netSandbox.bridge} bridge)  median ${f(n.median)}  p90 ${f(n.p90)}  CPU per command ${f(cpu.allowList / runs)}   (sandbox + --sandbox-net: proxy and bridge)`,
    `  over the sandbox  median ${f(n.median - s.median)}  p90 ${f(n.p90 - s.p90)}  CPU per command ${f((cpu.allowList - cpu.sandboxed) / runs)}`,
    `allow-list, node bridge  median ${f(nn.median)}  p90 ${f(nn.p90)}  CPU per command ${f(cpu.allowListNode / runs)}`,
    `  over the sandbox  median ${f(nn.median - s.median)}  p90 ${f(nn.p90 - s.p90)}  CPU per command ${f((cpu.allowListNode - cpu.sandboxed) / runs)}`,
    "",
  ].join("\n"),
);
