import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { readFileSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { ToolProgress } from "../../src/core/index.js";
import { LocalCommandRunner, LocalFileOperations } from "../../src/tools/index.js";
import type { ToolContext } from "../../src/tools/index.js";
import { pidAlive } from "../support/processes.js";
export { pidAlive as isAlive };

/**
 * base/
 *   ws/app/            the root (cwd)
 *     inside.txt, sub/nested.txt
 *     link-in -> inside.txt            (symlink inside → inside)
 *     link-out-file -> base/outside/secret.txt
 *     link-out-dir -> base/outside
 *     dangling -> base/outside/new-target.txt (does not exist)
 *   ws/app-evil/file.txt               (prefix confusion)
 *   outside/secret.txt
 */
export interface Workspace {
  base: string;
  root: string;
  evil: string;
  outside: string;
  secret: string;
  danglingTarget: string;
  cleanup(): Promise<void>;
}

export const secretText = "top secret\n";

export async function makeWorkspace(): Promise<Workspace> {
  const base = await realpath(await mkdtemp(path.join(tmpdir(), "agentkit-tools-")));
  const root = path.join(base, "ws", "app");
  const evil = path.join(base, "ws", "app-evil");
  const outside = path.join(base, "outside");
  const secret = path.join(outside, "secret.txt");
  const danglingTarget = path.join(outside, "new-target.txt");
  await mkdir(path.join(root, "sub"), { recursive: true });
  await mkdir(evil, { recursive: true });
  await mkdir(outside, { recursive: true });
  await writeFile(path.join(root, "inside.txt"), "line one\nline two\nline three\n");
  await writeFile(path.join(root, "sub", "nested.txt"), "nested\n");
  await writeFile(path.join(evil, "file.txt"), "evil\n");
  await writeFile(secret, secretText);
  await symlink(path.join(root, "inside.txt"), path.join(root, "link-in"));
  await symlink(secret, path.join(root, "link-out-file"));
  await symlink(outside, path.join(root, "link-out-dir"));
  await symlink(danglingTarget, path.join(root, "dangling"));
  return { base, root, evil, outside, secret, danglingTarget, cleanup: () => rm(base, { recursive: true, force: true }) };
}

export interface TestContext extends ToolContext {
  progressEvents: ToolProgress[];
  controller: AbortController;
}

export function makeContext(root: string, overrides: Partial<ToolContext> = {}): TestContext {
  const controller = new AbortController();
  const progressEvents: ToolProgress[] = [];
  return {
    sessionId: "s1",
    callId: "c1",
    cwd: root,
    roots: [root],
    signal: controller.signal,
    files: new LocalFileOperations(),
    commands: new LocalCommandRunner(),
    progress: (p) => progressEvents.push(p),
    progressEvents,
    controller,
    ...overrides,
  };
}


export async function waitFor(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Live (non-zombie) direct children of this process whose command line contains `text`. */
export function childPidsMatching(text: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[1]) !== process.pid || fields[0] === "Z") continue;
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").join(" ").includes(text)) found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}
